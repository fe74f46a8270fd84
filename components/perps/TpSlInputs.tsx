/**
 * Optional take-profit / stop-loss trigger prices and the per-order slippage cap of the perps ticket
 * (issue #19): TP / SL become reduce-only market trigger orders signed in the same command as the
 * entry; an empty cap takes the Settings value. Presentational: strings in, strings out.
 */
import { Field } from '../ui';

/** The row of TP, SL and slippage-cap inputs. */
export function TpSlInputs(props: { tp: string; sl: string; slippage: string; defaultCapBps: number; onTp: (v: string) => void; onSl: (v: string) => void; onSlippage: (v: string) => void }) {
  return (
    <div class="grid3">
      <Field label="Take-profit"><input name="tp" inputMode="decimal" placeholder="none" value={props.tp} onInput={(e) => props.onTp(e.currentTarget.value.trim())} /></Field>
      <Field label="Stop-loss"><input name="sl" inputMode="decimal" placeholder="none" value={props.sl} onInput={(e) => props.onSl(e.currentTarget.value.trim())} /></Field>
      <Field label="Slippage cap (bp)"><input name="slippage" inputMode="numeric" placeholder={String(props.defaultCapBps)} value={props.slippage} onInput={(e) => props.onSlippage(e.currentTarget.value.trim())} /></Field>
    </div>
  );
}
