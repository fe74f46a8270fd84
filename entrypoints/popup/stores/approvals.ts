/**
 * The approval queue's state, shared by the approval window and the popup (which
 * opens on the queue while approvals are pending): the pending requests (oldest first, re-read every
 * second), whether Approve is armed, the grant offer and its outcome. Approve arms only after the window
 * has had focus for `ARM_DELAY_MS` on the request shown, disarms on blur, and re-arms when the request
 * or its digest changes (clickjacking). The decision carries the request id and the digest shown.
 */
import { computed, effect, signal } from '@preact/signals';
import * as v from 'valibot';
import type { ProcedureOutput } from '../../../lib/messaging/protocol';
import type { ApprovalViewData } from '../../../components/ApprovalView';
import type { GrantFormLimits } from '../../../components/GrantForm';
import type { GrantOffer } from '../../../lib/grants/offer';
import { shortMessageOf, type Call } from './perps';
import type { ApprovalSummary, ClobOrderNumbers } from '../../../components/ApprovalView';
import { units } from './clob';
import { clobOrderWords } from '../../../lib/format/order-words';
import { commandFromBody, type PerpsOrderInput } from '../../../lib/perps/commands';
import { summarizeCommand, type SummaryReader } from '../../../lib/perps/summary';
import { PERPS_READS, type PerpsReadName } from '../../../lib/perps/reads';
import { parsePerpsAnswer } from '../../../lib/perps/wire';

/** How long the window must have focus on a request before Approve arms (ms). */
export const ARM_DELAY_MS = 1_000;

/** The part of a signing artifact the window shows: the EIP-712 digests the key will sign. */
const signDigestsSchema = v.object({ signDigests: v.array(v.string()) });
/** A perps artifact's account and the JSON `op` that will be signed (its orders are summarised). */
const perpsArtifactSchema = v.object({
  kind: v.literal('perps'),
  account: v.string(),
  envelope: v.object({ op: v.unknown() }),
});

/**
 * The orders of a perps artifact's `createOrders` op, rebuilt and validated as the gateway does; none for anything
 * else.
 */
