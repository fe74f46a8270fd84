/** Shared by the Firefox suites (test-only). */
import type { Browser, Page } from 'puppeteer-core';

/**
 * The page of `browser` whose location matches (WebDriver BiDi reports extension pages as about:blank
 * until asked), polled every 200 ms; throws "page not found" after `timeoutMs` (ms).
 */
export async function pageAt(browser: Browser, match: (href: string) => boolean, timeoutMs = 15_000): Promise<Page> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for (const p of await browser.pages()) {
      const href = await p.evaluate(() => location.href).catch(() => '');
      if (match(href)) return p;
    }
    if (Date.now() > until) throw new Error('page not found');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Approves the request shown in `browser`'s approval window: waits (at most 20 s) until its Approve button
 * is armed — a request on show, not the empty queue of a window still closing — clicks it, then waits (at
 * most 10 s) until the window closes or empties, so the next request gets its own turn.
 */
export async function approveWindow(browser: Browser): Promise<void> {
  const w = await pageAt(browser, (u) => u.startsWith('moz-extension://') && u.endsWith('/approval.html'));
  await w.bringToFront();
  await w.waitForFunction(
    () => {
      const b = document.querySelector('[data-testid="approve"]');
      return b instanceof HTMLButtonElement && !b.disabled;
    },
    { timeout: 20_000 },
  );
  await w.click('[data-testid="approve"]');
  await w
    .waitForFunction(() => !document.querySelector('[data-testid="approve"]'), { timeout: 10_000 })
    .catch(() => undefined);
}
