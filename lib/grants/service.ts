/**
 * Standing grants in the background: created from the approval window for
 * the origin and account of a pending request (never from a page), stored sealed in the vault with
 * their uses, consumed one request at a time (a mutex keeps the daily notional and rate exact under
 * concurrency), revoked by the person, by lock (all), by disconnect (the origin's) and by expiry.
 *
 * One grant per origin, account and venue: a site may hold a perps grant and an order-book grant at
 * once; creating another for the same venue replaces it. The orders the venue accepted under a grant
 * are recorded in its sealed uses (`recordOrders`, at most `MAX_OWNED_ORDERS`: `./owned-orders.ts`): those,
 * and only those, a granted cancel may reach. A grant refused at its creation throws `./errors.ts`'s errors.
 *
 * Storage: the vault keeps a grant's uses in sealed per-minute records and this service keeps them in
 * memory with running 24 h / 60 s figures (`UseWindow`), so the cost of a granted order does not grow
 * with the uses of the day. Whether a use is counted and durable is the ledger's (`lib/grants/ledger.ts`):
 * a covered decision carries its `UseReservation`.
 */
import { TamperedRecordError } from '../vault/errors';
import type { Vault } from '../vault/vault';
import { fromUnits } from '../decimal';
import { InvalidFieldError, parseOrThrow } from '../validation';
import {
  evaluateGrant,
  grantScope,
  MAX_GRANT_MS,
  venueName,
  type Grant,
  type GrantLimits,
  type GrantRequest,
  type GrantUse,
  type GrantVenue,
  type GrantVerdict,
  type OwnedOrder,
  type RefPrice,
} from './evaluate';
import { grantLimitsSchema } from './schema';
import { GrantDurationError, GrantLimitsError } from './errors';
import { forgetOwnedCoids, recordOwnedOrders } from './owned-orders';
import { UseWindow } from './usage';
import { GrantLedger, type LedgerGrant, type UseReservation } from './ledger';
import { grantUseRecords, type GrantUseRecords } from './use-records';
import type { AuditJournal } from '../audit/journal';
import * as v from 'valibot';
import {
  type Authority,
  GrantRevokedError,
  grantedPageScopes,
  narrowTicket,
  type AuthorityTicket,
} from '../authority/epoch';

export { GrantRevokedError };

/**
 * What a covered request holds until its signature: the grant, and the authority it holds
 * (`lib/authority/epoch.ts`: the page request's, from its start, and the grant's).
 * `GrantService.assertCovering(ticket)` throws when it ended since.
 */
export type GrantTicket = { grantId: string; origin: string; authority: AuthorityTicket };

/** A grant as the popup lists it: limits, expiry and what was used in the last 24 h. */
export type GrantSummary = Grant & { used24h: string; uses24h: number };

/**
 * What `consume` decided: the verdict, and for a covered request the grant and use to record orders on,
 * and the use's reservation (`UseReservation`: nothing covered leaves before it is counted and durable).
 */
export type GrantDecision =
  | (GrantVerdict & { ok: false })
  | { ok: true; notional: string; grantId: string; seq: number; ticket: GrantTicket; reservation: UseReservation };

/** Grants already found in the shape these rules read (a grant is never changed in place: checked once each). */
const current = new WeakSet<Grant>();

/** Whether a stored grant has the shape these rules read (one venue, explicit scope, caps and band). */
function isCurrent(g: Grant): boolean {
  if (current.has(g)) return true;
  const { id: _i, origin: _o, account: _a, createdAt: _c, expiresAt: _e, names: _n, ...limits } = g;
  const ok = v.safeParse(grantLimitsSchema, limits).success;
  if (ok) current.add(g);
  return ok;
}

/** A live grant in memory: the grant and its uses with their running figures. */
type Held = LedgerGrant;

/** The venue a request is for (`undefined` for a `never` request). */
const venueOf = (req: GrantRequest): GrantVenue | undefined => (req.kind === 'never' ? undefined : req.venue);

