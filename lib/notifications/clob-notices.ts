/**
 * The order-book notification rules (the user channel's `clobTrade` / `clobOrder` pushes; see `rules.ts`); their
 * lines are the order book's words (`lib/clob/words.ts`).
 */
import type { AccountEvent } from '../streams/push';
import { clobCancelNoticeWords, clobOwnFillWords } from '../clob/words';
import type { NotificationPrefs } from './prefs';
import { BURST_LINES, type Notice, type NoticeMaker } from './notice';

/** Order-book trades and cancels remembered so that each is notified once (oldest dropped first). */
const MAX_SEEN = 1_000;

/** The order-book rules' handlers (see `createClobNotices`). */
export type ClobNotices = {
  /** A trade of the account: one fill notice per trade and role, from the person's own orders in it. */
  onTrade: (
    account: string,
    t: Extract<AccountEvent, { kind: 'clobTrade' }>['trade'],
    prefs: NotificationPrefs,
  ) => Notice[];
  /** An order's new state: a cancel Countersign did not send raises one notice per order. */
  onOrder: (
    account: string,
    o: Extract<AccountEvent, { kind: 'clobOrder' }>['order'],
    prefs: NotificationPrefs,
  ) => Notice[];
};

/**
 * The order-book rules, raising their notices through `notice`; `clobCancelledHere(orderId)` says whether Countersign
 * sent that order's cancel (then its `CANCELED` state raises nothing).
 */
export function createClobNotices(notice: NoticeMaker, clobCancelledHere: (orderId: string) => boolean): ClobNotices {
  /** Order-book trade ids already notified, and orders whose cancel was (oldest dropped first). */
  const clobSeen = new Set<string>();
  /** Remembers `key` in `clobSeen`; false when it was there already. */
  const firstTime = (key: string) => {
    if (clobSeen.has(key)) return false;
    clobSeen.add(key);
    if (clobSeen.size > MAX_SEEN) clobSeen.delete(clobSeen.values().next().value ?? key);
    return true;
  };

  function onTrade(
    account: string,
    t: Extract<AccountEvent, { kind: 'clobTrade' }>['trade'],
    prefs: NotificationPrefs,
  ): Notice[] {
    if (!firstTime(`trade:${t.id}:${t.trader_side}`) || !prefs.fills) return [];
    const role = t.trader_side === 'MAKER' ? 'maker' : 'taker';
    if (t.own.length === 0) {
      return [
        notice(
          'fill',
          `${account}-clob-${t.id}`,
          'Order-book trade without your figures',
          `The exchange reported a trade in which your order was the maker, but named none of your ` +
            `orders in it: no side, size or price to show. Check the order book's trade history.`,
        ),
      ];
    }
    const line = `${clobOwnFillWords(t.own, BURST_LINES)} (${role})`;
    return [
      notice('fill', `${account}-clob-${t.id}`, 'Order-book order filled', `${line}.`, {
        key: `${account}|clob-fill`,
        many: 'order-book fills',
        line,
      }),
    ];
  }

  function onOrder(
    account: string,
    o: Extract<AccountEvent, { kind: 'clobOrder' }>['order'],
    prefs: NotificationPrefs,
  ): Notice[] {
    if (
      o.status.toUpperCase() !== 'CANCELED' ||
      clobCancelledHere(o.id) ||
      !firstTime(`cancel:${o.id}`) ||
      !prefs.cancels
    )
      return [];
    const line = clobCancelNoticeWords(o);
    const note = 'cancelled by the venue (a lapsed heartbeat, the market closing) or by another client';
    return [
      notice(
        'cancel',
        `${account}-clob-${o.id}`,
        'Order-book order cancelled outside Countersign',
        `${line}: ${note}.`,
        { key: `${account}|clob-cancel`, many: 'order-book orders cancelled outside Countersign', line, note },
      ),
    ];
  }

  return { onTrade, onOrder };
}
