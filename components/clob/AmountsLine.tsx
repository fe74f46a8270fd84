/**
 * What an order-book order pays and receives before it is signed: maker and taker amounts in human units
 * and in base units and the price (the order book's words: `clobTicketWords`, amounts to at least 2 decimals,
 * exact), and the fee. Presentational: amounts arrive in base units (6 decimals), the fee is formatted by `units`.
 */
import type { OrderAmounts } from '../../lib/clob/amounts';
import { clobTicketWords } from '../../lib/clob/words';

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
      {clobTicketWords({ side, makerAmount: a.makerAmount, takerAmount: a.takerAmount, price: a.price })}
      {' · '}
      <span data-testid="clob-fee">
        fee {props.feeRateBps} bp ≈ {units(props.fee)} USDC
      </span>
    </p>
  );
}
