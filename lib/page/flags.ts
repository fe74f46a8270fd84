/**
 * The approval window's risk flags of page requests, in a user's words: perps (a new destination for
 * funds, a batch, a price more than 5% through the book, an order that flips a position, raised
 * leverage), order book (a batch, rounding: `lib/approvals/rounding-flags.ts`) and requested grants
 * (caps above what Countersign would propose). A read a flag needs that fails skips that flag only.
 *
 * What is read from a command's JSON args was validated when the command was built (`commandFromBody`);
 * the gateway's answers are read for the fields the flags use only. A read of another shape throws
 * where a failed read does, and its flag is skipped.
 */
import * as v from 'valibot';
import type { Address } from 'viem';
import { clobRoundingFlags } from '../approvals/rounding-flags';
import type { ClobOrderRequest } from '../clob/request';
import { toUnits } from '../decimal';
import { groupDecimal } from '../format';
import type { GrantLimits } from '../grants/evaluate';
import type { GrantOffer } from '../grants/offer';
import type { PerpsCommand } from '../perps/commands';
import type { SigningArtifact } from '../signer/artifact';
import type { ProviderDeps } from './context';

/** A withdraw's or internal transfer's args: the account the funds leave and their destination `to`. */
export const fundsArgs = v.looseObject({ account: v.string(), to: v.string() });
/** A createOrders' args: instrument id, side, quantity and price (decimal strings), reduce-only, client order id. */
export const orderArgs = v.array(
  v.looseObject({
    iid: v.number(),
    buy: v.boolean(),
    qty: v.string(),
    p: v.optional(v.string()),
    ro: v.optional(v.boolean()),
    c: v.optional(v.string()),
    tr: v.optional(v.looseObject({ tpsl: v.string(), trp: v.string() })),
  }),
);
const tickersAnswer = v.array(
  v.looseObject({ instrument_id: v.optional(v.number()), mark_price: v.optional(v.string()) }),
);
const leverageArgs = v.looseObject({ iid: v.number(), lev: v.number() });
const portfolioAnswer = v.looseObject({
  positions: v.optional(v.array(v.looseObject({ instrument_id: v.number(), size: v.string() }))),
});
const bookAnswer = v.looseObject({
  bids: v.array(v.tuple([v.string(), v.string()])),
  asks: v.array(v.tuple([v.string(), v.string()])),
});
const configAnswer = v.array(v.looseObject({ leverage: v.number() }));
const destinationsRecord = v.array(v.string());
/** `settings` key of the destinations funds were sent to from pages. */
const DESTINATIONS_KEY = 'usedDestinations';

/** The lowercase addresses funds were sent to from pages before (at most 500; none when unreadable). */
async function usedDestinations(d: Pick<ProviderDeps, 'db'>): Promise<string[]> {
  const used = await d.db.get('settings', DESTINATIONS_KEY);
  return v.is(destinationsRecord, used) ? used : [];
}

/** Adds `to` (lowercased) to the destinations funds were sent to (the newest 500). */
export async function rememberDestination(d: Pick<ProviderDeps, 'db'>, to: string): Promise<void> {
  const used = await usedDestinations(d);
  if (!used.includes(to.toLowerCase()))
    await d.db.put('settings', [...used, to.toLowerCase()].slice(-500), DESTINATIONS_KEY);
}

/**
 * The flags of a perps command for `account` (reads the portfolio, the book, the tickers of trigger orders and the
 * leverage config as the command needs).
 */
