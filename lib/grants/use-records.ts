/**
 * A grant's stored uses: a head record `grant:<id>` ({ grant, n }, vouched for by the vault's sealed
 * index while unlocked, carried in the session bundle during a trading session) and its uses, numbered
 * 1 … n, in one sealed record per clock minute (`grantuse:<id>:<minute>`, loose: each is bound to its id by
 * its AAD, and the head's `n` vouches for the set — a missing, rolled-back or deleted bucket leaves a number missing,
 * and the grant is refused with `TamperedRecordError`). Storage is the vault's (`SealedRecords`,
 * `lib/vault/records.ts`); this module decides what is written when.
 *
 * A use rewrites its minute's bucket, alone; the head and the index (or the bundle) follow within
 * `HEAD_LAG_MS`, once for all the uses since (`flushHeads`): the cost does not grow with the uses of the
 * day. A use without its head counts (numbers above `n` are counted, and the head is repaired on the next
 * read), and a head without its use is a gap (refused): a crash never un-counts a use. Buckets are sealed
 * by the master key, or by the session key in a session. A use's write runs in a background task after
 * its checks (`addGrantUse`'s `counted`); until it lands, the use is durable in the journal record that
 * carries it (`lib/grants/ledger.ts`).
 *
 * One `GrantUseRecords` per vault (`grantUseRecords(vault)`): it holds the heads' counts and the newest
 * bucket of each grant in memory, which a second instance would not see.
 */
import { backgroundTask } from '../tasks';
import { DecryptError } from '../vault/crypto';
import { KeyNotFoundError, TamperedRecordError, VaultLockedError } from '../vault/errors';
import { USE_PREFIX, type SealedRecords } from '../vault/records';
import type { SecretRecord } from '../vault/db';
import type { Grant, GrantUse } from './evaluate';

/**
 * Longest a grant head lags its newest use (ms): `addGrantUse` writes the use's bucket before anything
 * is signed, the head and the index (or the bundle) at most this long after, once for every use since.
 * Within it a store writer could delete or roll back the newest uses undetected (after it, a missing
 * number is refused as tampered); a crash within it loses nothing (uses above the head count).
 */
export const HEAD_LAG_MS = 500;
/** Width of one use bucket (ms): every use of a grant made in the same clock minute shares a record. */
const BUCKET_MS = 60_000;
const bucketPrefix = (grantId: string) => `${USE_PREFIX}${grantId}:`;
const bucketId = (grantId: string, at: number) =>
  `${bucketPrefix(grantId)}${String(Math.floor(at / BUCKET_MS)).padStart(10, '0')}`;

/**
 * A grant record's sealed content: the grant and `n`, how many uses it holds (uses are numbered 1 … n
 * in the bucket records). Records written before the buckets hold `{ grant, uses }` instead (migrated
 * when read).
 */
type GrantHead = { grant: Grant; n: number };
type LegacyGrant = { grant: Grant; uses: GrantUse[] };
/** One bucket record's sealed content: the uses of one minute and their numbers (`n[i]` numbers `uses[i]`). */
type UseBucket = { n: number[]; uses: GrantUse[] };
const isLegacy = (x: GrantHead | LegacyGrant): x is LegacyGrant => 'uses' in x && Array.isArray(x.uses);
/** A head's use count and the newest bucket of its grant, as last written. */
type Held = { n: number; bucket: { id: string; b: UseBucket } | undefined };

/** Buckets of `uses` numbered from `first` (`n` of `uses[i]` is `first + i`), by bucket id. */
function bucketsFor(grantId: string, uses: readonly GrantUse[], first = 1): Map<string, UseBucket> {
  const out = new Map<string, UseBucket>();
  uses.forEach((u, i) => {
    const id = bucketId(grantId, u.at);
    const b = out.get(id) ?? { n: [], uses: [] };
    b.n.push(first + i);
    b.uses.push(u);
    out.set(id, b);
  });
  return out;
}

const stores = new WeakMap<SealedRecords, GrantUseRecords>();

/** The one `GrantUseRecords` of `records` (a `Vault`), made at the first call. */
export function grantUseRecords(records: SealedRecords): GrantUseRecords {
  let s = stores.get(records);
  if (!s) stores.set(records, (s = new GrantUseRecords(records)));
  return s;
}

