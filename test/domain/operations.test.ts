// SPEC S4 / issue 17: one table of control operations; the union, routing, tools and update names come
// from it.
import { ErrorKind, parseInput } from '../../domain/errors';
import { resolveInteractionUpdate, sendMessageUpdate, spawnUpdate, waitUpdate } from '../../domain/messages';
import {
  ControlOperation,
  controlOperations,
  operationOwners,
  operationTypes,
  ownerOf,
  agentToolNames,
  agentTools,
  isAgentToolName,
  isThreadOperation,
  rootUpdateTypes,
  threadUpdateTypes,
  toolOperations,
} from '../../domain/operations';
import { kitErrorOf } from '../helpers/run-state';

const root = `thread_${'0'.repeat(32)}` as const;
const child = `thread_${'1'.repeat(32)}` as const;

test('every model tool performs the operation the table names, and every operation has an owner', () => {
  // The model's tools are exactly the rows' tools, each performing its own row's operation.
  const rowsWithTools = operationTypes.filter((type) => 'tool' in controlOperations[type]);
  expect(agentToolNames).toHaveLength(rowsWithTools.length);
  for (const tool of agentToolNames) {
    expect((controlOperations[toolOperations[tool]] as { tool?: { name: string } }).tool?.name).toBe(tool);
    expect(agentTools[tool].operation).toBe(toolOperations[tool]);
  }
  expect(agentToolNames).toEqual([
    'spawn_agent',
    'send_agent_message',
    'wait_agents',
    'list_agents',
    'interrupt_agent',
    'close_agent',
  ]);
  expect([
    isAgentToolName('spawn_agent'),
    isAgentToolName('toString'),
    isAgentToolName('word_count'),
  ]).toEqual([true, false, false]);
  for (const type of operationTypes) expect(['root', 'recipient', 'target']).toContain(operationOwners[type]);
});

test('operations go to their owner: messages to the recipient, interrupts to the target, the rest to the root', () => {
  const send = ControlOperation.parse({ type: 'send-message', request: { recipient: child, content: 'hi' } });
  expect(ownerOf(send, root)).toBe(child);
  expect(ownerOf(ControlOperation.parse({ type: 'interrupt', threadId: child }), root)).toBe(child);
  expect(ownerOf(ControlOperation.parse({ type: 'close', threadId: child }), root)).toBe(root);
  expect(ownerOf(ControlOperation.parse({ type: 'list-threads' }), root)).toBe(root);
  // A thread's workflow takes exactly the operations the table does not give the root.
  expect(isThreadOperation(send)).toBe(true);
  expect(isThreadOperation(ControlOperation.parse({ type: 'interrupt', threadId: child }))).toBe(true);
  expect(isThreadOperation(ControlOperation.parse({ type: 'close', threadId: child }))).toBe(false);
  const resolve = ControlOperation.parse({
    type: 'resolve',
    threadId: child,
    request: { requestId: `request_${'2'.repeat(32)}`, answer: { type: 'approval', approved: true } },
  });
  expect(ownerOf(resolve, root)).toBe(child);
  expect(operationTypes.filter((type) => operationOwners[type] !== 'root')).toEqual([
    'send-message',
    'interrupt',
    'resolve',
  ]);
});

test("the union takes exactly each row's arguments", () => {
  const refused = kitErrorOf(() =>
    parseInput(ControlOperation, { type: 'wait', request: { threadIds: [] } }, 'op'),
  );
  expect(refused.kind).toBe(ErrorKind.Protocol);
  expect(kitErrorOf(() => parseInput(ControlOperation, { type: 'list-threads', extra: 1 }, 'op')).kind).toBe(
    ErrorKind.Protocol,
  );
  expect(kitErrorOf(() => parseInput(ControlOperation, { type: 'teleport' }, 'op')).kind).toBe(
    ErrorKind.Protocol,
  );
  expect(ControlOperation.parse({ type: 'wait', request: { threadIds: [child] } })).toEqual({
    type: 'wait',
    request: { threadIds: [child], timeoutMs: 30_000 },
  });
});

test('client updates carry the wire names of their rows', () => {
  expect([spawnUpdate.name, sendMessageUpdate.name, waitUpdate.name, resolveInteractionUpdate.name]).toEqual([
    'spawn',
    'send-message',
    'wait',
    'resolve-interaction',
  ]);
});

test("each workflow serves the client updates of the rows its owner has: a thread's, and the root run's", () => {
  // The root run also serves the thread updates for the root thread itself (its mailbox, its turn).
  expect(threadUpdateTypes).toEqual(['send-message', 'interrupt', 'resolve']);
  expect(rootUpdateTypes).toEqual(['spawn', 'spawn-remote', 'wait', 'close']);
  for (const type of [...threadUpdateTypes, ...rootUpdateTypes])
    expect('update' in controlOperations[type]).toBe(true);
  const served = new Set<string>([...threadUpdateTypes, ...rootUpdateTypes]);
  const byQuery = operationTypes.filter((type) => 'query' in controlOperations[type]);
  const internal = operationTypes.filter((type) => !served.has(type) && !byQuery.includes(type));
  // Charges, reservations and remembered approvals (a thread asking its root) are the tree's own: no
  // client update performs them.
  expect(internal).toEqual(['charge', 'reserve', 'remember-approval']);
});
