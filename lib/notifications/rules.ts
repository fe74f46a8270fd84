/**
 * The notification rules, pure: they read the background's stream pushes
 * (`AccountPush`, `lib/streams/push.ts`: orders, fills, the portfolio, the stream's state) and say
 * which browser notifications to raise. No I/O, no clock of their own (`now` is passed), no secret in
 * their input or output: a notification names an instrument or token, a side, sizes and prices only.
 *
 * What a person reads after the fact is the person's own order: every figure is the side, size, price
 * and instrument / token of the person's order as the venue reports it, in whichever role it played;
 * the venue's words (instrument symbols, outcome labels) are its claim, validated and shown beside the
 * id the order committed to (`BTC-PERP (#1)`, `“Yes” shares (token 123456…7890)`). The lines of fill and cancel
 * notices are each venue's order words (`lib/perps/words.ts`, `lib/clob/words.ts`).
 *
 * Kinds, each switchable (`NotificationPrefs`):
 * - `fill`: an order filled or partly filled — instrument, side, the size of this match, its average
 *   price (Σ price·qty / Σ qty of the match's fills, to the instrument's tick) and how much of the order
 *   is filled now. The perps `fills` channel carries the account's own fills (its order id, its side).
 * - `cancel`: an order cancelled by the venue (self-trade prevention, expiry, a parent or position
 *   closing, reduce-only no longer valid) or by the dead-man (`auto_cancelled`: the perps kill switch the
 *   dead-man arms fired), saying which. A person's own cancel (`cancelled`) and an IOC/FOK/post-only
 *   order ending by its own terms raise nothing. Once per order.
 * - `liquidation`: a position whose mark is within `liquidationPct` % (of the mark) of its liquidation
 *   price. The mark is the position's value over its size. Once per crossing: it fires when the
 *   position goes inside the distance and again only after it went back outside (or closed).
 * - `stream`: a stream not live (down or reconnecting) for `streamDownSeconds` while a grant is live
 *   (the caller says whether one is). Once per outage; a live stream ends the outage.
 *
 * Order-book orders (the user channel's `clobTrade` / `clobOrder` pushes), under the same `fills` and
 * `cancels` switches; these rules live in `clob-notices.ts` (`createClobNotices`; their words `lib/clob/words.ts`),
 * which this module hands the order-book pushes to:
 * - `fill`: each trade of the account once per role (the channel repeats a trade as it is matched,
 *   mined and confirmed), from the trade as the person reads it (`ClobTrade`, `ownClobTrade`): the
 *   person's own order(s) in it — side, the size matched, price, token — and maker or taker. The
 *   exchange's top-level trade fields describe the taker's order; when the person's resting order was the
 *   maker, its figures are its `maker_orders` entry. A trade that says maker but names none of the
 *   person's orders says so and shows no figures.
 * - `cancel`: an order whose state turns `CANCELED` when Countersign did not ask for that cancel
 *   (`clobCancelledHere`, the signer's record of the order-book cancels it sent): the venue's user
 *   channel does not say who cancelled, so the text names the likely causes — the venue (a lapsed
 *   heartbeat, the market closing) or another client with the same API key. Once per order.
 *
 * Bursts (`bursts.ts`): each fill and cancel notice carries a `burst` (its kind per account and its line). The rules
 * stay per event; `createNoticeBursts` — pure too, `now` passed — gathers the notices of one kind that
 * arrive within `BURST_MS` (1 s) of the first into one summary ("20 order-book orders cancelled outside
 * Countersign: …", the first lines and the count), a lone one raised unchanged. The wiring
 * (`lib/background/notifications.ts`) holds them and sets the one timer; a lone fill or cancel is
 * therefore raised up to 1 s after it arrived. Liquidation, stream and audit notices are never held.
 */
import { fromUnits, toUnits } from '../decimal';
import { formatStep } from '../format';
import { averagePrice, signedDecimal } from '../format/order-words';
import { perpsCancelNoticeWords, perpsFillNoticeWords } from '../perps/words';
import { instrumentLabel } from '../validation/venue-text';
import type { AccountEvent, AccountPush } from '../streams/push';
import type { NotificationPrefs } from './prefs';
import { decimalOr, noticeMaker, type Notice } from './notice';
import { createClobNotices } from './clob-notices';

/**
 * An instrument's name and tick (decimal string), as the venue's instruments read gives them (`symbol` unset when
 * refused).
 */
export type InstrumentInfo = { symbol?: string; tick: string };

