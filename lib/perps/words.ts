/**
 * The one wording of a perps order: every sentence or phrase that describes a perps order — the approval
 * window's lines and its "Order" row, the ticket's summary, the close and protect previews, the open orders
 * list, the notification lines, the audit entry of an order found at the venue, a grant's words about the
 * orders it covers — is built here, and the other places call it. Pure: no I/O.
 *
 * The style, one for every surface (the table in `words.test.ts` pins it per surface):
 * - an order: `Buy 0.50 ETH-PERP (#2) at 3,000.00, good-til-cancelled, post-only, reduce-only` — side, size,
 *   the instrument beside its id (`instrumentLabel`), `at` its limit or `at market` without one, then the
 *   time in force spelled out (`good-til-cancelled`, `immediate-or-cancel`, `fill-or-kill`) and the flags,
 *   lowercase, comma-separated;
 * - a take-profit / stop-loss: `Stop-loss: sell 0.50 ETH-PERP (#2) at market when the mark reaches 2,900.00,
 *   reduce-only` (a limit trigger `at 2,850.00`; `reduce-only` only when the order is signed so); a trigger order the
 *   venue reports with a limit reads `… when the mark reaches 2,900.00 (limit 2,850.00 as the venue reports)`: the
 *   report does not say whether it fires at market;
 * - a leg protecting the whole position (signed quantity "0", `isWholePositionLeg`): `Take-profit: sell what the
 *   whole ETH-PERP (#2) position holds at market when the mark reaches 3,300.00, reduce-only` — its "0" is never
 *   shown as a size;
 * - numbers are the signed (or the venue's) decimal strings through `signedDecimal`: thousands grouped and padded
 *   with zeros to the tick (prices) and lot (sizes) the venue reports when they are known, never rounded; a value off
 *   that step is shown as it is and noted (`Price 3,000.005 is not a multiple of the tick 0.01 the venue reports.`).
 */
import { isWholePositionLeg, type PerpsCommand, type PerpsOrderInput } from './commands';
import { formatUnitsMin2, groupDecimal, shortAddress } from '../format';
import { signedDecimal } from '../format/order-words';
import { instrumentLabel } from '../validation/venue-text';

/** Time in force spelled out (`gtc` → `good-til-cancelled`); an unknown one is shown as given. */
const TIF: Readonly<Record<string, string>> = {
  gtc: 'good-til-cancelled',
  ioc: 'immediate-or-cancel',
  fok: 'fill-or-kill',
};

/** The tick (prices) and lot (sizes) an instrument's `instruments` read reports, decimal strings, when known. */
export type PerpsSteps = { tick?: string; lot?: string };

/**
 * One perps order as the words read it: side, size (`qty`, decimal string; "0" on a whole-position leg), the
 * instrument as named (`symbol`: `BTC-PERP (#1)`), the limit `p` (absent: at market), time in force (`gtc` / `ioc` /
 * `fok`), post-only, reduce-only, its trigger (`whole`: a leg protecting the whole position; `market`: it executes at
 * market; `reported`: as the venue reports it, which does not say how it executes), and the instrument's steps.
 * `CommandOrderSummary` (`./summary`) is one.
 */
export type PerpsOrderFacts = PerpsSteps & {
  buy: boolean;
  qty: string;
  symbol: string;
  p?: string;
  tif?: string;
  po?: boolean;
  ro?: boolean;
  trigger?: { kind: 'tp' | 'sl'; trp: string; market?: boolean; whole?: boolean; reported?: boolean };
};

/** The words of one order: its `line` and the `notes` on a size or price off the step the venue reports. */
export type PerpsOrderWords = { line: string; notes: string[] };

/** The facts of a command's order item (`createOrders` args) named `symbol`, with its instrument's steps. */
export function orderFacts(
  o: PerpsOrderInput,
  symbol: string,
  steps: PerpsSteps = {},
): PerpsOrderFacts & { po: boolean; ro: boolean } {
  return {
    buy: o.buy,
    qty: o.qty,
    symbol,
    ...(o.p === undefined ? {} : { p: o.p }),
    ...(o.tif === undefined ? {} : { tif: o.tif }),
    po: o.po === true,
    ro: o.ro === true,
    ...(o.tr
      ? {
          trigger: {
            kind: o.tr.tpsl,
            trp: o.tr.trp,
            ...(o.tr.market ? { market: true } : {}),
            ...(isWholePositionLeg(o) ? { whole: true } : {}),
          },
        }
      : {}),
    ...(steps.tick ? { tick: steps.tick } : {}),
    ...(steps.lot ? { lot: steps.lot } : {}),
  };
}

