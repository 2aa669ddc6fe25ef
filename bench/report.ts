import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OperationResult } from './measure';
import { ratio } from './stats';

/** The targets of protocol v1 (issue 17): p50 within 1.10× the primitive's, throughput at least 0.9× of it. */
export const targets = { maxLatencyRatio: 1.1, minThroughputRatio: 0.9 } as const;

/** An agents-kit operation next to its primitive. */
export interface Comparison {
  operation: string;
  primitive: string;
  p50Ratio: number | undefined;
  throughputRatio: number | undefined;
  extraActions: number;
  extraEvents: number;
  latencyMet: boolean;
  throughputMet: boolean;
  /** The host-routed floor (OperationResult.floor) and the operation's ratios to it, when it has one. */
  floor?: { primitive: string; p50Ratio: number | undefined; throughputRatio: number | undefined };
}

/** Everything one bench run wrote. */
export interface BenchReport {
  startedAt: string;
  machine: {
    cpus: number;
    cpuModel: string;
    memoryGiB: number;
    node: string;
    platform: string;
    temporal: string;
    /** 1-minute load average when the run started (other work on the machine makes numbers noisy). */
    loadAverage: number;
  };
  /** The dev server's dynamic config (`devServerSettings`, or the server's own with `--stock-server`). */
  serverSettings: Record<string, unknown>;
  /** The dynamic config of the servers that ran a variant's rows (e.g. `eager`), by variant label. */
  variantServerSettings?: Record<string, Record<string, unknown>>;
  /** The dev server's SQLite pragmas (`devServerPragmas`, or WAL alone with `--stock-server`). */
  sqlitePragmas: string[];
  config: object;
  results: OperationResult[];
  comparisons: Comparison[];
}

/** Pairs each agents-kit result with its primitive's result of the same run. */
export function compare(results: readonly OperationResult[]): Comparison[] {
  return results.flatMap((result) => {
    const primitive = results.find((candidate) => candidate.name === result.primitive);
    if (result.kind !== 'agents-kit' || !primitive) return [];
    const floor = results.find((candidate) => candidate.name === result.floor);
    const p50Ratio = ratio(result.latency.p50, primitive.latency.p50);
    const throughputRatio = ratio(result.throughputOpsPerSec, primitive.throughputOpsPerSec);
    return [
      {
        operation: result.name,
        primitive: primitive.name,
        p50Ratio,
        throughputRatio,
        extraActions: Math.round((result.cost.actions - primitive.cost.actions) * 10) / 10,
        extraEvents: Math.round((result.cost.events - primitive.cost.events) * 10) / 10,
        latencyMet: p50Ratio !== undefined && p50Ratio <= targets.maxLatencyRatio,
        throughputMet: throughputRatio !== undefined && throughputRatio >= targets.minThroughputRatio,
        ...(floor
          ? {
              floor: {
                primitive: floor.name,
                p50Ratio: ratio(result.latency.p50, floor.latency.p50),
                throughputRatio: ratio(result.throughputOpsPerSec, floor.throughputOpsPerSec),
              },
            }
          : {}),
      },
    ];
  });
}

const cell = (value: number | undefined, suffix = '') => (value === undefined ? '–' : `${value}${suffix}`);

