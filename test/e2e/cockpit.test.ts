/**
 * The trader's cockpit in real Chromium against the sandbox: before an order is signed the
 * ticket shows position, available margin, fee and the estimated liquidation price, computed from the
 * venue's reads (asserted against the sandbox); a fill moves the position, its liquidation price and
 * PnL in the Positions view; the whole position is protected by a stop-loss; the position closes in one action; an
 * order is entered with the keyboard alone. Screenshots of each new screen land in test-results/screens/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchHarness, type Harness } from './harness';
import { maxOrderSize } from '../../lib/perps/risk';
import { formatStep, formatUsdc } from '../../lib/format';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let popup: Page;

declare const chrome: { runtime: { sendMessage: (m: unknown) => Promise<{ ok: boolean }> } };
const send = (type: string, payload: unknown = {}) =>
  popup.evaluate(([t, p]) => chrome.runtime.sendMessage({ type: t, payload: p }), [type, payload] as const);

/** The sandbox's own portfolio answer for the demo account (what the venue's read says). */
async function sandboxPortfolio() {
  const res = await fetch(`${h.sandbox.url}/perps/v1/account/portfolio`, {
    headers: { 'SERVICE-PROXY': h.sandbox.demo.proxy.address, 'SERVICE-SECRET': h.sandbox.demo.proxy.secret },
  });
  return (await res.json()) as {
    positions: { instrument_id: number; size: string; liquidation_price: string; unrealized_pnl: string }[];
    withdrawable: string;
  };
}
const btcPosition = () =>
  [...h.sandbox.ctx.venue.findAccount(h.sandbox.demo.owner.address)!.positions].find(([iid]) => iid === 1)?.[1];
const text = async (id: string) => (await popup.getByTestId(id).textContent())!.trim();

beforeAll(async () => {
  h = await launchHarness();
  popup = await h.openPopup();
  expect((await send('vault.create', { password: PASSWORD })).ok).toBe(true);
  expect((await send('vault.importOwnerKey', { privateKey: h.sandbox.demo.owner.privateKey, label: 'Demo' })).ok).toBe(
    true,
  );
  const p = h.sandbox.demo.proxy;
  expect(
    (
      await send('proxy.import', {
        account: h.sandbox.demo.owner.address,
        privateKey: p.privateKey,
        proxy: p.address,
        secret: p.secret,
        expiry: p.expiry,
      })
    ).ok,
  ).toBe(true);
  expect((await send('clob.createOrDerive', { account: h.sandbox.demo.owner.address })).ok).toBe(true);
  await popup.reload();
  await popup.locator('input[name="qty"]').waitFor();
});
afterAll(async () => {
  await h?.close();
});

