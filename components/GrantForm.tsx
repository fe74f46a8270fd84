/**
 * "Allow this site within limits…": the limits of a standing grant for the
 * venue and the instruments / markets of the request being approved — nothing else can be added.
 * The per-order and 24 h notional caps are proposed from the account's equity (`GrantOffer`) and can
 * only be lowered; without an equity read the person types them. Caps, price band and (perps)
 * slippage allowance are required. Market and trigger orders are off by default. Presentational:
 * `onSubmit` receives the limits exactly as the background validates them (decimal strings, integers)
 * and the duration in minutes (≤ 24 h).
 */
import { useState, type Dispatch, type StateUpdater } from 'preact/hooks';
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

/** What the form holds while it is edited: the allowed actions, the limits as typed, the duration in hours. */
type GrantDraft = {
  order: boolean;
  cancel: boolean;
  leverage: boolean;
  market: boolean;
  triggers: boolean;
  maxNotional: string;
  daily: string;
  band: string;
  slippage: string;
  maxSize: string;
  maxLev: string;
  postOnly: boolean;
  reduceOnly: boolean;
  rate: string;
  hours: string;
};

/** Sets one field of the draft. */
type SetDraft = <K extends keyof GrantDraft>(key: K, value: GrantDraft[K]) => void;

/** The draft at first: the offer's proposal, orders (and for perps, cancels) allowed, 60 requests a minute, 8 hours. */
function initialDraft(offer: GrantOffer): GrantDraft {
  const p = offer.proposal;
  return {
    order: true,
    cancel: offer.venue === 'perps',
    leverage: false,
    market: false,
    triggers: false,
    maxNotional: p.maxNotional ?? '',
    daily: p.dailyNotional ?? '',
    band: p.priceBandPct,
    slippage: p.slippagePct ?? '1',
    maxSize: '',
    maxLev: '',
    postOnly: false,
    reduceOnly: false,
    rate: '60',
    hours: '8',
  };
}

/** What is wrong with the draft, one sentence a field, in the form's order (empty: it can be saved). */
function draftProblems(d: GrantDraft, offer: GrantOffer): string[] {
  const perps = offer.venue === 'perps';
  const p = offer.proposal;
  const fromEquity = ' (from your equity)';
  return [
    check('Max notional per order', d.maxNotional, {
      required: true,
      decimals: 6,
      ...(p.maxNotional ? { max: p.maxNotional, maxWhy: fromEquity } : {}),
    }),
    check('Max notional per 24 h', d.daily, {
      required: true,
      decimals: 6,
      ...(p.dailyNotional ? { max: p.dailyNotional, maxWhy: fromEquity } : {}),
    }),
    check('Price band', d.band, { required: true, max: MAX_PRICE_BAND_PCT }),
    perps ? check('Slippage allowance', d.slippage, { required: true, max: MAX_SLIPPAGE_PCT }) : undefined,
    check('Max size', d.maxSize, {}),
    perps && d.leverage && !/^[1-9]\d{0,2}$/.test(d.maxLev)
      ? 'Max leverage is required (1-999) when leverage changes are allowed.'
      : undefined,
    d.rate !== '' && !/^[1-9]\d{0,3}$/.test(d.rate) ? 'Requests per minute must be 1 to 9999.' : undefined,
    !/^\d+$/.test(d.hours) || Number(d.hours) < 1 || Number(d.hours) > 24
      ? 'The permission lasts 1 to 24 hours.'
      : undefined,
  ].filter((x): x is string => !!x);
}

