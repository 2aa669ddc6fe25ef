// SPEC S2, S3.10: every handler is total, found the way an outside program finds them. The handlers
// each workflow of a tree registers (the root run, an agent, their conversations) are listed from the
// workflow itself (Temporal's built-in metadata query), not from our code, so a handler added later is
// covered without touching this test. Every update is sent junk arguments from a raw client with no
// retries — none, null, wrong types, forged and real capabilities with malformed requests, payloads over
// our 160 KiB update bound and near 2 MiB, eight at a time — and each is refused, promptly: by the
// workflow with a KitError kind, or (over the server's in-flight bound of update arguments) by the
// server; none is written to history and no workflow task fails. Every signal gets the same junk and
// every query is asked with it. Then nothing has changed and the tree still works.
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { status as grpcStatus } from '@grpc/grpc-js';
import { maxUpdateBytes } from '../../domain/answer-bounds';
import { jsonBytes } from '../../domain/bytes';
import { ErrorKind } from '../../domain/errors';
import { mailboxQuery, threadQuery } from '../../domain/messages';
import { conversationSummaryQuery } from '../../domain/conversation-messages';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { failedTasks, historyEvents } from '../helpers/task-answers';
import { expectTreeUnharmed, handlersOf, treeWithIdleChild } from '../helpers/workflow-handlers';

let temporal: TestTemporal;
/** A client as an outside program has it, whose calls are not retried. */
let raw: { client: Client; connection: Connection };
const taskQueue = uniqueTaskQueue('every-handler');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
  const connection = await Connection.connect({ address: temporal.address, interceptors: [] });
  raw = { connection, client: new Client({ connection }) };
});
afterAll(async () => {
  await raw?.connection.close();
  await temporal?.close();
});

/** Just under Temporal's 2 MiB payload limit, so the server delivers it. */
const nearlyTwoMiB = 'x'.repeat(2 * 1024 * 1024 - 4096);
/** Over our update bound (160 KiB), under the server's in-flight bound: it reaches the validators. */
const oversized = 'y'.repeat(700_000);
const kinds = new Set<string>(Object.values(ErrorKind));

/**
 * How an update call ended: 'refused' (by the workflow with a KitError kind, or by the server when
 * oversized arguments pass its in-flight bound), or what else happened.
 */
