/**
 * Shared rate budgets with a reserve for the person. The client-side weight budget of a gateway
 * (`CLIENT_WEIGHT_BUDGETS` in ./meter.ts; the seed's "Limits": request and action weight per
 * minute) is spent by what sites ask and by what the person does. So that no site can starve the
 * person's own controls, every draw names who it is for (`Drawer`):
 *
 * - `site`: what a web page spends without the person's click — submissions under a standing permission,
 *   and the reads a page's requests need (in the background, and the approval window's to show them) — at
 *   most `SITE_SHARE` (half) of each budget, all sites together;
 * - `person`: the person's own requests from the popup, a site's request the person approved in its
 *   window, and the background's reads, up to `PERSON_SHARE` (90 %) of each budget, sites' draws included;
 * - `reserve`: the person's reduce-only closes, cancels and kill-switch renewals (and panic's reads) —
 *   the whole budget. So at least 10 % of each budget, and the half sites cannot reach, is always there
 *   for them. (Panic's own cancels and closes are not metered at all: the gateway decides, and panic
 *   backs off when it says slow down.)
 */
import { isPersonOrigin } from '../authority/person';
import { SlidingWindow, type Budget } from './sliding-window';

/** Who a draw on a shared budget is for (see the module docstring). */
export type Drawer = 'site' | 'person' | 'reserve';

/** The share of each client-side budget all sites together may use (0.5: half). */
export const SITE_SHARE = 0.5;
/** The share of each client-side budget the person's ordinary requests may fill (the rest is the reserve). */
export const PERSON_SHARE = 0.9;

/** The words a standing permission's summary carries about its share (what the person reads when granting). */
export const SITE_SHARE_WORDS =
  "Uses at most half of Countersign's request and action weight at the venue each " +
  'minute (all sites together); the rest is kept for your own closes, cancels and panic.';

/**
 * One budget per key (a gateway) shared as the module docstring says: `check` gives the ms until
 * `cost` fits for `who` (0: now), `record` counts it. Times Unix ms.
 */
export class ReserveBudget {
  private readonly all: SlidingWindow;
  private readonly sites: SlidingWindow;
  constructor(readonly budget: Budget) {
    this.all = new SlidingWindow(budget);
    this.sites = new SlidingWindow(budget);
  }

  /** The most `who`'s draw may leave used in the whole window, and (sites) in the sites' part. */
  private caps(who: Drawer): { all: number; sites?: number } {
    const { limit } = this.budget;
    if (who === 'reserve') return { all: limit };
    const all = Math.floor(limit * PERSON_SHARE);
    return who === 'site' ? { all, sites: Math.floor(limit * SITE_SHARE) } : { all };
  }

  /** Ms until `cost` fits for `who` under `key` (0: it fits now; nothing recorded). */
  check(key: string, cost: number, who: Drawer, now: number): number {
    const caps = this.caps(who);
    const wait = this.all.check(key, cost, now, caps.all);
    return caps.sites === undefined ? wait : Math.max(wait, this.sites.check(key, cost, now, caps.sites));
  }

  /** Counts `cost` for `who` under `key` (after `check` said it fits). */
  record(key: string, cost: number, who: Drawer, now: number): void {
    this.all.record(key, cost, now);
    if (who === 'site') this.sites.record(key, cost, now);
  }
}

/**
 * Who a signed perps submission draws for: a site's submission under its standing permission (no window,
 * `granted`) draws `site`; the person's own (`isPersonOrigin`, lib/authority/person.ts: a page can never claim one)
 * draws `reserve` for cancels (`cancelAll`, `cancelOrders`, `cancelOrdersCOID`), the kill-switch renewal (`autoCancel`)
 * and orders that are all reduce-only (closes); everything else — the person's other commands, and a site's request the
 * person approved in its window (one click each) — draws `person`.
 */
export function drawerOfCommand(origin: string, op: { type: string; args?: unknown }, granted: boolean): Drawer {
  if (granted || !isPersonOrigin(origin)) return granted ? 'site' : 'person';
  if (['cancelAll', 'cancelOrders', 'cancelOrdersCOID', 'autoCancel'].includes(op.type)) return 'reserve';
  const closes =
    op.type === 'createOrders' &&
    Array.isArray(op.args) &&
    op.args.length > 0 &&
    op.args.every((o: unknown) => !!o && typeof o === 'object' && 'ro' in o && o.ro === true);
  return closes ? 'reserve' : 'person';
}
