/**
 * Order-book quick order entry: market search (catalogue keyset), outcome, a 10-level ladder (click to
 * take a price), price in ticks, size (market-style BUY orders are sized in USDC), order type (GTC, GTD,
 * FOK, FAK), post-only. Shows the maker/taker amounts and the fee before signing, posts with L2 headers
 * in the background, and shows per-order errors and exchange modes in plain words. Below: portfolio
 * value and positions from the data service (with paging), open orders and recent trades.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Button, ErrorText, Field, Notice } from '../../components/ui';
import { orderRequestAmounts, type OrderAmounts } from '../../lib/clob/amounts';
import type { OrderType } from '../../lib/clob/order';
import { InvalidFieldError } from '../../lib/validation';
import { call, messageOf, type Account } from './api';
import { BookLadder } from '../../components/BookLadder';
import { formatUnitsMin2 } from '../../lib/format';
import { fromUnits, toUnits } from '../../lib/decimal';

type Market = { question: string; slug: string; tokenIds: string[]; outcomes: string[]; negRisk: boolean };
type BookInfo = { tickSize: string; minSize: string; negRisk: boolean; bestBid: string | null; bestAsk: string | null; bids: [string, string][]; asks: [string, string][]; feeRateBps: number };
type DataPosition = { token_id: string; title: string; outcome: string; current_size: string; avg_price: string; current_price: string; current_value: string; unrealized_pnl: string };
type Trade = { id: string; side: string; size: string; price: string; outcome: string; match_time: string; trader_side: string };
type OpenOrder = { id: string; side: string; price: string; original_size: string; size_matched: string; outcome: string };

/** Base units (6 decimals) as a human amount, exactly (never through a float). */
const units = (base: string) => formatUnitsMin2(base, 6);

