/**
 * Countersign beside a page that holds the key itself: page request → venue acknowledgement, headless
 * Chromium with the bench build (`wxt build --mode bench`), one browser and one sandbox per run, all from
 * one page (`GET /peer` on the sandbox's origin, its script `peer-page.ts` bundled with esbuild):
 * - **order book**: `clob_postOrders` through the injected provider under a standing grant, beside the
 *   venue's own client (`@polymarket/clob-client-v2`) in the page with the demo owner key and the demo
 *   account's L2 credentials, `createAndPostOrder` of the same GTC buy below the midpoint;
 * - **perps**: `perps_sendCommand` under a standing grant, beside the same post-only command signed in the
 *   page with the proxy key (Countersign's own signing code, bundled) and sent over REST
 *   (`POST /perps/v1/trade/orders`) and over the page's own perps session WebSocket;
 * - **perps in a trading session**: the perps comparison again after auto-lock made the vault a trading
 *   session (the alarm `grant-paths.ts` fires).
 * The sides of a path run in interleaved blocks (`BENCH_PEER_BLOCKS`, default 6, of `BENCH_PEER_PER_BLOCK`,
 * default 50, orders each; the order of the sides rotates every block), every resting order cancelled between blocks;
 * orders rest and never fill. Prints per comparison p50 / p90 of each side, the p50 ratio and difference with 95 %
 * bootstrap intervals (both sides resampled, 1 000 times), the p90 ratio, the relay floor (a page's `eth_chainId` round
 * trip through the provider) and each target as met or not; after each path, 30 more of Countersign's orders traced
 * in the worker (the transport, each stage's start and length: `lib/background/bench-trace.ts`); then the median over
 * `BENCH_RUNS` (default 3) runs, each in a process, browser and sandbox of its own. Skipped when Chromium is missing;
 * never fails on timing.
 */
import { execFileSync, execSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Hono } from 'hono';
import type { Page } from 'playwright-core';
import type { Harness } from '../e2e/harness';
import type { BenchHooks } from '../../lib/background/bench-hooks';
import type { RunningSandbox } from '../../lib/sandbox/server';
import { browserScript } from '../../lib/sandbox/demo';
import type { BlockTimes, PeerConfig, PeerPage, PeerSide } from './peer-page';
import { grantDemoPage } from './granted-demo';
import { stageBreakdown } from './grant-paths';

declare const countersignBench: BenchHooks;

