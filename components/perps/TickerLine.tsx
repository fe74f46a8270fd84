/**
 * The instrument's prices under the ticket: mark (bold), index, mid and the 24 h change. Presentational:
 * prices are decimal strings as the venue's tickers read answers them; `change` is a percentage.
 */

/** Formats a 24 h change in percent with its sign and two decimals ("+1.25%", "-0.40%"). */
export function formatChange(change: number): string {
  return `${change >= 0 ? '+' : ''}${change.toFixed(2)}%`;
}

/** One line of prices (`data-testid="ticker"`). */
export function TickerLine({ ticker, change }: { ticker: { mark_price: string; index_price: string; mid_price: string }; change: number | undefined }) {
  return (
    <p class="prices small num" data-testid="ticker">
      mark <strong>{ticker.mark_price}</strong> · index {ticker.index_price} · mid {ticker.mid_price}
      {change !== undefined ? <span class={change >= 0 ? 'buy-text' : 'sell-text'}> · 24 h {formatChange(change)}</span> : null}
    </p>
  );
}
