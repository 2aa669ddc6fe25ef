// The scenario of scripts/record-histories.ts `--pages-first` (patch `pagesBeforeContinuing`): a
// receiver has read a conversation to its end when one publish spills many pages at once; the
// conversation cuts them one per loop and asks for the due page beside each cut.
import type { Client } from '@temporalio/client';
import { pagedBacklogRead, pagesBurst } from '../test/helpers/pages-burst';

export async function recordPagesBeforeContinuing(client: Client, taskQueue: string): Promise<void> {
  await pagesBurst(client, taskQueue, 30);
}

/**
 * The scenario of `--pages-quiet` (patch `pageTrafficBeforeContinuing`): a backlog published in pages
 * before its receiver opens, read while the conversation keeps continuing as new.
 */
export async function recordPageTrafficBeforeContinuing(client: Client, taskQueue: string): Promise<void> {
  await pagedBacklogRead(client, taskQueue, 30);
}
