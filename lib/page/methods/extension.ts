/**
 * The records (`../method.ts`) of `countersign_getCapabilities` (the extension's version and the methods it
 * serves) and of `eth_signTypedData_v4`, listed only to be refused with the method that shows the payload
 * decoded: a page never hands Countersign bytes or structs to sign, only decoded requests (`perps_*`, `clob_*`).
 */
import { version } from '../../../package.json';
import { unsupported } from '../../errors/rpc';
import { NO_PARAMS, pageMethod } from '../method';

/**
 * `countersign_getCapabilities`: `{ version, methods }`. A site's client and the installed extension update
 * independently; with this answer the client says in words that the extension is older than it needs instead
 * of failing on an unknown method (4200). EIP-5792's `wallet_getCapabilities` answers per-chain capabilities of
 * an account (atomic batches, paymasters), not a method list, so this is a method of Countersign's own.
 */
export const countersignGetCapabilities = pageMethod({
  name: 'countersign_getCapabilities',
  params: NO_PARAMS,
  policy: { connected: false, unlocked: false, approval: 'none' },
  grantable: false,
  run: (host) => Promise.resolve({ version, methods: host.served() }),
  docs: {
    summary: "The extension's version and the methods it serves (no connection needed).",
    request: '—',
    answer: "`{ version, methods }`: the extension's version (its manifest's) and every method it serves",
    errors: [],
    example: [],
  },
});

/** Why `eth_signTypedData_v4` refuses a payload, by its primary type. */
const TYPED_DATA_REFUSALS = new Map<string, string>([
  [
    'Op',
    'Countersign does not sign perps Op typed data from sites: send the command itself with ' +
      'perps_sendCommand or perps_signCommand, which show it decoded and build the signed data in the extension.',
  ],
  [
    'Withdraw',
    'Countersign does not sign Withdraw typed data from sites: send a withdraw ' +
      'command with perps_sendCommand, which shows the destination and amount.',
  ],
  ['CreateProxy', 'Sites cannot issue proxy keys; use the extension.'],
  [
    'ClobAuth',
    'Order-book API credentials are created only in the extension; sites cannot obtain a ClobAuth signature.',
  ],
  [
    'Order',
    'Countersign does not sign exchange Order typed data from ' +
      'sites: use clob_postOrders, which shows each order decoded.',
  ],
]);

/** The 4200 message for an `eth_signTypedData_v4` request (every payload is refused). */
export function typedDataRefusal(params: unknown): string {
  let primary = '';
  try {
    const raw = Array.isArray(params) ? params[1] : undefined;
    const td: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
    if (typeof td === 'object' && td !== null && 'primaryType' in td && typeof td.primaryType === 'string')
      primary = td.primaryType;
  } catch {
    /* not JSON: the generic refusal */
  }
  return (
    TYPED_DATA_REFUSALS.get(primary) ??
    "Countersign does not sign typed data for sites; use the venue's " +
      'methods (perps_sendCommand, perps_signCommand, clob_postOrders).'
  );
}

/** `eth_signTypedData_v4`: refused for every payload at admission (`policy.ts` `admit`). */
export const ethSignTypedDataV4 = pageMethod({
  name: 'eth_signTypedData_v4',
  params: NO_PARAMS,
  policy: { connected: false, unlocked: false, approval: 'refused' },
  grantable: false,
  refuse: typedDataRefusal,
  // Never reached: `admit` refuses the method with `refuse`'s message before anything runs.
  run: () => Promise.reject(unsupported(typedDataRefusal(undefined))),
  docs: {
    summary: 'Always refused: Countersign signs only what it built and showed.',
    request: 'any',
    answer: 'always 4200, with the method that shows the payload decoded',
    errors: [4200],
    example: ['0x0000000000000000000000000000000000000000', '{}'],
  },
});
