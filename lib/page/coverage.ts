/**
 * Coverage: a standing grant as a caveat wrapped around a signing method. A `perps_sendCommand` or
 * `clob_postOrders` that the origin's live grant for that venue covers is signed without a window (the
 * same artifact pipeline, counted against the grant and marked in the audit log) — and only while the
 * venue's kill switch is armed for the account (`ProviderDeps.killSwitchArmed`); one outside the grant
 * asks (the window says which limit it exceeds). What a grant can ever cover is listed in
 * `lib/grants/requests.ts`; everything else asks.
 *
 * The tampered-store fallback: a grant store that fails its integrity check covers nothing — the
 * request asks, flagged (`TAMPERED_FLAG`), whether the check failed before the decision or while the
 * use was being counted (then the signature is dropped before anything leaves).
 */
import type { AuthorityTicket } from '../authority/epoch';
import type { GrantRequest, OwnedOrder, RefPrice } from '../grants/evaluate';
import type { ExecuteOptions } from '../signer/service';
import { nextTask } from '../tasks';
import { TamperedRecordError } from '../vault/errors';
import type { OwnerInfo } from '../vault/vault';
import type { ProviderDeps } from './context';

/** The window's flag while the stored grants fail their integrity check (they cover nothing). */
export const TAMPERED_FLAG =
  'Your standing permissions failed their integrity check and are ' +
  'ignored: revoke them all (Permissions) or restore from your backup.';

/** A covered decision: what the covered run signs under (see `GrantCheck`). */
export type CoveredGrant = Extract<GrantCheck, { covered: true }>;

/**
 * What `Coverage.check` found: covered (the grant and use to record orders on, `still` to run right
 * before the signature, `counted` — true once the grant store's checks of the use passed, false when the
 * store failed its integrity check; nothing may leave before it is true —, and `use`, the use's
 * reservation for the signer, `ExecuteOptions.grantUse`: nothing leaves before it is durable), or not
 * (with the window's flag, if any).
 */
export type GrantCheck =
  | {
      covered: true;
      grantId: string;
      seq: number;
      still: () => void;
      counted: Promise<boolean>;
      use: NonNullable<ExecuteOptions['grantUse']>;
      authority: AuthorityTicket;
    }
  | { covered: false; flag?: string };

/** A request no grant is asked about (it always asks). */
export const NOT_COVERED: GrantCheck = { covered: false };

/**
 * When the covered run learns that the use was counted: `'send'` — the artifact is built and signed
 * meanwhile and nothing leaves before it is (`beforeSend`); `'start'` — before the covered run begins.
 */
export type CountedAt = 'send' | 'start';

/**
 * The two ways a request runs: `covered` under the grant (with `beforeSend` when counted at send), or `ask` the person
 * (with the window's flag).
 */
export type CoveredOrAsk<T> = {
  covered: (grant: CoveredGrant, beforeSend?: () => Promise<void>) => Promise<T>;
  ask: (flag: string | undefined) => Promise<T>;
};

/**
 * `counted` of a covered decision: true once the store's checks passed, false when it failed its integrity check (the
 * request then asks); other errors throw.
 */
function countedOrTampered(stored: Promise<void> | undefined): Promise<boolean> {
  return (stored ?? Promise.resolve()).then(
    () => true,
    (err: unknown) => {
      if (err instanceof TamperedRecordError) return false;
      throw err;
    },
  );
}

/** The grant caveat of the page's signing methods (see the module docstring). */
export class Coverage {
  /** The owned-order records still being written, chained in answer order (each settles; a failure is dropped). */
  private recording: Promise<void> = Promise.resolve();

  constructor(private readonly d: Pick<ProviderDeps, 'grants' | 'killSwitchArmed'>) {}

