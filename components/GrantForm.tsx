/**
 * "Allow this site within limits…": the limits of a standing grant for the
 * venue and the instruments / markets of the request being approved — nothing else can be added.
 * The per-order and 24 h notional caps are proposed from the account's equity (`GrantOffer`) and can
 * only be lowered; without an equity read the person types them. Caps, price band and (perps)
 * slippage allowance are required. Market and trigger orders are off by default. Presentational:
 * `onSubmit` receives the limits exactly as the background validates them (decimal strings, integers)
 * and the duration in minutes (≤ 24 h).
 */
import { useState } from 'preact/hooks';
import { Button, Field } from './ui';
import { toUnits } from '../lib/decimal';
import { MAX_PRICE_BAND_PCT, MAX_SLIPPAGE_PCT } from '../lib/grants/evaluate';
import { SITE_SHARE_WORDS } from '../lib/ratelimit/reserve';
import { PROPOSED_DAILY_PCT, PROPOSED_ORDER_PCT, type GrantOffer } from '../lib/grants/offer';
import type { GrantLimitsInput } from '../lib/grants/schema';

/** The limits the form produces (the `grant.create` message's `limits`). */
export type GrantFormLimits = GrantLimitsInput;

const DEC = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;
const le = (a: string, b: string) => (toUnits(a, 18) ?? 0n) <= (toUnits(b, 18) ?? 0n);
const positive = (s: string) => DEC.test(s) && (toUnits(s, 18) ?? 0n) > 0n;

/** Why a field is refused, or undefined when it is fine. */
function check(
  label: string,
  value: string,
  o: { required?: boolean; max?: string; maxWhy?: string; decimals?: number },
): string | undefined {
  if (value === '') return o.required ? `${label} is required.` : undefined;
  if (!positive(value)) return `${label} must be a number above 0.`;
  if (o.decimals !== undefined && toUnits(value, o.decimals) === undefined)
    return `${label} has more than ${o.decimals} decimals.`;
  if (o.max !== undefined && !le(value, o.max)) return `${label} can be at most ${o.max}${o.maxWhy ?? ''}.`;
  return undefined;
}

/**
 * The grant form of the approval window: venue and markets fixed by the request shown; per-order
 * and 24 h notional caps (USDC) prefilled from the offer's proposal and never above it; price band and
 * slippage (%); market / trigger orders off by default; duration in hours (≤ 24). Calls `onSubmit` with
 * the limits and the minutes, or shows which field is wrong.
 */
