/**
 * What a person approves: the requesting origin (prominent), the account it acts for, the request in
 * plain words (decoded from the artifact that will be signed), the signing key, risk flags, the binding
 * digest and the EIP-712 digests the key will sign, and Approve / Reject. `armed` is false until the
 * window has had focus for 1 s (and again after any blur), so a click-jacked or hurried click does
 * nothing. Presentational: used by the approval window and by the popup's approval queue.
 */
import { Button } from './ui';
import { formatStep, formatUsdc, shortAddress } from '../lib/format';
import { signedDecimal } from '../lib/format/order-words';
import { perpsOrderWords } from '../lib/perps/words';
import { clobOrderLine, type ClobOrderFacts } from '../lib/clob/words';
import type { CommandOrderSummary } from '../lib/perps/summary';
import { bpOf } from './RiskPanel';

/**
 * The numbers of a perps order request, computed from the artifact and the venue's reads; `error` when they could not
 * be read.
 */
export type ApprovalSummary = { orders: CommandOrderSummary[]; clob?: ClobOrderNumbers[]; error?: string };

/**
 * An order-book order as signed (its words: `clobOrderLine`) and its numbers: `usdc` what it pays or receives and
 * `fee` at the book's rate `feeRateBps` (USDC decimal strings).
 */
export type ClobOrderNumbers = ClobOrderFacts & { usdc: string; fee: string; feeRateBps: number };

/**
 * A pending request as the view shows it (the `approval.list` answer with the artifact reduced to its
 * sign digests): origin, account, plain-words lines, risk flags, signer, binding digest, expiry (Unix ms).
 */
export type ApprovalViewData = {
  id: string;
  origin: string;
  kind: string;
  title: string;
  lines: string[];
  flags: string[];
  signer: string | null;
  digest: string;
  account: { address: string; label: string } | null;
  /** The artifact's EIP-712 digests (what the key signs), when it has any. */
  artifact?: { signDigests: readonly string[] };
  /** The window may offer a standing grant; `markets` are the request's instruments or tokens. */
  grantable?: boolean;
  markets?: string[];
  expiresAt: number;
  /** A perps `createOrders` request: how many orders it signs, and their numbers once read. */
  orderCount?: number;
  summary?: ApprovalSummary;
};

const short = (h: string) => `${h.slice(0, 10)}…${h.slice(-8)}`;

