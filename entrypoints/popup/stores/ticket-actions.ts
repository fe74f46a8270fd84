/**
 * The perps ticket's actions: editing helpers (side, presets, tick steps, clear), then placing an order
 * and following it until the venue settles it, cancelling, closing the position and setting leverage.
 * The click is the consent: each action signs and sends through `PerpsTicketDeps`.
 */
import {
  cancelAll,
  cancelOrders,
  cancelOrdersCOID,
  createOrders,
  updateLeverage,
  type PerpsCommand,
} from '../../../lib/perps/commands';
import { DEFAULT_SLIPPAGE_BPS } from '../../../lib/perps/risk';
import { messageOf } from '../api';
import type { PerpsStore } from './perps';
import { newCoid, describeStatus, stepPrice } from './ticket-values';
import type { TicketForm, TicketOrder, TicketClose } from './ticket-order';

/** What the ticket needs besides the perps store. */
export type PerpsTicketDeps = {
  store: PerpsStore;
  /** Signs and sends a command (the click is the consent); resolves to the venue's answer. */
  send: (cmd: PerpsCommand) => Promise<unknown>;
  /** Places an order and resolves to its acknowledgements (`perps.send` with a `createOrders` body). */
  place: (cmd: PerpsCommand) => Promise<{ oid: number }[]>;
  /** The position-size warning threshold (Settings, USDC notional). */
  maxPositionUsdc: () => number;
  /** Waits between two reads of the placed order (ms); tests pass 0. */
  pollMs?: number;
  /** Source of client order ids (default `newCoid`). */
  coid?: () => string;
  /** The protected market orders' slippage cap from Settings, basis points (default `DEFAULT_SLIPPAGE_BPS`). */
  slippageBps?: () => number;
};

