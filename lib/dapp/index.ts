/**
 * A typed client for dapps: extends a viem client with Countersign's page methods —
 * `client.extend(countersignActions)` on `createWalletClient({ transport: custom(provider) })` — and maps
 * every error to a typed one (`./errors`). Params are the provider's own schemas' input types
 * (`lib/page/params.ts`, `lib/page/permissions.ts`, `lib/grants/schema.ts`); nothing here
 * validates again (the extension does, at its boundary) and nothing here signs.
 *
 * Every action is sent with `retryCount: 0`: Countersign's answers never use a code viem retries, and a
 * typed action does not rely on that (a retry would be a second submission or a second window).
 *
 * @example
 * const provider = createStore().findProvider({ rdns: 'xyz.countersign' })?.provider; // mipd
 * const client = createWalletClient({ transport: custom(provider) }).extend(countersignActions);
 * const [ack] = await client.perpsSendCommand({ op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.5', p:
 * '3000', tif: 'gtc', po: true, c: coid }] } });
 */
import type * as v from 'valibot';
import type { Client } from 'viem';
import type { clobOrdersParamsSchema, clobSignParamsSchema, perpsParamsSchema } from '../page/params';
import type { GrantLimitsInput } from '../grants/schema';
import type { GrantLimits } from '../grants/evaluate';
import type { PerpsBodyOp } from '../perps/commands';
import type { PerpsCommandAnswer } from '../perps/wire';
import type { L2Headers } from '../clob/auth';
import { GRANT_PERMISSION_TYPE } from '../page/params';
import type { AccountsPermission } from '../page/permissions';
import { toCountersignError } from './errors';

export * from './errors';

/** The ERC-7715 permission type of a standing grant (`countersign-grant`). */
export const COUNTERSIGN_GRANT = GRANT_PERMISSION_TYPE;

/**
 * `perps_sendCommand` params: one seed command (`op`: `{ type, args, grp? }`), optional `exp` (Unix ms), `label` and
 * `idempotencyKey` (a repeat joins the first or gets its unknown outcome).
 */
export type PerpsSendCommandParameters = Omit<v.InferInput<typeof perpsParamsSchema>, 'op'> & { op: PerpsBodyOp };

/** `clob_postOrders` params: 1-15 order requests and an optional `idempotencyKey` (a repeat joins the first). */
export type ClobPostOrdersParameters = v.InferInput<typeof clobOrdersParamsSchema>;

/** One `clob_postOrders` result: the exchange's answer per order (`errorMsg` empty on success). */
export type ClobPostOrderResult = { success: boolean; orderID: string; status?: string; errorMsg: string };

/** `clob_signRequest` params: method, path (with query on GET) and the exact body text. */
export type ClobSignRequestParameters = v.InferInput<typeof clobSignParamsSchema>;

/**
 * `grantPermissions` params: the grant's limits (venue, instruments / markets, caps, band) and its expiry (Unix
 * **seconds**, ≤ 24 h ahead).
 */
export type GrantPermissionsParameters = { limits: GrantLimitsInput; expiry: number };

/**
 * ERC-7715 answer: the grant's expiry (Unix s), the granted permission (its stored limits) and `permissionsContext`
 * (the grant id).
 */
export type GrantPermissionsResult = {
  expiry: number;
  grantedPermissions: { type: typeof COUNTERSIGN_GRANT; data: GrantLimits; policies: [] }[];
  permissionsContext: string;
};

/** The actions `countersignActions` adds to a client. Each rejects with a `CountersignError` subclass. */
export type CountersignActions = {
  /**
   * `perps_sendCommand`: signed and sent by Countersign (approval window, or a standing grant); the gateway's answer.
   */
  perpsSendCommand: (params: PerpsSendCommandParameters) => Promise<PerpsCommandAnswer>;
  /** `clob_postOrders`: order-book orders built, shown, signed and posted by Countersign; one result per order. */
  clobPostOrders: (params: ClobPostOrdersParameters) => Promise<ClobPostOrderResult[]>;
  /** `clob_signRequest`: the five L2 headers for one allowed route (always asks). */
  clobSignRequest: (params: ClobSignRequestParameters) => Promise<L2Headers>;
  /** ERC-7715 `wallet_grantPermissions` with one `countersign-grant` permission (always asks). */
  grantPermissions: (params: GrantPermissionsParameters) => Promise<GrantPermissionsResult>;
  /** EIP-2255 `wallet_getPermissions`: the site's `eth_accounts` permission (empty when not connected or locked). */
  getCountersignPermissions: () => Promise<AccountsPermission[]>;
  /** EIP-2255 `wallet_revokePermissions`: ends the connection and every standing grant of the site. */
  revokeCountersign: () => Promise<void>;
};

/**
 * The typed actions over `client` (use as `client.extend(countersignActions)`). Requests go through
 * `client.request` with `retryCount: 0`; errors are rethrown as `toCountersignError` gives them.
 */
export function countersignActions(client: Pick<Client, 'request'>): CountersignActions {
  async function send<R>(method: string, params: unknown): Promise<R> {
    try {
      return await client.request<{ Parameters: unknown; ReturnType: R }>(
        { method, params },
        { retryCount: 0, dedupe: false },
      );
    } catch (err) {
      throw toCountersignError(err);
    }
  }
  return {
    perpsSendCommand: (params) => send('perps_sendCommand', [params]),
    clobPostOrders: (params) => send('clob_postOrders', [params]),
    clobSignRequest: (params) => send('clob_signRequest', [params]),
    grantPermissions: ({ limits, expiry }) =>
      send('wallet_grantPermissions', [
        { expiry, signer: { type: 'wallet' }, permissions: [{ type: COUNTERSIGN_GRANT, data: limits, policies: [] }] },
      ]),
    getCountersignPermissions: () => send('wallet_getPermissions', []),
    revokeCountersign: async () => {
      await send('wallet_revokePermissions', [{ eth_accounts: {} }]);
    },
  };
}
