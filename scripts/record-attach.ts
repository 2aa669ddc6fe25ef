// How every scenario of scripts/record-histories.ts starts: a root run the recorder attaches and owns.
import type { Client } from '@temporalio/client';
import { ThreadService, type AttachOptions } from '../client/thread-service';

/** Who attaches every recorded root run, and so holds its grant. */
const recorder = 'recorder';

/** What a scenario sets of its root run; the grant's owner is always the recorder. */
export type RecorderOptions = Partial<Omit<AttachOptions, 'taskQueue' | 'owner' | 'grant'>> & {
  grant?: Omit<AttachOptions['grant'], 'owner'>;
};

/**
 * Attaches a root run owned by the recorder on `taskQueue`: a root named `root` that coordinates unless
 * the scenario gives its own, and a grant with the defaults but for what the scenario sets.
 */
export function attachRecorder(
  client: Client,
  taskQueue: string,
  options: RecorderOptions = {},
): Promise<ThreadService> {
  const { grant, ...rest } = options;
  return ThreadService.attach(client, {
    taskQueue,
    owner: recorder,
    root: { task: 'coordinate', name: 'root' },
    ...rest,
    grant: { owner: recorder, ...grant },
  });
}
