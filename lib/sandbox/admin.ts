/**
 * Sandbox-only controls under `/admin` (test hooks; no venue has them): the exchange mode, silent and
 * slow venues, the request log, deposits to a perps account, order-book funders,
 * market resolution, an order-book market's tick size, and the withdrawals both venues recorded. Requests to `/admin/*`
 * are not logged. Bodies are JSON; a malformed one answers 400 naming what is expected.
 */
import { Hono } from 'hono';
import * as v from 'valibot';
import { isAddress, type Address } from 'viem';
import type { SandboxContext, SilentService } from './context';
import { jsonBody, randomBytes } from './http';
import { toUnits } from '../decimal';
import type { ExchangeMode } from './clob/venue';

/** The services `/admin/silence` and `/admin/delay` can act on. */
export const SILENCEABLE: readonly SilentService[] = ['perps', 'clob'];
const MODES: readonly ExchangeMode[] = ['normal', 'disabled', 'cancel-only', 'post-only', 'restarting'];

const address = v.custom<Address>((s) => typeof s === 'string' && isAddress(s, { strict: false }));
const service = v.picklist(SILENCEABLE);
const modeBody = v.object({ mode: v.picklist(MODES), retry_after_seconds: v.optional(v.unknown()) });
const silenceBody = v.object({ service, silent: v.boolean() });
const delayBody = v.object({ service, ms: v.pipe(v.number(), v.safeInteger(), v.minValue(0), v.maxValue(120_000)) });
const depositBody = v.object({ account: v.unknown(), amount: v.unknown(), confirmations: v.optional(v.unknown()) });
const funderBody = v.object({ address, funder: address });
const resolveBody = v.object({ condition_id: v.string(), winner: v.picklist([0, 1]) });
const tickBody = v.object({
  condition_id: v.string(),
  tick_size: v.pipe(
    v.string(),
    v.regex(/^0\.\d{1,6}$/),
    v.check((t) => Number(t) > 0),
  ),
});
const markBody = v.object({
  instrument_id: v.pipe(v.number(), v.safeInteger()),
  price: v.pipe(v.string(), v.regex(/^\d{1,12}(\.\d{1,8})?$/)),
});

