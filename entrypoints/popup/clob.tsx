/**
 * Order-book quick order entry: market search (catalogue keyset), outcome, a 6-level ladder (click to
 * take a price), price in ticks, size (market-style BUY orders are sized in USDC), order type (GTC, GTD,
 * FOK, FAK), post-only. Shows the maker/taker amounts and the fee before signing, posts with L2 headers
 * in the background, and shows per-order errors and exchange modes in plain words. Below: portfolio
 * value and positions from the data service (with paging), open orders and recent trades.
 * Server state lives in `stores/clob.ts`; the typed fields stay local to the form.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Button, ErrorText, Field, Live, Notice } from '../../components/ui';
import { BookLadder } from '../../components/BookLadder';
import { SideToggle } from '../../components/SideToggle';
import { AmountsLine } from '../../components/clob/AmountsLine';
import { ClobOpenOrders, ClobPortfolio, ClobTrades } from '../../components/clob/ClobAccount';
import { MarketList } from '../../components/clob/MarketList';
import type { OrderType } from '../../lib/clob/order';
import type { Account } from './api';
import { DepositWalletPanel } from './deposit';
import { clobFee, clobPreview, createClobStore, units, type ClobStore, type Market } from './stores/clob';
import type { ClobMarketEstimate } from '../../lib/clob/market';
import { DEFAULT_SLIPPAGE_BPS } from '../../lib/perps/risk';

const ORDER_TYPES: readonly OrderType[] = ['GTC', 'GTD', 'FOK', 'FAK'];
/** Narrows a `<select>` value to an order type. */
const asOrderType = (v: string) => ORDER_TYPES.find((t) => t === v);

/** The Order book tab for `account`; without API credentials it offers to create them. */
export function ClobTicket({
  account,
  onCredentials,
  slippageBps = DEFAULT_SLIPPAGE_BPS,
}: {
  account: Account;
  onCredentials: () => void;
  slippageBps?: number;
}) {
  const store = useMemo(() => createClobStore(account), [account.address, account.hasClobCredentials]);
  const [q, setQ] = useState('');
  useEffect(() => store.start(), [store]);

  if (!account.hasClobCredentials) {
    return (
      <section class="panel">
        <Notice>Order-book trading needs API credentials, created with your owner key.</Notice>
        <ErrorText error={store.error.value} />
        <Button kind="primary" onClick={() => void store.createCredentials().then((ok) => ok && onCredentials())}>
          Create API credentials
        </Button>
        <DepositWalletPanel account={account.address} onSetUp={onCredentials} />
      </section>
    );
  }
  const market = store.market.value;
  return (
    <section class="panel ticket" aria-label="Order-book ticket">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void store.search(q);
        }}
        class="search"
      >
        <input
          name="market-search"
          placeholder="Search markets"
          value={q}
          onInput={(e) => setQ(e.currentTarget.value)}
        />
        <Button type="submit">Search</Button>
      </form>
      {!market ? (
        <MarketList
          markets={store.markets.value}
          hasMore={!!store.cursor.value}
          onPick={store.choose}
          onMore={() => void store.search(q, true)}
        />
      ) : (
        <ClobOrderForm key={market.slug} store={store} market={market} capBps={slippageBps} />
      )}
      <ClobPortfolio
        value={store.value.value}
        positions={store.positions.value}
        hasMore={!!store.posCursor.value}
        onMore={() => void store.loadPortfolio(true)}
      />
      <ClobOpenOrders orders={store.open.value} onCancel={(id) => void store.cancel(id)} />
      <ClobTrades trades={store.trades.value} />
      <DepositWalletPanel account={account.address} clobType={account.clobSignatureType} onSetUp={onCredentials} />
    </section>
  );
}

