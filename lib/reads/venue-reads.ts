/**
 * The venue reads: what the popup, the live streams, the page path, panic and the signer read from the
 * two gateways — nothing here signs a command or moves funds.
 *
 * - Perps (PROTOCOL.md §3.2): `perpsRead` (every named read; with the account's proxy headers when the
 *   read needs them, PROTOCOL.md §1.4), `perpsBook` (the public book).
 * - Order book, public (PROTOCOL.md §3.1, keyless): `clobMid`, `clobTop` (`lib/clob/reads.ts`),
 *   `clobMarket` (tick size and negative-risk flag, cached per exchange URL and token: the signer builds
 *   orders at it), `clobQuote`.
 * - Order book, the account's own (L2-signed GETs: `clobCollateral`, `clobTrades`, `clobOpenOrders`): sent
 *   through the signer's L2 channel (`SigningService.clobRead`), so the signing gate and the authority
 *   epoch hold for them as for every L2 request, and the API secret never leaves the signer.
 *
 * Every perps read draws on the gateway's request weight through the one `WeightMeter` the signer's
 * commands draw on too (`lib/ratelimit/meter.ts`). Every request goes through the gateway transport
 * (`lib/http/gateway.ts`: header set, deadline).
 */
import { BUILD_TRANSPORT_RULE, type TransportRule } from '../settings/transport';
import * as v from 'valibot';
import { BaseError } from '../errors/base';
import { requestJson } from '../http/json';
import { gatewayTransport, type GatewayTransport } from '../http/gateway';
import type { HeaderSet } from '../http/headers';
import { perpsRead } from '../perps/client';
import { PERPS_READS, type PerpsReadName } from '../perps/reads';
import { parsePerpsAnswer, type Book, type PerpsReadAnswer } from '../perps/wire';
import { orderRequestAmounts } from '../clob/amounts';
import type { ClobOrderRequest } from '../clob/request';
import { parseClobAnswer } from '../clob/client';
import { readClobMarket, readClobMid, readClobTop, type ClobMarket } from '../clob/reads';
import { clobBalanceSchema, clobOrdersPageSchema, type ClobOpenOrder } from '../clob/wire';
import { clobTradesWirePageSchema, ownClobTradesPage, type ClobTrade } from '../clob/trades';
import { fromUnits } from '../decimal';
import type { Drawer } from '../ratelimit/reserve';
import type { WeightMeter } from '../ratelimit/meter';
import type { Vault } from '../vault/vault';

/**
 * What the reads need: the gateway settings (read per call: the service roots and the header set), the
 * vault (a proxy's secret for the proxy-header reads, the account's signature type), the shared weight
 * meter, the signer's L2 channel for the account's own order-book reads, and test seams — `fetchFn`
 * (transport), `requestTimeoutMs` (each request's deadline, ms; default 15 s).
 */
export type VenueReadsOptions = {
  settings: () => Promise<{ perpsUrl: string; clobUrl: string; headerSet?: HeaderSet }>;
  vault: Pick<Vault, 'proxyFor' | 'clobCredentials'>;
  meter: WeightMeter;
  /**
   * An L2-signed `GET requestPath` of `account` at the exchange, its validated 2xx body (`SigningService.clobRead`).
   */
  clobRead: (account: string, requestPath: string) => Promise<unknown>;
  fetchFn?: typeof fetch;
  requestTimeoutMs?: number;
  /** Which transports the reads may use (`lib/settings/transport.ts`); default this build's. */
  transportRule?: TransportRule;
};

/** The venue reads (see the module docstring). One per background, built beside the signing service. */
export class VenueReads {
  private readonly transport: GatewayTransport;
  private readonly markets = new Map<string, Promise<ClobMarket>>();

  constructor(private readonly o: VenueReadsOptions) {
    this.transport = gatewayTransport(
      o.fetchFn,
      async () => (await o.settings()).headerSet ?? 'seed',
      o.requestTimeoutMs,
      o.transportRule ?? BUILD_TRANSPORT_RULE,
    );
  }

  /**
   * Read `name` (PROTOCOL.md §3.2) — with `account`'s proxy headers when the read needs them
   * (PROTOCOL.md §1.4) — metered against the request budget for `opts.draw` (default `person`; `site` for
   * a read a page's request needs, `reserve` for panic's); the answer validated by
   * `PERPS_READ_ANSWERS[name]` (`Perps.InvalidAnswerError` otherwise). `opts.timeoutMs` this read's
   * deadline (ms). Not gated (nothing is signed). Throws `KeyNotFoundError` (no proxy), `WeightBudgetError`,
   * the gateway's typed error, `Http.NetworkError` (no answer).
   */
  async perpsRead<N extends PerpsReadName>(
    account: string | undefined,
    name: N,
    query?: Record<string, string | number | undefined>,
    opts: { timeoutMs?: number; draw?: Drawer } = {},
  ): Promise<PerpsReadAnswer<N>> {
    const { perpsUrl } = await this.o.settings();
    const r = PERPS_READS[name];
    let auth: { proxy: string; secret: string } | undefined;
    if (r.auth === 'proxy-headers') {
      const p = await this.o.vault.proxyFor(account ?? '');
      auth = { proxy: p.info.proxy, secret: p.secret };
    }
    this.o.meter.take(perpsUrl, r.weight, 0, opts.draw ?? 'person');
    return perpsRead(perpsUrl, name, {
      ...(auth ? { auth } : {}),
      ...(query ? { query } : {}),
      fetchFn: this.transport.fetchFor(opts.timeoutMs),
    });
  }

