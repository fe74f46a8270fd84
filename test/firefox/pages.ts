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
