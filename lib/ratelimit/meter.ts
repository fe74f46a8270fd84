/**
 * The client-side weight meter of the gateways (the seed's "Limits": request and action weight per
 * minute). One meter serves every gateway, keyed by its URL, and is shared by the venue reads
 * (`lib/reads/venue-reads.ts`) and the signed commands (`lib/signer/submit.ts`): both draw on the same
 * budgets, so a burst of reads cannot leave a command to meet the gateway's 429, and the reverse. Each
 * draw names who it is for (`Drawer`, `./reserve.ts`): sites get at most half of each budget, the person's
 * closes and cancels draw on a reserve.
 */
import { BaseError } from '../errors/base';
import { ReserveBudget, type Drawer } from './reserve';
import type { Budget } from './sliding-window';

/**
 * Budgets the client meter keeps per gateway (the sandbox's defaults; the real ones are unshown): weight per 60 s
 * window.
 */
export const CLIENT_WEIGHT_BUDGETS: { request: Budget; action: Budget } = {
  request: { limit: 1_200, windowMs: 60_000 },
  action: { limit: 600, windowMs: 60_000 },
};

/** Thrown when a command or a read would exceed the gateway's weight budget (refused before sending). */
export class WeightBudgetError extends BaseError {
  override name = 'Signer.WeightBudgetError';
  /** EIP-1474 -32002 "resource unavailable" (nothing was sent; not -32005, which dapp libraries retry at once). */
  static override readonly code: number | undefined = -32002;
  readonly retryAfterMs: number;
  /**
   * `retryAfterMs`: ms until the draw fits; `site`: the refused request was a site's, over the sites' share
   * (`SITE_SHARE`).
   */
  constructor(retryAfterMs: number, site = false) {
    super(
      `Slow down: this would exceed ` +
        `${site ? "the share of the gateway's rate budget sites may use" : "the gateway's rate budget"}. ` +
        `Try again in ${Math.ceil(retryAfterMs / 1000)} s.`,
      { data: { retryAfterMs } },
    );
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * The request and action budgets of every gateway (keyed by its URL), each shared as `ReserveBudget`
 * says. `now` is the clock (Unix ms). Build one per background and hand the same instance to the reads
 * and to the signer.
 */
export class WeightMeter {
  private readonly request: ReserveBudget;
  private readonly action: ReserveBudget;
  constructor(
    private readonly now: () => number = Date.now,
    budgets: { request: Budget; action: Budget } = CLIENT_WEIGHT_BUDGETS,
  ) {
    this.request = new ReserveBudget(budgets.request);
    this.action = new ReserveBudget(budgets.action);
  }

  /**
   * Takes `request` and `action` weight of `gateway`'s budgets for `who`, or throws `WeightBudgetError`
   * (with the ms until it fits) and takes nothing.
   */
  take(gateway: string, request: number, action: number, who: Drawer): void {
    const t = this.now();
    const wait = Math.max(this.request.check(gateway, request, who, t), this.action.check(gateway, action, who, t));
    if (wait > 0) throw new WeightBudgetError(wait, who === 'site');
    this.request.record(gateway, request, who, t);
    this.action.record(gateway, action, who, t);
  }
}