/** A price through `signedDecimal` at `tick`, with its note when it is off the tick. */
function priceWords(what: string, value: string, tick: string | undefined, notes: string[]): string {
  const p = signedDecimal(value, tick);
  if (tick && p.offStep) notes.push(`${what} ${p.text} is not a multiple of the tick ${tick} the venue reports.`);
  return p.text;
}

/** The words of one perps order in the module's style (see the module docstring). */
export function perpsOrderWords(o: PerpsOrderFacts): PerpsOrderWords {
  const notes: string[] = [];
  const side = o.buy ? 'Buy' : 'Sell';
  const whole = o.trigger?.whole === true;
  const qty = signedDecimal(o.qty, o.lot);
  if (o.lot && qty.offStep && !whole)
    notes.push(`Size ${qty.text} is not a multiple of the lot ${o.lot} the venue reports.`);
  let at = 'at market';
  let reported = '';
  if (o.p !== undefined && !whole) {
    const p = priceWords('Price', o.p, o.tick, notes);
    at = o.trigger?.market ? `at market (limit ${p})` : `at ${p}`;
    // The venue's report of a trigger order does not say whether it fires at market: its limit is named as reported.
    if (o.trigger?.reported && !o.trigger.market) [at, reported] = ['', ` (limit ${p} as the venue reports)`];
  }
  if (o.trigger) {
    const trp = priceWords('Trigger price', o.trigger.trp, o.tick, notes);
    const what = whole
      ? `${side.toLowerCase()} what the whole ${o.symbol} position holds at market`
      : `${side.toLowerCase()} ${qty.text} ${o.symbol}${at ? ` ${at}` : ''}`;
    const kind = o.trigger.kind === 'tp' ? 'Take-profit' : 'Stop-loss';
    return { line: `${kind}: ${what} when the mark reaches ${trp}${reported}${o.ro ? ', reduce-only' : ''}`, notes };
  }
  const parts = [`${side} ${qty.text} ${o.symbol} ${at}`];
  if (o.tif) parts.push(Object.hasOwn(TIF, o.tif) ? (TIF[o.tif] ?? o.tif) : o.tif);
  if (o.po) parts.push('post-only');
  if (o.ro) parts.push('reduce-only');
  return { line: parts.join(', '), notes };
}

/**
 * The words of the one order a `createOrders` command signs (the popup's close and protect orders), `symbol` naming
 * its instrument id (`instrumentLabel`); `undefined` for any other command or more than one order.
 */
export function perpsCommandOrderWords(
  cmd: PerpsCommand,
  symbol: (iid: number) => string,
  steps: PerpsSteps = {},
): PerpsOrderWords | undefined {
  const o = cmd.body.type === 'createOrders' && cmd.body.args.length === 1 ? cmd.body.args[0] : undefined;
  return o ? perpsOrderWords(orderFacts(o, symbol(o.iid), steps)) : undefined;
}

/**
 * Title and lines of a perps command, what the approval window shows and the page path's audit entry repeats: one
 * line per order (`perpsOrderWords`, padded to `steps(iid)` when given), cancels by id, and the command's weights;
 * withdraw amounts in USDC and in base units (6 decimals). `symbol` names an instrument id (`instrumentLabel`).
 */
