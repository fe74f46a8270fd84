/**
 * Order-book quick order entry: market search (catalogue keyset), outcome, a 10-level ladder (click to
 * take a price), price in ticks, size (market-style BUY orders are sized in USDC), order type (GTC, GTD,
 * FOK, FAK), post-only. Shows the maker/taker amounts and the fee before signing, posts with L2 headers
 * in the background, and shows per-order errors and exchange modes in plain words. Below: portfolio
 * value and positions from the data service (with paging), open orders and recent trades.
 * Server state lives in `stores/clob.ts`; the typed fields stay local to the form.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Button, ErrorText, Field, Notice } from '../../components/ui';
import { BookLadder } from '../../components/BookLadder';
import { SideToggle } from '../../components/SideToggle';
import { AmountsLine } from '../../components/clob/AmountsLine';
import { ClobOpenOrders, ClobPortfolio, ClobTrades } from '../../components/clob/ClobAccount';
import { MarketList } from '../../components/clob/MarketList';
import type { OrderType } from '../../lib/clob/order';
import { fromUnits, toUnits } from '../../lib/decimal';
import type { Account } from './api';
import { DepositWalletPanel } from './deposit';
import { clobFee, clobPreview, createClobStore, units, type ClobStore, type Market } from './stores/clob';

const ORDER_TYPES: readonly OrderType[] = ['GTC', 'GTD', 'FOK', 'FAK'];
/** Narrows a `<select>` value to an order type. */
const asOrderType = (v: string) => ORDER_TYPES.find((t) => t === v);

/** The Order book tab for `account`; without API credentials it offers to create them. */
export function ClobTicket({ account, onCredentials }: { account: Account; onCredentials: () => void }) {
  const store = useMemo(() => createClobStore(account), [account.address, account.hasClobCredentials]);
  const [q, setQ] = useState('');
  useEffect(() => store.start(), [store]);

  if (!account.hasClobCredentials) {
    return (
      <section class="panel">
        <Notice>Order-book trading needs API credentials, created with your owner key.</Notice>
        <ErrorText error={store.error.value} />
        <Button kind="primary" onClick={() => void store.createCredentials().then((ok) => ok && onCredentials())}>Create API credentials</Button>
        <DepositWalletPanel account={account.address} />
      </section>
    );
  }
  const market = store.market.value;
  return (
    <section class="panel ticket" aria-label="Order-book ticket">
      <form onSubmit={(e) => { e.preventDefault(); void store.search(q); }} class="search">
        <input name="market-search" placeholder="Search markets" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <Button type="submit">Search</Button>
      </form>
      {!market ? (
        <MarketList markets={store.markets.value} hasMore={!!store.cursor.value} onPick={store.choose} onMore={() => void store.search(q, true)} />
      ) : (
        <ClobOrderForm key={market.slug} store={store} market={market} />
      )}
      <ClobPortfolio value={store.value.value} positions={store.positions.value} hasMore={!!store.posCursor.value} onMore={() => void store.loadPortfolio(true)} />
      <ClobOpenOrders orders={store.open.value} onCancel={(id) => void store.cancel(id)} />
      <ClobTrades trades={store.trades.value} />
      <DepositWalletPanel account={account.address} />
    </section>
  );
}

