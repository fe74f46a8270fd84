/**
 * Positions (issue #10 §2): every perps position with size, entry, mark, liquidation price, unrealised
 * PnL and ROE, margin and cumulative funding; close (reduce-only market) and take-profit / stop-loss
 * (reduce-only trigger orders); account value, withdrawable and margin ratio; fills with paging,
 * funding payments, and an equity / PnL chart over 1 d / 7 d / 30 d. Reads the venue's reads only.
 */
import { useEffect, useState } from 'preact/hooks';
import { Button, ErrorText, Field, Notice } from '../../components/ui';
import { LineChart } from '../../components/LineChart';
import { createOrders } from '../../lib/perps/commands';
import { messageOf, type Account } from './api';
import { sendPerps } from './perps';
import type { PerpsStore, Position } from './stores/perps';

type Fill = { trade_id: number; order_id: number; instrument_id: number; side: 'long' | 'short'; price: string; quantity: string; fee: string; pnl: string; taker: boolean; timestamp: number };
type FundingPayment = { id: number; instrument_id: number; size: string; funding_rate: string; funding: string; timestamp: number };
const RANGES = { '1d': { ms: 86_400_000, interval: '1h' }, '7d': { ms: 7 * 86_400_000, interval: '4h' }, '30d': { ms: 30 * 86_400_000, interval: '1d' } } as const;
const time = (ms: number) => new Date(ms).toISOString().slice(5, 16).replace('T', ' ');

function PositionRow({ p, mark, onClose, onTrigger }: { p: Position; mark?: string; onClose: () => void; onTrigger: (kind: 'tp' | 'sl', price: string) => void }) {
  const [kind, setKind] = useState<'tp' | 'sl'>('sl');
  const [trp, setTrp] = useState('');
  const long = !p.size.startsWith('-');
  return (
    <li class="position" data-testid={`position-${p.instrument_id}`}>
      <div class="row-head">
        <strong class={long ? 'buy-text' : 'sell-text'}>{long ? 'Long' : 'Short'} {p.size.replace('-', '')} {p.symbol}</strong>
        <Button onClick={onClose} aria-label={`Close ${p.symbol} at market`}>Close</Button>
      </div>
      <dl class="kv num">
        <dt>Entry</dt><dd>{p.entry_price}</dd>
        <dt>Mark</dt><dd>{mark ?? '…'}</dd>
        <dt>Liquidation</dt><dd data-testid="position-liq">{p.liquidation_price === '0' ? 'none' : p.liquidation_price}</dd>
        <dt>Unrealised PnL</dt><dd data-testid="position-pnl" class={p.unrealized_pnl.startsWith('-') ? 'sell-text' : 'buy-text'}>{p.unrealized_pnl} USDC ({(Number(p.return_on_equity) * 100).toFixed(2)}% ROE)</dd>
        <dt>Margin</dt><dd>{p.initial_margin} USDC · {p.leverage}× {p.cross ? 'cross' : 'isolated'}</dd>
        <dt>Funding</dt><dd>{p.cumulative_funding} USDC</dd>
      </dl>
      <form class="grid3" onSubmit={(e) => { e.preventDefault(); if (trp) onTrigger(kind, trp); }}>
        <Field label="Trigger">
          <select name="tpsl" value={kind} onChange={(e) => setKind(e.currentTarget.value as 'tp' | 'sl')}>
            <option value="sl">Stop-loss</option>
            <option value="tp">Take-profit</option>
          </select>
        </Field>
        <Field label="Trigger price"><input name="trp" inputMode="decimal" value={trp} onInput={(e) => setTrp(e.currentTarget.value.trim())} /></Field>
        <Button type="submit" disabled={!trp}>Set</Button>
      </form>
    </li>
  );
}

