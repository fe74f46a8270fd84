/**
 * Real-browser harness (reused by the bridge tests): Debian's Chromium through
 * playwright-core with a fresh persistent profile and the built extension loaded, plus an in-process
 * sandbox gateway on an ephemeral loopback port. Flags from the machine notes.
 */
import { chromium, type BrowserContext, type Page, type Worker } from 'playwright-core';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../lib/sandbox/server';

export const EXTENSION_DIR = resolve(
  import.meta.dirname,
  '../../.output',
  process.env.COUNTERSIGN_BUILD ?? 'chrome-mv3',
);
export const ARTIFACTS = resolve(import.meta.dirname, '../../test-results');
const CHROMIUM = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));

export type Harness = {
  ctx: BrowserContext;
  sandbox: RunningSandbox;
  extensionId: string;
  worker: Worker;
  userDataDir: string;
  /** Opens the popup as a page (380 px wide like the toolbar popup). */
  openPopup: () => Promise<Page>;
  /** Saves a screenshot under test-results/screens/NAME.png. */
  screenshot: (page: Page, name: string) => Promise<void>;
  close: () => Promise<void>;
};

/**
 * The flags every browser test gives Chromium besides the extension's (headless, no sandbox as root, no background
 * traffic).
 */
export const CHROMIUM_FLAGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * How to launch: `extensionDir`, another built extension (default `EXTENSION_DIR`); `args`, extra Chromium
 * flags; `sandboxPort`, the sandbox's port (default 0: ephemeral); `pointAtSandbox` (default true): set
 * the extension's service URLs to this sandbox before the test starts (false: leave the settings as the
 * build has them, e.g. for a release build's first-run venue choice); `alsoLoad`, directories of other
 * unpacked extensions loaded beside it (the bench's floor extension; `worker` stays this extension's).
 */
export type LaunchOptions = {
  extensionDir?: string;
  args?: string[];
  sandboxPort?: number;
  pointAtSandbox?: boolean;
  alsoLoad?: string[];
};

