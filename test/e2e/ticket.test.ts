/**
 * The ticket's numbers in real Chromium against the in-process sandbox: each test reads the risk
 * panel (or the approval window) before the click and the sandbox's records after it — a protected
 * market order walking levels (entry and size shown to tick and lot), add, reduce, flip margin, pending
 * leverage (sent at the venue's), the 100 % preset and the max-size readout, the post-only fee, close
 * preview + confirm, TP / SL fired by a mark move, a short at 20× beside another position, a crossing
 * limit at 2×, and the approval window's order summary. Within 0.1 %, sizes exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { connectDemo, launchHarness, messenger, onboardDemo, type Harness } from './harness';
import { formatStep, groupDecimal } from '../../lib/format';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let popup: Page;
/**
 * The demo page, connected once (a second `connectDemo` would wait for a connect window that an already connected site
 * does not get).
 */
let demoPage: Page | undefined;

const owner = () => h.sandbox.ctx.venue.findAccount(h.sandbox.demo.owner.address);
const position = (iid: number) => owner()?.positions.get(iid);
/** The sandbox's portfolio for the demo account (the venue's read). */
async function portfolio() {
  const res = await fetch(`${h.sandbox.url}/perps/v1/account/portfolio`, {
    headers: { 'SERVICE-PROXY': h.sandbox.demo.proxy.address, 'SERVICE-SECRET': h.sandbox.demo.proxy.secret },
  });
  return (await res.json()) as {
    positions: {
      instrument_id: number;
      size: string;
      entry_price: string;
      leverage: number;
      initial_margin: string;
      liquidation_price: string;
    }[];
    withdrawable: string;
  };
}
const text = async (id: string, page: Page = popup) => (await page.getByTestId(id).first().textContent())?.trim() ?? '';
const num = (s: string) =>
  Number(
    s
      .replace(/,/g, '')
      .replace(/[^0-9.-]/g, ' ')
      .trim()
      .split(/\s+/)[0],
  );
const near = (got: number, want: number, rel = 0.001) =>
  expect(Math.abs(got - want), `${got} vs ${want}`).toBeLessThanOrEqual(Math.max(Math.abs(want) * rel, 0.01));
const mark = (instrument_id: number, price: string) =>
  fetch(`${h.sandbox.url}/admin/mark`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ instrument_id, price }),
  });

/** Chooses the instrument whose label (`BTC-PERP (#1)`) starts with `symbol`. */
async function pick(symbol: string): Promise<void> {
  const value = await popup
    .locator('select[name="instrument"] option', { hasText: `${symbol} (#` })
    .getAttribute('value');
  await popup.locator('select[name="instrument"]').selectOption(value ?? '');
  await popup.getByTestId('risk-leverage').filter({ hasText: '×' }).waitFor();
}
const esc = (v: string) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A typed number as the ticket's summary shows it: grouped, padded with zeros to the instrument's step. */
const padded = (v: string) => `${esc(groupDecimal(v))}${v.includes('.') ? '0*' : '(?:\\.0+)?'}`;
/**
 * Fills size and price (price '' = protected market order) and waits for the preview of that order (the submit label
 * names it).
 */
async function order(qty: string, price: string): Promise<void> {
  await popup.locator('input[name="qty"]').fill(qty);
  await popup.locator('input[name="price"]').fill(price);
  await popup
    .getByTestId('submit')
    .filter({ hasText: new RegExp(` ${padded(qty)} \\S+ \\(#\\d+\\) at ${price ? padded(price) : 'market'}$`) })
    .waitFor();
  await popup.getByTestId('risk-notional').waitFor();
}
/** A liquidity account of the test's own (the seeded market maker's levels get used up by the earlier orders). */
const LP = '0x00000000000000000000000000000000000b00c5';
/**
 * Rests `levels` post-only levels a side of `size` around `iid`'s mark (snapped to its tick), `step`
 * apart, from the test's liquidity account, and waits until the popup's ladder shows the new best bid.
 */
