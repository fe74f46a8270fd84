/**
 * A compact book ladder that fits the popup: a table with column headers
 * (price, size, cumulative total), asks above (best nearest the middle), the spread in price, ticks and
 * basis points, bids below. Clicking a row takes its price; rows are not Tab stops (the keyboard moves
 * the price with ↑ / ↓), so the submit button stays a few Tab presses from the inputs.
 * Presentational: levels are `[price, quantity]` decimal strings, best first, as the venue's book read
 * answers them; `tick` / `lot` pad them, never round them (`signedDecimal`): a row reads the price its
 * click takes and the size the venue quotes, whatever step a gateway reports.
 */
import { cumulative, spreadText } from '../lib/format';
import { signedDecimal } from '../lib/format/order-words';

/** A level's number padded to `step`, never rounded. */
const padded = (v: string, step: string) => signedDecimal(v, step).text;

/**
 * Props: `depth` rows each side (default 6); `unit` names the size column ("BTC", "shares"); `stale` marks a book older
 * than a second.
 */
type BookLadderProps = {
  bids: readonly [string, string][];
  asks: readonly [string, string][];
  tick: string;
  lot: string;
  unit: string;
  depth?: number;
  stale?: boolean;
  onPick: (price: string) => void;
};

/** The ladder (`data-testid="ladder"`, spread `data-testid="spread"`). */
export function BookLadder(props: BookLadderProps) {
  const depth = props.depth ?? 6;
  const asks = props.asks.slice(0, depth);
  const bids = props.bids.slice(0, depth);
  const askTotals = cumulative(asks);
  const bidTotals = cumulative(bids);
  const spread = spreadText(props.asks[0]?.[0], props.bids[0]?.[0], props.tick);
  const row =
    (side: 'ask' | 'bid', totals: string[]) =>
    ([p, q]: readonly [string, string], i: number) => (
      <tr key={`${side}${p}`} class={`level ${side}`} onClick={() => props.onPick(p)} title="Use this price">
        <td>{padded(p, props.tick)}</td>
        <td>{padded(q, props.lot)}</td>
        <td>{padded(totals[i] ?? '0', props.lot)}</td>
      </tr>
    );
  return (
    <table
      class={props.stale ? 'ladder num stale' : 'ladder num'}
      data-testid="ladder"
      aria-label={props.stale ? 'Order book (stale)' : 'Order book'}
    >
      <thead>
        <tr>
          <th scope="col">Price</th>
          <th scope="col" title={`Size (${props.unit})`}>
            Size
          </th>
          <th scope="col">Total</th>
        </tr>
      </thead>
      <tbody class="asks">{asks.map(row('ask', askTotals)).reverse()}</tbody>
      <tbody>
        <tr class="spread">
          <td colSpan={3} data-testid="spread">
            {spread ? `spread ${spread.spread} · ${spread.ticks} ticks · ${spread.bp} bp` : 'spread —'}
          </td>
        </tr>
      </tbody>
      <tbody class="bids">{bids.map(row('bid', bidTotals))}</tbody>
    </table>
  );
}
