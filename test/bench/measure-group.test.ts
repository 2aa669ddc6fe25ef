import { measureGroup, type BenchConfig, type OperationBenchmark } from '../../bench/measure';
import { historyCost } from '../../bench/actions';

const config: BenchConfig = {
  warmup: 2,
  iterations: 6,
  throughputOps: 3,
  concurrency: 1,
  costOps: 1,
  settleMs: 0,
  gapMs: 0,
};

/** A row that records when it was sampled and settled, with a latency of its own. */
function row(name: string, latencyMs: number, log: string[]): OperationBenchmark {
  return {
    name,
    kind: 'primitive',
    observedBy: 'client',
    description: name,
    costNote: name,
    setup: async () => void log.push(`setup ${name}`),
    operate: async (_index, _lane, phase) => {
      if (phase === 'latency') log.push(`sample ${name}`);
      return { startMs: 1_000, completedMs: async () => 1_000 + latencyMs };
    },
    settle: async () => void log.push(`settle ${name}`),
    cost: async () => historyCost([]),
  };
}

describe('measureGroup', () => {
  it('takes one sample of every row per round, in orders that change, each settled', async () => {
    const log: string[] = [];
    const rows = ['a', 'b', 'c', 'd'].map((name, index) => row(name, 10 * (index + 1), log));
    const results = await measureGroup(rows, config, () => undefined);

    expect(log.slice(0, 4)).toEqual(['setup a', 'setup b', 'setup c', 'setup d']);
    const samples = log.filter((line) => line.startsWith('sample')).map((line) => line.slice(7));
    const rounds = Array.from({ length: config.warmup + config.iterations }, (_, round) =>
      samples.slice(round * 4, round * 4 + 4),
    );
    for (const round of rounds) expect([...round].sort()).toEqual(['a', 'b', 'c', 'd']);
    // Shuffled: not every round in the same order, and not always the same row first.
    expect(new Set(rounds.map((round) => round.join(''))).size).toBeGreaterThan(1);
    expect(new Set(rounds.map((round) => round[0])).size).toBeGreaterThan(1);
    // Every sample is followed by its own row's settle.
    const sampled = log.slice(4).filter((line) => !line.startsWith('setup'));
    for (let index = 0; index < sampled.length; index += 2)
      expect(sampled[index + 1]).toBe(sampled[index]!.replace('sample', 'settle'));

    // Each row's latency is its own, warm-up excluded.
    expect(results.map((result) => [result.name, result.latency.p50, result.latency.samples])).toEqual([
      ['a', 10, 6],
      ['b', 20, 6],
      ['c', 30, 6],
      ['d', 40, 6],
    ]);
  });
});
