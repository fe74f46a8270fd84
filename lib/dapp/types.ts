/**
 * The request and answer shapes of Countersign's page methods as a site sends and receives them. The
 * package carries its own copy (it imports nothing of the extension); `contract.test.ts` holds each one
 * equal to the extension's own type, so the two cannot drift apart.
 */

/** A perps trigger (take-profit / stop-loss) on an order: `trp` the decimal trigger price. */
export type PerpsTriggerInput = { tpsl: 'tp' | 'sl'; trp: string; market?: boolean };

/**
 * One perps order: `iid` instrument id; `buy` side; `qty` decimal quantity; `p` decimal price (absent for
 * market-style ioc / fok); `tif` `gtc` / `ioc` / `fok`; `po` post-only; `ro` reduce-only; `c` a client
 * order id (32 lowercase hex characters, `newClientOrderId`); `tr` a trigger.
 */
export type PerpsOrderInput = {
  iid: number;
  buy: boolean;
  qty: string;
  p?: string;
  tif?: 'gtc' | 'ioc' | 'fok';
  po?: boolean;
  ro?: boolean;
  c?: string;
  tr?: PerpsTriggerInput;
};

/**
 * A perps gateway command `{ type, args, grp? }`. Decimals are strings; `time` / `expiry` Unix ms; withdraw
 * `amount` integer base units, internalTransfer `amount` decimal USDC. `createProxy` is refused to sites.
 */
export type PerpsBodyOp =
  | { type: 'createOrders'; args: PerpsOrderInput[]; grp?: 'order' | 'position' }
  | { type: 'cancelOrders'; args: number[] }
  | { type: 'cancelOrdersCOID'; args: string[] }
  | { type: 'updateLeverage'; args: { iid: number; lev: number; cross: boolean } }
  | { type: 'internalTransfer'; args: { account: string; token: string; amount: string; to: string } }
  | { type: 'deleteProxy'; args: { proxy: string } }
  | { type: 'withdraw'; args: { account: string; token: string; amount: string; to: string } }
  | { type: 'createProxy'; args: { owner: string; proxy: string; expiry: number } }
  | { type: 'cancelAll'; args: { iid?: number } }
  | { type: 'autoCancel'; args: { time: number } }
  | { type: 'updateMargin'; args: { iid: number; amt: string } };

/**
 * The perps gateway's answer to a command: one acknowledgement per order for `createOrders` (`oid`, and
 * `coid` when the order carried one), else `{ status, withdraw_id?, transfer_id?, leverage? }`.
 */
export type PerpsCommandAnswer =
  | { status?: string | undefined; oid?: number | undefined; coid?: string | undefined }[]
  | {
      status?: string | undefined;
      withdraw_id?: number | undefined;
      transfer_id?: number | undefined;
      leverage?: number | undefined;
    };

/**
 * One order-book order request: `tokenId` (decimal uint256), `side`, decimal `price` and `size`, `orderType`,
 * optional `postOnly` and `expiration` (Unix s, GTD).
 */
export type ClobOrderRequest = {
  tokenId: string;
  side: 'BUY' | 'SELL';
  price: string;
  size: string;
  orderType: 'GTC' | 'GTD' | 'FOK' | 'FAK';
  postOnly?: boolean | undefined;
  expiration?: number | undefined;
};

/** The five L2 headers `clob_signRequest` answers (the venue's `POLY_*` names under a venue preset). */
export type L2Headers = {
  SVC_ADDRESS: `0x${string}`;
  SVC_SIGNATURE: string;
  SVC_TIMESTAMP: string;
  SVC_API_KEY: string;
  SVC_PASSPHRASE: string;
};

/** What every grant limits: amounts are USDC decimal strings, percentages decimal strings. */
type CommonLimitsInput = {
  /** Maximum notional per order (USDC). */
  maxNotional: string;
  /** Maximum notional over any rolling 24 h (USDC). */
  dailyNotional: string;
  /** Limit and trigger prices must lie within this percentage of the reference price. */
  priceBandPct: string;
  /** Maximum size per order (contracts or shares). */
  maxSize?: string | undefined;
  /** Every order must be post-only. */
  postOnly?: boolean | undefined;
  /** Maximum requests per rolling minute (1-10000). */
  ratePerMinute?: number | undefined;
};

/**
 * A standing grant's limits as a site asks for them (`wallet_grantPermissions` `data`): one venue, its
 * instruments (perps ids) or markets (order-book token ids), what it allows, the caps and the band.
 */
