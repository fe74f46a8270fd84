/**
 * The site client as a site installs it, in real Chromium: the packed tarball (`npm pack` of lib/dapp) installed
 * into a scratch site folder with viem from npm — not a path import — and bundled there with esbuild; the page finds
 * Countersign by EIP-6963, checks its version, connects, and places and cancels orders on both venues against the
 * sandbox: a rejected window, a standing grant asked with viem's own `erc7715Actions().grantPermissions` that covers
 * an order and its cancel, an order-book order approved in a window and cancelled with L2 headers the site sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchHarness, onboardDemo, type Harness } from './harness';
import { ethGrantRequest, serveSite, type ServedSite } from '../kits/site-client';

const PASSWORD = 'correct horse battery staple';

type Outcome = { ok: boolean; value?: unknown; code?: number; type?: string; message?: string };
type Site = Record<string, (...args: unknown[]) => Promise<Outcome>> & { ready: () => boolean; coid: () => string };
declare const window: { __site: Site };

let h: Harness;
let served: ServedSite;
let site: Page;
let windows = 0;

const call = (name: string, ...args: unknown[]) =>
  site.evaluate(([n, a]) => window.__site[n]!(...a), [name, args] as const);
const nextWindow = () =>
  h.ctx.waitForEvent('page', { predicate: (p) => p.url().endsWith('/approval.html'), timeout: 15_000 });
/** Clicks Approve (once armed) or Reject in the approval window `w`. */
async function decide(w: Page, approve: boolean): Promise<void> {
  await w.bringToFront();
  if (!approve) return w.getByRole('button', { name: 'Reject' }).click();
  await w.waitForFunction(
    () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
    undefined,
    { timeout: 10_000 },
  );
  await w.getByTestId('approve').click();
}
/** Runs `name(...args)` in the site and decides the window it opens; the site's outcome. */
async function inWindow(approve: boolean, name: string, ...args: unknown[]): Promise<Outcome> {
  const opened = nextWindow();
  const outcome = call(name, ...args);
  await decide(await opened, approve);
  return outcome;
}
const owner = () => h.sandbox.demo.owner.address;
/** Perps order requests that reached the sandbox (placements and cancels). */
const perpsSent = () => h.sandbox.ctx.requestLog.filter((r) => r.path.startsWith('/perps/v1/trade/orders')).length;
async function ethMark(): Promise<string> {
  const r = await fetch(`${h.sandbox.url}/perps/v1/info/tickers?instrument_id=2`);
  const [t] = (await r.json()) as { mark_price: string }[];
  return t!.mark_price;
}

beforeAll(async () => {
  served = await serveSite();
  h = await launchHarness();
  h.ctx.on('page', (p) => {
    if (p.url().endsWith('/approval.html')) windows++;
  });
  await onboardDemo(h, PASSWORD, { clob: true });
  site = await h.ctx.newPage();
  await site.goto(served.url);
  await site.waitForFunction(() => window.__site.ready(), undefined, { timeout: 15_000 });
}, 240_000);
afterAll(async () => {
  await h?.close();
  await served?.close();
});

describe('a site built on the installed site client, in Chromium', () => {
  it('is bundled from the installed tarball, finds Countersign, checks its version, connects', async () => {
    expect(served.bundledFrom).toEqual(
      expect.arrayContaining([expect.stringMatching(/^node_modules\/@countersign\/site-client\/dist\/index\.js$/)]),
    );
    expect(served.bundledFrom.filter((f) => f.includes('lib/dapp'))).toEqual([]);
    expect(await call('require', ['perps_sendCommand', 'clob_postOrders', 'wallet_grantPermissions'])).toMatchObject({
      ok: true,
      value: { version: expect.stringMatching(/^\d+\.\d+\.\d+/) },
    });
    expect(await call('require', ['perps_teleport'])).toMatchObject({
      ok: false,
      type: 'Countersign.ExtensionOutdatedError',
      message: expect.stringContaining('update the extension (missing: perps_teleport)'),
    });
    expect(await inWindow(true, 'connect')).toEqual({ ok: true, value: [h.sandbox.demo.owner.address] });
  });

  it("viem's own EIP-2255 actions read the connection and ask for it again (one window), unchanged", async () => {
    const perm = {
      parentCapability: 'eth_accounts',
      caveats: [{ type: 'restrictReturnedAccounts', value: [owner()] }],
    };
    expect(await call('getPermissions')).toMatchObject({ ok: true, value: [perm] });
    expect(await inWindow(true, 'requestPermissions')).toMatchObject({ ok: true, value: [perm] });
  });

  it('perps_signCommand through its action: the signed envelope comes back, nothing is sent', async () => {
    const sent = perpsSent();
    const op = { type: 'cancelOrders', args: [123456] };
    expect(await inWindow(true, 'signPerps', { op })).toMatchObject({
      ok: true,
      value: { op, sig: expect.stringMatching(/^0x[0-9a-f]{130}$/), salt: expect.any(Number), ts: expect.any(Number) },
    });
    expect(perpsSent()).toBe(sent);
  });

  it("a rejected window reaches the site as the package's UserRejectedError, and nothing is sent", async () => {
    const sent = perpsSent();
    const order = {
      op: {
        type: 'createOrders',
        args: [{ iid: 2, buy: true, qty: '0.01', p: await ethMark(), tif: 'gtc', po: true }],
      },
    };
    expect(await inWindow(false, 'perps', order)).toMatchObject({
      ok: false,
      code: 4001,
      type: 'Countersign.UserRejectedError',
    });
    expect(perpsSent()).toBe(sent);
  });

  it("a grant asked with viem's erc7715Actions covers a perps order and its cancel: no window for either", async () => {
    const granted = await inWindow(true, 'grant', ethGrantRequest(h.sandbox.demo.owner.address));
    expect(granted).toMatchObject({ ok: true, value: { grantedPermissions: [{ type: 'countersign-grant' }] } });
    const before = windows;
    const c = await site.evaluate(() => window.__site.coid());
    const placed = await call('perps', {
      op: {
        type: 'createOrders',
        args: [{ iid: 2, buy: true, qty: '0.01', p: await ethMark(), tif: 'gtc', po: true, c }],
      },
    });
    expect(placed).toMatchObject({ ok: true, value: [{ oid: expect.any(Number), coid: c }] });
    const { oid } = (placed.value as { oid: number }[])[0]!;
    const cancelled = await call('perps', { op: { type: 'cancelOrders', args: [oid] } });
    expect(cancelled).toMatchObject({ ok: true });
    expect(windows).toBe(before);
    expect(h.sandbox.ctx.venue.orders.get(oid)?.status).toBe('cancelled');
  });

  it('an order-book order approved in a window, then cancelled with L2 headers the site sends itself', async () => {
    const tokenId = h.sandbox.ctx.clob.markets[0]!.tokenIds[0]!;
    const posted = await inWindow(true, 'clob', {
      orders: [{ tokenId, side: 'BUY', price: '0.30', size: '10', orderType: 'GTC' }],
    });
    expect(posted).toMatchObject({ ok: true, value: [{ success: true, orderID: expect.any(String) }] });
    const { orderID } = (posted.value as { orderID: string }[])[0]!;
    const cancel = await inWindow(true, 'cancelClob', `${h.sandbox.url}/clob`, orderID);
    expect(cancel).toEqual({ ok: true, value: { status: 200, answer: { canceled: [orderID], not_canceled: {} } } });
  });
});