/** The ticket's actions: editing helpers, then placing, following and cancelling orders at the venue. */
export function ticketActions(
  { store, send, place, pollMs = 300, coid: makeCoid = newCoid }: PerpsTicketDeps,
  f: TicketForm,
  o: TicketOrder,
  close: TicketClose,
) {
  const { qty, unit, price, priceTouched, po, ro, coid, lev, cross, error, result, busy } = f;
  const { best, tick, built } = o;
  /** Follows the book's best level while the person has not typed a price. */
  function prefill(): void {
    if (!priceTouched.value && best.value) price.value = best.value;
  }
  /** The person typed or picked a price: it no longer follows the book. */
  function setPrice(p: string): void {
    priceTouched.value = true;
    price.value = p;
  }
  /** Moves the price by `steps` ticks from the typed price (else the best level). */
  function step(steps: number): void {
    setPrice(stepPrice(price.value || best.value || '0', tick.value, steps));
  }
  /**
   * Sets the size to `fraction` of what the free margin allows, in contracts, under the venue's rule for
   * the order kind: a limit at its price, a market order at its protected limit (the worst price it may
   * reach), at the venue's leverage — so a preset is never refused for margin.
   */
  function preset(fraction: string): void {
    // A market order's limit depends on the book only (not the size), so the size does not move it.
    const size = o.sizeFor(fraction);
    if (size === undefined) return;
    unit.value = 'contracts';
    qty.value = size;
  }
  /** Switches the size unit (contracts ⇄ USDC) and clears the size. */
  function toggleUnit(): void {
    unit.value = unit.value === 'usdc' ? 'contracts' : 'usdc';
    qty.value = '';
  }
  /** Esc: empties the size, returns the price to the book, clears the notices and the flags. */
  function clear(): void {
    qty.value = '';
    priceTouched.value = false;
    price.value = best.value ?? '';
    error.value = undefined;
    result.value = undefined;
    po.value = false;
    ro.value = false;
    f.tp.value = '';
    f.sl.value = '';
    f.closeArmed.value = false;
  }
  /**
   * Another instrument was chosen: the price follows its book again; its leverage is read anew; notices, TP / SL prices
   * (the old instrument's) and a pending close go.
   */
  function instrumentChanged(): void {
    priceTouched.value = false;
    f.tp.value = '';
    f.sl.value = '';
    f.venueLev.value = undefined;
    f.closeArmed.value = false;
    result.value = undefined;
    error.value = undefined;
  }
  /** Reads the account's leverage and margin mode for the instrument shown. */
  async function loadConfig(): Promise<void> {
    const iid = store.iid.value;
    if (iid === undefined) return;
    const c = await store.read('config', { instrument_id: iid });
    if (c[0] && store.iid.value === iid) {
      lev.value = String(c[0].leverage);
      cross.value = c[0].cross;
      f.venueLev.value = c[0].leverage;
      f.venueCross.value = c[0].cross;
    }
  }

  /** Places the built order, then reads it until the venue settles it (at most 20 reads). */
  async function submit(): Promise<void> {
    const cmd = built.value.cmd;
    if (!cmd || !o.canSubmit.value) return;
    busy.value = true;
    error.value = undefined;
    result.value = undefined;
    try {
      const [ack] = await place(cmd);
      if (!ack) throw new Error('no acknowledgement');
      result.value = `Acknowledged: order #${ack.oid}`;
      for (let i = 0; i < 20; i++) {
        // While the stream is live its order event settles this without a read.
        const pushed = await store.orderPushed(ack.oid, pollMs);
        const [o] = pushed ? [pushed] : await store.read('orders', { order_id: ack.oid });
        if (o && o.status !== 'accepted' && o.status !== 'untriggered' && o.status !== 'armed') {
          result.value = `Order #${ack.oid}: ${describeStatus(o)}`;
          break;
        }
        await new Promise((res) => setTimeout(res, pollMs));
      }
      coid.value = makeCoid();
      qty.value = '';
      // The TP / SL went with the order: the next order starts without them.
      f.tp.value = '';
      f.sl.value = '';
      await store.refresh();
    } catch (err) {
      error.value = messageOf(err);
    } finally {
      busy.value = false;
    }
  }

  /** Sends `cmd`; on success shows `done` and refreshes the store, else shows the error. */
  async function act(cmd: PerpsCommand, done: string): Promise<void> {
    error.value = undefined;
    try {
      await send(cmd);
      result.value = done;
      await store.refresh();
    } catch (err) {
      error.value = messageOf(err);
    }
  }
  /**
   * "Close position": the first call shows the preview (`closePreview`: size,
   * estimated price, fee, realised PnL); the second (a second click or Enter) sends a reduce-only IOC
   * limit at the best level ± the slippage cap for the whole position.
   */
  function closePosition(): Promise<void> {
    const c = close.closeOrder.value;
    if (!c) return Promise.resolve();
    if (!f.closeArmed.value) {
      f.closeArmed.value = true;
      return Promise.resolve();
    }
    f.closeArmed.value = false;
    return act(c.cmd, `Close order sent for ${c.size} ${o.label.value}`);
  }
  /** Withdraws a shown close preview without sending anything. */
  function cancelClose(): void {
    f.closeArmed.value = false;
  }
  /** Sets the typed leverage and margin mode for the instrument shown; the preview then uses the venue's new value. */
  async function applyLeverage(): Promise<void> {
    const iid = store.iid.value;
    if (iid === undefined) return;
    await act(updateLeverage({ iid, lev: Number(lev.value), cross: cross.value }), `Leverage set to ${lev.value}×`);
    if (!error.value) await loadConfig().catch(() => undefined);
  }
  /** Cancels one open order by venue id. */
  const cancel = (oid: number) => act(cancelOrders({ oids: [oid] }), `Order #${oid} cancelled`);
  /** Cancels one open order by client order id. */
  const cancelByCoid = (c: string) => act(cancelOrdersCOID({ coids: [c] }), `Order ${c.slice(0, 8)}… cancelled`);
  /** Cancels every open order. */
  const cancelEverything = () => act(cancelAll({}), 'All orders cancelled');

  return {
    prefill,
    setPrice,
    step,
    preset,
    toggleUnit,
    clear,
    instrumentChanged,
    loadConfig,
    submit,
    act,
    closePosition,
    cancelClose,
    applyLeverage,
    cancel,
    cancelByCoid,
    cancelEverything,
  };
}
