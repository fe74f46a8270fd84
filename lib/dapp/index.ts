/**
 * `@countersign/site-client`: the typed client for sites. Discovery (`discoverCountersign`, EIP-6963), the
 * viem actions of Countersign's own methods (`client.extend(countersignActions)` on
 * `createWalletClient({ transport: custom(provider) })`; viem's own actions cover the standard ones, such as
 * `requestAddresses` for `eth_requestAccounts`), the version check (`requireCountersign`), typed
 * errors (`./errors`) and the idempotency helpers. Params and answers are the package's own copies of the
 * extension's types (`./types`, held equal by `contract.test.ts`); nothing here validates again (the
 * extension does, at its boundary), nothing here signs, and nothing imports the extension's code.
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
import type { Client } from 'viem';
import {
  COUNTERSIGN_GRANT,
  type AccountsPermission,
  type ClobPostOrderResult,
  type ClobPostOrdersParameters,
  type ClobSignRequestParameters,
  type CountersignCapabilities,
  type GrantPermissionsParameters,
  type GrantPermissionsResult,
  type L2Headers,
  type PerpsCommandAnswer,
  type PerpsSendCommandParameters,
  type PerpsSignCommandParameters,
  type PerpsSignedEnvelope,
} from './types.js';
import { toCountersignError } from './errors.js';

export * from './errors.js';
export * from './types.js';
export { discoverCountersign, COUNTERSIGN_RDNS, type Eip1193Provider, type DiscoverOptions } from './discover.js';
export { CAPABILITIES_METHOD, getCountersignCapabilities, requireCountersign } from './capabilities.js';
export { newClientOrderId, newIdempotencyKey } from './idempotency.js';

/** The actions `countersignActions` adds to a client. Each rejects with a `CountersignError` subclass. */
export type CountersignActions = {
  /**
   * `perps_sendCommand`: signed and sent by Countersign (approval window, or a standing grant); the gateway's answer.
   */
  perpsSendCommand: (params: PerpsSendCommandParameters) => Promise<PerpsCommandAnswer>;
  /**
   * `perps_signCommand`: signed by Countersign after its window and handed back unsent; the site sends the envelope
   * itself (it is the signature's only copy).
   */
  perpsSignCommand: (params: PerpsSignCommandParameters) => Promise<PerpsSignedEnvelope>;
  /** `wallet_connect`: the connected account, after one window (as viem's `requestAddresses`, one element). */
  connect: () => Promise<`0x${string}`[]>;
  /** `clob_postOrders`: order-book orders built, shown, signed and posted by Countersign; one result per order. */
  clobPostOrders: (params: ClobPostOrdersParameters) => Promise<ClobPostOrderResult[]>;
  /** `clob_signRequest`: the five L2 headers for one allowed route (always asks). */
  clobSignRequest: (params: ClobSignRequestParameters) => Promise<L2Headers>;
  /** ERC-7715 `wallet_grantPermissions` with one `countersign-grant` permission (always asks). */
  grantPermissions: (params: GrantPermissionsParameters) => Promise<GrantPermissionsResult>;
  /** EIP-2255 `wallet_getPermissions`: the site's `eth_accounts` permission (empty when not connected or locked). */
  getCountersignPermissions: () => Promise<AccountsPermission[]>;
  /**
   * `countersign_getCapabilities`: the extension's version and the methods it serves (4200, `UnsupportedError`, from
   * an extension older than the method; `requireCountersign` says that in words).
   */
  getCapabilities: () => Promise<CountersignCapabilities>;
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
    perpsSignCommand: (params) => send('perps_signCommand', [params]),
    connect: () => send('wallet_connect', []),
    clobPostOrders: (params) => send('clob_postOrders', [params]),
    clobSignRequest: (params) => send('clob_signRequest', [params]),
    grantPermissions: ({ limits, expiry }) =>
      send('wallet_grantPermissions', [
        { expiry, signer: { type: 'wallet' }, permissions: [{ type: COUNTERSIGN_GRANT, data: limits, policies: [] }] },
      ]),
    getCountersignPermissions: () => send('wallet_getPermissions', []),
    getCapabilities: () => send('countersign_getCapabilities', []),
    revokeCountersign: async () => {
      await send('wallet_revokePermissions', [{ eth_accounts: {} }]);
    },
  };
}
