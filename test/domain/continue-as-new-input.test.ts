// SPEC S3.10: the largest continue-as-new input an agent or a root run can build, computed from the real
// classes filled to their bounds with the worst texts (a control character takes 6 bytes as JSON), stays
// under `carriedInputBudgetBytes` — 2 MiB less a margin. Each part is also checked against its own bound,
// so the table printed here is the accounting README "Protocol v1" refers to.
import { randomUUID } from 'node:crypto';
import { jsonBytes } from '../../domain/bytes';
import {
  carriedInputBudgetBytes,
  carriedThread,
  fitMemory,
  inputLimitBytes,
  maxMemoryBytes,
} from '../../domain/carry-bounds';
import { AgentInput, type ControlRequest, type OutboxItem, type ThreadLoopState } from '../../domain/control';
import type { RememberedResolution } from '../../domain/conversation-schemas';
import { KitError } from '../../domain/errors';
import { newId, type ThreadId } from '../../domain/ids';
import {
  Mailbox,
  rootMailboxLimits,
  threadMailboxLimits,
  triggerRoomBytes,
  type MailboxLimits,
} from '../../domain/mailbox';
import { RecentAnswerLog, rootRememberedAnswers } from '../../domain/recent-answers';
import { carryBudgetBytes, maxTombstones, registryBudgetBytes, RootResume } from '../../domain/run-snapshot';
import {
  type AgentSpec,
  type AgentThread,
  maxMessageBytes,
  maxRootSpecBytes,
  maxSpecBytes,
  RootRunInput,
} from '../../domain/schemas';
import { ThreadWatch } from '../../workflows/thread-watch';
import { admitToRoot, kitErrorOf, newRun, now, scopeOf, spawn } from '../helpers/run-state';
import { id, worst, worstAskingContent } from '../helpers/worst-case';
import { addUsage, maxLedgerModels, type UsageLedger } from '../../domain/usage';
import { ApprovalPolicy, maxPolicyBytes, maxPolicyTools } from '../../domain/approval-policy';

const sender = id('thread', 1);
const runKey = 'a'.repeat(64);

/** A spec of `bytes` as JSON at most: the task as long as allowed, instructions for the rest. */
function specOf(bytes: number): AgentSpec {
  const task = worst(Math.min(100_000, Math.floor((bytes - 200) / 12)));
  const instructions = worst(Math.floor((bytes - jsonBytes({ task, instructions: '' }) - 100) / 6));
  const spec: AgentSpec = { task, instructions, tools: ['*'] };
  expect(jsonBytes(spec)).toBeLessThanOrEqual(bytes);
  expect(jsonBytes(spec)).toBeGreaterThan(bytes - 200);
  return spec;
}

/**
 * A mailbox filled as far as its limits let any sender: its consumed log full, then as many waiting
 * (none asking for a turn), then the one short message with `triggerTurn` a full mailbox still takes.
 */
function fullMailbox(limits: MailboxLimits): Mailbox {
  const mailbox = new Mailbox(undefined, limits);
  let n = 0;
  const fill = (content: string) => {
    for (;;) {
      const draft = { id: id('message', ++n), sender, recipient: id('thread', 2), content };
      if (mailbox.refusal('/root/x', draft)) return;
      mailbox.admit({ ...draft, triggerTurn: false, sentAt: now });
    }
  };
  const asking = { sender, recipient: id('thread', 2), triggerTurn: true, sentAt: now };
  for (let turn = 1; turn <= 60; turn++) {
    mailbox.admit({ ...asking, id: id('message', ++n), content: worst(10_000) });
    mailbox.take(Number.MAX_SAFE_INTEGER);
  }
  // The biggest message first (always taken when none waits), then the rest filled with small ones.
  fill(worst(Math.floor((maxMessageBytes - 2) / 6)));
  fill('');
  const room = { ...asking, id: id('message', ++n), content: worstAskingContent() };
  expect(mailbox.refusal('/root/x', room)).toBeUndefined();
  mailbox.admit(room);
  expect(mailbox.refusal('/root/x', { ...room, content: '' })?.message).toMatch(/already asked for/);
  return mailbox;
}

