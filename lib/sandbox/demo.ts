/**
 * The demo dapp page (`GET /demo` on the sandbox): connects to Countersign through `window.countersign`
 * (found directly or by EIP-6963 discovery), places and cancels a perps order, posts an order-book
 * order, asks for L2 headers and uses them itself, and requests a withdrawal. Every result or error is
 * appended to the log on the page.
 */
import type { Hono } from 'hono';
import type { SandboxContext } from './context';

/** Mounts `GET /demo` (the demo dapp page, configured with the first market's token and `demo.counterparty`) on `app`. */
export function mountDemo(app: Hono, ctx: SandboxContext, demo: { counterparty: string }): void {
  app.get('/demo', (c) => {
    const [market] = ctx.clob.markets;
    if (!market) return c.text('The sandbox has no market to demo.', 503);
    const tokenId = market.tokenIds[0];
    const cfg = JSON.stringify({ tokenId, usdc: ctx.config.usdc, counterparty: demo.counterparty });
    c.header('Content-Security-Policy', "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'");
    return c.html(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Countersign demo dapp</title>
<style>body{font:14px system-ui;margin:24px;max-width:760px}button{margin:4px;padding:6px 10px}#log{white-space:pre-wrap;background:#f1f5f9;padding:8px;border-radius:6px;min-height:120px;font:12px ui-monospace,monospace}</style>
</head><body>
<h1>Countersign demo dapp</h1>
<p id="provider">Looking for Countersign…</p>
<p id="account">Not connected.</p>
<div>
<button id="connect">Connect</button>
<button id="order">Buy 0.5 ETH-PERP @ 3,000 (post-only)</button>
<button id="cancel">Cancel last order</button>
<button id="clob">Buy 10 YES @ 0.40 (order book)</button>
<button id="l2">Get L2 headers and list my orders</button>
<button id="withdraw">Withdraw 10 USDC</button>
</div>
<div id="log" aria-live="polite"></div>
<script>
const CFG = ${cfg};
const log = (label, value) => { const el = document.getElementById('log'); el.textContent += label + ': ' + JSON.stringify(value) + '\\n'; };
let provider = window.countersign;
window.addEventListener('eip6963:announceProvider', (e) => { if (e.detail.info.rdns === 'xyz.countersign') { provider = e.detail.provider; document.getElementById('provider').textContent = 'Found ' + e.detail.info.name + ' (EIP-6963).'; } });
window.dispatchEvent(new Event('eip6963:requestProvider'));
if (provider) document.getElementById('provider').textContent = 'Found Countersign.';
let account, lastOid;
const run = (label, fn) => async () => { try { const r = await fn(); log(label, r); window.__last = { ok: true, label, value: r }; return r; } catch (e) { log(label + ' error', { code: e.code, message: e.message, data: e.data }); window.__last = { ok: false, label, code: e.code, message: e.message, data: e.data }; } };
if (provider) {
  provider.on('accountsChanged', (a) => { account = a[0]; document.getElementById('account').textContent = account ? 'Connected: ' + account : 'Not connected.'; log('accountsChanged', a); });
  provider.on('disconnect', (e) => log('disconnect', e));
}
document.getElementById('connect').onclick = run('connect', async () => { const a = await provider.request({ method: 'eth_requestAccounts' }); account = a[0]; document.getElementById('account').textContent = 'Connected: ' + account; return a; });
document.getElementById('order').onclick = run('order', async () => { const r = await provider.request({ method: 'perps_sendCommand', params: { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true }] } } }); lastOid = r[0].oid; return r; });
document.getElementById('cancel').onclick = run('cancel', () => provider.request({ method: 'perps_sendCommand', params: { op: { type: 'cancelOrders', args: [lastOid] } } }));
document.getElementById('clob').onclick = run('clob', () => provider.request({ method: 'clob_postOrders', params: { orders: [{ tokenId: CFG.tokenId, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }] } }));
document.getElementById('l2').onclick = run('l2', async () => { const h = await provider.request({ method: 'clob_signRequest', params: { method: 'GET', requestPath: '/data/orders' } }); const res = await fetch('/clob/data/orders', { headers: h }); return { status: res.status, body: await res.json() }; });
document.getElementById('withdraw').onclick = run('withdraw', () => provider.request({ method: 'perps_sendCommand', params: { op: { type: 'withdraw', args: { account, token: CFG.usdc, amount: '10000000', to: CFG.counterparty } } } }));
</script>
</body></html>`);
  });
}