export function artifactOrders(artifact: unknown): { account: string; orders: PerpsOrderInput[] } | undefined {
  const a = v.safeParse(perpsArtifactSchema, artifact);
  if (!a.success) return undefined;
  try {
    const body = commandFromBody(a.output.envelope.op).body;
    return body.type === 'createOrders' ? { account: a.output.account, orders: body.args } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An order-book artifact's orders: side, token, amounts (base units), expiration, maker and signer, order type,
 * post-only and negative risk.
 */
const clobArtifactSchema = v.object({
  kind: v.literal('clob'),
  orders: v.array(
    v.object({
      negRisk: v.optional(v.boolean()),
      body: v.object({
        orderType: v.string(),
        postOnly: v.optional(v.boolean()),
        order: v.object({
          side: v.picklist(['BUY', 'SELL']),
          tokenId: v.string(),
          makerAmount: v.string(),
          takerAmount: v.string(),
          expiration: v.optional(v.string()),
          maker: v.optional(v.string()),
          signer: v.optional(v.string()),
        }),
      }),
    }),
  ),
});

/**
 * The numbers of an order-book artifact: per order the order as signed (the window's Order row words it through
 * `clobOrderLine`, as its line), the cost (BUY: the maker amount) or proceeds (SELL: the taker amount) and the fee at
 * the book's rate on the USDC side (as `clobFee`), exact. `feeRate(tokenId)` reads the rate (bp) through the
 * background. Undefined for another artifact.
 */
export async function clobNumbers(
  artifact: unknown,
  feeRate: (tokenId: string) => Promise<number>,
): Promise<ClobOrderNumbers[] | undefined> {
  const a = v.safeParse(clobArtifactSchema, artifact);
  if (!a.success) return undefined;
  const out: ClobOrderNumbers[] = [];
  for (const { body, negRisk } of a.output.orders) {
    const { side, tokenId, makerAmount, takerAmount } = body.order;
    const bps = await feeRate(tokenId);
    const usdc = side === 'BUY' ? makerAmount : takerAmount;
    out.push({
      ...body,
      ...(negRisk === undefined ? {} : { negRisk }),
      // The same numbers as the window's line for this order (`clobOrderWords`).
      usdc: clobOrderWords(body.order).usdc,
      fee: units(((BigInt(usdc) * BigInt(bps)) / 10_000n).toString()),
      feeRateBps: bps,
    });
  }
  return out;
}

/** The venue's reads for `account` through the background's `perps.read` (the window never holds a secret). */
export function summaryReader(call: Call, account: string): SummaryReader {
  const read = async <N extends PerpsReadName>(name: N, query?: Record<string, string | number>) =>
    parsePerpsAnswer(
      name,
      await call('perps.read', {
        ...(PERPS_READS[name].auth === 'proxy-headers' ? { account } : {}),
        name,
        ...(query ? { query } : {}),
      }),
    );
  return {
    instruments: () => read('instruments'),
    fees: async () => {
      const f = (await read('fees')).fee_schedule[0];
      return f ? { taker: f.taker_fee_rate, maker: f.maker_fee_rate } : undefined;
    },
    book: (iid) => read('book', { instrument_id: iid, depth: 10 }),
    portfolio: () => read('portfolio'),
    leverage: async (iid) => (await read('config', { instrument_id: iid }))[0]?.leverage,
    mark: async (iid) => (await read('tickers')).find((t) => t.instrument_id === iid)?.mark_price,
  };
}

/**
 * A pending request as the view takes it: the contract leaves `artifact` opaque, so its `signDigests`
 * are read through a schema (an artifact without them shows none).
 */
export function toViewData(r: ProcedureOutput<'approval.list'>[number]): ApprovalViewData {
  const { artifact, ...rest } = r;
  const parsed = v.safeParse(signDigestsSchema, artifact);
  const orders = artifactOrders(artifact);
  return {
    ...rest,
    ...(parsed.success ? { artifact: { signDigests: parsed.output.signDigests } } : {}),
    ...(orders ? { orderCount: orders.orders.length } : {}),
  };
}

/** The window's focus: whether it has it now, and a subscription to focus / blur (returns the unsubscribe). */
export type FocusSource = { has: () => boolean; listen: (onFocus: () => void, onBlur: () => void) => () => void };

/** The page's own focus (`document.hasFocus`, window focus / blur events). */
export const windowFocus: FocusSource = {
  has: () => document.hasFocus(),
  listen: (onFocus, onBlur) => {
    window.addEventListener('focus', onFocus);
    window.addEventListener('blur', onBlur);
    return () => {
      window.removeEventListener('focus', onFocus);
      window.removeEventListener('blur', onBlur);
    };
  },
};

/** What the queue needs. */
export type ApprovalStoreOptions = {
  call: Call;
  /** Called when a read finds the queue empty. */
  onEmpty: () => void;
  /**
   * The approval window tells the background which request (id, digest) it displays, so closing the
   * window rejects that request only. The popup's copy of the queue does not.
   */
  reportShown?: boolean;
  focus?: FocusSource;
  /** Re-read period (ms, default 1 000); also the clock of the expiry countdown. */
  pollMs?: number;
  armDelayMs?: number;
};

/** The approval store: signals and actions. */
export type ApprovalStore = ReturnType<typeof createApprovalStore>;

/** Creates the queue's store; `start()` begins reading and listening, and returns `stop`. */
export function createApprovalStore({
  call,
  onEmpty,
  reportShown = false,
  focus = windowFocus,
  pollMs = 1_000,
  armDelayMs = ARM_DELAY_MS,
}: ApprovalStoreOptions) {
  const queue = signal<ApprovalViewData[] | undefined>(undefined);
  const armed = signal(false);
  const busy = signal(false);
  const error = signal<string | undefined>(undefined);
  const now = signal(Date.now());
  const granting = signal<GrantOffer | undefined>(undefined);
  const granted = signal<string | undefined>(undefined);
  /** Order summaries by request id + digest: computed once per artifact from the venue's reads. */
  const summaries = signal<Record<string, ApprovalSummary>>({});
  const raw = new Map<string, unknown>();
  /** A request with its order summary once read. */
  const withSummary = (r: ApprovalViewData): ApprovalViewData => {
    const s = summaries.value[`${r.id}:${r.digest}`];
    return s ? { ...r, summary: s } : r;
  };
  /** The request shown: the oldest pending one. */
  const head = computed(() => queue.value?.[0]);
  let armTimer: ReturnType<typeof setTimeout> | undefined;

  /** Reads the queue; an empty queue calls `onEmpty`. */
  async function load(): Promise<void> {
    const answer = await call('approval.list', {});
    for (const r of answer) raw.set(`${r.id}:${r.digest}`, r.artifact);
    const list = answer.map((r) => withSummary(toViewData(r)));
    queue.value = list;
    if (list.length === 0) onEmpty();
  }
  /** Disarms, then arms after `armDelayMs` if the window has focus. */
  function arm(): void {
    clearTimeout(armTimer);
    armed.value = false;
    if (focus.has()) armTimer = setTimeout(() => (armed.value = true), armDelayMs);
  }
  /** Disarms at once (blur). */
  function disarm(): void {
    clearTimeout(armTimer);
    armed.value = false;
  }

  /** Fetches the grant offer (venue, names, equity, proposed caps) for the request shown. */
  async function offer(): Promise<void> {
    const h = head.value;
    if (!h) return;
    error.value = undefined;
    try {
      granting.value = await call('grant.offer', { approvalId: h.id });
    } catch (err) {
      error.value = shortMessageOf(err, 'The permission cannot be offered for this request.');
    }
  }
  /** Approves (only when armed, with the digest shown) or rejects the request shown, then re-reads. */
  async function decide(approve: boolean): Promise<void> {
    const h = head.value;
    if (!h || busy.value) return;
    if (approve && !armed.value) return;
    busy.value = true;
    error.value = undefined;
    try {
      await call('approval.decide', { id: h.id, approve, ...(approve ? { digest: h.digest } : {}) });
    } catch (err) {
      error.value = shortMessageOf(err, 'That request is no longer pending.');
    } finally {
      busy.value = false;
      await load();
    }
  }
  /** Saves a standing grant with `limits` for `minutes` from the request shown. */
  async function grant(limits: GrantFormLimits, minutes: number): Promise<void> {
    const h = head.value;
    if (!h) return;
    error.value = undefined;
    try {
      await call('grant.create', { approvalId: h.id, limits, minutes });
      granting.value = undefined;
      granted.value =
        `Saved for ${minutes / 60} h. Approve this request to ` +
        `send it; later requests within the limits will not ask.`;
    } catch (err) {
      error.value = shortMessageOf(err, 'The permission could not be saved.');
    }
  }

  /** Computes the order summary of a request's perps artifact from the venue's reads (once per id + digest). */
  async function summarize(id: string, digest: string): Promise<void> {
    const key = `${id}:${digest}`;
    const artifact = raw.get(key);
    const o = artifactOrders(artifact);
    if (summaries.value[key]) return;
    let s: ApprovalSummary;
    try {
      const clob = o
        ? undefined
        : await clobNumbers(artifact, async (tokenId) => (await call('clob.book', { tokenId })).feeRateBps);
      if (!o && !clob) return;
      s = o
        ? { orders: await summarizeCommand(o.orders, summaryReader(call, o.account)) }
        : { orders: [], ...(clob ? { clob } : {}) };
    } catch (err) {
      s = { orders: [], error: shortMessageOf(err, 'The venue could not be read: the numbers are unavailable.') };
    }
    summaries.value = { ...summaries.value, [key]: s };
    queue.value = queue.value?.map(withSummary);
  }

  /** Starts reading every `pollMs`, listening to focus, and re-arming per request; returns `stop`. */
  function start(): () => void {
    const unlisten = focus.listen(arm, disarm);
    const t = setInterval(() => {
      now.value = Date.now();
      void load().catch(() => undefined);
    }, pollMs);
    void load();
    let shownId: string | undefined;
    let shownDigest: string | undefined;
    let first = true;
    // A new request, or a refreshed artifact (new digest), must be looked at again: re-arm.
    const dispose = effect(() => {
      const h = head.value;
      if (!first && h?.id === shownId && h?.digest === shownDigest) return;
      if (first || h?.id !== shownId) {
        granting.value = undefined;
        granted.value = undefined;
      }
      first = false;
      shownId = h?.id;
      shownDigest = h?.digest;
      arm();
      if (h) void summarize(h.id, h.digest);
      if (reportShown && h) void call('approval.showing', { id: h.id, digest: h.digest }).catch(() => undefined);
    });
    return () => {
      unlisten();
      clearInterval(t);
      clearTimeout(armTimer);
      dispose();
    };
  }

  return {
    queue,
    head,
    armed,
    busy,
    error,
    now,
    granting,
    granted,
    summaries,
    load,
    arm,
    disarm,
    offer,
    decide,
    grant,
    summarize,
    start,
  };
}