/** A kernel memory written past its bound (a long transcript, paths, labels), as the thread carries it. */
function fullMemory(): Record<string, string> {
  const memory = fitMemory({
    ...Object.fromEntries(Array.from({ length: 400 }, (_, n) => [`label:${n}`, worst(40)])),
    transcript: worst(20_000),
    paths: worst(2_000),
  });
  expect(jsonBytes(memory)).toBeGreaterThan(maxMemoryBytes - 1_000);
  return memory;
}

/** A thread's change log after 200 turns with results as long as a turn may give. */
function fullWatch(thread: AgentThread): ThreadWatch {
  const watch = new ThreadWatch();
  for (let turn = 1; turn <= 200; turn++) {
    const outcome = {
      turn,
      status: 'completed' as const,
      result: worst(100_000),
      tokens: 1e12,
      endedAt: now,
    };
    watch.record({ ...thread, latestTurn: outcome, firstTurn: { ...outcome, turn: 1 }, turnsStarted: turn });
  }
  return watch;
}

/** Remembered answers, each as large as the log keeps one. */
function fullRecent(capacity?: number): RecentAnswerLog {
  const log = new RecentAnswerLog([], capacity);
  const key = (n: number) => `${n.toString().padStart(4, '0')}:${worst(30)}`;
  let size = 200;
  while ((log.remember(key(0), { n: 0 }, { answer: worst(size) }), log.find(key(0), { n: 0 }) === undefined))
    size--;
  for (let n = 1; n < 400; n++) log.remember(key(n), { n: 0 }, { answer: worst(size) });
  return log;
}

/** Remembered resolutions at the schema's largest, as many as a thread keeps. */
const fullResolutions = (): RememberedResolution[] =>
  Array.from({ length: 100 }, (_, n) => ({
    resolution: {
      requestId: id('request', n),
      threadId: sender,
      conversationId: id('conversation', n),
      seq: Number.MAX_SAFE_INTEGER,
      resolvedAt: now,
      resolvedBy: { threadId: sender, name: worst(42) },
    },
    answerType: 'approval',
    answerFingerprint: 'f'.repeat(64),
  }));

/** An approval policy at its largest (SPEC S11.4): its lists filled with the longest names until it is full. */
function fullPolicy(): ApprovalPolicy {
  const policy: ApprovalPolicy = {
    version: Number.MAX_SAFE_INTEGER,
    neverAsk: [],
    alwaysAsk: [],
    remembered: [],
  };
  for (let n = 0; ; n++) {
    const list = (['neverAsk', 'alwaysAsk', 'remembered'] as const)[n % 3]!;
    const name = `${n.toString().padStart(4, '0')}${'x'.repeat(96)}`;
    const next = { ...policy, [list]: [...policy[list], name] };
    if (!ApprovalPolicy.safeParse(next).success) break;
    Object.assign(policy, next);
  }
  expect(jsonBytes(policy)).toBeGreaterThan(maxPolicyBytes - 120);
  expect(policy.neverAsk.length).toBeLessThanOrEqual(maxPolicyTools);
  return policy;
}

const loopState = (): ThreadLoopState => ({
  turn: Number.MAX_SAFE_INTEGER,
  turnRequested: true,
  memory: fullMemory(),
  idleSince: now,
});

/** Logs each part's bytes and returns the whole input's. */
function account(what: string, parts: Record<string, unknown>, whole: unknown): number {
  const rows = Object.entries(parts).map(([part, value]) => `  ${part.padEnd(16)} ${jsonBytes(value)}`);
  const total = jsonBytes(whole);
  process.stdout.write(
    `${what}: ${total} bytes (budget ${carriedInputBudgetBytes}, limit ${inputLimitBytes})\n${rows.join('\n')}\n`,
  );
  return total;
}

