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
export const orderArgs = v.array(v.looseObject({ iid: v.number(), buy: v.boolean(), qty: v.string(), p: v.optional(v.string()), ro: v.optional(v.boolean()), c: v.optional(v.string()) }));
const leverageArgs = v.looseObject({ iid: v.number(), lev: v.number() });
const portfolioAnswer = v.looseObject({ positions: v.optional(v.array(v.looseObject({ instrument_id: v.number(), size: v.string() }))) });
const bookAnswer = v.looseObject({ bids: v.array(v.tuple([v.string(), v.string()])), asks: v.array(v.tuple([v.string(), v.string()])) });
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
  if (!used.includes(to.toLowerCase())) await d.db.put('settings', [...used, to.toLowerCase()].slice(-500), DESTINATIONS_KEY);
}

/** The flags of a perps command for `account` (reads the portfolio, the book and the leverage config as the command needs). */
export async function perpsFlags(d: Pick<ProviderDeps, 'db' | 'service'>, account: Address, cmd: PerpsCommand): Promise<string[]> {
  const flags: string[] = [];
  if (cmd.type === 'withdraw' || cmd.type === 'internalTransfer') {
    const { to } = v.parse(fundsArgs, cmd.body.args);
    if (!(await usedDestinations(d)).includes(to.toLowerCase())) flags.push('A new address: you have never sent funds here.');
  }
  if (cmd.type === 'createOrders') {
    const orders = v.parse(orderArgs, cmd.body.args);
    if (orders.length > 1) flags.push(`A batch of ${orders.length} orders.`);
    // The portfolio and each instrument's book are read at once (a book read once per instrument); the flags keep their order.
    const portfolio = d.service.reads.perpsRead(account, 'portfolio', undefined, { draw: 'site' }).then(
      (a) => v.parse(portfolioAnswer, a).positions ?? [],
      () => [], // no portfolio read: skip the flip check
    );
    const books = new Map<number, Promise<v.InferOutput<typeof bookAnswer> | undefined>>();
    for (const o of orders) {
      if (o.p && !books.has(o.iid)) books.set(o.iid, d.service.reads.perpsBook(o.iid).then((b) => v.parse(bookAnswer, b), () => undefined)); // no book: no flag
    }
    const positions: { instrument_id: number; size: string }[] = await portfolio;
    for (const o of orders) {
      const book = o.p ? await books.get(o.iid) : undefined;
      if (o.p && book) {
        const best = Number(o.buy ? book.asks[0]?.[0] : book.bids[0]?.[0]);
        const p = Number(o.p);
        if (best > 0 && (o.buy ? p > best * 1.05 : p < best * 0.95)) flags.push(`The price ${groupDecimal(o.p)} is more than 5% through the book (best ${o.buy ? 'ask' : 'bid'} ${best}).`);
      }
      const pos = Number(positions.find((x) => x.instrument_id === o.iid)?.size ?? '0');
      if (!o.ro && pos !== 0 && (o.buy ? pos < 0 : pos > 0) && Number(o.qty) > Math.abs(pos)) flags.push('Reduce-only is off and this order flips your position.');
    }
  }
  if (cmd.type === 'updateLeverage') {
    try {
      const { iid, lev } = v.parse(leverageArgs, cmd.body.args);
      const cfg = v.parse(configAnswer, await d.service.reads.perpsRead(account, 'config', { instrument_id: iid }, { draw: 'site' }));
      if (cfg[0] && lev > cfg[0].leverage) flags.push(`Leverage raised from ${cfg[0].leverage}× to ${lev}×.`);
    } catch {
      /* unknown current leverage */
    }
  }
  return flags;
}

/** The flags of built order-book orders: a batch, and what rounding changed from the `orders` asked. */
export function clobFlags(orders: readonly ClobOrderRequest[], a: SigningArtifact): string[] {
  if (a.kind !== 'clob') return [];
  return [...(a.orders.length > 1 ? [`A batch of ${a.orders.length} orders.`] : []), ...clobRoundingFlags(orders, a)];
}

/** Window flags of a requested grant: caps above what Countersign proposes from the account's equity (`lib/grants/offer.ts`), or no equity read. */
export function grantFlags(limits: GrantLimits, offer: GrantOffer): string[] {
  const over = (asked: string, proposed: string | undefined) => proposed !== undefined && (toUnits(asked, 18) ?? 0n) > (toUnits(proposed, 18) ?? 0n);
  const flags: string[] = [];
  if (offer.equity === null) flags.push('Countersign could not read your account value: check the caps yourself.');
  if (over(limits.maxNotional, offer.proposal.maxNotional)) flags.push(`The site asks for ${limits.maxNotional} USDC per order: more than the ${offer.proposal.maxNotional} (10% of your account value) Countersign would propose.`);
  if (over(limits.dailyNotional, offer.proposal.dailyNotional)) flags.push(`The site asks for ${limits.dailyNotional} USDC per 24 h: more than your account value (${offer.proposal.dailyNotional}).`);
  return flags;
}