/** Launches Chromium with the built extension and a sandbox (`sandboxOptions`, e.g. a clock the test can move). */
export async function launchHarness(sandboxOptions: SandboxOptions = {}, launch: LaunchOptions = {}): Promise<Harness> {
  const extensionDir = launch.extensionDir ?? EXTENSION_DIR;
  if (!CHROMIUM) throw new Error('Chromium is not installed (apt-get install -y chromium).');
  if (!existsSync(join(extensionDir, 'manifest.json'))) throw new Error('Build the extension first (npm run build).');
  const sandbox = await startSandbox(launch.sandboxPort ?? 0, sandboxOptions);
  const userDataDir = mkdtempSync(join(tmpdir(), 'countersign-e2e-'));
  const loaded = [extensionDir, ...(launch.alsoLoad ?? [])].join(',');
  const ctx = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 380, height: 600 },
    args: [
      `--disable-extensions-except=${loaded}`,
      `--load-extension=${loaded}`,
      ...CHROMIUM_FLAGS,
      ...(launch.args ?? []),
    ],
  });
  // This extension's worker (by its script's path when other extensions are loaded beside it).
  const script: unknown = launch.alsoLoad?.length
    ? Reflect.get(
        Object(JSON.parse(readFileSync(join(extensionDir, 'manifest.json'), 'utf8')).background),
        'service_worker',
      )
    : undefined;
  const ours = (w: Worker) => typeof script !== 'string' || new URL(w.url()).pathname === `/${script}`;
  const worker =
    ctx.serviceWorkers().find(ours) ?? (await ctx.waitForEvent('serviceworker', { predicate: ours, timeout: 15_000 }));
  const extensionId = new URL(worker.url()).host;
  const shots = join(ARTIFACTS, 'screens');
  mkdirSync(shots, { recursive: true });
  const h: Harness = {
    ctx,
    sandbox,
    extensionId,
    worker,
    userDataDir,
    openPopup: async () => {
      const page = await ctx.newPage();
      await page.goto(`chrome-extension://${extensionId}/popup.html`);
      return page;
    },
    screenshot: async (page, name) => {
      await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
    },
    close: async () => {
      await ctx.close().catch(() => undefined);
      await sandbox.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
  if (launch.pointAtSandbox === false) return h;
  // Point the extension at this sandbox (the default is 127.0.0.1:8787).
  const page = await h.openPopup();
  const base = sandbox.url;
  await page.evaluate(async (b) => {
    const reply = await chrome.runtime.sendMessage({
      type: 'settings.set',
      payload: { perpsUrl: `${b}/perps`, clobUrl: `${b}/clob`, gammaUrl: `${b}/gamma`, dataUrl: `${b}/data` },
    });
    if (!reply?.ok) throw new Error(JSON.stringify(reply));
  }, base);
  await page.close();
  return h;
}

declare const chrome: { runtime: { sendMessage: (m: unknown) => Promise<{ ok: boolean }> } };

/** Sends one message to the background from an extension page (as the popup does). */
export function messenger(page: Page) {
  return (type: string, payload: unknown = {}) =>
    page.evaluate(
      ([t, p]) =>
        (
          globalThis as unknown as {
            chrome: {
              runtime: {
                sendMessage: (m: unknown) => Promise<{ ok: boolean; result?: unknown; error?: { name: string } }>;
              };
            };
          }
        ).chrome.runtime.sendMessage({ type: t, payload: p }),
      [type, payload] as const,
    );
}

/**
 * Creates a vault with `password` and imports the sandbox's demo owner key and proxy key (and, with
 * `clob`, derives its order-book credentials) through the popup's messages. Returns the popup and its sender.
 */
export async function onboardDemo(h: Harness, password: string, opts: { clob?: boolean; label?: string } = {}) {
  const popup = await h.openPopup();
  const send = messenger(popup);
  const ok = async (type: string, payload: unknown) => {
    const r = await send(type, payload);
    if (!r.ok) throw new Error(`${type}: ${JSON.stringify(r.error)}`);
  };
  await ok('vault.create', { password });
  await ok('vault.importOwnerKey', {
    privateKey: h.sandbox.demo.owner.privateKey,
    ...(opts.label ? { label: opts.label } : {}),
  });
  const p = h.sandbox.demo.proxy;
  await ok('proxy.import', {
    account: h.sandbox.demo.owner.address,
    privateKey: p.privateKey,
    proxy: p.address,
    secret: p.secret,
    expiry: p.expiry,
  });
  if (opts.clob) await ok('clob.createOrDerive', { account: h.sandbox.demo.owner.address });
  return { popup, send };
}

/**
 * Files of `dir` (recursively, < 64 MiB) containing any of `needles` (each at least 16 bytes), and how many were read.
 */
export function scanFiles(dir: string, needles: Buffer[]): { files: number; hits: string[] } {
  const hits: string[] = [];
  let files = 0;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && st.size < 64 * 1024 * 1024) {
        files++;
        const buf = readFileSync(p);
        for (const n of needles) if (n.length >= 16 && buf.includes(n)) hits.push(p);
      }
    }
  };
  walk(dir);
  return { files, hits };
}

/**
 * Opens the sandbox's demo page and connects it: `eth_requestAccounts`, approved in the approval window
 * once Approve arms. Returns the demo page.
 */
