/**
 * Size and price of a perps order, with the size presets (25 / 50 / 75 / 100 % of what the free margin
 * allows, keys 1-4) and the unit switch (contracts ⇄ USDC). Presentational: values are the typed
 * decimal strings; events carry the trimmed text, the chosen preset fraction or the unit switch.
 */
import type { Ref } from 'preact';
import { Field } from '../ui';

/** A preset fraction ("0.25") as the button's label ("25%"). */
export const presetLabel = (fraction: string) => `${Number(fraction) * 100}%`;

/**
 * Props: `contracts` is the size in contracts when typed in USDC (shown as a hint); `max` the max-size
 * readout already formatted to the lot with its asset ("Max 9.755 SOL"), omitted until known.
 */
export type SizePriceInputsProps = {
  qty: string;
  max?: string | undefined;
  unit: 'contracts' | 'usdc';
  contracts: string;
  price: string;
  tick: string;
  presets: readonly string[];
  qtyRef?: Ref<HTMLInputElement>;
  onQty: (qty: string) => void;
  onPrice: (price: string) => void;
  onPreset: (fraction: string) => void;
  onToggleUnit: () => void;
};

/**
 * ← / → move the focus between the size presets: the row is one Tab stop (a toolbar with a roving
 * tab index), so the order button stays a few Tab presses from the size field.
 */
function movePresetFocus(e: KeyboardEvent): void {
  if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
  const row = e.currentTarget;
  if (
    !(row instanceof HTMLElement) ||
    !(e.target instanceof HTMLButtonElement) ||
    e.target.dataset.testid === 'unit-toggle'
  )
    return;
  const buttons = [...row.querySelectorAll<HTMLButtonElement>('button:not([data-testid="unit-toggle"])')];
  const at = buttons.indexOf(e.target);
  const next = buttons[(at + (e.key === 'ArrowRight' ? 1 : buttons.length - 1)) % buttons.length];
  if (!next) return;
  e.preventDefault();
  e.stopPropagation();
  for (const b of buttons) b.tabIndex = b === next ? 0 : -1;
  next.focus();
}

/** The size field's hint: the USDC conversion and the max-size readout (`data-testid="max-size"`), either or both. */
function sizeHint(conversion: string | undefined, max: string | undefined) {
  if (!conversion && !max) return undefined;
  return (
    <>
      {conversion}
      {conversion && max ? ' · ' : null}
      {max ? <span data-testid="max-size">{max}</span> : null}
    </>
  );
}

/** The two fields (stacked, for the ticket's narrow left column) and the preset row. */
export function SizePriceInputs(props: SizePriceInputsProps) {
  const usdc = props.unit === 'usdc';
  return (
    <div class="size-price">
      <Field
        label={usdc ? 'Size (USDC)' : 'Size (contracts)'}
        hint={sizeHint(usdc && props.contracts ? `= ${props.contracts} contracts` : undefined, props.max)}
      >
        <input
          ref={props.qtyRef}
          name="qty"
          inputMode="decimal"
          value={props.qty}
          onInput={(e) => props.onQty(e.currentTarget.value.trim())}
          autocomplete="off"
        />
      </Field>
      <div class="presets" role="toolbar" aria-label="Size presets (1-4)" onKeyDown={movePresetFocus}>
        {props.presets.map((f, i) => (
          <button
            type="button"
            key={f}
            tabIndex={i === 0 ? 0 : -1}
            onClick={() => props.onPreset(f)}
            aria-keyshortcuts={String(i + 1)}
          >
            {presetLabel(f)}
          </button>
        ))}
        {/* The visible text is the name (no aria-label that says something else: label-content-name-mismatch). */}
        <button type="button" onClick={props.onToggleUnit} title="Switch the size unit" data-testid="unit-toggle">
          in {usdc ? 'contracts' : 'USDC'}
        </button>
      </div>
      <Field label="Price" hint={`tick ${props.tick}; empty = market (IOC)`}>
        <input
          name="price"
          inputMode="decimal"
          value={props.price}
          onInput={(e) => props.onPrice(e.currentTarget.value.trim())}
          autocomplete="off"
        />
      </Field>
    </div>
  );
}
