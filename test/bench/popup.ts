/**
 * Popup open: over 20 opens of the popup page (360 × 600) in headless
 * Chromium with the built extension and the sandbox on loopback, the time from navigation start to
 * (a) the ticket interactive — the size field focused — and (b) the book and margin loaded — the
 * ladder has levels that are not stale and the risk panel shows the available margin. "Loaded" means
 * data no older than 1 s. At open the popup shows the book the background holds at once; one
 * older than 1 s is marked stale (`.ladder.stale`) until a fresh one arrives, and is not counted as
 * loaded. p50 and p95; targets p50 ≤ 60 ms and ≤ 100 ms. Also the popup's JS at open (the boot script
 * and the chunks `popup.html` loads; the boot script was not counted before 2026-11-26), gzip, target
 * ≤ 80 KB, and the chunks it loads later. Prints figures; never fails on timing. Skipped without
 * Chromium or a build.
 *
 * Each round opens the popup two ways, in alternating order, in the same browser:
 * - **goto** (the figure printed before 2026-11-26, kept for comparison): Playwright's `newPage()`
 *   and `goto('chrome-extension://…/popup.html')` in a tab. The tab starts on `about:blank` in a
 *   renderer of its own, so the navigation swaps processes (the old renderer is torn down while the
 *   popup loads) and Playwright sets up its scripting contexts in the new document.
 * - **toolbar popup**: what the person does — the toolbar button's popup, opened with
 *   `chrome.action.openPopup()` from the worker (`./toolbar-popup.ts`), loaded straight into the
 *   extension's process. The same init script measures the same two moments.
 * Both times are from the popup document's navigation start; neither counts what comes before it.
 *
 * And the floor of each way, so that what the harness and the browser cost apart from the popup's own
 * code can be read off: an empty extension page with one module script that marks its start
 * (`bench-blank.html`, added to a copy of the build for the bench only), opened the same two ways. Its
 * `script` mark is the earliest moment any code of a page of this extension runs on this machine; the
 * popup's `script` mark is the same moment in `popup.html`.
 *
 * With `BENCH_POPUP_AGAINST=<another build's directory>` it then compares this build with that one,
 * opens interleaved (`./popup-ab.ts`).
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { EXTENSION_DIR, launchHarness, onboardDemo, type Harness } from '../e2e/harness';
import { connectBrowserCdp, openToolbarPopup, type BrowserCdp } from './toolbar-popup';

const OPENS = 20;
/**
 * How long (ms) each open stays open after both moments are measured, before it is closed: a person
 * looks at the popup, and the reads it asks right after its book and margin (instruments, fees,
 * tickers, statistics) must not still be in the background's hands when the next open starts.
 */
export const SETTLE_MS = Number(process.env.BENCH_POPUP_SETTLE_MS ?? 250);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const gz = (file: string) => gzipSync(readFileSync(file), { level: 9 }).length;

/**
 * The JS `popup.html` loads at open (its module script and modulepreloads), gzip bytes, and the popup-only chunks it
 * imports later.
 */
