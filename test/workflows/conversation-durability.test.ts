import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { conversationSummary, publishNotifications } from '../../client/conversations';
import type { ConversationNotification } from '../../domain/schemas';
import { projectRoot } from '../helpers/paths';
import {
  label,
  messageBody,
  newConversation,
  openWhenLeaseFree,
  receiveMany,
} from '../helpers/conversations';
import { suiteWorker, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const { taskQueue, started } = suiteWorker('conversation-durability', (connected) => (temporal = connected));

test('S7.3: 10,000 notifications through one conversation that continues as new arrive complete and in order', async () => {
  const { conversationId } = newConversation();
  started.push(conversationId);
  const total = 10_000;
  const settings = { continueAsNewAfterEvents: 400, continueAsNewAfterUpdates: 150 };
  const startedAt = performance.now();
  await publishNotifications(temporal.client, conversationId, [{ body: messageBody('0') }], {
    taskQueue,
    settings,
  });
  const receiver = await ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
    settings,
  });
  const received: ConversationNotification[] = [];
  // Publishers keep at most ~2,000 items ahead of the receiver: the backlog travels in the
  // continue-as-new snapshot, which must stay under Temporal's 2 MiB payload limit.
  const publishing = (async () => {
    for (let first = 1; first < total; first += 1000) {
      while (first - received.length > 2000) await delay(20);
      const texts = Array.from({ length: Math.min(1000, total - first) }, (_, index) =>
        String(first + index),
      );
      await publishNotifications(
        temporal.client,
        conversationId,
        texts.map((text) => ({ body: messageBody(text) })),
        { taskQueue },
      );
    }
  })();
  while (received.length < total) {
    const notification = await receiver.recv();
    if (notification === null) throw new Error(`end-of-stream after ${received.length}`);
    received.push(notification);
  }
  await publishing;
  await receiver.dispose();
  const elapsedMs = Math.round(performance.now() - startedAt);

  expect(received.map((notification) => notification.seq)).toEqual(
    Array.from({ length: total }, (_, index) => index + 1),
  );
  expect(received.map(label)).toEqual(Array.from({ length: total }, (_, index) => String(index)));
  const summary = await conversationSummary(temporal.client, conversationId);
  expect(summary.lastSeq).toBe(total);
  expect(summary.generation).toBeGreaterThan(0);
  process.stderr.write(
    `[measure] ${total} notifications in ${elapsedMs} ms across ${summary.generation + 1} runs\n`,
  );
}, 600_000);

test('S7.1/S5.5: a receiver process killed mid-stream loses nothing; only its unacknowledged item repeats', async () => {
  const { conversationId } = newConversation();
  started.push(conversationId);
  const total = 20;
  const beforeKill = 10;
  await publishNotifications(
    temporal.client,
    conversationId,
    Array.from({ length: total }, (_, index) => ({ body: messageBody(String(index + 1)) })),
    { taskQueue },
  );
  // `node --import tsx` rather than the tsx binary, so that SIGKILL hits the receiver process itself.
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(__dirname, '..', 'helpers', 'receiver-child.ts'),
      temporal.address,
      conversationId,
      taskQueue,
      String(beforeKill),
    ],
    { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  const seenByChild: number[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === 'holding') break;
    seenByChild.push(Number(line));
  }
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  expect(seenByChild).toEqual(Array.from({ length: beforeKill }, (_, index) => index + 1));

  await using successor = await openWhenLeaseFree(temporal.client, conversationId, { taskQueue });
  const seenBySuccessor = (await receiveMany(successor, total - beforeKill + 1)).map((item) => item.seq);
  expect(seenBySuccessor).toEqual(
    Array.from({ length: total - beforeKill + 1 }, (_, index) => index + beforeKill),
  );
}, 120_000);
