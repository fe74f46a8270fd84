/**
 * The official perps client (`@polymarket/client` 0.2.0) as an oracle for the differential suite
 * (`test/conformance/perps-differential.test.ts`), run in memory: its secure client and its perps session
 * talk to a fake WebSocket and a stubbed `fetch`, which record every signed command and answer it with a
 * rejection (so nothing waits for an order event). The client's builders and signers are not exported;
 * this drives them through the public methods (`postOrders`, `placeOrder`, `cancelOrders`,
 * `cancelAllOrders`, `updateLeverage`, `revokePerpsCredentials`, `withdrawFromPerps`, `openPerpsSession`).
 *
 * The client draws each command's salt from `crypto.getRandomValues(new Uint32Array(1))` and its time from
 * `Date.now()` before its first `await`; `command` pins both for that synchronous part only, so the
 * session's heartbeat watchdog keeps the real clock. Other random bytes it draws meanwhile (a new proxy
 * key) come from a generator seeded with the salt, so a case is the same on every run.
 */
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  createSecureClient,
  forkEnvironmentConfig,
  type EnvironmentConfig,
  type EnvironmentContracts,
  type PerpsSession,
  type ResumePerpsSessionRequest,
  type SecureClientOptions,
} from '@polymarket/client';
import { privateKey } from '@polymarket/client/viem';
import { pin, seeded } from './seeded';

/** A command as the official client sent it: a WebSocket frame (`channel: 'ws'`) or a REST request. */
export type SentCommand = { channel: 'ws' | 'rest'; method: string; path: string; body: Record<string, unknown> };

/** The answer every recorded command gets: a rejection the client turns into an error. */
const REJECTION = 'differential oracle: recorded, not executed';
/** The order-book API credentials the secure client is given (its only check lists them: answered by the fake). */
const CREDS = {
  key: '00000000-0000-4000-8000-00000000d1ff',
  secret: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
  passphrase: 'differential',
} as NonNullable<SecureClientOptions['credentials']>;
/** A proxy expiry far ahead (Unix ms) so the resumed session stays valid. */
const FAR_EXPIRY = 4_102_444_800_000;

/** The record both fakes write to. */
const sent: SentCommand[] = [];

/** A WebSocket in memory: opens at once, accepts auth and subscription, records and rejects every command. */
class RecordingWebSocket extends EventTarget {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  readyState = 0;
  constructor(readonly url: string) {
    super();
    setTimeout(() => {
      this.readyState = 1;
      this.dispatchEvent(new Event('open'));
    });
  }
  send(text: string): void {
    const frame = JSON.parse(text) as { id: number; req?: string; op?: { type?: string } };
    const type = frame.op?.type;
    if (frame.req === 'sub' || type === 'auth' || type === 'ping')
      return this.#answer({ id: frame.id, data: { status: 'ok' } });
    sent.push({ channel: 'ws', method: 'post', path: new URL(this.url).pathname, body: frame });
    this.#answer({ id: frame.id, data: { status: 'err', error: REJECTION } });
  }
  close(): void {
    this.readyState = 3;
    this.dispatchEvent(Object.assign(new Event('close'), { code: 1000, reason: '' }));
  }
  #answer(message: unknown): void {
    queueMicrotask(() => this.dispatchEvent(Object.assign(new Event('message'), { data: JSON.stringify(message) })));
  }
}

/**
 * A `fetch` for the client: API keys and proxy credentials are answered, every other request is recorded and refused.
 */
function recordingFetch(owner: string, proxy: string): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const json = (status: number, body: unknown) =>
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    if (url.pathname.endsWith('/auth/api-keys')) return json(200, { apiKeys: [CREDS.key] });
    if (url.pathname.endsWith('/v1/account/credentials'))
      return json(200, { address: owner, keys: [{ proxy, expiry: FAR_EXPIRY }] });
    const text = await request.text();
    sent.push({
      channel: 'rest',
      method: request.method,
      path: url.pathname,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    });
    return json(400, { error: REJECTION });
  };
}

