/**
 * The leverage disclosure under the perps ticket: "Leverage 10× · cross margin", the leverage field,
 * the margin mode and Set leverage. Presentational: `lev` is the typed text, events carry new values.
 */
import { Button, Field } from '../ui';

/** The `<details>` block. */
export function LeverageForm(props: {
  lev: string;
  cross: boolean;
  onLev: (lev: string) => void;
  onCross: (cross: boolean) => void;
  onApply: () => void;
}) {
  return (
    <details class="lev">
      <summary>
        Leverage {props.lev}× · {props.cross ? 'cross' : 'isolated'} margin
      </summary>
      <div class="grid3">
        <Field label="Leverage">
          <input
            name="lev"
            inputMode="numeric"
            value={props.lev}
            onInput={(e) => props.onLev(e.currentTarget.value.trim())}
          />
        </Field>
        <label class="check">
          <input type="checkbox" checked={props.cross} onChange={(e) => props.onCross(e.currentTarget.checked)} /> Cross
          margin
        </label>
        <Button onClick={props.onApply}>Set leverage</Button>
      </div>
    </details>
  );
}
