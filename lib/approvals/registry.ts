/**
 * Pending approvals: a promise registry keyed by request id (after MetaMask's ApprovalController).
 *
 * Rules: every signing request is approved one by one and the decision is bound to its
 * id and to the digest the window displayed; unknown ids throw; at most 5 pending per origin
 * (-32002) and 20 for all sites (-32002, not -32005: dapp libraries retry -32005 at once), with 2 more
 * slots kept for the person's own requests, which `list` shows first; requests expire (the caller gives the TTL:
 * trading 60 s, withdraw and transfer 300 s); an origin the person rejected 3 times within 30 s is blocked for 60 s;
 * nothing here is persisted — after a worker restart there is nothing to approve, so nothing is signed without a fresh
 * approval; `rejectAll` (on lock, on account switch) rejects everything pending.
 *
 * Signing requests carry their artifact: the exact thing that will be signed, built
 * before the window opens. An artifact that would go stale before the person decides (a perps `ts`
 * older than the gateway accepts) is rebuilt while still pending (`rebuild`, at `refreshAt`): the
 * window shows the new digest and re-arms, and an approval carrying the superseded digest is answered
 * `ApprovalChangedError` (not a rejection) so the person can look again. Nothing is rebuilt after
 * consent: `approved` resolves with the view — artifact and digest — that was approved.
 */
import type { Hex } from 'viem';
import type { SigningArtifact } from '../signer/artifact';
import { isPersonOrigin } from '../authority/person';
import { BaseError } from '../errors/base';
import { resourceUnavailable, userRejected, type ProviderRpcError } from '../errors/rpc';

/**
 * What a pending request asks: connect a site, sign a perps command, order-book orders, L2 headers, a standing grant a
 * site asked for (ERC-7715), or a deposit-wallet batch.
 */
export type ApprovalKind = 'connect' | 'perps' | 'clob' | 'l2' | 'grant' | 'relayer';

/** What the approval window shows. `digest` is what will be signed (or a hash of the canonical request). */
export type ApprovalView = {
  id: string;
  origin: string;
  kind: ApprovalKind;
  title: string;
  lines: string[];
  flags: string[];
  signer: 'owner key' | 'proxy key' | 'API key' | null;
  digest: Hex;
  /** The account the request acts for (address and label), shown in the window. */
  account: { address: string; label: string } | null;
  /** What will be signed, exactly (absent for a connection request). */
  artifact?: SigningArtifact;
  /** When the artifact will be rebuilt while pending (Unix ms). */
  refreshAt?: number;
  /** The window may offer a standing grant for requests like this one (trading, never funds). */
  grantable?: boolean;
  /** The request's instruments (perps ids) or tokens (order book), to prefill a grant. */
  markets?: string[];
  createdAt: number;
  expiresAt: number;
};

/** The parts of a view that a rebuild replaces. */
export type ApprovalRefresh = Pick<ApprovalView, 'lines' | 'flags' | 'digest' | 'artifact' | 'refreshAt'>;

/** 4100: the decided request is no longer pending (decided, expired or cancelled). */
export class ApprovalNotFoundError extends BaseError {
  override name = 'Approvals.NotFoundError';
  static override readonly code = 4100;
  constructor() {
    super('That request is no longer pending.');
  }
}
/** 4001: the approval names another digest than the pending request's (nothing is signed). */
export class ApprovalMismatchError extends BaseError {
  override name = 'Approvals.MismatchError';
  static override readonly code = 4001;
  constructor() {
    super('What was approved does not match the pending request; it was rejected.');
  }
}

/** Thrown when an approval names a digest the request had before it was rebuilt: look again. */
export class ApprovalChangedError extends BaseError {
  override name = 'Approvals.ChangedError';
  static override readonly code = 4001;
  constructor() {
    super('The request was refreshed while you were looking at it. Review it again and approve.');
  }
}

