/**
 * What an order does to the account, shown before it is signed: current position and
 * available margin, then notional, margin required, the fee (maker / taker / "up to"), the position
 * after the fill, realised PnL, the estimated liquidation price ("est.": the venue does not publish its
 * maintenance rule), the venue's leverage (a typed one not applied shown as pending), a protected market
 * order's limit, average price and slippage, the TP / SL triggers, and why the order cannot go.
 * Also the close-position preview and its confirmation. Presentational: every number arrives as a
 * decimal string from `lib/perps/risk` through the ticket store.
 */
import type { MarketEstimate, OrderPreview } from '../lib/perps/risk';
import { formatStep, formatUsdc, groupDecimal } from '../lib/format';
import { signedDecimal } from '../lib/format/order-words';
import { perpsMarketLimitWords, perpsTicketTriggerWords } from '../lib/perps/words';
import { Button } from './ui';

/** A decimal USDC figure with thousands separators (readable at a glance); non-decimals ("…") as given. */
const usdc = (s: string): string => (/^-?\d+(\.\d*)?$/.test(s) ? groupDecimal(s) : s);

/** Basis points of a fee-rate fraction, exact for the venue's rates (`"0.0005"` → `"5"`). */
export const bpOf = (rate: string): string => String(Math.round(Number(rate) * 1_000_000) / 100);

/**
 * An estimate (an entry, an average, a liquidation price) rounded to `step` (tick or lot) when one is given; as given
 * otherwise.
 */
const stepped = (v: string, step: string | undefined): string => (step ? formatStep(v, step) : v);
/**
 * A number the order signs (its limit, size, TP / SL trigger) through `signedDecimal` (`lib/format/order-words.ts`):
 * padded to `step`, never rounded.
 */
const signed = (v: string, step: string | undefined): string => signedDecimal(v, step).text;

/**
 * The panel (`data-testid="risk"`): amounts in USDC; prices to `tick` and sizes to `lot` (the
 * instrument's steps: the venue reports entries to 8 decimals).
 */
