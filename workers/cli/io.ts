/** Where a command writes: results on stdout, progress and notices on stderr. */
export interface CliOutput {
  /** One line of the command's result (stdout). */
  line(text: string): void;
  /** The command's result as one JSON document (stdout), for `--json`. */
  json(value: unknown): void;
  /** Progress and notices (stderr), so stdout stays parseable. */
  note(text: string): void;
  /** Progress text without a line end (stderr): streamed model output. Absent: nothing streams. */
  write?(text: string): void;
}

/** The process's own stdout/stderr. */
export const processOutput: CliOutput = {
  line: (text) => process.stdout.write(`${text}\n`),
  json: (value) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
  note: (text) => process.stderr.write(`agents-kit: ${text}\n`),
  write: (text) => process.stderr.write(text),
};

/**
 * Prints `waiting for <what> (12 s)…` on stderr every `everyMs` until stopped, so a long wait is never
 * silent. Returns the function that stops it.
 */
export function progressTicker(output: CliOutput, what: () => string, everyMs = 5_000): () => void {
  const started = Date.now();
  const timer = setInterval(
    () => output.note(`waiting for ${what()} (${Math.round((Date.now() - started) / 1000)} s)…`),
    everyMs,
  );
  timer.unref();
  return () => clearInterval(timer);
}
