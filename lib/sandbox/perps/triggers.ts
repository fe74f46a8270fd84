/**
 * The sandbox perps venue's trigger orders (TP / SL) when the mark moves: a waiting trigger is armed while its account
 * holds a position the order reduces, and fires as a reduce-only order once the mark crosses its trigger price; a
 * position leg that closed the position ends the other legs. The engine (`./engine.ts`) runs them after every mark
 * change, before it liquidates. Quantities PX units, times Unix ms.
 */
import { abs, minB } from '../../decimal';
import type { Account, Instrument, PerpsOrder, PerpsVenueEvent } from './model';
import { triggerCrossed } from './risk';

/**
 * The part of the venue (`PerpsVenue`, `./engine.ts`) the triggers read and change: its orders and instruments, an
 * owner's account (`findAccount`, undefined when none), the clock `now` (Unix ms), `emit` (one venue event) and
 * `cancel` (one open or untriggered order of an account, with its reason; false when it is not there).
 */
export type TriggerVenue = {
  readonly orders: Map<number, PerpsOrder>;
  readonly instruments: Map<number, Instrument>;
  findAccount(owner: string): Account | undefined;
  now(): number;
  emit(e: PerpsVenueEvent): void;
  cancel(a: Account, o: PerpsOrder | undefined, reason?: string): boolean;
};

/**
 * A waiting TP / SL is `armed` (with `armedQty`) while its account holds a position the order reduces,
 * `untriggered` otherwise; a change (armed, disarmed, another armed size) is an `order` event.
 */
export function armTriggers(v: TriggerVenue): void {
  for (const o of v.orders.values()) {
    if (!o.trigger || o.status !== 'untriggered') continue;
    const pos = v.findAccount(o.owner)?.positions.get(o.iid)?.size ?? 0n;
    const reduces = o.buy ? pos < 0n : pos > 0n;
    const armedQty = !reduces ? undefined : o.trigger.scope === 'position' ? abs(pos) : minB(o.qty, abs(pos));
    if (armedQty === o.trigger.armedQty) continue;
    o.trigger.armedQty = armedQty;
    o.updated = v.now();
    v.emit({ kind: 'order', order: o });
  }
}

/**
 * Fires every armed trigger whose price the mark crossed: it executes as a reduce-only order (market, or its limit)
 * through `execute` (the engine's matching of one order of an account). Returns whether any fired.
 */
export function fireTriggers(v: TriggerVenue, execute: (a: Account, o: PerpsOrder) => void): boolean {
  let any = false;
  for (const o of [...v.orders.values()]) {
    if (!o.trigger || o.status !== 'untriggered' || !o.trigger.armedQty) continue;
    const inst = v.instruments.get(o.iid);
    if (!inst || !triggerCrossed(o, inst.mark)) continue;
    const a = v.findAccount(o.owner);
    if (!a) continue;
    o.trigger.fired = true;
    o.ro = true;
    o.tif = 'ioc';
    if (o.trigger.market) delete o.price;
    if (o.trigger.scope === 'position') o.qty = o.trigger.armedQty; // the whole position as it is now
    o.status = 'open';
    execute(a, o);
    v.emit({ kind: 'order', order: o });
    if (o.trigger.scope === 'position' && !a.positions.get(o.iid)?.size) endPositionLegs(v, a, o.iid);
    any = true;
  }
  return any;
}

/**
 * Once a leg protecting the whole position fired and the position is gone, the other waiting position
 * legs of `a` on `iid` end with `position_closed` (the venue's status for a TP / SL whose position is
 * gone); a fired leg that closed only part of it (the book was thin) leaves them protecting the rest.
 * Order-scoped triggers stay, disarmed while there is no position.
 */
function endPositionLegs(v: TriggerVenue, a: Account, iid: number): void {
  for (const x of [...v.orders.values()]) {
    if (x.iid === iid && x.status === 'untriggered' && x.trigger?.scope === 'position')
      v.cancel(a, x, 'position_closed');
  }
}
