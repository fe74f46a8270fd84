/**
 * In real Chromium, with the popup open, the background's perps stream is live (the header
 * says so), and an order placed, cancelled and filled at the sandbox from outside the popup shows in
 * it without the popup reading the account over REST (the sandbox's request log counts the reads); the
 * perps book follows the public stream without a REST book read; an order-book fill by a counterparty
 * at the sandbox shows in the order-book screen without a REST read of orders, trades or the book.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createOrDeriveApiKey, clobL2Request } from '../../lib/clob/client';
import { toOrderAmounts } from '../../lib/clob/amounts';
import { buildClobOrder, exchangeAddress, signClobOrder, toPostOrderBody } from '../../lib/clob/order';
import { cancelOrders, createOrders, type PerpsCommand } from '../../lib/perps/commands';
import { signPerpsCommand } from '../../lib/perps/envelope';
import { sendPerpsCommand } from '../../lib/perps/client';
import { launchHarness, onboardDemo, type Harness } from './harness';

let h: Harness;
let popup: Page;

/** Sends `command` for the demo account straight to the sandbox (not through the extension). */
async function outside(command: PerpsCommand): Promise<unknown> {
  const proxy = privateKeyToAccount(h.sandbox.demo.proxy.privateKey);
  const envelope = await signPerpsCommand(proxy, {
    command,
    domain: h.sandbox.ctx.config.perpsDomain,
    nowMs: Date.now(),
  });
  return sendPerpsCommand(`${h.sandbox.url}/perps`, command, envelope);
}
const accountReads = () =>
  h.sandbox.ctx.requestLog.filter(
    (r) => r.method === 'GET' && /\/v1\/account\/(open-orders|portfolio|orders)/.test(r.path),
  ).length;

const restReads = (re: RegExp) => h.sandbox.ctx.requestLog.filter((r) => r.method === 'GET' && re.test(r.path)).length;

/** A counterparty at the sandbox (not the extension) sells `size` of `tokenId` at `price`, fill-and-kill. */
async function counterpartySells(tokenId: string, price: string, size: string): Promise<void> {
  const ctx = h.sandbox.ctx;
  const clobUrl = `${h.sandbox.url}/clob`;
  const wallet = privateKeyToAccount(generatePrivateKey());
  const nowS = Math.floor(Date.now() / 1000);
  const creds = (
    await createOrDeriveApiKey(clobUrl, wallet, { chainId: ctx.config.clobChainId, timestamp: nowS, nonce: 0 })
  ).credentials;
  const m = ctx.clob.tokenIndex.get(tokenId);
  if (!m) throw new Error('unknown token');
  ctx.clob.creditToken(wallet.address, tokenId, 1_000_000_000n);
  const amounts = toOrderAmounts({ side: 'SELL', price, size, tickSize: m.tickSize });
  const order = buildClobOrder({
    signer: wallet.address,
    signatureType: 0,
    tokenId,
    side: 'SELL',
    ...amounts,
    timestampMs: Date.now(),
  });
  const signature = await signClobOrder(wallet, {
    chainId: ctx.config.clobChainId,
    verifyingContract: exchangeAddress({ negRisk: m.negRisk }),
    order,
  });
  const body = toPostOrderBody({ order, signature, owner: creds.apiKey, orderType: 'FAK', postOnly: false });
  await clobL2Request(clobUrl, {
    address: wallet.address,
    credentials: creds,
    method: 'POST',
    requestPath: '/order',
    body,
    timestamp: nowS,
  });
}

beforeAll(async () => {
  h = await launchHarness();
  ({ popup } = await onboardDemo(h, 'correct horse battery staple', { clob: true }));
  await popup.reload();
  await popup.locator('input[name="qty"]').waitFor();
});
afterAll(async () => {
  await h?.close();
});