export function GrantForm(props: {
  offer: GrantOffer;
  busy?: boolean;
  onSubmit: (limits: GrantFormLimits, minutes: number) => void;
}) {
  const { offer } = props;
  const perps = offer.venue === 'perps';
  const p = offer.proposal;
  const [order, setOrder] = useState(true);
  const [cancel, setCancel] = useState(perps);
  const [leverage, setLeverage] = useState(false);
  const [market, setMarket] = useState(false);
  const [triggers, setTriggers] = useState(false);
  const [maxNotional, setMaxNotional] = useState(p.maxNotional ?? '');
  const [daily, setDaily] = useState(p.dailyNotional ?? '');
  const [band, setBand] = useState(p.priceBandPct);
  const [slippage, setSlippage] = useState(p.slippagePct ?? '1');
  const [maxSize, setMaxSize] = useState('');
  const [maxLev, setMaxLev] = useState('');
  const [postOnly, setPostOnly] = useState(false);
  const [reduceOnly, setReduceOnly] = useState(false);
  const [rate, setRate] = useState('60');
  const [hours, setHours] = useState('8');
  const fromEquity = ' (from your equity)';
  const problems = [
    check('Max notional per order', maxNotional, {
      required: true,
      decimals: 6,
      ...(p.maxNotional ? { max: p.maxNotional, maxWhy: fromEquity } : {}),
    }),
    check('Max notional per 24 h', daily, {
      required: true,
      decimals: 6,
      ...(p.dailyNotional ? { max: p.dailyNotional, maxWhy: fromEquity } : {}),
    }),
    check('Price band', band, { required: true, max: MAX_PRICE_BAND_PCT }),
    perps ? check('Slippage allowance', slippage, { required: true, max: MAX_SLIPPAGE_PCT }) : undefined,
    check('Max size', maxSize, {}),
    perps && leverage && !/^[1-9]\d{0,2}$/.test(maxLev)
      ? 'Max leverage is required (1-999) when leverage changes are allowed.'
      : undefined,
    rate !== '' && !/^[1-9]\d{0,3}$/.test(rate) ? 'Requests per minute must be 1 to 9999.' : undefined,
    !/^\d+$/.test(hours) || Number(hours) < 1 || Number(hours) > 24 ? 'The permission lasts 1 to 24 hours.' : undefined,
  ].filter((x): x is string => !!x);
  const submit = (e: Event) => {
    e.preventDefault();
    if (problems.length) return;
    const common = {
      maxNotional,
      dailyNotional: daily,
      priceBandPct: band,
      ...(maxSize ? { maxSize } : {}),
      ...(postOnly ? { postOnly: true } : {}),
      ...(rate ? { ratePerMinute: Number(rate) } : {}),
    };
    const ids = offer.markets.map((m) => m.id);
    const limits: GrantFormLimits = perps
      ? {
          venue: 'perps',
          instruments: ids.map(Number),
          allow: { order, cancel, leverage, market, triggers: market && triggers },
          slippagePct: slippage,
          ...(leverage ? { maxLeverage: Number(maxLev) } : {}),
          ...(reduceOnly ? { reduceOnly: true } : {}),
          ...common,
        }
      : { venue: 'clob', markets: ids, allow: { order }, ...common };
    props.onSubmit(limits, Number(hours) * 60);
  };
  const names = offer.markets.map((m) => m.name).join(', ');
  return (
    <form class="grant-form" onSubmit={submit} aria-label="Standing permission">
      <p class="small" data-testid="grant-scope">
        <strong>{perps ? 'Perps venue' : 'Order book'} only:</strong> {names}
      </p>
      <p class="muted small">
        Requests inside these limits will be signed without asking. Anything else still asks: other{' '}
        {perps ? 'instruments' : 'markets'}, the other venue, withdrawals, transfers, keys, cancelling all orders
        {perps ? ' or orders this site did not place' : ' (order-book cancels always ask)'}, and the auto-cancel timer.
      </p>
      {perps ? (
        <p class="muted small" data-testid="grant-share">
          {SITE_SHARE_WORDS}
        </p>
      ) : null}
      <p class="muted small" data-testid="grant-equity">
        {offer.equity !== null
          ? `Your ${perps ? 'perps account value' : 'order-book collateral'} ` +
            `is ${offer.equity} USDC. Proposed: ${PROPOSED_ORDER_PCT}% of it ` +
            `per order and ${PROPOSED_DAILY_PCT}% per 24 h; you can lower them.`
          : 'Countersign could not read your account value: enter the caps yourself.'}
      </p>
      <div class="grid3">
        <label class="check">
          <input type="checkbox" checked={order} onChange={(e) => setOrder(e.currentTarget.checked)} /> Orders
        </label>
        {perps ? (
          <label class="check">
            <input
              type="checkbox"
              name="grant-cancel"
              checked={cancel}
              onChange={(e) => setCancel(e.currentTarget.checked)}
            />{' '}
            Cancel its own orders
          </label>
        ) : (
          <span />
        )}
        {perps ? (
          <label class="check">
            <input
              type="checkbox"
              name="grant-leverage"
              checked={leverage}
              onChange={(e) => setLeverage(e.currentTarget.checked)}
            />{' '}
            Leverage (cross)
          </label>
        ) : (
          <span />
        )}
      </div>
      {perps ? (
        <div class="grid2">
          <label class="check">
            <input
              type="checkbox"
              name="grant-market"
              checked={market}
              onChange={(e) => setMarket(e.currentTarget.checked)}
            />{' '}
            Market orders
          </label>
          <label class="check">
            <input
              type="checkbox"
              name="grant-triggers"
              checked={market && triggers}
              disabled={!market}
              onChange={(e) => setTriggers(e.currentTarget.checked)}
            />{' '}
            Trigger (stop / take-profit) orders
          </label>
        </div>
      ) : null}
      <div class="grid2">
        <Field label="Max notional per order (USDC)">
          <input
            name="grant-max-notional"
            inputMode="decimal"
            value={maxNotional}
            placeholder="required"
            onInput={(e) => setMaxNotional(e.currentTarget.value.trim())}
          />
        </Field>
        <Field label="Max notional per 24 h (USDC)">
          <input
            name="grant-daily"
            inputMode="decimal"
            value={daily}
            placeholder="required"
            onInput={(e) => setDaily(e.currentTarget.value.trim())}
          />
        </Field>
        <Field label={`Price within % of ${perps ? 'the mark' : 'the midpoint'}`}>
          <input
            name="grant-band"
            inputMode="decimal"
            value={band}
            onInput={(e) => setBand(e.currentTarget.value.trim())}
          />
        </Field>
        {perps ? (
          <Field label="Slippage allowance % (market and trigger orders)">
            <input
              name="grant-slippage"
              inputMode="decimal"
              value={slippage}
              onInput={(e) => setSlippage(e.currentTarget.value.trim())}
            />
          </Field>
        ) : null}
        <Field label="Max size per order">
          <input
            name="grant-max-size"
            inputMode="decimal"
            value={maxSize}
            placeholder="no limit"
            onInput={(e) => setMaxSize(e.currentTarget.value.trim())}
          />
        </Field>
        {perps && leverage ? (
          <Field label="Max leverage">
            <input
              name="grant-max-lev"
              inputMode="numeric"
              value={maxLev}
              placeholder="required"
              onInput={(e) => setMaxLev(e.currentTarget.value.trim())}
            />
          </Field>
        ) : null}
        <Field label="Requests per minute">
          <input
            name="grant-rate"
            inputMode="numeric"
            value={rate}
            onInput={(e) => setRate(e.currentTarget.value.trim())}
          />
        </Field>
        <Field label="For (hours, ≤ 24)">
          <input
            name="grant-hours"
            inputMode="numeric"
            value={hours}
            onInput={(e) => setHours(e.currentTarget.value.trim())}
          />
        </Field>
      </div>
      <div class="grid2">
        <label class="check">
          <input type="checkbox" checked={postOnly} onChange={(e) => setPostOnly(e.currentTarget.checked)} /> Post-only
          only
        </label>
        {perps ? (
          <label class="check">
            <input type="checkbox" checked={reduceOnly} onChange={(e) => setReduceOnly(e.currentTarget.checked)} />{' '}
            Reduce-only only
          </label>
        ) : (
          <span />
        )}
      </div>
      {problems.length ? (
        <p class="error small" data-testid="grant-problems">
          {problems[0]}
        </p>
      ) : null}
      <Button kind="primary" type="submit" disabled={problems.length > 0 || props.busy}>
        Save permission
      </Button>
    </form>
  );
}