/** The order form for the chosen market: outcome, side, price, size, order type, the amounts, Buy / Sell. */
function ClobOrderForm({ store, market }: { store: ClobStore; market: Market }) {
  const [side, setSide] = useState<'BUY' | 'SELL'>('BUY');
  const [price, setPrice] = useState('');
  const [size, setSize] = useState('');
  const [orderType, setOrderType] = useState<OrderType>('GTC');
  const [postOnly, setPostOnly] = useState(false);
  const [gtdHours, setGtdHours] = useState('24');
  const info = store.info.value;
  const outcome = store.outcome.value;
  const tokenId = store.tokenId.value;
  useEffect(() => {
    void store.loadBook().then((b) => {
      if (b) setPrice((side === 'BUY' ? b.bestAsk : b.bestBid) ?? '');
    });
  }, [tokenId]);
  const preview = useMemo(() => clobPreview(info, { side, price, size, orderType }), [info, price, size, side, orderType]);
  const submit = (e: Event) => {
    e.preventDefault();
    if (preview.amounts) void store.post({ side, price, size, orderType, postOnly, gtdHours });
  };
  const marketStyle = orderType === 'FOK' || orderType === 'FAK';
  return (
    <form onSubmit={submit} onKeyDown={(e) => { if (e.key === 'Escape') { e.preventDefault(); setSize(''); store.dismiss(); } }}>
      <p class="market-title"><strong>{market.question}</strong> <button type="button" class="link" onClick={() => store.choose(undefined)}>change</button></p>
      <div class="grid2">
        <Field label="Outcome">
          <select name="outcome" value={outcome} onChange={(e) => (store.outcome.value = Number(e.currentTarget.value))}>
            {market.outcomes.map((o, i) => <option value={i} key={o}>{o}</option>)}
          </select>
        </Field>
        <SideToggle buy={side === 'BUY'} onChange={(buy) => setSide(buy ? 'BUY' : 'SELL')} label="Side" />
      </div>
      <div class="grid2">
        <Field label="Price" hint={info ? `tick ${info.tickSize} · bid ${info.bestBid ?? '—'} / ask ${info.bestAsk ?? '—'}` : undefined}>
          <input name="clob-price" inputMode="decimal" value={price} onInput={(e) => setPrice(e.currentTarget.value.trim())} autocomplete="off" />
        </Field>
        <Field label={marketStyle && side === 'BUY' ? 'Amount (USDC)' : 'Size (shares)'} hint={info ? `minimum ${info.minSize}` : undefined}>
          <input name="clob-size" inputMode="decimal" autoFocus value={size} onInput={(e) => setSize(e.currentTarget.value.trim())} autocomplete="off" />
        </Field>
      </div>
      <div class="grid3">
        <Field label="Order type">
          <select name="order-type" value={orderType} onChange={(e) => setOrderType(asOrderType(e.currentTarget.value) ?? orderType)}>
            <option value="GTC">Good til cancelled</option>
            <option value="GTD">Good til date</option>
            <option value="FOK">Fill or kill</option>
            <option value="FAK">Fill and kill</option>
          </select>
        </Field>
        {orderType === 'GTD' ? <Field label="Expires in (h)"><input value={gtdHours} onInput={(e) => setGtdHours(e.currentTarget.value)} /></Field> : null}
        <label class="check"><input type="checkbox" name="clob-po" checked={postOnly} disabled={marketStyle} onChange={(e) => setPostOnly(e.currentTarget.checked)} /> Post-only</label>
      </div>
      {info && info.bids.length + info.asks.length > 0 ? <BookLadder bids={info.bids} asks={info.asks} {...(info.bestAsk && info.bestBid ? { spread: fromUnits((toUnits(info.bestAsk, 6) ?? 0n) - (toUnits(info.bestBid, 6) ?? 0n), 6) } : {})} depth={10} onPick={setPrice} /> : null}
      {preview.amounts ? <AmountsLine amounts={preview.amounts} side={side} feeRateBps={info?.feeRateBps ?? 0} fee={clobFee(preview.amounts, side, info?.feeRateBps ?? 0)} units={units} /> : null}
      {preview.problem ? <p class="warn">{preview.problem}</p> : null}
      <ErrorText error={store.error.value} />
      {store.results.value.map((r) => <Notice key={r}>{r}</Notice>)}
      <Button kind={side === 'BUY' ? 'primary' : 'danger'} type="submit" disabled={!preview.amounts || store.busy.value}>{side === 'BUY' ? 'Buy' : 'Sell'} {market.outcomes[outcome]}</Button>
    </form>
  );
}