export function RiskPanel(props: {
  symbol: string;
  tick?: string;
  lot?: string;
  position?: { size: string; entryPrice: string; unrealizedPnl: string; liquidationPrice: string };
  available: string;
  preview?: OrderPreview;
  /** The venue's leverage for the instrument (undefined until read) and a typed one not applied. */
  leverage: number | undefined;
  pendingLeverage?: number | undefined;
  cross: boolean;
  market?: MarketEstimate | undefined;
  slippageCapBps?: number;
  tpsl?: { tp: string; sl: string };
  warnings: string[];
  /** Why the order cannot be sent (the submit button is disabled). */
  reason?: string | undefined;
}) {
  const p = props.preview;
  const m = props.market;
  return (
    <section class="risk" aria-label="Order risk" data-testid="risk">
      <dl class="kv">
        <dt>Position</dt>
        <dd class="num" data-testid="risk-position">
          {props.position
            ? `${stepped(props.position.size, props.lot)} @ ${stepped(props.position.entryPrice, props.tick)}`
            : 'none'}
        </dd>
        <dt>Available margin</dt>
        <dd class="num" data-testid="risk-available">
          {formatUsdc(props.available)}
        </dd>
        {m ? (
          <>
            <dt>Market limit</dt>
            <dd class="num" data-testid="risk-limit">
              {perpsMarketLimitWords(m.limit, props.tick, props.slippageCapBps ?? 0)}
            </dd>
            <dt>Est. avg price</dt>
            <dd class="num" data-testid="risk-avg">
              {m.avgPrice ? stepped(m.avgPrice, props.tick) : 'no fill'}
              {m.slippageBps ? ` · slippage ${m.slippageBps} bp` : ''}
            </dd>
          </>
        ) : null}
        {p ? <PreviewRows p={p} tick={props.tick} lot={props.lot} /> : null}
        <dt>Leverage</dt>
        <dd class="num" data-testid="risk-leverage">
          {props.leverage === undefined ? '…' : `${props.leverage}× ${props.cross ? 'cross' : 'isolated'}`}
          {props.pendingLeverage !== undefined ? (
            <span class="chip" data-testid="risk-pending-lev">
              {' '}
              {props.pendingLeverage}× pending (not applied)
            </span>
          ) : null}
        </dd>
        {props.tpsl?.tp ? (
          <>
            <dt>Take-profit</dt>
            <dd class="num" data-testid="risk-tp">
              {perpsTicketTriggerWords(props.tpsl.tp, props.tick)}
            </dd>
          </>
        ) : null}
        {props.tpsl?.sl ? (
          <>
            <dt>Stop-loss</dt>
            <dd class="num" data-testid="risk-sl">
              {perpsTicketTriggerWords(props.tpsl.sl, props.tick)}
            </dd>
          </>
        ) : null}
      </dl>
      {props.warnings.length ? (
        <div role="alert">
          <ul class="flags">
            {props.warnings.map((w) => (
              <li key={w}>⚠ {w}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {props.reason ? (
        <p class="warn" data-testid="risk-reason">
          {props.reason}
        </p>
      ) : null}
    </section>
  );
}

/** The rows of an order's preview (prices to `tick`, sizes to `lot` when given). */
function PreviewRows({ p, tick, lot }: { p: OrderPreview; tick: string | undefined; lot: string | undefined }) {
  return (
    <>
      <dt>Notional</dt>
      <dd class="num" data-testid="risk-notional">
        {usdc(p.notional)} USDC
      </dd>
      <dt>Margin required</dt>
      <dd class="num" data-testid="risk-margin">
        {usdc(p.marginRequired)} USDC
      </dd>
      <dt>{p.feeUpTo ? 'Fee (up to)' : 'Est. fee'}</dt>
      <dd class="num" data-testid="risk-fee">
        {usdc(p.fee)} USDC ({p.feeUpTo ? 'up to ' : ''}
        {bpOf(p.feeRate)} bp {p.feeUpTo ? 'taker' : Number(p.feeRate) < 0.0005 ? 'maker' : 'taker'})
      </dd>
      <dt>After the fill</dt>
      <dd class="num" data-testid="risk-after">
        {Number(p.newSize) === 0 ? 'flat' : `${signed(p.newSize, lot)} @ ${stepped(p.newEntry, tick)}`}
      </dd>
      {p.realizedPnl !== '0' ? (
        <>
          <dt>Realised PnL</dt>
          <dd class="num" data-testid="risk-pnl">
            {usdc(p.realizedPnl)} USDC
          </dd>
        </>
      ) : null}
      <dt>Liquidation (est.)</dt>
      <dd class="num" data-testid="risk-liq">
        {p.liquidationPrice ? stepped(p.liquidationPrice, tick) : 'none'}
      </dd>
    </>
  );
}

/** The close-position preview (`data-testid="close-preview"`) and its one confirmation (a second click or Enter). */
export function ClosePreview(props: {
  symbol: string;
  /** The instrument's tick and lot: prices and sizes shown to them. */
  tick?: string;
  lot?: string;
  /**
   * `order`: the close order's words as signed (`perpsCommandOrderWords`, `lib/perps/words.ts`), `notes` its off-step
   * flags.
   */
  preview: {
    order: string;
    notes: string[];
    size: string;
    fillable: string;
    limit: string;
    avgPrice: string;
    slippageBps: string | null;
    fee: string;
    realizedPnl: string;
    complete: boolean;
  };
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const c = props.preview;
  return (
    <section
      class="risk"
      aria-label="Close position"
      data-testid="close-preview"
      role="alertdialog"
      onKeyDown={(e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          props.onConfirm();
        } else if (e.key === 'Escape') props.onCancel();
      }}
    >
      <dl class="kv">
        <dt>Close</dt>
        <dd class="num" data-testid="close-size">
          {c.order}
        </dd>
        {c.notes.length ? <dd class="warn">{c.notes.join(' ')}</dd> : null}
        <dt>Est. price</dt>
        <dd class="num" data-testid="close-price">
          {stepped(c.avgPrice, props.tick)}
          {c.slippageBps ? ` · slippage ${c.slippageBps} bp` : ''}
        </dd>
        <dt>Est. fee</dt>
        <dd class="num" data-testid="close-fee">
          {usdc(c.fee)} USDC
        </dd>
        <dt>Realised PnL</dt>
        <dd class="num" data-testid="close-pnl">
          {usdc(c.realizedPnl)} USDC
        </dd>
      </dl>
      {c.complete ? null : (
        <p class="warn">Only {stepped(c.fillable, props.lot)} fills within the slippage cap; the rest stays open.</p>
      )}
      <div class="actions">
        <Button kind="danger" onClick={props.onConfirm} data-testid="close-confirm" autoFocus>
          Confirm close (Enter)
        </Button>
        <Button onClick={props.onCancel}>Back</Button>
      </div>
    </section>
  );
}