export async function connectDemo(h: Harness): Promise<Page> {
  const demo = await h.ctx.newPage();
  await demo.goto(`${h.sandbox.url}/demo`);
  await demo.getByText('Found Countersign').first().waitFor();
  const opened = h.ctx.waitForEvent('page', { predicate: (p) => p.url().endsWith('/approval.html'), timeout: 10_000 });
  const connected = demo.evaluate(() =>
    (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign.request({
      method: 'eth_requestAccounts',
    }),
  );
  const w = await opened;
  await w.bringToFront();
  await w.waitForFunction(() => {
    const b = document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null;
    return !!b && !b.disabled;
  });
  await w.getByTestId('approve').click();
  await connected;
  return demo;
}

/**
 * A ready session for the bridge suites: the browser with the extension, the demo account onboarded
 * (with order-book credentials) and the demo page connected. `windows()` counts approval windows opened.
 */
export async function startDemoSession(password: string, sandboxOptions: SandboxOptions = {}) {
  const h = await launchHarness(sandboxOptions);
  let opened = 0;
  h.ctx.on('page', (p) => {
    if (p.url().endsWith('/approval.html')) opened++;
  });
  const { popup, send } = await onboardDemo(h, password, { clob: true });
  const demo = await connectDemo(h);
  return { h, popup, send, demo, windows: () => opened };
}

/**
 * Grants the demo page a standing permission the way a person does: the page sends `method(params)`, the
 * approval window offers "Allow this site within limits…", the form's proposed caps are saved, and the
 * request is approved. Throws when the request that offered the grant was not accepted.
 */
export async function grantInWindow(h: Harness, demo: Page, method: string, params: unknown): Promise<void> {
  const opened = h.ctx.waitForEvent('page', { predicate: (p) => p.url().endsWith('/approval.html'), timeout: 10_000 });
  const first = demo.evaluate(
    ([m, p]) =>
      (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign
        .request({ method: m, params: p })
        .then(
          () => true,
          () => false,
        ),
    [method, params] as const,
  );
  const w = await opened;
  await w.getByRole('button', { name: 'Allow this site within limits…' }).click();
  await w.getByRole('button', { name: 'Save permission' }).click();
  await w.getByText(/Saved for/).waitFor();
  await w.bringToFront();
  await w.waitForFunction(
    () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
    undefined,
    { timeout: 5_000 },
  );
  await w.getByTestId('approve').click();
  if (!(await first)) throw new Error(`the ${method} request that offered the grant was not accepted`);
}

/**
 * An order-book permission for the demo page (from a small BUY's window). A grant names one venue, so a
 * test that needs both kill switches armed (perps auto-cancel and order-book heartbeats) holds one per venue.
 */
export function grantOrderBook(h: Harness, demo: Page, price = '0.31'): Promise<void> {
  return grantInWindow(h, demo, 'clob_postOrders', {
    orders: [{ tokenId: h.sandbox.ctx.clob.markets[0]!.tokenIds[0], side: 'BUY', price, size: '10', orderType: 'GTC' }],
  });
}

/**
 * Decides the next request shown in an approval window of `ctx` (a new window or one still open), as the
 * person does: `approve` once Approve is armed, or `reject`. Throws when no window shows a request within
 * `timeoutMs` (ms, default 20 000).
 */
export async function decideNext(
  ctx: BrowserContext,
  decision: 'approve' | 'reject',
  timeoutMs = 20_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for (const w of ctx.pages().filter((p) => p.url().endsWith('/approval.html'))) {
      const armed = await w
        .evaluate(() => {
          const b = document.querySelector('[data-testid="approve"]');
          return b instanceof HTMLButtonElement && !b.disabled;
        })
        .catch(() => false);
      if (!armed) continue;
      await w.bringToFront();
      try {
        await (decision === 'approve' ? w.getByTestId('approve') : w.getByRole('button', { name: 'Reject' })).click();
      } catch (err) {
        // The decision closes the window: a click whose window closed while Playwright finished it was delivered.
        if (!w.isClosed()) throw err;
      }
      // A decided window closes; until it has, it must not be taken for the next decision's window.
      if (!w.isClosed()) await w.waitForEvent('close', { timeout: 2_000 }).catch(() => undefined);
      return;
    }
    if (Date.now() > until) throw new Error('no approval window with a request');
    await new Promise((r) => setTimeout(r, 200));
  }
}