/** The admin app of `ctx` (paths relative to its `/admin` mount). */
export function adminRoutes(ctx: SandboxContext): Hono {
  const admin = new Hono();
  admin.get('/state', (c) =>
    c.json({
      clobMode: ctx.clob.mode,
      retryAfterSeconds: ctx.clob.retryAfterSeconds,
      now: ctx.now(),
      requests: ctx.requestLog.length,
    }),
  );

  /** `{ mode, retry_after_seconds? }`: the order book's mode, and the `Retry-After` it answers in post-only mode. */
  admin.post('/clob-mode', async (c) => {
    const b = v.safeParse(modeBody, await jsonBody(c));
    if (!b.success) return c.json({ error: `mode must be one of ${MODES.join(', ')}` }, 400);
    ctx.clob.mode = b.output.mode;
    const retry = b.output.retry_after_seconds;
    if (typeof retry === 'number' && Number.isSafeInteger(retry) && retry > 0) ctx.clob.retryAfterSeconds = retry;
    return c.json({ mode: ctx.clob.mode, retry_after_seconds: ctx.clob.retryAfterSeconds });
  });

  // Test hook: `{ service: 'perps' | 'clob', silent: boolean }` makes a venue stop answering.
  admin.post('/silence', async (c) => {
    const b = v.safeParse(silenceBody, await jsonBody(c));
    if (!b.success) return c.json({ error: `service must be one of ${SILENCEABLE.join(', ')}; silent a boolean` }, 400);
    ctx.setSilent(b.output.service, b.output.silent);
    return c.json({ silent: [...ctx.silent] });
  });

  // Test hook: `{ service: 'perps' | 'clob', ms }` delays every answer of a venue by `ms` (0 ends it).
  admin.post('/delay', async (c) => {
    const b = v.safeParse(delayBody, await jsonBody(c));
    if (!b.success)
      return c.json({ error: `service must be one of ${SILENCEABLE.join(', ')}; ms an integer from 0 to 120000` }, 400);
    const { service: s, ms } = b.output;
    if (ms === 0) ctx.delayMs.delete(s);
    else ctx.delayMs.set(s, ms);
    return c.json({ service: s, ms });
  });

  // Test hook: `{ instrument_id, price }` moves a perps mark; triggers crossed by it fire and
  // accounts below maintenance are liquidated before it answers.
  admin.post('/mark', async (c) => {
    const b = v.safeParse(markBody, await jsonBody(c));
    const inst = b.success ? ctx.venue.instruments.get(b.output.instrument_id) : undefined;
    if (!b.success || !inst)
      return c.json({ error: 'instrument_id must be a perps instrument; price a decimal string' }, 400);
    ctx.venue.setMark(inst.iid, toUnits(b.output.price, 8) ?? inst.mark);
    return c.json({ instrument_id: inst.iid, mark: b.output.price });
  });

  /**
   * `{ condition_id, tick_size }` (a decimal below 1, e.g. "0.001"): the market's tick size changes, as
   * the venue changes it near the price extremes — orders are checked against the new one and the
   * market channel sends `tick_size_change` to the sockets watching its tokens.
   */
  admin.post('/tick', async (c) => {
    const b = v.safeParse(tickBody, await jsonBody(c));
    const m = b.success
      ? ctx.clob.markets.find((x) => x.conditionId.toLowerCase() === b.output.condition_id.toLowerCase())
      : undefined;
    if (!b.success || !m)
      return c.json({ error: 'condition_id must name a market; tick_size a decimal below 1 such as "0.001"' }, 400);
    const old = m.tickSize;
    m.tickSize = b.output.tick_size;
    return c.json({ condition_id: m.conditionId, old_tick_size: old, tick_size: m.tickSize });
  });

  admin.get('/requests', (c) => c.json(ctx.requestLog));
  admin.delete('/requests', (c) => {
    ctx.requestLog.length = 0;
    return c.json({ ok: true });
  });

  /** `{ account, amount (base units), confirmations? }`: a pending USDC deposit, credited once confirmed. */
  admin.post('/deposit', async (c) => {
    const b = v.safeParse(depositBody, await jsonBody(c));
    const { account, amount, confirmations } = b.success
      ? b.output
      : { account: undefined, amount: undefined, confirmations: undefined };
    if (!v.is(address, account)) return c.json({ error: 'account must be an address' }, 400);
    if (typeof amount !== 'string' || !/^[1-9]\d{0,20}$/.test(amount))
      return c.json({ error: 'amount must be base units' }, 400);
    const a = ctx.venue.account(account);
    const hash = `0x${Buffer.from(randomBytes(32)).toString('hex')}`;
    a.deposits.push({
      hash,
      asset: 'USDC',
      amount: BigInt(amount),
      from: '0x0000000000000000000000000000000000000000',
      to: a.owner,
      requiredConfirmations: typeof confirmations === 'number' ? confirmations : 12,
      created: ctx.now(),
      credited: false,
    });
    return c.json({ hash });
  });

  /** `{ address, funder }`: `funder` is the profile (maker) of `address`'s type-1/2 orders, credited 1000 USDC. */
  admin.post('/funder', async (c) => {
    const b = v.safeParse(funderBody, await jsonBody(c));
    if (!b.success) return c.json({ error: 'address and funder must be addresses' }, 400);
    ctx.clob.funders.set(b.output.address.toLowerCase(), b.output.funder.toLowerCase());
    ctx.clob.credit(b.output.funder, 1_000_000_000n);
    return c.json({ ok: true });
  });

  /**
   * `{ condition_id, winner: 0 | 1 }`: resolves an order-book market (closed to orders; outcome `winner`
   * pays 1 collateral per share to whoever redeems through a deposit-wallet batch; data v2 positions turn
   * `redeemable`).
   */
  admin.post('/resolve', async (c) => {
    const b = v.safeParse(resolveBody, await jsonBody(c));
    const m = b.success
      ? ctx.clob.markets.find((x) => x.conditionId.toLowerCase() === b.output.condition_id.toLowerCase())
      : undefined;
    if (!b.success || !m) return c.json({ error: 'condition_id must name a market; winner 0 or 1' }, 400);
    m.closed = true;
    ctx.relayerChain.resolutions.set(m.conditionId.toLowerCase(), b.output.winner);
    return c.json({ condition_id: m.conditionId, winner: b.output.winner });
  });

  admin.get('/withdrawals', (c) =>
    c.json({
      perps: [...ctx.venue.accounts.values()].flatMap((a) =>
        a.withdrawals.map((w) => ({ account: a.owner, ...w, amount: w.amount.toString() })),
      ),
      bridge: ctx.bridgeWithdrawals,
    }),
  );
  return admin;
}
