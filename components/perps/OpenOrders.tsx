/**
 * The account's open perps orders under the ticket, each with Cancel (by venue id) and, when it has one,
 * By client id; Cancel all above. Presentational: orders as the venue's open-orders read answers them
 * (decimal strings), events carry the id to cancel. Each order reads in the perps venue's words
 * (`perpsOpenOrderWords`): sizes and prices as the venue reports them, padded to the instrument's step, never rounded.
 */
import { perpsOpenOrderWords } from '../../lib/perps/words';
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
  tif?: string;
  post_only?: boolean;
  ro?: boolean;
  tpsl?: { kind: string; trp: string; scope?: string };
};

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
              <span class={o.buy ? 'buy-text' : 'sell-text'}>
                {perpsOpenOrderWords(o, props.label(o.instrument_id), step)}
              </span>
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
