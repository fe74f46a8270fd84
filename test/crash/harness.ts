/**
 * The crash harness (test-only): real Chromium on a persistent profile, started as its own process group
 * so the whole browser — every renderer, the extension's service worker, the network and storage
 * services — can be killed with SIGKILL at a chosen instant, as a crash, a killed process or an OS
 * update would; then relaunched on the same profile. The extension is the development build
 * (`.output/chrome-mv3`, `npm run build`) pointed at an in-process sandbox that outlives every kill.
 *
 * `seeded(seed)` gives the random instants (a small deterministic PRNG), so a failing seed replays.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_FLAGS } from '../e2e/harness';
import type { RunningSandbox } from '../../lib/sandbox/server';

/** Debian's Chromium (`apt-get install chromium`). */
export const CHROMIUM = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));
/** The development build the harness loads. */
export const EXTENSION_DIR = resolve(import.meta.dirname, '../../.output/chrome-mv3');

/** A running browser on a profile: its process, the CDP connection, the extension's id, a page of the extension. */
export type Running = {
  child: ChildProcess;
  browser: Browser;
  ctx: BrowserContext;
  extensionId: string;
  /** The popup (the extension page procedures are called from, as the popup). */
  page: Page;
  /** Calls procedure `type` from the extension page: the reply `{ ok, result | error }`. */
  call: (type: string, payload?: unknown) => Promise<Reply>;
  /** SIGKILLs the browser's whole process group and waits for it to exit. */
  kill: () => Promise<void>;
  /** Closes the browser normally. */
  close: () => Promise<void>;
};

/** A procedure's reply. */
export type Reply = {
  ok: boolean;
  result?: unknown;
  error?: { name: string; shortMessage: string; data?: Record<string, unknown> };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for Chromium to write its DevTools port into the profile (`DevToolsActivePort`), at most `ms`. */
async function devtoolsPort(profile: string, ms = 20_000): Promise<number> {
  const file = join(profile, 'DevToolsActivePort');
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (existsSync(file)) {
      const port = Number(readFileSync(file, 'utf8').split('\n')[0]);
      if (port > 0) return port;
    }
    await sleep(50);
  }
  throw new Error('Chromium did not start (no DevToolsActivePort)');
}

/**
 * Starts Chromium on `profile` with the extension, in a process group of its own. A port file left by an
 * earlier, killed browser is removed first. `CRASH_CHROMIUM_LOG=<file>` appends Chromium's own log
 * (`--enable-logging=stderr`) to that file, e.g. to see what the storage back ends did after a kill.
 */
export async function launchOn(profile: string, extensionDir = EXTENSION_DIR): Promise<Running> {
  if (!CHROMIUM) throw new Error('Chromium is not installed (apt-get install -y chromium).');
  if (!existsSync(join(extensionDir, 'manifest.json'))) throw new Error('Build the extension first (npm run build).');
  const chromiumLog = process.env.CRASH_CHROMIUM_LOG;
  const logFd = chromiumLog ? openSync(chromiumLog, 'a') : undefined;
  const portFile = join(profile, 'DevToolsActivePort');
  if (existsSync(portFile)) (await import('node:fs')).rmSync(portFile);
  const child = spawn(
    CHROMIUM,
    [
      '--headless=new',
      `--user-data-dir=${profile}`,
      '--remote-debugging-port=0',
      `--disable-extensions-except=${extensionDir}`,
      `--load-extension=${extensionDir}`,
      ...CHROMIUM_FLAGS,
      '--no-default-browser-check',
      ...(logFd === undefined ? [] : ['--enable-logging=stderr', '--v=0']),
      'about:blank',
    ],
    { detached: true, stdio: logFd === undefined ? 'ignore' : ['ignore', 'ignore', logFd] },
  );
  if (logFd !== undefined) closeSync(logFd); // the browser holds its own copy
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    return await connect(child, exited, profile);
  } catch (err) {
    // A browser that did not come up is not left running.
    if (child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    await exited;
    throw err;
  }
}

/** Connects to the browser `child` started on `profile` (CDP), finds the extension and opens its popup. */
async function connect(child: ChildProcess, exited: Promise<void>, profile: string): Promise<Running> {
  const port = await devtoolsPort(profile);
  const browser = await chromium.connectOverCDP(`http://127.0.0.1:${port}`);
  const ctx = browser.contexts()[0];
  if (!ctx) throw new Error('no browser context');
  const worker = ctx.serviceWorkers()[0] ?? (await ctx.waitForEvent('serviceworker', { timeout: 20_000 }));
  const extensionId = new URL(worker.url()).host;
  const page = await ctx.newPage();
  await page.goto(`chrome-extension://${extensionId}/popup.html`);
  const call = (type: string, payload: unknown = {}) =>
    page.evaluate(
      ([t, p]) =>
        (
          globalThis as unknown as { chrome: { runtime: { sendMessage: (m: unknown) => Promise<Reply> } } }
        ).chrome.runtime.sendMessage({ type: t, payload: p }),
      [type, payload] as const,
    ) as Promise<Reply>;
  return {
    child,
    browser,
    ctx,
    extensionId,
    page,
    call,
    kill: async () => {
      if (child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      await exited;
    },
    close: async () => {
      await browser.close().catch(() => undefined);
      if (child.pid) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          /* already gone */
        }
      }
      await Promise.race([exited, sleep(5_000)]);
      if (child.exitCode === null && child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
        await exited;
      }
    },
  };
}

/** A seeded PRNG (mulberry32): `next()` in [0, 1), the same sequence for the same seed. */
export function seeded(seed: number): { next: () => number; int: (lo: number, hi: number) => number } {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)) };
}

/** Unlocks with `password`, waiting out a back-off (a wrong password tried before): the reply. */
export async function unlock(r: Running, password: string): Promise<Reply> {
  for (let i = 0; i < 4; i++) {
    const reply = await r.call('vault.unlock', { password });
    const wait = reply.error?.name === 'Vault.UnlockBackoffError' ? Number(reply.error.data?.retryAfterMs ?? 1_000) : 0;
    if (!wait) return reply;
    await sleep(wait + 50);
  }
  return r.call('vault.unlock', { password });
}

/**
 * Points the extension at `sandbox`, every service and both sockets (a development build's default is 127.0.0.1:8787).
 */
export async function pointAt(r: Running, sandbox: RunningSandbox): Promise<void> {
  const b = sandbox.url;
  const reply = await r.call('settings.set', {
    perpsUrl: `${b}/perps`,
    perpsWsUrl: `${b.replace(/^http/, 'ws')}/perps/v1/ws`,
    clobUrl: `${b}/clob`,
    clobWsUrl: `${b.replace(/^http/, 'ws')}/clob/ws`,
    gammaUrl: `${b}/gamma`,
    dataUrl: `${b}/data`,
    relayerUrl: `${b}/relayer`,
    rpcUrl: `${b}/rpc`,
    bridgeUrl: `${b}/bridge`,
  });
  if (!reply.ok) throw new Error(`settings.set: ${JSON.stringify(reply.error)}`);
}
