// The scenario of scripts/record-histories.ts `--pages-first` (patch `pagesBeforeContinuing`): a
// receiver has read a conversation to its end when one publish spills many pages at once; the
// conversation cuts them one at a time and asks for the first back between cuts.
import type { Client } from '@temporalio/client';
import { pagesBurst } from '../test/helpers/pages-burst';

export async function recordPagesBeforeContinuing(client: Client, taskQueue: string): Promise<void> {
  await pagesBurst(client, taskQueue, 30);
}
