// A real OpenTelemetry Collector (OTLP/HTTP receiver, file exporter) for the tracing tests (SPEC S11.2),
// built from its Go modules (test/otel-collector) the first time and kept in Go's bin folder.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../../workers/dev-server';
import { goBinary, goBinDir } from '../../workers/temporal-binary';
import { projectRoot } from './paths';

/** The collector release test/otel-collector is generated for (its binary's name carries it). */
export const collectorRelease = '0.161.0';
const sources = join(projectRoot, 'test', 'otel-collector');
const log = (line: string) => process.stderr.write(`[agents-kit] ${line}\n`);

/** The collector binary: `$AGENTS_KIT_OTELCOL_PATH`, else Go's bin folder, built there if missing. */
export async function ensureCollectorBinary(): Promise<string> {
  const fromEnv = process.env.AGENTS_KIT_OTELCOL_PATH;
  if (fromEnv) return fromEnv;
  const go = goBinary();
  const binDir = go && goBinDir(go);
  if (!go || !binDir) throw new Error('the tracing tests build an OpenTelemetry Collector: install Go');
  const binary = join(binDir, `agents-kit-otelcol-v${collectorRelease}`);
  if (existsSync(binary)) return binary;
  log(
    `building the OpenTelemetry Collector ${collectorRelease} for the tracing tests: go build in ${sources}`,
  );
  log('this happens once per machine (2 to 8 minutes; later runs reuse the binary)');
  const started = Date.now();
  const child = spawn(go, ['build', '-trimpath', '-o', binary, '.'], {
    cwd: sources,
    env: { ...process.env, CGO_ENABLED: '0' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const ticker = setInterval(
    () => log(`still building the collector (${Math.round((Date.now() - started) / 1000)} s)…`),
    30_000,
  );
  const code = await new Promise<number | null>((done) => child.on('exit', (status) => done(status)));
  clearInterval(ticker);
  if (code !== 0) throw new Error(`go build of the collector failed with exit code ${code}`);
  log(`built ${binary} in ${Math.round((Date.now() - started) / 1000)} s`);
  return binary;
}

/** One OTLP span as the file exporter writes it (OTLP JSON: hex ids, typed attribute values). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string };
  serviceName: string;
}

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
};
type OtlpAttribute = { key: string; value: OtlpValue };

const valueOf = (value: OtlpValue): unknown =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value.doubleValue ??
  value.boolValue ??
  value.arrayValue?.values?.map(valueOf);
const attributesOf = (attributes: OtlpAttribute[] | undefined) =>
  Object.fromEntries((attributes ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]));

/** A running collector: where to export to, and every span it has written so far. */
export interface Collector {
  /** The OTLP/HTTP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  endpoint: string;
  spans(): ReceivedSpan[];
  /** The spans once nothing new has arrived for half a second (after the exporters have flushed). */
  settledSpans(): Promise<ReceivedSpan[]>;
  stop(): Promise<void>;
}

/** Starts the collector with its own config and output under `dir`; resolves once it accepts OTLP. */
export async function startCollector(dir: string): Promise<Collector> {
  const binary = await ensureCollectorBinary();
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const output = join(dir, 'spans.jsonl');
  const config = join(dir, 'collector.yaml');
  writeFileSync(
    config,
    [
      'receivers:',
      '  otlp:',
      '    protocols:',
      '      http:',
      `        endpoint: 127.0.0.1:${port}`,
      'exporters:',
      '  file:',
      `    path: ${output}`,
      '    flush_interval: 100ms',
      'service:',
      '  telemetry:',
      // No metrics server: it would take port 8888 from whoever else runs a collector here.
      '    metrics:',
      '      level: none',
      '    logs:',
      '      level: warn',
      '  pipelines:',
      '    traces:',
      '      receivers: [otlp]',
      '      exporters: [file]',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(binary, ['--config', `file:${config}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  await untilListening(port, child);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => readSpans(output),
    async settledSpans() {
      let previous = -1;
      for (;;) {
        const spans = readSpans(output);
        if (spans.length === previous) return spans;
        previous = spans.length;
        await new Promise((done) => setTimeout(done, 500));
      }
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** Resolves once `port` accepts a connection; rejects if the collector exits or 60 s pass first. */
async function untilListening(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the collector exited (${child.exitCode}) before listening`);
    const open = await new Promise<boolean>((done) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        done(true);
      });
      socket.once('error', () => done(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`the collector did not listen on ${port} within 60 s`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

function readSpans(output: string): ReceivedSpan[] {
  if (!existsSync(output)) return [];
  const spans: ReceivedSpan[] = [];
  for (const line of readFileSync(output, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let batch: {
      resourceSpans?: {
        resource?: { attributes?: OtlpAttribute[] };
        scopeSpans?: { spans?: Record<string, unknown>[] }[];
      }[];
    };
    try {
      batch = JSON.parse(line) as typeof batch;
    } catch {
      continue; // the line the collector is writing right now
    }
    for (const resourceSpans of batch.resourceSpans ?? []) {
      const serviceName = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const raw of scope.spans ?? []) {
          const span = raw as Omit<ReceivedSpan, 'attributes' | 'events' | 'links' | 'serviceName'> & {
            attributes?: OtlpAttribute[];
            events?: { name: string; attributes?: OtlpAttribute[] }[];
            links?: { traceId: string; spanId: string; attributes?: OtlpAttribute[] }[];
          };
          spans.push({
            ...span,
            parentSpanId: span.parentSpanId ?? '',
            attributes: attributesOf(span.attributes),
            events: (span.events ?? []).map((event) => ({
              name: event.name,
              attributes: attributesOf(event.attributes),
            })),
            links: (span.links ?? []).map((link) => ({
              traceId: link.traceId,
              spanId: link.spanId,
              attributes: attributesOf(link.attributes),
            })),
            status: span.status ?? {},
            serviceName,
          });
        }
      }
    }
  }
  return spans;
}