export type GrantLimitsInput =
  | (CommonLimitsInput & {
      venue: 'perps';
      instruments: number[];
      allow: { order: boolean; cancel?: boolean; leverage?: boolean; market?: boolean; triggers?: boolean };
      /** Slippage allowance (percent) at which market and trigger orders are counted (default 1). */
      slippagePct?: string | undefined;
      /** Maximum leverage an updateLeverage may set (required when `allow.leverage`). */
      maxLeverage?: number | undefined;
      /** Every order must be reduce-only. */
      reduceOnly?: boolean | undefined;
    })
  | (CommonLimitsInput & {
      venue: 'clob';
      markets: string[];
      allow: { order: boolean; cancel?: false; leverage?: false; market?: false; triggers?: false };
    });

/** A grant's limits as Countersign stored them (what the answer carries): the perps slippage allowance is set. */
export type GrantLimits =
  | (Omit<Extract<GrantLimitsInput, { venue: 'perps' }>, 'slippagePct'> & { slippagePct: string })
  | (Omit<Extract<GrantLimitsInput, { venue: 'clob' }>, 'allow'> & {
      allow: { order: boolean; cancel?: boolean; leverage?: boolean; market?: boolean; triggers?: boolean };
    });

/** The EIP-2255 permission a connected site holds (`wallet_getPermissions`). */
export type AccountsPermission = {
  invoker: string;
  parentCapability: 'eth_accounts';
  caveats: [{ type: 'restrictReturnedAccounts'; value: string[] }];
  date: number;
};

/** The capability answer (`countersign_getCapabilities`): the extension's version and the page methods it serves. */
export type CountersignCapabilities = { version: string; methods: string[] };

/** The ERC-7715 permission type of a standing grant (`countersign-grant`). */
export const COUNTERSIGN_GRANT = 'countersign-grant';

/**
 * `perps_sendCommand` params: one gateway command (`op`: `{ type, args, grp? }`), optional `exp` (Unix ms), `label`
 * and `idempotencyKey` (1-64 printable ASCII; a repeat joins the first or gets its unknown outcome).
 */
export type PerpsSendCommandParameters = { op: PerpsBodyOp; exp?: number; label?: unknown; idempotencyKey?: string };

/** `perps_signCommand` params: a command as for `perps_sendCommand`, without a key (nothing is submitted to key). */
export type PerpsSignCommandParameters = Omit<PerpsSendCommandParameters, 'idempotencyKey'>;

/**
 * A signed perps envelope `perps_signCommand` hands back for the site to send itself: the command, its EIP-712
 * signature `sig`, `salt`, `ts` (Unix ms) and `exp` / `label` when given.
 */
export type PerpsSignedEnvelope = {
  op: PerpsBodyOp;
  sig: `0x${string}`;
  salt: number;
  ts: number;
  exp?: number;
  label?: string;
};

/** `clob_postOrders` params: 1-15 order requests and an optional `idempotencyKey` (a repeat joins the first). */
export type ClobPostOrdersParameters = { orders: ClobOrderRequest[]; idempotencyKey?: string };

/** One `clob_postOrders` result: the exchange's answer per order (`errorMsg` empty on success). */
export type ClobPostOrderResult = { success: boolean; orderID: string; status?: string; errorMsg: string };

/** `clob_signRequest` params: method, path (with query on GET) and the exact body text. */
export type ClobSignRequestParameters = {
  method: 'GET' | 'POST' | 'DELETE' | 'PUT';
  requestPath: string;
  body?: string;
};

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

/**
 * Countersign's own page methods (not the standard `eth_*` / `wallet_*` ones, which viem's actions type): each
 * method's `Parameters` (the one-element params array) and `ReturnType`. `contract.test.ts` holds the names equal
 * to the methods the extension serves and each params type to the extension's schema.
 */
export type CountersignMethods = {
  perps_sendCommand: { Parameters: [PerpsSendCommandParameters]; ReturnType: PerpsCommandAnswer };
  perps_signCommand: { Parameters: [PerpsSignCommandParameters]; ReturnType: PerpsSignedEnvelope };
  clob_postOrders: { Parameters: [ClobPostOrdersParameters]; ReturnType: ClobPostOrderResult[] };
  clob_signRequest: { Parameters: [ClobSignRequestParameters]; ReturnType: L2Headers };
  countersign_getCapabilities: { Parameters: []; ReturnType: CountersignCapabilities };
};

/**
 * `CountersignMethods` as a viem RPC schema: `createWalletClient({ transport, rpcSchema:
 * rpcSchema<CountersignRpcSchema>() })` types `client.request` for them.
 */
export type CountersignRpcSchema = {
  [M in keyof CountersignMethods]: { Method: M } & CountersignMethods[M];
}[keyof CountersignMethods][];
