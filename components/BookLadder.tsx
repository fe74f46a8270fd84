/**
 * A compact book ladder: asks above (best nearest the middle), the spread, bids below; each level is
 * a button that takes its price. Presentational: levels are `[price, quantity]` decimal strings, best
 * first, as the venue's book read answers them.
 */
export function BookLadder(props: { bids: readonly [string, string][]; asks: readonly [string, string][]; spread?: string; depth?: number; onPick: (price: string) => void }) {
  const depth = props.depth ?? 10;
  const asks = props.asks.slice(0, depth).reverse();
  const bids = props.bids.slice(0, depth);
  const row = (side: 'ask' | 'bid') => ([p, q]: readonly [string, string]) => (
    <li key={`${side}${p}`}>
      <button type="button" class={`level ${side}`} onClick={() => props.onPick(p)} aria-label={`${side === 'ask' ? 'Ask' : 'Bid'} ${p}, size ${q}: use this price`}>
        <span class="num">{p}</span>
        <span class="num muted">{q}</span>
      </button>
    </li>
  );
  return (
    <div class="ladder" aria-label="Order book">
      <ul class="asks">{asks.map(row('ask'))}</ul>
      <p class="spread muted small num" data-testid="spread">spread {props.spread ?? '—'}</p>
      <ul class="bids">{bids.map(row('bid'))}</ul>
    </div>
  );
}
