/**
 * The instrument's prices under the ticket: mark (bold), index, mid and the 24 h change. Presentational:
 * prices are decimal strings as the venue's tickers read answers them, shown to the instrument's `tick`
 * (lib/format); `change` is a percentage.
 */
import { formatStep } from '../../lib/format';

/** Formats a 24 h change in percent with its sign and two decimals ("+1.25%", "-0.40%"). */
export function formatChange(change: number): string {
  return `${change >= 0 ? '+' : ''}${change.toFixed(2)}%`;
}

/** One line of prices (`data-testid="ticker"`). */
export function TickerLine({
  ticker,
  change,
  tick,
}: {
  ticker: { mark_price: string; index_price: string; mid_price: string };
  change: number | undefined;
  tick: string;
}) {
  return (
    <p class="prices small num" data-testid="ticker">
      mark <strong>{formatStep(ticker.mark_price, tick)}</strong> · index {formatStep(ticker.index_price, tick)}
      {' · mid '}
      {formatStep(ticker.mid_price, tick)}
      {change !== undefined ? (
        <span class={change >= 0 ? 'buy-text' : 'sell-text'}> · 24 h {formatChange(change)}</span>
      ) : null}
    </p>
  );
}
