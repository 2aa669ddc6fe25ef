// `npm run cluster`: the production-shaped Temporal of the cluster tests (PostgreSQL, 4 history shards,
// all four services), for trying agents-kit or the bench against it; Ctrl-C stops it and removes its data.
import { startCluster } from '../test/helpers/cluster';

async function main() {
  const shards = Number(process.env.AGENTS_KIT_CLUSTER_SHARDS ?? 4);
  const cluster = await startCluster({ shards });
  process.stdout.write(`TEMPORAL_ADDRESS=${cluster.address}\n`);
  const stop = () => void cluster.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
