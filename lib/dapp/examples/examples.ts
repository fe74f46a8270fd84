/**
 * Runnable examples of every page method, for site developers (lib/dapp/README.md shows each region
 * verbatim; `lib/dapp/examples/readme.test.ts` holds the two equal). Browser code: it runs in a page,
 * needs nothing but the provider (EIP-1193) found through EIP-6963, and viem, ethers or @wagmi/core for
 * their examples.
 * `test/e2e/site-examples.test.ts` bundles this file, runs every example in real Chromium against the
 * sandbox and approves the windows they open.
 *
 * Each example returns what the method answered, so the test can check it.
 */
import * as wagmi from '@wagmi/core';
import { polygonAmoy } from '@wagmi/core/chains';
import { BrowserProvider } from 'ethers';
import { createWalletClient, custom, rpcSchema } from 'viem';

// #region types
/**
 * The provider as a site sees it (EIP-1193): `request`, and the `accountsChanged` / `chainChanged` / `connect` /
 * `disconnect` events.
 */
export type Provider = {
  request(args: { method: string; params?: readonly unknown[] | object }): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): void;
  removeListener(event: string, listener: (...args: unknown[]) => void): void;
};
/** EIP-6963's announcement: the provider and who it is (`rdns` 'xyz.countersign'). */
type Announcement = { info: { uuid: string; name: string; icon: string; rdns: string }; provider: Provider };
// #endregion types

// #region discover
/** Finds Countersign by EIP-6963: listen for announcements, then ask for them. */
export function discover(timeoutMs = 3000): Promise<Provider> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Countersign is not installed')), timeoutMs);
    window.addEventListener('eip6963:announceProvider', (event) => {
      const { info, provider } = (event as CustomEvent<Announcement>).detail;
      if (info.rdns !== 'xyz.countersign') return;
      clearTimeout(timer);
      resolve(provider);
    });
    window.dispatchEvent(new Event('eip6963:requestProvider'));
  });
}
// #endregion discover

// #region connect
/** eth_chainId, then eth_requestAccounts (a window asks the person once per site), then eth_accounts. */
export async function connect(provider: Provider) {
  const chainId = await provider.request({ method: 'eth_chainId' }); // e.g. '0x13882' (80002)
  const [account] = (await provider.request({ method: 'eth_requestAccounts' })) as string[]; // ['0x5a…'] after approval
  // the same, without a window, while connected and unlocked
  const accounts = await provider.request({ method: 'eth_accounts' });
  return { chainId, account, accounts };
}
// #endregion connect

// #region permissions
/** EIP-2255: the connection as an `eth_accounts` permission (wallet_requestPermissions always asks). */
export async function permissions(provider: Provider) {
  const requested = await provider.request({ method: 'wallet_requestPermissions', params: [{ eth_accounts: {} }] });
  const current = await provider.request({ method: 'wallet_getPermissions' });
  // [{ invoker: 'https://your.site', parentCapability: 'eth_accounts', caveats: [{ type: 'restrictReturnedAccounts',
  // value: ['0x5a…'] }], date: 1795000000000 }]
  return { requested, current };
}
// #endregion permissions

// #region perps_sendCommand
/** A perps order: the extension builds, shows, signs and sends the command; the gateway's answer comes back. */
export async function perpsSendCommand(provider: Provider) {
  // A client order id: 32 lowercase hex characters (16 random bytes), so the order can be looked up later.
  const coid = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  const answer = await provider.request({
    method: 'perps_sendCommand',
    params: [
      {
        // createOrders: instrument id 2, buy 0.5 at 3000, good-til-cancelled, post-only, with a client order id
        op: {
          type: 'createOrders',
          args: [{ iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true, c: coid }],
        },
        idempotencyKey: coid, // optional: a repeat with this key joins the first or gets its unknown outcome
      },
    ],
  });
  return answer; // the gateway's answer, one entry per order: [{ status: 'ok', oid: 1060, coid: '8558…4519' }]
}
// #endregion perps_sendCommand

// #region perps_signCommand
/** A perps command signed but not sent: the site gets the signed envelope and submits it itself. */
export async function perpsSignCommand(provider: Provider) {
  const signed = await provider.request({
    method: 'perps_signCommand',
    params: [{ op: { type: 'cancelOrders', args: [123456] } }],
  });
  return signed; // { op, salt, ts, exp?, sig }: the envelope exactly as the gateway's POST takes it
}
// #endregion perps_signCommand