test("an agent's largest continue-as-new input stays under the budget", () => {
  const lineage = Array.from({ length: 64 }, (_, n) => id('thread', 100 + n)) as ThreadId[];
  const spec = specOf(maxSpecBytes);
  const thread: AgentThread = {
    id: id('thread', 7),
    rootId: lineage[0]!,
    parentId: lineage.at(-1)!,
    conversationId: id('conversation', 7),
    name: 'n'.repeat(40),
    path: `/root${`/${'n'.repeat(40)}`.repeat(64)}`,
    depth: 64,
    status: 'running',
    taskQueue: 'q'.repeat(200),
    task: spec.task,
    tools: Array.from({ length: 200 }, (_, n) => `${'t'.repeat(96)}${n}`.slice(0, 100)),
    turnsStarted: Number.MAX_SAFE_INTEGER,
    turnsCompleted: Number.MAX_SAFE_INTEGER,
    latestTurn: {
      turn: 2,
      status: 'failed',
      error: { kind: 'x', message: worst(100_000) },
      tokens: 1,
      endedAt: now,
    },
    firstTurn: { turn: 1, status: 'completed', result: worst(100_000), tokens: 1, endedAt: now },
    createdAt: now,
    updatedAt: now,
  };
  const resume = {
    schemaVersion: 1 as const,
    mailbox: fullMailbox(threadMailboxLimits).snapshot(),
    loop: loopState(),
    operations: Number.MAX_SAFE_INTEGER,
    watch: fullWatch(thread).snapshot(),
    recent: fullRecent().snapshot(),
    tokens: { allowance: 1e9, owed: 1e12, unreported: 1e12, scarce: true },
    resolutions: fullResolutions(),
    usage: fullLedger(),
  };
  const input = AgentInput.parse({
    protocolVersion: 1,
    thread: carriedThread(thread),
    lineage,
    runKey,
    spec,
    idleTimeoutMs: 1e12,
    interactionTimeoutMs: 1e12,
    conversationRetentionMs: 365 * 24 * 3_600_000,
    continueAsNewAfterEvents: 1e9,
    usageLedger: true,
    approvalPolicy: fullPolicy(),
    resume,
  });
  expect(jsonBytes(resume.loop.memory)).toBeLessThanOrEqual(maxMemoryBytes);
  expect(jsonBytes(resume.mailbox.ready)).toBeLessThanOrEqual(threadMailboxLimits.bytes + triggerRoomBytes);
  const total = account(
    'agent',
    { spec, thread: input.thread, lineage, approvalPolicy: input.approvalPolicy, ...resume },
    input,
  );
  expect(total).toBeLessThan(carriedInputBudgetBytes);
});

/** A usage ledger at its largest: every model slot taken by the longest names, numbers at their bounds. */
function fullLedger(): UsageLedger {
  const ledger: UsageLedger = {};
  const most = { inputTokens: 1e15, outputTokens: 1e15, costUsd: 1e12 - 0.123456789, calls: 1e12 };
  for (let n = 0; n < maxLedgerModels + 5; n++)
    addUsage(ledger, `${'"'.repeat(117)}${n.toString().padStart(3, '0')}`, most);
  return ledger;
}