/** The Markdown tables of a run. */
export function markdown(report: BenchReport): string {
  const { machine } = report;
  const rows = report.results.map(
    (result) =>
      `| ${result.kind === 'primitive' ? '_' + result.name + '_' : result.name} | ${result.observedBy} | ${result.latency.p50} | ${result.latency.p95} | ${result.latency.p99} | ${result.latency.samples} | ${result.throughputOpsPerSec} | ${result.cost.events} | ${result.cost.eventsByType['WorkflowTaskCompleted'] ?? 0} | ${result.cost.actions} |`,
  );
  const comparisons = report.comparisons.map(
    (comparison) =>
      `| ${comparison.operation} | ${comparison.primitive} | ${cell(comparison.p50Ratio, '×')} ${comparison.latencyMet ? '✅' : '❌'} | ${cell(comparison.throughputRatio, '×')} ${comparison.throughputMet ? '✅' : '❌'} | +${comparison.extraActions} | +${comparison.extraEvents} | ${comparison.floor ? `${comparison.floor.primitive}: ${cell(comparison.floor.p50Ratio, '×')} / ${cell(comparison.floor.throughputRatio, '×')}` : '–'} |`,
  );
  const breakdown = report.results.map(
    (result) =>
      `| ${result.name} | ${Object.entries(result.cost.actionsByRule)
        .map(([rule, count]) => `${count} × ${rule.split(' (')[0]}`)
        .join('; ')} | ${result.costNote} |`,
  );
  const steps = report.results.flatMap((result) =>
    result.step
      ? [
          `| ${result.kind === 'primitive' ? '_' + result.name + '_' : result.name} | ${result.step.stepsPerTurn} | ${result.latency.p50} | ${result.step.turnLatency.p50} | ${result.step.turnLatency.p95} | ${result.cost.actions} | ${result.cost.events} | ${result.step.workflowTasksPerTurn} | ${result.step.spansPerStep.activityQueuedMs} / ${result.step.spansPerStep.activityRunningMs} / ${result.step.spansPerStep.workflowTaskMs} | ${result.step.rootSignalsBetweenSteps} / ${result.step.signalsReceivedBetweenSteps} (${result.step.turnsChecked} turns) |`,
        ]
      : [],
  );
  const variants = Object.entries(report.variantServerSettings ?? {}).map(
    ([label, settings]) =>
      `Rows marked (${label}) ran on a second server with \`${JSON.stringify(settings)}\`.`,
  );
  return [
    `# agents-kit benchmark — ${report.startedAt}`,
    '',
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}, ${machine.temporal}, load average ${machine.loadAverage} at the start. ` +
      'Server settings: `' +
      JSON.stringify(report.serverSettings) +
      '`, SQLite `' +
      report.sqlitePragmas.join(' ') +
      '`. Config: `' +
      JSON.stringify(report.config) +
      '`.',
    '',
    'Latency in ms (warm-up excluded); throughput in operations/s at fixed concurrency; events and billable actions per operation counted from histories.',
    '',
    '| operation | observed by | p50 | p95 | p99 | n | ops/s | events/op | workflow tasks/op | actions/op |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `Targets: p50 ≤ ${targets.maxLatencyRatio}× the primitive, throughput ≥ ${targets.minThroughputRatio}×.`,
    '',
    'The last column compares an operation that SPEC routes through a host workflow (the root run, a conversation) with the least such a route takes on bare Temporal: p50 ratio / throughput ratio.',
    '',
    '| agents-kit operation | primitive | p50 ratio | throughput ratio | extra actions/op | extra events/op | host-routed floor: p50 / throughput ratio |',
    '|---|---|---|---|---:|---:|---|',
    ...comparisons,
    '',
    '| operation | billable actions per operation | what the history holds |',
    '|---|---|---|',
    ...breakdown,
    '',
    ...(steps.length > 0
      ? [
          'Steps: latency and cost per step (a turn of n steps: n model calls, n − 1 tool calls); turns timed from the trigger’s client call to the task that took the last model answer. The last column counts, over every latency turn, the signals sent to the root / received between a turn’s first call and its last answer (0 / 0: no round trip to the root on the step’s path).',
          '',
          '| step | steps/turn | p50 per step | turn p50 | turn p95 | actions/step | events/step | workflow tasks/turn | ms per step: activities queued / running / workflow tasks | root signals / signals in between |',
          '|---|---:|---:|---:|---:|---:|---:|---:|---|---|',
          ...steps,
          '',
          ...variants,
          '',
        ]
      : []),
  ].join('\n');
}

/**
 * A grouped bar chart (SVG, no dependency) of p50 latency: each agents-kit operation against its
 * primitive, and against its host-routed floor when it has one.
 */
export function latencyChart(report: BenchReport): string {
  const resultNamed = (name: string) => report.results.find((result) => result.name === name)!;
  const groups = report.comparisons.map((comparison) => ({
    label: comparison.operation,
    bars: [
      { result: resultNamed(comparison.operation), color: '#2b6cb0' },
      { result: resultNamed(comparison.primitive), color: '#a0aec0' },
      ...(comparison.floor ? [{ result: resultNamed(comparison.floor.primitive), color: '#d6bcfa' }] : []),
    ],
  }));
  const width = 900;
  const left = 250;
  const barArea = width - left - 90;
  const barHeight = 22;
  const top = 50;
  const heights = groups.map((group) => group.bars.length * barHeight + 14);
  const height = top + heights.reduce((sum, value) => sum + value, 0) + 40;
  const max = Math.max(1, ...groups.flatMap((group) => group.bars.map((bar) => bar.result.latency.p50)));
  const scale = (value: number) => Math.max(1, (value / max) * barArea);
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  let y = top;
  const drawn = groups.map((group, index) => {
    const groupTop = y;
    y += heights[index]!;
    return group.bars
      .map(({ result, color }, row) => {
        const barTop = groupTop + row * barHeight;
        const value = result.latency.p50;
        return (
          `<text x="${left - 10}" y="${barTop + 15}" font-size="${row === 0 ? 13 : 11}"${row === 0 ? '' : ' fill="#666"'} text-anchor="end">${escape(row === 0 ? group.label : result.name)}</text>` +
          `<rect x="${left}" y="${barTop}" width="${scale(value).toFixed(1)}" height="${barHeight - 2}" fill="${color}"><title>${escape(result.name)}: ${value} ms</title></rect>` +
          `<text x="${(left + scale(value) + 6).toFixed(1)}" y="${barTop + 15}" font-size="12">${value} ms</text>`
        );
      })
      .join('\n');
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="20" y="22" font-size="15" font-weight="bold">p50 latency (ms) — ${escape(report.startedAt)}</text>`,
    `<text x="20" y="40" font-size="12">agents-kit operation (blue), its Temporal primitive (grey), the least a host-routed operation takes (violet)</text>`,
    ...drawn,
    `<text x="20" y="${height - 14}" font-size="11" fill="#666">2 shared cores, one dev server (SQLite), worker in-process: noisy; see BENCHMARKS.md for method.</text>`,
    '</svg>',
    '',
  ].join('\n');
}

/** Writes `<timestamp>.json`, `latest.md` and `latest.svg` into `directory`; returns the JSON path. */
export function writeReport(report: BenchReport, directory: string): string {
  mkdirSync(directory, { recursive: true });
  const jsonPath = join(directory, `${report.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(directory, 'latest.md'), markdown(report));
  writeFileSync(join(directory, 'latest.svg'), latencyChart(report));
  return jsonPath;
}