async function refill(iid: number, step: string, size: string, levels = 10): Promise<void> {
  const { ctx } = h.sandbox;
  const lp = ctx.venue.findAccount(LP) ?? ctx.openAccount(LP, 10n ** 15n);
  lp.config.set(iid, { leverage: 50, cross: true });
  const inst = ctx.venue.instruments.get(iid)!;
  const mid = inst.mark - (inst.mark % inst.tick);
  const s = BigInt(Math.round(Number(step) * 1e8));
  const pxText = (v: bigint) => (Number(v) / 1e8).toFixed(8).replace(/\.?0+$/, '');
  const orders = [];
  for (let k = 1n; k <= BigInt(levels); k++)
    for (const buy of [true, false])
      orders.push({ iid, buy, qty: size, p: pxText(mid + (buy ? -k : k) * s), tif: 'gtc' as const, po: true });
  ctx.venue.placeOrders(lp, orders);
  const bestBid = formatStep(pxText(mid - s), pxText(inst.tick));
  await popup.locator('.ladder').getByText(bestBid, { exact: true }).first().waitFor();
}
/**
 * Applies `lev`× (cross) for the instrument shown through the leverage form, and waits until the panel shows the
 * venue's new value.
 */
async function applyLeverage(lev: number): Promise<void> {
  const details = popup.locator('details.lev');
  if (!(await details.evaluate((d) => (d as HTMLDetailsElement).open))) await details.locator('summary').click();
  await popup.locator('input[name="lev"]').fill(String(lev));
  await popup.getByRole('button', { name: 'Set leverage' }).click();
  await popup
    .getByTestId('risk-leverage')
    .filter({ hasText: new RegExp(`^${lev}× cross$`) })
    .waitFor();
}
/** The order numbers the risk panel shows now (the size after the fill as text: sizes compare exactly). */
async function panelNumbers() {
  const after = await text('risk-after');
  const [size = '0', entry] = after === 'flat' ? ['0'] : after.split(' @ ');
  const liq = await text('risk-liq');
  return {
    notional: num(await text('risk-notional')),
    margin: num(await text('risk-margin')),
    fee: num(await text('risk-fee')),
    size: size.replace(/,/g, ''),
    entry: entry === undefined ? undefined : num(entry),
    liq: liq === 'none' ? null : num(liq),
    pnl: (await popup.getByTestId('risk-pnl').count()) ? num(await text('risk-pnl')) : 0,
  };
}
/**
 * Reads the panel, clicks Buy / Sell, waits for `status`, then compares with the sandbox's records:
 * the position's size (exact), entry and liquidation price (portfolio read), notional, fee and realised
 * PnL of the order's fills (the engine's fill records), and the margin through the withdrawable read
 * (margin added − margin released at the old entry + fee − realised PnL), within 0.1 %.
 */
async function checkAgainstVenue(iid: number, buy: boolean, qty: number, status: RegExp) {
  const shown = await panelNumbers();
  const before = await portfolio();
  const pos0 = before.positions.find((p) => p.instrument_id === iid);
  const seen = owner()?.fills.length ?? 0;
  await submitAndWait(status);
  const after = await portfolio();
  const pos1 = after.positions.find((p) => p.instrument_id === iid);
  const fills =
    owner()
      ?.fills.slice(seen)
      .filter((f) => f.iid === iid) ?? [];
  expect(fills.length).toBeGreaterThan(0);
  expect(Number(shown.size)).toBe(Number(pos1?.size ?? '0'));
  if (pos1) near(shown.entry ?? 0, Number(pos1.entry_price));
  near(
    shown.notional,
    fills.reduce((a, f) => a + Number(f.price * f.qty) / 1e16, 0),
  );
  near(shown.fee, fills.reduce((a, f) => a + Number(f.fee), 0) / 1e6);
  near(shown.pnl, fills.reduce((a, f) => a + Number(f.pnl), 0) / 1e6);
  if (shown.liq === null) expect(Number(pos1?.liquidation_price ?? 0)).toBe(0);
  else near(shown.liq, Number(pos1?.liquidation_price));
  const closing = pos0 && Number(pos0.size) > 0 !== buy ? Math.min(qty, Math.abs(Number(pos0.size))) : 0;
  const released = pos0 ? (closing * Number(pos0.entry_price)) / pos0.leverage : 0;
  near(Number(before.withdrawable) - Number(after.withdrawable), shown.margin - released + shown.fee - shown.pnl);
  return shown;
}
async function submitAndWait(status: RegExp): Promise<void> {
  await popup.locator('button[type="submit"]').click();
  // The venue's answer, or the error the ticket shows instead (so a failure says why).
  const answer = popup.getByText(status).or(popup.locator('.ticket-foot .error')).first();
  await answer.waitFor();
  expect(await answer.textContent()).toMatch(status);
}

beforeAll(async () => {
  h = await launchHarness();
  ({ popup } = await onboardDemo(h, PASSWORD));
  await popup.reload();
  await popup.locator('input[name="qty"]').waitFor();
});
afterAll(async () => {
  await h?.close();
});

