/**
 * Standing grants in the background (issue #11 §1): created from the approval window for the origin
 * and account of a pending request (never from a page), stored sealed in the vault with their uses,
 * consumed one request at a time (a mutex keeps the daily notional and rate exact under concurrency),
 * revoked by the person, by lock (all), by disconnect (the origin's) and by expiry (swept on use).
 */
import { BaseError } from '../errors/base';
import type { Vault } from '../vault/vault';
import { fromUnits, toUnits } from '../decimal';
import { evaluateGrant, MAX_GRANT_MS, type Grant, type GrantLimits, type GrantRequest, type GrantUse, type GrantVerdict } from './evaluate';

/** Thrown when a grant would last longer than 24 h or not at all. */
export class GrantDurationError extends BaseError {
  override name = 'Grants.DurationError';
  constructor() {
    super('A standing permission lasts from 1 minute to 24 hours.');
  }
}

/** A grant as the popup lists it: limits, expiry and what was used in the last 24 h. */
export type GrantSummary = Grant & { used24h: string; uses24h: number };

/** The grants of this vault: create, consume (serialised), list, revoke. Throws `GrantDurationError` on create. */
export class GrantService {
  private lock: Promise<unknown> = Promise.resolve();
  private readonly now: () => number;
  /** Decrypted grants while unlocked (the vault's sealed records are the truth; this saves a decrypt per request). */
  private cache: { grant: Grant; uses: GrantUse[] }[] | undefined;

  constructor(private readonly o: { vault: Vault; now?: () => number; onChange?: (live: number) => void }) {
    this.now = o.now ?? Date.now;
  }

  /** Runs `fn` alone (grant reads and writes are serialised). */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async live(): Promise<{ grant: Grant; uses: GrantUse[] }[]> {
    if (this.o.vault.state === 'locked') {
      this.cache = undefined;
      return [];
    }
    const all = this.cache ?? (await this.o.vault.listGrants());
    const now = this.now();
    const expired = all.filter((x) => x.grant.expiresAt <= now);
    for (const g of expired) await this.o.vault.deleteGrant(g.grant.id);
    this.cache = all.filter((x) => x.grant.expiresAt > now);
    if (expired.length) this.changed(this.cache.length); // the badge, the dead-man and a trading session follow expiry
    return this.cache;
  }

  /** Writes a grant through to the vault and the cache. */
  private async save(grant: Grant, uses: GrantUse[]): Promise<void> {
    await this.o.vault.putGrant(grant, uses);
    if (this.cache) this.cache = [...this.cache.filter((x) => x.grant.id !== grant.id), { grant, uses }];
  }

  private async remove(id: string): Promise<void> {
    await this.o.vault.deleteGrant(id);
    if (this.cache) this.cache = this.cache.filter((x) => x.grant.id !== id);
  }

  private changed(n: number) {
    this.o.onChange?.(n);
  }

  /** Creates a grant for `origin` and `account` lasting `durationMs` (≤ 24 h); replaces that pair's grant. */
  async create(input: { origin: string; account: string; limits: GrantLimits; durationMs: number }): Promise<Grant> {
    if (!(input.durationMs >= 60_000 && input.durationMs <= MAX_GRANT_MS)) throw new GrantDurationError();
    return this.exclusive(async () => {
      const now = this.now();
      for (const g of await this.live()) if (g.grant.origin === input.origin && g.grant.account.toLowerCase() === input.account.toLowerCase()) await this.remove(g.grant.id);
      const grant: Grant = { ...input.limits, id: crypto.randomUUID(), origin: input.origin, account: input.account, createdAt: now, expiresAt: now + input.durationMs };
      await this.save(grant, []);
      this.changed((await this.live()).length);
      return grant;
    });
  }

  /**
   * Tries to cover `req` of `origin` for `account` with its live grant. Returns `undefined` when there is
   * no grant; else the verdict. A covered request is counted at once (before it is signed).
   */
  async consume(origin: string, account: string, req: GrantRequest, mid: (market: string) => Promise<string | undefined>): Promise<GrantVerdict | undefined> {
    return this.exclusive(async () => {
      const found = (await this.live()).find((g) => g.grant.origin === origin && g.grant.account.toLowerCase() === account.toLowerCase());
      if (!found) return undefined;
      const mids = new Map<string, string | undefined>();
      if (req.kind === 'order') for (const o of req.orders) if (!mids.has(o.market)) mids.set(o.market, await mid(o.market).catch(() => undefined));
      const now = this.now();
      const verdict = evaluateGrant(found.grant, req, { now, uses: found.uses, mid: (m) => mids.get(m) });
      if (verdict.ok) {
        const uses = [...found.uses.filter((u) => u.at > now - 24 * 3_600_000), { at: now, notional: verdict.notional }];
        await this.save(found.grant, uses);
      }
      return verdict;
    });
  }

  /** Live grants with their last-24 h usage. */
  async list(): Promise<GrantSummary[]> {
    return this.exclusive(async () => {
      const now = this.now();
      return (await this.live()).map(({ grant, uses }) => {
        const recent = uses.filter((u) => u.at > now - 24 * 3_600_000);
        return { ...grant, used24h: fromUnits(recent.reduce((a, u) => a + (toUnits(u.notional, 10) ?? 0n), 0n), 10), uses24h: recent.length };
      });
    });
  }

  /** Whether any grant is live (the badge and the dead-man timer follow it). */
  async anyLive(): Promise<boolean> {
    return (await this.list()).length > 0;
  }

  async revoke(id: string): Promise<void> {
    await this.exclusive(async () => {
      await this.remove(id);
      this.changed((await this.live()).length);
    });
  }

  async revokeOrigin(origin: string): Promise<number> {
    return this.exclusive(async () => {
      const mine = (await this.live()).filter((g) => g.grant.origin === origin);
      for (const g of mine) await this.remove(g.grant.id);
      this.changed((await this.live()).length);
      return mine.length;
    });
  }

  /** Revokes every grant (lock, panic). Works while locked. */
  async revokeAll(): Promise<number> {
    return this.exclusive(async () => {
      const n = await this.o.vault.deleteAllGrants();
      this.cache = undefined;
      this.changed(0);
      return n;
    });
  }
}
