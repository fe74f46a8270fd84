/**
 * One perps position: side and size, entry, mark, liquidation price, unrealised PnL and ROE, margin and
 * leverage, cumulative funding; Close (at market) and a take-profit / stop-loss trigger form.
 * Presentational: decimal strings in (as the venue's portfolio read answers them), events out; the
 * trigger kind and price being typed stay local. Prices are shown to the instrument's `tick`, sizes to
 * its `lot`, amounts in USDC with two decimals (lib/format, issue #19).
 */
import { useState } from 'preact/hooks';
import { formatStep, formatUsdc } from '../../lib/format';
import { signedDecimal } from '../../lib/format/order-words';
import { Button, Field } from '../ui';

/** The fields of a position this row shows (size signed: + long, − short; `return_on_equity` a fraction). */
export type PositionRowData = {
  instrument_id: number;
  symbol: string;
  size: string;
  entry_price: string;
  leverage: number;
  cross: boolean;
  initial_margin: string;
  liquidation_price: string;
  unrealized_pnl: string;
  return_on_equity: string;
  cumulative_funding: string;
};

/** ROE as a percentage with two decimals ("12.50% ROE" without the suffix). */
export const roeText = (fraction: string) => `${(Number(fraction) * 100).toFixed(2)}%`;

/** The row (`data-testid="position-<iid>"`). */
export function PositionRow({ p, mark, tick, lot, onClose, onTrigger }: { p: PositionRowData; mark?: string; tick: string; lot: string; onClose: () => void; onTrigger: (kind: 'tp' | 'sl', price: string) => void }) {
  const [kind, setKind] = useState<'tp' | 'sl'>('sl');
  const [trp, setTrp] = useState('');
  const long = !p.size.startsWith('-');
  return (
    <li class="position" data-testid={`position-${p.instrument_id}`}>
      <div class="row-head">
        <strong class={long ? 'buy-text' : 'sell-text'}>{long ? 'Long' : 'Short'} {signedDecimal(p.size.replace('-', ''), lot).text} {p.symbol}</strong>
        <Button onClick={onClose} aria-label={`Close ${p.symbol} at market`}>Close</Button>
      </div>
      <dl class="kv num">
        <dt>Entry</dt><dd>{formatStep(p.entry_price, tick)} USDC</dd>
        <dt>Mark</dt><dd>{mark ? `${formatStep(mark, tick)} USDC` : '…'}</dd>
        <dt>Liquidation</dt><dd data-testid="position-liq">{p.liquidation_price === '0' ? 'none' : `${formatStep(p.liquidation_price, tick)} USDC`}</dd>
        <dt>Unrealised PnL</dt><dd data-testid="position-pnl" class={p.unrealized_pnl.startsWith('-') ? 'sell-text' : 'buy-text'}>{formatUsdc(p.unrealized_pnl)} ({roeText(p.return_on_equity)} ROE)</dd>
        <dt>Margin</dt><dd>{formatUsdc(p.initial_margin)} · {p.leverage}× {p.cross ? 'cross' : 'isolated'}</dd>
        <dt>Funding</dt><dd>{formatUsdc(p.cumulative_funding)}</dd>
      </dl>
      <form class="grid3" onSubmit={(e) => { e.preventDefault(); if (trp) onTrigger(kind, trp); }}>
        <Field label="Trigger">
          <select name="tpsl" value={kind} onChange={(e) => setKind(e.currentTarget.value === 'tp' ? 'tp' : 'sl')}>
            <option value="sl">Stop-loss</option>
            <option value="tp">Take-profit</option>
          </select>
        </Field>
        <Field label="Trigger price (USDC)"><input name="trp" inputMode="decimal" value={trp} onInput={(e) => setTrp(e.currentTarget.value.trim())} /></Field>
        <Button type="submit" disabled={!trp}>Set</Button>
      </form>
    </li>
  );
}
