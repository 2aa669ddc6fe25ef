/**
 * The four S7.3 scale scenarios (issue 8, item 6), shared by the reduced test
 * (`test/workflows/scale.test.ts`) and the full-size script (`scripts/scale.ts`). Each returns what it
 * observed; callers assert on it (the test) or print it (the script).
 */

export {
  historyEventBound,
  historyStats,
  type HistoryStats,
  runHistories,
  type RunHistory,
} from './run-histories';
export { pool, type RunScenarioOptions } from './scale-scenario';
export { manyThreads, type ThreadsOutcome } from './scale-threads';
export {
  mailboxQueryLimit,
  manyMessages,
  manyMessagesInTurns,
  type MessagesOutcome,
  type TurnsOutcome,
} from './scale-messages';
export { manyNotifications, type NotificationsOutcome } from './scale-notifications';
