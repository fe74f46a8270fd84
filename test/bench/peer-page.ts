/**
 * The `peer` bench's page script (`test/bench/peer.ts`), bundled with esbuild for the browser and served
 * by the sandbox at `GET /peer/app.js` (the page `GET /peer`, on the sandbox's own origin). It puts
 * {@link PeerPage} on `window.peer`: the same orders placed three ways from one page —
 * - through Countersign's injected provider under a standing grant (`perps_sendCommand`, `clob_postOrders`,
 *   as `grant-paths.ts` places them);
 * - with the key held in the page: the order book's own client (`@polymarket/clob-client-v2`, the demo owner
 *   key and the demo account's L2 credentials) posting the GTC order, and the perps command signed with
 *   the proxy key by the code Countersign signs with (`lib/perps/envelope.ts`, `lib/perps/signing.ts`),
 *   sent over REST (`lib/perps/client.ts`, as Countersign's REST transport) or over the page's own perps
 *   session WebSocket (`auth`, then `{salt, sig, ts, id, op, req:"post"}` as `lib/streams/perps.ts` frames it).
 * Browser-only: never imported by Node code (its types are).
 */
import { ClobClient, OrderType, Side, type ApiKeyCreds } from '@polymarket/clob-client-v2';
import { createWalletClient, http, type Hex, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { commandFromBody } from '../../lib/perps/commands';
import { signPerpsCommand } from '../../lib/perps/envelope';
import { fetchPerpsDomains, sendPerpsCommand } from '../../lib/perps/client';
import type { PerpsCommandDomain } from '../../lib/perps/signing';

/** What the page needs to hold the keys itself: the sandbox's base URL, the demo keys and the order-book order. */
export type PeerConfig = {
  /** The sandbox's base URL (`http://127.0.0.1:PORT`; perps under `/perps`, the order book under `/clob`). */
  base: string;
  /** The order book's chain id (the sandbox verifies orders for Amoy, 80002). */
  chainId: number;
  ownerKey: Hex;
  proxyKey: Hex;
  /** The proxy's REST secret (the session's `auth`). */
  proxySecret: string;
  /** The order-book order: one GTC buy of `size` shares of `tokenId` at `price`, below the midpoint. */
  clob: { tokenId: string; price: string; size: string };
};

/**
 * Milliseconds of each timed request of a block (`out`) and when each was sent (`sent`: `performance.timeOrigin +
 * performance.now()`, ms since the epoch, comparable with the worker's clock); `failed` requests (rejected or refused)
 * are not timed.
 */
export type BlockTimes = { out: number[]; sent: number[]; failed: number; firstError?: string };

/**
 * The sides of a comparison the page can time: Countersign's provider, or the page holding the key (order-book client,
 * perps REST, perps session).
 */
export type PeerSide = 'countersign-perps' | 'countersign-clob' | 'page-clob' | 'page-rest' | 'page-ws';

/** `window.peer`: set up once, then time blocks of one side, cancel between blocks, and time the provider relay. */
export type PeerPage = {
  /**
   * Derives the L2 credentials, reads the perps domain, and opens, authenticates and subscribes the page's session
   * socket.
   */
  setup: (cfg: PeerConfig) => Promise<void>;
  /**
   * Times `count` sequential orders of `side`; `start` numbers the perps prices (each order a distinct resting price).
   */
  block: (side: PeerSide, count: number, start: number) => Promise<BlockTimes>;
  /** Cancels every resting order of the account on both venues (untimed; the page's own clients). */
  cancelAll: () => Promise<void>;
  /** `count` page → provider → worker round trips of `eth_chainId` after 20 unmeasured ones (ms each). */
  relay: (count: number) => Promise<number[]>;
};

type Provider = { request: (a: { method: string; params?: unknown }) => Promise<unknown> };

/**
 * The account channels Countersign's session subscribes to (`lib/streams/perps.ts`): the page's session gets the same
 * events.
 */
const ACCOUNT_CHANNELS = ['balances', 'portfolio', 'orders', 'fills', 'funding', 'deposits', 'withdrawals', 'tpsl'];

/** A post-only ETH-PERP buy below the book (rests; never fills), as `grant-paths.ts` sends it. */
const perpsOp = (i: number) => ({
  type: 'createOrders',
  args: [{ iid: 2, buy: true, qty: '0.01', p: (3099 - (i % 100) * 0.05).toFixed(2), tif: 'gtc', po: true }],
});

/** The perps session of the page: one socket, answers matched to their request by `id`. */
function openSession(
  url: string,
): Promise<{ post: (frame: Record<string, unknown>) => Promise<unknown>; close: () => void }> {
  const ws = new WebSocket(url);
  const waiting = new Map<number, (data: unknown) => void>();
  let nextId = 1;
  ws.onmessage = (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; data?: unknown };
    if (typeof msg.id !== 'number') return; // an account event
    const done = waiting.get(msg.id);
    waiting.delete(msg.id);
    done?.(msg.data);
  };
  const post = (frame: Record<string, unknown>) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => (waiting.delete(id), reject(new Error('no answer in 15 s'))), 15_000);
      waiting.set(id, (d) => (clearTimeout(timer), resolve(d)));
      ws.send(JSON.stringify({ ...frame, id }));
    });
  return new Promise((resolve, reject) => {
    ws.onopen = () => resolve({ post, close: () => ws.close() });
    ws.onerror = () => reject(new Error(`the perps session ${url} did not open`));
  });
}

