/**
 * Keys the vault opened, held in memory so that a granted order's key read does not queue behind the
 * vault's writer lock (where its own grant use write waits): the proxy key of an account (perps), the
 * owner key and the order-book API credentials (the order book), while unlocked and in a trading session;
 * and the deposit wallet's clear record (`deposit:<account>`, read before every order-book signature; a
 * clear record, read without the writer lock: a write that overlaps the read changes the stamp, so what it
 * read is not held past that write).
 *
 * A held key is served only when it is provably what a read through the writer lock would return now:
 * - it was opened under the live key (`of`: the same master key object while unlocked, the same session
 *   key object in a trading session — lock, unlock, restore, a new vault and every session start or end
 *   replace or drop it);
 * - no key record was written or deleted since (`writes`: the vault's `keyWrites`, bumped before and
 *   after every write or delete of a record other than a grant's);
 * - in a trading session, the session still keeps the same accounts and keys (`kept`: the bundle's
 *   account, proxy, credential and builder lists — a grant write replaces only the grant list);
 * - unexpired (`expiry`, Unix ms, for proxy keys);
 * - and every call that changes keys, the master key or the state empties the holder before it queues
 *   (`clear`), so a read made after such a call never returns what that call replaces; a read queued
 *   before such a call and answered after it was made is not held (`since`: the holder's clear count
 *   when the read was called), since the call may still be queued behind it.
 * Background only; nothing here leaves the worker.
 */
import type { SessionBundle } from './trading-session';

/** What a held key was opened under (see the module docstring). */
export type HeldStamp = {
  /** The master key ('unlocked') or the session key ('session') the key was opened under. */
  of: CryptoKey;
  /** The vault's `keyWrites` count when the read began. */
  writes: number;
  /** In a trading session: the bundle's kept lists (compared by identity); none while unlocked. */
  kept: readonly unknown[] | undefined;
};

/** The stamp of the vault's live state: `of` its master or session key, `bundle` the session's (if any). */
export function stampOf(
  of: CryptoKey | undefined,
  writes: number,
  bundle: SessionBundle | undefined,
): HeldStamp | undefined {
  if (!of) return undefined;
  return { of, writes, kept: bundle ? [bundle.accounts, bundle.proxies, bundle.clob, bundle.deposit] : undefined };
}

const sameStamp = (a: HeldStamp, b: HeldStamp) =>
  a.of === b.of &&
  a.writes === b.writes &&
  (a.kept === b.kept ||
    (!!a.kept && !!b.kept && a.kept.length === b.kept.length && a.kept.every((x, i) => x === b.kept![i])));

/** At most this many keys are held (the holder empties when full). */
const MAX_HELD = 64;

/**
 * The holder (see the module docstring): values by name (`proxy:<account>`, `owner:<address>`,
 * `clob:<account>`, `deposit:<account>`, lower-case), each with the stamp it was opened under and an optional expiry
 * (Unix ms).
 */
export class HeldKeys {
  private readonly held = new Map<string, { stamp: HeldStamp; expiry: number; value: unknown }>();
  /** How many times `clear` ran. */
  private clears = 0;

  /** Forgets every held key. Call before queuing any call that changes keys, the master key or the state. */
  clear(): void {
    this.clears++;
    this.held.clear();
  }

  /** The clear count to pass to `set`: take it when the read is called, before it queues. */
  since(): number {
    return this.clears;
  }

  /**
   * The value held under `name`, when `now` (the live stamp) matches its stamp and it is unexpired at `at` (Unix ms);
   * else undefined.
   */
  get<T>(name: string, now: HeldStamp | undefined, at: number): T | undefined {
    const hit = this.held.get(name);
    if (!hit || !now || !sameStamp(hit.stamp, now) || hit.expiry <= at) return undefined;
    return hit.value as T;
  }

  /**
   * Holds `value` under `name`, opened under `stamp` (taken when the read began, inside the writer lock);
   * `since` the clear count (`since()`) when the read was called, before it queued; `expiry` Unix ms
   * (Infinity for none). A read that saw a key write begin or end is not held (the stamp no longer
   * matches `now`, the live one), nor one during which a change was called (it may still be queued).
   */
  set(
    name: string,
    since: number,
    stamp: HeldStamp | undefined,
    now: HeldStamp | undefined,
    value: unknown,
    expiry = Infinity,
  ): void {
    if (since !== this.clears || !stamp || !now || !sameStamp(stamp, now)) return;
    if (this.held.size >= MAX_HELD) this.held.clear();
    this.held.set(name, { stamp, expiry, value });
  }
}