/** The limits of a draft without problems, for the offer's venue and markets (the `grant.create` message's). */
function draftLimits(d: GrantDraft, offer: GrantOffer): GrantFormLimits {
  const common = {
    maxNotional: d.maxNotional,
    dailyNotional: d.daily,
    priceBandPct: d.band,
    ...(d.maxSize ? { maxSize: d.maxSize } : {}),
    ...(d.postOnly ? { postOnly: true } : {}),
    ...(d.rate ? { ratePerMinute: Number(d.rate) } : {}),
  };
  const ids = offer.markets.map((m) => m.id);
  return offer.venue === 'perps'
    ? {
        venue: 'perps',
        instruments: ids.map(Number),
        allow: {
          order: d.order,
          cancel: d.cancel,
          leverage: d.leverage,
          market: d.market,
          triggers: d.market && d.triggers,
        },
        slippagePct: d.slippage,
        ...(d.leverage ? { maxLeverage: Number(d.maxLev) } : {}),
        ...(d.reduceOnly ? { reduceOnly: true } : {}),
        ...common,
      }
    : { venue: 'clob', markets: ids, allow: { order: d.order }, ...common };
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
  const [draft, setDraft] = useState(() => initialDraft(offer));
  const set = draftSetter(setDraft);
  const problems = draftProblems(draft, offer);
  const submit = (e: Event) => {
    e.preventDefault();
    if (problems.length) return;
    props.onSubmit(draftLimits(draft, offer), Number(draft.hours) * 60);
  };
  return (
    <form class="grant-form" onSubmit={submit} aria-label="Standing permission">
      <GrantScope offer={offer} />
      <AllowedActions perps={perps} draft={draft} set={set} />
      <LimitFields perps={perps} draft={draft} set={set} />
      <OrderFlags perps={perps} draft={draft} set={set} />
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

/** `set` over the form's state updater: one field changed, the others kept. */
const draftSetter =
  (setDraft: Dispatch<StateUpdater<GrantDraft>>): SetDraft =>
  (key, value) =>
    setDraft((d) => ({ ...d, [key]: value }));

/** What the permission covers and what still asks, and the caps' proposal from the account's equity. */
function GrantScope({ offer }: { offer: GrantOffer }) {
  const perps = offer.venue === 'perps';
  const names = offer.markets.map((m) => m.name).join(', ');
  return (
    <>
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
    </>
  );
}

/** Props of the form's sections: the venue (perps shows more), the draft, and `set` for a field. */
type SectionProps = { perps: boolean; draft: GrantDraft; set: SetDraft };

/** Which actions the permission allows: orders; for perps also cancels, leverage, market and trigger orders. */
function AllowedActions({ perps, draft: d, set }: SectionProps) {
  return (
    <>
      <div class="grid3">
        <label class="check">
          <input type="checkbox" checked={d.order} onChange={(e) => set('order', e.currentTarget.checked)} /> Orders
        </label>
        {perps ? (
          <label class="check">
            <input
              type="checkbox"
              name="grant-cancel"
              checked={d.cancel}
              onChange={(e) => set('cancel', e.currentTarget.checked)}
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
              checked={d.leverage}
              onChange={(e) => set('leverage', e.currentTarget.checked)}
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
              checked={d.market}
              onChange={(e) => set('market', e.currentTarget.checked)}
            />{' '}
            Market orders
          </label>
          <label class="check">
            <input
              type="checkbox"
              name="grant-triggers"
              checked={d.market && d.triggers}
              disabled={!d.market}
              onChange={(e) => set('triggers', e.currentTarget.checked)}
            />{' '}
            Trigger (stop / take-profit) orders
          </label>
        </div>
      ) : null}
    </>
  );
}

/** The draft's text fields (typed numbers, trimmed). */
type TextKey = { [K in keyof GrantDraft]: GrantDraft[K] extends string ? K : never }[keyof GrantDraft];

/** One limit input: `field` of the draft, named `name` (the tests and the e2e suites find it by that name). */
function LimitInput(props: {
  label: string;
  name: string;
  field: TextKey;
  numeric?: boolean;
  placeholder?: string;
  draft: GrantDraft;
  set: SetDraft;
}) {
  return (
    <Field label={props.label}>
      <input
        name={props.name}
        inputMode={props.numeric ? 'numeric' : 'decimal'}
        value={props.draft[props.field]}
        placeholder={props.placeholder}
        onInput={(e) => props.set(props.field, e.currentTarget.value.trim())}
      />
    </Field>
  );
}

/** The limits: notional caps (USDC), price band and slippage (%), max size and leverage, request rate, hours. */
function LimitFields({ perps, draft, set }: SectionProps) {
  const at = { draft, set };
  return (
    <div class="grid2">
      <LimitInput
        {...at}
        label="Max notional per order (USDC)"
        name="grant-max-notional"
        field="maxNotional"
        placeholder="required"
      />
      <LimitInput
        {...at}
        label="Max notional per 24 h (USDC)"
        name="grant-daily"
        field="daily"
        placeholder="required"
      />
      <LimitInput
        {...at}
        label={`Price within % of ${perps ? 'the mark' : 'the midpoint'}`}
        name="grant-band"
        field="band"
      />
      {perps ? (
        <LimitInput
          {...at}
          label="Slippage allowance % (market and trigger orders)"
          name="grant-slippage"
          field="slippage"
        />
      ) : null}
      <LimitInput {...at} label="Max size per order" name="grant-max-size" field="maxSize" placeholder="no limit" />
      {perps && draft.leverage ? (
        <LimitInput {...at} label="Max leverage" name="grant-max-lev" field="maxLev" numeric placeholder="required" />
      ) : null}
      <LimitInput {...at} label="Requests per minute" name="grant-rate" field="rate" numeric />
      <LimitInput {...at} label="For (hours, ≤ 24)" name="grant-hours" field="hours" numeric />
    </div>
  );
}

/** Post-only only, and (perps) reduce-only only. */
function OrderFlags({ perps, draft: d, set }: SectionProps) {
  const toggle = (key: 'postOnly' | 'reduceOnly') => (e: { currentTarget: HTMLInputElement }) =>
    set(key, e.currentTarget.checked);
  return (
    <div class="grid2">
      <label class="check">
        <input type="checkbox" checked={d.postOnly} onChange={toggle('postOnly')} /> Post-only only
      </label>
      {perps ? (
        <label class="check">
          <input type="checkbox" checked={d.reduceOnly} onChange={toggle('reduceOnly')} /> Reduce-only only
        </label>
      ) : (
        <span />
      )}
    </div>
  );
}