test("a root run's largest continue-as-new input stays under the budget", () => {
  const state = newRun({
    maxConcurrent: 10_000,
    maxTotal: 1_000_000,
    maxDepth: 64,
    remoteTargets: Object.fromEntries(
      Array.from({ length: 64 }, (_, n) => [
        `${'r'.repeat(38)}${n.toString().padStart(2, '0')}`,
        { taskQueue: 'q'.repeat(200) },
      ]),
    ),
  });
  // Threads until admission refuses: each with a long task, then turns with long results (long enough
  // to be clipped to the end: the registry is then at its smallest).
  const task = worst(2_000);
  const result = worst(3_000);
  // Its own ledger and the tree's at their largest (SPEC S11.3).
  for (const [model, usage] of Object.entries(fullLedger())) state.recordRootUsage(model, usage);
  let parent: string = state.rootId;
  for (let n = 0; ; n++) {
    try {
      const child = spawn(state, parent, {
        task,
        name: `${'a'.repeat(34)}${n.toString(16).padStart(6, '0')}`,
        requestId: id('request', n),
      });
      if (n < 3) parent = child.id; // a few levels deep, so paths are long too
      for (const turn of [1, 2]) {
        state.turnStarted(child.id, turn, now);
        state.turnEnded(child.id, { turn, status: 'completed', result, tokens: 1, endedAt: now }, 'idle');
      }
    } catch (error) {
      expect(KitError.is(error) && error.details).toEqual({
        limit: 'registryBytes',
        value: registryBudgetBytes,
      });
      break;
    }
  }
  for (let n = 0; n < maxTombstones; n++)
    state.reconcile(scopeOf(state), {
      request: { task: 'never', requestId: id('request', 1e6 + n), fork: { type: 'none' } },
      reportedFailed: false,
    });
  // One more request reconciled as missing would not fit: QuotaExceeded, nothing changed.
  const tombstone = () =>
    state.reconcile(scopeOf(state), {
      request: { task: 'never', requestId: id('request', 2e6), fork: { type: 'none' } },
      reportedFailed: false,
    });
  const before = JSON.stringify(state.snapshot().requestIndex);
  expect(kitErrorOf(tombstone).details).toEqual({ limit: 'reconcileTombstones', value: maxTombstones });
  expect(JSON.stringify(state.snapshot().requestIndex)).toBe(before);
  for (const content of [worst(20_000), 'x']) {
    for (;;) {
      try {
        admitToRoot(
          state,
          scopeOf(state, parent),
          { recipient: state.rootId, content },
          newId('message', randomUUID),
          now,
        );
      } catch {
        break;
      }
    }
  }
  // Then the short message that asks for the turn, which a full mailbox still takes.
  const asking = { recipient: state.rootId, triggerTurn: true };
  admitToRoot(
    state,
    scopeOf(state, parent),
    { ...asking, content: worstAskingContent() },
    newId('message', randomUUID),
    now,
  );
  const run = state.snapshot();
  // Requests and side effects the root carries, up to its carry budget.
  const queued: ControlRequest[] = [];
  const outbox: OutboxItem[] = [];
  const start = (n: number): OutboxItem => ({
    type: 'start',
    threadId: id('thread', n),
    spec: { task: worst(1_000), tools: ['*'] },
  });
  let carried = 0;
  while (carried + jsonBytes(start(outbox.length)) <= carryBudgetBytes) {
    carried += jsonBytes(start(outbox.length));
    outbox.push(start(outbox.length));
  }
  const resume: RootResume = {
    schemaVersion: 1,
    run,
    loop: loopState(),
    watch: fullWatch(state.root).snapshot(),
    queued,
    outbox,
    recent: fullRecent(rootRememberedAnswers).snapshot(),
    resolutions: fullResolutions(),
    operations: Number.MAX_SAFE_INTEGER,
  };
  RootResume.parse(resume);
  const input = RootRunInput.parse({
    protocolVersion: 1,
    rootThreadId: state.rootId,
    runKey,
    spec: specOf(maxRootSpecBytes),
    grant: state.grant,
    taskQueue: 'q'.repeat(200),
    usageLedger: true,
    approvalPolicy: fullPolicy(),
    resume,
  });
  expect(jsonBytes(run.rootMailbox.ready)).toBeLessThanOrEqual(rootMailboxLimits.bytes + triggerRoomBytes);
  const { records, requestIndex, rootMailbox, grant, ...rest } = run;
  expect(jsonBytes(records)).toBeLessThanOrEqual(registryBudgetBytes);
  const { run: _run, ...others } = resume;
  const total = account(
    `root (${records.length} threads)`,
    {
      spec: input.spec,
      approvalPolicy: input.approvalPolicy,
      records,
      requestIndex,
      rootMailbox,
      grant,
      rest,
      ...others,
    },
    input,
  );
  expect(total).toBeLessThan(carriedInputBudgetBytes);
});

test('a registry of 1,000 threads with short texts fits (SPEC S7.3)', () => {
  const state = newRun({ maxConcurrent: 10_000, maxTotal: 10_000 });
  for (let n = 0; n < 1_000; n++) {
    const child = spawn(state, state.rootId, {
      task: `task ${n}`,
      name: `agent-${n}`,
      requestId: id('request', n),
    });
    state.turnStarted(child.id, 1, now);
    state.turnEnded(
      child.id,
      { turn: 1, status: 'completed', result: `done ${n}`, tokens: 1, endedAt: now },
      'idle',
    );
  }
  expect(jsonBytes(state.snapshot().records)).toBeLessThanOrEqual(registryBudgetBytes);
});