/** The request with Approve (disabled until `armed`) and Reject; `now` (Unix ms) drives the expiry countdown. */
export function ApprovalView(props: {
  view: ApprovalViewData;
  armed: boolean;
  busy?: boolean;
  queueLength: number;
  now: number;
  onApprove: () => void;
  onReject: () => void;
}) {
  const { view } = props;
  const left = Math.max(0, Math.ceil((view.expiresAt - props.now) / 1000));
  return (
    <section class="approval" aria-label="Approval request">
      <p class="origin" data-testid="approval-origin">
        {view.origin}
      </p>
      <p class="muted small">asks you to</p>
      <h2>{view.title}</h2>
      {view.account ? (
        <p class="muted small" data-testid="approval-account">
          for account {view.account.label ? <strong>{view.account.label} </strong> : null}
          <code title={view.account.address}>{shortAddress(view.account.address)}</code>
        </p>
      ) : null}
      <ul class="lines" data-testid="approval-lines">
        {view.lines.map((l) => (
          <li key={l}>{l}</li>
        ))}
      </ul>
      {view.orderCount ? <OrderNumbers summary={view.summary} /> : null}
      {view.summary?.clob?.length ? <ClobNumbers orders={view.summary.clob} /> : null}
      {view.signer ? (
        <p class="muted">
          Signed with your <strong>{view.signer}</strong>.
        </p>
      ) : null}
      {view.flags.length ? (
        <div role="alert">
          <ul class="flags">
            {view.flags.map((f) => (
              <li key={f}>⚠ {f}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <p class="muted small digest" title={view.digest} data-testid="approval-digest">
        Digest {short(view.digest)} · expires in {left} s
        {props.queueLength > 1 ? ` · ${props.queueLength - 1} more waiting` : ''}
      </p>
      {view.artifact?.signDigests.length ? (
        <p class="muted small digest" data-testid="approval-sign-digests">
          Signs {view.artifact.signDigests.map(short).join(', ')}
        </p>
      ) : null}
      <div class="actions">
        <Button kind="danger" onClick={props.onReject} disabled={props.busy}>
          Reject
        </Button>
        <Button
          kind="primary"
          onClick={props.onApprove}
          disabled={!props.armed || props.busy}
          data-testid="approve"
          title={props.armed ? 'Approve' : 'Focus this window to arm the button'}
        >
          Approve
        </Button>
      </div>
    </section>
  );
}

/**
 * The order summary of a perps request (`data-testid="approval-summary"`): the ticket's numbers for each
 * order, TP / SL listed. A crossing GTC limit the visible book fills only in part shows what fills now
 * (size at ≈ the book's average) and what rests at the limit, where the numbers count it filled.
 */
function OrderNumbers({ summary }: { summary: ApprovalSummary | undefined }) {
  if (!summary)
    return (
      <p class="muted small" data-testid="approval-summary">
        Reading the venue for the numbers…
      </p>
    );
  if (summary.error)
    return (
      <p class="warn" data-testid="approval-summary">
        {summary.error}
      </p>
    );
  return (
    <section class="risk" aria-label="Order numbers" data-testid="approval-summary">
      {summary.orders.map((o, i) => {
        const p = o.summary?.preview;
        // The signed order in the perps venue's words (padded to the venue's step, never rounded; off-step values
        // flagged); estimates (average, entry, liquidation) to the tick.
        const words = perpsOrderWords(o);
        const px = (v: string) => (o.tick ? formatStep(v, o.tick) : v);
        const sz = (v: string) => signedDecimal(v, o.lot).text;
        const notes = words.notes.length ? (
          <dd class="warn" data-testid="approval-off-step">
            {words.notes.join(' ')}
          </dd>
        ) : null;
        if (o.trigger)
          return (
            <p key={i} class="small" data-testid="approval-trigger">
              {words.line}
              {words.notes.length ? <strong class="warn"> {words.notes.join(' ')}</strong> : null}
            </p>
          );
        return (
          <dl class="kv" key={i}>
            <dt>Order</dt>
            <dd class="num" data-testid="approval-order">
              {words.line}
            </dd>
            {notes}
            {p ? (
              <>
                <dt>Notional</dt>
                <dd class="num" data-testid="approval-notional">
                  {formatUsdc(p.notional)}
                </dd>
                <dt>Margin required</dt>
                <dd class="num" data-testid="approval-margin">
                  {formatUsdc(p.marginRequired)}
                </dd>
                <dt>{p.feeUpTo ? 'Fee (up to)' : 'Est. fee'}</dt>
                <dd class="num" data-testid="approval-fee">
                  {p.fee} USDC ({bpOf(p.feeRate)} bp)
                </dd>
                <dt>Position after</dt>
                <dd class="num" data-testid="approval-after">
                  {Number(p.newSize) === 0 ? 'flat' : `${sz(p.newSize)} @ ${px(p.newEntry)}`}
                </dd>
                {p.realizedPnl !== '0' ? (
                  <>
                    <dt>Realised PnL</dt>
                    <dd class="num">{formatUsdc(p.realizedPnl)}</dd>
                  </>
                ) : null}
                <dt>Liquidation (est.)</dt>
                <dd class="num" data-testid="approval-liq">
                  {p.liquidationPrice ? px(p.liquidationPrice) : 'none'}
                </dd>
                {o.summary?.rest ? (
                  <>
                    <dt>Fills</dt>
                    <dd class="num" data-testid="approval-avg">
                      {o.summary.avgPrice
                        ? `${sz(o.summary.fillable)} fills now at ≈ ${px(o.summary.avgPrice)}` +
                          `${o.summary.slippageBps ? ` (slippage ${o.summary.slippageBps} bp)` : ''}, `
                        : ''}
                      {sz(o.summary.rest.qty)} rests at {signedDecimal(o.summary.rest.price, o.tick).text}
                    </dd>
                    <dd class="warn" data-testid="approval-rest">
                      The resting part can fill at its limit: the numbers above count it filled at{' '}
                      {px(o.summary.rest.price)}, the worst case.
                    </dd>
                  </>
                ) : o.summary?.avgPrice ? (
                  <>
                    <dt>Est. avg price</dt>
                    <dd class="num" data-testid="approval-avg">
                      {px(o.summary.avgPrice)}
                      {o.summary.slippageBps ? ` · slippage ${o.summary.slippageBps} bp` : ''}
                    </dd>
                  </>
                ) : null}
                {p.insufficientMargin ? <dd class="warn">Not enough free margin: the venue will refuse it.</dd> : null}
              </>
            ) : (
              <dd class="muted">No numbers: the venue's book or leverage could not price it.</dd>
            )}
          </dl>
        );
      })}
    </section>
  );
}

/** An order-book request's cost (or proceeds) and fee per order (`data-testid="approval-clob"`). */
function ClobNumbers({ orders }: { orders: ClobOrderNumbers[] }) {
  return (
    <section class="risk" aria-label="Order numbers" data-testid="approval-clob">
      {orders.map((o, i) => (
        <dl class="kv" key={i}>
          <dt>Order</dt>
          <dd class="num" data-testid="approval-clob-order">
            {clobOrderLine(o)}
          </dd>
          <dt>{o.order.side === 'BUY' ? 'Cost' : 'Proceeds'}</dt>
          <dd class="num" data-testid="approval-clob-usdc">
            {o.usdc} USDC
          </dd>
          <dt>Fee</dt>
          <dd class="num" data-testid="approval-clob-fee">
            {o.fee} USDC ({o.feeRateBps} bp)
          </dd>
        </dl>
      ))}
    </section>
  );
}
