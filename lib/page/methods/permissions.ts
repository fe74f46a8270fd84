/**
 * The permission methods' records (`../method.ts`): EIP-2255 (`wallet_requestPermissions`,
 * `wallet_getPermissions`, `wallet_revokePermissions`, served by `PermissionMethods`) and ERC-7715
 * `wallet_grantPermissions` (a standing grant, `GrantPermissionMethods`).
 */
import { NO_PARAMS, pageMethod } from '../method';
import { grantPermissionsSchema, requestPermissionsSchema } from '../params';

/** EIP-2255 `wallet_requestPermissions`: `eth_accounts` only, always a window. */
export const walletRequestPermissions = pageMethod({
  name: 'wallet_requestPermissions',
  params: requestPermissionsSchema,
  policy: { connected: false, unlocked: false, approval: 'connect' },
  grantable: false,
  run: (host, req) => host.permissions.request(req),
  docs: {
    summary: 'EIP-2255: ask for the `eth_accounts` permission (a connection); asks even when connected.',
    request: '`[{ eth_accounts: {} }]`',
    answer: 'EIP-2255 permissions: `[{ parentCapability: "eth_accounts", invoker, caveats }]`',
    errors: [4001, 4100, 4900, -32602, -32002],
    example: [{ eth_accounts: {} }],
    note: 'a locked vault shows the unlock first',
  },
});

/** EIP-2255 `wallet_getPermissions`: the connection as a permission. */
export const walletGetPermissions = pageMethod({
  name: 'wallet_getPermissions',
  params: NO_PARAMS,
  policy: { connected: false, unlocked: false, approval: 'none' },
  grantable: false,
  run: (host, req) => host.permissions.get(req),
  docs: {
    summary: "EIP-2255: the site's `eth_accounts` permission.",
    request: '—',
    answer: 'EIP-2255 permissions, `[]` when not connected or locked',
    errors: [],
    example: [],
  },
});

/** EIP-2255 `wallet_revokePermissions`: forgets the connection and ends the site's grants. */
export const walletRevokePermissions = pageMethod({
  name: 'wallet_revokePermissions',
  params: NO_PARAMS,
  policy: { connected: true, unlocked: false, approval: 'none' },
  grantable: false,
  run: (host, req) => host.permissions.revoke(req),
  docs: {
    summary: 'EIP-2255: end the connection and every standing grant of the site.',
    request: '`[{ eth_accounts: {} }]` (any params: everything is revoked)',
    answer: '`null`',
    errors: [4100],
    example: [{ eth_accounts: {} }],
  },
});

/** ERC-7715 `wallet_grantPermissions`: a standing grant the site asks for, always a window. */
export const walletGrantPermissions = pageMethod({
  name: 'wallet_grantPermissions',
  params: grantPermissionsSchema,
  policy: { connected: true, unlocked: true, session: false, approval: 'sign' },
  grantable: false,
  run: (host, req, params) => host.grantPermissions.grant(req, params),
  docs: {
    summary: 'ERC-7715: ask for a standing grant (`countersign-grant`), shown and approved in the window.',
    request: 'ERC-7715 request: `[{ expiry (Unix s), permissions: [{ type: "countersign-grant", data: limits }] }]`',
    answer: 'ERC-7715 answer: the permission granted, its `expiry` and `permissionsContext`',
    errors: [4001, 4100, 4900, -32602, -32002],
    example: [
      {
        expiry: 4_102_444_800,
        signer: { type: 'wallet' },
        permissions: [
          {
            type: 'countersign-grant',
            data: {
              venue: 'perps',
              instruments: [2],
              allow: { order: true, cancel: true },
              maxNotional: '2000',
              dailyNotional: '20000',
              priceBandPct: '2',
            },
            policies: [],
          },
        ],
      },
    ],
  },
});