export function describePerpsCommand(
  cmd: PerpsCommand,
  symbol: (iid: number) => string,
  steps?: (iid: number) => PerpsSteps,
): { title: string; lines: string[] } {
  const w = `request weight ${cmd.weight.request}, action weight ${cmd.weight.action}`;
  const op = cmd.body;
  switch (op.type) {
    case 'createOrders': {
      const lines = op.args.map((o) => perpsOrderWords(orderFacts(o, symbol(o.iid), steps?.(o.iid))).line);
      if (op.grp === 'position') return { title: 'Protect a position', lines: [...lines, `— ${w}`] };
      if (lines.length === 1) return { title: 'Place an order', lines: [`${lines[0]} — ${w}`] };
      return { title: `Place ${lines.length} orders`, lines: [...lines, `— ${w}`] };
    }
    case 'cancelOrders':
      return { title: 'Cancel orders', lines: [`Cancel ${op.args.map((x) => `#${x}`).join(', ')} — ${w}`] };
    case 'cancelOrdersCOID':
      // Each client order id in full: two ids that share a prefix name different orders.
      return { title: 'Cancel orders', lines: [`Cancel client order ids ${op.args.join(', ')} — ${w}`] };
    case 'cancelAll':
      return {
        title: 'Cancel all orders',
        lines: [`Cancel every open order${op.args.iid !== undefined ? ` on ${symbol(op.args.iid)}` : ''} — ${w}`],
      };
    case 'autoCancel':
      return {
        title: 'Dead-man switch',
        lines: [
          op.args.time === 0
            ? 'Disarm automatic cancel'
            : `Cancel all orders automatically at ${new Date(op.args.time).toISOString()}`,
        ],
      };
    case 'updateLeverage':
      return {
        title: 'Change leverage',
        lines: [
          `Set ${symbol(op.args.iid)} leverage to ${op.args.lev}× ` +
            `(${op.args.cross ? 'cross' : 'isolated'} margin) — ${w}`,
        ],
      };
    case 'updateMargin': {
      const { amt, iid } = op.args;
      return {
        title: 'Change isolated margin',
        lines: [
          `${amt.startsWith('-') ? 'Remove' : 'Add'} ` +
            `${groupDecimal(amt.replace('-', ''))} USDC margin on ${symbol(iid)}`,
        ],
      };
    }
    case 'internalTransfer':
      return {
        title: 'Transfer funds',
        lines: [
          `Transfer ${groupDecimal(op.args.amount)} USDC to ` +
            `${shortAddress(op.args.to)}${cmd.label ? ` — “${cmd.label}”` : ''}`,
        ],
      };
    case 'withdraw':
      return {
        title: 'Withdraw funds',
        lines: [
          `Withdraw ${formatUnitsMin2(op.args.amount, 6)} USDC ` +
            `(${op.args.amount} base units) to ${shortAddress(op.args.to)}`,
        ],
      };
    case 'deleteProxy':
      return { title: 'Delete a trading key', lines: [`Delete proxy key ${shortAddress(op.args.proxy)}`] };
    case 'createProxy':
      return {
        title: 'Issue a trading key',
        lines: [
          `Issue proxy key ${shortAddress(op.args.proxy)}, valid until ${new Date(op.args.expiry).toISOString()}`,
        ],
      };
  }
}

/**
 * The ticket's summary (its Buy / Sell button) of the order being typed: `Buy 0.010 BTC-PERP (#1) at 64,000.0`, or
 * `Sell … BTC-PERP (#1) at market` — `contracts` and `price` as typed ('' = not yet / no limit), padded to the
 * instrument's `lot` and `tick` when known (text that is not a decimal is shown as typed).
 */
export function perpsTicketWords(
  t: PerpsSteps & { buy: boolean; contracts: string; symbol: string; price: string },
): string {
  const size = t.contracts ? signedDecimal(t.contracts, t.lot).text : '…';
  return `${t.buy ? 'Buy' : 'Sell'} ${size} ${t.symbol} at ${t.price ? signedDecimal(t.price, t.tick).text : 'market'}`;
}

/**
 * The ticket's limit of a protected market order (its "Market limit" row): the IOC limit it signs, padded to `tick`,
 * and the slippage cap (basis points) it was set from — `at 64,000.0, immediate-or-cancel (cap 1 %)`.
 */
export function perpsMarketLimitWords(limit: string, tick: string | undefined, capBps: number): string {
  return `at ${signedDecimal(limit, tick).text}, ${TIF.ioc} (cap ${capBps / 100} %)`;
}

/**
 * The ticket's take-profit / stop-loss row for the order being typed (its trigger price, padded to `tick`): the leg
 * sells or buys at market when the mark reaches it — `at market when the mark reaches 70,000.5, reduce-only`.
 */
export function perpsTicketTriggerWords(trp: string, tick: string | undefined): string {
  return `at market when the mark reaches ${signedDecimal(trp, tick).text}, reduce-only`;
}

/** An order as the venue's orders reads and the account stream report it (`OrderView`, `lib/perps/wire.ts`). */
export type VenueOrder = {
  instrument_id: number;
  buy: boolean;
  price: string;
  quantity: string;
  tif?: string | undefined;
  post_only?: boolean | undefined;
  ro?: boolean | undefined;
  tpsl?: { kind: string; trp: string; scope?: string | undefined } | undefined;
};

/**
 * The facts of an order the venue reports, named `symbol`: price "0" is an order without a limit (at market), a
 * `tpsl` of `scope` `position` a leg protecting the whole position; `qty` instead of the order's `quantity` (the open
 * orders list shows what rests).
 */
export function venueOrderFacts(
  o: VenueOrder,
  symbol: string,
  steps: PerpsSteps = {},
  qty = o.quantity,
): PerpsOrderFacts {
  return {
    buy: o.buy,
    qty,
    symbol,
    ...(o.price === '0' ? {} : { p: o.price }),
    ...(o.tif ? { tif: o.tif } : {}),
    po: o.post_only === true,
    ro: o.ro === true,
    ...(o.tpsl
      ? {
          trigger: {
            kind: o.tpsl.kind === 'sl' ? 'sl' : 'tp',
            trp: o.tpsl.trp,
            ...(o.price === '0' ? { market: true } : { reported: true }),
            ...(o.tpsl.scope === 'position' ? { whole: true } : {}),
          },
        }
      : {}),
    ...(steps.tick ? { tick: steps.tick } : {}),
    ...(steps.lot ? { lot: steps.lot } : {}),
  };
}

/**
 * An open order's line in the open orders list: the order as the venue reports it, its size what rests — a trigger
 * order not yet triggered shows its whole quantity — padded to `steps`: `Buy 0.500 BTC-PERP (#1) at 64,000.0,
 * good-til-cancelled, post-only`, `Stop-loss: sell 0.500 BTC-PERP (#1) at market when the mark reaches 60,000.0,
 * reduce-only`.
 */
export function perpsOpenOrderWords(
  o: VenueOrder & { resting_quantity: string },
  symbol: string,
  steps: PerpsSteps = {},
): string {
  return perpsOrderWords(venueOrderFacts(o, symbol, steps, o.tpsl ? o.quantity : o.resting_quantity)).line;
}

/**
 * The notification line of an order the venue or the dead-man cancelled: side, size, instrument, price (padded to
 * `tick`) and how much had filled — `Buy 0.5 ETH-PERP (#2) at 3,000.0 (0.2 had filled)`; a trigger order as a trigger.
 */
export function perpsCancelNoticeWords(
  o: VenueOrder & { filled_quantity: string },
  symbol: string,
  tick?: string,
): string {
  // Side, size, instrument and price only: the time in force and flags are the order's, not the notice's news.
  const { line } = perpsOrderWords(
    venueOrderFacts({ ...o, tif: undefined, post_only: false, ro: false }, symbol, tick ? { tick } : {}),
  );
  const filled = Number(o.filled_quantity) > 0 ? ` (${signedDecimal(o.filled_quantity).text} had filled)` : '';
  return `${line}${filled}`;
}

/**
 * The notification line of a fill: side, the size of this match, instrument, its average price (as computed by the
 * caller) and, when the order is known, how much of it is filled — `Buy 0.5 ETH-PERP (#2) at an average 3,000.5 (0.5
 * of 1 filled)`.
 */
export function perpsFillNoticeWords(f: {
  buy: boolean;
  size: string;
  symbol: string;
  avg: string;
  progress?: { filled: string; quantity: string };
}): string {
  const progress = f.progress ? ` (${f.progress.filled} of ${f.progress.quantity} filled)` : '';
  return `${f.buy ? 'Buy' : 'Sell'} ${f.size} ${f.symbol} at an average ${f.avg}${progress}`;
}

/**
 * The audit entry's words for an order the venue holds after Countersign's records were lost (`lib/audit/lost-storage`
 * prefixes `Found at the venue: `): the order by its instrument id, its client order id and its status —
 * `Buy 0.5 instrument #2 at 3,000, good-til-cancelled, client order id ab12… (open)`.
 */
export function perpsFoundOrderWords(o: VenueOrder & { client_order_id?: string | undefined; status: string }): string {
  const { line } = perpsOrderWords(venueOrderFacts(o, instrumentLabel(o.instrument_id, undefined)));
  return `${line}${o.client_order_id ? `, client order id ${o.client_order_id}` : ''} (${o.status})`;
}

/**
 * A perps grant's words about the orders it covers (`describeGrant`, `lib/grants/evaluate.ts`): market and trigger
 * orders and how they count, the size per order, post-only, reduce-only — each a rule `evaluateGrant` enforces.
 */
export function perpsGrantOrderWords(g: {
  allow: { market?: boolean; triggers?: boolean };
  slippagePct: string;
  maxSize?: string;
  postOnly?: boolean;
  reduceOnly?: boolean;
}): string[] {
  const lines: string[] = [];
  if (!g.allow.market) lines.push('No market orders, no trigger (stop / take-profit) orders.');
  else {
    const trig = g.allow.triggers
      ? 'Market and trigger (stop / take-profit) orders allowed'
      : 'Market orders allowed, no trigger (stop / take-profit) orders';
    lines.push(
      `${trig}; they count at the reference price moved ${g.slippagePct}% against ` +
        `you (slippage allowance; a sell never counts below the reference price).`,
    );
  }
  if (g.maxSize) lines.push(`At most ${g.maxSize} per order.`);
  if (g.postOnly) lines.push('Post-only orders only.');
  if (g.reduceOnly) lines.push('Reduce-only orders only.');
  return lines;
}
