// `npm run bench:langgraph`: the agent step of bench/agent-step.ts on LangGraph.js with its PostgreSQL
// checkpointer, for scale: a graph of a model node and a tool node (the same no-op tool and 20-token
// fake model), durability "sync" (each step's checkpoint is written before the next step starts),
// against a private PostgreSQL 15 in a temp dir. Run once with PostgreSQL's defaults (an fsync per
// commit) and once with fsync=off (what our dev server's SQLite synchronous=NORMAL is closest to).
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { freePort } from '../../workers/dev-server';
import { summarizeLatencies, withoutWarmup, type LatencySummary } from '../stats';
import { noopTool, stepTokens } from '../step-model';

const log = (line: string) => process.stderr.write(`[langgraph] ${line}\n`);

/** A private PostgreSQL cluster; as root its commands run as the `postgres` user (initdb refuses root). */
async function startPostgres(settings: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-pg-'));
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })) : undefined;
  if (owner !== undefined) chownSync(dir, owner, owner);
  const run = (command: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', `/usr/local/bin/${command}`, ...args], {
          stdio: 'pipe',
        })
      : execFileSync(`/usr/local/bin/${command}`, args, { stdio: 'pipe' });
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'bench', '--auth=trust', '-E', 'UTF8']);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    ...settings.map((s) => `-c ${s}`),
  ];
  run('pg_ctl', ['-D', data, '-l', join(dir, 'postgres.log'), '-w', '-o', options.join(' '), 'start']);
  log(`PostgreSQL on 127.0.0.1:${port} (${settings.join(' ') || 'defaults'}) in ${dir}`);
  return {
    connString: `postgresql://bench@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** The graph: model → (tool call ? tools → model : end), checkpointed in `checkpointer`. */
function buildGraph(checkpointer: PostgresSaver, stepsPerTurn: number) {
  let calls = 0;
  const usage = { input_tokens: stepTokens / 2, output_tokens: stepTokens / 2, total_tokens: stepTokens };
  const noop = tool(
    async () => noopTool.run({}, { signal: new AbortController().signal }) as Promise<string>,
    {
      name: noopTool.name,
      description: noopTool.description,
      schema: z.object({}),
    },
  );
  // What the prebuilt ToolNode does for a call (its subpath import does not resolve under node10 either).
  const tools = async (state: typeof MessagesAnnotation.State) => {
    const last = state.messages.at(-1);
    const calls = last && AIMessage.isInstance(last) ? (last.tool_calls ?? []) : [];
    return { messages: await Promise.all(calls.map((call) => noop.invoke({ ...call, type: 'tool_call' }))) };
  };
  const model = (state: typeof MessagesAnnotation.State) => {
    const messages = state.messages;
    const lastHuman = messages.map((message) => HumanMessage.isInstance(message)).lastIndexOf(true);
    const taken = messages.slice(lastHuman + 1).filter((message) => ToolMessage.isInstance(message)).length;
    const answer =
      taken < stepsPerTurn - 1
        ? new AIMessage({
            content: '',
            tool_calls: [{ id: `bench-${++calls}`, name: noopTool.name, args: {} }],
          })
        : new AIMessage({ content: 'done' });
    // Assigned untyped: under this repo's node10 module resolution @langchain/core's type of the field
    // resolves to undefined (at run time it is the ordinary usage_metadata).
    Object.assign(answer, { usage_metadata: usage });
    return { messages: [answer] };
  };
  return new StateGraph(MessagesAnnotation)
    .addNode('model', model)
    .addNode('tools', tools)
    .addEdge(START, 'model')
    .addConditionalEdges('model', (state) => {
      const last = state.messages.at(-1);
      return last && AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
    })
    .addEdge('tools', 'model')
    .compile({ checkpointer });
}

interface Measured {
  postgres: string;
  perStep: LatencySummary;
  turn: LatencySummary;
  checkpointsPerStep: number;
}

async function measure(settings: string[], config: { warmup: number; iterations: number; steps: number }) {
  const postgres = await startPostgres(settings);
  const checkpointer = PostgresSaver.fromConnString(postgres.connString);
  try {
    await checkpointer.setup();
    const graph = buildGraph(checkpointer, config.steps);
    const thread = { configurable: { thread_id: 'bench-step' } };
    const checkpoints = async () => {
      let count = 0;
      for await (const _checkpoint of checkpointer.list(thread)) count++;
      return count;
    };
    const turns: number[] = [];
    let counted = 0;
    for (let index = 0; index < config.warmup + config.iterations; index++) {
      const before = index === config.warmup ? await checkpoints() : 0;
      const startMs = performance.now();
      const state = await graph.invoke(
        { messages: [new HumanMessage('next')] },
        { ...thread, durability: 'sync' },
      );
      turns.push(performance.now() - startMs);
      if (state.messages.at(-1)?.content !== 'done')
        throw new Error('the turn did not end with the text answer');
      if (index === config.warmup) counted = (await checkpoints()) - before;
    }
    const measured = withoutWarmup(turns, config.warmup);
    return {
      postgres: settings.join(' ') || 'defaults (fsync on)',
      perStep: summarizeLatencies(measured.map((ms) => ms / config.steps)),
      turn: summarizeLatencies(measured),
      checkpointsPerStep: Math.round((counted / config.steps) * 10) / 10,
    } satisfies Measured;
  } finally {
    await checkpointer.end();
    postgres.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      warmup: { type: 'string', default: '5' },
      iterations: { type: 'string', default: '40' },
      'steps-per-turn': { type: 'string', default: '8' },
    },
  });
  const config = {
    warmup: Number(values.warmup),
    iterations: Number(values.iterations),
    steps: Number(values['steps-per-turn']),
  };
  if (![config.warmup, config.iterations, config.steps].every(Number.isInteger) || config.steps < 2)
    throw new Error('--warmup, --iterations and --steps-per-turn (≥ 2) take integers');
  const startedAt = new Date().toISOString();
  const loadAverage = Math.round(loadavg()[0]! * 100) / 100;
  const results: Measured[] = [];
  for (const settings of [[], ['fsync=off']]) {
    const result = await measure(settings, config);
    results.push(result);
    log(
      `${result.postgres}: per step p50 ${result.perStep.p50} ms, p95 ${result.perStep.p95}; turn p50 ${result.turn.p50} ms, p95 ${result.turn.p95}; ${result.checkpointsPerStep} checkpoints/step`,
    );
  }
  const versionOf = (name: string) =>
    (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string })
      .version;
  const report = {
    startedAt,
    peer: 'LangGraph.js + PostgresSaver',
    versions: Object.fromEntries(
      ['@langchain/langgraph', '@langchain/langgraph-checkpoint-postgres', '@langchain/core'].map((name) => [
        name,
        versionOf(name),
      ]),
    ),
    postgres: execFileSync('/usr/local/bin/postgres', ['--version'], { encoding: 'utf8' }).trim(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadAverage,
    },
    config: { ...config, durability: 'sync', tokensPerCall: stepTokens },
    results,
  };
  const directory = join(__dirname, '..', 'results');
  mkdirSync(directory, { recursive: true });
  const path = join(directory, `langgraph-${startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  log(`wrote ${path}`);
}

main().catch((error: unknown) => {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