// #region clob_postOrders
/** Order-book orders (1-15): the extension builds the exchange orders, shows, signs and posts them. */
export async function clobPostOrders(provider: Provider, tokenId: string) {
  const results = await provider.request({
    method: 'clob_postOrders',
    params: [{ orders: [{ tokenId, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }] }],
  });
  return results; // one per order: { success, orderID, status, errorMsg }
}
// #endregion clob_postOrders

// #region clob_signRequest
/** L2 headers for one allowed order-book route; the site sends the request itself with them. */
export async function clobSignRequest(provider: Provider, clobUrl: string) {
  const headers = (await provider.request({
    method: 'clob_signRequest',
    params: [{ method: 'GET', requestPath: '/data/orders' }],
  })) as Record<string, string>;
  // { SVC_ADDRESS | POLY_ADDRESS, …_SIGNATURE, …_TIMESTAMP, …_API_KEY, …_PASSPHRASE } (the venue's names under a venue
  // preset)
  const res = await fetch(`${clobUrl}/data/orders`, { headers });
  return { headerNames: Object.keys(headers).sort(), status: res.status };
}
// #endregion clob_signRequest

// #region wallet_grantPermissions
/** ERC-7715: a standing grant (one `countersign-grant` permission) the person approves once. */
export async function grantPermissions(provider: Provider) {
  const granted = await provider.request({
    method: 'wallet_grantPermissions',
    params: [
      {
        expiry: Math.floor(Date.now() / 1000) + 3600, // Unix seconds, at most 24 h ahead
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
  });
  // { expiry, grantedPermissions: [{ type: 'countersign-grant', data, policies: [] }], permissionsContext }
  return granted;
}
// #endregion wallet_grantPermissions

// #region errors
/** Errors are EIP-1193 / EIP-1474 errors: read `code`, and `data` for -32002 (lib/dapp/README.md "Errors"). */
export async function refusedTypedData(provider: Provider) {
  try {
    await provider.request({
      method: 'eth_signTypedData_v4',
      params: ['0x0000000000000000000000000000000000000000', '{}'],
    });
    return { code: 0 };
  } catch (err) {
    const { code, message } = err as { code: number; message: string }; // an EIP-1193 ProviderRpcError
    return { code, message }; // 4200: Countersign never signs typed data a site built
  }
}
// #endregion errors

// #region wallet_revokePermissions
/** Ends the connection and every standing grant of this site (no window). */
export async function revoke(provider: Provider) {
  await provider.request({ method: 'wallet_revokePermissions', params: [{ eth_accounts: {} }] });
  return provider.request({ method: 'eth_accounts' }); // []
}
// #endregion wallet_revokePermissions

// #region site-client
import {
  countersignActions,
  discoverCountersign,
  newClientOrderId,
  requireCountersign,
} from '@countersign/site-client';

/** The site client (`npm install @countersign/site-client viem`): discovery, the version check, typed actions. */
export async function withSiteClient() {
  const client = createWalletClient({ transport: custom(await discoverCountersign()) }).extend(countersignActions);
  // An extension older than the site needs says so in words ("Countersign 0.1.0 is older than this site needs…").
  const { version } = await requireCountersign(client, { methods: ['perps_sendCommand'] });
  const [account] = await client.requestAddresses();
  const c = newClientOrderId(); // keep it: a retry with the same id is answered, never sent twice
  const answer = await client.perpsSendCommand({
    op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '2900', tif: 'gtc', po: true, c }] },
  });
  return { version, account, answer };
}
// #endregion site-client

// #region viem
// Countersign's page methods as a viem RPC schema, from the site client's types (no runtime code).
import type { CountersignRpcSchema } from '@countersign/site-client';

/** viem: a wallet client over the provider with Countersign's schema; signing requests with retries off. */
export async function withViem(provider: Provider) {
  const client = createWalletClient({ transport: custom(provider), rpcSchema: rpcSchema<CountersignRpcSchema>() });
  const [account] = await client.requestAddresses();
  const chainId = await client.getChainId();
  const answer = await client.request(
    {
      method: 'perps_sendCommand',
      params: [
        { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '2900', tif: 'gtc', po: true }] } },
      ],
    },
    // never let a library retry a signing request: a retry would be a second order or a second window
    { retryCount: 0 },
  );
  return { account, chainId, answer };
}
// #endregion viem