export function PositionsView({ account, store }: { account: Account; store: PerpsStore }) {
  const [fills, setFills] = useState<Fill[]>([]);
  const [more, setMore] = useState(false);
  const [funding, setFunding] = useState<FundingPayment[]>([]);
  const [range, setRange] = useState<keyof typeof RANGES>('1d');
  const [series, setSeries] = useState<'equity' | 'pnl'>('equity');
  const [points, setPoints] = useState<[number, string][]>([]);
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const portfolio = store.portfolio.value;
  const symbol = (iid: number) => store.instruments.value.find((i) => i.instrument_id === iid)?.symbol ?? `#${iid}`;

  const loadFills = async (before?: number) => {
    const page = await store.read<{ data: Fill[]; more: boolean }>('fills', before === undefined ? {} : { end_timestamp: before });
    setFills((cur) => (before === undefined ? page.data : [...cur, ...page.data]));
    setMore(page.more);
  };
  useEffect(() => {
    void loadFills().catch((e) => setError(messageOf(e)));
    void store.read<{ data: FundingPayment[] }>('fundingPayments').then((r) => setFunding(r.data)).catch(() => undefined);
  }, []);
  useEffect(() => {
    const r = RANGES[range];
    void store
      .read<{ data: [number, string][] }>(series, { interval: r.interval, start_timestamp: Date.now() - r.ms, end_timestamp: Date.now() })
      .then((x) => setPoints(x.data))
      .catch(() => setPoints([]));
  }, [range, series]);

  const run = async (what: () => Promise<unknown>, done: string) => {
    setError(undefined);
    setNotice(undefined);
    try {
      await what();
      setNotice(done);
      await store.refresh();
      await loadFills();
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const close = (p: Position) =>
    run(() => sendPerps(account, createOrders({ orders: [{ iid: p.instrument_id, buy: p.size.startsWith('-'), qty: p.size.replace('-', ''), tif: 'ioc', ro: true }] })), `Closed ${p.symbol}`);
  const trigger = (p: Position, kind: 'tp' | 'sl', trp: string) =>
    run(
      () => sendPerps(account, createOrders({ orders: [{ iid: p.instrument_id, buy: p.size.startsWith('-'), qty: p.size.replace('-', ''), ro: true, tr: { tpsl: kind, trp, market: true } }] })),
      `${kind === 'sl' ? 'Stop-loss' : 'Take-profit'} set at ${trp} for ${p.symbol}`,
    );

  const value = portfolio ? Number(portfolio.margin.total_account_value) : 0;
  const ratio = portfolio && value > 0 ? (Number(portfolio.margin.total_maintenance_margin) / value) * 100 : 0;
  return (
    <section class="panel positions" aria-label="Positions">
      {portfolio ? (
        <dl class="kv num summary" data-testid="account-summary">
          <dt>Account value</dt><dd data-testid="account-value">{portfolio.margin.total_account_value} USDC</dd>
          <dt>Withdrawable</dt><dd>{portfolio.withdrawable} USDC</dd>
          <dt>Margin ratio</dt><dd>{ratio.toFixed(2)}%</dd>
        </dl>
      ) : (
        <p class="muted">Loading the portfolio…</p>
      )}
      <ErrorText error={error} />
      {notice ? <Notice>{notice}</Notice> : null}
      {portfolio && portfolio.positions.length === 0 ? <p class="muted">No open positions.</p> : null}
      <ul class="positions-list">
        {portfolio?.positions.map((p) => (
          <PositionRow key={p.instrument_id} p={p} {...(store.tickers.value.find((t) => t.instrument_id === p.instrument_id)?.mark_price ? { mark: store.tickers.value.find((t) => t.instrument_id === p.instrument_id)!.mark_price } : {})} onClose={() => void close(p)} onTrigger={(k, t) => void trigger(p, k, t)} />
        ))}
      </ul>
      <h3>
        <button type="button" class={series === 'equity' ? 'tab active' : 'tab'} onClick={() => setSeries('equity')}>Equity</button>
        <button type="button" class={series === 'pnl' ? 'tab active' : 'tab'} onClick={() => setSeries('pnl')}>PnL</button>
        {(Object.keys(RANGES) as (keyof typeof RANGES)[]).map((r) => (
          <button type="button" key={r} class={range === r ? 'tab active' : 'tab'} onClick={() => setRange(r)}>{r}</button>
        ))}
      </h3>
      <LineChart points={points.map(([t, v]) => ({ t, v: Number(v) }))} label={series === 'equity' ? 'Equity history' : 'PnL history'} format={(v) => v.toFixed(0)} />
      <h3>Fills</h3>
      {fills.length === 0 ? <p class="muted">No fills yet.</p> : null}
      <table class="fills num" data-testid="fills">
        <tbody>
          {fills.map((f) => (
            <tr key={`${f.trade_id}-${f.order_id}`}>
              <td>{time(f.timestamp)}</td>
              <td class={f.side === 'long' ? 'buy-text' : 'sell-text'}>{f.side === 'long' ? 'Buy' : 'Sell'} {f.quantity} {symbol(f.instrument_id)}</td>
              <td>@ {f.price}</td>
              <td>fee {f.fee}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {more ? <Button onClick={() => void loadFills(fills[fills.length - 1]!.timestamp - 1)}>More fills</Button> : null}
      <h3>Funding payments</h3>
      {funding.length === 0 ? <p class="muted">No funding payments yet.</p> : null}
      <ul class="funding num" data-testid="funding-payments">
        {funding.slice(0, 20).map((f) => (
          <li key={f.id}>{time(f.timestamp)} · {symbol(f.instrument_id)} · {f.funding} USDC at {(Number(f.funding_rate) * 100).toFixed(4)}%</li>
        ))}
      </ul>
    </section>
  );
}