/** The stored grants and their uses (see the module docstring). Get it with `grantUseRecords(vault)`. */
export class GrantUseRecords {
  /** Grant heads' use counts and the newest bucket of each grant, as last written (a use reads nothing back). */
  private readonly useHeads = new Map<string, Held>();
  /**
   * Grants whose head lags their newest uses (`addGrantUse`), grants whose held bucket has recorded
   * orders not written yet (`updateGrantUses`), and the timer of the flush that catches both up (`flushHeads`).
   */
  private readonly headsDue = new Set<string>();
  private readonly bucketsDue = new Set<string>();
  private headTimer: ReturnType<typeof setTimeout> | undefined;

  /** Use `grantUseRecords(records)`: one instance per vault. */
  constructor(private readonly records: SealedRecords) {
    records.onReset(() => this.useHeads.clear());
  }

  /** Seals one bucket record. */
  private sealBucket(key: CryptoKey, id: string, bucket: UseBucket): Promise<SecretRecord> {
    return this.records.sealLoose(key, id, bucket);
  }

  /** Opens bucket `id` (undefined when absent). Throws `DecryptError` when it was altered or moved. */
  private readBucket(key: CryptoKey, id: string): Promise<UseBucket | undefined> {
    return this.records.openLoose<UseBucket>(key, id);
  }

  /**
   * Writes head `head` with bucket records `buckets` (sealed now) and deletes bucket ids `drop`, in one
   * transaction: the index (unlocked) or the session bundle (session) vouches for the head. Call inside `exclusive`.
   */
  private async writeGrant(head: GrantHead, buckets: Map<string, UseBucket>, drop: string[] = []): Promise<void> {
    const key = this.records.looseKey();
    const loose = await Promise.all([...buckets].map(([id, b]) => this.sealBucket(key, id, b)));
    const before = this.useHeads.get(head.grant.id);
    this.useHeads.delete(head.grant.id); // set again once written
    const only = buckets.size === 1 ? [...buckets][0] : undefined;
    // A head alone (a repair, a flush) keeps the bucket held, with any recorded orders not written yet.
    const cache = {
      n: head.n,
      bucket: only ? { id: only[0], b: only[1] } : buckets.size === 0 ? before?.bucket : undefined,
    };
    try {
      await this.records.writeHead(head, loose, drop);
    } catch (err) {
      // Nothing was written (one transaction): the held count and bucket stand — a use numbered from a
      // lagging head on disk would reuse a number.
      if (before) this.useHeads.set(head.grant.id, before);
      throw err;
    }
    this.useHeads.set(head.grant.id, cache);
  }

  /**
   * The head of grant `id` (call inside `exclusive`). Throws `KeyNotFoundError`, `TamperedRecordError`,
   * `VaultLockedError`.
   */
  private readHead(id: string): Promise<GrantHead | LegacyGrant> {
    return this.records.readHead<GrantHead | LegacyGrant>(id);
  }

  /**
   * The uses of a head, in number order, checked complete: every number 1 … n present (else
   * `TamperedRecordError`); a legacy head is migrated (its uses written as buckets). A use numbered above
   * `n` (a torn write) counts, and the head is repaired. Call inside `exclusive`.
   */
  private async loadUses(head: GrantHead | LegacyGrant): Promise<{ grant: Grant; uses: GrantUse[] }> {
    const { grant } = head;
    const ids = await this.records.idsFrom(bucketPrefix(grant.id));
    if (isLegacy(head)) {
      await this.writeGrant({ grant, n: head.uses.length }, bucketsFor(grant.id, head.uses), ids);
      return { grant, uses: head.uses };
    }
    const key = this.records.looseKey();
    const byN = new Map<number, GrantUse>();
    // A held bucket with recorded orders not written yet is read as held (`updateGrantUses`).
    const held = this.bucketsDue.has(grant.id) ? this.useHeads.get(grant.id)?.bucket : undefined;
    for (const id of ids) {
      const b =
        held?.id === id
          ? held.b
          : await this.readBucket(key, id).catch(() => {
              throw new TamperedRecordError();
            });
      b?.uses.forEach((u, i) => byN.set(b.n[i] ?? 0, u));
    }
    const top = Math.max(head.n, ...byN.keys());
    const uses: GrantUse[] = [];
    for (let i = 1; i <= top; i++) {
      const u = byN.get(i);
      if (u) uses.push(u);
      else if (i <= head.n) throw new TamperedRecordError();
    }
    if (top > head.n) await this.writeGrant({ grant, n: top }, new Map());
    return { grant, uses };
  }

