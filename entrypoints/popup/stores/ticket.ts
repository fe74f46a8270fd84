/**
 * The perps order ticket's state: what the person is typing (side, size and its unit,
 * price, time in force, post-only, reduce-only, leverage) and what follows from it over the perps
 * store's reads (the command that would be signed, the risk preview, the warnings, the 24 h change and
 * the spread). Actions place the order and follow it until the venue settles it, cancel, close and set
 * leverage. Plain signals: the `PerpsTicket` screen renders them, tests drive them with a fake store.
 *
 * The plain values are in `./ticket-values.ts`, the form and its derived order in `./ticket-order.ts`,
 * the actions in `./ticket-actions.ts`; this module puts them together and is the one to import.
 */
import { DEFAULT_SLIPPAGE_BPS } from '../../../lib/perps/risk';
import { PRESETS, newCoid } from './ticket-values';
import { ticketForm, ticketOrder, ticketClose } from './ticket-order';
import { ticketActions, type PerpsTicketDeps } from './ticket-actions';

export * from './ticket-values';
export type { PerpsTicketDeps } from './ticket-actions';

/** The ticket: signals, derived values and actions. */
export type PerpsTicketState = ReturnType<typeof createPerpsTicket>;

/**
 * Creates the ticket over the perps store. The price follows the book's best level on the chosen side
 * (`prefill`) until the person types or picks one; an empty price sends a market-style IOC order.
 */
export function createPerpsTicket(deps: PerpsTicketDeps) {
  const form = ticketForm(deps.coid ?? newCoid);
  const order = ticketOrder(deps.store, form, deps.maxPositionUsdc, deps.slippageBps ?? (() => DEFAULT_SLIPPAGE_BPS));
  const close = ticketClose(deps.store, form, order);
  return { ...form, ...order, ...close, ...ticketActions(deps, form, order, close) };
}

/** What a key press does in the ticket. */
export type TicketKeyAction =
  | { kind: 'clear' }
  | { kind: 'step'; steps: 1 | -1 }
  | { kind: 'submit' }
  | { kind: 'side'; buy: boolean }
  | { kind: 'preset'; fraction: string };

/**
 * The ticket's keyboard map: Esc clears; ↑ / ↓ move the price one tick (outside text fields, or in the
 * price field); Enter submits outside text fields; B / S pick the side and 1-4 the presets outside
 * text fields and without Ctrl / Meta / Alt. `typing`: the key went to an input, select or textarea.
 */
export function ticketKey(
  e: { key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean },
  typing: boolean,
  inPriceField: boolean,
): TicketKeyAction | undefined {
  if (e.key === 'Escape') return { kind: 'clear' };
  if ((e.key === 'ArrowUp' || e.key === 'ArrowDown') && (!typing || inPriceField))
    return { kind: 'step', steps: e.key === 'ArrowUp' ? 1 : -1 };
  if (e.key === 'Enter' && !typing) return { kind: 'submit' };
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return undefined;
  const k = e.key.toLowerCase();
  if (k === 'b' || k === 's') return { kind: 'side', buy: k === 'b' };
  const fraction = PRESETS[['1', '2', '3', '4'].indexOf(k)];
  return fraction ? { kind: 'preset', fraction } : undefined;
}
