/**
 * "Allow this site within limits…" (issue #11 §1): the limits of a standing grant, in plain fields,
 * prefilled for the request being approved. Presentational: `onSubmit` receives the limits exactly as
 * the background validates them (decimal strings, integers) and the duration in minutes (≤ 24 h).
 */
import { useState } from 'preact/hooks';
import { Button, Field } from './ui';

import type { GrantLimits } from '../lib/grants/evaluate';

/** The limits the form produces (those of `lib/grants`). */
export type GrantFormLimits = GrantLimits;

const DEC = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

export function GrantForm(props: { venue: 'perps' | 'clob'; markets: string[]; busy?: boolean; onSubmit: (limits: GrantFormLimits, minutes: number) => void }) {
  const [order, setOrder] = useState(true);
  const [cancel, setCancel] = useState(true);
  const [leverage, setLeverage] = useState(false);
  const [onlyThese, setOnlyThese] = useState(true);
  const [maxNotional, setMaxNotional] = useState('2000');
  const [daily, setDaily] = useState('20000');
  const [maxSize, setMaxSize] = useState('');
  const [maxLev, setMaxLev] = useState('');
  const [band, setBand] = useState('2');
  const [postOnly, setPostOnly] = useState(false);
  const [reduceOnly, setReduceOnly] = useState(false);
  const [rate, setRate] = useState('60');
  const [hours, setHours] = useState('8');
  const bad = [maxNotional, daily, maxSize, band].some((x) => x !== '' && !DEC.test(x)) || !/^\d+$/.test(hours) || Number(hours) < 1 || Number(hours) > 24 || (rate !== '' && !/^[1-9]\d{0,3}$/.test(rate)) || (maxLev !== '' && !/^[1-9]\d{0,2}$/.test(maxLev));
  const submit = (e: Event) => {
    e.preventDefault();
    if (bad) return;
    const limits: GrantFormLimits = { allow: { order, cancel, leverage } };
    if (onlyThese && props.markets.length) {
      if (props.venue === 'perps') limits.instruments = props.markets.map(Number);
      else limits.markets = props.markets;
    }
    if (maxNotional) limits.maxNotional = maxNotional;
    if (daily) limits.dailyNotional = daily;
    if (maxSize) limits.maxSize = maxSize;
    if (maxLev) limits.maxLeverage = Number(maxLev);
    if (band) limits.priceBandPct = band;
    if (postOnly) limits.postOnly = true;
    if (reduceOnly) limits.reduceOnly = true;
    if (rate) limits.ratePerMinute = Number(rate);
    props.onSubmit(limits, Number(hours) * 60);
  };
  return (
    <form class="grant-form" onSubmit={submit} aria-label="Standing permission">
      <p class="muted small">Requests inside these limits will be signed without asking; anything else, and anything that moves funds, still asks.</p>
      <div class="grid3">
        <label class="check"><input type="checkbox" checked={order} onChange={(e) => setOrder(e.currentTarget.checked)} /> Orders</label>
        <label class="check"><input type="checkbox" checked={cancel} onChange={(e) => setCancel(e.currentTarget.checked)} /> Cancels</label>
        {props.venue === 'perps' ? <label class="check"><input type="checkbox" checked={leverage} onChange={(e) => setLeverage(e.currentTarget.checked)} /> Leverage</label> : <span />}
      </div>
      <label class="check"><input type="checkbox" checked={onlyThese} onChange={(e) => setOnlyThese(e.currentTarget.checked)} /> Only {props.venue === 'perps' ? 'this instrument' : 'this market'}</label>
      <div class="grid2">
        <Field label="Max notional per order (USDC)"><input name="grant-max-notional" inputMode="decimal" value={maxNotional} onInput={(e) => setMaxNotional(e.currentTarget.value.trim())} /></Field>
        <Field label="Max notional per 24 h (USDC)"><input name="grant-daily" inputMode="decimal" value={daily} onInput={(e) => setDaily(e.currentTarget.value.trim())} /></Field>
        <Field label="Max size per order"><input name="grant-max-size" inputMode="decimal" value={maxSize} placeholder="any" onInput={(e) => setMaxSize(e.currentTarget.value.trim())} /></Field>
        <Field label="Price within % of mid"><input name="grant-band" inputMode="decimal" value={band} placeholder="any" onInput={(e) => setBand(e.currentTarget.value.trim())} /></Field>
        {props.venue === 'perps' ? <Field label="Max leverage"><input name="grant-max-lev" inputMode="numeric" value={maxLev} placeholder="any" onInput={(e) => setMaxLev(e.currentTarget.value.trim())} /></Field> : null}
        <Field label="Requests per minute"><input name="grant-rate" inputMode="numeric" value={rate} onInput={(e) => setRate(e.currentTarget.value.trim())} /></Field>
        <Field label="For (hours, ≤ 24)"><input name="grant-hours" inputMode="numeric" value={hours} onInput={(e) => setHours(e.currentTarget.value.trim())} /></Field>
      </div>
      <div class="grid2">
        <label class="check"><input type="checkbox" checked={postOnly} onChange={(e) => setPostOnly(e.currentTarget.checked)} /> Post-only only</label>
        {props.venue === 'perps' ? <label class="check"><input type="checkbox" checked={reduceOnly} onChange={(e) => setReduceOnly(e.currentTarget.checked)} /> Reduce-only only</label> : <span />}
      </div>
      <Button kind="primary" type="submit" disabled={bad || props.busy}>Save permission</Button>
    </form>
  );
}
