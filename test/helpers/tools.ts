import { Context } from '@temporalio/activity';
import { z } from 'zod';
import { defineTool } from '../../activities';

/** A tool that runs until cancelled (or `ms` pass), recording what it saw in this test process. */
export function slowTool() {
  const started: string[] = [];
  const cancelled: string[] = [];
  const tool = defineTool({
    name: 'slow',
    description: 'Works for a long time, heartbeating, and notices cancellation.',
    input: z.object({ ms: z.number().int().min(0), label: z.string() }).strict(),
    run: async ({ ms, label }) => {
      const context = Context.current();
      started.push(label);
      const deadline = Date.now() + ms;
      try {
        while (Date.now() < deadline) {
          context.heartbeat();
          await Promise.race([context.sleep(100), context.cancelled]);
        }
      } catch (error) {
        cancelled.push(label);
        throw error;
      }
      return `${label} done`;
    },
  });
  return { tool, started, cancelled };
}