const pct = (xs: readonly number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const median = (xs: readonly number[]) => pct(xs, 50);
const f = (x: number) => x.toFixed(1);
const x2 = (x: number) => `${x.toFixed(2)}×`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Blocks per side and orders per block (interleaved). */
const BLOCKS = Math.max(1, Number(process.env.BENCH_PEER_BLOCKS ?? 6) || 6);
const PER_BLOCK = Math.max(1, Number(process.env.BENCH_PEER_PER_BLOCK ?? 50) || 50);
/** Bootstrap resamples of each interval. */
const RESAMPLES = 1_000;
/** Countersign's p90 at most this many times the page's, on every comparison. */
const P90_TARGET = 1.6;

/** One comparison: Countersign's side against one way the page holds the key, and its p50 target (ratio). */
type Comparison = { path: string; against: string; page: PeerSide; countersign: PeerSide; target: number };

/** The figures of one comparison in one run (ms; ratios are Countersign / page). */
export type ComparisonResult = {
  path: string;
  against: string;
  target: number;
  n: [number, number];
  p50: [number, number];
  p90: [number, number];
  ratio: number;
  ratioCi: [number, number];
  diff: number;
  diffCi: [number, number];
  p90Ratio: number;
};

/** What one run hands the parent process: its relay floor (p50 ms) and its comparisons. */
type RunResult = { relay: number; results: ComparisonResult[] };

/** A seeded PRNG (mulberry32), so a run's intervals are reproducible from its samples. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * 95 % bootstrap intervals of `p50(a) / p50(b)` and `p50(a) − p50(b)`: both samples resampled with
 * replacement, each on its own, `RESAMPLES` times; the 2.5th and 97.5th percentiles of each statistic.
 */
export function bootstrapP50(
  a: readonly number[],
  b: readonly number[],
): { ratio: [number, number]; diff: [number, number] } {
  const rand = prng(a.length * 7919 + b.length);
  const draw = (xs: readonly number[]) => median(Array.from(xs, () => xs[Math.floor(rand() * xs.length)]!));
  const ratios: number[] = [];
  const diffs: number[] = [];
  for (let i = 0; i < RESAMPLES; i++) {
    const ma = draw(a);
    const mb = draw(b);
    ratios.push(ma / mb);
    diffs.push(ma - mb);
  }
  return { ratio: [pct(ratios, 2.5), pct(ratios, 97.5)], diff: [pct(diffs, 2.5), pct(diffs, 97.5)] };
}

/** A comparison's figures from its two samples (Countersign's `cs`, the page's `page`). */
function compare(c: Comparison, cs: number[], page: number[]): ComparisonResult {
  const ci = bootstrapP50(cs, page);
  const p50: [number, number] = [median(cs), median(page)];
  const p90: [number, number] = [pct(cs, 90), pct(page, 90)];
  return {
    path: c.path,
    against: c.against,
    target: c.target,
    n: [cs.length, page.length],
    p50,
    p90,
    ratio: p50[0] / p50[1],
    ratioCi: ci.ratio,
    diff: p50[0] - p50[1],
    diffCi: ci.diff,
    p90Ratio: p90[0] / p90[1],
  };
}

const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');

/** Prints one comparison's figures of a run; `relay` (ms) is the run's relay floor. */
function printComparison(r: ComparisonResult, relay: number): void {
  console.log(
    `  ${r.path} vs ${r.against}: Countersign p50 ${f(r.p50[0])} / p90 ${f(r.p90[0])} ` +
      `ms (n ${r.n[0]}); page p50 ${f(r.p50[1])} / p90 ${f(r.p90[1])} ms (n ${r.n[1]}); ` +
      (`ratio p50 ${x2(r.ratio)} [${r.ratioCi.map((x) => x.toFixed(2)).join(', ')}], difference ` +
        `${r.diff >= 0 ? '+' : ''}${f(r.diff)} ms [${r.diffCi.map(f).join(', ')}]; p90 ratio ${x2(r.p90Ratio)}; `) +
      (`the relay floor alone would give ${x2((r.p50[1] + relay) / r.p50[1])} — target p50 ≤ ${r.target}×: ` +
        `${verdict(r.ratio <= r.target)}; p90 ≤ ${P90_TARGET}×: ${verdict(r.p90Ratio <= P90_TARGET)}`),
  );
}

/**
 * The page's script bundled for the browser (IIFE; esbuild, a devDependency; the venue's client and viem need no
 * polyfill).
 */
function peerBundle(): Promise<string> {
  return browserScript(resolve(import.meta.dirname, 'peer-page.ts'), { 'process.env.NODE_ENV': '"production"' });
}

/**
 * Mounts the page on the sandbox (`GET /peer`, `GET /peer/app.js`): same origin as the venues, so no CORS preflight on
 * either side.
 */
function peerRoutes(script: string): (app: Hono) => void {
  return (app) => {
    app.get('/peer/app.js', (c) =>
      c.body(script, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache' }),
    );
    app.get('/peer', (c) =>
      c.html(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Countersign peer ' +
          'bench</title></head><body><p>peer bench</p><script src="/peer/app.js"></script></body></html>',
      ),
    );
  };
}

/**
 * Times `sides` of one path in the page: two unmeasured rounds of 5 each, then `BLOCKS` rounds of
 * `PER_BLOCK` each, the sides' order rotating every round; `cancel` after every round (and a short settle,
 * so the cancels' account events are read before the next block). Returns each side's times.
 */
async function interleaved(
  page: Page,
  sides: PeerSide[],
  cancel: () => Promise<void>,
  counter: { n: number },
): Promise<Map<PeerSide, number[]>> {
  const block = async (side: PeerSide, count: number): Promise<BlockTimes> => {
    const start = counter.n;
    counter.n += count;
    return page.evaluate(([s, c, i]) => (window as unknown as { peer: PeerPage }).peer.block(s, c, i), [
      side,
      count,
      start,
    ] as const);
  };
  for (let w = 0; w < 2; w++) for (const s of sides) await block(s, 5);
  await cancel();
  const out = new Map<PeerSide, number[]>(sides.map((s) => [s, []]));
  const failed = new Map<PeerSide, { n: number; first?: string }>();
  for (let b = 0; b < BLOCKS; b++) {
    const order = [...sides.slice(b % sides.length), ...sides.slice(0, b % sides.length)];
    for (const s of order) {
      const r = await block(s, PER_BLOCK);
      out.get(s)!.push(...r.out);
      if (r.failed)
        failed.set(s, { n: (failed.get(s)?.n ?? 0) + r.failed, first: failed.get(s)?.first ?? r.firstError });
    }
    await cancel();
  }
  for (const [s, x] of failed) console.log(`    (${s}: ${x.n} request(s) failed and are not timed; first: ${x.first})`);
  return out;
}

/**
 * The demo account's orders on both venues by status, and its fills: every order must have rested (then been
 * cancelled), none filled.
 */
function restingCheck(sandbox: RunningSandbox, account: string): string {
  const owner = account.toLowerCase();
  const count = (xs: Iterable<{ status: string }>) => {
    const by: Record<string, number> = {};
    for (const o of xs) by[o.status] = (by[o.status] ?? 0) + 1;
    return Object.entries(by)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ');
  };
  const perps = [...sandbox.ctx.venue.orders.values()].filter((o) => o.owner === owner);
  const clob = [...sandbox.ctx.clob.orders.values()].filter((o) => o.maker === owner);
  const fills =
    (sandbox.ctx.venue.findAccount(account)?.fills.length ?? 0) +
    sandbox.ctx.clob.trades.filter((t) => t.address.toLowerCase() === owner).length;
  return `perps ${count(perps)}; order book ${count(clob)}; fills ${fills}`;
}

/**
 * Which transport carried 30 more of Countersign's granted orders of `side`, and where their time went in the worker
 * (the worker's spans while they ran, `lib/background/bench-trace.ts`; `stageBreakdown`).
 */
async function transportOf(h: Harness, page: Page, side: PeerSide, counter: { n: number }): Promise<string> {
  await h.worker.evaluate(() => countersignBench.traceStart());
  const start = counter.n;
  counter.n += 30;
  const times = await page.evaluate(([s, i]) => (window as unknown as { peer: PeerPage }).peer.block(s, 30, i), [
    side,
    start,
  ] as const);
  const spans = await h.worker.evaluate(() => countersignBench.traceStop());
  const origin = await h.worker.evaluate(() => performance.timeOrigin);
  return (
    `session stream sends ${spans.filter((x) => x.name === 'ws.send').length}, ` +
    `REST fetches ${spans.filter((x) => x.name === 'fetch').length}; stages (@start +length, ms after the request ` +
    `reached servePage): ${stageBreakdown(spans, times.out, { sent: times.sent, origin })}`
  );
}

/** One run in a fresh browser and sandbox: the relay floor and every comparison. */
async function oneRun(run: number): Promise<RunResult> {
  process.env.COUNTERSIGN_BUILD = process.env.BENCH_GRANT_BUILD ?? 'chrome-mv3-bench';
  const { launchHarness, onboardDemo, connectDemo } = await import('../e2e/harness');
  const script = await peerBundle();
  const h = await launchHarness({
    config: {
      perpsRequestBudget: { limit: 1_000_000, windowMs: 60_000 },
      perpsActionBudget: { limit: 1_000_000, windowMs: 60_000 },
    },
    extend: peerRoutes(script),
  });
  try {
    const { send } = await onboardDemo(h, 'benchmark password', { clob: true });
    const page = await connectDemo(h);
    // The page's cancels end Countersign's resting orders too: to the extension those are another client's
    // cancels, each a notification (and its icon load); the figures are the orders' alone.
    await send('notifications.set', { cancels: false });
    const { account, token, price } = await grantDemoPage(h);
    const armed = async () => {
      const venues =
        ((await send('deadman.status')).result as { venues: { venue: string; armed: boolean }[] } | undefined)
          ?.venues ?? [];
      return ['perps', 'clob'].every((v) => venues.some((x) => x.venue === v && x.armed));
    };
    for (let i = 0; i < 200 && !(await armed()); i++) await sleep(50);
    const perpsLive = async () =>
      (
        (await send('streams.status')).result as { streams: { venue: string; state: string }[] } | undefined
      )?.streams.some((x) => x.venue === 'perps' && x.state === 'live') ?? false;
    for (let i = 0; i < 200 && !(await perpsLive()); i++) await sleep(50);

    // The same page, now the bench's: the origin stays connected and granted; the page holds the keys too.
    await page.goto(`${h.sandbox.url}/peer`);
    await page.waitForFunction(() => 'peer' in window && 'countersign' in window);
    const p = h.sandbox.demo.proxy;
    const cfg: PeerConfig = {
      base: h.sandbox.url,
      chainId: h.sandbox.ctx.config.clobChainId,
      ownerKey: h.sandbox.demo.owner.privateKey,
      proxyKey: p.privateKey,
      proxySecret: p.secret,
      clob: { tokenId: token, price, size: '5' },
    };
    await page.evaluate((c) => (window as unknown as { peer: PeerPage }).peer.setup(c), cfg);
    const cancel = async () => {
      await page.evaluate(() => (window as unknown as { peer: PeerPage }).peer.cancelAll());
      await sleep(300);
    };

    console.log(
      `\n Run ${run + 1}: page → venue ack, Countersign under a standing ` +
        `grant beside the page holding the key (headless Chromium, one page, sandbox ` +
        `on loopback; ${BLOCKS} interleaved blocks of ${PER_BLOCK} a side):`,
    );
    const relay = median(await page.evaluate((n) => (window as unknown as { peer: PeerPage }).peer.relay(n), 200));
    console.log(
      `  relay floor (p50 of 200): the page's eth_chainId round trip through the provider ${relay.toFixed(2)} ms`,
    );
    const counter = { n: 0 };
    const results: ComparisonResult[] = [];
    const measure = async (comparisons: Comparison[]) => {
      const sides = [comparisons[0]!.countersign, ...comparisons.map((c) => c.page)];
      const times = await interleaved(page, sides, cancel, counter);
      for (const c of comparisons) {
        const r = compare(c, times.get(c.countersign)!, times.get(c.page)!);
        printComparison(r, relay);
        results.push(r);
      }
      console.log(
        `    Countersign's transport, 30 more orders traced in the worker: ` +
          (await transportOf(h, page, sides[0]!, counter)),
      );
      await cancel();
    };
    const perps = (path: string): Comparison[] => [
      {
        path,
        against: 'the page over its own session WebSocket',
        countersign: 'countersign-perps',
        page: 'page-ws',
        target: 1.45,
      },
      { path, against: 'the page over REST', countersign: 'countersign-perps', page: 'page-rest', target: 1.05 },
    ];
    await measure([
      {
        path: 'order book, unlocked',
        against: "the venue's client in the page",
        countersign: 'countersign-clob',
        page: 'page-clob',
        target: 1.25,
      },
    ]);
    await measure(perps('perps, unlocked'));

    // Auto-lock fires with the grants live: a trading session (as grant-paths reaches it).
    await h.worker.evaluate(() =>
      (
        globalThis as unknown as { chrome: { alarms: { create: (n: string, o: object) => void } } }
      ).chrome.alarms.create('autolock', { when: Date.now() + 50 }),
    );
    const state = async () => ((await send('vault.status')).result as { state: string }).state;
    for (let i = 0; i < 200 && (await state()) !== 'session'; i++) await sleep(50);
    if ((await state()) !== 'session') throw new Error(`expected a trading session, the vault is ${await state()}`);
    await sleep(1_500); // the session keeps the perps stream for the grants' orders: measured once that settled
    await measure(perps('perps, trading session'));
    console.log(
      `  orders placed: ${restingCheck(h.sandbox, account)} (none may fill: ` +
        `post-only perps buys below the book, order-book buys below the midpoint)`,
    );
    return { relay, results };
  } finally {
    await h.close();
  }
}

/** Prints the median over the runs of each comparison's figures, with the targets. */
function printMedians(all: RunResult[]): void {
  console.log(
    `\n Median over ${all.length} runs (relay floor ${all.map((r) => r.relay.toFixed(2)).join(', ')} ` +
      `→ ${median(all.map((r) => r.relay)).toFixed(2)} ms):`,
  );
  for (const [i, first] of all[0]!.results.entries()) {
    const col = (g: (r: ComparisonResult) => number) => all.map((x) => g(x.results[i]!));
    const ratios = col((r) => r.ratio);
    const p90s = col((r) => r.p90Ratio);
    const diffs = col((r) => r.diff);
    const m = median(ratios);
    const m90 = median(p90s);
    console.log(
      `  ${first.path} vs ${first.against}: p50 Countersign ${col((r) => r.p50[0])
        .map(f)
        .join(', ')} ms, page ${col((r) => r.p50[1])
        .map(f)
        .join(', ')} ms; ` +
        (`p50 ratios ${ratios.map((x) => x.toFixed(2)).join(', ')} → median ` +
          `${x2(m)}; differences ${diffs.map(f).join(', ')} → ${f(median(diffs))} ms; ` +
          `p90 ratios ${p90s.map((x) => x.toFixed(2)).join(', ')} → ${x2(m90)} — `) +
        (`target p50 ≤ ${first.target}×: ${verdict(m <= first.target)}; ` +
          `p90 ≤ ${P90_TARGET}×: ${verdict(m90 <= P90_TARGET)}`),
    );
  }
}

/** The `peer` part of `npm run bench` (see the module docstring). */
export async function benchPeer(): Promise<void> {
  if (!['/usr/lib/chromium/chromium', '/usr/bin/chromium'].some((x) => existsSync(x))) {
    console.log('\nPeer bench: skipped (needs Chromium).');
    return;
  }
  const out = process.env.BENCH_PEER_OUT;
  // BENCH_GRANT_BUILD: an existing bench build's directory under .output (for before/after runs); otherwise built now.
  if (!process.env.BENCH_GRANT_BUILD && !out) execSync('npx wxt build --mode bench', { stdio: 'ignore' });
  const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? 3) || 3);
  const head =
    `Countersign beside a page holding the key (targets: order book p50 ≤ ` +
    `1.25× the venue's client in the page; perps p50 ≤ 1.45× the page's session ` +
    `WebSocket and ≤ 1.05× the page over REST; p90 ≤ ${P90_TARGET}× on each)`;
  if (runs === 1) {
    if (!out) console.log(`\n${head}:`);
    const r = await oneRun(Number(process.env.BENCH_PEER_RUN ?? 0));
    if (out) writeFileSync(out, JSON.stringify(r));
    return;
  }
  // Each run in a process of its own, on the build made above.
  console.log(`\n${head}; ${runs} runs, each in a fresh process, browser and sandbox:`);
  const dir = mkdtempSync(join(tmpdir(), 'peer-bench-'));
  const all: RunResult[] = [];
  try {
    for (let r = 0; r < runs; r++) {
      const file = join(dir, `run-${r}.json`);
      execFileSync('npx', ['tsx', 'test/bench/run.ts'], {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: {
          ...process.env,
          BENCH_ONLY: 'peer',
          BENCH_RUNS: '1',
          BENCH_GRANT_BUILD: process.env.BENCH_GRANT_BUILD ?? 'chrome-mv3-bench',
          BENCH_PEER_OUT: file,
          BENCH_PEER_RUN: String(r),
        },
      });
      all.push(JSON.parse(readFileSync(file, 'utf8')) as RunResult);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printMedians(all);
}
