// A private PostgreSQL for the production-shaped cluster (issue 20): Debian's package (installed with
// apt-get when missing and possible), a fresh data folder, a free port, trust authentication on
// 127.0.0.1 only. PostgreSQL refuses to run as root: as root, it runs as the `postgres` user.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freePort } from '../../workers/dev-server';

const log = (line: string) => process.stderr.write(`[cluster] ${line}\n`);

export interface Postgres {
  port: number;
  user: string;
  version: string;
  stop(): Promise<void>;
}

/** Debian's PostgreSQL binaries (`/usr/lib/postgresql/<major>/bin`), installed first if missing. */
function binDir(): string {
  const find = () => {
    const base = '/usr/lib/postgresql';
    if (!existsSync(base)) return undefined;
    const majors = readdirSync(base).sort((a, b) => Number(b) - Number(a));
    return majors.map((major) => join(base, major, 'bin')).find((dir) => existsSync(join(dir, 'pg_ctl')));
  };
  const found = find();
  if (found) return found;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot) throw new Error('PostgreSQL is not installed (apt-get install postgresql, as root)');
  log('installing PostgreSQL: apt-get install -y postgresql');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'postgresql']]) {
    const result = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${result.status})`);
  }
  const installed = find();
  if (!installed) throw new Error('apt-get installed postgresql but pg_ctl is not there');
  return installed;
}

/** Runs a PostgreSQL binary, as `postgres` when this process is root. */
function pg(bin: string, args: string[]) {
  const asRoot = process.getuid?.() === 0;
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const result = spawnSync(command, argv, { encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(
      `${bin.split('/').pop()} ${args[0]} failed: ${(result.stderr || result.stdout).slice(-2000)}`,
    );
  return result.stdout;
}

/** initdb in `dataDir`, then the server on a free port; resolves once it takes connections. */
export async function startPostgres(dataDir: string): Promise<Postgres> {
  const bin = binDir();
  const user = 'temporal';
  mkdirSync(dataDir, { recursive: true });
  if (process.getuid?.() === 0) {
    const postgresUser = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const postgresGroup = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (postgresUser.status !== 0) throw new Error('running as root, but there is no `postgres` user');
    // The data folder's parent (a fresh temporary folder) must be reachable by `postgres`.
    chmodSync(dirname(dataDir), 0o755);
    chownSync(dataDir, Number(postgresUser.stdout.trim()), Number(postgresGroup.stdout.trim()));
  }
  chmodSync(dataDir, 0o700);
  pg(join(bin, 'initdb'), ['-D', dataDir, '-U', user, '--auth=trust', '-E', 'UTF8', '--no-instructions']);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dataDir}`,
    '-c max_connections=300',
    '-c shared_buffers=128MB',
  ].join(' ');
  pg(join(bin, 'pg_ctl'), [
    '-D',
    dataDir,
    '-l',
    join(dataDir, 'server.log'),
    '-o',
    options,
    '-w',
    '-t',
    '120',
    'start',
  ]);
  const version = pg(join(bin, 'postgres'), ['--version'])
    .trim()
    .replace(/^postgres \(PostgreSQL\) /, '');
  log(`PostgreSQL ${version} on 127.0.0.1:${port}`);
  return {
    port,
    user,
    version,
    async stop() {
      try {
        pg(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
      } catch {
        // Stopped already.
      }
    },
  };
}
