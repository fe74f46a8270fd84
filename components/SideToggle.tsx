/**
 * Buy / Sell as a two-button radio group (perps and order-book tickets). Presentational: `buy` in,
 * `onChange(buy)` out.
 */

/** The side picker; `label` names the group for assistive technology (e.g. "Side (B / S)"). */
export function SideToggle({
  buy,
  onChange,
  label,
}: {
  buy: boolean;
  onChange: (buy: boolean) => void;
  label: string;
}) {
  return (
    <div class="side" role="radiogroup" aria-label={label}>
      <button
        type="button"
        role="radio"
        aria-checked={buy}
        class={buy ? 'buy on' : 'buy'}
        onClick={() => onChange(true)}
      >
        Buy
      </button>
      <button
        type="button"
        role="radio"
        aria-checked={!buy}
        class={!buy ? 'sell on' : 'sell'}
        onClick={() => onChange(false)}
      >
        Sell
      </button>
    </div>
  );
}