  /**
   * Stores (or replaces, by `grant.id`) a grant with all its uses (creation, and tests). Per use, call
   * `addGrantUse`. Requires 'unlocked' or 'session'.
   */
  async putGrant(grant: Grant, uses: GrantUse[]): Promise<void> {
    return this.records.exclusive(async () => {
      this.records.looseKey();
      const old = await this.records.idsFrom(bucketPrefix(grant.id));
      const buckets = bucketsFor(grant.id, uses);
      await this.writeGrant(
        { grant, n: uses.length },
        buckets,
        old.filter((id) => !buckets.has(id)),
      );
    });
  }

  /**
   * Appends one use to grant `grant` (stored before): rewrites the use's minute bucket only, whatever
   * the number of uses (the head follows, `flushHeads`). Two promises, in the vault's call order:
   * `counted` resolves once every check that could refuse the use has passed — the grant is there, the
   * vault open, the records it reads open and complete — and its write is about to be placed; `stored`
   * once it is written. Both reject with `VaultLockedError` (not 'unlocked' or 'session'),
   * `KeyNotFoundError` (the grant is gone: revoked) or `TamperedRecordError`; `stored` also with a
   * storage error. (What a caller may send when: `lib/grants/ledger.ts`.)
   */
  addGrantUse(grant: Grant, use: GrantUse): { counted: Promise<void>; stored: Promise<void> } {
    let passed: () => void = () => undefined;
    let refused: (err: unknown) => void = () => undefined;
    const counted = new Promise<void>((resolve, reject) => {
      passed = resolve;
      refused = reject;
    });
    counted.catch(() => undefined); // the caller's await sees the error
    const stored = this.records.exclusive(async () => {
      let id: string, cached: Held | undefined, b: UseBucket;
      try {
        id = bucketId(grant.id, use.at);
        cached = this.useHeads.get(grant.id);
        if (!cached) {
          // Numbered after every stored use, not after the head: the head may lag its newest uses
          // (`HEAD_LAG_MS`); `loadUses` counts every bucket and repairs a lagging head (which holds the count).
          const head = await this.readHead(grant.id);
          const { uses } = await this.loadUses(head);
          cached = this.useHeads.get(grant.id) ?? { n: isLegacy(head) ? uses.length : head.n, bucket: undefined };
        }
        b =
          cached.bucket?.id === id
            ? cached.bucket.b
            : ((await this.readBucket(this.records.looseKey(), id).catch(() => {
                throw new TamperedRecordError();
              })) ?? { n: [], uses: [] });
        this.records.looseKey();
      } catch (err) {
        refused(err);
        throw err;
      }
      passed();
      // Sealed and written from a later, background task on: what the caller does with `counted` now
      // (build and sign the command, send once its journal record is stored) goes first.
      await backgroundTask();
      const n = cached.n;
      // The bucket alone, in one write to the records store: the use counts from here on (a number above
      // the head's `n` counts); the head and the index (or the bundle) follow within `HEAD_LAG_MS`
      // (`flushHeads`), one write for every use since.
      const bucket: UseBucket = { n: [...b.n, n + 1], uses: [...b.uses, use] };
      const key = this.records.looseKey();
      // A held bucket whose recorded orders are not written yet (`updateGrantUses`) goes with it.
      const left =
        cached.bucket && cached.bucket.id !== id && this.bucketsDue.has(grant.id) ? cached.bucket : undefined;
      const recs = await Promise.all([
        this.sealBucket(key, id, bucket),
        ...(left ? [this.sealBucket(key, left.id, left.b)] : []),
      ]);
      await this.records.putLoose(recs);
      this.bucketsDue.delete(grant.id); // the held bucket is written (this one, or the one left)
      this.useHeads.set(grant.id, { n: n + 1, bucket: { id, b: bucket } });
      this.due(grant.id, 'head');
    });
    return { counted, stored };
  }

  /** Marks grant `id`'s head (`head`) or held bucket (`bucket`) as behind, and starts the flush timer. */
  private due(id: string, what: 'head' | 'bucket'): void {
    (what === 'head' ? this.headsDue : this.bucketsDue).add(id);
    this.headTimer ??= setTimeout(() => void this.flushHeads(), HEAD_LAG_MS);
  }