describe('numbers before the click, the venue after it (Chromium)', () => {
  it('a protected market order: IOC at best + 1 %, average price and slippage shown, entry as shown', async () => {
    await pick('BTC-PERP');
    await order('0.7', '');
    const best = Number(h.sandbox.ctx.venue.levels(1).asks[0]?.[0]);
    expect(num(await text('risk-limit'))).toBe(Math.floor((best * 1.01) / 0.5) * 0.5);
    const avg = num(await text('risk-avg'));
    expect(await text('risk-avg')).toMatch(/slippage \d/);
    await submitAndWait(/Filled 0.7/);
    const sent = [...h.sandbox.ctx.venue.orders.values()]
      .filter((o) => o.iid === 1 && o.owner === h.sandbox.demo.owner.address.toLowerCase())
      .at(-1);
    expect(sent).toMatchObject({ tif: 'ioc', price: BigInt(Math.round(Math.floor((best * 1.01) / 0.5) * 0.5 * 1e8)) });
    const venue = (await portfolio()).positions.find((p) => p.instrument_id === 1);
    near(Number(venue?.entry_price), avg);
    // The venue reports the walked entry to 8 decimals; the panel shows it to the 0.5 tick, the size to the lot.
    expect(venue?.entry_price).toMatch(/\.\d{3,}$/);
    await popup.getByTestId('risk-position').filter({ hasText: '@' }).waitFor();
    expect(await text('risk-position')).toBe(`0.700 @ ${formatStep(venue!.entry_price, '0.5')}`);
    expect(await text('risk-available')).toMatch(/^[\d,]+\.\d{2} USDC$/);
    await order('0.1', '');
    expect(await popup.getByTestId('risk').textContent()).not.toMatch(/\d\.\d{5,}/);
  });

  it('adding to a long: the panel before, the venue after', async () => {
    await order('0.2', '');
    await checkAgainstVenue(1, true, 0.2, /Filled 0.2/);
    expect(position(1)?.size).toBe(90_000_000n);
  });

  it('reducing it: realised PnL and no margin shown; the venue agrees', async () => {
    await popup.getByRole('radio', { name: 'Sell' }).click();
    await order('0.3', '');
    expect(num(await text('risk-margin'))).toBe(0);
    await checkAgainstVenue(1, false, 0.3, /Filled 0.3/);
    expect(position(1)?.size).toBe(60_000_000n);
    await popup.getByRole('radio', { name: 'Buy' }).click();
  });

  it("a flip that ends smaller shows the new side's margin, and the venue takes it", async () => {
    await pick('ETH-PERP');
    await popup.getByRole('radio', { name: 'Sell' }).click();
    await order('5', '');
    await submitAndWait(/Filled 5/);
    await popup.getByRole('radio', { name: 'Buy' }).click();
    await order('8', '');
    await popup.getByText('This order flips your position').waitFor();
    const margin = num(await text('risk-margin'));
    expect(margin).toBeGreaterThan(0);
    await submitAndWait(/Filled 8/);
    const p = (await portfolio()).positions.find((x) => x.instrument_id === 2);
    expect(p?.size).toBe('3');
    // The venue's margin of the new side: 3 × entry ÷ 10.
    near(margin, (3 * Number(p?.entry_price)) / 10);
  });

  it('a typed leverage not applied is shown as pending and not used', async () => {
    await pick('SOL-PERP');
    await popup.locator('details.lev summary').click();
    await popup.locator('input[name="lev"]').fill('20');
    await order('10', '140');
    await popup.getByTestId('risk-pending-lev').waitFor();
    expect(await text('risk-leverage')).toContain('10× cross');
    // 10 × 140 ÷ 10 (the venue's 10×), not ÷ 20.
    expect(num(await text('risk-margin'))).toBe(140);
    await h.screenshot(popup, '40-ticket-pending-leverage');
    // Sent: the venue keeps 10× and holds the resting order's margin at 10×, as shown.
    const before = Number((await portfolio()).withdrawable);
    await submitAndWait(/Resting on the book/);
    expect(h.sandbox.ctx.venue.configOf(owner()!, 3).leverage).toBe(10);
    near(before - Number((await portfolio()).withdrawable), 140);
    await popup.locator('input[name="lev"]').fill('10');
  });

  it('post-only shows the maker fee and rests; its margin is what the venue holds', async () => {
    await pick('SOL-PERP');
    await order('10', '140');
    expect(await text('risk-fee')).toContain('up to 5 bp');
    await popup.locator('input[name="po"]').check();
    await popup.getByTestId('risk-fee').filter({ hasText: '1 bp maker' }).waitFor();
    expect(num(await text('risk-fee'))).toBeCloseTo(10 * 140 * 0.0001, 6);
    const before = Number((await portfolio()).withdrawable);
    const margin = num(await text('risk-margin'));
    await submitAndWait(/Resting on the book/);
    near(before - Number((await portfolio()).withdrawable), margin);
    await popup.locator('input[name="po"]').uncheck();
  });

  it('the 100 % preset is accepted by the venue; one lot more disables Buy with the reason', async () => {
    await pick('SOL-PERP');
    await popup.locator('input[name="price"]').fill('');
    await popup.locator('input[name="qty"]').fill('0.1');
    await popup.getByTestId('risk-limit').waitFor();
    await popup.locator('form').focus();
    const max = await text('max-size');
    expect(max).toMatch(/^Max [\d,]+(\.\d{1,2})? SOL$/);
    await popup.keyboard.press('4');
    const qty = await popup.locator('input[name="qty"]').inputValue();
    expect(Number(qty)).toBeGreaterThan(0);
    // The readout is the 100 % preset's size: what the venue then accepts.
    expect(num(max)).toBe(Number(qty));
    expect(await popup.locator('button[type="submit"]').isEnabled()).toBe(true);
    await popup.locator('input[name="qty"]').fill((Number(qty) + 1).toFixed(1));
    await popup
      .getByText(/Not enough free margin: the venue needs/)
      .first()
      .waitFor();
    expect(await popup.locator('button[type="submit"]').isDisabled()).toBe(true);
    await popup.locator('input[name="qty"]').fill(qty);
    await submitAndWait(/Order #\d+: (Filled|Partly)/);
    expect(position(3)?.size).toBeGreaterThan(0n);
  });

  it('close position previews size, price, fee and PnL, then sends reduce-only on the second click', async () => {
    await pick('SOL-PERP');
    const before = position(3)?.size ?? 0n;
    await popup.getByTestId('close-position').click();
    await popup.getByTestId('close-preview').waitFor();
    expect(position(3)?.size).toBe(before); // nothing sent yet
    const fee = num(await text('close-fee'));
    const pnl = num(await text('close-pnl'));
    await h.screenshot(popup, '41-ticket-close-preview');
    const fills = owner()?.fills.length ?? 0;
    await popup.getByTestId('close-confirm').click();
    await popup.getByText(/Close order sent/).waitFor();
    expect(position(3)).toBeUndefined();
    const closing =
      owner()
        ?.fills.slice(fills)
        .filter((f) => f.iid === 3 && f.taker) ?? [];
    near(closing.reduce((a, f) => a + Number(f.fee), 0) / 1e6, fee);
    near(closing.reduce((a, f) => a + Number(f.pnl), 0) / 1e6, pnl);
    const sent = [...h.sandbox.ctx.venue.orders.values()].filter((o) => o.iid === 3).at(-1);
    expect(sent).toMatchObject({ ro: true, tif: 'ioc' });
    expect(sent?.price).toBeDefined();
  });

  it('TP / SL on entry ride in the same command and the take-profit fires when the mark crosses it', async () => {
    await pick('BTC-PERP');
    await popup.getByTestId('close-position').click();
    await popup.getByTestId('close-confirm').click();
    await popup.getByText(/Close order sent/).waitFor();
    await order('0.1', '');
    await popup.getByTestId('tpsl-summary').click(); // folded under one line until opened
    await popup.locator('input[name="tp"]').fill('67000');
    await popup.locator('input[name="sl"]').fill('60000');
    await popup.getByTestId('risk-tp').waitFor();
    await submitAndWait(/Filled 0.1/);
    const triggers = () => [...h.sandbox.ctx.venue.orders.values()].filter((o) => o.iid === 1 && o.trigger);
    expect(triggers().map((o) => h.sandbox.ctx.venue.view(o).status)).toEqual(['armed', 'armed']);
    expect((await mark(1, '67000')).status).toBe(200);
    expect(position(1)).toBeUndefined();
    expect(triggers().map((o) => h.sandbox.ctx.venue.view(o).status)).toEqual(['triggered', 'untriggered']);
  });

  it('a short at 20× with another position open: the panel before, the venue after', async () => {
    expect(position(2)?.size).toBeGreaterThan(0n); // the ETH long from the flip stays open
    await pick('SOL-PERP');
    await refill(3, '0.05', '80');
    await applyLeverage(20);
    await popup.getByRole('radio', { name: 'Sell' }).click();
    await order('100', '');
    const shown = await checkAgainstVenue(3, false, 100, /Filled 100/);
    expect(shown.liq).not.toBeNull();
    expect(shown.size).toBe('-100.0');
    expect(h.sandbox.ctx.venue.configOf(owner()!, 3).leverage).toBe(20);
    await popup.getByRole('radio', { name: 'Buy' }).click();
  });

  it('a crossing limit at 2×: the panel before, the venue after', async () => {
    await pick('BTC-PERP');
    await applyLeverage(2);
    const asks = h.sandbox.ctx.venue.levels(1).asks;
    // A limit two levels up the book: 0.3 walks the first levels and fills whole.
    const limit = String(Number(asks[2]?.[0]));
    await order('0.3', limit);
    expect(await text('risk-fee')).toContain('up to');
    await checkAgainstVenue(1, true, 0.3, /Filled 0.3/);
    expect(h.sandbox.ctx.venue.configOf(owner()!, 1).leverage).toBe(2);
  });

  it("the approval window shows the same numbers for a page's order, computed from the artifact", async () => {
    const demo = (demoPage ??= await connectDemo(h));
    const opened = h.ctx.waitForEvent('page', {
      predicate: (p) => p.url().endsWith('/approval.html'),
      timeout: 10_000,
    });
    const done = demo.evaluate(() =>
      (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign.request({
        method: 'perps_sendCommand',
        params: {
          op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true }] },
        },
      }),
    );
    const w = await opened;
    await w.getByTestId('approval-notional').waitFor();
    expect(num(await text('approval-notional', w))).toBe(1500);
    expect(await text('approval-fee', w)).toContain('1 bp');
    const margin = num(await text('approval-margin', w));
    expect(margin).toBe(150);
    await h.screenshot(w, '42-approval-order-summary');
    const before = Number((await portfolio()).withdrawable);
    await w.bringToFront();
    await w.waitForFunction(
      () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
    );
    await w.getByTestId('approve').click();
    await done;
    near(before - Number((await portfolio()).withdrawable), margin);
  });

  it('the approval window prices what a crossing GTC limit rests at its limit, not at the visible book', async () => {
    const demo = (demoPage ??= await connectDemo(h));
    const asks = h.sandbox.ctx.venue.levels(2, 10).asks;
    // More than the ten levels the window reads, at twice the best ask: the part past the book rests at the limit.
    const limit = Number(asks[0]?.[0]) * 2;
    const qty = Math.ceil(asks.reduce((a, l) => a + Number(l[1]), 0)) + 5;
    const opened = h.ctx.waitForEvent('page', {
      predicate: (p) => p.url().endsWith('/approval.html'),
      timeout: 10_000,
    });
    const done = demo.evaluate(
      ([p, q]) =>
        (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign
          .request({
            method: 'perps_sendCommand',
            params: { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: q, p, tif: 'gtc' }] } },
          })
          .catch(() => 'rejected'),
      [String(limit), String(qty)],
    );
    const w = await opened;
    await w.getByTestId('approval-notional').waitFor();
    expect(await text('approval-avg', w)).toMatch(/fills now at ≈ .*, .* rests at /);
    await w.getByTestId('approval-rest').waitFor();
    const filled = asks.reduce((a, l) => a + Number(l[0]) * Number(l[1]), 0);
    const filledQty = asks.reduce((a, l) => a + Number(l[1]), 0);
    near(num(await text('approval-notional', w)), filled + (qty - filledQty) * limit);
    await w.getByRole('button', { name: 'Reject' }).click();
    expect(await done).toBe('rejected');
  });

  it(
    "an order-book order's approval window shows its cost and fee from " +
      'the signed amounts; approving it rests the order at the venue',
    async () => {
      const send = messenger(popup);
      expect((await send('clob.createOrDerive', { account: h.sandbox.demo.owner.address })).ok).toBe(true);
      const demo = (demoPage ??= await connectDemo(h));
      const market = h.sandbox.ctx.clob.markets[0]!;
      const opened = h.ctx.waitForEvent('page', {
        predicate: (p) => p.url().endsWith('/approval.html'),
        timeout: 10_000,
      });
      const done = demo.evaluate(
        (tokenId) =>
          (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign.request({
            method: 'clob_postOrders',
            params: { orders: [{ tokenId, side: 'BUY', price: '0.42', size: '25', orderType: 'GTC' }] },
          }),
        market.tokenIds[0],
      );
      const w = await opened;
      await w.getByTestId('approval-clob').waitFor();
      // 25 shares at 0.42: 10.50 USDC paid (the maker amount), fee at the book's rate on the USDC side.
      expect(num(await text('approval-clob-usdc', w))).toBe(10.5);
      const bps = (
        (await (await fetch(`${h.sandbox.url}/clob/fee-rate?token_id=${market.tokenIds[0]}`)).json()) as {
          base_fee: number;
        }
      ).base_fee;
      const feeText = await text('approval-clob-fee', w);
      expect(feeText).toContain(`(${bps} bp)`);
      expect(num(feeText)).toBeCloseTo((10.5 * bps) / 10_000, 6);
      await h.screenshot(w, '43-approval-clob-summary');
      await w.bringToFront();
      await w.waitForFunction(
        () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
      );
      await w.getByTestId('approve').click();
      expect(await done).toBeTruthy();
      const resting = [...h.sandbox.ctx.clob.orders.values()].filter(
        (o) =>
          o.status === 'live' && o.side === 'BUY' && o.originalSize === 25_000_000n && o.tokenId === market.tokenIds[0],
      );
      expect(resting.length).toBe(1);
    },
  );

  it(
    'order-book market orders (FOK / FAK) without a price: the ' +
      'average, slippage and cost shown are what the venue fills',
    async () => {
      const market = h.sandbox.ctx.clob.markets.find((m) => m.slug === 'quarter-tick-market')!;
      const token = market.tokenIds[0]!;
      // The order-book credentials were created by the test before: the popup reads the account anew.
      await popup.reload();
      await popup.getByRole('tab', { name: 'Order book' }).click();
      await popup.locator('input[name="market-search"]').fill('quarter-tick');
      await popup.locator('input[name="market-search"]').press('Enter');
      await popup.locator('ul.markets button', { hasText: 'quarter-tick' }).click();
      await popup.locator('.ladder .level').first().waitFor();
      /**
       * Fills the form, reads the estimate, sends, and returns the estimate and the venue's taker trades of the order.
       */
      const marketOrder = async (type: 'FOK' | 'FAK', size: string) => {
        await popup.locator('select[name="order-type"]').selectOption(type);
        await popup.locator('input[name="clob-price"]').fill('');
        await popup.locator('input[name="clob-size"]').fill(size);
        await popup.getByTestId('clob-est-avg').waitFor();
        const shown = {
          avg: num(await text('clob-est-avg')),
          slip: num(await text('clob-est-slip')),
          cost: await text('clob-est-cost'),
        };
        const seen = h.sandbox.ctx.clob.trades.length;
        await popup.getByTestId('clob-submit').click();
        await expect.poll(() => h.sandbox.ctx.clob.trades.length > seen, { timeout: 10_000 }).toBe(true);
        const trades = h.sandbox.ctx.clob.trades.slice(seen).filter((t) => t.role === 'TAKER' && t.tokenId === token);
        // Exact: base units added as bigints, then one conversion (a float sum drifts in the last digit).
        const shares = Number(trades.reduce((a, t) => a + t.size, 0n)) / 1e6;
        const usdc = trades.reduce((a, t) => a + (Number(t.size) * Number(t.price)) / 1e12, 0);
        return { shown, trades, shares, usdc, reference: Number(trades[0]?.price ?? 0n) / 1e6 };
      };
      // BUY 100 USDC: walks two ask levels within best + 1 %.
      const buy = await marketOrder('FOK', '100');
      expect(buy.trades.length).toBeGreaterThan(1);
      near(buy.shown.avg, buy.usdc / buy.shares);
      near(buy.shown.slip, ((buy.usdc / buy.shares - buy.reference) / buy.reference) * 10_000);
      const [got, paid] = buy.shown.cost.match(/[\d.]+/g)!.map(Number);
      expect(got).toBe(buy.shares);
      near(paid!, buy.usdc);
      // SELL 150 shares FAK: only the best bid lies within best − 1 %; what fills is what was shown.
      await popup.getByRole('radio', { name: 'Sell' }).click();
      const sell = await marketOrder('FAK', '150');
      expect(sell.shown.cost).toMatch(/^100 shares/);
      near(sell.shown.avg, sell.usdc / sell.shares);
      const [sold, brought] = sell.shown.cost.match(/[\d.]+/g)!.map(Number);
      expect(sold).toBe(sell.shares);
      near(brought!, sell.usdc);
    },
  );
});
