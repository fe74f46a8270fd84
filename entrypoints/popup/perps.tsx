/**
 * Perps quick order entry: instrument, side, quantity (focused first), price (prefilled from the book;
 * empty = market-style IOC), time in force, post-only, reduce-only, leverage and margin mode, client
 * order id, request weight. Enter submits, Escape clears. After the acknowledgement it polls the venue's
 * orders read (`/v1/account/orders?order_id=`) until the order rests, fills or is rejected. Open orders
 * (`/v1/account/open-orders`) can be cancelled by id, by client id, or all.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Button, ErrorText, Field, Notice } from '../../components/ui';
import { cancelAll, cancelOrders, cancelOrdersCOID, createOrders, updateLeverage, type PerpsCommand, type TimeInForce } from '../../lib/perps/commands';
import { InvalidFieldError } from '../../lib/validation';
import { call, messageOf, type Account } from './api';

/** A venue instrument (`/v1/info/instruments`); `tick_size` is a sandbox extra, else derived from `price_decimals`. */
type Instrument = { instrument_id: number; symbol: string; price_decimals: number; tick_size?: string; max_leverage: number };
const tickOf = (i: Instrument) => i.tick_size ?? (i.price_decimals > 0 ? `0.${'0'.repeat(i.price_decimals - 1)}1` : '1');
/** The venue's order shape (`@polymarket/bindings/perps` `PerpsOrderSchema`). */
type OrderView = { order_id: number; client_order_id?: string; instrument_id: number; buy: boolean; price: string; quantity: string; filled_quantity: string; resting_quantity: string; status: string };
type Book = { bids: [string, string][]; asks: [string, string][] };

