/**
 * Cold start: what a person meets right after the browser stopped the extension's idle
 * service worker (Chromium stops it after ≈ 30 s without events). Headless Chromium with the bench build
 * (`wxt build --mode bench`, as `grant.ts`; its client weight budgets lifted) and the sandbox on
 * loopback; before every measured cold open or request both extensions' workers are stopped over the
 * DevTools protocol, as the browser does when idle (`ServiceWorker.stopAllWorkers`, then wait until
 * every extension worker reports `stopped`). Measured, each round in alternating order:
 * - **popup**: `popup.html` opened with Playwright `newPage()` + `goto` (as `popup.ts`'s goto way; a
 *   toolbar popup needs the worker to call `action.openPopup()`, which would wake it first): navigation
 *   start → ticket interactive and → book and margin loaded (`popup.ts`'s marks); and the same popup **warm**
 *   (the worker woken by an unmeasured open just before), the yardstick of the cold one;
 * - **page → window**: the connected demo page's `perps_sendCommand` (no grant) → the approval window
 *   shows the request (its Approve button is in the DOM; wall clock in both pages), then rejected;
 * - **page → ack under a grant**: after a standing grant is saved, the same page's order → the
 *   gateway's acknowledgement back in the page.
 * Beside each, in the same browser and run, the **floor**: a one-file MV3 extension generated into a
 * temp dir whose worker only answers a message — its extension page that sends one message and marks
 * the answer (popup equivalent, same `goto`), and its content script on the demo page relaying the
 * page's `postMessage` to the worker and the answer back (page request equivalent).
 * Targets: popup book and margin p50 ≤ 150 ms cold, and within 60 ms of the same popup warm; page → window p50
 * and page → ack p50 within 100 ms of the floor's page round trip. Prints figures and each target met or not;
 * never fails on timing. Skipped without Chromium.
 */
import { execSync } from 'node:child_process';
import { cpus, loadavg, tmpdir } from 'node:os';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import type { Harness } from '../e2e/harness';
import { connectBrowserCdp, type BrowserCdp } from './toolbar-popup';
import { collect, MARKS } from './popup';

/** Measured rounds (each cold); one more is run first and dropped (the disk cache's first reads). */
const ROUNDS = Number(process.env.BENCH_COLD_ROUNDS ?? 12);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const f = (x: number) => x.toFixed(1);

/**
 * The floor extension: a worker that answers every message, an extension page that asks once, a content script that
 * relays.
 */
const FLOOR = {
  'manifest.json': JSON.stringify({
    manifest_version: 3,
    name: 'Countersign bench floor',
    version: '1.0',
    background: { service_worker: 'floor-worker.js' },
    content_scripts: [{ matches: ['http://127.0.0.1/*'], js: ['floor-content.js'], run_at: 'document_start' }],
  }),
  'floor-worker.js': 'chrome.runtime.onMessage.addListener((m, s, reply) => { reply({ ok: true }); });\n',
  'floor.html':
    '<!doctype html><html lang="en"><head><meta charset="UTF-8"><title>floor</title><script ' +
    'type="module" src="/floor.js"></script></head><body></body></html>',
  'floor.js':
    "performance.mark('countersign:script');\nchrome.runtime.sendMessage({ " +
    "type: 'ping' }).then(() => performance.mark('countersign:answer'));\n",
  'floor-content.js':
    "addEventListener('message', (e) => { if (e.source !== window || !e.data || " +
    'e.data.floorPing === undefined) return; const id = e.data.floorPing; chrome.runtime.sendMessage({ ' +
    "type: 'ping' }).then(() => postMessage({ floorPong: id }, '*')); });\n",
};

/** In every page of the context: when an approval window first shows a request (its Approve button), wall clock ms. */
const SHOWN = `(() => {
  if (!location.pathname.endsWith('/approval.html')) return;
  const check = () => {
    if (window.__shownAt === undefined && document.querySelector('[data-testid="approve"]')) {
      window.__shownAt = Date.now();
    }
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true });
})();`;

