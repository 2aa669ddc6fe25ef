// What a thread's workflow reports to its root run (`thread-event`), as a raw client would forge it.

/** A thread's end, reported as `from`. */
export const threadEndReport = (from: unknown, threadId: string, at = new Date().toISOString()) => ({
  from,
  event: { type: 'thread-end', threadId, status: 'completed', at },
});

/** A turn's end with `result`, reported as `from`. */
export const turnEndReport = (
  from: unknown,
  threadId: string,
  turn: number,
  result: string,
  at = new Date().toISOString(),
) => ({
  from,
  event: {
    type: 'turn-end',
    threadId,
    outcome: { turn, status: 'completed', result, tokens: 0, endedAt: at },
    nextStatus: 'idle',
  },
});
