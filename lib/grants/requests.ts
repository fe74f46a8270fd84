/**
 * Page requests as the grant evaluator sees them. Deny by default: a
 * page method or perps command kind is coverable only when it is named here; everything else maps to
 * `{ kind: 'never' }` and always opens a window.
 *
 * - Page methods: `perps_sendCommand` and `clob_postOrders` only (`GRANTABLE_PAGE_METHODS`).
 *   `perps_signCommand` (the site would get a signed command to submit whenever it likes) and
 *   `clob_signRequest` (L2 headers for any route, including cancel-all) always ask.
 * - Perps commands: `createOrders`, `cancelOrders`, `cancelOrdersCOID` and cross-margin
 *   `updateLeverage` (`GRANTABLE_PERPS_COMMANDS`). A cancel is covered only for orders placed under the
 *   grant (see `evaluateGrant`). `cancelAll` (it would reach the person's own orders), `autoCancel`
 *   (the dead-man timer owns it: `time: 0` disarms it), isolated margin (`updateMargin`,
 *   `updateLeverage` with `cross: false`), withdrawals, transfers and proxy keys never are.
 * - Order-book orders are judged from the built artifact (the signed amounts), not from the page's
 *   numbers: the price is the one signed (rounded to the tick) and a market-style BUY's `size` (which
 *   is USDC, not shares) cannot be mistaken for shares.
 */
import type { PerpsCommand, PerpsCommandType, PerpsOrderInput } from '../perps/commands';
import type { ClobArtifact } from '../signer/artifact';
import { fromUnits } from '../decimal';
import type { GrantOrder, GrantRequest } from './evaluate';

/** The page methods a grant can ever cover (`lib/page/policy.ts` checks that each is a page method). */
export const GRANTABLE_PAGE_METHODS = ['perps_sendCommand', 'clob_postOrders'] as const;

/** The perps command kinds a grant can ever cover (through `perps_sendCommand`). */
export const GRANTABLE_PERPS_COMMANDS = [
  'createOrders',
  'cancelOrders',
  'cancelOrdersCOID',
  'updateLeverage',
] as const satisfies readonly PerpsCommandType[];

/** Why each other command kind always asks, as the window's flag begins ("… always needs your approval"). */
const NEVER: Partial<Record<PerpsCommandType, string>> = {
  withdraw: 'A withdrawal',
  internalTransfer: 'A transfer',
  createProxy: 'Managing proxy keys',
  deleteProxy: 'Managing proxy keys',
  cancelAll: 'Cancelling all orders (it can reach orders this site did not place)',
  autoCancel: 'Changing the auto-cancel (dead-man) timer',
  updateMargin: 'Changing isolated margin',
};

/** Whether a page method can ever be covered by a grant. */
export const isGrantableMethod = (m: string): boolean => GRANTABLE_PAGE_METHODS.some((x) => x === m);

/**
 * The perps command `cmd` (as it will be signed: its JSON body) as a grant request. Never throws on a built command.
 */
export function perpsGrantRequest(cmd: Pick<PerpsCommand, 'type' | 'body'>): GrantRequest {
  switch (cmd.type) {
    case 'createOrders':
      // A leg protecting the whole position closes whatever the position holds when it fires, a size no grant
      // bounds (a site could grow the position first): no grant covers it, the person approves each one.
      if (cmd.body.type === 'createOrders' && cmd.body.grp === 'position')
        return { kind: 'never', what: 'Take-profit / stop-loss on a whole position' };
      return { kind: 'order', venue: 'perps', orders: (cmd.body.args as PerpsOrderInput[]).map(perpsOrder) };
    case 'cancelOrders':
      return { kind: 'cancel', venue: 'perps', oids: [...(cmd.body.args as number[])], coids: [] };
    case 'cancelOrdersCOID':
      return { kind: 'cancel', venue: 'perps', oids: [], coids: [...(cmd.body.args as string[])] };
    case 'updateLeverage': {
      const a = cmd.body.args as { iid: number; lev: number; cross: boolean };
      if (a.cross !== true) return { kind: 'never', what: 'Switching to isolated margin' };
      return { kind: 'leverage', venue: 'perps', market: String(a.iid), leverage: a.lev };
    }
    // Never grantable; the default also takes a type the union does not know (a grant never covers the unknown).
    case 'autoCancel':
    case 'cancelAll':
    case 'createProxy':
    case 'deleteProxy':
    case 'internalTransfer':
    case 'updateMargin':
    case 'withdraw':
    default:
      return { kind: 'never', what: NEVER[cmd.type] ?? `The command ${String(cmd.type).slice(0, 32)}` };
  }
}

function perpsOrder(o: PerpsOrderInput): GrantOrder {
  return {
    market: String(o.iid),
    buy: o.buy,
    size: o.qty,
    ...(o.p === undefined ? {} : { price: o.p }),
    ...(o.tr ? { trigger: { price: o.tr.trp, market: o.tr.market === true } } : {}),
    ...(o.po ? { postOnly: true } : {}),
    ...(o.ro ? { reduceOnly: true } : {}),
  };
}

/** Base units (6 decimals) of a ratio `num / den` as a decimal with 18 places, rounded up or down. */
function ratio(num: bigint, den: bigint, up: boolean): string {
  const scale = 10n ** 18n;
  const q = (num * scale) / den;
  return fromUnits(up && (num * scale) % den !== 0n ? q + 1n : q, 18);
}

/**
 * The order-book orders of `artifact` (what will be signed) as a grant request: shares, the signed
 * price (USDC per share; a buy's rounded up, a sell's down) and the USDC amount committed (`quote`).
 */
export function clobGrantRequest(artifact: Pick<ClobArtifact, 'orders'>): GrantRequest {
  return {
    kind: 'order',
    venue: 'clob',
    orders: artifact.orders.map(({ body }) => {
      const buy = body.order.side === 'BUY';
      const shares = BigInt(buy ? body.order.takerAmount : body.order.makerAmount);
      const usdc = BigInt(buy ? body.order.makerAmount : body.order.takerAmount);
      return {
        market: body.order.tokenId,
        buy,
        size: fromUnits(shares, 6),
        ...(shares > 0n ? { price: ratio(usdc, shares, buy) } : {}),
        quote: fromUnits(usdc, 6),
        ...(body.postOnly ? { postOnly: true } : {}),
      };
    }),
  };
}

/** Whether a window for `req` may offer a grant (orders and leverage changes; never cancels or `never`). */
export const canOfferGrant = (req: GrantRequest): boolean => req.kind === 'order' || req.kind === 'leverage';

/** The instruments / markets a request names (to scope a grant offered from its window). */
export function requestMarkets(req: GrantRequest): string[] {
  if (req.kind === 'order') return [...new Set(req.orders.map((o) => o.market))];
  if (req.kind === 'leverage') return [req.market];
  return [];
}
