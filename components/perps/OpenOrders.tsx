/**
 * The account's open perps orders under the ticket, each with Cancel (by venue id) and, when it has one,
 * By client id; Cancel all above. Presentational: orders as the venue's open-orders read answers them
 * (decimal strings), events carry the id to cancel. Sizes and prices are shown as the venue reports them,
 * padded to the instrument's step and never rounded (`signedDecimal`).
 */
import { signedDecimal } from '../../lib/format/order-words';
import { Button } from '../ui';

/** The fields of an open order this list shows. */
export type OpenOrderRow = {
  order_id: number;
  client_order_id?: string;
  instrument_id: number;
  buy: boolean;
  price: string;
  quantity: string;
  resting_quantity: string;
  status: string;
  tpsl?: { kind: string; trp: string; scope?: string };
};

/** Where the order sits: "stop 95000", "take-profit 110000", "market" (price 0) or the limit price. */
export function orderPriceText(o: Pick<OpenOrderRow, 'price' | 'tpsl'>): string {
  if (o.tpsl) return `${o.tpsl.kind === 'sl' ? 'stop' : 'take-profit'} ${o.tpsl.trp}`;
  return o.price === '0' ? 'market' : o.price;
}

/** `orderPriceText` with the price (limit or trigger) padded to the instrument's tick, never rounded. */
const shownPrice = (o: Pick<OpenOrderRow, 'price' | 'tpsl'>, tick: string) =>
  orderPriceText(
    o.tpsl
      ? { ...o, tpsl: { ...o.tpsl, trp: signedDecimal(o.tpsl.trp, tick).text } }
      : o.price === '0'
        ? o
        : { price: signedDecimal(o.price, tick).text },
  );

/**
 * The size shown: a trigger order not yet triggered shows its whole quantity, else what rests (a leg protecting the
 * whole position, quantity "0", is shown as "the whole … position" instead: `wholePosition`).
 */
export const orderSizeText = (o: Pick<OpenOrderRow, 'tpsl' | 'quantity' | 'resting_quantity'>) =>
  o.tpsl ? o.quantity : o.resting_quantity;

/** A leg protecting the whole position (the venue's `tpsl.scope` `position`): it closes what the position holds. */
const wholePosition = (o: Pick<OpenOrderRow, 'tpsl'>) => o.tpsl?.scope === 'position';

/**
 * The "Open orders" section; `label(iid)` names an instrument (`instrumentLabel`: `BTC-PERP (#1)`), `steps(iid)` gives
 * its tick and lot (sizes and prices padded to them).
 */
export function OpenOrders(props: {
  orders: readonly OpenOrderRow[];
  label: (iid: number) => string;
  steps: (iid: number) => { tick: string; lot: string };
  onCancel: (oid: number) => void;
  onCancelByCoid: (coid: string) => void;
  onCancelAll: () => void;
}) {
  return (
    <section aria-label="Open orders">
      <div class="row-head">
        <h3>Open orders</h3>
        {props.orders.length ? (
          <Button kind="danger" onClick={props.onCancelAll}>
            Cancel all
          </Button>
        ) : null}
      </div>
      {props.orders.length === 0 ? <p class="muted">No open orders.</p> : null}
      <ul class="orders">
        {props.orders.map((o) => {
          const coid = o.client_order_id;
          const step = props.steps(o.instrument_id);
          return (
            <li key={o.order_id} data-oid={o.order_id}>
              <span class={o.buy ? 'buy-text' : 'sell-text'}>{o.buy ? 'Buy' : 'Sell'}</span>{' '}
              {wholePosition(o)
                ? `the whole ${props.label(o.instrument_id)} position`
                : `${signedDecimal(orderSizeText(o), step.lot).text} ${props.label(o.instrument_id)}`}{' '}
              @ {shownPrice(o, step.tick)}
              <span class="muted small"> #{o.order_id}</span>
              <Button onClick={() => props.onCancel(o.order_id)} aria-label={`Cancel order ${o.order_id}`}>
                Cancel
              </Button>
              {coid ? (
                <Button onClick={() => props.onCancelByCoid(coid)} aria-label={`Cancel by client id ${coid}`}>
                  By client id
                </Button>
              ) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
