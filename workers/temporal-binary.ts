import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The Go module the `temporal` binary (CLI with the embedded dev server) is built from. */
export const temporalCliModule = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

const log = (line: string) => process.stderr.write(`[agents-kit] ${line}\n`);

function isExecutable(path: string | undefined): path is string {
  return (
    Boolean(path) && existsSync(path!) && spawnSync(path!, ['--version'], { stdio: 'ignore' }).status === 0
  );
}

/** The `go` command: on PATH or where Go installs itself. */
export function goBinary(): string | undefined {
  return ['go', '/usr/local/go/bin/go'].find(
    (candidate) => spawnSync(candidate, ['version'], { stdio: 'ignore' }).status === 0,
  );
}

/** Where `go install` puts binaries (GOBIN, else the first GOPATH entry's bin). */
export function goBinDir(go: string): string | undefined {
  const out = spawnSync(go, ['env', 'GOBIN', 'GOPATH'], { encoding: 'utf8' });
  if (out.status !== 0) return undefined;
  const [gobin, gopath] = out.stdout.split('\n');
  if (gobin?.trim()) return gobin.trim();
  const firstPath = gopath?.trim().split(delimiter)[0];
  return firstPath ? join(firstPath, 'bin') : undefined;
}

/** Where an existing `temporal` binary is: `$TEMPORAL_CLI_PATH`, then `PATH`, then Go's bin folder. */
export function findTemporalBinary(): string | undefined {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    throw new Error(`TEMPORAL_CLI_PATH=${fromEnv} is not an executable temporal binary`);
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'temporal');
    if (dir && isExecutable(candidate)) return candidate;
  }
  const go = goBinary();
  const binDir = go && goBinDir(go);
  const candidate = binDir ? join(binDir, 'temporal') : undefined;
  return isExecutable(candidate) ? candidate : undefined;
}

/**
 * The `temporal` binary: an existing one ({@link findTemporalBinary}), or one built once with
 * `go install` from {@link temporalCliModule} (about 4 minutes; progress is printed while Go works).
 */
export async function ensureTemporalBinary(): Promise<string> {
  return findTemporalBinary() ?? goInstall(temporalCliModule, 'temporal', 'the Temporal dev server');
}

/**
 * The binary `name` that `go install module` puts in Go's bin folder: the one there if it runs, else
 * built once (`what` says what it is, for the progress lines printed while Go works).
 */
export async function ensureGoBinary(module: string, name: string, what: string): Promise<string> {
  const go = goBinary();
  const binDir = go && goBinDir(go);
  const existing = binDir ? join(binDir, name) : undefined;
  if (existing && existsSync(existing)) return existing;
  return goInstall(module, name, what);
}

async function goInstall(module: string, name: string, what: string): Promise<string> {
  const go = goBinary();
  if (!go) {
    throw new Error(
      `no ${name} binary found and Go is not installed: install Go (https://go.dev)${name === 'temporal' ? ' or set TEMPORAL_CLI_PATH' : ''}`,
    );
  }
  log(`building ${what}: go install ${module}`);
  log('this happens once per machine (a few minutes; later runs reuse the binary)');
  const started = Date.now();
  const child = spawn(go, ['install', module], {
    env: { ...process.env, CGO_ENABLED: '0' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const ticker = setInterval(
    () => log(`still building the ${name} binary (${Math.round((Date.now() - started) / 1000)} s)…`),
    20_000,
  );
  const code = await new Promise<number | null>((done) => child.on('exit', (status) => done(status)));
  clearInterval(ticker);
  if (code !== 0) throw new Error(`go install ${module} failed with exit code ${code}`);
  const binDir = goBinDir(go);
  const built = binDir ? join(binDir, name) : undefined;
  if (!built || !existsSync(built))
    throw new Error(`go install succeeded but ${built ?? 'its binary'} is not there`);
  if (name === 'temporal' && !isExecutable(built))
    throw new Error(`go install succeeded but ${built} does not run`);
  log(`built ${built} in ${Math.round((Date.now() - started) / 1000)} s`);
  return built;
}
