/**
 * The invariants of the trade kills (test-only, `trade-kills.ts`), read from the sandbox's own records of
 * what its venues accepted (`ctx.venue.orders`, perps; `ctx.clob.orders`, the order book) and from the
 * relaunched, unlocked extension (`audit.list`, `grant.list`). Each check answers problem strings (empty:
 * it holds). Quantities: perps PX units (8 decimals), order-book sizes and USDC base units (6 decimals).
 */
import { formatUnits, parseUnits } from 'viem';
import { formatUnitsMin2, groupDecimal } from '../../lib/format';
import { NOTIONAL_DIV, type PerpsOrder } from '../../lib/sandbox/perps/model';
import type { ClobOrderRec } from '../../lib/sandbox/clob/venue';
import type { RunningSandbox } from '../../lib/sandbox/server';
import type { Running } from './harness';

/** The orders each venue held for the account at an instant (`at`, Unix ms): perps order ids, order-book order ids. */
export type OrderMark = { at: number; perps: ReadonlySet<number>; clob: ReadonlySet<string> };

/** Orders the venues accepted for the account since a mark, whatever they became (resting, filled, cancelled). */
export type Accepted = { perps: PerpsOrder[]; clob: ClobOrderRec[] };

/** An audit entry as `audit.list` answers it (the fields the checks read). */
type AuditRow = {
  id: number;
  at: number;
  kind: string;
  summary: string;
  digest?: string;
  detail?: string;
  result: string;
  origin: string;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Marks what the sandbox's venues hold for `owner` (lower-case address) now. */
export function markOrders(sandbox: RunningSandbox, owner: string): OrderMark {
  return {
    at: Date.now(),
    perps: new Set([...sandbox.ctx.venue.orders.values()].filter((o) => o.owner === owner).map((o) => o.oid)),
    clob: new Set([...sandbox.ctx.clob.orders.values()].filter((o) => o.address === owner).map((o) => o.id)),
  };
}

/** The orders of `owner` the venues accepted after `mark`. */
export function acceptedSince(sandbox: RunningSandbox, owner: string, mark: OrderMark): Accepted {
  return {
    perps: [...sandbox.ctx.venue.orders.values()].filter((o) => o.owner === owner && !mark.perps.has(o.oid)),
    clob: [...sandbox.ctx.clob.orders.values()].filter((o) => o.address === owner && !mark.clob.has(o.id)),
  };
}

/** How many orders of `owner` rest at each venue now (perps open or untriggered, order book live). */
export function resting(sandbox: RunningSandbox, owner: string): { perps: number; clob: number } {
  return {
    perps: [...sandbox.ctx.venue.orders.values()].filter(
      (o) => o.owner === owner && (o.status === 'open' || o.status === 'untriggered'),
    ).length,
    clob: [...sandbox.ctx.clob.orders.values()].filter((o) => o.address === owner && o.status === 'live').length,
  };
}

/** A perps order as the audit summary words it: side and size as signed ("Buy 0.05 "), then its limit. */
function perpsWords(o: PerpsOrder): { side: string; limit: string } {
  return {
    side: `${o.buy ? 'Buy' : 'Sell'} ${groupDecimal(formatUnits(o.qty, 8))} `,
    limit: o.price === undefined ? 'at market' : `at ${groupDecimal(formatUnits(o.price, 8))}`,
  };
}

/** An order-book order as the audit summary words it: side and shares ("Buy 11.00 shares"). */
function clobWords(o: ClobOrderRec): string {
  return `${o.side === 'BUY' ? 'Buy' : 'Sell'} ${formatUnitsMin2(o.originalSize.toString(), 6)} shares`;
}

/** A name for an accepted order in a problem string. */
export function orderName(o: PerpsOrder | ClobOrderRec): string {
  if ('oid' in o)
    return `perps #${o.oid}${o.coid ? ` (c ${o.coid})` : ''} ${perpsWords(o).side.trim()} ${perpsWords(o).limit}`;
  return `order-book ${o.id.slice(0, 10)}… ${clobWords(o)} at ${formatUnitsMin2(o.price.toString(), 6)}`;
}

/** What makes two orders alike: instrument or token, side, size and limit. */
function alikeKey(o: PerpsOrder | ClobOrderRec): string {
  return 'oid' in o
    ? `perps|${o.iid}|${o.buy}|${o.qty}|${o.price}`
    : `clob|${o.tokenId}|${o.side}|${o.originalSize}|${o.price}`;
}

/**
 * Nothing sent twice: no client order id in more than one accepted perps order, and no two accepted
 * orders alike (instrument or token, side, size and price) — every request of a kill is made distinct by
 * its size, so a second signature of the same request shows here even without a client order id.
 */
export function sentTwice(a: Accepted): string[] {
  const problems: string[] = [];
  const group = <T>(xs: readonly T[], key: (x: T) => string | undefined) => {
    const m = new Map<string, T[]>();
    for (const x of xs) {
      const k = key(x);
      if (k !== undefined) m.set(k, [...(m.get(k) ?? []), x]);
    }
    return [...m].filter(([, v]) => v.length > 1);
  };
  for (const [coid, os] of group(a.perps, (o) => o.coid))
    problems.push(
      `client order id ${coid} is on ${os.length} accepted orders (${os.map((o) => `#${o.oid}`).join(', ')})`,
    );
  for (const [, os] of group(a.perps, (o) => (o.coid ? undefined : alikeKey(o))))
    problems.push(`the same perps order was accepted ${os.length} times: ${os.map(orderName).join('; ')}`);
  for (const [, os] of group(a.clob, alikeKey))
    problems.push(`the same order-book order was accepted ${os.length} times: ${os.map(orderName).join('; ')}`);
  return problems;
}

/**
 * Whether audit entry `e` records order `o`: its client order id anywhere in the entry, or its words in the summary.
 */
function records(e: AuditRow, o: PerpsOrder | ClobOrderRec): boolean {
  const text = `${e.summary} ${e.detail ?? ''} ${e.digest ?? ''}`.toLowerCase();
  if ('oid' in o) {
    if (o.coid && text.includes(o.coid)) return true;
    const w = perpsWords(o);
    return e.kind === 'perps.createOrders' && e.summary.includes(w.side) && e.summary.includes(w.limit);
  }
  return e.kind === 'clob.postOrders' && (e.summary.includes(clobWords(o)) || text.includes(o.id.toLowerCase()));
}

/** The newest audit entries (at most 500) written at or after `since` (Unix ms); throws when the log cannot be read. */
async function auditSince(r: Running, since: number): Promise<AuditRow[]> {
  const reply = await r.call('audit.list', { limit: 500 });
  if (!reply.ok || !Array.isArray(reply.result)) throw new Error(`audit.list: ${reply.error?.name ?? 'no list'}`);
  return (reply.result as AuditRow[]).filter((e) => e.at >= since);
}

/**
 * Nothing unrecorded: every accepted order has its own audit entry with result `ok` or `unknown`, matched
 * by its client order id or by its words (side, size, limit) in the summary, among the entries written
 * since `since` (Unix ms, less 2 s of clock slack). Polls for `waitMs` (ms) — the background may still be
 * reconciling what was in flight when the browser died — and answers one problem per order still missing.
 */
export async function unrecorded(r: Running, a: Accepted, since: number, waitMs: number): Promise<string[]> {
  const orders = [...a.perps, ...a.clob];
  if (!orders.length) return [];
  const until = Date.now() + waitMs;
  for (;;) {
    let missing: (PerpsOrder | ClobOrderRec)[] = [];
    let readError: string | undefined;
    try {
      const entries = (await auditSince(r, since - 2_000)).filter((e) => e.result === 'ok' || e.result === 'unknown');
      const used = new Set<number>();
      for (const o of orders) {
        const e = entries.find((x) => !used.has(x.id) && records(x, o));
        if (e) used.add(e.id);
        else missing.push(o);
      }
    } catch (err) {
      readError = err instanceof Error ? err.message : String(err);
      missing = orders;
    }
    if (!missing.length) return [];
    if (Date.now() >= until) {
      if (readError)
        return [
          `the audit log could not be read after the relaunch ` +
            `(${readError}), ${orders.length} accepted order(s) unchecked`,
        ];
      // Alike orders (a request sent twice) cannot be told apart by their words: the one named may be its twin.
      const alike = (o: PerpsOrder | ClobOrderRec) => orders.filter((x) => alikeKey(x) === alikeKey(o)).length;
      return missing.map(
        (o) =>
          `${alike(o) > 1 ? `one of ${alike(o)} alike orders, ` : ''}${orderName(o)}, was accepted by ` +
          `the venue but has no audit entry (ok or unknown) ${Math.round(waitMs / 1000)} s after unlock`,
      );
    }
    await sleep(250);
  }
}

/** Grants end with the browser: no grant `grant.list` shows is live (expiry ahead) after the relaunch and unlock. */
export async function liveGrants(r: Running): Promise<string[]> {
  const reply = await r.call('grant.list');
  if (!reply.ok || !Array.isArray(reply.result))
    return [`grant.list after the relaunch: ${reply.error?.name ?? 'no list'}`];
  const now = Date.now();
  return (reply.result as { id: string; origin: string; expiresAt: number }[])
    .filter((g) => g.expiresAt > now)
    .map(
      (g) => `grant ${g.id} of ${g.origin} is live after the relaunch (until ${new Date(g.expiresAt).toISOString()})`,
    );
}

/**
 * A grant never let the site exceed its cap: the notional of the accepted perps orders carrying one of
 * `coids` (those sent under the grant), each at the higher of its limit and the instrument's mark as the
 * grant counts it, is at most `dailyCap` (USDC decimal string).
 */
export function overCap(sandbox: RunningSandbox, a: Accepted, coids: ReadonlySet<string>, dailyCap: string): string[] {
  const under = a.perps.filter((o) => o.coid !== undefined && coids.has(o.coid));
  let total = 0n;
  for (const o of under) {
    const mark = sandbox.ctx.venue.instruments.get(o.iid)?.mark ?? 0n;
    const price = o.price === undefined || o.price < mark ? mark : o.price;
    total += (o.qty * price) / NOTIONAL_DIV;
  }
  const cap = parseUnits(dailyCap, 6);
  return total > cap
    ? [
        `${under.length} orders under the grant came to ` +
          `${formatUnits(total, 6)} USDC, above its 24 h cap of ${dailyCap} USDC`,
      ]
    : [];
}