function newCoid(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Plain words for a venue order status. */
export function describeStatus(o: OrderView): string {
  const filled = Number(o.filled_quantity) > 0;
  switch (o.status) {
    case 'open':
      return 'Resting on the book';
    case 'partial':
      return `Resting (${o.filled_quantity} filled)`;
    case 'filled':
      return `Filled ${o.filled_quantity}`;
    case 'accepted':
      return 'Accepted, waiting for its trigger';
    case 'ioc_expired':
    case 'cancelled':
    case 'auto_cancelled':
      return filled ? `Partly filled (${o.filled_quantity}), rest cancelled` : `Cancelled${o.status === 'auto_cancelled' ? ' by the dead-man switch' : ''}`;
    case 'ioc_no_fill':
      return 'Cancelled: no liquidity at that price';
    default:
      return `Rejected: ${o.status.replace(/_/g, ' ')}`;
  }
}

export function PerpsTicket({ account }: { account: Account }) {
  const [instruments, setInstruments] = useState<Instrument[]>([]);
  const [iid, setIid] = useState<number>();
  const [buy, setBuy] = useState(true);
  const [qty, setQty] = useState('');
  const [price, setPrice] = useState('');
  const [tif, setTif] = useState<TimeInForce>('gtc');
  const [po, setPo] = useState(false);
  const [ro, setRo] = useState(false);
  const [coid, setCoid] = useState(newCoid);
  const [lev, setLev] = useState('10');
  const [cross, setCross] = useState(true);
  const [book, setBook] = useState<Book>();
  const [error, setError] = useState<string>();
  const [result, setResult] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [orders, setOrders] = useState<OrderView[]>([]);
  const qtyRef = useRef<HTMLInputElement>(null);
  const hasProxy = account.proxies.some((p) => p.expiry > Date.now());

  const loadOrders = async () => {
    if (!hasProxy) return;
    setOrders(await call<'perps.read', OrderView[]>('perps.read', { account: account.address, name: 'openOrders' }));
  };

  useEffect(() => {
    void call<'perps.read', Instrument[]>('perps.read', { name: 'instruments' })
      .then((list) => {
        setInstruments(list);
        setIid((cur) => cur ?? list[0]?.instrument_id);
      })
      .catch((e) => setError(messageOf(e)));
    void loadOrders().catch(() => undefined);
    qtyRef.current?.focus();
  }, []);

  useEffect(() => {
    if (iid === undefined) return;
    void call<'perps.book', Book>('perps.book', { iid }).then(setBook).catch(() => setBook(undefined));
    if (hasProxy) {
      void call<'perps.read', { leverage: number; cross: boolean }[]>('perps.read', { account: account.address, name: 'config', query: { instrument_id: iid } })
        .then((c) => {
          if (c[0]) {
            setLev(String(c[0].leverage));
            setCross(c[0].cross);
          }
        })
        .catch(() => undefined);
    }
  }, [iid]);

  // Prefill the price from the book: the best ask to buy, the best bid to sell.
  useEffect(() => {
    const best = buy ? book?.asks[0]?.[0] : book?.bids[0]?.[0];
    if (best) setPrice(best);
  }, [book, buy]);

  const effectiveTif: TimeInForce = price === '' && tif === 'gtc' ? 'ioc' : tif;
  const preview = useMemo((): { cmd?: PerpsCommand; problem?: string } => {
    if (iid === undefined || qty === '') return {};
    try {
      return {
        cmd: createOrders({
          orders: [{ iid, buy, qty, ...(price ? { p: price } : {}), tif: effectiveTif, po: po && effectiveTif === 'gtc', ...(ro ? { ro: true } : {}), c: coid }],
        }),
      };
    } catch (err) {
      return { problem: err instanceof InvalidFieldError ? `${err.field.replace('orders[0].', '').replace(/^p$/, 'price').replace(/^qty$/, 'quantity')}: ${err.reason}` : 'Invalid order' };
    }
  }, [iid, buy, qty, price, effectiveTif, po, ro, coid]);

  const clear = () => {
    setQty('');
    setPo(false);
    setRo(false);
    setError(undefined);
    setResult(undefined);
    setCoid(newCoid());
    qtyRef.current?.focus();
  };

  const send = async (cmd: PerpsCommand) => call<'perps.send', unknown>('perps.send', { account: account.address, op: cmd.body, ...(cmd.label ? { label: cmd.label } : {}) });

  const submit = async (e?: Event) => {
    e?.preventDefault();
    if (!preview.cmd || busy) return;
    setBusy(true);
    setError(undefined);
    setResult(undefined);
    try {
      const acks = (await send(preview.cmd)) as { oid: number }[];
      const oid = acks[0]!.oid;
      setResult(`Acknowledged: order #${oid}`);
      for (let i = 0; i < 20; i++) {
        const [o] = await call<'perps.read', OrderView[]>('perps.read', { account: account.address, name: 'orders', query: { order_id: oid } });
        if (o && o.status !== 'accepted') {
          setResult(`Order #${oid}: ${describeStatus(o)}`);
          break;
        }
        await new Promise((res) => setTimeout(res, 300));
      }
      setCoid(newCoid());
      setQty('');
      await loadOrders();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
      qtyRef.current?.focus();
    }
  };

  const act = async (cmd: PerpsCommand, done: string) => {
    setError(undefined);
    try {
      await send(cmd);
      setResult(done);
      await loadOrders();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const inst = instruments.find((i) => i.instrument_id === iid);
  if (!hasProxy) {
    return (
      <section class="panel">
        <Notice>Issue a proxy key (Account → Keys) to trade perps from here.</Notice>
      </section>
    );
  }
  return (
    <section class="panel ticket" aria-label="Perps order ticket">
      <form onSubmit={submit} onKeyDown={(e) => { if (e.key === 'Escape') { e.preventDefault(); clear(); } }}>
        <div class="grid2">
          <Field label="Instrument">
            <select name="instrument" value={iid} onChange={(e) => setIid(Number(e.currentTarget.value))}>
              {instruments.map((i) => <option value={i.instrument_id} key={i.instrument_id}>{i.symbol}</option>)}
            </select>
          </Field>
          <div class="side" role="radiogroup" aria-label="Side">
            <button type="button" role="radio" aria-checked={buy} class={buy ? 'buy on' : 'buy'} onClick={() => setBuy(true)}>Buy</button>
            <button type="button" role="radio" aria-checked={!buy} class={!buy ? 'sell on' : 'sell'} onClick={() => setBuy(false)}>Sell</button>
          </div>
        </div>
        <div class="grid2">
          <Field label="Quantity"><input ref={qtyRef} name="qty" inputMode="decimal" value={qty} onInput={(e) => setQty(e.currentTarget.value.trim())} autocomplete="off" /></Field>
          <Field label="Price" hint={inst ? `tick ${tickOf(inst)}; empty = market (IOC)` : undefined}><input name="price" inputMode="decimal" value={price} onInput={(e) => setPrice(e.currentTarget.value.trim())} autocomplete="off" /></Field>
        </div>
        <div class="grid3">
          <Field label="Time in force">
            <select name="tif" value={effectiveTif} onChange={(e) => setTif(e.currentTarget.value as TimeInForce)}>
              <option value="gtc" disabled={price === ''}>Good til cancelled</option>
              <option value="ioc">Immediate or cancel</option>
              <option value="fok">Fill or kill</option>
            </select>
          </Field>
          <label class="check"><input type="checkbox" name="po" checked={po} disabled={effectiveTif !== 'gtc'} onChange={(e) => setPo(e.currentTarget.checked)} /> Post-only</label>
          <label class="check"><input type="checkbox" name="ro" checked={ro} onChange={(e) => setRo(e.currentTarget.checked)} /> Reduce-only</label>
        </div>
        <p class="muted small">Client order id <code>{coid}</code> · request weight {preview.cmd?.weight.request ?? 1}, action weight {preview.cmd?.weight.action ?? 1}</p>
        {preview.problem ? <p class="warn">{preview.problem}</p> : null}
        <ErrorText error={error} />
        {result ? <Notice>{result}</Notice> : null}
        <Button kind={buy ? 'primary' : 'danger'} type="submit" disabled={!preview.cmd || busy}>
          {buy ? 'Buy' : 'Sell'} {qty || '…'} {inst?.symbol ?? ''} {price ? `@ ${price}` : 'at market'}
        </Button>
      </form>
      <details class="leverage">
        <summary>Leverage {lev}× · {cross ? 'cross' : 'isolated'} margin</summary>
        <div class="grid3">
          <Field label="Leverage"><input name="leverage" inputMode="numeric" value={lev} onInput={(e) => setLev(e.currentTarget.value)} /></Field>
          <Field label="Margin">
            <select value={cross ? 'cross' : 'isolated'} onChange={(e) => setCross(e.currentTarget.value === 'cross')}>
              <option value="cross">Cross</option>
              <option value="isolated">Isolated</option>
            </select>
          </Field>
          <Button onClick={() => { try { void act(updateLeverage({ iid: iid!, lev: Number(lev), cross }), `Leverage set to ${lev}×`); } catch (err) { setError(messageOf(err)); } }}>Update</Button>
        </div>
      </details>
      <section aria-label="Open orders">
        <div class="row-head">
          <h3>Open orders</h3>
          {orders.length ? <Button kind="danger" onClick={() => void act(cancelAll({}), 'All orders cancelled')}>Cancel all</Button> : null}
        </div>
        {orders.length === 0 ? <p class="muted">No open orders.</p> : null}
        <ul class="orders">
          {orders.map((o) => (
            <li key={o.order_id} data-oid={o.order_id}>
              <span class={o.buy ? 'buy-text' : 'sell-text'}>{o.buy ? 'Buy' : 'Sell'}</span> {o.resting_quantity} {instruments.find((i) => i.instrument_id === o.instrument_id)?.symbol} @ {o.price === '0' ? 'market' : o.price}
              <span class="muted small"> #{o.order_id}</span>
              <Button onClick={() => void act(cancelOrders({ oids: [o.order_id] }), `Order #${o.order_id} cancelled`)} aria-label={`Cancel order ${o.order_id}`}>Cancel</Button>
              {o.client_order_id ? <Button onClick={() => void act(cancelOrdersCOID({ coids: [o.client_order_id!] }), `Order ${o.client_order_id!.slice(0, 8)}… cancelled`)} aria-label={`Cancel by client id ${o.client_order_id}`}>By client id</Button> : null}
            </li>
          ))}
        </ul>
      </section>
    </section>
  );
}
