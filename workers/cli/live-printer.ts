import { setMaxListeners } from 'node:events';
import type { ThreadService } from '../../client/thread-service';
import type { LiveOutputEvent } from '../../client/live-output';
import type { ConversationNotification } from '../../domain/schemas';

/**
 * Prints what a tree's model calls generate as they generate it (SPEC S10.1, S8.2), beside the lines of
 * the conversation stream: text is written as it arrives after its agent's path; when another agent (or
 * a line) takes the terminal, the open line ends and the next text starts a line of its own. One watcher
 * per thread, from when it is followed until `signal` aborts.
 */
export class LivePrinter {
  private open: string | undefined;
  private readonly followed = new Map<string, Promise<void>>();

  constructor(
    private readonly service: ThreadService,
    private readonly out: { write(text: string): void; note(line: string): void },
    private readonly signal: AbortSignal,
  ) {
    // Each followed thread's poll listens to the signal while it waits: one per thread, not a leak.
    setMaxListeners(0, signal);
  }

  /** A whole line (a notification, a note): ends the open streamed line first. */
  line(text: string): void {
    this.close();
    this.out.note(text);
  }

  /** Follows the threads a notification announces (a child spawned, as the tree grows). */
  noticed(item: ConversationNotification): void {
    const body = item.body;
    if (body.type === 'status' && body.event === 'child-spawned' && body.threadId)
      this.follow(body.threadId, body.detail ?? body.threadId);
  }

  /** Starts printing a thread's live output (once per thread). */
  follow(threadId: string, path: string): void {
    if (this.followed.has(threadId) || this.signal.aborted) return;
    const watching = (async () => {
      for await (const event of this.service.watchOutput(threadId, { signal: this.signal }))
        this.print(path, event);
    })().catch(() => undefined);
    this.followed.set(threadId, watching);
  }

  /** Ends the open line and waits for every watcher to stop (after `signal` aborted). */
  async stop(): Promise<void> {
    await Promise.all(this.followed.values());
    this.close();
  }

  private print(path: string, event: LiveOutputEvent): void {
    if (event.type === 'end') {
      if (event.end !== 'finished') this.line(`${path} ▸ (${event.end})`);
      else if (this.open === path) this.close();
      return;
    }
    if (event.text.length === 0) return;
    if (this.open !== path || event.started) {
      this.close();
      const resumed = event.started ? (event.cut > 0 ? '…' : '') : '… ';
      this.out.write(`${path} ▸ ${resumed}`);
      this.open = path;
    }
    // A line break in the text continues under the same agent.
    this.out.write(event.text.replace(/\n/g, `\n${path} ▸ `));
  }

  private close(): void {
    if (this.open === undefined) return;
    this.open = undefined;
    this.out.write('\n');
  }
}
