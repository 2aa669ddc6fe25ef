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

/** Characters that take 6 bytes each as JSON (`\u0001`): the most bytes a text of a given length takes. */
export const worst = (length: number) => '\u0001'.repeat(length);

/** A tool that answers at length: a turn's result is its output, of any size the model asks for. */
export const longTool = () =>
  defineTool({
    name: 'long',
    description: 'Answers with `length` worst-case characters.',
    input: z.object({ length: z.number().int().min(0) }).strict(),
    run: ({ length }) => Promise.resolve(worst(length)),
  });