  /**
   * Asks the origin's grant about `req`: `covered` (with the grant use to record orders on) when it may
   * be signed without a window; otherwise the flag for the window (`undefined` when there is no grant).
   * The venue's kill switch must be armed for a covered request (`ProviderDeps.killSwitchArmed`).
   * `ref` reads a market's reference price (`VenueReads`).
   */
  async check(
    origin: string,
    account: OwnerInfo,
    req: GrantRequest,
    ref: (m: string) => Promise<RefPrice | undefined>,
    ticket: AuthorityTicket,
  ): Promise<GrantCheck> {
    // Orders a covered request placed are recorded before any later request is checked (a granted cancel of them is
    // covered).
    await this.recording;
    const armed = this.d.killSwitchArmed;
    const venue = req.kind === 'never' ? undefined : req.venue;
    const grants = this.d.grants;
    let decision;
    try {
      decision = await grants?.decide(
        origin,
        account.address,
        req,
        ref,
        armed && venue ? () => armed(venue, account.address) : undefined,
        ticket,
      );
    } catch (err) {
      // A grant store that fails its integrity check covers nothing; the request still asks (deny by default).
      if (err instanceof TamperedRecordError) return { covered: false, flag: TAMPERED_FLAG };
      throw err;
    }
    if (!decision || !grants)
      return grants?.integrityFailed ? { covered: false, flag: TAMPERED_FLAG } : { covered: false };
    if (!decision.ok)
      return { covered: false, flag: `Outside your standing permission for this site: ${decision.limit}.` };
    const { ticket: covering, reservation } = decision;
    const counted = countedOrTampered(reservation.counted);
    counted.catch(() => undefined); // awaited before anything leaves; this only keeps an unawaited failure quiet
    // `still` runs right before the signature: a revoke answered since this decision stops it.
    return {
      covered: true,
      grantId: decision.grantId,
      seq: decision.seq,
      still: () => grants.assertCovering(covering),
      counted,
      use: reservation,
      authority: covering.authority,
    };
  }

  /**
   * Runs `run.covered` when `check` covers the request, else `run.ask` with its flag. The use is
   * checked and written while the artifact is built, the key read and the command signed; nothing
   * leaves before its checks passed (`countedAt`) and it is durable (the journal record that carries
   * it, or its vault write: `grantUse`). A store that fails its integrity check meanwhile covers
   * nothing: the signature is dropped and the request asks, flagged `TAMPERED_FLAG`.
   */
  async coveredOrAsk<T>(check: GrantCheck, countedAt: CountedAt, run: CoveredOrAsk<T>): Promise<T> {
    if (!check.covered) return run.ask(check.flag);
    if (countedAt === 'start') return (await check.counted) ? run.covered(check) : run.ask(TAMPERED_FLAG);
    const { counted } = check;
    let tampered = false;
    const beforeSend = async () => {
      if (await counted) return;
      tampered = true;
      throw new TamperedRecordError();
    };
    try {
      return await run.covered(check, beforeSend);
    } catch (err) {
      if (!tampered) throw err;
    }
    return run.ask(TAMPERED_FLAG);
  }

  /**
   * Client order ids the site sends: the grant placing them (`except`) owns them after, no other grant
   * may cancel them; sent outside any grant, they are no grant's to cancel (waits for the owned-order
   * records still being written first).
   */
  async forgetCoids(origin: string, account: string, coids: readonly string[], except?: string): Promise<void> {
    if (!coids.length) return;
    if (except !== undefined) {
      await this.d.grants?.forgetCoids(origin, account, [...coids], { except });
      return;
    }
    await this.recording;
    await this.d.grants?.forgetCoids(origin, account, [...coids]);
  }

  /**
   * Records the orders a covered createOrders placed (`GrantService.recordOrders`) after the page has its
   * answer, chained so every later grant check sees them (`check` waits for `recording`). Best effort:
   * an order it fails to record can only be cancelled with a window.
   */
  recordOrdersAfter(grantId: string, seq: number, orders: readonly OwnedOrder[]): void {
    const grants = this.d.grants;
    if (!grants || !orders.length) return;
    // From the next task on: the answer this request returns goes back to the page first.
    this.recording = this.recording
      .then(nextTask)
      .then(() => grants.recordOrders(grantId, seq, orders))
      .catch(() => undefined);
  }
}
