import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { searchAttributeRegistrations } from '../../domain/search-attributes';
import { projectRoot } from '../helpers/paths';

// No Docker engine runs here: the compose file is checked by parsing it and what it references.
const composeText = readFileSync(join(projectRoot, 'docker-compose.yml'), 'utf8');
interface Service {
  image?: string;
  build?: { context: string; dockerfile?: string } | string;
  volumes?: string[];
  env_file?: string[] | string;
  environment?: Record<string, string | number>;
  depends_on?: string[] | Record<string, { condition: string }>;
}
const compose = parse(composeText) as { services: Record<string, Service> };
const services = compose.services;

test('it brings up PostgreSQL, Temporal on PostgreSQL, the Web UI, the attribute registration and a worker', () => {
  expect(Object.keys(services).sort()).toEqual(
    ['postgresql', 'temporal', 'temporal-admin-tools', 'temporal-ui', 'worker'].sort(),
  );
  expect(services.temporal!.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql' });
  expect(services['temporal-ui']!.environment).toMatchObject({ TEMPORAL_ADDRESS: 'temporal:7233' });
  expect(services.worker!.environment).toMatchObject({ TEMPORAL_ADDRESS: 'temporal:7233' });
  expect(services.worker!.depends_on).toMatchObject({
    'temporal-admin-tools': { condition: 'service_completed_successfully' },
  });
});

test("a stopping worker's running activities get their grace before Docker kills the process", () => {
  const worker = compose.services.worker as Service & { stop_grace_period?: string };
  const stopGraceMs = Number(/^(\d+)s$/.exec(worker.stop_grace_period ?? '')?.[1]) * 1000;
  const grace = /^\$\{AGENTS_KIT_SHUTDOWN_GRACE_MS:-(\d+)\}$/.exec(
    String(worker.environment?.AGENTS_KIT_SHUTDOWN_GRACE_MS),
  );
  expect(grace).not.toBeNull();
  // Time left after the grace for the cancelled activities to report back and the worker to exit.
  expect(Number(grace![1]) + 10_000).toBeLessThanOrEqual(stopGraceMs);
});

test('every file it references exists: build contexts, Dockerfiles, mounted config and scripts', () => {
  const referenced: string[] = [];
  for (const service of Object.values(services)) {
    if (service.build) {
      const build = typeof service.build === 'string' ? { context: service.build } : service.build;
      referenced.push(build.context, join(build.context, build.dockerfile ?? 'Dockerfile'));
    }
    for (const volume of service.volumes ?? []) {
      const source = volume.split(':')[0]!;
      if (source.startsWith('.') || source.startsWith('/')) referenced.push(source);
    }
    referenced.push(...[service.env_file ?? []].flat());
  }
  expect(referenced).toEqual(
    expect.arrayContaining(['Dockerfile', './deploy/temporal/register-search-attributes.sh']),
  );
  for (const path of referenced) expect([path, existsSync(join(projectRoot, path))]).toEqual([path, true]);
});

test('every ${VARIABLE} it uses has a default or is documented in the README', () => {
  const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
  const uses = [...composeText.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:?-[^}]*)?\}/g)];
  expect(uses.length).toBeGreaterThan(0);
  for (const [, name, fallback] of uses) {
    expect([name, Boolean(fallback) || readme.includes(`\`${name}\``)]).toEqual([name, true]);
  }
  // Variables documented for compose in the README.
  for (const [, name] of uses) expect([name, readme.includes(`\`${name}\``)]).toEqual([name, true]);
});

test('the one-shot registers exactly the search attributes the workflows use, and the image runs the worker', () => {
  const script = readFileSync(join(projectRoot, 'deploy/temporal/register-search-attributes.sh'), 'utf8');
  const registered = Object.fromEntries(
    [...script.matchAll(/\b(Agent[A-Za-z]+)=(Keyword|Int|Text|Bool|Double|Datetime|KeywordList)\b/g)].map(
      ([, name, type]) => [name, type],
    ),
  );
  expect(registered).toEqual(searchAttributeRegistrations);
  const dockerfile = readFileSync(join(projectRoot, 'Dockerfile'), 'utf8');
  expect(dockerfile).toMatch(/^FROM node:20/m);
  expect(dockerfile).toMatch(/RUN npm ci/);
  expect(dockerfile).toMatch(/CMD \["node", "bin\/agents-kit.mjs", "worker"\]/);
});
