/**
 * The order-book account under the ticket: portfolio (value, positions with paging), open orders with
 * Cancel, and recent trades (each as the person's own order in it, maker or taker). Presentational: rows
 * as the data service and the exchange answer them (decimal strings; trade times in Unix seconds as
 * strings), events carry what to do.
 */
import { clobOwnFillWords, clobVenueOrderWords } from '../../lib/clob/words';
import { Button } from '../ui';

/** A position row's fields. */
export type ClobPositionRow = {
  token_id: string;
  title: string;
  outcome: string;
  current_size: string;
  avg_price: string;
  current_price: string;
  unrealized_pnl: string;
};
/** An open order row's fields (`asset_id` the token id; `outcome` the exchange's label, validated). */
export type ClobOrderRow = {
  id: string;
  side: string;
  price: string;
  original_size: string;
  asset_id: string;
  outcome: string;
};
/**
 * A trade as the person reads it (`ClobTrade`, `lib/messaging/reads.ts`): the role the person's order
 * played and the person's own order(s) in it — side, size matched, price, token id with the exchange's
 * label (`outcome`, '' when none); `own` empty when the exchange named none of the person's orders.
 */
export type ClobTradeRow = {
  id: string;
  match_time: string;
  trader_side: string;
  own: readonly { side: string; size: string; price: string; asset_id: string; outcome: string }[];
};

/** A trade's time as "MM-DD hh:mm" (UTC) from Unix seconds. */
export const tradeTime = (matchTime: string) =>
  new Date(Number(matchTime) * 1000).toISOString().slice(5, 16).replace('T', ' ');

/** Portfolio value and positions; "More positions" when the data service has another page. */
export function ClobPortfolio(props: {
  value: string | null;
  positions: readonly ClobPositionRow[];
  hasMore: boolean;
  onMore: () => void;
}) {
  return (
    <section aria-label="Order-book portfolio" data-testid="clob-portfolio">
      <h3>Portfolio {props.value !== null ? <span class="num muted">· {props.value} USDC</span> : null}</h3>
      {props.positions.length === 0 ? <p class="muted">No positions.</p> : null}
      <ul class="orders num">
        {props.positions.map((p) => (
          <li key={p.token_id}>
            {p.current_size} {p.outcome} · {p.title.slice(0, 40)} · avg {p.avg_price} · now {p.current_price} ·{' '}
            <span class={p.unrealized_pnl.startsWith('-') ? 'sell-text' : 'buy-text'}>{p.unrealized_pnl} USDC</span>
          </li>
        ))}
      </ul>
      {props.hasMore ? <Button onClick={props.onMore}>More positions</Button> : null}
    </section>
  );
}

/** Open orders, each with Cancel. */
export function ClobOpenOrders(props: { orders: readonly ClobOrderRow[]; onCancel: (id: string) => void }) {
  return (
    <section aria-label="Open order-book orders">
      <h3>Open orders</h3>
      {props.orders.length === 0 ? <p class="muted">No open orders.</p> : null}
      <ul class="orders">
        {props.orders.map((o) => (
          <li key={o.id} data-order-id={o.id}>
            {clobVenueOrderWords({ ...o, size: o.original_size })}
            <Button onClick={() => props.onCancel(o.id)}>Cancel</Button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * One trade's line: the person's own order(s) in it, in the order book's words (`clobOwnFillWords`: `Sold 10 “Yes”
 * shares (token 123456…7890) at 0.6`), and the role (`maker`, `taker`); a trade naming none of the person's orders
 * says so.
 */
export function tradeWords(t: ClobTradeRow): string {
  const role = t.trader_side.toLowerCase();
  if (t.own.length === 0)
    return `${tradeTime(t.match_time)} · ${role}: the exchange named none of your orders in this trade`;
  return `${tradeTime(t.match_time)} · ${clobOwnFillWords(t.own, t.own.length)} · ${role}`;
}

/** Recent trades, each as the person's own order(s) in it (`tradeWords`). */
export function ClobTrades({ trades }: { trades: readonly ClobTradeRow[] }) {
  return (
    <section aria-label="Recent order-book trades">
      <h3>Trades</h3>
      {trades.length === 0 ? <p class="muted">No trades yet.</p> : null}
      <ul class="orders num" data-testid="clob-trades">
        {trades.map((t) => (
          <li key={`${t.id}${t.trader_side}`}>{tradeWords(t)}</li>
        ))}
      </ul>
    </section>
  );
}