describe('the popup fed by the stream (Chromium)', () => {
  it('says live, and shows an order resting, cancelled and a fill without reading the account over REST', async () => {
    await popup
      .getByRole('status')
      .filter({ hasText: /^live$/ })
      .waitFor({ timeout: 10_000 });
    // The stream's start-up resync is done; from here the popup must not read the account.
    await new Promise((r) => setTimeout(r, 500));
    h.sandbox.ctx.requestLog.length = 0;
    const best = Number(h.sandbox.ctx.venue.levels(1).bids[0]?.[0]);
    const [ack] = (await outside(
      createOrders({ orders: [{ iid: 1, buy: true, p: String(best - 500), qty: '0.001', tif: 'gtc' }] }),
    )) as { oid: number }[];
    await popup.locator(`[data-oid="${ack?.oid}"]`).waitFor({ timeout: 1_500 });
    await outside(cancelOrders({ oids: [Number(ack?.oid)] }));
    await popup.locator(`[data-oid="${ack?.oid}"]`).waitFor({ state: 'detached', timeout: 1_500 });
    await outside(
      createOrders({ orders: [{ iid: 1, buy: true, p: String(Math.round(best * 1.05)), qty: '0.002', tif: 'ioc' }] }),
    );
    await popup.getByTestId('risk-position').filter({ hasText: '0.002' }).first().waitFor({ timeout: 1_500 });
    expect(accountReads()).toBe(0);
    await h.screenshot(popup, 'streams-live');
  });

  it('updates the perps book from the public stream, with no REST book read', async () => {
    const ladder = popup.getByTestId('ladder');
    await ladder.waitFor();
    await new Promise((r) => setTimeout(r, 500));
    h.sandbox.ctx.requestLog.length = 0;
    const before = await ladder.textContent();
    const { bids, asks } = h.sandbox.ctx.venue.levels(1, 1);
    const mid = Math.round((Number(bids[0]?.[0]) + Number(asks[0]?.[0])) / 2);
    await outside(createOrders({ orders: [{ iid: 1, buy: true, p: String(mid), qty: '0.003', tif: 'gtc' }] }));
    await popup.waitForFunction(
      (old) => document.querySelector('[data-testid="ladder"]')?.textContent !== old,
      before,
      { timeout: 1_500 },
    );
    // Longer than the 2 s poll interval: a polling popup would have read the book by now.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(restReads(/\/v1\/info\/(book|tickers)/)).toBe(0);
  });

  it('shows an order-book fill by a counterparty in the open order-book screen with no REST read', async () => {
    await popup.getByRole('tab', { name: 'Order book' }).click();
    await popup.getByRole('button', { name: 'Will the sandbox stay up all day?' }).click();
    await popup.waitForFunction(
      () => (document.querySelector('input[name="clob-price"]') as HTMLInputElement | null)?.value !== '',
    );
    const m = h.sandbox.ctx.clob.markets.find((x) => x.question === 'Will the sandbox stay up all day?');
    const tokenId = m?.tokenIds[0] ?? '';
    const book = h.sandbox.ctx.clob.book(tokenId);
    const best = Math.max(...book.bids.map((o) => Number(o.price)));
    const price = ((best + 10_000) / 1e6).toFixed(2);
    expect(Math.min(...book.asks.map((o) => Number(o.price)))).toBeGreaterThan(best + 10_000);
    await popup.locator('input[name="clob-price"]').fill(price);
    await popup.locator('input[name="clob-size"]').fill('10');
    await popup.locator('input[name="clob-size"]').press('Enter');
    await popup.getByText(/is resting on the book/).waitFor();
    const mine = [...h.sandbox.ctx.clob.orders.values()].find(
      (o) => o.status === 'live' && o.owner !== 'market-maker' && o.tokenId === tokenId,
    );
    await popup.locator(`li[data-order-id="${mine?.id}"]`).waitFor();
    await new Promise((r) => setTimeout(r, 500));
    h.sandbox.ctx.requestLog.length = 0;
    await counterpartySells(tokenId, price, '10');
    await popup.locator(`li[data-order-id="${mine?.id}"]`).waitFor({ state: 'detached', timeout: 1_500 });
    // The person's resting buy was the maker: the list reads the person's own order (the exchange's top-level side is
    // the taker's sell).
    await popup
      .getByTestId('clob-trades')
      .locator('li', {
        hasText: `Bought 10 “Yes” shares (token ${tokenId.slice(0, 6)}…${tokenId.slice(-4)}) at ${price} · maker`,
      })
      .waitFor({ timeout: 1_500 });
    expect(restReads(/\/clob\/(data\/orders|data\/trades|book)/)).toBe(0);
    await h.screenshot(popup, 'streams-clob-fill');
  });
});
