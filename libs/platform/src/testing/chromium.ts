// Debian's Chromium for the browser tests, through playwright-core (an optional peer of this library:
// import `@byrd/platform/testing/chromium` only from suites that launch a browser).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium: the browser tests never download one of their own. CHROMIUM_PATH points them at
 * another installed Chromium-based browser (GitHub's runners have /usr/bin/google-chrome).
 */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Installs Debian's chromium when it is missing and we may (root); otherwise says what to run. */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `The browser tests need Chromium at ${CHROMIUM}. Install it with: sudo apt-get install -y chromium`,
    );
  }
  const apt = (...args: string[]) =>
    execFileSync('apt-get', args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  try {
    apt('install', '-y', '--no-install-recommends', 'chromium');
  } catch {
    // A fresh machine may have no package lists yet.
    apt('update');
    apt('install', '-y', '--no-install-recommends', 'chromium');
  }
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium, but ${CHROMIUM} is still missing`);
}

/** One headless Chromium (installed first when missing); a suite shares it and opens a context per test. */
export async function launchChromium(): Promise<Browser> {
  ensureChromium();
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}
