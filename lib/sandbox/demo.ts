/**
 * The demo dapp page (`GET /demo` on the sandbox), rebuilt on the standard libraries: its
 * script (`lib/sandbox/demo-page.ts`: mipd + viem + `lib/dapp`) is bundled with esbuild into one file
 * served at `GET /demo/app.js`. The bundle is built once per process — started by the first `GET /demo`,
 * shared by every sandbox of the process — and served from memory. Not at sandbox start: a second of
 * esbuild work in every test process that starts a sandbox (on a frozen test clock) slows suites that
 * never open the page. The page finds Countersign
 * by EIP-6963, connects, places and cancels a perps order, posts an order-book order, asks for L2 headers
 * and uses them, requests a withdrawal and a standing grant; every result or typed error is logged.
 */
import { resolve } from 'node:path';
import type { Hono } from 'hono';
import type { SandboxContext } from './context';

let bundle: Promise<string> | undefined;

/**
 * The page script `entry` (a path) bundled for the browser with esbuild (a devDependency): one IIFE,
 * minified, ES2022, with `define`'s replacements. Resolves the script's text; rejects when esbuild fails.
 */
export async function browserScript(entry: string, define: Record<string, string> = {}): Promise<string> {
  const esbuild = await import('esbuild');
  const r = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
    define,
  });
  return r.outputFiles[0]?.text ?? '';
}

/**
 * The demo script bundled (`browserScript`), built on first call and cached for the process. Rejects when esbuild
 * fails.
 */
function demoBundle(): Promise<string> {
  bundle ??= browserScript(resolve(import.meta.dirname, 'demo-page.ts')).catch((err: unknown) => {
    bundle = undefined; // a failed build is tried again on the next request
    throw err;
  });
  return bundle;
}

/**
 * Mounts `GET /demo` (configured with the first market's token and `demo.counterparty`; starts the bundle) and `GET
 * /demo/app.js` on `app`.
 */
export function mountDemo(app: Hono, ctx: SandboxContext, demo: { counterparty: string }): void {
  app.get('/demo/app.js', async (c) => {
    try {
      c.header('Cache-Control', 'no-cache');
      return c.body(await demoBundle(), 200, { 'Content-Type': 'text/javascript; charset=utf-8' });
    } catch {
      return c.text('The demo script could not be built (esbuild).', 500);
    }
  });
  app.get('/demo', (c) => {
    void demoBundle().catch(() => undefined); // ready by the time the page asks for its script
    const [market] = ctx.clob.markets;
    if (!market) return c.text('The sandbox has no market to demo.', 503);
    const tokenId = market.tokenIds[0];
    // JSON inside a non-executed script element: `<` escaped so no value can close the element.
    const cfg = JSON.stringify({ tokenId, usdc: ctx.config.usdc, counterparty: demo.counterparty }).replace(
      /</g,
      '\\u003c',
    );
    c.header('Content-Security-Policy', "default-src 'self'; script-src 'self'; style-src 'unsafe-inline'");
    return c.html(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Countersign demo dapp</title>
<style>
body{font:14px system-ui;margin:24px;max-width:760px}button{margin:4px;padding:6px 10px}
#log{white-space:pre-wrap;background:#f1f5f9;padding:8px;border-radius:6px;min-height:120px;
  font:12px ui-monospace,monospace}
</style>
</head><body>
<h1>Countersign demo dapp</h1>
<p>Built on mipd (EIP-6963) + viem + Countersign's typed actions (<code>lib/dapp</code>).</p>
<p id="provider">Looking for Countersign…</p>
<p id="account">Not connected.</p>
<div>
<button id="connect">Connect</button>
<button id="order">Buy 0.5 ETH-PERP @ 3,000 (post-only)</button>
<button id="cancel">Cancel last order</button>
<button id="clob">Buy 10 YES @ 0.40 (order book)</button>
<button id="l2">Get L2 headers and list my orders</button>
<button id="withdraw">Withdraw 10 USDC</button>
<button id="grant">Ask for a standing permission (ETH-PERP, 1 h)</button>
</div>
<div id="log" aria-live="polite"></div>
<script type="application/json" id="demo-config">${cfg}</script>
<script src="/demo/app.js"></script>
</body></html>`);
  });
}