  /**
   * The public book of a perps instrument (`GET /v1/info/book`, not metered): `[price, quantity]` levels,
   * best first, validated. Throws `BaseError` (no book: not 200) or `Perps.InvalidAnswerError`.
   */
  async perpsBook(iid: number): Promise<Book> {
    const { perpsUrl } = await this.o.settings();
    const res = await requestJson(
      `${perpsUrl}/v1/info/book?instrument_id=${iid}`,
      { method: 'GET' },
      this.transport.fetchFn,
    );
    if (res.status !== 200) throw new BaseError('The gateway has no book for this instrument.');
    return parsePerpsAnswer('book', res.body);
  }

  /** The midpoint of an order-book token at the settings' exchange URL (`readClobMid`, `lib/clob/reads.ts`). */
  async clobMid(tokenId: string): Promise<string | undefined> {
    return readClobMid((await this.o.settings()).clobUrl, tokenId, this.transport.fetchFn);
  }

  /** The best bid and ask of a token's book at the settings' exchange URL (`readClobTop`, `lib/clob/reads.ts`). */
  async clobTop(tokenId: string): Promise<{ bid?: string; ask?: string }> {
    return readClobTop((await this.o.settings()).clobUrl, tokenId, this.transport.fetchFn);
  }

  /**
   * The market of `tokenId` at the settings' exchange URL (`readClobMarket`): tick size and negative-risk
   * flag, read once per exchange URL and token (a failed read is not kept). Throws what `readClobMarket` throws.
   */
  clobMarket(tokenId: string): Promise<ClobMarket> {
    return this.o.settings().then(({ clobUrl }) => {
      const key = `${clobUrl}|${tokenId}`;
      let m = this.markets.get(key);
      if (!m) {
        m = readClobMarket(clobUrl, tokenId, this.transport.fetchFn);
        m.catch(() => this.markets.delete(key));
        this.markets.set(key, m);
      }
      return m;
    });
  }

  /**
   * Maker/taker amounts of order requests at each token's tick size (nothing signed): what an approval
   * shows before the orders are built and signed.
   */
  async clobQuote(orders: readonly ClobOrderRequest[]) {
    const out = [];
    for (const req of orders) {
      const m = await this.clobMarket(req.tokenId);
      out.push({ ...m, amounts: orderRequestAmounts({ ...req, tickSize: m.tickSize }) });
    }
    return out;
  }

  /**
   * The collateral (USDC) balance of `account` at the order-book exchange (`GET /balance-allowance`,
   * `asset_type=COLLATERAL`; PROTOCOL.md §3.1) as a decimal string; undefined when the answer is not a
   * base-unit integer. Used to propose a standing grant's caps.
   */
  async clobCollateral(account: string): Promise<string | undefined> {
    const { info } = await this.o.vault.clobCredentials(account);
    const r = v.safeParse(
      clobBalanceSchema,
      await this.o.clobRead(account, `/balance-allowance?asset_type=COLLATERAL&signature_type=${info.signatureType}`),
    );
    return r.success ? fromUnits(BigInt(r.output.balance), 6) : undefined;
  }

  /**
   * The first page of `account`'s order-book trades (`GET /data/trades`, newest first; PROTOCOL.md §3.1),
   * each as the person reads it (`ownClobTrade`: the account's own order in the trade, maker or taker,
   * found by its API key — compared here, never returned — or the account and funder addresses).
   * Throws `ClobMalformedAnswerError` when the page has another shape.
   */
  async clobTrades(account: string): Promise<{ data: ClobTrade[] }> {
    const page = parseClobAnswer(
      clobTradesWirePageSchema,
      await this.o.clobRead(account, '/data/trades?next_cursor=MA%3D%3D'),
      'trades',
    );
    const { info, apiKey } = await this.o.vault.clobCredentials(account);
    return { data: ownClobTradesPage(page, apiKey, info.funder ? [account, info.funder] : [account]) };
  }

  /**
   * Open order-book orders of `account`: every page of `GET /data/orders` (cursor `MA==` first, `LTE=`
   * after the last page; PROTOCOL.md §3.1), at most 20 pages. Returns the venue's order objects, each
   * validated by `clobOpenOrderSchema` (a malformed page throws `ClobMalformedAnswerError`).
   */
  async clobOpenOrders(account: string): Promise<{ data: ClobOpenOrder[] }> {
    const data: ClobOpenOrder[] = [];
    let cursor = 'MA==';
    for (let i = 0; i < 20 && cursor !== 'LTE='; i++) {
      const page = parseClobAnswer(
        clobOrdersPageSchema,
        await this.o.clobRead(account, `/data/orders?next_cursor=${encodeURIComponent(cursor)}`),
        'open orders',
      );
      data.push(...page.data);
      cursor = page.next_cursor;
    }
    return { data };
  }
}
