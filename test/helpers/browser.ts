import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's chromium, which the bootstrap installs (no browser download happens here). */
export const chromiumPath = '/usr/bin/chromium';

/** Headless chromium with a profile in `userDataDir`, as ENVIRONMENT.md says it runs on these machines. */
export function launchChromium(
  userDataDir: string,
  viewport: { width: number; height: number },
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
    viewport,
  });
}