export function ClobTicket({ account, onCredentials }: { account: Account; onCredentials: () => void }) {
  const [q, setQ] = useState('');
  const [markets, setMarkets] = useState<Market[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [market, setMarket] = useState<Market>();
  const [outcome, setOutcome] = useState(0);
  const [info, setInfo] = useState<BookInfo>();
  const [side, setSide] = useState<'BUY' | 'SELL'>('BUY');
  const [price, setPrice] = useState('');
  const [size, setSize] = useState('');
  const [orderType, setOrderType] = useState<OrderType>('GTC');
  const [postOnly, setPostOnly] = useState(false);
  const [gtdHours, setGtdHours] = useState('24');
  const [error, setError] = useState<string>();
  const [results, setResults] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [open, setOpen] = useState<OpenOrder[]>([]);
  const [positions, setPositions] = useState<DataPosition[]>([]);
  const [value, setValue] = useState<string | null>(null);
  const [posCursor, setPosCursor] = useState<string | null>(null);
  const [trades, setTrades] = useState<Trade[]>([]);

  const loadPortfolio = async (more = false) => {
    const r = await call<'data.portfolio', { positions: DataPosition[]; value: string | null; next_cursor: string | null }>('data.portfolio', { account: account.address, ...(more && posCursor ? { cursor: posCursor } : {}) });
    setPositions((cur) => (more ? [...cur, ...r.positions] : r.positions));
    setValue(r.value);
    setPosCursor(r.next_cursor);
  };
  const loadTrades = async () => {
    if (!account.hasClobCredentials) return;
    setTrades(await call<'clob.trades', Trade[]>('clob.trades', { account: account.address }));
  };

  const search = async (more = false) => {
    try {
      const r = await call<'catalogue.markets', { markets: Market[]; next_cursor: string | null }>('catalogue.markets', { ...(q ? { q } : {}), ...(more && cursor ? { cursor } : {}) });
      setMarkets(more ? [...markets, ...r.markets] : r.markets);
      setCursor(r.next_cursor);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const loadOpen = async () => {
    if (!account.hasClobCredentials) return;
    const r = await call<'clob.openOrders', { data: OpenOrder[] }>('clob.openOrders', { account: account.address });
    setOpen(r.data);
  };
  useEffect(() => {
    void search();
    void loadOpen().catch(() => undefined);
    void loadPortfolio().catch(() => undefined);
    void loadTrades().catch(() => undefined);
  }, []);

  const tokenId = market?.tokenIds[outcome];
  useEffect(() => {
    if (!tokenId) return;
    void call<'clob.book', BookInfo>('clob.book', { tokenId }).then((b) => {
      setInfo(b);
      setPrice((side === 'BUY' ? b.bestAsk : b.bestBid) ?? '');
    });
  }, [tokenId]);

  const preview = useMemo((): { amounts?: OrderAmounts; problem?: string } => {
    if (!info || !price || !size) return {};
    try {
      return { amounts: orderRequestAmounts({ side, price, size, orderType, tickSize: info.tickSize }) };
    } catch (err) {
      return { problem: err instanceof InvalidFieldError ? `${err.field}: ${err.reason}` : 'Invalid order' };
    }
  }, [info, price, size, side, orderType]);

  const submit = async (e?: Event) => {
    e?.preventDefault();
    if (!tokenId || !preview.amounts || busy) return;
    setBusy(true);
    setError(undefined);
    setResults([]);
    try {
      const r = await call<'clob.postOrders', { ok: boolean; orderID?: string; status?: string; error?: string }[]>('clob.postOrders', {
        account: account.address,
        orders: [{ tokenId, side, price, size, orderType, ...(postOnly ? { postOnly } : {}), ...(orderType === 'GTD' ? { expiration: Math.floor(Date.now() / 1000) + Number(gtdHours) * 3600 } : {}) }],
      });
      setResults(r.map((x) => (x.ok ? `Order ${x.orderID!.slice(0, 10)}… ${x.status === 'live' ? 'is resting on the book' : x.status}` : `Refused: ${x.error}`)));
      await Promise.all([loadOpen(), loadPortfolio().catch(() => undefined), loadTrades().catch(() => undefined)]);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  if (!account.hasClobCredentials) {
    return (
      <section class="panel">
        <Notice>Order-book trading needs API credentials, created with your owner key.</Notice>
        <ErrorText error={error} />
        <Button kind="primary" onClick={() => void call('clob.createOrDerive', { account: account.address }).then(onCredentials, (e) => setError(messageOf(e)))}>Create API credentials</Button>
      </section>
    );
  }
  return (
    <section class="panel ticket" aria-label="Order-book ticket">
      <form onSubmit={(e) => { e.preventDefault(); void search(); }} class="search">
        <input name="market-search" placeholder="Search markets" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <Button type="submit">Search</Button>
      </form>
      {!market ? (
        <ul class="markets">
          {markets.map((m) => (
            <li key={m.slug}><button type="button" class="link" onClick={() => { setMarket(m); setOutcome(0); }}>{m.question}</button>{m.negRisk ? <span class="tag">neg-risk</span> : null}</li>
          ))}
          {cursor ? <li><Button onClick={() => void search(true)}>More</Button></li> : null}
        </ul>
      ) : (
        <form onSubmit={submit} onKeyDown={(e) => { if (e.key === 'Escape') { e.preventDefault(); setSize(''); setResults([]); setError(undefined); } }}>
          <p class="market-title"><strong>{market.question}</strong> <button type="button" class="link" onClick={() => setMarket(undefined)}>change</button></p>
          <div class="grid2">
            <Field label="Outcome">
              <select name="outcome" value={outcome} onChange={(e) => setOutcome(Number(e.currentTarget.value))}>
                {market.outcomes.map((o, i) => <option value={i} key={o}>{o}</option>)}
              </select>
            </Field>
            <div class="side" role="radiogroup" aria-label="Side">
              <button type="button" role="radio" aria-checked={side === 'BUY'} class={side === 'BUY' ? 'buy on' : 'buy'} onClick={() => setSide('BUY')}>Buy</button>
              <button type="button" role="radio" aria-checked={side === 'SELL'} class={side === 'SELL' ? 'sell on' : 'sell'} onClick={() => setSide('SELL')}>Sell</button>
            </div>
          </div>
          <div class="grid2">
            <Field label="Price" hint={info ? `tick ${info.tickSize} · bid ${info.bestBid ?? '—'} / ask ${info.bestAsk ?? '—'}` : undefined}>
              <input name="clob-price" inputMode="decimal" value={price} onInput={(e) => setPrice(e.currentTarget.value.trim())} autocomplete="off" />
            </Field>
            <Field label={(orderType === 'FOK' || orderType === 'FAK') && side === 'BUY' ? 'Amount (USDC)' : 'Size (shares)'} hint={info ? `minimum ${info.minSize}` : undefined}>
              <input name="clob-size" inputMode="decimal" autoFocus value={size} onInput={(e) => setSize(e.currentTarget.value.trim())} autocomplete="off" />
            </Field>
          </div>
          <div class="grid3">
            <Field label="Order type">
              <select name="order-type" value={orderType} onChange={(e) => setOrderType(e.currentTarget.value as OrderType)}>
                <option value="GTC">Good til cancelled</option>
                <option value="GTD">Good til date</option>
                <option value="FOK">Fill or kill</option>
                <option value="FAK">Fill and kill</option>
              </select>
            </Field>
            {orderType === 'GTD' ? <Field label="Expires in (h)"><input value={gtdHours} onInput={(e) => setGtdHours(e.currentTarget.value)} /></Field> : null}
            <label class="check"><input type="checkbox" name="clob-po" checked={postOnly} disabled={orderType === 'FOK' || orderType === 'FAK'} onChange={(e) => setPostOnly(e.currentTarget.checked)} /> Post-only</label>
          </div>
          {info && info.bids.length + info.asks.length > 0 ? <BookLadder bids={info.bids} asks={info.asks} {...(info.bestAsk && info.bestBid ? { spread: fromUnits((toUnits(info.bestAsk, 6) ?? 0n) - (toUnits(info.bestBid, 6) ?? 0n), 6) } : {})} depth={10} onPick={setPrice} /> : null}
          {preview.amounts ? (
            <p class="muted small" data-testid="amounts">
              You pay {units(preview.amounts.makerAmount)} {side === 'BUY' ? 'USDC' : 'shares'} ({preview.amounts.makerAmount} base units) for {units(preview.amounts.takerAmount)} {side === 'BUY' ? 'shares' : 'USDC'} ({preview.amounts.takerAmount} base units) at {preview.amounts.price}
              {' · '}
              <span data-testid="clob-fee">
                fee {info?.feeRateBps ?? 0} bp ≈ {units(((BigInt(side === 'BUY' ? preview.amounts.makerAmount : preview.amounts.takerAmount) * BigInt(info?.feeRateBps ?? 0)) / 10_000n).toString())} USDC
              </span>
            </p>
          ) : null}
          {preview.problem ? <p class="warn">{preview.problem}</p> : null}
          <ErrorText error={error} />
          {results.map((r) => <Notice key={r}>{r}</Notice>)}
          <Button kind={side === 'BUY' ? 'primary' : 'danger'} type="submit" disabled={!preview.amounts || busy}>{side === 'BUY' ? 'Buy' : 'Sell'} {market.outcomes[outcome]}</Button>
        </form>
      )}
      <section aria-label="Order-book portfolio" data-testid="clob-portfolio">
        <h3>Portfolio {value !== null ? <span class="num muted">· {value} USDC</span> : null}</h3>
        {positions.length === 0 ? <p class="muted">No positions.</p> : null}
        <ul class="orders num">
          {positions.map((p) => (
            <li key={p.token_id}>
              {p.current_size} {p.outcome} · {p.title.slice(0, 40)} · avg {p.avg_price} · now {p.current_price} · <span class={p.unrealized_pnl.startsWith('-') ? 'sell-text' : 'buy-text'}>{p.unrealized_pnl} USDC</span>
            </li>
          ))}
        </ul>
        {posCursor ? <Button onClick={() => void loadPortfolio(true)}>More positions</Button> : null}
      </section>
      <section aria-label="Open order-book orders">
        <h3>Open orders</h3>
        {open.length === 0 ? <p class="muted">No open orders.</p> : null}
        <ul class="orders">
          {open.map((o) => (
            <li key={o.id} data-order-id={o.id}>
              {o.side} {o.original_size} {o.outcome} @ {o.price}
              <Button onClick={() => void call('clob.cancel', { account: account.address, orderIds: [o.id] }).then(loadOpen, (e) => setError(messageOf(e)))}>Cancel</Button>
            </li>
          ))}
        </ul>
      </section>
      <section aria-label="Recent order-book trades">
        <h3>Trades</h3>
        {trades.length === 0 ? <p class="muted">No trades yet.</p> : null}
        <ul class="orders num" data-testid="clob-trades">
          {trades.map((t) => (
            <li key={`${t.id}${t.trader_side}`}>{new Date(Number(t.match_time) * 1000).toISOString().slice(5, 16).replace('T', ' ')} · {t.side} {t.size} {t.outcome} @ {t.price} · {t.trader_side.toLowerCase()}</li>
          ))}
        </ul>
      </section>
    </section>
  );
}