/** How a venue or dead-man cancel is named (`status` of the order event → reason). */
const VENUE_CANCELS: Readonly<Record<string, string>> = {
  stp_cancelled: 'self-trade prevention',
  order_expired: 'the order expired',
  expired: 'the order expired',
  parent_cancelled: 'its parent order was cancelled',
  position_closed: 'the position closed',
  position_flipped: 'the position flipped',
  reduce_only_invalid: 'reduce-only no longer valid',
  reduce_only_expired: 'reduce-only expired',
  reduce_only_invalid_at_trigger: 'reduce-only not valid at trigger',
};
/** The perps kill switch (auto-cancel) fired: the dead-man's cancel. */
const DEADMAN_CANCEL = 'auto_cancelled';
/** Orders remembered for the fill and cancel texts (oldest dropped first). */
const MAX_ORDERS = 500;
type KnownOrder = { iid: number; buy: boolean; quantity: string; filled: string; status: string; price: string };

/** The rules' state machine; see the module comment. */
export type NotificationRules = {
  /** The notifications one push raises under `prefs` at `now` (Unix ms). */
  onPush: (push: AccountPush, prefs: NotificationPrefs, now: number) => Notice[];
  /** When the stream-down rule next needs a `checkStreamDown` (Unix ms), or `undefined` while nothing is pending. */
  streamDownDueAt: (prefs: NotificationPrefs) => number | undefined;
  /**
   * The stream-down notification, if the outage has lasted `streamDownSeconds` at `now`, a grant is live and it has not
   * fired for this outage.
   */
  checkStreamDown: (prefs: NotificationPrefs, now: number, grantLive: boolean) => Notice | undefined;
};