/** The grants of this vault: create, consume (serialised), record orders, list, revoke. */
export class GrantService {
  private lock: Promise<unknown> = Promise.resolve();
  private readonly now: () => number;
  /** Decrypted grants while unlocked (the vault's sealed records are the truth; this saves a decrypt per request). */
  private cache: Held[] | undefined;
  /**
   * The authority epoch (`lib/authority/epoch.ts`): revocations end it synchronously when asked (before
   * their vault write), so a request already covered is stopped at its signature (`assertCovering`): a
   * grant by its id, an origin's (disconnect), all of them (`grants`: lock, panic).
   */
  readonly authority: Authority;
  /**
   * The stored grants failed their integrity check (a use bucket lost or rolled back): they are ignored until revoked.
   */
  integrityFailed = false;

  /** Whether each use is counted and durable; the uses not in the vault yet (`lib/grants/ledger.ts`). */
  private readonly ledger: GrantLedger;
  /** The vault's grant records (`lib/grants/use-records.ts`). */
  private readonly records: GrantUseRecords;

  /**
   * `journal`: the audit journal, whose records a stopped worker left carry the uses it sent under (merged
   * at the first read of the grants from the vault, `GrantLedger`). `authority`: the background's one
   * epoch (the signing service's), required.
   */
  constructor(
    private readonly o: {
      vault: Vault;
      now?: () => number;
      onChange?: (live: number) => void;
      journal?: AuditJournal;
      authority: Authority;
    },
  ) {
    this.now = o.now ?? Date.now;
    this.authority = o.authority;
    this.records = grantUseRecords(o.vault);
    this.ledger = new GrantLedger({
      records: this.records,
      ...(o.journal ? { journal: o.journal } : {}),
      now: this.now,
    });
  }

  /**
   * Forgets the grants held in memory: the next call reads them from the vault (as after a worker restart). Bench
   * set-up (`lib/background/bench-hooks.ts`).
   */
  reload(): void {
    void this.exclusive(async () => {
      this.cache = undefined;
    });
  }

  /** Runs `fn` alone (grant reads and writes are serialised). */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async live(): Promise<Held[]> {
    if (this.o.vault.state === 'locked') {
      this.cache = undefined;
      return [];
    }
    let all = this.cache;
    if (!all) {
      try {
        all = await this.ledger.read();
      } catch (err) {
        // A grant store that fails its integrity check covers nothing (deny by default): every request asks,
        // the window says why, and the popup still works (revoke all, or restore a backup, clears it).
        if (!(err instanceof TamperedRecordError)) throw err;
        this.integrityFailed = true;
        all = [];
      }
      await this.ledger.merge(all);
    }
    const now = this.now();
    // Expired grants, and grants stored by an older version in a shape these rules do not read, end here.
    const dead = (g: Grant) => g.expiresAt <= now || !isCurrent(g);
    const expired = all.filter((x) => dead(x.grant));
    for (const g of expired) await this.records.deleteGrant(g.grant.id);
    this.cache = all.filter((x) => !dead(x.grant));
    if (expired.length) this.changed(this.cache.length); // the badge, the dead-man and a trading session follow expiry
    return this.cache;
  }

  /** Writes a new grant (no uses) through to the vault and the cache. */
  private async save(grant: Grant): Promise<void> {
    await this.records.putGrant(grant, []);
    if (this.cache)
      this.cache = [...this.cache.filter((x) => x.grant.id !== grant.id), { grant, win: new UseWindow([]) }];
  }

  /** Writes changed uses (orders recorded or forgotten) through to the vault, then to memory. */
  private async update(held: Held, changed: readonly GrantUse[]): Promise<void> {
    if (!changed.length) return;
    await this.records.updateGrantUses(held.grant.id, changed);
    for (const u of changed) held.win.replace(u);
  }

  private async remove(id: string): Promise<void> {
    await this.records.deleteGrant(id);
    if (this.cache) this.cache = this.cache.filter((x) => x.grant.id !== id);
  }

  private changed(n: number) {
    this.o.onChange?.(n);
  }

  /** The live grants of `origin` for `account`, the one for `venue` first. */
  private async mine(origin: string, account: string, venue: GrantVenue | undefined) {
    const list = (await this.live()).filter(
      (g) => g.grant.origin === origin && g.grant.account.toLowerCase() === account.toLowerCase(),
    );
    return [...list.filter((g) => g.grant.venue === venue), ...list.filter((g) => g.grant.venue !== venue)];
  }