declare const chrome: { runtime: { sendMessage: (m: unknown) => Promise<{ ok: boolean }> } };
type Provider = { request: (a: unknown) => Promise<unknown> };

/** The bench's order: a post-only ETH-PERP buy below the book (rests; never fills). */
const op = (i: number) => ({
  type: 'createOrders',
  args: [{ iid: 2, buy: true, qty: '0.01', p: (3099 - (i % 100) * 0.05).toFixed(2), tif: 'gtc', po: true }],
});

/**
 * Stops every extension worker of the browser over `cdp` (through a page's session) and waits until each reports
 * stopped.
 */
async function stopWorkers(cdp: BrowserCdp, session: string): Promise<void> {
  const running = new Map<string, string>();
  const off = cdp.on((m) => {
    if (m.method !== 'ServiceWorker.workerVersionUpdated' || m.sessionId !== session) return;
    for (const v of (m.params?.versions ?? []) as { versionId: string; scriptURL: string; runningStatus: string }[]) {
      if (v.scriptURL.startsWith('chrome-extension://')) running.set(v.versionId, v.runningStatus);
    }
  });
  try {
    await cdp.send('ServiceWorker.stopAllWorkers', {}, session);
    for (let i = 0; i < 300; i++) {
      if ([...running.values()].every((s) => s === 'stopped')) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await new Promise((r) => setTimeout(r, 100)); // the browser settles (the stopped worker's process work)
  } finally {
    off();
  }
}

/**
 * Opens `url` in a new tab with the popup bench's marks; resolves the opened page's figures (`popup`: the popup's two
 * moments, else the floor's answer mark).
 */
async function openCold(
  h: Harness,
  url: string,
  popup: boolean,
): Promise<{ loaded: number; interactive?: number; stages: [string, number][]; origin: number }> {
  const page = await h.ctx.newPage();
  await page.setViewportSize({ width: 360, height: 600 });
  await page.addInitScript(MARKS);
  await page.goto(url);
  try {
    if (popup) {
      const o = await collect((e) => page.evaluate(e), true);
      return {
        loaded: o.loaded ?? NaN,
        ...(o.interactive === undefined ? {} : { interactive: o.interactive }),
        stages: o.stages,
        origin: await page.evaluate(() => performance.timeOrigin),
      };
    }
    await page.waitForFunction(() => performance.getEntriesByName('countersign:answer').length > 0, undefined, {
      timeout: 10_000,
    });
    return {
      loaded: await page.evaluate(() => performance.getEntriesByName('countersign:answer')[0]!.startTime),
      stages: [],
      origin: await page.evaluate(() => performance.timeOrigin),
    };
  } finally {
    await page.close();
  }
}

/**
 * The start marks of this extension's running worker (`countersign:bg.*`, `lib/background/start-marks.ts`)
 * and its start, as ms since `origin` (Unix ms: a page's `performance.timeOrigin`, or a wall-clock moment); empty when
 * the worker keeps none.
 */
async function workerMarks(h: Harness, origin: number): Promise<[string, number][]> {
  const w = h.ctx.serviceWorkers().find((x) => new URL(x.url()).host === h.extensionId);
  if (!w) return [];
  const got = await w
    .evaluate(() => ({
      origin: performance.timeOrigin,
      marks: performance.getEntriesByType('mark').map((e) => [e.name, e.startTime] as [string, number]),
    }))
    .catch(() => undefined);
  if (!got) return [];
  const shift = got.origin - origin;
  return [
    ['bg.start', shift] as [string, number],
    ...got.marks
      .filter(([k]) => k.startsWith('countersign:bg.'))
      .map(([k, t]): [string, number] => [k.replace(/^countersign:/, ''), shift + t]),
  ];
}

/**
 * The floor's page request: the page posts a message, the floor's content script relays it to its worker and posts the
 * answer back (ms).
 */
function floorRequest(demo: Page): Promise<number> {
  // A string, not a function: the bench's transpiler would wrap a named inner function in a helper the page lacks.
  return demo.evaluate(`new Promise((resolve) => {
    const id = Math.random();
    const t0 = performance.now();
    const on = (e) => {
      if (e.source !== window || !e.data || e.data.floorPong !== id) return;
      removeEventListener('message', on);
      resolve(performance.now() - t0);
    };
    addEventListener('message', on);
    postMessage({ floorPing: id }, '*');
  })`);
}

/**
 * The demo page's order with no grant: wall clock ms from the request to the approval window showing it; the window's
 * request is then rejected.
 */
async function pageToWindow(h: Harness, demo: Page, i: number, stages?: Record<string, number[]>): Promise<number> {
  const opened = h.ctx.waitForEvent('page', { predicate: (p) => p.url().endsWith('/approval.html'), timeout: 15_000 });
  const t0 = await demo.evaluate((o) => {
    const at = Date.now();
    Reflect.set(
      window,
      '__pending',
      (window as unknown as { countersign: Provider }).countersign
        .request({ method: 'perps_sendCommand', params: { op: o } })
        .catch(() => undefined),
    );
    return at;
  }, op(i));
  const w = await opened;
  await w.waitForFunction(() => Reflect.get(window, '__shownAt') !== undefined, undefined, { timeout: 15_000 });
  const shown = Number(await w.evaluate(() => Reflect.get(window, '__shownAt')));
  if (stages) {
    const at = [
      ['window.navigation', (await w.evaluate(() => performance.timeOrigin)) - t0] as [string, number],
      ...(await workerMarks(h, t0)),
    ];
    for (const [k, v] of at) (stages[k] ??= []).push(v);
  }
  await w.getByRole('button', { name: 'Reject' }).click();
  await demo.evaluate(() => Reflect.get(window, '__pending'));
  await w.waitForEvent('close', { timeout: 5_000 }).catch(() => undefined);
  if (!w.isClosed()) await w.close();
  return shown - t0;
}

/** The demo page's order under the standing grant: ms from the request to the acknowledgement in the page. */
function pageToAck(demo: Page, i: number): Promise<number> {
  return demo.evaluate(async (o) => {
    const t0 = performance.now();
    await (window as unknown as { countersign: Provider }).countersign.request({
      method: 'perps_sendCommand',
      params: { op: o },
    });
    return performance.now() - t0;
  }, op(i));
}

/** Runs the cold-start bench and prints its figures. */
export async function benchCold(): Promise<void> {
  if (!['/usr/lib/chromium/chromium', '/usr/bin/chromium'].some((p) => existsSync(p))) {
    console.log('\nCold-start bench: skipped (needs Chromium).');
    return;
  }
  // BENCH_GRANT_BUILD: an existing bench build's directory under .output (for before/after runs); otherwise built now.
  if (!process.env.BENCH_GRANT_BUILD) execSync('npx wxt build --mode bench', { stdio: 'ignore' });
  const built = resolve(import.meta.dirname, '../../.output', process.env.BENCH_GRANT_BUILD ?? 'chrome-mv3-bench');
  const ext = mkdtempSync(join(tmpdir(), 'countersign-bench-cold-'));
  const floorDir = mkdtempSync(join(tmpdir(), 'countersign-bench-floor-'));
  cpSync(built, ext, { recursive: true });
  for (const [name, text] of Object.entries(FLOOR)) writeFileSync(join(floorDir, name), text);
  const { launchHarness, connectDemo, onboardDemo } = await import('../e2e/harness');
  const h = await launchHarness(
    {
      config: {
        perpsRequestBudget: { limit: 1_000_000, windowMs: 60_000 },
        perpsActionBudget: { limit: 1_000_000, windowMs: 60_000 },
      },
    },
    { extensionDir: ext, alsoLoad: [floorDir], args: ['--remote-debugging-port=0'] },
  );
  const cdp = await connectBrowserCdp(h.userDataDir);
  try {
    const floorWorker =
      h.ctx.serviceWorkers().find((w) => w.url().endsWith('/floor-worker.js')) ??
      (await h.ctx.waitForEvent('serviceworker', { predicate: (w) => w.url().endsWith('/floor-worker.js') }));
    const floorId = new URL(floorWorker.url()).host;
    await h.ctx.addInitScript(SHOWN);
    const { popup } = await onboardDemo(h, 'benchmark password');
    await popup.close();
    const demo = await connectDemo(h);
    // The DevTools session the workers are stopped through (the demo page's target).
    const targets = (await cdp.send('Target.getTargets')).targetInfos as { targetId: string; url: string }[];
    const demoTarget = targets.find((t) => t.url.startsWith(`${h.sandbox.url}/demo`));
    if (!demoTarget) throw new Error('the demo page has no DevTools target');
    const session = String(
      (await cdp.send('Target.attachToTarget', { targetId: demoTarget.targetId, flatten: true })).sessionId,
    );
    await cdp.send('ServiceWorker.enable', {}, session);
    const stop = () => stopWorkers(cdp, session);
    // Warm once (the first open reads the build from disk).
    const warm = await openCold(h, `chrome-extension://${h.extensionId}/popup.html`, true);
    const figures = {
      popupLoaded: [] as number[],
      warmLoaded: [] as number[],
      popupInteractive: [] as number[],
      floorPopup: [] as number[],
      window: [] as number[],
      ack: [] as number[],
      floorPage: [] as number[],
    };
    const stages: Record<string, number[]> = {};
    const workerStages: Record<string, number[]> = {};
    const windowStages: Record<string, number[]> = {};
    let n = 0;
    const ways: ((keep: boolean) => Promise<void>)[] = [
      async (keep) => {
        await stop();
        const o = await openCold(h, `chrome-extension://${h.extensionId}/popup.html`, true);
        if (!keep) return;
        figures.popupLoaded.push(o.loaded);
        if (o.interactive !== undefined) figures.popupInteractive.push(o.interactive);
        for (const [k, at] of o.stages) (stages[k] ??= []).push(at);
        for (const [k, at] of await workerMarks(h, o.origin)) (workerStages[k] ??= []).push(at);
      },
      async (keep) => {
        // The same popup with the worker running, what the cold figure is held to: one unmeasured open first wakes the
        // worker (a step before this one may have stopped it) and lets it settle.
        await openCold(h, `chrome-extension://${h.extensionId}/popup.html`, true);
        const o = await openCold(h, `chrome-extension://${h.extensionId}/popup.html`, true);
        if (keep) figures.warmLoaded.push(o.loaded);
      },
      async (keep) => {
        await stop();
        const o = await openCold(h, `chrome-extension://${floorId}/floor.html`, false);
        if (keep) figures.floorPopup.push(o.loaded);
      },
      async (keep) => {
        await stop();
        const ms = await pageToWindow(h, demo, n++, keep ? windowStages : undefined);
        if (keep) figures.window.push(ms);
      },
      async (keep) => {
        await stop();
        const ms = await floorRequest(demo);
        if (keep) figures.floorPage.push(ms);
      },
    ];
    for (let i = 0; i <= ROUNDS; i++) for (const way of i % 2 ? [...ways].reverse() : ways) await way(i > 0);

    // Under a standing grant (saved from the window of one order, with caps no bench run reaches).
    const opened = h.ctx.waitForEvent('page', { predicate: (p) => p.url().endsWith('/approval.html') });
    const first = demo.evaluate(
      (o) =>
        (window as unknown as { countersign: Provider }).countersign.request({
          method: 'perps_sendCommand',
          params: { op: o },
        }),
      op(n++),
    );
    const win = await opened;
    await win.bringToFront();
    await win.getByRole('button', { name: 'Allow this site within limits…' }).click();
    await win.locator('input[name="grant-rate"]').fill('1000');
    await win.locator('input[name="grant-daily"]').fill('100000');
    await win.getByRole('button', { name: 'Save permission' }).click();
    await win.getByText(/Saved for/).waitFor();
    await win.waitForFunction(
      () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
    );
    await win.getByTestId('approve').click();
    await first;
    for (let i = 0; i < 3; i++) await pageToAck(demo, n++); // warm: the first orders of a grant
    const granted: ((keep: boolean) => Promise<void>)[] = [
      async (keep) => {
        await stop();
        const ms = await pageToAck(demo, n++);
        if (keep) figures.ack.push(ms);
      },
      async (keep) => {
        await stop();
        const ms = await floorRequest(demo);
        if (keep) figures.floorPage.push(ms);
      },
    ];
    for (let i = 0; i <= ROUNDS; i++) for (const way of i % 2 ? [...granted].reverse() : granted) await way(i > 0);
    // Warm, for comparison: the same order with the worker running.
    const warmAck: number[] = [];
    for (let i = 0; i < ROUNDS; i++) warmAck.push(await pageToAck(demo, n++));

    const line = (xs: number[]) => `p50 ${f(pct(xs, 50))} ms, p95 ${f(pct(xs, 95))} ms over ${xs.length}`;
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
    const floor = pct(figures.floorPage, 50);
    console.log(
      `\nCold start (headless Chromium, bench build; both extensions' workers ` +
        `stopped over DevTools, ServiceWorker.stopAllWorkers, before each ` +
        `measurement; ${ROUNDS} rounds, alternating order, one dropped round first):`,
    );
    console.log(
      `  machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    console.log(`  popup (newPage + goto) → ticket interactive: ${line(figures.popupInteractive)}`);
    const coldOverWarm = pct(figures.popupLoaded, 50) - pct(figures.warmLoaded, 50);
    console.log(
      `  popup (newPage + goto) → book and margin loaded: ${line(figures.popupLoaded)} (target p50 ` +
        `≤ 150 ms: ${met(pct(figures.popupLoaded, 50) <= 150)}; warm once before: ${f(warm.loaded)} ms)`,
    );
    console.log(
      `  the same popup warm (worker running), interleaved: ${line(figures.warmLoaded)}; cold − warm p50 ` +
        `${f(coldOverWarm)} ms (target ≤ 60 ms: ${met(coldOverWarm <= 60)})`,
    );
    console.log(
      `    stages (p50, ms since navigation start): ${Object.entries(stages)
        .map(([k, v]) => `${k} ${f(pct(v, 50))}`)
        .join(', ')}`,
    );
    console.log(
      `    the worker's start marks (p50, ms since the popup's navigation start): ${
        Object.entries(workerStages)
          .map(([k, v]) => `${k} ${f(pct(v, 50))}`)
          .join(', ') || 'none'
      }`,
    );
    console.log(`  floor, the empty worker's extension page → its message answered: ${line(figures.floorPopup)}`);
    console.log(
      `  page → approval window shown (wall clock): ${line(figures.window)} (target p50 ≤ ` +
        `floor + 100 ms = ${f(floor + 100)}: ${met(pct(figures.window, 50) <= floor + 100)})`,
    );
    console.log(
      `    stages (p50, ms since the page's request; the worker's start marks and the window's navigation start): ` +
        `${Object.entries(windowStages)
          .map(([k, v]) => `${k} ${f(pct(v, 50))}`)
          .join(', ')}`,
    );
    console.log(
      `  page → ack under a grant: ${line(figures.ack)} (target p50 ≤ floor + 100 ms = ` +
        `${f(floor + 100)}: ${met(pct(figures.ack, 50) <= floor + 100)}); warm: ${line(warmAck)}`,
    );
    console.log(`  floor, page → content script → empty worker → page: ${line(figures.floorPage)}`);
  } finally {
    cdp.close();
    await h.close();
    rmSync(ext, { recursive: true, force: true });
    rmSync(floorDir, { recursive: true, force: true });
  }
}