describe('trader cockpit in Chromium', () => {
  it(
    'shows position, available margin, fee and estimated liquidation before signing; ' +
      'after the fill the position, liquidation price and PnL match the sandbox',
    async () => {
      await popup.locator('select[name="instrument"]').selectOption({ label: 'BTC-PERP (#1)' });
      await popup.getByTestId('ticker').filter({ hasText: 'mark' }).waitFor();
      await popup.locator('input[name="qty"]').fill('2');
      await popup.locator('input[name="price"]').fill('');
      await popup.getByTestId('risk-liq').waitFor();
      const before = await sandboxPortfolio();
      expect(await text('risk-position')).toBe('none');
      // Available margin to 2 decimals with its unit.
      expect(await text('risk-available')).toBe(formatUsdc(before.withdrawable));
      // USDC figures carry thousands separators (the sandbox account holds ≥ 1 000 USDC).
      expect(Number(before.withdrawable)).toBeGreaterThanOrEqual(1000);
      expect(await text('risk-available')).toMatch(/^-?\d{1,3}(,\d{3})+(\.\d+)? USDC$/);
      // Market buy of 2 BTC walks the asks: notional from the book, fee 5 bp of it.
      const notional = Number((await text('risk-notional')).replace(/,| USDC/g, ''));
      expect(notional).toBeGreaterThan(130_000);
      expect(Number((await text('risk-fee')).replace(/,/g, '').split(' ')[0])).toBeCloseTo(notional * 0.0005, 4);
      // Shown to BTC's 0.5 tick with separators.
      expect(await text('risk-liq')).toMatch(/^\d{1,3}(,\d{3})*\.[05]$/);
      const estimated = Number((await text('risk-liq')).replace(/,/g, ''));
      expect(estimated).toBeGreaterThan(10_000);
      await h.screenshot(popup, '30-cockpit-risk-before-signing');
      await popup.locator('input[name="qty"]').press('Enter');
      await popup.getByText(/Filled 2/).waitFor();
      expect(btcPosition()?.size).toBe(200_000_000n);
      // The notice gives the average fill price (to the tick) and the fee with its unit.
      await popup
        .getByTestId('ticket-result')
        .filter({ hasText: /avg \d{2},\d{3}\.[05] · fee [\d,]+\.\d\d USDC/ })
        .waitFor();

      await popup.getByRole('tab', { name: 'Positions' }).click();
      const row = popup.getByTestId('position-1');
      await row.waitFor();
      const after = (await sandboxPortfolio()).positions.find((x) => x.instrument_id === 1)!;
      // Shown to BTC's 0.5 tick: the venue's figure rounded to the tick, with its unit.
      await row
        .getByTestId('position-liq')
        .filter({ hasText: `${formatStep(after.liquidation_price, '0.5')} USDC` })
        .waitFor();
      // The estimate before signing is within 0.5% of the liquidation price the venue reports after the fill.
      expect(Math.abs(estimated - Number(after.liquidation_price)) / Number(after.liquidation_price)).toBeLessThan(
        0.005,
      );
      await row.getByTestId('position-pnl').filter({ hasText: 'USDC' }).waitFor();
      await popup.getByTestId('fills').locator('tbody tr').first().waitFor();
      // Fills carry the fee's unit and the realised PnL.
      expect(await popup.getByTestId('fill-fee').first().textContent()).toMatch(/^\d[\d,]*\.\d\d USDC$/);
      expect(await popup.getByTestId('fill-pnl').first().textContent()).toMatch(/USDC$/);
      // The chart draws once its lazily loaded chunk is in.
      await popup.locator('.chart canvas').first().waitFor();
      await h.screenshot(popup, '31-positions');
    },
  );

  it(
    'protects the whole position with a stop-loss and closes ' + 'the position after a preview and one confirmation',
    async () => {
      const row = popup.getByTestId('position-1');
      // A stop-loss above a long's mark is refused in words before anything is signed.
      await row.locator('input[name="sl"]').fill('90000');
      await row.getByRole('button', { name: 'Protect' }).click();
      await popup.getByText(/Stop-loss must be below .* for a long\./).waitFor();
      await row.locator('input[name="sl"]').fill('50000');
      await row.getByRole('button', { name: 'Protect' }).click();
      await popup.getByText('Protected the whole BTC-PERP (#1) position: stop-loss 50000').waitFor();
      const trigger = [...h.sandbox.ctx.venue.orders.values()].find((o) => o.iid === 1 && o.trigger?.tpsl === 'sl');
      expect(trigger).toMatchObject({
        status: 'untriggered',
        ro: true,
        buy: false,
        qty: 0n,
        trigger: { trp: 5_000_000_000_000n, scope: 'position', armedQty: 200_000_000n },
      });
      await h.screenshot(popup, '32-stop-loss');
      await row.getByRole('button', { name: 'Close BTC-PERP (#1) at market' }).click();
      // A preview first (size, estimated price, fee, realised PnL); nothing is sent until the confirmation.
      await popup.getByTestId('close-preview').waitFor();
      expect(await popup.getByTestId('close-fee').textContent()).toMatch(/USDC$/);
      expect(btcPosition()).toBeDefined();
      await popup.getByTestId('close-confirm').click();
      await popup.getByText('Closed BTC-PERP').waitFor();
      expect(btcPosition()).toBeUndefined();
      await popup.getByText('No open positions.').waitFor();
    },
  );

  it('places an order with the keyboard alone: S, a size preset, ↑ one tick, Enter', async () => {
    await popup.getByRole('tab', { name: 'Perps' }).click();
    const qty = popup.locator('input[name="qty"]');
    await qty.waitFor();
    await popup.locator('select[name="instrument"]').selectOption({ label: 'ETH-PERP (#2)' });
    await popup.waitForFunction(() =>
      (document.querySelector('input[name="price"]') as HTMLInputElement).value.startsWith('31'),
    );
    await qty.focus();
    await popup.keyboard.press('Escape'); // leaves the field: shortcuts act on the ticket
    await popup.keyboard.press('s');
    expect(await popup.getByRole('radio', { name: 'Sell' }).getAttribute('aria-checked')).toBe('true');
    // Selling prefills the best bid of the sandbox's book.
    const bestBid = h.sandbox.ctx.venue.levels(2).bids[0]![0];
    await popup.waitForFunction(
      (b) => (document.querySelector('input[name="price"]') as HTMLInputElement).value === b,
      bestBid,
    );
    await popup.keyboard.press('1'); // 25% of what the free margin allows
    const withdrawable = (await sandboxPortfolio()).withdrawable;
    expect(await qty.inputValue()).toBe(
      maxOrderSize({ withdrawable, price: bestBid, leverage: 10, feeRate: '0.0005', lot: '0.01', fraction: '0.25' }),
    );
    await popup.keyboard.press('ArrowUp'); // one tick above the best bid: rests as a maker order
    const price = await popup.locator('input[name="price"]').inputValue();
    expect(Number(price)).toBeCloseTo(Number(bestBid) + 0.05, 6);
    await h.screenshot(popup, '33-keyboard-ticket');
    await popup.keyboard.press('Enter');
    await popup.getByText(/Resting on the book/).waitFor();
    const placed = [...h.sandbox.ctx.venue.orders.values()].filter(
      (o) => o.iid === 2 && !o.buy && o.status === 'open' && o.owner === h.sandbox.demo.owner.address.toLowerCase(),
    );
    expect(placed).toHaveLength(1);
    expect(placed[0]!.price).toBe(BigInt(Math.round(Number(price) * 1e8)));
    // The notice belongs to ETH-PERP: another instrument starts without it.
    await popup.locator('select[name="instrument"]').selectOption({ label: 'BTC-PERP (#1)' });
    await popup.waitForFunction(() => document.querySelector('[data-testid="ticket-result"]')?.textContent === '');
  });

  it(
    'order book: a ladder for the outcome, a market BUY sized in USDC ' +
      'with its fee shown before signing, then the position and the trade',
    async () => {
      await popup.getByRole('tab', { name: 'Order book' }).click();
      await popup.locator('ul.markets button').first().click();
      await popup.locator('.ladder .level').first().waitFor();
      await popup.locator('select[name="order-type"]').selectOption('FOK');
      await popup.locator('input[name="clob-size"]').fill('10');
      const ask = (await popup.locator('.ladder .ask').last().locator('td').first().textContent())!.trim();
      await popup.locator('.ladder .ask').last().click(); // the best ask (nearest the spread)
      expect(await popup.locator('input[name="clob-price"]').inputValue()).toBe(ask);
      await popup.getByTestId('clob-fee').filter({ hasText: 'fee 0 bp ≈ 0.00 USDC' }).waitFor();
      await h.screenshot(popup, '34-clob-ladder-fee');
      await popup.locator('input[name="clob-size"]').press('Enter');
      await popup.getByText(/matched/).waitFor();
      await popup.getByTestId('clob-trades').locator('li').first().waitFor();
      await popup.getByTestId('clob-portfolio').locator('li').first().waitFor();
      await h.screenshot(popup, '35-clob-portfolio');
    },
  );
});
