// `npx tsx bench/median.ts <result.json>…`: the median over several bench runs of each comparison's
// p50 and throughput ratios (issue 17 judges the targets by the median of three runs, each ratio taken
// within its own run), with each run's ratio beside it, as a Markdown table.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { BenchReport } from './report';

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write('usage: npx tsx bench/median.ts <result.json> [<result.json> …]\n');
  process.exit(2);
}
const reports = files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as BenchReport);

const median = (values: readonly number[]): number | undefined => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? sorted[middle]
    : Math.round(((sorted[middle - 1]! + sorted[middle]!) / 2) * 100) / 100;
};
const defined = (values: readonly (number | undefined)[]) => values.filter((value) => value !== undefined);

const operations = [...new Set(reports.flatMap((report) => report.comparisons.map((c) => c.operation)))];
const rows = operations.map((operation) => {
  const found = reports.map((report) => report.comparisons.find((c) => c.operation === operation));
  const results = reports.map((report) => report.results.find((result) => result.name === operation));
  const p50 = found.map((c) => c?.p50Ratio);
  const throughput = found.map((c) => c?.throughputRatio);
  const actions = results.map((result) => result?.cost.actions);
  const list = (values: readonly (number | undefined)[]) => values.map((v) => v ?? '–').join(' / ');
  return `| ${operation} | ${found.find(Boolean)?.primitive ?? '–'} | **${median(defined(p50)) ?? '–'}×** (${list(p50)}) | ${median(defined(throughput)) ?? '–'}× (${list(throughput)}) | ${median(defined(actions)) ?? '–'} |`;
});
process.stdout.write(
  [
    `Runs: ${files.map((file) => basename(file)).join(', ')}; load at start ${reports.map((r) => r.machine.loadAverage).join(' / ')}.`,
    '',
    '| operation | primitive | p50 ratio, median (each run) | throughput ratio, median (each run) | actions/op (median) |',
    '|---|---|---:|---:|---:|',
    ...rows,
    '',
  ].join('\n'),
);