  /**
   * Brings the heads of the grants used since the last flush up to their uses (`addGrantUse`): each
   * head's `n` (and the index or the bundle that vouches for it) written once for all its new uses. A
   * grant that is gone (revoked, locked, a transition that re-read the grants) is skipped: whoever reads
   * its uses next counts every bucket and repairs the head. Never throws.
   */
  private async flushHeads(): Promise<void> {
    this.headTimer = undefined;
    await this.records
      .exclusive(async () => {
        const due = [...new Set([...this.headsDue, ...this.bucketsDue])];
        const buckets = new Set(this.bucketsDue);
        this.headsDue.clear();
        this.bucketsDue.clear();
        for (const id of due) {
          const cached = this.useHeads.get(id);
          if (!cached) continue;
          let bucketWritten = false;
          try {
            const held = cached.bucket;
            if (buckets.has(id) && held)
              await this.records.putLoose([await this.sealBucket(this.records.looseKey(), held.id, held.b)]);
            bucketWritten = true;
            const head = await this.readHead(id);
            if (isLegacy(head) || head.n >= cached.n) continue;
            await this.writeGrant({ grant: head.grant, n: cached.n }, new Map()); // keeps the held bucket
          } catch (err) {
            // Locked, revoked or refused as tampered: the next read of the grant decides. Anything else (a
            // storage error) is tried again at the next flush.
            if (
              err instanceof VaultLockedError ||
              err instanceof KeyNotFoundError ||
              err instanceof TamperedRecordError ||
              err instanceof DecryptError
            )
              continue;
            if (!bucketWritten && buckets.has(id)) this.due(id, 'bucket');
            this.due(id, 'head');
          }
        }
      })
      .catch(() => undefined);
  }

  /**
   * Replaces stored uses of grant `grantId` by `uses`, matched by `seq` within the bucket of their `at`
   * (recording or forgetting orders); touches those buckets only. A use not found is skipped. Written
   * before it resolves, except with `defer: true` (orders just recorded): a change to the held (newest)
   * bucket then waits for the next use's write or the flush (`HEAD_LAG_MS`).
   */
  async updateGrantUses(grantId: string, uses: readonly GrantUse[], o: { defer?: boolean } = {}): Promise<void> {
    if (!uses.length) return;
    return this.records.exclusive(async () => {
      const key = this.records.looseKey();
      const cached = this.useHeads.get(grantId);
      if (!cached) await this.readHead(grantId); // the grant must still exist
      const ids = [...new Set(uses.map((u) => bucketId(grantId, u.at)))];
      const recs: SecretRecord[] = [];
      for (const id of ids) {
        const held = cached?.bucket?.id === id;
        const b = held && cached.bucket ? cached.bucket.b : await this.readBucket(key, id);
        if (!b) continue;
        const next = b.uses.map((u) => uses.find((x) => x.seq !== undefined && x.seq === u.seq && x.at === u.at) ?? u);
        const c = this.useHeads.get(grantId);
        if (c?.bucket?.id === id) c.bucket = { id, b: { n: b.n, uses: next } };
        // `defer` (orders just recorded): the held bucket (this minute's) is written with the next use, or by
        // the flush within HEAD_LAG_MS (no write between two orders). Lost with a crash before then: only orders a
        // granted cancel may reach — those cancels then ask. Anything that takes an order away from a grant (a
        // forgotten client order id) is written now.
        if (held && o.defer) this.due(grantId, 'bucket');
        else recs.push(await this.sealBucket(key, id, { n: b.n, uses: next }));
      }
      await this.records.putLoose(recs);
      const heldNow = this.useHeads.get(grantId)?.bucket;
      if (heldNow && recs.some((r) => r.id === heldNow.id)) this.bucketsDue.delete(grantId); // written as held
    });
  }

  /** Every grant with its uses (requires 'unlocked' or 'session' when there is any: the records are sealed). */
  async listGrants(): Promise<{ grant: Grant; uses: GrantUse[] }[]> {
    return this.records.exclusive(async () => {
      const heads = await this.records.listHeads<GrantHead | LegacyGrant>();
      const out: { grant: Grant; uses: GrantUse[] }[] = [];
      for (const h of heads) out.push(await this.loadUses(h));
      return structuredClone(out);
    });
  }

  /** Removes one grant with its uses (no error when it is gone). */
  async deleteGrant(id: string): Promise<void> {
    return this.records.exclusive(async () => {
      this.useHeads.delete(id);
      await this.records.deleteHead(id, await this.records.idsFrom(bucketPrefix(id)));
    });
  }

  /**
   * Removes every grant, in every state (lock and panic revoke them all); never blocked by a damaged
   * index (then the records alone are deleted). Returns how many there were.
   */
  async deleteAllGrants(): Promise<number> {
    return this.records.exclusive(async () => {
      this.useHeads.clear();
      return this.records.deleteAllHeads(await this.records.idsFrom(USE_PREFIX));
    });
  }
}
