import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  cancelOrders,
  cancelOrdersCOID,
  createOrders,
  createProxy,
  deleteProxy,
  internalTransfer,
  updateLeverage,
  withdraw,
} from '../perps/commands';
import { signPerpsCommand } from '../perps/envelope';
import { PerpsGatewayError, PerpsRateLimitedError } from '../perps/errors';
import { fetchPerpsDomains } from '../perps/client';
import { startHarness, type Harness } from '../../test/kits/sandbox';

const COID = 'c0ffee00c0ffee00c0ffee00c0ffee00';
let h: Harness;

/** The venue's order shape (`GET /v1/account/orders`, an array). */
type OrderView = {
  order_id: number;
  status: string;
  filled_quantity: string;
  resting_quantity: string;
  client_order_id?: string;
};
const orders = async (query: Record<string, string | number | undefined> = {}) =>
  (await h.read('orders', query)) as OrderView[];
/** Balance and positions from the venue's reads (`/v1/account/balances`, `/v1/account/portfolio`). */
const summary = async () => {
  const [bal] = (await h.read('balances')) as { balance: string }[];
  const p = (await h.read('portfolio')) as {
    positions: { instrument_id: number; size: string; entry_price: string }[];
  };
  return {
    balance: bal!.balance,
    positions: p.positions.map(({ instrument_id, size, entry_price }) => ({ instrument_id, size, entry_price })),
  };
};
async function gatewayError(p: Promise<unknown>): Promise<PerpsGatewayError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(PerpsGatewayError);
    return err as PerpsGatewayError;
  }
  throw new Error('expected the gateway to refuse');
}

beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

describe('perps gateway: reads', () => {
  it('serves exchange info that yields the signing domains', async () => {
    const d = await fetchPerpsDomains(h.perps);
    expect(d.domain).toEqual(h.ctx.config.perpsDomain);
    expect(d.withdrawDomain.verifyingContract).toBe(h.ctx.config.perpsWithdrawDomain.verifyingContract);
  });

  it('refuses proxy-header reads with a wrong secret', async () => {
    const err = await gatewayError(h.read('credentials', undefined, { proxy: h.proxyAuth.proxy, secret: 'nope' }));
    expect(err.status).toBe(401);
  });

  it('lists credentials, config (filtered), referral, and creates the invite code idempotently', async () => {
    const creds = (await h.read('credentials')) as { address: string; keys: { proxy: string }[] };
    expect(creds.address).toBe(h.owner.address);
    expect(creds.keys.map((k) => k.proxy)).toEqual([h.proxy.address]);
    expect(await h.read('config', { instrument_id: 2 })).toEqual([{ instrument_id: 2, leverage: 10, cross: true }]);
    const first = (await h.read('invite')) as { code: string; cooldown_ms: null };
    const second = (await h.read('invite')) as { code: string };
    expect(second.code).toBe(first.code);
    expect(first.cooldown_ms).toBeNull();
    expect((await h.read('referral')) as { code: string; fee_share_rate: string }).toMatchObject({
      code: first.code,
      fee_share_rate: '0.2',
    });
  });

  it('moves a deposit from pending to confirmed as confirmations accrue', async () => {
    type Dep = { status: string; confirmations: number; required_confirmations: number; amount: string };
    const read = async (status?: string) =>
      ((await h.read('deposits', { status })) as { data: Dep[]; more: boolean }).data;
    const pending = await read('pending');
    expect(pending).toHaveLength(1);
    expect(pending[0]!.confirmations).toBe(0);
    const before = Number((await summary()).balance);
    h.clock.advance(6 * h.ctx.config.depositConfirmationMs);
    expect((await read('pending'))[0]!.confirmations).toBe(6);
    h.clock.advance(6 * h.ctx.config.depositConfirmationMs);
    expect(await read('pending')).toHaveLength(0);
    expect(await read('confirmed')).toHaveLength(3);
    expect(Number((await summary()).balance)).toBe(before + 1500);
    await expect(h.read('deposits', { status: 'lost' })).rejects.toThrow();
  });

  it('pages hourly funding at 100 entries with more', async () => {
    const end = h.clock.now;
    const page = (await h.read('funding', { instrument_id: 1, start_time: end - 200 * 3_600_000, end_time: end })) as {
      data: { timestamp: number; funding_rate: string }[];
      more: boolean;
    };
    expect(page.data).toHaveLength(100);
    expect(page.more).toBe(true);
    expect(page.data[1]!.timestamp - page.data[0]!.timestamp).toBe(3_600_000);
    const last = (await h.read('funding', { instrument_id: 1, start_time: end - 10 * 3_600_000, end_time: end })) as {
      data: unknown[];
      more: boolean;
    };
    expect(last.more).toBe(false);
  });
});

