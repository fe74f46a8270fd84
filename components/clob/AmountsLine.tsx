/**
 * What an order-book order pays and receives before it is signed: maker and taker amounts in human units
 * and in base units, the price, and the fee. Presentational: amounts arrive in base units (6 decimals)
 * and are formatted exactly by `units`.
 */
import type { OrderAmounts } from '../../lib/clob/amounts';

/** The line (`data-testid="amounts"`, the fee `clob-fee`); `fee` in USDC base units. */
export function AmountsLine(props: {
  amounts: OrderAmounts;
  side: 'BUY' | 'SELL';
  feeRateBps: number;
  fee: string;
  units: (base: string) => string;
}) {
  const { amounts: a, side, units } = props;
  return (
    <p class="muted small" data-testid="amounts">
      You pay {units(a.makerAmount)} {side === 'BUY' ? 'USDC' : 'shares'} ({a.makerAmount} base units) for{' '}
      {units(a.takerAmount)} {side === 'BUY' ? 'shares' : 'USDC'} ({a.takerAmount} base units) at {a.price}
      {' · '}
      <span data-testid="clob-fee">
        fee {props.feeRateBps} bp ≈ {units(props.fee)} USDC
      </span>
    </p>
  );
}
