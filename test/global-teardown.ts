import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const server = globalThis.agentsKitTestServer;
  await server?.stop();
  const runDir = process.env.AGENTS_KIT_TEST_DIR;
  if (runDir && !process.env.AGENTS_KIT_KEEP_TEST_DATA) rmSync(runDir, { recursive: true, force: true });
}