/** Pending requests one origin may have at once (more: -32002). */
export const MAX_PENDING_PER_ORIGIN = 5;
/** Pending requests of all sites at once (more: -32002); the person's own requests are not counted here. */
export const MAX_PENDING_TOTAL = 20;
/**
 * Pending slots kept for the person's own requests (`isPersonOrigin`, lib/authority/person.ts — a page can
 * never claim one; today only the popup's deposit-wallet batches ask): no site can take them, so sites
 * filling `MAX_PENDING_TOTAL` never stop the person's own request from opening.
 */
export const PERSON_PENDING_SLOTS = 2;
const REJECTION_WINDOW_MS = 30_000;
const REJECTIONS_TO_BLOCK = 3;
const BLOCK_MS = 60_000;

type Entry = {
  view: ApprovalView;
  resolve: (v: ApprovalView) => void;
  reject: (e: ProviderRpcError) => void;
  timer: unknown;
  refreshTimer?: unknown;
  rebuild?: () => Promise<ApprovalRefresh>;
  superseded: Set<string>;
};

/** Registry options: `onChange` hears the pending list after every change; clock and timers are injectable (tests). */
export type RegistryOptions = {
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
  /** Called whenever the pending list changes (badge, window). */
  onChange?: (pending: ApprovalView[]) => void;
};

/**
 * The pending approvals: capacity per origin and in total, time-to-live, refresh of stale
 * artifacts, decisions bound to the digest shown, and the pause of a site after repeated rejections.
 */
