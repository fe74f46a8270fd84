/**
 * The orders a grant owns: the venue's order ids and client order ids recorded on its uses (a granted cancel may
 * reach them, and nothing else), at most `MAX_OWNED_ORDERS` of them, the newest kept. Pure: each function returns
 * the uses it changes; `GrantService` (`./service.ts`) puts them in memory and writes them to the vault.
 */
import { MAX_OWNED_ORDERS, type GrantUse, type OwnedOrder } from './evaluate';

/**
 * The uses a record of `orders` on use `target` changes: `target` with `orders` appended and, past
 * `MAX_OWNED_ORDERS` orders owned across `owning` (the grant's uses that own orders, in time order) and
 * `target`, the oldest orders dropped first (a use left with none loses its `orders`). One entry per changed use.
 */
export function recordOwnedOrders(
  owning: readonly GrantUse[],
  target: GrantUse,
  orders: readonly OwnedOrder[],
): GrantUse[] {
  const updated: GrantUse = {
    ...target,
    orders: [...(target.orders ?? []), ...orders.map((o) => ({ oid: o.oid, ...(o.coid ? { coid: o.coid } : {}) }))],
  };
  // Keep the newest MAX_OWNED_ORDERS: drop the oldest orders first (uses are in time order).
  const sorted = [...owning.filter((u) => u !== target), updated].sort(
    (a, b) => a.at - b.at || (a.seq ?? 0) - (b.seq ?? 0),
  );
  const changed = new Map<number | undefined, GrantUse>([[updated.seq, updated]]);
  let excess = sorted.reduce((a, u) => a + (u.orders?.length ?? 0), 0) - MAX_OWNED_ORDERS;
  for (const u of sorted) {
    if (excess <= 0) break;
    const drop = Math.min(excess, u.orders?.length ?? 0);
    excess -= drop;
    const rest = (u.orders ?? []).slice(drop);
    const { orders: _dropped, ...bare } = u;
    changed.set(u.seq, rest.length ? { ...bare, orders: rest } : bare);
  }
  return [...changed.values()];
}

/**
 * The uses of `uses` that own an order carrying one of the client order ids `coids`, with those client order ids
 * forgotten (their order ids stay owned).
 */
export function forgetOwnedCoids(uses: readonly GrantUse[], coids: readonly string[]): GrantUse[] {
  return uses
    .filter((u) => u.orders?.some((o) => o.coid && coids.includes(o.coid)))
    .map((u) => ({
      ...u,
      orders: (u.orders ?? []).map((o) => (o.coid && coids.includes(o.coid) ? { oid: o.oid } : o)),
    }));
}