// #region viem-errors
/** What viem throws for Countersign's codes: its RPC error classes, with the provider's code on `code`. */
export async function viemError(provider: Provider) {
  const client = createWalletClient({ transport: custom(provider), rpcSchema: rpcSchema<CountersignRpcSchema>() });
  try {
    await client.request(
      { method: 'perps_sendCommand', params: [{ op: { type: 'cancelOrders', args: [1] } }] },
      { retryCount: 0 },
    );
    return { name: 'none', code: 0 };
  } catch (err) {
    const { name, code } = err as { name: string; code: number };
    return { name, code }; // the person rejected: { name: 'UserRejectedRequestError', code: 4001 }
  }
}
// #endregion viem-errors

// #region ethers
/** ethers v6: a BrowserProvider over the provider; the page methods through `send`. */
export async function withEthers(provider: Provider) {
  const browserProvider = new BrowserProvider(provider);
  const signer = await browserProvider.getSigner(); // eth_requestAccounts: a window unless already connected
  const { chainId } = await browserProvider.getNetwork();
  const answer = await browserProvider.send('perps_sendCommand', [
    { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '2800', tif: 'gtc', po: true }] } },
  ]);
  try {
    await browserProvider.send('eth_signTypedData_v4', [signer.address, '{}']);
  } catch (err) {
    // ethers v6 keeps the provider's error on `error`: { code: 4200, message, data }; its own code is UNKNOWN_ERROR
    const { code, error } = err as { code: string; error?: { code: number } };
    return { account: signer.address, chainId: Number(chainId), answer, refused: { code, providerCode: error?.code } };
  }
  return { account: signer.address, chainId: Number(chainId), answer, refused: undefined };
}
// #endregion ethers

// #region wagmi
/**
 * wagmi (`@wagmi/core`, no framework): createConfig's EIP-6963 discovery (on by default) makes Countersign an
 * `injected` connector whose id is the announced rdns; the page methods go through the connector's client.
 */
export async function withWagmi() {
  const config = wagmi.createConfig({
    chains: [polygonAmoy], // 80002, the sandbox's chain id; `polygon` (137) at the venue
    transports: { [polygonAmoy.id]: wagmi.http() }, // chain reads only: Countersign's methods go through the connector
  });
  // injected({ target: { ...info, id: info.rdns, provider } })
  const countersign = config.connectors.find((c) => c.id === 'xyz.countersign');
  if (!countersign) throw new Error('Countersign is not installed');
  await wagmi.connect(config, { connector: countersign }); // wallet_requestPermissions: a window asks the person
  // (`getAccount` is its older name) { address: '0x5a…', status: 'connected' }
  const { address, status } = wagmi.getConnection(config);
  const chainId = wagmi.getChainId(config); // 80002
  const client = await wagmi.getConnectorClient(config); // a viem client over Countersign's provider, retries off
  type PerpsSendCommand = Extract<CountersignRpcSchema[number], { Method: 'perps_sendCommand' }>; // as in "viem"
  const answer = await client.request<PerpsSendCommand>({
    method: 'perps_sendCommand',
    params: [
      { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '2700', tif: 'gtc', po: true }] } },
    ],
  });
  try {
    await client.request<PerpsSendCommand>({
      method: 'perps_sendCommand',
      params: [{ op: { type: 'cancelOrders', args: [1] } }],
    });
    return { address, status, chainId, answer, rejected: undefined, after: await disconnected(countersign) };
  } catch (err) {
    const { name, code } = err as { name: string; code: number }; // viem's error classes, as in "viem" above
    // the person rejected: { name: 'UserRejectedRequestError', code: 4001 }
    return { address, status, chainId, answer, rejected: { name, code }, after: await disconnected(countersign) };
  }
  /** wagmi's disconnect sends wallet_revokePermissions: the site is no longer connected (eth_accounts → []). */
  async function disconnected(connector: wagmi.Connector) {
    const provider = (await connector.getProvider()) as Provider;
    await wagmi.disconnect(config, { connector });
    return provider.request({ method: 'eth_accounts' });
  }
}
// #endregion wagmi