describe('perps gateway: orders', () => {
  it('rests a post-only gtc order, reports it in get-orders, and cancels it by id and by client id', async () => {
    const acks = (await h.send(
      h.proxy,
      createOrders({ orders: [{ iid: 2, buy: true, qty: '1', p: '3000', tif: 'gtc', po: true, c: COID }] }),
    )) as {
      status: string;
      oid: number;
      coid: string;
    }[];
    expect(acks).toEqual([{ status: 'ok', oid: acks[0]!.oid, coid: COID }]);
    expect((await orders({ order_id: acks[0]!.oid }))[0]).toMatchObject({
      status: 'open',
      resting_quantity: '1',
      filled_quantity: '0',
      client_order_id: COID,
    });
    await h.send(h.proxy, cancelOrdersCOID({ coids: [COID] }));
    expect((await orders({ client_order_id: COID }))[0]!.status).toBe('cancelled');

    const [again] = (await h.send(
      h.proxy,
      createOrders({ orders: [{ iid: 2, buy: true, qty: '1', p: '3000', tif: 'gtc' }] }),
    )) as { oid: number }[];
    expect(await h.send(h.proxy, cancelOrders({ oids: [again!.oid, 999_999] }))).toEqual([
      { status: 'ok', oid: again!.oid },
      { status: 'err', oid: 999_999, error: 'order_not_found' },
    ]);
  });

  it('fills a crossing ioc order and opens a position', async () => {
    const [ack] = (await h.send(h.proxy, createOrders({ orders: [{ iid: 2, buy: true, qty: '2', tif: 'ioc' }] }))) as {
      oid: number;
    }[];
    expect((await orders({ order_id: ack!.oid }))[0]).toMatchObject({ status: 'filled', filled_quantity: '2' });
    expect((await summary()).positions).toEqual([{ instrument_id: 2, size: '2', entry_price: '3121' }]);
  });

  it('rejects post-only orders that cross, unfillable fok, and reduce-only that would grow a position', async () => {
    const acks = (await h.send(
      h.proxy,
      createOrders({
        orders: [
          { iid: 2, buy: true, qty: '1', p: '3200', tif: 'gtc', po: true },
          { iid: 2, buy: true, qty: '50', p: '3121', tif: 'fok' },
          { iid: 2, buy: true, qty: '1', tif: 'ioc', ro: true },
        ],
      }),
    )) as { oid: number }[];
    const views = await Promise.all(acks.map(async (a) => (await orders({ order_id: a.oid }))[0]!));
    expect(views.map((o) => o.status)).toEqual(['post_only_rejected', 'fok_unfilled', 'reduce_only_invalid']);
  });

  it('answers insufficient_margin for real and places nothing', async () => {
    const err = await gatewayError(
      h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, qty: '500', p: '60000', tif: 'gtc' }] })),
    );
    expect(err.error).toBe('insufficient_margin');
    expect(await orders()).toEqual([]);
  });

  it('updates leverage and refuses leverage above the instrument maximum', async () => {
    expect(await h.send(h.proxy, updateLeverage({ iid: 3, lev: 5, cross: false }))).toEqual({
      status: 'ok',
      instrument_id: 3,
      leverage: 5,
      cross: false,
    });
    expect(await h.read('config', { instrument_id: 3 })).toEqual([{ instrument_id: 3, leverage: 5, cross: false }]);
    expect((await gatewayError(h.send(h.proxy, updateLeverage({ iid: 3, lev: 21, cross: true })))).error).toBe(
      'invalid_leverage',
    );
  });
});