  /**
   * Creates a grant for `origin` and `account` lasting `durationMs` (1 min … 24 h), ending no later
   * than `notAfter` (Unix ms, the expiry a page asked for) when given; replaces that
   * pair's grant on the same venue. `limits` is validated here too (whatever the caller checked).
   * `names`: display names of the grant's instruments / markets (id → name, each cut to 80 characters).
   * `authority`: the ticket of the request that asked for it (`lib/authority/epoch.ts`), checked when its
   * turn comes and right before the grant is stored: a lock, disconnect, switch or venue change meanwhile
   * creates none. Throws `GrantDurationError`, `GrantLimitsError` (naming the field), `AuthorityEndedError`.
   */
  async create(input: {
    origin: string;
    account: string;
    limits: GrantLimits;
    durationMs: number;
    notAfter?: number;
    names?: Record<string, string>;
    authority?: AuthorityTicket;
  }): Promise<Grant> {
    if (!(input.durationMs >= 60_000 && input.durationMs <= MAX_GRANT_MS)) throw new GrantDurationError();
    let limits: GrantLimits;
    try {
      limits = parseOrThrow(grantLimitsSchema, input.limits, 'limits') as GrantLimits;
    } catch (err) {
      if (err instanceof InvalidFieldError) throw new GrantLimitsError({ field: err.field, reason: err.reason });
      throw err;
    }
    const scope = limits.venue === 'perps' ? limits.instruments.map(String) : limits.markets;
    const names = Object.fromEntries(
      scope.flatMap((m) => (typeof input.names?.[m] === 'string' ? [[m, input.names[m]!.slice(0, 80)]] : [])),
    );
    const asked = input.authority;
    return this.exclusive(async () => {
      if (asked) this.authority.assert(asked);
      const now = this.now();
      for (const g of await this.mine(input.origin, input.account, limits.venue)) {
        if (g.grant.venue !== limits.venue) continue;
        // A replaced grant ends before the next signature, like a revoked one: a request already past its
        // check under it is stopped at `assertCovering` (`lib/background/unknown-outcomes.test.ts`).
        this.authority.endGrant(g.grant.id);
        await this.remove(g.grant.id);
      }
      const grant: Grant = {
        ...limits,
        id: crypto.randomUUID(),
        origin: input.origin,
        account: input.account,
        createdAt: now,
        expiresAt: Math.min(now + input.durationMs, input.notAfter ?? Infinity),
        ...(Object.keys(names).length ? { names } : {}),
      };
      if (asked) this.authority.assert(asked);
      await this.save(grant);
      this.changed((await this.live()).length);
      return grant;
    });
  }

  /**
   * Tries to cover `req` of `origin` for `account` with its live grant for the request's venue.
   * Returns `undefined` when the origin holds no grant for this account; else the decision. Reference
   * prices (`ref`) and the kill switch (`killSwitchArmed`, asked only when a grant exists) are read
   * before the grant is locked; a read that fails counts as unknown / not armed. A covered request is
   * counted at once (before it is signed); one the kill switch stops is not covered and not counted.
   * `started`: the authority the request captured at its start (default: now).
   */
  async consume(
    origin: string,
    account: string,
    req: GrantRequest,
    ref: (market: string) => Promise<RefPrice | undefined>,
    killSwitchArmed?: () => Promise<boolean>,
    started?: AuthorityTicket,
  ): Promise<GrantDecision | undefined> {
    const decision = await this.decide(origin, account, req, ref, killSwitchArmed, started);
    if (decision?.ok) await decision.reservation.written;
    return decision;
  }