/** The official client in memory, signing with `ownerKey` (owner commands) and `proxyKey` (its session). */
export type PerpsOracle = {
  /** The command domain's chain (the client's environment). */
  chainId: number;
  /**
   * The withdraw domain's contract and the token and wallet a withdrawal names (the client's environment and account).
   */
  withdraw: { contract: Hex; token: Hex; account: Hex; to: Hex };
  /** The secure client (owner key): revoke, withdraw, open a session. */
  client: Awaited<ReturnType<typeof createSecureClient>>;
  /** The session (proxy key): orders, cancels, leverage. */
  session: PerpsSession;
  /**
   * Calls `send` with the client's clock at `ts` and its next salt `salt`, waits until it settles (the
   * recorded command is refused, so it rejects) and resolves the command it sent. Throws when it sent
   * nothing (the client refused the input: its error is the cause).
   */
  command(ts: number, salt: number, send: () => Promise<unknown>): Promise<SentCommand>;
  /** Closes the session and removes the fakes. */
  close(): Promise<void>;
};

/** Starts the official client on the fakes: a secure client for `ownerKey` and a session resumed with `proxyKey`. */
export async function startPerpsOracle(ownerKey: Hex, proxyKey: Hex): Promise<PerpsOracle> {
  const owner = privateKeyToAccount(ownerKey).address;
  const proxy = privateKeyToAccount(proxyKey).address;
  const previous = { WebSocket: globalThis.WebSocket, fetch: globalThis.fetch };
  Object.assign(globalThis, { WebSocket: RecordingWebSocket, fetch: recordingFetch(owner, proxy) });
  // The declared `EnvironmentConfig` type omits the contracts its value carries (and the client signs with).
  const environment = forkEnvironmentConfig({
    name: 'differential',
    perps: { rest: 'http://perps.invalid', ws: 'ws://perps.invalid/v1/ws' },
    clob: {
      rest: 'http://clob.invalid',
      market: { ws: 'ws://clob.invalid/market' },
      user: { ws: 'ws://clob.invalid/user' },
    },
  }) as EnvironmentConfig & { contracts: EnvironmentContracts };
  const client = await createSecureClient({
    environment,
    signer: privateKey(ownerKey),
    wallet: owner,
    credentials: CREDS,
  });
  const credentials = {
    proxy,
    privateKey: proxyKey,
    secret: 'differential-secret',
    expiresAt: FAR_EXPIRY,
  } as ResumePerpsSessionRequest['credentials'];
  const session = await client.openPerpsSession({ credentials });
  const crypto = globalThis.crypto;
  return {
    chainId: environment.chainId,
    withdraw: {
      contract: environment.contracts.perpsDepositContract,
      token: environment.contracts.collateralToken,
      account: owner,
      to: owner,
    },
    client,
    session,
    async command(ts, salt, send) {
      const before = sent.length;
      const bytes = seeded(salt);
      const fill = <T extends ArrayBufferView | null>(array: T): T => {
        if (array instanceof Uint32Array && array.length === 1) array[0] = salt;
        else if (array)
          new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(bytes.bytes(array.byteLength));
        return array;
      };
      const unpin = [pin(Date, 'now', () => ts), pin(crypto, 'getRandomValues', fill)];
      let pending: Promise<unknown>;
      try {
        pending = send();
      } finally {
        for (const restore of unpin) restore();
      }
      const outcome = await pending.then(
        () => undefined,
        (err: unknown) => err,
      );
      const out = sent.splice(before);
      if (out.length !== 1) throw new Error(`the official client sent ${out.length} commands`, { cause: outcome });
      return out[0]!;
    },
    async close() {
      await session.close();
      Object.assign(globalThis, previous);
      if (previous.WebSocket === undefined) Reflect.deleteProperty(globalThis, 'WebSocket');
    },
  };
}