describe('perps gateway: owner commands', () => {
  it('transfers internally between demo accounts, listed on both sides with direction filters', async () => {
    const to = h.demo.counterparty.address;
    const res = (await h.send(
      h.owner,
      internalTransfer({ account: h.owner.address, token: h.ctx.config.usdc, amount: '12.5', to, label: 'lunch' }),
    )) as {
      status: string;
      transfer_id: number;
    };
    expect(res.status).toBe('ok');
    const out = (await h.read('internalTransfers', { direction: 'out' })) as {
      data: { transfer_id: number; amount: string; label: string }[];
    };
    expect(out.data[0]).toMatchObject({
      transfer_id: res.transfer_id,
      amount: '12.5',
      label: 'lunch',
      direction: 'out',
      counterparty: to,
    });
    expect(
      ((await h.read('internalTransfers', { direction: 'in' })) as { data: unknown[] }).data.every(
        (x) => (x as { direction: string }).direction === 'in',
      ),
    ).toBe(true);
    await expect(h.read('internalTransfers', { direction: 'sideways' })).rejects.toThrow();
  });

  it('withdraws with the owner key (ts in seconds) and refuses the proxy key', async () => {
    const before = Number((await summary()).balance);
    const cmd = withdraw({
      account: h.owner.address,
      token: h.ctx.config.usdc,
      amount: '10000000',
      to: h.demo.counterparty.address,
    });
    const res = (await h.send(h.owner, cmd)) as { status: string; withdraw_id: number };
    expect(res.status).toBe('ok');
    expect(Number((await summary()).balance)).toBe(before - 10);
    expect((await gatewayError(h.send(h.proxy, cmd))).error).toBe('signer_mismatch');
  });

  it('answers insufficient_margin with the withdraw_id on an oversized withdraw', async () => {
    const err = await gatewayError(
      h.send(
        h.owner,
        withdraw({
          account: h.owner.address,
          token: h.ctx.config.usdc,
          amount: '999999999999999',
          to: h.owner.address,
        }),
      ),
    );
    expect(err.error).toBe('insufficient_margin');
    expect(err.withdrawId).toBeTypeOf('number');
  });

  it('issues a proxy (secret returned once), trades with it, deletes it, then refuses it', async () => {
    const fresh = privateKeyToAccount(generatePrivateKey());
    const issued = (await h.send(
      h.owner,
      createProxy({ owner: h.owner.address, proxy: fresh.address, expiry: h.clock.now + 86_400_000, label: 'desk' }),
    )) as {
      status: string;
      secret: string;
    };
    expect(issued.status).toBe('ok');
    expect(issued.secret.length).toBeGreaterThan(20);
    const keys = ((await h.read('credentials')) as { keys: { proxy: string; label: string }[] }).keys;
    expect(keys).toContainEqual(expect.objectContaining({ proxy: fresh.address, label: 'desk' }));
    await h.send(fresh, createOrders({ orders: [{ iid: 3, buy: true, qty: '1', p: '100', tif: 'gtc' }] }));
    expect(await h.read('credentials', undefined, { proxy: fresh.address, secret: issued.secret })).toBeTruthy();
    expect(await h.send(h.owner, deleteProxy({ proxy: fresh.address }))).toEqual({ status: 'ok' });
    expect((await gatewayError(h.send(fresh, cancelOrders({ oids: [1] })))).error).toBe('unknown_proxy');
  });

  it('opens an account for a brand-new owner on its first proxy issuance', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const proxy = privateKeyToAccount(generatePrivateKey());
    const issued = (await h.send(
      owner,
      createProxy({ owner: owner.address, proxy: proxy.address, expiry: h.clock.now + 3_600_000 }),
    )) as { secret: string };
    const creds = (await h.read('credentials', undefined, { proxy: proxy.address, secret: issued.secret })) as {
      address: string;
    };
    expect(creds.address).toBe(owner.address);
  });
});