  /**
   * `consume`, answering as soon as the use is counted, before it is stored (the caller builds its
   * artifact while the use is written). A covered decision carries the use's `reservation`
   * (`UseReservation`, `lib/grants/ledger.ts`): **the caller sends nothing before `reservation.counted`
   * and `reservation.durable`** (its journal record through `reservation.carry`, or its vault write). The
   * use counts in memory from the decision on, for every later check; one whose write failed is kept and
   * merged again whenever the grants are read from the vault (counting more than was signed only refuses
   * sooner). `started`: the authority the request captured at its start (`lib/authority/epoch.ts`;
   * default: now); the covered decision's ticket holds it, narrowed to a granted request's scopes and the grant.
   */
  async decide(
    origin: string,
    account: string,
    req: GrantRequest,
    ref: (market: string) => Promise<RefPrice | undefined>,
    killSwitchArmed?: () => Promise<boolean>,
    started?: AuthorityTicket,
  ): Promise<GrantDecision | undefined> {
    const venue = venueOf(req);
    const since = started ?? this.authority.capture(grantedPageScopes(origin));
    const held = (await this.exclusive(() => this.mine(origin, account, venue)))[0];
    if (!held) return undefined;
    // Reference prices only for the grant's own instruments / markets (anything else is refused anyway).
    const scope = held.grant.venue === venue ? grantScope(held.grant) : [];
    const refs = new Map<string, RefPrice | undefined>();
    if (req.kind === 'order')
      for (const o of req.orders)
        if (scope.includes(o.market) && !refs.has(o.market))
          refs.set(o.market, await ref(o.market).catch(() => undefined));
    // Asked after the reference prices (a kill switch re-armed after a restart needs that time; in parallel it asks
    // more often).
    const armed = req.kind === 'never' || !killSwitchArmed ? true : await killSwitchArmed().catch(() => false);
    return this.exclusive(async () => {
      const found = (await this.mine(origin, account, venue))[0];
      if (!found) return undefined;
      const now = this.now();
      const usage = found.win.at(now);
      const verdict = evaluateGrant(found.grant, req, {
        now,
        uses: req.kind === 'cancel' ? found.win.withOrders() : [],
        usage,
        ref: (m) => refs.get(m),
      });
      if (!verdict.ok) return verdict;
      if (!armed)
        return {
          ok: false,
          limit:
            `the kill switch (auto-cancel / heartbeat) of ${venueName(found.grant.venue)} ` +
            `is not armed, so nothing is signed without you`,
        };
      const seq = found.win.nextSeq();
      // Counted here at once; written in call order (a later record of this use's orders lands after it).
      const reservation = this.ledger.reserve(found, { at: now, notional: verdict.notional, seq });
      const ticket: GrantTicket = {
        grantId: found.grant.id,
        origin,
        authority: narrowTicket(since, grantedPageScopes(origin), found.grant.id),
      };
      return { ok: true as const, notional: verdict.notional, grantId: found.grant.id, seq, ticket, reservation };
    });
  }

  /**
   * Records the orders the venue accepted for use `seq` of grant `grantId` (a granted cancel may reach
   * them, and nothing else). Keeps the newest `MAX_OWNED_ORDERS`. No-op when the grant is gone.
   * Resolves once they count in memory; the vault write (only the buckets of the uses it changes) follows
   * in the vault's call order, not awaited.
   */
  async recordOrders(grantId: string, seq: number, orders: readonly OwnedOrder[]): Promise<void> {
    if (!orders.length) return;
    await this.exclusive(() => this.noteOrders(grantId, seq, orders));
  }

  /** `recordOrders` inside the mutex: the changed uses put in memory, then written to the vault (not awaited). */
  private async noteOrders(grantId: string, seq: number, orders: readonly OwnedOrder[]): Promise<void> {
    const found = (await this.live()).find((g) => g.grant.id === grantId);
    const target = found?.win.uses.findLast((u) => u.seq === seq);
    if (!found || !target) return;
    // In memory at once (the next grant check sees these orders); written behind it, in the vault's call
    // order (page path: the next order does not wait for this write). A failed write loses only
    // the record of these orders: a granted cancel of them then asks (deny by default).
    const list = recordOwnedOrders(found.win.withOrders(), target, orders);
    for (const u of list) found.win.replace(u);
    void this.records.updateGrantUses(found.grant.id, list, { defer: true }).catch(() => undefined);
  }

