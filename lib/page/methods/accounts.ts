/**
 * The account methods' records (`../method.ts`): `eth_chainId`, `eth_accounts`, `eth_requestAccounts` and
 * `wallet_connect`, served by `AccountMethods` (`../accounts.ts`).
 */
import { NO_PARAMS, pageMethod } from '../method';

/** `eth_chainId`: the chain id, answered before the session gates. */
export const ethChainId = pageMethod({
  name: 'eth_chainId',
  params: NO_PARAMS,
  policy: { connected: false, unlocked: false, approval: 'none' },
  grantable: false,
  ungated: true,
  run: (host) => host.accounts.chainId(),
  docs: {
    summary: 'The chain id; needs no connection.',
    request: '—',
    answer: 'the order book\'s chain id, hex (`"0x13882"` = 80002 sandbox, `"0x89"` = 137 venue)',
    errors: [],
    example: [],
  },
});

/** `eth_accounts`: the granted account while it is active and the vault serves it. */
export const ethAccounts = pageMethod({
  name: 'eth_accounts',
  params: NO_PARAMS,
  policy: { connected: false, unlocked: false, approval: 'none' },
  grantable: false,
  run: (host, req) => host.accounts.accounts(req),
  docs: {
    summary: 'The connected account while it is the active one and the vault serves it.',
    request: '—',
    answer:
      '`[address]` while connected to the active account and unlocked (or in a trading session the site ' +
      'holds a grant in), else `[]`',
    errors: [],
    example: [],
  },
});

const CONNECT_DOCS = {
  request: '—',
  answer: '`[address]`: the active account, which the connection records',
  errors: [4001, 4100, 4900, -32002],
  example: [],
  note: 'a locked vault shows the unlock first; asks only when the site is not connected to the active account',
} as const;

/** `eth_requestAccounts`: connect (one window per origin and account). */
export const ethRequestAccounts = pageMethod({
  name: 'eth_requestAccounts',
  params: NO_PARAMS,
  policy: { connected: false, unlocked: false, approval: 'connect' },
  grantable: false,
  run: (host, req) => host.accounts.connect(req.origin, req.session.active, false),
  docs: { summary: 'Connect: the person approves the site for the active account.', ...CONNECT_DOCS },
});

/** `wallet_connect`: the same as `eth_requestAccounts`. */
export const walletConnect = pageMethod({
  name: 'wallet_connect',
  params: NO_PARAMS,
  policy: { connected: false, unlocked: false, approval: 'connect' },
  grantable: false,
  run: (host, req) => host.accounts.connect(req.origin, req.session.active, false),
  docs: { summary: 'The same as `eth_requestAccounts`.', ...CONNECT_DOCS },
});
