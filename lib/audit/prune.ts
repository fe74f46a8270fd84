/**
 * Retention: drops the oldest entries older than the setting, walking a key-range
 * cursor from the oldest end in chunks (bounded memory at any size). Each chunk is deleted in the same
 * transaction as the checkpoint that records it: the oldest id moves on and, when sealed entries are
 * dropped, the last dropped MAC becomes the chain's anchor, so what remains still verifies and a
 * store writer cannot drop more without the checkpoint noticing. Sealed entries are verified before
 * they are dropped: retention stops at the first one that does not verify, so it never destroys the
 * evidence of a change.
 */
import { commitPrune, prepare, serial, shared, type AuditLog } from './log';
import { entryAuthentic } from './mac';
import { readAuditRows } from '../vault/db';

const CHUNK = 1_000;
const DAY_MS = 86_400_000;

/**
 * Drops entries older than `days` (0: keep everything) as of `now` (Unix ms); never entries not yet
 * chained (recorded while locked). Needs the key (it rewrites the checkpoint): while locked it drops
 * nothing and returns 0. Returns how many entries were dropped.
 */
export async function pruneAudit(log: AuditLog, days: number, now: number = log.now()): Promise<number> {
  if (!days) return 0;
  const key = await log.key();
  if (!key) return 0;
  const cutoff = now - days * DAY_MS;
  const s = shared(log.db);
  return serial(s, 'walk', async () => {
    let dropped = 0;
    for (let conflicts = 0; conflicts < 8;) {
      const step = await serial(s, 'tail', async () => {
        const c = await prepare(log, key, true);
        if (c.count === 0) return { n: 0, more: false };
        const rows = await readAuditRows(log.db, IDBKeyRange.bound(c.firstId, c.lastId), CHUNK + 1);
        let anchor = c.anchor;
        let n = 0;
        let stopped = false;
        const candidates = rows.slice(0, CHUNK);
        const authentic = await Promise.all(
          candidates.map(async (e) => (e.id >= c.chainFrom && e.at < cutoff ? entryAuthentic(key, e) : true)),
        );
        for (const [i, e] of candidates.entries()) {
          if (e.at >= cutoff) {
            stopped = true;
            break;
          }
          if (e.id >= c.chainFrom) {
            if (e.prev !== anchor || !authentic[i] || e.mac === undefined) {
              stopped = true;
              break;
            }
            anchor = e.mac;
          }
          n++;
        }
        const firstDropped = rows[0]?.id;
        const lastDropped = rows[n - 1]?.id;
        if (!n || firstDropped === undefined || lastDropped === undefined) return { n: 0, more: false };
        const nextKept =
          rows[n]?.id ?? (await log.db.getKey('audit', IDBKeyRange.bound(lastDropped, c.lastId, true, false)));
        const count = c.count - n;
        const { mac: _old, ...rest } = c;
        const next = {
          ...rest,
          count,
          firstId: count === 0 || nextKept === undefined ? c.lastId + 1 : nextKept,
          anchor,
        };
        const ok = await commitPrune(log, key, c, next, firstDropped, lastDropped);
        return { n: ok ? n : 0, more: ok ? !stopped : true, conflict: !ok };
      });
      dropped += step.n;
      if (step.conflict) conflicts++;
      if (!step.more) return dropped;
    }
    return dropped;
  });
}
