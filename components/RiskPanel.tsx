/**
 * What an order does to the account, shown before it is signed: current position and available
 * margin, then notional, margin required, estimated fee, estimated liquidation price after the fill
 * and the leverage, with warnings. Presentational: every number arrives as a decimal string.
 */
import type { OrderPreview } from '../lib/perps/risk';

/** The panel (`data-testid="risk"`): amounts in USDC, `feeRate` a fraction shown in basis points. */
export function RiskPanel(props: {
  symbol: string;
  position?: { size: string; entryPrice: string; unrealizedPnl: string; liquidationPrice: string };
  available: string;
  preview?: OrderPreview;
  leverage: number;
  cross: boolean;
  feeRate?: string;
  warnings: string[];
}) {
  const p = props.preview;
  return (
    <section class="risk" aria-label="Order risk" data-testid="risk">
      <dl class="kv">
        <dt>Position</dt>
        <dd class="num" data-testid="risk-position">{props.position ? `${props.position.size} @ ${props.position.entryPrice}` : 'none'}</dd>
        <dt>Available margin</dt>
        <dd class="num" data-testid="risk-available">{props.available} USDC</dd>
        {p ? (
          <>
            <dt>Notional</dt>
            <dd class="num" data-testid="risk-notional">{p.notional} USDC</dd>
            <dt>Margin required</dt>
            <dd class="num" data-testid="risk-margin">{p.marginRequired} USDC</dd>
            <dt>Est. fee</dt>
            <dd class="num" data-testid="risk-fee">{p.fee} USDC{props.feeRate ? ` (${Number(props.feeRate) * 10_000} bp)` : ''}</dd>
            <dt>After the fill</dt>
            <dd class="num" data-testid="risk-after">{p.newSize === '0' ? 'flat' : `${p.newSize} @ ${p.newEntry}`}</dd>
            <dt>Est. liquidation</dt>
            <dd class="num" data-testid="risk-liq">{p.liquidationPrice ?? 'none'}</dd>
          </>
        ) : null}
        <dt>Leverage</dt>
        <dd class="num">{props.leverage}× {props.cross ? 'cross' : 'isolated'}</dd>
      </dl>
      {props.warnings.length ? (
        <div role="alert">
          <ul class="flags">{props.warnings.map((w) => <li key={w}>⚠ {w}</li>)}</ul>
        </div>
      ) : null}
    </section>
  );
}