  /**
   * Forgets client order ids `coids` from every grant of `account`, whichever site holds it (their order
   * ids stay owned); `origin` is the site that sent them. A client order id names whichever open order
   * carries it *now* (the venue only keeps it unique among open orders): once any site sends it on an
   * order outside a grant (approved in a window), a granted cancel by that id would reach that order, so
   * no grant owns it any more (`lib/background/page-path.granted.test.ts`: another site's grant must not keep it) — nor
   * when it is sent under another grant (`except`: the grant placing it). Written before it resolves.
   */
  async forgetCoids(
    _origin: string,
    account: string,
    coids: readonly string[],
    o: { except?: string } = {},
  ): Promise<void> {
    if (!coids.length) return;
    await this.exclusive(async () => {
      for (const g of (await this.live()).filter(
        (x) => x.grant.account.toLowerCase() === account.toLowerCase() && x.grant.id !== o.except,
      )) {
        await this.update(g, forgetOwnedCoids(g.win.withOrders(), coids));
      }
    });
  }

  /**
   * Live grants with their last-24 h usage: the uses that are stored (in the vault, or in the journal
   * record of a submission that may have left) — what a worker that starts now reads too. A use decided
   * but not stored yet holds room for the orders deciding beside it, and is not shown.
   */
  async list(): Promise<GrantSummary[]> {
    return this.exclusive(async () => {
      const now = this.now();
      return (await this.live()).map(({ grant, win }) => {
        const usage = this.ledger.durableUses(grant.id, win).at(now);
        return { ...grant, used24h: fromUnits(usage.used24h, 18), uses24h: usage.uses24h };
      });
    });
  }

  /**
   * The order-book markets (token ids) the live grant of `origin` for `account` covers, as the grants held in memory
   * say: empty when none is, the vault is locked or the grants were not read yet. Reads no storage and decides nothing
   * (the grant check does): what an arriving request may start reading ahead of its check (`PageReads.startClobRefs`).
   */
  clobMarketsHeld(origin: string, account: string): ReadonlySet<string> {
    if (this.o.vault.state === 'locked' || !this.cache) return new Set();
    const now = this.now();
    const held = this.cache.find(
      ({ grant: g }) =>
        g.venue === 'clob' &&
        g.origin === origin &&
        g.account.toLowerCase() === account.toLowerCase() &&
        g.expiresAt > now,
    );
    return new Set(held?.grant.venue === 'clob' ? held.grant.markets : []);
  }

  /** Whether any grant is live (the badge and the dead-man timer follow it). */
  async anyLive(): Promise<boolean> {
    return (await this.list()).length > 0;
  }

  /**
   * Synchronous, run right before a covered request's signature and send (`ExecuteOptions.still`): throws
   * the ticket's ended error (`endedError(reason, { granted: true })`: `GrantRevokedError` when its grant
   * was revoked — one by one, its origin's, all of them at lock or panic; 4100 after an account switch,
   * 4900 after a venue change), or `GrantRevokedError` when the vault is locked. Nothing may await between
   * this and the signature.
   */
  assertCovering(ticket: GrantTicket): void {
    this.authority.assert(ticket.authority); // a grant's ticket: `endedError(reason, { granted: true })`
    if (this.o.vault.state === 'locked') throw new GrantRevokedError();
  }

  /** Revokes one grant (no error when it is gone); a request it already covered is not signed. */
  async revoke(id: string): Promise<void> {
    this.authority.endGrant(id);
    await this.exclusive(async () => {
      await this.remove(id);
      this.changed((await this.live()).length);
    });
  }

  /** Revokes every grant of `origin` (disconnect); returns how many. */
  async revokeOrigin(origin: string): Promise<number> {
    this.authority.end(`origin:${origin}`, 'disconnect');
    return this.exclusive(async () => {
      const mine = (await this.live()).filter((g) => g.grant.origin === origin);
      for (const g of mine) await this.remove(g.grant.id);
      this.changed((await this.live()).length);
      return mine.length;
    });
  }

  /** Revokes every grant (lock, panic). Works while locked. */
  async revokeAll(): Promise<number> {
    this.authority.end('grants', 'revoke');
    return this.exclusive(async () => {
      const n = await this.records.deleteAllGrants();
      this.cache = undefined;
      this.integrityFailed = false;
      this.changed(0);
      return n;
    });
  }
}
