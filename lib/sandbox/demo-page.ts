/**
 * The demo dapp's script (browser only; bundled by `lib/sandbox/demo.ts` with esbuild and served at
 * `/demo/app.js`): what a dapp built on the standard libraries does — mipd's EIP-6963 store finds
 * Countersign (`rdns: xyz.countersign`), a viem wallet client over it (`custom(provider)`) extended with
 * `countersignActions` (`lib/dapp`) places and cancels a perps order, posts an order-book order, gets L2
 * headers and uses them, requests a withdrawal and a standing grant (ERC-7715). Every result, typed
 * error and EIP-1193 event is appended to the page's log, and the last result is `window.__last`
 * (`{ ok, label, value }` or `{ ok: false, label, code, message, data }`) for the browser tests.
 */
import { createStore } from 'mipd';
import { createWalletClient, custom } from 'viem';
import { countersignActions, toCountersignError } from '../dapp';

/** What the sandbox puts in the page (`<script type="application/json" id="demo-config">`). */
type DemoConfig = { tokenId: string; usdc: string; counterparty: string };

const $ = (id: string) => document.getElementById(id);
const cfg: DemoConfig = JSON.parse($('demo-config')?.textContent ?? '{}');
const log = (label: string, value: unknown) => {
  const el = $('log');
  if (el) el.textContent += `${label}: ${JSON.stringify(value)}\n`;
};
const setText = (id: string, text: string) => {
  const el = $(id);
  if (el) el.textContent = text;
};
/** Records the last result where the browser tests read it (`window.__last`). */
const record = (last: unknown) => Object.assign(window, { __last: last });

const store = createStore();
const detail = () => store.findProvider({ rdns: 'xyz.countersign' });
let account: string | undefined;
let lastOid: number | undefined;

/** The wallet client over the provider mipd found (undefined until then). */
function walletClient() {
  const d = detail();
  if (!d) throw new Error('Countersign was not found (EIP-6963).');
  return createWalletClient({ transport: custom(d.provider) }).extend(countersignActions);
}

/** Runs one action: logs and records its result or its typed error. */
const run = (label: string, fn: () => Promise<unknown>) => async () => {
  try {
    const value = await fn();
    log(label, value);
    record({ ok: true, label, value });
  } catch (err) {
    const e = toCountersignError(err);
    const out = { code: e.rpcCode, message: e.shortMessage, data: e.data, type: e.name };
    log(`${label} error`, out);
    record({ ok: false, label, ...out });
  }
};

let wired = false;
store.subscribe(
  () => {
    const d = detail();
    if (!d || wired) return;
    wired = true;
    setText('provider', `Found ${d.info.name} (EIP-6963).`);
    d.provider.on('accountsChanged', (a: readonly string[]) => {
      account = a[0];
      setText('account', account ? `Connected: ${account}` : 'Not connected.');
      log('accountsChanged', a);
    });
    d.provider.on('connect', (info: unknown) => log('connect', info));
    d.provider.on('chainChanged', (id: unknown) => log('chainChanged', id));
    d.provider.on('disconnect', (e: unknown) => log('disconnect', e));
  },
  { emitImmediately: true },
);

const on = (id: string, label: string, fn: () => Promise<unknown>) => {
  const el = $(id);
  if (el) el.onclick = run(label, fn);
};
on('connect', 'connect', async () => {
  const a = await walletClient().requestAddresses();
  account = a[0];
  setText('account', `Connected: ${account}`);
  return a;
});
on('order', 'order', async () => {
  const r = await walletClient().perpsSendCommand({
    op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true }] },
  });
  const first = Array.isArray(r) ? r[0] : undefined;
  if (first && 'oid' in first && typeof first.oid === 'number') lastOid = first.oid;
  return r;
});
on('cancel', 'cancel', () =>
  walletClient().perpsSendCommand({ op: { type: 'cancelOrders', args: lastOid === undefined ? [] : [lastOid] } }),
);
on('clob', 'clob', () =>
  walletClient().clobPostOrders({
    orders: [{ tokenId: cfg.tokenId, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
  }),
);
on('l2', 'l2', async () => {
  const h = await walletClient().clobSignRequest({ method: 'GET', requestPath: '/data/orders' });
  const res = await fetch('/clob/data/orders', { headers: h });
  return { status: res.status, body: await res.json() };
});
on('withdraw', 'withdraw', () =>
  walletClient().perpsSendCommand({
    op: {
      type: 'withdraw',
      args: { account: account ?? '', token: cfg.usdc, amount: '10000000', to: cfg.counterparty },
    },
  }),
);
on('grant', 'grant', () =>
  walletClient().grantPermissions({
    expiry: Math.floor(Date.now() / 1000) + 3600,
    limits: {
      venue: 'perps',
      instruments: [2],
      allow: { order: true, cancel: true },
      maxNotional: '2000',
      dailyNotional: '20000',
      priceBandPct: '2',
    },
  }),
);
