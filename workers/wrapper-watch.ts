/**
 * `bin/agents-kit.mjs` runs `worker` and `dev` in a child process (for the heap cap), with an IPC channel
 * to it and `AGENTS_KIT_WRAPPED=1`. A kill of the bin it cannot pass on (SIGKILL, a supervisor that
 * signals the main process only) must not leave this process polling Temporal with nobody left to stop
 * it: the channel closes when the bin is gone, and this process then stops as abruptly as the bin did
 * (its running calls time out and are retried elsewhere, as after any kill). The channel is unref'd, so
 * it never keeps this process alive by itself.
 */
export function followWrapper(): void {
  if (process.env.AGENTS_KIT_WRAPPED !== '1' || !process.channel) return;
  delete process.env.AGENTS_KIT_WRAPPED;
  process.channel.unref();
  process.on('disconnect', () => {
    process.stderr.write(
      'agents-kit: the agents-kit process that ran this one was killed: stopping at once\n',
    );
    process.kill(process.pid, 'SIGKILL');
  });
}