export class ApprovalRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly rejections = new Map<string, number[]>();
  private readonly blockedUntil = new Map<string, number>();
  private readonly now: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (t: unknown) => void;

  constructor(private readonly o: RegistryOptions = {}) {
    this.now = o.now ?? Date.now;
    this.setTimer = o.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer = o.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>));
  }

  /**
   * Throws when `origin` may not add another request right now (blocked, or over a limit). The person's
   * own requests (`isPersonOrigin`) draw on their reserved slots (`PERSON_PENDING_SLOTS`) only; sites
   * share `MAX_PENDING_TOTAL`, at most `MAX_PENDING_PER_ORIGIN` each.
   */
  checkCapacity(origin: string): void {
    if (isPersonOrigin(origin)) {
      const own = [...this.entries.values()].filter((e) => isPersonOrigin(e.view.origin)).length;
      if (own >= PERSON_PENDING_SLOTS)
        throw resourceUnavailable(`${PERSON_PENDING_SLOTS} of your own requests are already waiting for approval.`);
      return;
    }
    const blocked = this.blockedUntil.get(origin) ?? 0;
    if (blocked > this.now())
      throw resourceUnavailable(
        `This site is paused for ${Math.ceil((blocked - this.now()) / 1000)} s after repeated rejections.`,
      );
    const mine = [...this.entries.values()].filter((e) => e.view.origin === origin).length;
    if (mine >= MAX_PENDING_PER_ORIGIN)
      throw resourceUnavailable(`This site already has ${MAX_PENDING_PER_ORIGIN} requests waiting for approval.`);
    const sites = [...this.entries.values()].filter((e) => !isPersonOrigin(e.view.origin)).length;
    if (sites >= MAX_PENDING_TOTAL)
      throw resourceUnavailable(`${MAX_PENDING_TOTAL} requests are already waiting for approval.`);
  }

  /**
   * Adds a request; returns its id and a promise that resolves with the approved view (artifact and
   * digest as approved), or rejects with a `ProviderRpcError` (4001 rejected or expired, or whatever
   * `rejectAll` gives). `rebuild` refreshes the artifact at `view.refreshAt` while pending.
   */
  add(
    view: Omit<ApprovalView, 'id' | 'createdAt' | 'expiresAt'>,
    ttlMs: number,
    rebuild?: () => Promise<ApprovalRefresh>,
  ): { id: string; approved: Promise<ApprovalView> } {
    this.checkCapacity(view.origin);
    const id = crypto.randomUUID();
    const createdAt = this.now();
    let resolve!: (v: ApprovalView) => void;
    let reject!: (e: ProviderRpcError) => void;
    const approved = new Promise<ApprovalView>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const timer = this.setTimer(
      () => this.finish(id, userRejected('The request expired before it was approved.')),
      ttlMs,
    );
    const entry: Entry = {
      view: { ...view, id, createdAt, expiresAt: createdAt + ttlMs },
      resolve,
      reject,
      timer,
      superseded: new Set(),
      ...(rebuild ? { rebuild } : {}),
    };
    this.entries.set(id, entry);
    this.scheduleRefresh(entry);
    this.changed();
    return { id, approved };
  }

  private scheduleRefresh(e: Entry): void {
    if (!e.rebuild || e.view.refreshAt === undefined || e.view.refreshAt >= e.view.expiresAt) return;
    e.refreshTimer = this.setTimer(() => void this.refresh(e.view.id), Math.max(0, e.view.refreshAt - this.now()));
  }

  /** Rebuilds a pending request's artifact (its old digest can no longer be approved). */
  async refresh(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (!e?.rebuild) return;
    let next: ApprovalRefresh;
    try {
      next = await e.rebuild();
    } catch {
      this.finish(id, userRejected('The request could not be kept fresh and was cancelled; ask again.'));
      return;
    }
    if (this.entries.get(id) !== e) return;
    e.superseded.add(e.view.digest);
    e.view = { ...e.view, ...next };
    this.scheduleRefresh(e);
    this.changed();
  }

  /**
   * Pending requests, the person's own (`isPersonOrigin`) first, then the sites', each oldest first: the
   * window shows the head, so sites that filled their slots never stand in front of the person's request.
   */
  list(): ApprovalView[] {
    const views = [...this.entries.values()].map((e) => e.view);
    return [...views.filter((v) => isPersonOrigin(v.origin)), ...views.filter((v) => !isPersonOrigin(v.origin))];
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The person's decision on request `id`. Approval must carry the digest the window displayed; a
   * mismatch rejects the request. Throws `ApprovalNotFoundError` for an unknown or finished id.
   */
  decide(id: string, decision: { approve: boolean; digest?: string }): void {
    const e = this.entries.get(id);
    if (!e) throw new ApprovalNotFoundError();
    if (!decision.approve) {
      this.noteRejection(e.view.origin);
      this.finish(id, userRejected());
      return;
    }
    if (decision.digest !== e.view.digest) {
      if (decision.digest && e.superseded.has(decision.digest)) throw new ApprovalChangedError();
      this.finish(id, userRejected('What was approved does not match the pending request.'));
      throw new ApprovalMismatchError();
    }
    this.entries.delete(id);
    this.clearTimer(e.timer);
    if (e.refreshTimer !== undefined) this.clearTimer(e.refreshTimer);
    this.changed();
    e.resolve(e.view);
  }

  /** Rejects pending request `id` with `err` (no-op when it is no longer pending). */
  reject(id: string, err: ProviderRpcError): void {
    this.finish(id, err);
  }

  /** Rejects every pending request with `err` (e.g. 4900 on lock). */
  rejectAll(err: () => ProviderRpcError): void {
    for (const id of [...this.entries.keys()]) this.finish(id, err());
  }

  private finish(id: string, err: ProviderRpcError): void {
    const e = this.entries.get(id);
    if (!e) return;
    this.entries.delete(id);
    this.clearTimer(e.timer);
    if (e.refreshTimer !== undefined) this.clearTimer(e.refreshTimer);
    this.changed();
    e.reject(err);
  }

  private noteRejection(origin: string): void {
    const t = this.now();
    const recent = (this.rejections.get(origin) ?? []).filter((x) => x > t - REJECTION_WINDOW_MS);
    recent.push(t);
    this.rejections.set(origin, recent);
    if (recent.length >= REJECTIONS_TO_BLOCK) {
      this.blockedUntil.set(origin, t + BLOCK_MS);
      this.rejections.delete(origin);
      for (const other of [...this.entries.values()].filter((x) => x.view.origin === origin)) {
        this.finish(other.view.id, userRejected('This site is paused after repeated rejections.'));
      }
    }
  }

  private changed(): void {
    this.o.onChange?.(this.list());
  }
}