export async function perpsFlags(
  d: Pick<ProviderDeps, 'db' | 'service'>,
  account: Address,
  cmd: PerpsCommand,
): Promise<string[]> {
  const flags: string[] = [];
  if (cmd.type === 'withdraw' || cmd.type === 'internalTransfer') {
    const { to } = v.parse(fundsArgs, cmd.body.args);
    if (!(await usedDestinations(d)).includes(to.toLowerCase()))
      flags.push('A new address: you have never sent funds here.');
  }
  if (cmd.type === 'createOrders') {
    const orders = v.parse(orderArgs, cmd.body.args);
    if (orders.length > 1) flags.push(`A batch of ${orders.length} orders.`);
    // The portfolio and each instrument's book are read at once (a book read once per instrument); the flags keep their
    // order.
    const portfolio = d.service.reads.perpsRead(account, 'portfolio', undefined, { draw: 'site' }).then(
      (a) => v.parse(portfolioAnswer, a).positions ?? [],
      () => [], // no portfolio read: skip the flip check
    );
    const books = new Map<number, Promise<v.InferOutput<typeof bookAnswer> | undefined>>();
    for (const o of orders) {
      if (o.p && !books.has(o.iid))
        books.set(
          o.iid,
          d.service.reads.perpsBook(o.iid).then(
            (b) => v.parse(bookAnswer, b),
            () => undefined,
          ),
        ); // no book: no flag
    }
    const positions: { instrument_id: number; size: string }[] = await portfolio;
    for (const o of orders) {
      const book = o.p ? await books.get(o.iid) : undefined;
      if (o.p && book) {
        const best = Number(o.buy ? book.asks[0]?.[0] : book.bids[0]?.[0]);
        const p = Number(o.p);
        if (best > 0 && (o.buy ? p > best * 1.05 : p < best * 0.95))
          flags.push(
            `The price ${groupDecimal(o.p)} is more than 5% through the book (best ${o.buy ? 'ask' : 'bid'} ${best}).`,
          );
      }
      const pos = Number(positions.find((x) => x.instrument_id === o.iid)?.size ?? '0');
      if (!o.ro && pos !== 0 && (o.buy ? pos < 0 : pos > 0) && Number(o.qty) > Math.abs(pos))
        flags.push('Reduce-only is off and this order flips your position.');
    }
    flags.push(...(await crossedTriggers(d, orders)));
  }
  if (cmd.type === 'updateLeverage') {
    try {
      const { iid, lev } = v.parse(leverageArgs, cmd.body.args);
      const cfg = v.parse(
        configAnswer,
        await d.service.reads.perpsRead(account, 'config', { instrument_id: iid }, { draw: 'site' }),
      );
      if (cfg[0] && lev > cfg[0].leverage) flags.push(`Leverage raised from ${cfg[0].leverage}× to ${lev}×.`);
    } catch {
      /* unknown current leverage */
    }
  }
  return flags;
}

/**
 * A take-profit or stop-loss whose trigger the mark has already crossed fires as soon as the venue has it:
 * one flag per such order, with the mark (the tickers read; no read: no flag). A trigger is crossed as the
 * venue fires it: an exit buy's stop-loss and an exit sell's take-profit when the mark is at or above the
 * trigger price, the other two at or below.
 */
async function crossedTriggers(
  d: Pick<ProviderDeps, 'service'>,
  orders: v.InferOutput<typeof orderArgs>,
): Promise<string[]> {
  const flags: string[] = [];
  const marks = new Map<number, Promise<number | undefined>>();
  for (const o of orders) {
    if (!o.tr) continue;
    if (!marks.has(o.iid)) {
      const read = d.service.reads.perpsRead(undefined, 'tickers', { instrument_id: o.iid }, { draw: 'site' });
      marks.set(
        o.iid,
        read.then(
          (t) =>
            Number(
              v.parse(tickersAnswer, t).find((x) => x.instrument_id === undefined || x.instrument_id === o.iid)
                ?.mark_price,
            ) || undefined,
          () => undefined,
        ),
      );
    }
    const mark = await marks.get(o.iid);
    const trp = Number(o.tr.trp);
    if (mark === undefined || !(trp > 0)) continue;
    const up = o.buy ? o.tr.tpsl === 'sl' : o.tr.tpsl === 'tp';
    if (up ? mark >= trp : mark <= trp) {
      const what = o.tr.tpsl === 'tp' ? 'take-profit' : 'stop-loss';
      flags.push(
        `The ${what} at ${groupDecimal(o.tr.trp)} fires at once: ` +
          `the mark is ${groupDecimal(String(mark))}, already past it.`,
      );
    }
  }
  return flags;
}

/** The flags of built order-book orders: a batch, and what rounding changed from the `orders` asked. */
export function clobFlags(orders: readonly ClobOrderRequest[], a: SigningArtifact): string[] {
  if (a.kind !== 'clob') return [];
  return [...(a.orders.length > 1 ? [`A batch of ${a.orders.length} orders.`] : []), ...clobRoundingFlags(orders, a)];
}

/**
 * Window flags of a requested grant: caps above what Countersign proposes from the account's equity
 * (`lib/grants/offer.ts`), or no equity read.
 */
export function grantFlags(limits: GrantLimits, offer: GrantOffer): string[] {
  const over = (asked: string, proposed: string | undefined) =>
    proposed !== undefined && (toUnits(asked, 18) ?? 0n) > (toUnits(proposed, 18) ?? 0n);
  const flags: string[] = [];
  if (offer.equity === null) flags.push('Countersign could not read your account value: check the caps yourself.');
  if (over(limits.maxNotional, offer.proposal.maxNotional))
    flags.push(
      `The site asks for ${limits.maxNotional} USDC per order: more than the ` +
        `${offer.proposal.maxNotional} (10% of your account value) Countersign would propose.`,
    );
  if (over(limits.dailyNotional, offer.proposal.dailyNotional))
    flags.push(
      `The site asks for ${limits.dailyNotional} USDC per 24 h: more ` +
        `than your account value (${offer.proposal.dailyNotional}).`,
    );
  return flags;
}