/** A refusal in a venue answer body (`{status:"err"}`, the order book's `success: false` or `error`). */
function refused(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as { status?: unknown; success?: unknown; error?: unknown; errorMsg?: unknown };
  if (b.status === 'err' || b.success === false || (b.error !== undefined && b.error !== ''))
    return JSON.stringify(body).slice(0, 300);
  return undefined;
}

/** Builds {@link PeerPage} (the state lives in this closure). */
function peerPage(): PeerPage {
  let cfg: PeerConfig;
  let client: ClobClient;
  let proxy: LocalAccount;
  let domain: PerpsCommandDomain;
  let session: Awaited<ReturnType<typeof openSession>>;
  const provider = () => (window as unknown as { countersign: Provider }).countersign;
  const perpsUrl = () => `${cfg.base}/perps`;

  const signed = async (body: unknown) => {
    const command = commandFromBody(body);
    return { command, envelope: await signPerpsCommand(proxy, { command, domain }) };
  };
  /** One order of `side`; resolves with the venue's answer body. */
  const one = async (side: PeerSide, i: number): Promise<unknown> => {
    switch (side) {
      case 'countersign-perps':
        return provider().request({ method: 'perps_sendCommand', params: { op: perpsOp(i) } });
      case 'countersign-clob':
        return provider().request({
          method: 'clob_postOrders',
          params: {
            orders: [
              { tokenId: cfg.clob.tokenId, side: 'BUY', price: cfg.clob.price, size: cfg.clob.size, orderType: 'GTC' },
            ],
          },
        });
      case 'page-clob':
        return client.createAndPostOrder(
          { tokenID: cfg.clob.tokenId, price: Number(cfg.clob.price), size: Number(cfg.clob.size), side: Side.BUY },
          undefined,
          OrderType.GTC,
        );
      case 'page-rest': {
        const { command, envelope } = await signed(perpsOp(i));
        return sendPerpsCommand(perpsUrl(), command, envelope, fetch);
      }
      case 'page-ws': {
        const { envelope: e } = await signed(perpsOp(i));
        return session.post({
          salt: e.salt,
          sig: e.sig,
          ts: e.ts,
          ...(e.exp === undefined ? {} : { exp: e.exp }),
          op: e.op,
          req: 'post',
        });
      }
    }
  };

  return {
    async setup(c) {
      cfg = c;
      const owner = privateKeyToAccount(c.ownerKey);
      proxy = privateKeyToAccount(c.proxyKey);
      // A wallet client that only signs locally (no RPC is ever asked: the order book's client signs typed data with
      // the account).
      const wallet = createWalletClient({ account: owner, transport: http('http://127.0.0.1:9') });
      const creds: ApiKeyCreds = await new ClobClient({
        host: `${c.base}/clob`,
        chain: c.chainId,
        signer: wallet,
      }).deriveApiKey(0);
      if (!creds.key)
        throw new Error(`the order book did not derive the demo account's API key: ${JSON.stringify(creds)}`);
      client = new ClobClient({ host: `${c.base}/clob`, chain: c.chainId, signer: wallet, creds, throwOnError: true });
      ({ domain } = await fetchPerpsDomains(perpsUrl(), fetch));
      session = await openSession(`${c.base.replace(/^http/, 'ws')}/perps/v1/ws`);
      const auth = await session.post({
        req: 'post',
        op: { type: 'auth', args: { proxy: proxy.address, secret: c.proxySecret } },
      });
      if (refused(auth)) throw new Error(`the page's perps session was refused: ${refused(auth)}`);
      const sub = await session.post({ req: 'sub', chs: ACCOUNT_CHANNELS });
      if (refused(sub)) throw new Error(`the page's perps session could not subscribe: ${refused(sub)}`);
    },
    async block(side, count, start) {
      const out: number[] = [];
      const sent: number[] = [];
      let failed = 0;
      let firstError: string | undefined;
      for (let i = 0; i < count; i++) {
        const t0 = performance.now();
        try {
          const answer = await one(side, start + i);
          const t = performance.now() - t0;
          const why = refused(answer);
          if (why === undefined) {
            out.push(t);
            sent.push(performance.timeOrigin + t0);
          } else ((firstError ??= why), failed++);
        } catch (err) {
          firstError ??= String((err as Error)?.message ?? err).slice(0, 300);
          failed++; // not timed (a loaded machine's loopback can miss a deadline)
        }
      }
      return { out, sent, failed, ...(firstError === undefined ? {} : { firstError }) };
    },
    async cancelAll() {
      await client.cancelAll();
      const { command, envelope } = await signed({ type: 'cancelAll', args: {} });
      await sendPerpsCommand(perpsUrl(), command, envelope, fetch);
    },
    async relay(count) {
      const out: number[] = [];
      for (let i = 0; i < count + 20; i++) {
        const t0 = performance.now();
        await provider().request({ method: 'eth_chainId' });
        if (i >= 20) out.push(performance.now() - t0);
      }
      return out;
    },
  };
}

(window as unknown as { peer: PeerPage }).peer = peerPage();
