// The scenarios scripts/record-histories.ts records beside the v1 histories, by flag: each a feature
// added after v1, whose runs are kept under their own prefix and replayed with the others.
import type { Client } from '@temporalio/client';
import { recordApprovalPolicy } from './record-approval-policy';
import { recordBudgets } from './record-budgets';
import { recordLiveOutput } from './record-live-output';
import { holdsLiveOutput, type RunSelection } from './write-histories';

export const scenarios: Record<
  string,
  { record: (client: Client, taskQueue: string) => Promise<void>; prefix: string; selection: RunSelection }
> = {
  '--live': {
    record: recordLiveOutput,
    prefix: 'live-output',
    selection: { takes: holdsLiveOutput, withSenders: true },
  },
  '--approval': { record: recordApprovalPolicy, prefix: 'approvalPolicy', selection: { takes: () => true } },
  '--budgets': { record: recordBudgets, prefix: 'budgets', selection: { takes: () => true } },
};
