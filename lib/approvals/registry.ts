/**
 * Pending approvals: a promise registry keyed by request id (after MetaMask's ApprovalController).
 *
 * Rules (issue #6 §5): every signing request is approved one by one and the decision is bound to its
 * id and to the digest the window displayed; unknown ids throw; at most 5 pending per origin
 * (-32002) and 20 in all (-32005); requests expire (the caller gives the TTL: trading 60 s, withdraw
 * and transfer 300 s); an origin the person rejected 3 times within 30 s is blocked for 60 s; nothing
 * here is persisted — after a worker restart there is nothing to approve, so nothing is signed
 * without a fresh approval; `rejectAll` (on lock) rejects everything pending.
 */
import type { Hex } from 'viem';
import { BaseError } from '../errors/base';
import { limitExceeded, resourceUnavailable, userRejected, type ProviderRpcError } from '../provider/errors';

export type ApprovalKind = 'connect' | 'perps' | 'clob' | 'l2' | 'typedData';

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
  createdAt: number;
  expiresAt: number;
};

export class ApprovalNotFoundError extends BaseError {
  override name = 'Approvals.NotFoundError';
  readonly code = 4100;
  constructor() {
    super('That request is no longer pending.');
  }
}
export class ApprovalMismatchError extends BaseError {
  override name = 'Approvals.MismatchError';
  readonly code = 4001;
  constructor() {
    super('What was approved does not match the pending request; it was rejected.');
  }
}

export const MAX_PENDING_PER_ORIGIN = 5;
export const MAX_PENDING_TOTAL = 20;
const REJECTION_WINDOW_MS = 30_000;
const REJECTIONS_TO_BLOCK = 3;
const BLOCK_MS = 60_000;

type Entry = { view: ApprovalView; resolve: () => void; reject: (e: ProviderRpcError) => void; timer: unknown };

export type RegistryOptions = {
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
  /** Called whenever the pending list changes (badge, window). */
  onChange?: (pending: ApprovalView[]) => void;
};

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

  /** Throws when `origin` may not add another request right now (blocked, or over a limit). */
  checkCapacity(origin: string): void {
    const blocked = this.blockedUntil.get(origin) ?? 0;
    if (blocked > this.now()) throw limitExceeded(`This site is paused for ${Math.ceil((blocked - this.now()) / 1000)} s after repeated rejections.`);
    const mine = [...this.entries.values()].filter((e) => e.view.origin === origin).length;
    if (mine >= MAX_PENDING_PER_ORIGIN) throw resourceUnavailable(`This site already has ${MAX_PENDING_PER_ORIGIN} requests waiting for approval.`);
    if (this.entries.size >= MAX_PENDING_TOTAL) throw limitExceeded(`${MAX_PENDING_TOTAL} requests are already waiting for approval.`);
  }

  /**
   * Adds a request; returns its id and a promise that resolves when approved, or rejects with a
   * `ProviderRpcError` (4001 rejected or expired, or whatever `rejectAll` gives).
   */
  add(view: Omit<ApprovalView, 'id' | 'createdAt' | 'expiresAt'>, ttlMs: number): { id: string; approved: Promise<void> } {
    this.checkCapacity(view.origin);
    const id = crypto.randomUUID();
    const createdAt = this.now();
    let resolve!: () => void;
    let reject!: (e: ProviderRpcError) => void;
    const approved = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const timer = this.setTimer(() => this.finish(id, userRejected('The request expired before it was approved.')), ttlMs);
    this.entries.set(id, { view: { ...view, id, createdAt, expiresAt: createdAt + ttlMs }, resolve, reject, timer });
    this.changed();
    return { id, approved };
  }

  /** Pending requests, oldest first. */
  list(): ApprovalView[] {
    return [...this.entries.values()].map((e) => e.view);
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
      this.finish(id, userRejected('What was approved does not match the pending request.'));
      throw new ApprovalMismatchError();
    }
    this.entries.delete(id);
    this.clearTimer(e.timer);
    this.changed();
    e.resolve();
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
