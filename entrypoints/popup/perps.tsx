/**
 * Perps ticket (issues #5, #10): instrument with mark / index / mid and 24 h change, a 10-level book
 * ladder (click a level to take its price), side, size (contracts or USDC; presets 25/50/75/100 % of
 * what the free margin allows), price (prefilled from the book; empty = market-style IOC), time in
 * force, post-only, reduce-only, leverage; before submit the risk panel shows the position, available
 * margin, notional, margin required, estimated fee and liquidation price (lib/perps/risk over the
 * venue's reads) with warnings when the order flips the position or grows it past the setting.
 *
 * Keyboard: outside text fields B / S pick the side and 1-4 the size presets; ↑ / ↓ move the price by
 * one tick (in the price field too); Enter submits; Esc clears and returns to the ticket.
 * After the acknowledgement it polls the venue's orders read until the order rests, fills or is
 * rejected. "Close position" sends a reduce-only market order for the whole position.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Button, ErrorText, Field, Notice } from '../../components/ui';
import { BookLadder } from '../../components/BookLadder';
import { RiskPanel } from '../../components/RiskPanel';
import { cancelAll, cancelOrders, cancelOrdersCOID, createOrders, updateLeverage, type PerpsCommand, type TimeInForce } from '../../lib/perps/commands';
import { bookAveragePrice, contractsForUsdc, maxOrderSize, previewOrder } from '../../lib/perps/risk';
import { InvalidFieldError } from '../../lib/validation';
import { fromUnits, toUnits } from '../../lib/decimal';
import { call, messageOf, type Account } from './api';
import { lotOf, tickOf, type OrderView, type PerpsStore } from './stores/perps';

function newCoid(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Plain words for a venue order status. */
export function describeStatus(o: Pick<OrderView, 'status' | 'filled_quantity'>): string {
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

/** `price` moved by `steps` ticks (exact decimals); never below one tick. */
function stepPrice(price: string, tick: string, steps: number): string {
  const scale = Math.max((tick.split('.')[1] ?? '').length, (price.split('.')[1] ?? '').length);
  const t = toUnits(tick, scale) ?? 0n;
  const p = toUnits(price || '0', scale) ?? 0n;
  const next = p - (p % t) + BigInt(steps) * t + (steps < 0 && p % t !== 0n ? t : 0n);
  return fromUnits(next < t ? t : next, scale);
}

const PRESETS = ['0.25', '0.5', '0.75', '1'] as const;

/** Signs and sends a perps command from the popup (the click is the consent). */
export const sendPerps = (account: Account, cmd: PerpsCommand) => call<'perps.send', unknown>('perps.send', { account: account.address, op: cmd.body, ...(cmd.label ? { label: cmd.label } : {}) });

export function PerpsTicket({ account, store, maxPositionUsdc }: { account: Account; store: PerpsStore; maxPositionUsdc: number }) {
  const hasProxy = account.proxies.some((p) => p.expiry > Date.now());
  const [buy, setBuy] = useState(true);
  const [qty, setQty] = useState('');
  const [unit, setUnit] = useState<'contracts' | 'usdc'>('contracts');
  const [price, setPrice] = useState('');
  const [priceTouched, setPriceTouched] = useState(false);
  const [tif, setTif] = useState<TimeInForce>('gtc');
  const [po, setPo] = useState(false);
  const [ro, setRo] = useState(false);
  const [coid, setCoid] = useState(newCoid);
  const [lev, setLev] = useState('10');
  const [cross, setCross] = useState(true);
  const [error, setError] = useState<string>();
  const [result, setResult] = useState<string>();
  const [busy, setBusy] = useState(false);
  const qtyRef = useRef<HTMLInputElement>(null);
  const formRef = useRef<HTMLFormElement>(null);

  const iid = store.iid.value;
  const instruments = store.instruments.value;
  const inst = instruments.find((i) => i.instrument_id === iid);
  const book = store.book.value;
  const ticker = store.tickers.value.find((t) => t.instrument_id === iid);
  const stat = store.statistics.value.find((s) => s.instrument_id === iid);
  const portfolio = store.portfolio.value;
  const position = portfolio?.positions.find((p) => p.instrument_id === iid);

  useEffect(() => qtyRef.current?.focus(), []);
  useEffect(() => {
    if (iid === undefined || !hasProxy) return;
    setPriceTouched(false);
    void store
      .read<{ leverage: number; cross: boolean }[]>('config', { instrument_id: iid })
      .then((c) => {
        if (c[0]) {
          setLev(String(c[0].leverage));
          setCross(c[0].cross);
        }
      })
      .catch(() => undefined);
  }, [iid]);

  // Prefill the price from the book (best ask to buy, best bid to sell) until the person types one.
  const best = buy ? book?.asks[0]?.[0] : book?.bids[0]?.[0];
  useEffect(() => {
    if (!priceTouched && best) setPrice(best);
  }, [best, buy, priceTouched]);

  const tick = inst ? tickOf(inst) : '0.01';
  const lot = inst ? lotOf(inst) : '0.001';
  const refPrice = price || best || ticker?.mark_price || '';
  const contracts = unit === 'usdc' ? (qty && refPrice ? contractsForUsdc(qty, refPrice, lot) : '') : qty;
  const effectiveTif: TimeInForce = price === '' && tif === 'gtc' ? 'ioc' : tif;

  const built = useMemo((): { cmd?: PerpsCommand; problem?: string } => {
    if (iid === undefined || !contracts || contracts === '0') return {};
    try {
      return {
        cmd: createOrders({
          orders: [{ iid, buy, qty: contracts, ...(price ? { p: price } : {}), tif: effectiveTif, ...(po && effectiveTif === 'gtc' ? { po: true } : {}), ...(ro ? { ro: true } : {}), c: coid }],
        }),
      };
    } catch (err) {
      return { problem: err instanceof InvalidFieldError ? err.shortMessage : 'Check the order.' };
    }
  }, [iid, buy, contracts, price, effectiveTif, po, ro, coid]);

  const feeRate = store.fees.value?.taker;
  const levels = buy ? book?.asks : book?.bids;
  const execPrice = price || (contracts && levels ? bookAveragePrice(levels, contracts) : null) || refPrice;
  const preview =
    built.cmd && inst && execPrice && portfolio
      ? previewOrder({
          buy,
          qty: contracts,
          price: execPrice,
          leverage: Number(lev) || 1,
          feeRate: feeRate ?? '0',
          markPrice: ticker?.mark_price ?? execPrice,
          maxLeverage: inst.max_leverage,
          accountValue: portfolio.margin.total_account_value,
          withdrawable: portfolio.withdrawable,
          ...(position ? { position: { size: position.size, entryPrice: position.entry_price } } : {}),
          otherMaintenance: fromUnits(
            portfolio.positions.filter((p) => p.instrument_id !== iid).reduce((a, p) => a + (toUnits(p.maintenance_margin, 8) ?? 0n), 0n),
            8,
          ),
        })
      : undefined;
  const warnings: string[] = [];
  if (preview?.flips && !ro) warnings.push('This order flips your position to the other side.');
  if (preview?.grows && execPrice && Number(preview.newSize) !== 0) {
    const notional = (toUnits(preview.newSize.replace('-', ''), 8)! * (toUnits(execPrice, 8) ?? 0n)) / 10n ** 8n;
    if (notional > BigInt(maxPositionUsdc) * 10n ** 8n) warnings.push(`The position would exceed ${maxPositionUsdc.toLocaleString('en-US')} USDC notional (Settings).`);
  }
  if (preview?.insufficientMargin) warnings.push('Not enough free margin for this order.');

  const preset = (fraction: string) => {
    if (!portfolio || !refPrice) return;
    const size = maxOrderSize({ withdrawable: portfolio.withdrawable, price: refPrice, leverage: Number(lev) || 1, feeRate: feeRate ?? '0', lot, fraction });
    setUnit('contracts');
    setQty(size);
  };

  const clear = () => {
    setQty('');
    setPriceTouched(false);
    setPrice(best ?? '');
    setError(undefined);
    setResult(undefined);
    setPo(false);
    setRo(false);
    formRef.current?.focus();
  };

  const submit = async (e?: Event) => {
    e?.preventDefault();
    if (!built.cmd || busy) return;
    setBusy(true);
    setError(undefined);
    setResult(undefined);
    try {
      const acks = (await sendPerps(account, built.cmd)) as { oid: number }[];
      const oid = acks[0]!.oid;
      setResult(`Acknowledged: order #${oid}`);
      for (let i = 0; i < 20; i++) {
        const [o] = await store.read<OrderView[]>('orders', { order_id: oid });
        if (o && o.status !== 'accepted') {
          setResult(`Order #${oid}: ${describeStatus(o)}`);
          break;
        }
        await new Promise((res) => setTimeout(res, 300));
      }
      setCoid(newCoid());
      setQty('');
      await store.refresh();
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
      await sendPerps(account, cmd);
      setResult(done);
      await store.refresh();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const closePosition = () => {
    if (!position || iid === undefined) return;
    const size = position.size.replace('-', '');
    void act(createOrders({ orders: [{ iid, buy: position.size.startsWith('-'), qty: size, tif: 'ioc', ro: true }] }), `Close order sent for ${size} ${inst?.symbol ?? ''}`);
  };

  const onKey = (e: KeyboardEvent) => {
    const target = e.target as HTMLElement;
    const typing = target.tagName === 'INPUT' || target.tagName === 'SELECT' || target.tagName === 'TEXTAREA';
    if (e.key === 'Escape') {
      e.preventDefault();
      clear();
      return;
    }
    if ((e.key === 'ArrowUp' || e.key === 'ArrowDown') && (!typing || (target as HTMLInputElement).name === 'price')) {
      e.preventDefault();
      setPriceTouched(true);
      setPrice((p) => stepPrice(p || best || '0', tick, e.key === 'ArrowUp' ? 1 : -1));
      return;
    }
    if (e.key === 'Enter' && !typing) {
      // Enter submits from anywhere in the ticket (inside a field the form submits by itself).
      e.preventDefault();
      void submit();
      return;
    }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key.toLowerCase();
    if (k === 'b' || k === 's') {
      e.preventDefault();
      setBuy(k === 'b');
    } else if (['1', '2', '3', '4'].includes(k)) {
      e.preventDefault();
      preset(PRESETS[Number(k) - 1]!);
    }
  };

  if (!hasProxy) {
    return (
      <section class="panel">
        <Notice>Issue a proxy key (Account → Keys) to trade perps from here.</Notice>
      </section>
    );
  }
  const change = ticker && stat && Number(stat.open_price) > 0 ? ((Number(ticker.mark_price) - Number(stat.open_price)) / Number(stat.open_price)) * 100 : undefined;
  const spread = book?.asks[0] && book?.bids[0] ? fromUnits((toUnits(book.asks[0][0], 8) ?? 0n) - (toUnits(book.bids[0][0], 8) ?? 0n), 8) : undefined;
  return (
    <section class="panel ticket" aria-label="Perps order ticket">
      <form ref={formRef} tabIndex={-1} onSubmit={submit} onKeyDown={onKey} aria-keyshortcuts="B S 1 2 3 4 ArrowUp ArrowDown Enter Escape">
        <div class="grid2">
          <Field label="Instrument">
            <select name="instrument" value={iid} onChange={(e) => store.select(Number(e.currentTarget.value))}>
              {instruments.map((i) => <option value={i.instrument_id} key={i.instrument_id}>{i.symbol}</option>)}
            </select>
          </Field>
          <div class="side" role="radiogroup" aria-label="Side (B / S)">
            <button type="button" role="radio" aria-checked={buy} class={buy ? 'buy on' : 'buy'} onClick={() => setBuy(true)}>Buy</button>
            <button type="button" role="radio" aria-checked={!buy} class={!buy ? 'sell on' : 'sell'} onClick={() => setBuy(false)}>Sell</button>
          </div>
        </div>
        {ticker ? (
          <p class="prices small num" data-testid="ticker">
            mark <strong>{ticker.mark_price}</strong> · index {ticker.index_price} · mid {ticker.mid_price}
            {change !== undefined ? <span class={change >= 0 ? 'buy-text' : 'sell-text'}> · 24 h {change >= 0 ? '+' : ''}{change.toFixed(2)}%</span> : null}
          </p>
        ) : null}
        <div class="ticket-grid">
          <div>
            <div class="grid2">
              <Field label={unit === 'usdc' ? 'Size (USDC)' : 'Size (contracts)'} hint={unit === 'usdc' && contracts ? `= ${contracts} contracts` : undefined}>
                <input ref={qtyRef} name="qty" inputMode="decimal" value={qty} onInput={(e) => setQty(e.currentTarget.value.trim())} autocomplete="off" />
              </Field>
              <Field label="Price" hint={`tick ${tick}; empty = market (IOC)`}>
                <input name="price" inputMode="decimal" value={price} onInput={(e) => { setPriceTouched(true); setPrice(e.currentTarget.value.trim()); }} autocomplete="off" />
              </Field>
            </div>
            <div class="presets" role="group" aria-label="Size presets (1-4)">
              {PRESETS.map((f, i) => (
                <button type="button" key={f} onClick={() => preset(f)} aria-keyshortcuts={String(i + 1)}>{Number(f) * 100}%</button>
              ))}
              <button type="button" onClick={() => { setUnit(unit === 'usdc' ? 'contracts' : 'usdc'); setQty(''); }} aria-label="Switch the size unit">{unit === 'usdc' ? 'USDC' : 'contracts'} ⇄</button>
            </div>
          </div>
          {book ? <BookLadder bids={book.bids} asks={book.asks} {...(spread ? { spread } : {})} depth={10} onPick={(p) => { setPriceTouched(true); setPrice(p); }} /> : null}
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
        <RiskPanel
          symbol={inst?.symbol ?? ''}
          {...(position ? { position: { size: position.size, entryPrice: position.entry_price, unrealizedPnl: position.unrealized_pnl, liquidationPrice: position.liquidation_price } } : {})}
          available={portfolio?.withdrawable ?? '…'}
          {...(preview ? { preview } : {})}
          leverage={Number(lev) || 1}
          cross={cross}
          {...(feeRate ? { feeRate } : {})}
          warnings={warnings}
        />
        <p class="muted small">Client order id <code>{coid}</code> · request weight {built.cmd?.weight.request ?? 1}, action weight {built.cmd?.weight.action ?? 1} · reads {store.spend.value} / 1 200 per min</p>
        {built.problem ? <p class="warn">{built.problem}</p> : null}
        <ErrorText error={error} />
        {result ? <Notice>{result}</Notice> : null}
        <div class="actions">
          <Button kind={buy ? 'primary' : 'danger'} type="submit" disabled={!built.cmd || busy}>
            {buy ? 'Buy' : 'Sell'} {contracts || '…'} {inst?.symbol ?? ''} {price ? `@ ${price}` : 'at market'}
          </Button>
          {position ? <Button onClick={closePosition} data-testid="close-position">Close position</Button> : null}
        </div>
      </form>
      <details class="lev">
        <summary>Leverage {lev}× · {cross ? 'cross' : 'isolated'} margin</summary>
        <div class="grid3">
          <Field label="Leverage"><input name="lev" inputMode="numeric" value={lev} onInput={(e) => setLev(e.currentTarget.value.trim())} /></Field>
          <label class="check"><input type="checkbox" checked={cross} onChange={(e) => setCross(e.currentTarget.checked)} /> Cross margin</label>
          <Button onClick={() => iid !== undefined && void act(updateLeverage({ iid, lev: Number(lev), cross }), `Leverage set to ${lev}×`)}>Set leverage</Button>
        </div>
      </details>
      <section aria-label="Open orders">
        <div class="row-head">
          <h3>Open orders</h3>
          {store.openOrders.value.length ? <Button kind="danger" onClick={() => void act(cancelAll({}), 'All orders cancelled')}>Cancel all</Button> : null}
        </div>
        {store.openOrders.value.length === 0 ? <p class="muted">No open orders.</p> : null}
        <ul class="orders">
          {store.openOrders.value.map((o) => (
            <li key={o.order_id} data-oid={o.order_id}>
              <span class={o.buy ? 'buy-text' : 'sell-text'}>{o.buy ? 'Buy' : 'Sell'}</span> {o.status === 'accepted' ? o.quantity : o.resting_quantity} {instruments.find((i) => i.instrument_id === o.instrument_id)?.symbol} @ {o.tpsl ? `${o.tpsl.kind === 'sl' ? 'stop' : 'take-profit'} ${o.tpsl.trp}` : o.price === '0' ? 'market' : o.price}
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
