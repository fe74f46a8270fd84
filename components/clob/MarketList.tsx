/**
 * Catalogue search results: each market's question as a link (neg-risk tagged) and "More" when the
 * catalogue has another page. Presentational.
 */
import { Button } from '../ui';

/** The fields of a market this list shows. */
export type MarketRow = { question: string; slug: string; negRisk: boolean };

/** The list; `onPick` receives the market clicked. */
export function MarketList<M extends MarketRow>(props: {
  markets: readonly M[];
  hasMore: boolean;
  onPick: (m: M) => void;
  onMore: () => void;
}) {
  return (
    <ul class="markets">
      {props.markets.map((m) => (
        <li key={m.slug}>
          <button type="button" class="link" onClick={() => props.onPick(m)}>
            {m.question}
          </button>
          {m.negRisk ? <span class="tag">neg-risk</span> : null}
        </li>
      ))}
      {props.hasMore ? (
        <li>
          <Button onClick={props.onMore}>More</Button>
        </li>
      ) : null}
    </ul>
  );
}
