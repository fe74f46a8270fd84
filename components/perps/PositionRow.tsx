/**
 * One perps position: side and size, entry, mark, liquidation price, unrealised PnL and ROE, margin and
 * leverage, cumulative funding; Close (at market) and Protect: take-profit and / or stop-loss trigger
 * prices that close the whole position at market (whatever it holds when one fires).
 * Presentational: decimal strings in (as the venue's portfolio read answers them), events out. The size is shown as the
 * venue reports it, padded to the instrument's `lot` and never rounded (`signedDecimal`); estimates (entry, mark,
 * liquidation) to its `tick`; amounts in USDC with two decimals. The instrument is named by `label` (`instrumentLabel`
 * over the instruments read), never by a name the portfolio read carries. The trigger prices being typed stay local;
 * `onProtect` gets them as typed ('' = none).
 */
import { useState } from 'preact/hooks';
import { formatStep, formatUsdc } from '../../lib/format';
import { signedDecimal } from '../../lib/format/order-words';
import { Button, Field } from '../ui';

/** The fields of a position this row shows (size signed: + long, − short; `return_on_equity` a fraction). */
export type PositionRowData = {
  instrument_id: number;
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
export function PositionRow({
  p,
  label,
  mark,
  tick,
  lot,
  onClose,
  onProtect,
}: {
  p: PositionRowData;
  label: string;
  mark?: string;
  tick: string;
  lot: string;
  onClose: () => void;
  onProtect: (tp: string, sl: string) => void;
}) {
  const [tp, setTp] = useState('');
  const [sl, setSl] = useState('');
  const long = !p.size.startsWith('-');
  return (
    <li class="position" data-testid={`position-${p.instrument_id}`}>
      <div class="row-head">
        <strong class={long ? 'buy-text' : 'sell-text'}>
          {long ? 'Long' : 'Short'} {signedDecimal(p.size.replace('-', ''), lot).text} {label}
        </strong>
        <Button onClick={onClose} aria-label={`Close ${label} at market`}>
          Close
        </Button>
      </div>
      <dl class="kv num">
        <dt>Entry</dt>
        <dd>{formatStep(p.entry_price, tick)} USDC</dd>
        <dt>Mark</dt>
        <dd>{mark ? `${formatStep(mark, tick)} USDC` : '…'}</dd>
        <dt>Liquidation</dt>
        <dd data-testid="position-liq">
          {p.liquidation_price === '0' ? 'none' : `${formatStep(p.liquidation_price, tick)} USDC`}
        </dd>
        <dt>Unrealised PnL</dt>
        <dd data-testid="position-pnl" class={p.unrealized_pnl.startsWith('-') ? 'sell-text' : 'buy-text'}>
          {formatUsdc(p.unrealized_pnl)} ({roeText(p.return_on_equity)} ROE)
        </dd>
        <dt>Margin</dt>
        <dd>
          {formatUsdc(p.initial_margin)} · {p.leverage}× {p.cross ? 'cross' : 'isolated'}
        </dd>
        <dt>Funding</dt>
        <dd>{formatUsdc(p.cumulative_funding)}</dd>
      </dl>
      <form
        class="grid3"
        aria-label={`Protect the whole ${label} position`}
        onSubmit={(e) => {
          e.preventDefault();
          if (tp || sl) onProtect(tp, sl);
        }}
      >
        <Field label="Take-profit (USDC)">
          <input
            name="tp"
            inputMode="decimal"
            placeholder="none"
            value={tp}
            onInput={(e) => setTp(e.currentTarget.value.trim())}
          />
        </Field>
        <Field label="Stop-loss (USDC)">
          <input
            name="sl"
            inputMode="decimal"
            placeholder="none"
            value={sl}
            onInput={(e) => setSl(e.currentTarget.value.trim())}
          />
        </Field>
        <Button type="submit" disabled={!tp && !sl}>
          Protect
        </Button>
      </form>
    </li>
  );
}
