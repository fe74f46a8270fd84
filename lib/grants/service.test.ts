/**
 * What a grant covers, as a site probing it would try: a connected site holding a narrow standing grant
 * sends page requests to the real background (fake browser) against the in-process sandbox. Each
 * request outside the grant must open a window (a pending approval naming the limit) and nothing may
 * reach the sandbox before the person decides. Black-box: page requests, the grant service's public
 * methods, the approval registry and the sandbox's request log and order records.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { AUTOLOCK_ALARM } from '../background/index';
import { fromUnits } from '../decimal';

import {
  h,
  restart,
  SITE,
  page,
  popup,
  approvalWindow,
  call,
  owner,
  trading,
  autoCancelAt,
  openPerps,
  BTC,
  ETH,
  ready,
  waitPending,
  btcOnly,
  grant,
  tokenA,
  tokenB,
  mark,
  expectAsks,
  type Bg,
  grantSuite,
} from '../../test/kits/grants';
import { grantUseRecords } from './use-records';

grantSuite('grants');

describe('standing grants deny by default', () => {
  it(
    'a BTC-PERP-only grant does not cover an order-book order, ' +
      'and a one-market order-book grant does not cover ETH-PERP',
    async () => {
      const bg = await ready();
      await grant(bg, btcOnly);
      // 3 000 shares × 0.50 on the order book (1 500 USDC), inside every cap the perps grant has.
      await expectAsks(bg, 'clob_postOrders', {
        orders: [{ tokenId: tokenA(), side: 'BUY', price: '0.50', size: '3000', orderType: 'GTC' }],
      });
      await bg.grants().revokeAll();
      await grant(bg, {
        venue: 'clob',
        markets: [tokenA()],
        allow: { order: true },
        maxNotional: '2000',
        dailyNotional: '20000',
        priceBandPct: '2',
      });
      // 0.6 ETH-PERP at 3 100 (1 860 USDC).
      await expectAsks(
        bg,
        'perps_sendCommand',
        { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.6', p: '3100', tif: 'gtc', po: true }] } },
        /covers only the order book/,
      );
      // Another order-book market asks too; the granted one is covered (signed, no window).
      await expectAsks(
        bg,
        'clob_postOrders',
        { orders: [{ tokenId: tokenB(), side: 'BUY', price: '0.50', size: '100', orderType: 'GTC' }] },
        /is not in this permission/,
      );
      const before = trading();
      await bg.page(page).request('clob_postOrders', {
        orders: [{ tokenId: tokenA(), side: 'BUY', price: '0.50', size: '100', orderType: 'GTC' }],
      });
      expect(bg.registry.size).toBe(0);
      expect(trading() - before).toBe(1);
    },
  );

  it('a grant needs a price band, and an order counts at the higher of its limit and the mark price', async () => {
    const bg = await ready();
    // No band: refused with the field named; the sell at 1 then has no grant and asks.
    const { priceBandPct: _band, ...noBand } = btcOnly;
    await expect(grant(bg, noBand)).rejects.toMatchObject({ name: 'Grants.LimitsError', field: 'limits.priceBandPct' });
    await expectAsks(bg, 'perps_sendCommand', {
      op: { type: 'createOrders', args: [{ iid: 1, buy: false, qty: '0.2', p: '1', tif: 'gtc' }] },
    });
    await grant(bg, btcOnly);
    await expectAsks(
      bg,
      'perps_sendCommand',
      { op: { type: 'createOrders', args: [{ iid: 1, buy: false, qty: '0.2', p: '1', tif: 'gtc' }] } },
      /price 1 is more than 2% from the mark price/,
    );
    // Inside the band, 0.031 BTC at 2 % under the mark is 1 974.7 USDC at its limit but 2 015 at the mark: over 2 000.
    expect(await mark(BTC)).toBe('65000');
    await expectAsks(
      bg,
      'perps_sendCommand',
      { op: { type: 'createOrders', args: [{ iid: 1, buy: false, qty: '0.031', p: '63700', tif: 'gtc', po: true }] } },
      /notional 2015 USDC is above the 2000 USDC allowed per order/,
    );
  });

  it('a stop-market trigger inside the band is a market order: it asks unless the grant allows triggers', async () => {
    const bg = await ready();
    await grant(bg, btcOnly);
    const stop = {
      op: {
        type: 'createOrders',
        args: [{ iid: 1, buy: false, qty: '0.01', tr: { tpsl: 'sl', trp: '64000', market: true } }],
      },
    };
    await expectAsks(bg, 'perps_sendCommand', stop, /trigger \(stop \/ take-profit\) orders are not allowed/);
    // A plain market order asks too ("no market orders").
    await expectAsks(
      bg,
      'perps_sendCommand',
      { op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.001', tif: 'ioc' }] } },
      /market orders are not allowed/,
    );
  });

  it('autoCancel from the page always asks, even { time: 0 } (the dead-man owns it)', async () => {
    const bg = await ready();
    await grant(bg, btcOnly);
    await expectAsks(
      bg,
      'perps_sendCommand',
      { op: { type: 'autoCancel', args: { time: 0 } } },
      /auto-cancel \(dead-man\) timer always needs your approval/,
      autoCancelAt(0),
    );
    const later = Date.now() + 3_600_123;
    await expectAsks(
      bg,
      'perps_sendCommand',
      { op: { type: 'autoCancel', args: { time: later } } },
      undefined,
      autoCancelAt(later),
    );
  });

  it("cancels reach only the orders placed under the grant; cancelAll and the person's own orders ask", async () => {
    const bg = await ready();
    // The person's own ETH order, from the popup.
    const mine = (
      await call(bg, 'perps.send', {
        account: owner(),
        op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '3000', tif: 'gtc', po: true }] },
      })
    ).result as { oid: number }[];
    const myOid = mine[0]!.oid;
    await grant(bg, btcOnly);
    await expectAsks(
      bg,
      'perps_sendCommand',
      { op: { type: 'cancelAll', args: {} } },
      /Cancelling all orders .* always needs your approval/,
    );
    await expectAsks(bg, 'perps_sendCommand', { op: { type: 'cancelAll', args: { iid: 2 } } });
    await expectAsks(
      bg,
      'perps_sendCommand',
      { op: { type: 'cancelOrders', args: [myOid] } },
      new RegExp(`order ${myOid} was not placed under this permission`),
    );
    expect(openPerps().some((o) => o.oid === myOid)).toBe(true);
    // An order the site placed under the grant: its cancel is covered, by id and by client order id.
    const coid = 'ab'.repeat(16);
    const acks = (await bg.page(page).request('perps_sendCommand', {
      op: {
        type: 'createOrders',
        args: [
          { iid: 1, buy: true, qty: '0.01', p: '64000', tif: 'gtc', po: true },
          { iid: 1, buy: true, qty: '0.01', p: '63900', tif: 'gtc', po: true, c: coid },
        ],
      },
    })) as { oid: number }[];
    expect(bg.registry.size).toBe(0);
    await bg.page(page).request('perps_sendCommand', { op: { type: 'cancelOrders', args: [acks[0]!.oid] } });
    await bg.page(page).request('perps_sendCommand', { op: { type: 'cancelOrdersCOID', args: [coid] } });
    expect(bg.registry.size).toBe(0);
    expect(openPerps().map((o) => o.oid)).toEqual([myOid]);
    // Mixed: one of its own and one of the person's asks as a whole.
    await expectAsks(bg, 'perps_sendCommand', { op: { type: 'cancelOrders', args: [acks[0]!.oid, myOid] } });
    expect(openPerps().map((o) => o.oid)).toEqual([myOid]);
  });

  it('the schema and the service refuse a grant without its caps, venue or instruments, naming the field', async () => {
    const bg = await ready();
    const { maxNotional: _m, ...noCap } = btcOnly;
    const { dailyNotional: _d, ...noDaily } = btcOnly;
    const { venue: _v, ...noVenue } = btcOnly;
    await expect(grant(bg, noCap)).rejects.toMatchObject({ name: 'Grants.LimitsError', field: 'limits.maxNotional' });
    await expect(grant(bg, noDaily)).rejects.toMatchObject({
      name: 'Grants.LimitsError',
      field: 'limits.dailyNotional',
    });
    await expect(grant(bg, noVenue)).rejects.toMatchObject({ name: 'Grants.LimitsError', field: 'limits.venue' });
    await expect(grant(bg, { ...btcOnly, instruments: [] })).rejects.toMatchObject({
      name: 'Grants.LimitsError',
      field: 'limits.instruments',
    });
    await expect(grant(bg, { ...btcOnly, allow: { order: true, leverage: true } })).rejects.toMatchObject({
      name: 'Grants.LimitsError',
      field: 'limits.maxLeverage',
    });
    await expect(grant(bg, { ...btcOnly, allow: { order: true, triggers: true } })).rejects.toMatchObject({
      name: 'Grants.LimitsError',
      field: 'limits.allow.triggers',
    });
    await expect(
      grant(bg, {
        venue: 'clob',
        markets: [tokenA()],
        allow: { order: true, cancel: true },
        maxNotional: '1',
        dailyNotional: '1',
        priceBandPct: '2',
      }),
    ).rejects.toMatchObject({ name: 'Grants.LimitsError', field: 'limits.allow.cancel' });
    // Through the approval window's message: the schema refuses before the service sees it.
    const p = bg
      .page(page)
      .request('perps_sendCommand', {
        op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.01', p: '64000', tif: 'gtc', po: true }] },
      })
      .catch((e) => e);
    const [view] = await waitPending(bg);
    expect(view!.grantable).toBe(true);
    expect(view!.markets).toEqual([BTC]);
    const r = await call(bg, 'grant.create', { approvalId: view!.id, limits: noCap, minutes: 60 }, approvalWindow());
    expect(r.error).toMatchObject({ shortMessage: expect.stringContaining('limits.maxNotional') });
    // …and the window may not widen the grant beyond the request it shows.
    const wider = await call(
      bg,
      'grant.create',
      { approvalId: view!.id, limits: { ...btcOnly, instruments: [1, 2] }, minutes: 60 },
      approvalWindow(),
    );
    expect(wider.error).toMatchObject({
      name: 'Grants.LimitsError',
      shortMessage: expect.stringContaining('limits.instruments'),
    });
    const clob = await call(
      bg,
      'grant.create',
      {
        approvalId: view!.id,
        limits: {
          venue: 'clob',
          markets: [tokenA()],
          allow: { order: true },
          maxNotional: '1',
          dailyNotional: '1',
          priceBandPct: '2',
        },
        minutes: 60,
      },
      approvalWindow(),
    );
    expect(clob.error).toMatchObject({
      name: 'Grants.LimitsError',
      shortMessage: expect.stringContaining('limits.venue'),
    });
    expect(((await call(bg, 'grant.list')).result as unknown[]).length).toBe(0);
    bg.registry.decide(view!.id, { approve: false });
    await p;
  });

  it(
    "a grant a page asked for ends at the page's expiry, not a " +
      'millisecond later (the duration is measured before the approval)',
    async () => {
      const bg = await ready();
      const notAfter = Date.now() + 3_599_000;
      const g = await bg
        .grants()
        .create({ origin: SITE, account: owner(), limits: btcOnly as never, durationMs: 3_600_000, notAfter });
      expect(g.expiresAt).toBe(notAfter);
    },
  );

  it('a grant stored by an older version (no venue, no band: "any market") is dropped, not honoured', async () => {
    let bg = await ready();
    const now = Date.now();
    await grantUseRecords(bg.vault()).putGrant(
      {
        id: 'old',
        origin: SITE,
        account: owner(),
        createdAt: now,
        expiresAt: now + 3_600_000,
        allow: { order: true, cancel: true, leverage: false },
        maxNotional: '2000',
        dailyNotional: '20000',
      } as never,
      [],
    );
    // The new version starts on a profile holding the old record (a worker start after an update).
    bg = restart();
    await expectAsks(bg, 'clob_postOrders', {
      orders: [{ tokenId: tokenA(), side: 'BUY', price: '0.50', size: '100', orderType: 'GTC' }],
    });
    expect((await call(bg, 'grant.list')).result).toEqual([]);
    expect(await grantUseRecords(bg.vault()).listGrants()).toEqual([]);
  });

  it('the window offers caps proposed from the equity; the saved grant names its venue and instrument', async () => {
    const bg = await ready();
    const p = bg.page(page).request('perps_sendCommand', {
      op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.01', p: '64000', tif: 'gtc', po: true }] },
    });
    const [view] = await waitPending(bg);
    const offer = (await call(bg, 'grant.offer', { approvalId: view!.id }, approvalWindow())).result as {
      venue: string;
      markets: { id: string; name: string }[];
      equity: string;
      proposal: Record<string, string>;
    };
    const portfolio = (await h.read('portfolio')) as { margin: { total_account_value: string } };
    const equity = portfolio.margin.total_account_value;
    const cents = BigInt(Math.floor(Number(equity) * 100));
    expect(offer).toMatchObject({ venue: 'perps', markets: [{ id: BTC, name: 'BTC-PERP (#1)' }], equity });
    expect(offer.proposal).toEqual({
      maxNotional: (Number(cents / 10n) / 100).toString(),
      dailyNotional: (Number(cents) / 100).toString(),
      priceBandPct: '2',
      slippagePct: '1',
    });
    const created = await call(
      bg,
      'grant.create',
      { approvalId: view!.id, limits: btcOnly, minutes: 60 },
      approvalWindow(),
    );
    expect(created.ok).toBe(true);
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    await p;
    const [g] = (await call(bg, 'grant.list')).result as { venue: string; names: Record<string, string> }[];
    expect(g).toMatchObject({ venue: 'perps', names: { [BTC]: 'BTC-PERP (#1)' } });
    // Order book: the collateral balance.
    const q = bg
      .page(page)
      .request('clob_postOrders', {
        orders: [{ tokenId: tokenA(), side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
      })
      .catch((e) => e);
    const [v2] = await waitPending(bg);
    const offer2 = (await call(bg, 'grant.offer', { approvalId: v2!.id }, approvalWindow())).result as {
      venue: string;
      markets: { name: string }[];
      equity: string;
      proposal: Record<string, string>;
    };
    const collateral = h.ctx.clob.balanceOf(owner());
    expect(offer2).toMatchObject({
      venue: 'clob',
      equity: fromUnits(collateral, 6),
      markets: [
        { name: `Will the sandbox stay up all day? — Yes (token ${tokenA().slice(0, 6)}…${tokenA().slice(-4)})` },
      ],
      proposal: {
        maxNotional: fromUnits(collateral / 10n / 10_000n, 2),
        dailyNotional: fromUnits(collateral / 10_000n, 2),
        priceBandPct: '2',
      },
    });
    bg.registry.decide(v2!.id, { approve: false });
    await q;
  });
});

describe('a grant outlives auto-lock, the owner key does not', () => {
  const autoLock = async (bg: Bg) => {
    await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
      typeof fakeBrowser.alarms.onAlarm.trigger
    >[0]);
    for (let i = 0; i < 200; i++) {
      const s = (await call(bg, 'vault.status')).result as { state: string };
      if (s.state !== 'unlocked') return s.state;
      await new Promise((r) => setTimeout(r, 5));
    }
    return 'unlocked';
  };
  const btcOrder = async (qty = '0.01') => ({
    op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty, p: await mark(BTC), tif: 'gtc', po: true }] },
  });

  it(
    'auto-lock with a live grant keeps trading inside it; the owner key, other ' +
      'requests and popup actions need the password; the last grant ending locks',
    async () => {
      const bg = await ready();
      await grant(bg, btcOnly);
      expect(await autoLock(bg)).toBe('session');
      const status = (await call(bg, 'vault.status')).result as {
        unlocked: boolean;
        session: { origin: string; expiresAt: number }[];
      };
      expect(status.unlocked).toBe(false);
      expect(status.session).toMatchObject([{ origin: SITE }]);
      // Inside the grant: still signed without a window, verified by the sandbox.
      const before = trading();
      await bg.page(page).request('perps_sendCommand', await btcOrder());
      expect(trading() - before).toBe(1);
      expect(bg.registry.size).toBe(0);
      expect(await bg.page(page).request('eth_accounts', undefined)).toEqual([owner()]);
      // Outside the grant: no window (nobody is there to approve), 4900, nothing sent.
      await expect(
        bg.page(page).request('perps_sendCommand', {
          op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '3000', tif: 'gtc', po: true }] },
        }),
      ).rejects.toMatchObject({ code: 4900 });
      await expect(
        bg.page(page).request('perps_sendCommand', {
          op: { type: 'withdraw', args: { account: owner(), token: h.ctx.config.usdc, amount: '1', to: owner() } },
        }),
      ).rejects.toMatchObject({ code: 4900 });
      expect(bg.registry.size).toBe(0);
      expect(trading() - before).toBe(1);
      // The popup: owner key, backup, settings, popup trading, audit, new keys all need the password.
      for (const [type, payload] of [
        ['vault.revealOwnerKey', { address: owner(), password: 'a good password' }],
        ['vault.exportBackup', {}],
        ['settings.set', { autoLockMinutes: 30 }],
        [
          'perps.send',
          {
            account: owner(),
            op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.01', p: '60000', tif: 'gtc' }] },
          },
        ],
        ['vault.generateOwnerKey', {}],
        ['audit.list', {}],
      ] as const) {
        expect((await call(bg, type, payload)).error, type).toMatchObject({ name: 'Vault.LockedError', code: 4900 });
      }
      expect(trading() - before).toBe(1);
      // The password brings everything back, with the grant still live.
      expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
      expect(((await call(bg, 'vault.status')).result as { state: string }).state).toBe('unlocked');
      expect((await call(bg, 'grant.list')).result).toHaveLength(1);
      // Auto-lock again; revoking the last grant (from the popup) ends the session: fully locked.
      expect(await autoLock(bg)).toBe('session');
      const [g] = (await call(bg, 'grant.list')).result as { id: string }[];
      expect((await call(bg, 'grant.revoke', { id: g!.id })).ok).toBe(true);
      for (let i = 0; i < 200 && ((await call(bg, 'vault.status')).result as { state: string }).state !== 'locked'; i++)
        await new Promise((r) => setTimeout(r, 5));
      expect(((await call(bg, 'vault.status')).result as { state: string }).state).toBe('locked');
      await expect(bg.page(page).request('perps_sendCommand', await btcOrder())).rejects.toMatchObject({ code: 4900 });
    },
  );

  it('auto-lock with no live grant locks fully; Lock in a trading session ends the grant', async () => {
    const bg = await ready();
    expect(await autoLock(bg)).toBe('locked');
    expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
    await grant(bg, btcOnly);
    expect(await autoLock(bg)).toBe('session');
    expect((await call(bg, 'vault.lock')).ok).toBe(true);
    expect(((await call(bg, 'vault.status')).result as { state: string }).state).toBe('locked');
    expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
    expect((await call(bg, 'grant.list')).result).toEqual([]);
  });
});
