import type { LogEntry, LogLevel } from '@temporalio/worker';

/** How a worker process writes its log: Temporal's text lines, or one JSON object per line. */
export type LogFormat = 'text' | 'json';

/**
 * One JSON object per line on stderr, as log collectors read them: `time` (ISO), `level`, `message`,
 * then the entry's metadata (task queue, workflow and activity ids, …). Errors become their name,
 * message and stack; bigints strings; a value met twice `[circular]`. Never throws.
 */
export function writeJsonLog(
  entry: Pick<LogEntry, 'level' | 'message' | 'meta'> & { timestampNanos?: bigint },
): void {
  const time =
    entry.timestampNanos === undefined ? new Date() : new Date(Number(entry.timestampNanos / 1_000_000n));
  let line: string;
  try {
    line = JSON.stringify(
      { time: time.toISOString(), level: entry.level, message: entry.message, ...entry.meta },
      safeValues(),
    );
  } catch (error) {
    line = JSON.stringify({
      time: time.toISOString(),
      level: entry.level,
      message: entry.message,
      logError: String(error),
    });
  }
  process.stderr.write(`${line}\n`);
}

/** A JSON replacer for log metadata: errors, bigints and repeated objects written as text. */
function safeValues(): (key: string, value: unknown) => unknown {
  const seen = new WeakSet<object>();
  return (_key, value) => {
    if (typeof value === 'bigint') return value.toString();
    if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
    if (value !== null && typeof value === 'object') {
      if (seen.has(value)) return '[circular]';
      seen.add(value);
    }
    return value;
  };
}

/** A worker's own line (ready, stopping, stopped) in its log format: `agents-kit: …` text, or a JSON entry. */
export function workerNote(
  format: LogFormat | undefined,
  write: (text: string) => void,
): (text: string) => void {
  return format === 'json'
    ? (text) => writeJsonLog({ level: 'INFO' satisfies LogLevel, message: text })
    : write;
}
