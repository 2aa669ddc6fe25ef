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
  const found = findTemporalBinary();
  if (found) return found;
  const go = goBinary();
  if (!go) {
    throw new Error(
      'no temporal binary found and Go is not installed: install Go (https://go.dev) or set TEMPORAL_CLI_PATH',
    );
  }
  log(`building the Temporal dev server: go install ${temporalCliModule}`);
  log('this happens once per machine (about 4 minutes; later runs reuse the binary)');
  const started = Date.now();
  const child = spawn(go, ['install', temporalCliModule], {
    env: { ...process.env, CGO_ENABLED: '0' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const ticker = setInterval(
    () => log(`still building the temporal binary (${Math.round((Date.now() - started) / 1000)} s)…`),
    20_000,
  );
  const code = await new Promise<number | null>((done) => child.on('exit', (status) => done(status)));
  clearInterval(ticker);
  if (code !== 0) throw new Error(`go install ${temporalCliModule} failed with exit code ${code}`);
  const binDir = goBinDir(go);
  const built = binDir ? join(binDir, 'temporal') : undefined;
  if (!isExecutable(built)) throw new Error(`go install succeeded but ${built ?? 'its binary'} does not run`);
  log(`built ${built} in ${Math.round((Date.now() - started) / 1000)} s`);
  return built;
}
