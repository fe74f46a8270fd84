/**
 * Time in force, post-only and reduce-only of a perps order. Presentational. Good-til-cancelled is
 * disabled while the price is empty (a market-style order is IOC) and post-only only applies to GTC.
 */
import type { JSX } from 'preact';
import type { TimeInForce } from '../../lib/perps/commands';
import { Field } from '../ui';

const TIFS: readonly TimeInForce[] = ['gtc', 'ioc', 'fok'];
/** Narrows a `<select>` value to a time in force (undefined for anything else). */
export const asTimeInForce = (v: string): TimeInForce | undefined => TIFS.find((t) => t === v);

/** A checkbox's change handler that hands on whether it is checked. */
const checked =
  (on: (checked: boolean) => void) =>
  (e: JSX.TargetedEvent<HTMLInputElement>): void =>
    on(e.currentTarget.checked);

/** The row of order options. */
export function OrderFlags(props: {
  tif: TimeInForce;
  marketStyle: boolean;
  po: boolean;
  ro: boolean;
  onTif: (t: TimeInForce) => void;
  onPo: (on: boolean) => void;
  onRo: (on: boolean) => void;
}) {
  return (
    <div class="flags-row">
      <Field label="Time in force">
        <select
          name="tif"
          value={props.tif}
          onChange={(e) => {
            const t = asTimeInForce(e.currentTarget.value);
            if (t) props.onTif(t);
          }}
        >
          <option value="gtc" disabled={props.marketStyle}>
            Good til cancelled
          </option>
          <option value="ioc">Immediate or cancel</option>
          <option value="fok">Fill or kill</option>
        </select>
      </Field>
      <div class="checks">
        <label class="check">
          <input
            type="checkbox"
            name="po"
            checked={props.po}
            disabled={props.tif !== 'gtc'}
            onChange={checked(props.onPo)}
          />{' '}
          Post-only
        </label>
        <label class="check">
          <input type="checkbox" name="ro" checked={props.ro} onChange={checked(props.onRo)} /> Reduce-only
        </label>
      </div>
    </div>
  );
}