async function outcomeOf(call: Promise<unknown>, args: unknown[], timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((done) => {
    timer = setTimeout(() => done(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  const settled = call.then(
    (value) => `accepted: ${JSON.stringify(value)?.slice(0, 200)}`,
    (error: unknown) => {
      const cause = (error as { cause?: unknown }).cause;
      if (
        error instanceof WorkflowUpdateFailedError &&
        cause instanceof ApplicationFailure &&
        kinds.has(cause.type ?? '')
      )
        return 'refused';
      const code = (cause as { code?: number } | undefined)?.code;
      // Arguments over our bound, with others in flight, pass the server's bound together.
      if (code === grpcStatus.RESOURCE_EXHAUSTED && jsonBytes(args) > maxUpdateBytes) return 'refused';
      return `failed otherwise: ${String(error)} / ${String(cause)}`.slice(0, 300);
    },
  );
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

test('every update, signal and query of a tree, given junk by a raw client, refuses it and changes nothing', async () => {
  const client = temporal.client;
  const tree = await treeWithIdleChild(client, taskQueue);
  const { service, child, workflows } = tree;

  // A capability with a made-up proof, and the real ones, for arguments that get past the first check.
  const forged = {
    rootId: service.rootThreadId,
    threadId: service.rootThreadId,
    lineage: [],
    proof: 'e'.repeat(64),
  };
  const real = service.rootCapability;
  const childCapability = await service.capabilityOf(child.id);
  const junk = [null, -1.5, 'text', [], {}, { deep: { deeper: [null] } }, oversized, nearlyTwoMiB];
  const argumentLists: unknown[][] = [
    [],
    ...junk.map((value) => [value]),
    ...junk.map((value) => [forged, value]),
    ...junk.map((value) => [value, forged]),
    // A real capability and a malformed request: reaches the request's own checks.
    ...junk.filter((value) => value !== null).map((value) => [real, value]),
    ...junk.filter((value) => value !== null).map((value) => [childCapability, value]),
    ...junk.filter((value) => value !== null).map((value) => [value, real]),
  ];
  const signalArgumentLists = [
    ...argumentLists.filter((args) => !args.includes(nearlyTwoMiB) && !args.includes(oversized)),
    [forged, nearlyTwoMiB],
  ];
  // Updates whose only argument is a capability act on a real one whatever follows it (extra arguments
  // are ignored, as JavaScript does): a real capability is not junk to them.
  const takesOnlyACapability = new Set([
    'shutdown',
    'complete-root',
    'revoke-grant',
    'take-root-messages',
    'first-turn',
  ]);

  const before = await snapshot(client, service.rootThreadId, child.id, workflows);
  const wrong: string[] = [];
  for (const workflowId of workflows) {
    const handlers = await handlersOf(client, workflowId);
    expect(handlers.updates.length + handlers.signals.length).toBeGreaterThan(0);
    const handle = raw.client.workflow.getHandle(workflowId);
    const acceptedUpdates = async () =>
      (await historyEvents(client, workflowId)).filter(
        (event) => event.workflowExecutionUpdateAcceptedEventAttributes,
      ).length;
    const accepted = await acceptedUpdates();
    const calls = handlers.updates.flatMap((name) =>
      argumentLists
        .filter(
          (args) => !(takesOnlyACapability.has(name) && (args[0] === real || args[0] === childCapability)),
        )
        .map((args) => async () => {
          const outcome = await outcomeOf(
            handle.executeUpdate(name, { args: args as [unknown] }),
            args,
            30_000,
          );
          if (outcome !== 'refused') wrong.push(`${workflowId} update ${name}(${shown(args)}): ${outcome}`);
        }),
    );
    await inParallel(calls, 8);
    expect([workflowId, failedTasks(await historyEvents(client, workflowId))]).toEqual([workflowId, []]);
    // A refused update leaves no trace in history.
    expect([workflowId, await acceptedUpdates()]).toEqual([workflowId, accepted]);
    // Signals are written to history before any code sees them, and Temporal terminates a workflow whose
    // history passes 50 MB: one nearly-2-MiB payload per signal (the README's threat model says why a
    // flood of them is a namespace-permission matter, like `terminate`).
    await Promise.all(
      handlers.signals.flatMap((name) => signalArgumentLists.map((args) => handle.signal(name, ...args))),
    );
    for (const name of handlers.queries)
      for (const args of argumentLists) await handle.query(name, ...args).catch(() => undefined);
  }
  expect(wrong).toEqual([]);

  // The signals changed nothing, failed no workflow task, and the tree still works.
  expect(await snapshot(client, service.rootThreadId, child.id, workflows)).toEqual(before);
  await expectTreeUnharmed(client, tree);
  await service.shutdown();
}, 600_000);

/** Runs `calls` with at most `width` at a time. */
async function inParallel(calls: (() => Promise<void>)[], width: number): Promise<void> {
  const queue = [...calls];
  const lane = async () => {
    for (let call = queue.shift(); call; call = queue.shift()) await call();
  };
  await Promise.all(Array.from({ length: width }, lane));
}

/** The arguments as a line of the failure list (long strings by their length). */
const shown = (args: unknown[]) =>
  args
    .map((arg) =>
      typeof arg === 'string' && arg.length > 100
        ? `<${arg.length} chars>`
        : JSON.stringify(arg)?.slice(0, 60),
    )
    .join(', ');

/** What the junk must not change: the root's listing, the agent, its mailbox, each conversation's summary. */
async function snapshot(client: Client, rootId: string, childId: string, workflows: string[]) {
  const handle = (id: string) => client.workflow.getHandle(id);
  return {
    root: await handle(rootId).query(threadQuery),
    child: await handle(childId).query(threadQuery),
    mailbox: await handle(childId).query(mailboxQuery),
    // A conversation whose history the 2 MiB signals grew continues as new (its generation counts the
    // runs); what it holds must not change.
    conversations: await Promise.all(
      workflows.slice(2).map(async (id) => {
        const { generation: _runs, ...summary } = await handle(id).query(conversationSummaryQuery);
        return summary;
      }),
    ),
  };
}