function popupJsGzip(dir = EXTENSION_DIR): { atOpen: number; files: string[]; later: number } {
  const html = readFileSync(join(dir, 'popup.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/?(chunks\/[^"]+\.js|popup-boot\.js)"/g)].flatMap((m) =>
    m[1] ? [m[1]] : [],
  );
  const atOpen = files.reduce((a, f) => a + gz(join(dir, f)), 0);
  const others = readdirSync(join(dir, 'chunks'))
    .map((n) => `chunks/${n}`)
    .filter((f) => f.endsWith('.js') && !files.includes(f) && !/^chunks\/(approval|sidepanel)-/.test(f));
  return { atOpen, files, later: others.reduce((a, f) => a + gz(join(dir, f)), 0) };
}

/**
 * In the page from its first script: when the size field got focus and when book and margin showed (ms since navigation
 * start).
 */
export const MARKS = `(() => {
  const marks = {};
  Object.defineProperty(window, '__popupMarks', { value: marks });
  const check = () => {
    const a = document.activeElement;
    if (marks.interactive === undefined && a && a.getAttribute('name') === 'qty') marks.interactive = performance.now();
    const avail = document.querySelector('[data-testid="risk-available"]');
    // A stale ladder (a cached book older than 1 s) is not "loaded".
    const ladder = document.querySelector('.ladder:not(.stale) .level');
    const ready = ladder && avail && !avail.textContent.includes('…');
    if (marks.loaded === undefined && ready) marks.loaded = performance.now();
    if (marks.interactive === undefined || marks.loaded === undefined) requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
  document.addEventListener('focusin', check, true);
})();`;

/**
 * Read in the page once it is done: the two moments (popup only), and where the time went — HTML received, DOM parsed,
 * the page's `countersign:*` marks (ms since navigation start).
 */
const READ = `(() => {
  const m = window.__popupMarks || {};
  const nav = performance.getEntriesByType('navigation')[0];
  const stages = nav ? [['html', nav.responseEnd], ['domInteractive', nav.domInteractive]] : [];
  const out = { interactive: m.interactive, loaded: m.loaded, stages };
  for (const e of performance.getEntriesByType('mark')) {
    out.stages.push([e.name.replace(/^countersign:/, ''), e.startTime]);
  }
  return out;
})()`;

/** True once the page has what `READ` needs: both moments in the popup, the start mark in the empty page. */
const DONE = (popup: boolean) =>
  popup
    ? `(() => { const m = window.__popupMarks; return !!m && ` +
      `m.interactive !== undefined && m.loaded !== undefined; })()`
    : `performance.getEntriesByName('countersign:script').length > 0`;

/** What one open measured. */
export type Open = { interactive?: number; loaded?: number; stages: [string, number][] };

/** The empty extension page of the floor: one module script that marks when it runs, as `popup.html`'s does. */
const BLANK_HTML =
  '<!doctype html><html lang="en"><head><meta charset="UTF-8"><title>Countersign ' +
  'bench floor</title><script type="module" ' +
  'src="/bench-blank.js"></script></head><body class="popup"><div id="app"></div></body></html>';
const BLANK_JS = "performance.mark('countersign:script');\n";

/** A copy of the build with the floor's page added (the build itself stays as shipped). */
function buildWithFloor(): string {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-ext-'));
  cpSync(EXTENSION_DIR, dir, { recursive: true });
  writeFileSync(join(dir, 'bench-blank.html'), BLANK_HTML);
  writeFileSync(join(dir, 'bench-blank.js'), BLANK_JS);
  return dir;
}

/** Polls `ask(DONE)` (10 s at most), then reads the figures with `ask(READ)`. */
export async function collect(ask: (expression: string) => Promise<unknown>, popup: boolean): Promise<Open> {
  for (let i = 0; i < 500 && (await ask(DONE(popup))) !== true; i++) await new Promise((r) => setTimeout(r, 20));
  const r = await ask(READ);
  if (typeof r !== 'object' || r === null) throw new Error('the page could not be read');
  const num = (k: string) => (typeof Reflect.get(r, k) === 'number' ? Number(Reflect.get(r, k)) : undefined);
  const stages: unknown = Reflect.get(r, 'stages');
  const interactive = num('interactive');
  const loaded = num('loaded');
  if (popup && (interactive === undefined || loaded === undefined))
    throw new Error('the popup did not become interactive and loaded within 10 s');
  return {
    ...(interactive === undefined ? {} : { interactive }),
    ...(loaded === undefined ? {} : { loaded }),
    stages: Array.isArray(stages)
      ? stages.filter(
          (s): s is [string, number] => Array.isArray(s) && typeof s[0] === 'string' && typeof s[1] === 'number',
        )
      : [],
  };
}

/** Opens `path` (`/popup.html` or the floor's page) in a new tab with Playwright, as the bench always did. */
export async function openByGoto(h: Harness, path: string): Promise<Open> {
  const page = await h.ctx.newPage();
  await page.setViewportSize({ width: 360, height: 600 });
  await page.addInitScript(MARKS);
  await page.goto(`chrome-extension://${h.extensionId}${path}`);
  const got = await collect((e) => page.evaluate(e), path === '/popup.html');
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  await page.close();
  return got;
}

/** Opens `path` as the toolbar button's popup (the action's popup set to it for the floor, then back). */
export async function openAsToolbarPopup(h: Harness, cdp: BrowserCdp, path: string): Promise<Open> {
  const setPopup = (p: string) =>
    h.worker.evaluate((popup) => Reflect.get(globalThis, 'chrome').action.setPopup({ popup }), p);
  if (path !== '/popup.html') await setPopup(path.slice(1));
  try {
    const popup = await openToolbarPopup(cdp, h.worker, MARKS, path);
    const got = await collect(popup.evaluate, path === '/popup.html');
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    await popup.close();
    return got;
  } finally {
    if (path !== '/popup.html') await setPopup('popup.html');
  }
}

/** The figures of one way of opening, by name. */
type Series = {
  interactive: number[];
  loaded: number[];
  stages: Record<string, number[]>;
  floor: Record<string, number[]>;
};

const newSeries = (): Series => ({ interactive: [], loaded: [], stages: {}, floor: {} });

/** Adds one open of the popup (or, with `floor`, of the empty page) to `s`. */
function add(s: Series, o: Open, floor: boolean): void {
  if (!floor && o.interactive !== undefined && o.loaded !== undefined) {
    s.interactive.push(o.interactive);
    s.loaded.push(o.loaded);
  }
  for (const [name, at] of o.stages) ((floor ? s.floor : s.stages)[name] ??= []).push(at);
}

/** Prints one way's figures. */
function report(title: string, s: Series): void {
  const f = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms, p95 ${pct(xs, 95).toFixed(1)} ms`;
  const p50s = (r: Record<string, number[]>) =>
    Object.entries(r)
      .map(([k, v]) => `${k} ${pct(v, 50).toFixed(1)}`)
      .join(', ');
  console.log(`${title}:`);
  console.log(
    `  popup open → ticket interactive (size field focused): ` +
      `${f(s.interactive)} over ${s.interactive.length} (target p50 ≤ 60 ms)`,
  );
  console.log(
    `  popup open → book and margin loaded (book ≤ 1 s old, not stale): ` +
      `${f(s.loaded)} over ${s.loaded.length} (target p50 ≤ 100 ms)`,
  );
  // Where the time goes: HTML, DOM parsed, boot script, script evaluated, start hint read, unlocked screens rendered,
  // first watch answered, status answered (p50, ms since navigation start).
  console.log(
    `  stages (p50, ms since navigation start): ${p50s(s.stages)}, interactive ` +
      `${pct(s.interactive, 50).toFixed(1)}, loaded ${pct(s.loaded, 50).toFixed(1)}`,
  );
  console.log(`  floor, an empty extension page opened the same way (p50): ${p50s(s.floor)}`);
}

/** Runs the popup-open bench and prints its figures. */
export async function benchPopup(): Promise<void> {
  if (
    !existsSync(join(EXTENSION_DIR, 'manifest.json')) ||
    !['/usr/lib/chromium/chromium', '/usr/bin/chromium'].some((p) => existsSync(p))
  ) {
    console.log('\nPopup bench: skipped (needs Chromium and npm run build).');
    return;
  }
  const size = popupJsGzip();
  console.log(
    `\nPopup JS at open (${size.files.join(', ')}): ${(size.atOpen / 1024).toFixed(1)} KiB gzip ` +
      `(target ≤ 80 KB); loaded later (charts, other screens): ${(size.later / 1024).toFixed(1)} KiB gzip`,
  );
  const dir = buildWithFloor();
  const h = await launchHarness({}, { extensionDir: dir, args: ['--remote-debugging-port=0'] });
  const cdp = await connectBrowserCdp(h.userDataDir);
  try {
    const { popup } = await onboardDemo(h, 'benchmark password');
    await popup.close();
    const goto = newSeries();
    const toolbar = newSeries();
    const ways: ((keep: boolean) => Promise<void>)[] = [
      async (keep) => void (await openByGoto(h, '/popup.html').then((o) => keep && add(goto, o, false))),
      async (keep) =>
        void (await openAsToolbarPopup(h, cdp, '/popup.html').then((o) => keep && add(toolbar, o, false))),
      async (keep) => void (await openByGoto(h, '/bench-blank.html').then((o) => keep && add(goto, o, true))),
      async (keep) =>
        void (await openAsToolbarPopup(h, cdp, '/bench-blank.html').then((o) => keep && add(toolbar, o, true))),
    ];
    for (let i = 0; i < OPENS + 2; i++) {
      // Alternating order, so that neither way always follows the other; the first two rounds warm the worker's reads
      // up.
      for (const way of i % 2 ? [...ways].reverse() : ways) await way(i >= 2);
    }
    report(
      'Opened with Playwright newPage() + goto (the figure printed ' +
        'before; an about:blank tab swapped into the extension process)',
      goto,
    );
    report('Opened as the toolbar popup (chrome.action.openPopup(), as the toolbar button does)', toolbar);
  } finally {
    cdp.close();
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const other = process.env.BENCH_POPUP_AGAINST;
  if (other) await (await import('./popup-ab')).benchPopupAgainst(other);
}