describe('perps gateway: verification rules change no state', () => {
  const restingOrder = () => createOrders({ orders: [{ iid: 2, buy: true, qty: '1', p: '3000', tif: 'gtc' }] });

  it('wrong signer → 401 unknown_proxy', async () => {
    const err = await gatewayError(h.send(privateKeyToAccount(generatePrivateKey()), restingOrder()));
    expect([err.status, err.error]).toEqual([401, 'unknown_proxy']);
    expect(await orders()).toEqual([]);
  });

  it('expired proxy → 401 proxy_expired', async () => {
    const fresh = privateKeyToAccount(generatePrivateKey());
    await h.send(h.owner, createProxy({ owner: h.owner.address, proxy: fresh.address, expiry: h.clock.now + 60_000 }));
    h.clock.advance(61_000);
    const err = await gatewayError(h.send(fresh, restingOrder()));
    expect([err.status, err.error]).toEqual([401, 'proxy_expired']);
  });

  it('tampered body field → signature no longer matches (401)', async () => {
    const cmd = restingOrder();
    const env = await signPerpsCommand(h.proxy, { command: cmd, domain: h.ctx.config.perpsDomain, nowMs: h.clock.now });
    const tampered = { ...env, op: { ...env.op, args: [{ ...(env.op.args as object[])[0], qty: '100' }] } };
    const res = await h.raw('POST', '/v1/trade/orders', tampered);
    expect(res.status).toBe(401);
    expect(await orders()).toEqual([]);
  });

  it('replayed (signer, salt, ts) → 409 and no second order', async () => {
    const env = await signPerpsCommand(h.proxy, {
      command: restingOrder(),
      domain: h.ctx.config.perpsDomain,
      nowMs: h.clock.now,
    });
    expect((await h.raw('POST', '/v1/trade/orders', env)).status).toBe(200);
    const again = await h.raw('POST', '/v1/trade/orders', env);
    expect([again.status, (again.body as { error: string }).error]).toEqual([409, 'replayed']);
    expect(await orders()).toHaveLength(1);
  });

  it('stale and future ts, past exp and exp beyond the command timeout are refused', async () => {
    const t = h.clock.now;
    const timeout = h.ctx.config.commandTimeoutMs;
    const cases: [Parameters<Harness['send']>[2], string][] = [
      [{ nowMs: t - timeout - 1_000 }, 'stale_timestamp'],
      [{ nowMs: t + 60_000 }, 'future_timestamp'],
      [{ nowMs: t - 10_000, exp: t - 1 }, 'expired'],
      [{ exp: t + timeout + 1_000 }, 'exp_beyond_command_timeout'],
    ];
    for (const [extra, error] of cases) {
      expect((await gatewayError(h.send(h.proxy, restingOrder(), extra))).error).toBe(error);
    }
    expect(await orders()).toEqual([]);
  });

  it('a malformed body names the field and a wrong command for the endpoint is refused', async () => {
    const bad = await h.raw('POST', '/v1/trade/orders', {
      op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '1e2', tif: 'ioc' }] },
      sig: '0x' + '1'.repeat(130),
      salt: 1,
      ts: 1,
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 'err', error: 'invalid_request', field: 'op.args[0].qty' });
    const env = await signPerpsCommand(h.proxy, {
      command: cancelOrders({ oids: [1] }),
      domain: h.ctx.config.perpsDomain,
      nowMs: h.clock.now,
    });
    expect((await h.raw('POST', '/v1/trade/orders', env)).body).toMatchObject({ error: 'wrong_command_for_endpoint' });
    expect((await h.raw('POST', '/v1/trade/orders', '{nope')).body).toMatchObject({ error: 'invalid_json' });
  });
});

describe('perps gateway: weights', () => {
  it('answers 429 with Retry-After over the request-weight budget and counts nothing refused', async () => {
    await h.close();
    h = await startHarness({ config: { perpsRequestBudget: { limit: 20, windowMs: 10_000 } } });
    for (let i = 0; i < 2; i++) await h.read('deposits'); // 10 each
    const res = await fetch(`${h.perps}/v1/account/deposits`, {
      headers: { 'SERVICE-PROXY': h.proxyAuth.proxy, 'SERVICE-SECRET': h.proxyAuth.secret },
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
    h.clock.advance(10_001);
    expect(await h.read('deposits')).toBeTruthy();
  });

  it('refuses a createOrders over the action-weight budget and places nothing', async () => {
    await h.close();
    h = await startHarness({ config: { perpsActionBudget: { limit: 3, windowMs: 10_000 } } });
    const four = createOrders({
      orders: Array.from({ length: 4 }, () => ({ iid: 2, buy: true, qty: '1', p: '3000', tif: 'gtc' as const })),
    });
    const err = await gatewayError(h.send(h.proxy, four));
    expect(err).toBeInstanceOf(PerpsRateLimitedError);
    expect(err.retryAfterMs).toBeGreaterThan(0);
    expect(await orders()).toEqual([]);
  });
});
