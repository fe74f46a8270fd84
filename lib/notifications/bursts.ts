/**
 * Bursts: the fill and cancel notices of one kind that arrive within `BURST_MS` of the first read as one summary
 * (see `rules.ts`); pure, `now` is passed.
 */
import { BURST_LINES, type Notice, type NoticeBurst } from './notice';

/**
 * How long fills, or cancels, of one kind are gathered into one notification, from the first of them
 * (ms): a batch the venue fills or cancels at once arrives within it.
 */
export const BURST_MS = 1_000;
/** Held notices and when their window closes; see `createNoticeBursts`. */
export type NoticeBursts = {
  /** Holds `n` (a notice with a `burst`) from `now` (Unix ms); its key's window opens at its first notice. */
  add: (n: Notice & { burst: NoticeBurst }, now: number) => void;
  /** When the earliest window closes (Unix ms), or `undefined` while nothing is held. */
  dueAt: () => number | undefined;
  /**
   * The notices of every window closed at `now`, oldest window first: a lone notice as it is, two or more as one
   * summary.
   */
  flush: (now: number) => Notice[];
};

/**
 * Gathers fills and cancels into bursts, pure (`now` is passed): the notices of one `burst.key` arriving
 * within `windowMs` (default `BURST_MS`) of the first read as one notice — the first alone reads as it
 * did, two or more as `<count> <many>` with the first lines, "and N more" and the shared note. A lone
 * notice waits for its window too (at most `windowMs`).
 */
export function createNoticeBursts(windowMs = BURST_MS): NoticeBursts {
  const held = new Map<string, { since: number; notices: (Notice & { burst: NoticeBurst })[] }>();
  let seq = 0;
  /** One notice for a closed window: its only notice as it is, else the summary. */
  function summary(notices: (Notice & { burst: NoticeBurst })[]): Notice | undefined {
    const [first] = notices;
    if (!first) return undefined;
    if (notices.length === 1) return { id: first.id, kind: first.kind, title: first.title, message: first.message };
    const b = first.burst;
    const lines = notices.slice(0, BURST_LINES).map((n) => n.burst.line);
    const more = notices.length > BURST_LINES ? `; and ${notices.length - BURST_LINES} more` : '';
    return {
      id: `countersign-${first.kind}-burst-${++seq}-${first.id}`,
      kind: first.kind,
      title: `${notices.length} ${b.many}`,
      message: `${lines.join('; ')}${more}${b.note ? `: ${b.note}` : ''}.`,
    };
  }
  return {
    add(n, now) {
      const g = held.get(n.burst.key);
      if (g) g.notices.push(n);
      else held.set(n.burst.key, { since: now, notices: [n] });
    },
    dueAt() {
      let due: number | undefined;
      for (const g of held.values()) due = Math.min(due ?? Infinity, g.since + windowMs);
      return due;
    },
    flush(now) {
      const out: Notice[] = [];
      for (const [key, g] of [...held].sort((a, b) => a[1].since - b[1].since)) {
        if (g.since + windowMs > now) continue;
        held.delete(key);
        const n = summary(g.notices);
        if (n) out.push(n);
      }
      return out;
    },
  };
}