/** The order form for the chosen market: outcome, side, price, size, order type, the amounts, Buy / Sell. */
function ClobOrderForm({ store, market, capBps }: { store: ClobStore; market: Market; capBps: number }) {
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
  const preview = useMemo(
    () => clobPreview(info, { side, price, size, orderType }, capBps),
    [info, price, size, side, orderType, capBps],
  );
  const submit = (e: Event) => {
    e.preventDefault();
    if (preview.amounts) void store.post({ side, price, size, orderType, postOnly, gtdHours }, capBps);
  };
  const marketStyle = orderType === 'FOK' || orderType === 'FAK';
  return (
    <form
      class="clob-form"
      onSubmit={submit}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          setSize('');
          store.dismiss();
        }
      }}
    >
      <p class="market-title">
        <strong>{market.question}</strong>{' '}
        <button type="button" class="link" onClick={() => store.choose(undefined)}>
          change
        </button>
      </p>
      <div class="grid2">
        <Field label="Outcome">
          <select
            name="outcome"
            value={outcome}
            onChange={(e) => (store.outcome.value = Number(e.currentTarget.value))}
          >
            {market.outcomes.map((o, i) => (
              <option value={i} key={o}>
                {o}
              </option>
            ))}
          </select>
        </Field>
        <SideToggle buy={side === 'BUY'} onChange={(buy) => setSide(buy ? 'BUY' : 'SELL')} label="Side" />
      </div>
      <div class="ticket-grid">
        <div class="ticket-main">
          <Field
            label="Price (USDC)"
            hint={info ? `tick ${info.tickSize} · bid ${info.bestBid ?? '—'} / ask ${info.bestAsk ?? '—'}` : undefined}
          >
            <input
              name="clob-price"
              inputMode="decimal"
              value={price}
              onInput={(e) => setPrice(e.currentTarget.value.trim())}
              autocomplete="off"
            />
          </Field>
          <Field
            label={marketStyle && side === 'BUY' ? 'Amount (USDC)' : 'Size (shares)'}
            hint={info ? `minimum ${info.minSize}` : undefined}
          >
            <input
              name="clob-size"
              inputMode="decimal"
              autoFocus
              value={size}
              onInput={(e) => setSize(e.currentTarget.value.trim())}
              autocomplete="off"
            />
          </Field>
          <Field label="Order type">
            <select
              name="order-type"
              value={orderType}
              onChange={(e) => setOrderType(asOrderType(e.currentTarget.value) ?? orderType)}
            >
              <option value="GTC">Good til cancelled</option>
              <option value="GTD">Good til date</option>
              <option value="FOK">Fill or kill</option>
              <option value="FAK">Fill and kill</option>
            </select>
          </Field>
          {orderType === 'GTD' ? (
            <Field label="Expires in (h)">
              <input name="gtd-hours" value={gtdHours} onInput={(e) => setGtdHours(e.currentTarget.value)} />
            </Field>
          ) : null}
          <label class="check">
            <input
              type="checkbox"
              name="clob-po"
              checked={postOnly}
              disabled={marketStyle}
              onChange={(e) => setPostOnly(e.currentTarget.checked)}
            />{' '}
            Post-only
          </label>
        </div>
        {info && info.bids.length + info.asks.length > 0 ? (
          <BookLadder
            bids={info.bids}
            asks={info.asks}
            tick={info.tickSize}
            lot="0.01"
            unit="shares"
            onPick={setPrice}
          />
        ) : (
          <p class="ladder muted small">{info ? 'The book is empty.' : 'Loading the book…'}</p>
        )}
      </div>
      <div class="ticket-foot" data-testid="ticket-foot">
        {preview.amounts ? (
          <AmountsLine
            amounts={preview.amounts}
            side={side}
            feeRateBps={info?.feeRateBps ?? 0}
            fee={clobFee(preview.amounts, side, info?.feeRateBps ?? 0)}
            units={units}
          />
        ) : null}
        {preview.estimate ? (
          <MarketEstimateLine
            estimate={preview.estimate}
            limit={preview.price ?? ''}
            capBps={capBps}
            side={side}
            typed={price !== ''}
          />
        ) : null}
        {preview.problem ? <p class="warn">{preview.problem}</p> : null}
        <ErrorText error={store.error.value} />
        <div class="actions submit-row">
          <Button
            kind={side === 'BUY' ? 'primary' : 'danger'}
            type="submit"
            disabled={!preview.amounts || store.busy.value}
            data-testid="clob-submit"
          >
            {side === 'BUY' ? 'Buy' : 'Sell'} {market.outcomes[outcome]}
          </Button>
        </div>
        <Live testid="clob-result">
          {store.results.value.map((r) => (
            <p class="notice" key={r}>
              {r}
            </p>
          ))}
        </Live>
      </div>
    </form>
  );
}

/** An estimate's decimal (8 decimals) cut to `dp` decimals for display, exactly (no float). */
const cut = (v: string, dp: number) => {
  const [i = '0', f = ''] = v.split('.');
  return dp > 0 ? `${i}.${f.padEnd(dp, '0').slice(0, dp)}` : i;
};

/**
 * A market-style (FOK / FAK) order's estimate from the visible book: average price, slippage
 * against the best level, the estimated cost (a BUY: the shares it signs for and the USDC they cost at
 * the makers' prices; a SELL: the USDC the shares bring) and the limit it is sent with (the typed price, else best ±
 * `capBps`).
 */
function MarketEstimateLine({
  estimate,
  limit,
  capBps,
  side,
  typed,
}: {
  estimate: ClobMarketEstimate;
  limit: string;
  capBps: number;
  side: 'BUY' | 'SELL';
  typed: boolean;
}) {
  if (!estimate.avgPrice)
    return (
      <p class="warn" data-testid="clob-estimate">
        Nothing fills within the limit {limit} USDC.
      </p>
    );
  // Shares to the token's base unit (6 decimals, trailing zeros dropped): the venue's own amount.
  const shares = cut(estimate.shares, 6).replace(/\.?0+$/, '');
  const usdc = cut(estimate.usdc, 2);
  return (
    <p class="small" data-testid="clob-estimate">
      Est. average <span data-testid="clob-est-avg">{estimate.avgPrice}</span> USDC · slippage{' '}
      <span data-testid="clob-est-slip">{estimate.slippageBps}</span> bp ·{' '}
      <span data-testid="clob-est-cost">
        {side === 'BUY' ? `≈ ${shares} shares for ${usdc} USDC` : `${shares} shares bring ≈ ${usdc} USDC`}
      </span>{' '}
      · limit {limit} USDC{typed ? '' : ` (best ± ${capBps / 100} %)`}
      {estimate.complete ? null : ' · only part fills within the limit'}
    </p>
  );
}