/** Creates the rules. `instrument(iid)` names an instrument (`undefined` when not known yet: shown as `#iid`). */
export function createNotificationRules(
  instrument: (iid: number) => InstrumentInfo | undefined,
  clobCancelledHere: (orderId: string) => boolean = () => true,
): NotificationRules {
  const orders = new Map<number, KnownOrder>();
  /** Perps orders whose cancel was notified (oldest dropped first). */
  const cancelled = new Set<number>();
  const nearLiquidation = new Set<string>();
  let downSince: number | undefined;
  let downNotified = false;
  const notice = noticeMaker();
  const clob = createClobNotices(notice, clobCancelledHere);
  /** The instruments read's symbol (validated) beside the instrument id: `BTC-PERP (#1)`, else `instrument #1`. */
  const name = (iid: number) => instrumentLabel(iid, instrument(iid)?.symbol);
  /** An estimate (a mark, a liquidation price) to the instrument's tick (as given when the instrument is not known). */
  const px = (iid: number, value: string) => {
    const t = instrument(iid)?.tick;
    return t ? formatStep(value, t) : value;
  };
  /** An order's price or size as the venue reports it: padded to the step, never rounded (`signedDecimal`). */
  const exact = (value: string, step?: string) => signedDecimal(value, step).text;

  function remember(o: KnownOrder & { id: number }): void {
    orders.delete(o.id);
    orders.set(o.id, o);
    if (orders.size > MAX_ORDERS) {
      const oldest = orders.keys().next();
      if (!oldest.done) orders.delete(oldest.value);
    }
  }

  function onOrder(
    account: string,
    o: Extract<AccountEvent, { kind: 'order' }>['order'],
    prefs: NotificationPrefs,
  ): Notice[] {
    remember({
      id: o.order_id,
      iid: o.instrument_id,
      buy: o.buy,
      quantity: o.quantity,
      filled: o.filled_quantity,
      status: o.status,
      price: o.price,
    });
    const reason = o.status === DEADMAN_CANCEL ? 'dead-man' : VENUE_CANCELS[o.status];
    if (!reason || cancelled.has(o.order_id)) return [];
    cancelled.add(o.order_id);
    if (cancelled.size > MAX_ORDERS) cancelled.delete(cancelled.values().next().value ?? o.order_id);
    if (!prefs.cancels) return [];
    const what = perpsCancelNoticeWords(o, name(o.instrument_id), instrument(o.instrument_id)?.tick);
    if (reason === 'dead-man') {
      const note = "the venue's auto-cancel fired because the kill switch was not renewed";
      return [
        notice('cancel', `${account}-${o.order_id}`, 'Order cancelled by the dead-man switch', `${what}: ${note}.`, {
          key: `${account}|perps-deadman-cancel`,
          many: 'orders cancelled by the dead-man switch',
          line: what,
          note,
        }),
      ];
    }
    return [
      notice('cancel', `${account}-${o.order_id}`, 'Order cancelled by the venue', `${what}: ${reason}.`, {
        key: `${account}|perps-venue-cancel`,
        many: 'orders cancelled by the venue',
        line: `${what}: ${reason}`,
      }),
    ];
  }

  function onFills(
    account: string,
    fills: Extract<AccountEvent, { kind: 'fills' }>['fills'],
    prefs: NotificationPrefs,
  ): Notice[] {
    if (!prefs.fills) return [];
    const out: Notice[] = [];
    for (const oid of new Set(fills.map((f) => f.order_id))) {
      const mine = fills.filter((f) => f.order_id === oid);
      const first = mine[0];
      if (!first) continue;
      const iid = first.instrument_id;
      // The average cut at 8 decimals (never rounded; `≈` when cut), padded to the tick the venue reports.
      const avg = averagePrice(mine, instrument(iid)?.tick) ?? decimalOr(first.price);
      const size = sumDecimals(mine.map((f) => f.quantity));
      const o = orders.get(oid);
      const buy = o ? o.buy : first.side === 'long';
      const whole = o ? o.status === 'filled' || (o.filled === o.quantity && Number(o.quantity) > 0) : undefined;
      const title = whole === false ? 'Order partly filled' : 'Order filled';
      const line = perpsFillNoticeWords({
        buy,
        size,
        symbol: name(iid),
        avg,
        ...(o ? { progress: { filled: o.filled, quantity: o.quantity } } : {}),
      });
      out.push(
        notice('fill', `${account}-${oid}`, title, `${line}.`, {
          key: `${account}|perps-fill`,
          many: 'orders filled or partly filled',
          line,
        }),
      );
    }
    return out;
  }

  function onPortfolio(
    account: string,
    positions: Extract<AccountEvent, { kind: 'portfolio' }>['portfolio']['positions'],
    prefs: NotificationPrefs,
  ): Notice[] {
    const out: Notice[] = [];
    const seen = new Set<string>();
    for (const p of positions) {
      const key = `${account.toLowerCase()}|${p.instrument_id}`;
      const size = Math.abs(Number(p.size));
      const liq = Number(p.liquidation_price);
      const mark = size > 0 ? Number(p.position_value) / size : NaN;
      if (!(size > 0) || !(liq > 0) || !(mark > 0)) continue;
      seen.add(key);
      const distancePct = (Math.abs(mark - liq) / mark) * 100;
      if (distancePct > prefs.liquidationPct) {
        nearLiquidation.delete(key);
        continue;
      }
      if (nearLiquidation.has(key)) continue;
      nearLiquidation.add(key);
      if (!prefs.liquidation) continue;
      const side = Number(p.size) > 0 ? 'Long' : 'Short';
      out.push(
        notice(
          'liquidation',
          key,
          'Position near liquidation',
          `${side} ${exact(p.size.replace('-', ''))} ${name(p.instrument_id)}: ` +
            `mark ${px(p.instrument_id, String(mark))} is ${distancePct.toFixed(1)} % ` +
            `from the liquidation price ${px(p.instrument_id, p.liquidation_price)}.`,
        ),
      );
    }
    // A position that closed (or left the portfolio) re-arms its rule.
    for (const key of nearLiquidation)
      if (key.startsWith(`${account.toLowerCase()}|`) && !seen.has(key)) nearLiquidation.delete(key);
    return out;
  }

  return {
    onPush(m, prefs, now) {
      const p = m.push;
      switch (p.kind) {
        case 'order':
          return onOrder(m.account, p.order, prefs);
        case 'fills':
          return onFills(m.account, p.fills, prefs);
        case 'portfolio':
        case 'resync':
          return onPortfolio(m.account, p.portfolio.positions, prefs);
        case 'clobTrade':
          return clob.onTrade(m.account, p.trade, prefs);
        case 'clobOrder':
          return clob.onOrder(m.account, p.order, prefs);
        case 'status':
          if (p.state === 'live') {
            downSince = undefined;
            downNotified = false;
          } else downSince ??= now;
          return [];
        // The order-book stream's state and its resync raise nothing of their own.
        case 'clobResync':
        case 'clobStatus':
        default:
          return [];
      }
    },
    streamDownDueAt(prefs) {
      return downSince === undefined || downNotified ? undefined : downSince + prefs.streamDownSeconds * 1000;
    },
    checkStreamDown(prefs, now, grantLive) {
      if (downSince === undefined || downNotified || now - downSince < prefs.streamDownSeconds * 1000) return undefined;
      if (!grantLive || !prefs.streamDown) return undefined;
      downNotified = true;
      const secs = Math.round((now - downSince) / 1000);
      return notice(
        'stream',
        String(downSince),
        'Live stream down',
        `The venue's stream has been down for ${secs} s while a permission ` +
          `is live. Orders and fills are checked over REST until it is back.`,
      );
    },
  };
}

/** Σ of decimal strings, exact (trailing zeros trimmed); a string that is not a decimal counts 0. */
function sumDecimals(xs: string[]): string {
  const scale = Math.max(0, ...xs.map((x) => (x.split('.')[1] ?? '').length));
  return fromUnits(
    xs.reduce((a, x) => a + (/^-?\d+(\.\d+)?$/.test(x) ? (toUnits(x, scale) ?? 0n) : 0n), 0n),
    scale,
  );
}
