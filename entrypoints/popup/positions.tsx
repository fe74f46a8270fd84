/**
 * Positions: every perps position with size, entry, mark, liquidation price, unrealised
 * PnL and ROE, margin and cumulative funding; close (reduce-only market) and protect (take-profit /
 * stop-loss on the whole position); account value, withdrawable and margin ratio; fills with paging,
 * funding payments, and an equity / PnL chart over 1 d / 7 d / 30 d. Reads the venue's reads only.
 * State: the perps store and `stores/positions.ts`.
 */
import { useEffect, useMemo } from 'preact/hooks';
import { Button, ErrorText, Notice } from '../../components/ui';
import { LineChart } from '../../components/LineChart';
import { PositionRow } from '../../components/perps/PositionRow';
import type { Account } from './api';
import { sendPerps } from './perps';
import { labelOf, lotOf, tickOf, type PerpsStore } from './stores/perps';
import { formatUsdc } from '../../lib/format';
import { signedDecimal } from '../../lib/format/order-words';
import { createPositionsStore, RANGE_NAMES } from './stores/positions';
import { DEFAULT_SLIPPAGE_BPS } from '../../lib/perps/risk';
import { Fragment } from 'preact';
import { ClosePreview } from '../../components/RiskPanel';

/** A Unix-ms time as "MM-DD hh:mm" (UTC). */
const time = (ms: number) => new Date(ms).toISOString().slice(5, 16).replace('T', ' ');

/** The Positions tab for `account` over the shared perps store. */
export function PositionsView({
  account,
  store,
  slippageBps = DEFAULT_SLIPPAGE_BPS,
}: {
  account: Account;
  store: PerpsStore;
  slippageBps?: number;
}) {
  const s = useMemo(() => createPositionsStore(store, (cmd) => sendPerps(account, cmd)), [store, account.address]);
  useEffect(() => s.start(), [s]);
  const portfolio = store.portfolio.value;
  const label = (iid: number) => labelOf(store.instruments.value, iid);
  const mark = (iid: number) => store.tickers.value.find((t) => t.instrument_id === iid)?.mark_price;
  const inst = (iid: number) => store.instruments.value.find((i) => i.instrument_id === iid);
  const tick = (iid: number) => {
    const i = inst(iid);
    return i ? tickOf(i) : '0.01';
  };
  const lot = (iid: number) => {
    const i = inst(iid);
    return i ? lotOf(i) : '0.001';
  };
  const series = s.series.value;
  return (
    <section class="panel positions" aria-label="Positions">
      {portfolio ? (
        <dl class="kv num summary" data-testid="account-summary">
          <dt>Account value</dt>
          <dd data-testid="account-value">{formatUsdc(portfolio.margin.total_account_value)}</dd>
          <dt>Withdrawable</dt>
          <dd>{formatUsdc(portfolio.withdrawable)}</dd>
          <dt>Margin ratio</dt>
          <dd>{s.marginRatio.value.toFixed(2)}%</dd>
        </dl>
      ) : (
        <p class="muted">Loading the portfolio…</p>
      )}
      <ErrorText error={s.error.value} />
      {s.notice.value ? <Notice>{s.notice.value}</Notice> : null}
      {portfolio && portfolio.positions.length === 0 ? <p class="muted">No open positions.</p> : null}
      <ul class="positions-list">
        {portfolio?.positions.map((p) => {
          const m = mark(p.instrument_id);
          const c = s.closing.value?.p.instrument_id === p.instrument_id ? s.closing.value : undefined;
          return (
            <Fragment key={p.instrument_id}>
              <PositionRow
                p={p}
                label={label(p.instrument_id)}
                {...(m ? { mark: m } : {})}
                tick={tick(p.instrument_id)}
                lot={lot(p.instrument_id)}
                onClose={() => void s.close(p, slippageBps)}
                onProtect={(tp, sl) => void s.protect(p, tp, sl)}
              />
              {c ? (
                <li>
                  <ClosePreview
                    symbol={c.label}
                    tick={tick(p.instrument_id)}
                    lot={lot(p.instrument_id)}
                    preview={c.preview}
                    onConfirm={() => void s.confirmClose()}
                    onCancel={s.cancelClose}
                  />
                </li>
              ) : null}
            </Fragment>
          );
        })}
      </ul>
      <h3>
        <button
          type="button"
          class={series === 'equity' ? 'tab active' : 'tab'}
          onClick={() => void s.chart({ series: 'equity' })}
        >
          Equity
        </button>
        <button
          type="button"
          class={series === 'pnl' ? 'tab active' : 'tab'}
          onClick={() => void s.chart({ series: 'pnl' })}
        >
          PnL
        </button>
        {RANGE_NAMES.map((r) => (
          <button
            type="button"
            key={r}
            class={s.range.value === r ? 'tab active' : 'tab'}
            onClick={() => void s.chart({ range: r })}
          >
            {r}
          </button>
        ))}
      </h3>
      <LineChart
        points={s.points.value.map(([t, v]) => ({ t, v: Number(v) }))}
        label={series === 'equity' ? 'Equity history' : 'PnL history'}
        format={(v) => v.toFixed(0)}
      />
      <h3>Fills</h3>
      {s.fills.value.length === 0 ? <p class="muted">No fills yet.</p> : null}
      <table class="fills num" data-testid="fills">
        <thead>
          <tr>
            <th scope="col">Time (UTC)</th>
            <th scope="col">Fill</th>
            <th scope="col">Price</th>
            <th scope="col">Fee</th>
            <th scope="col">Realised PnL</th>
          </tr>
        </thead>
        <tbody>
          {s.fills.value.map((f) => (
            <tr key={`${f.trade_id}-${f.order_id}`}>
              <td>{time(f.timestamp)}</td>
              <td class={f.side === 'long' ? 'buy-text' : 'sell-text'}>
                {/* The venue's fill as reported: padded to the lot and tick, never rounded. */}
                {f.side === 'long' ? 'Buy' : 'Sell'} {signedDecimal(f.quantity, lot(f.instrument_id)).text}{' '}
                {label(f.instrument_id)}
              </td>
              <td>{signedDecimal(f.price, tick(f.instrument_id)).text}</td>
              <td data-testid="fill-fee">{formatUsdc(f.fee)}</td>
              <td data-testid="fill-pnl" class={f.pnl.startsWith('-') ? 'sell-text' : undefined}>
                {formatUsdc(f.pnl)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {s.more.value ? <Button onClick={() => void s.moreFills()}>More fills</Button> : null}
      <h3>Funding payments</h3>
      {s.funding.value.length === 0 ? <p class="muted">No funding payments yet.</p> : null}
      <ul class="funding num" data-testid="funding-payments">
        {s.funding.value.slice(0, 20).map((f) => (
          <li key={f.id}>
            {time(f.timestamp)} · {label(f.instrument_id)} · {formatUsdc(f.funding)} at{' '}
            {(Number(f.funding_rate) * 100).toFixed(4)}%
          </li>
        ))}
      </ul>
    </section>
  );
}
