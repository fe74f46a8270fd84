/**
 * Optional take-profit / stop-loss trigger prices and the per-order slippage cap of the perps ticket:
 * TP / SL become reduce-only market trigger orders signed in the same command as the
 * entry; an empty cap takes the Settings value. Presentational: strings in, strings out.
 */
import { Field } from '../ui';

/**
 * TP, SL and the slippage cap, folded under one summary line (one Tab stop between the size and the
 * order button, so the keyboard path stays short); it opens by itself while any of them holds a value.
 */
export function TpSlInputs(props: {
  tp: string;
  sl: string;
  slippage: string;
  defaultCapBps: number;
  onTp: (v: string) => void;
  onSl: (v: string) => void;
  onSlippage: (v: string) => void;
}) {
  const set = [
    props.tp && `TP ${props.tp}`,
    props.sl && `SL ${props.sl}`,
    `cap ${props.slippage || props.defaultCapBps} bp`,
  ]
    .filter(Boolean)
    .join(' · ');
  return (
    <details class="tpsl" open={!!(props.tp || props.sl || props.slippage)}>
      <summary data-testid="tpsl-summary">
        TP / SL, slippage <span class="muted small">{set}</span>
      </summary>
      <div class="grid3">
        <Field label="Take-profit">
          <input
            name="tp"
            inputMode="decimal"
            placeholder="none"
            value={props.tp}
            onInput={(e) => props.onTp(e.currentTarget.value.trim())}
          />
        </Field>
        <Field label="Stop-loss">
          <input
            name="sl"
            inputMode="decimal"
            placeholder="none"
            value={props.sl}
            onInput={(e) => props.onSl(e.currentTarget.value.trim())}
          />
        </Field>
        <Field label="Slippage cap (bp)">
          <input
            name="slippage"
            inputMode="numeric"
            placeholder={String(props.defaultCapBps)}
            value={props.slippage}
            onInput={(e) => props.onSlippage(e.currentTarget.value.trim())}
          />
        </Field>
      </div>
    </details>
  );
}
