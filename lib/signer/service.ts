/**
 * The background signing service (issue #4 §5): given a validated command and the account, picks the
 * right key (proxy for trading, owner for transfer / withdraw / proxy issuance and deletion —
 * PROTOCOL.md §1.3), signs, submits to the configured gateway, classifies the answer, and appends an
 * audit entry (what, for which origin, when, result — never a secret).
 *
 * Retries (PROTOCOL.md §2.4): fund-moving commands (withdraw, internal transfer) are **never** retried;
 * a missing answer throws `OutcomeUnknownError` and must be reconciled through the history reads.
 * Order-book orders are resent unchanged (same signature) on 425 (exponential backoff with jitter),
 * 429 (honouring `Retry-After`) and 500 "order timed out"; never on 503.
 * A client-side weight meter per gateway refuses a perps command before the gateway would answer 429.
 */
import type { Address, Hex, LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BaseError } from '../errors/base';
import { NetworkError } from '../http/json';
import { SlidingWindow } from '../ratelimit/sliding-window';
import { createProxy, deleteProxy as deleteProxyCommand, type PerpsCommand } from '../perps/commands';
import { signPerpsCommand, type PerpsEnvelope } from '../perps/envelope';
import { fetchPerpsDomains, perpsRead, sendPerpsCommand } from '../perps/client';
import type { PerpsReadName } from '../perps/reads';
import { PERPS_READS } from '../perps/reads';
import type { PerpsCommandDomain, PerpsWithdrawDomain } from '../perps/signing';
import { buildL2Headers, type L2Headers } from '../clob/auth';
import { orderRequestAmounts } from '../clob/amounts';
import type { ClobOrderRequest } from '../clob/request';
import { clobL2Request, createOrDeriveApiKey } from '../clob/client';
import { ClobError, parseBatchResults, type BatchOrderResult } from '../clob/errors';
import { buildClobOrder, clobOrderDigest, exchangeAddress, signClobOrder, toPostOrderBody, toPostOrdersBody, type PostOrderBody } from '../clob/order';
import { requestJson } from '../http/json';
import type { AuditEntry, VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';

/** Gateway settings (issue #4 §1: settings store). URLs are service roots. */
export type GatewaySettings = { perpsUrl: string; clobUrl: string; clobChainId: number };

/** Thrown when a fund-moving command got no answer: it may or may not have happened. */
export class OutcomeUnknownError extends BaseError {
  override name = 'Signer.OutcomeUnknownError';
  constructor(what: string, cause: unknown) {
    super(`No answer from the gateway: the ${what} may or may not have happened. Check the history before trying again.`, { cause });
  }
}

/** Thrown when a command would exceed the gateway's weight budget (refused before sending). */
export class WeightBudgetError extends BaseError {
  override name = 'Signer.WeightBudgetError';
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number) {
    super(`Slow down: this would exceed the gateway's rate budget. Try again in ${Math.ceil(retryAfterMs / 1000)} s.`);
    this.retryAfterMs = retryAfterMs;
  }
}

export type { ClobOrderRequest };

/** Budgets the client meter keeps per gateway (the sandbox's defaults; the real ones are unshown). */
export const CLIENT_WEIGHT_BUDGETS = {
  request: { limit: 1_200, windowMs: 60_000 },
  action: { limit: 600, windowMs: 60_000 },
};

export type SigningServiceOptions = {
  vault: Vault;
  db: VaultDb;
  settings: () => Promise<GatewaySettings>;
  fetchFn?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
};

export class SigningService {
  private readonly domains = new Map<string, Promise<{ domain: PerpsCommandDomain; withdrawDomain: PerpsWithdrawDomain }>>();
  private readonly requestMeter = new SlidingWindow(CLIENT_WEIGHT_BUDGETS.request);
  private readonly actionMeter = new SlidingWindow(CLIENT_WEIGHT_BUDGETS.action);
  private readonly marketInfo = new Map<string, Promise<{ tickSize: string; negRisk: boolean }>>();
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly o: SigningServiceOptions) {
    this.now = o.now ?? Date.now;
    this.sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  private async audit(entry: Omit<AuditEntry, 'at'>): Promise<void> {
    await this.o.db.add('audit', { at: this.now(), ...entry });
  }

  /** Cached command and withdraw domains of the configured perps gateway (PROTOCOL.md §1.1). */
  async perpsDomains(): Promise<{ domain: PerpsCommandDomain; withdrawDomain: PerpsWithdrawDomain }> {
    const { perpsUrl } = await this.o.settings();
    let d = this.domains.get(perpsUrl);
    if (!d) {
      d = fetchPerpsDomains(perpsUrl, this.o.fetchFn);
      d.catch(() => this.domains.delete(perpsUrl));
      this.domains.set(perpsUrl, d);
    }
    return d;
  }

  private async signerFor(account: string, command: Pick<PerpsCommand, 'signer'>): Promise<LocalAccount> {
    return command.signer === 'owner' ? this.o.vault.ownerAccount(account) : (await this.o.vault.proxyFor(account)).signer;
  }

  private meter(gateway: string, request: number, action: number): void {
    const t = this.now();
    const wait = Math.max(this.requestMeter.check(gateway, request, t), this.actionMeter.check(gateway, action, t));
    if (wait > 0) throw new WeightBudgetError(wait);
    this.requestMeter.record(gateway, request, t);
    this.actionMeter.record(gateway, action, t);
  }

  /** Signs `command` for `account` with the right key; returns the envelope (nothing sent). */
  async perpsSign(account: string, command: PerpsCommand, opts: { exp?: number } = {}): Promise<PerpsEnvelope> {
    const signer = await this.signerFor(account, command);
    const { domain, withdrawDomain } = await this.perpsDomains();
    return signPerpsCommand(signer, { command, domain, withdrawDomain, ...(opts.exp === undefined ? {} : { exp: opts.exp }) });
  }

  /**
   * Signs and submits `command` for `account`; returns the gateway's success body. Throws the gateway's
   * typed error, `WeightBudgetError`, or (fund-moving commands without an answer) `OutcomeUnknownError`.
   */
  async perpsSend(account: string, command: PerpsCommand, opts: { origin: string; exp?: number; summary?: string }): Promise<unknown> {
    const { perpsUrl } = await this.o.settings();
    const envelope = await this.perpsSign(account, command, opts);
    this.meter(perpsUrl, command.weight.request, command.weight.action);
    const base = { origin: opts.origin, account: account.toLowerCase(), kind: `perps.${command.type}`, summary: opts.summary ?? command.type };
    try {
      const result = await sendPerpsCommand(perpsUrl, command, envelope, this.o.fetchFn);
      await this.audit({ ...base, result: 'ok' });
      return result;
    } catch (err) {
      if (err instanceof NetworkError) {
        await this.audit({ ...base, result: 'unknown' });
        if (command.type === 'withdraw' || command.type === 'internalTransfer') throw new OutcomeUnknownError(command.type === 'withdraw' ? 'withdrawal' : 'transfer', err);
        throw new OutcomeUnknownError(command.type, err);
      }
      await this.audit({ ...base, result: 'error', detail: err instanceof BaseError ? err.shortMessage : 'error' });
      throw err;
    }
  }

  /** A proxy-header read for `account` with its proxy key (PROTOCOL.md §1.4). */
  async perpsRead(account: string | undefined, name: PerpsReadName, query?: Record<string, string | number | undefined>): Promise<unknown> {
    const { perpsUrl } = await this.o.settings();
    const r = PERPS_READS[name];
    let auth: { proxy: string; secret: string } | undefined;
    if (r.auth === 'proxy-headers') {
      const p = await this.o.vault.proxyFor(account ?? '');
      auth = { proxy: p.info.proxy, secret: p.secret };
    }
    this.meter(perpsUrl, r.weight, 0);
    return perpsRead(perpsUrl, name, { ...(auth ? { auth } : {}), ...(query ? { query } : {}), ...(this.o.fetchFn ? { fetchFn: this.o.fetchFn } : {}) });
  }

  /** The public book of a perps instrument (`GET /v1/info/book`, sandbox read). */
  async perpsBook(iid: number): Promise<unknown> {
    const { perpsUrl } = await this.o.settings();
    const res = await requestJson(`${perpsUrl}/v1/info/book?instrument_id=${iid}`, { method: 'GET' }, this.o.fetchFn);
    if (res.status !== 200) throw new BaseError('The gateway has no book for this instrument.');
    return res.body;
  }

  /**
   * Issues a new proxy key: generates it here, has the owner sign `CreateProxy`, sends it, and stores
   * the key with the secret the gateway returns. `expiry` Unix ms. Returns non-secret info only.
   */
  async issueProxy(account: string, opts: { expiry: number; label?: string; origin?: string }) {
    const privateKey = generatePrivateKey();
    const proxy = privateKeyToAccount(privateKey).address;
    const command = createProxy({ owner: account, proxy, expiry: opts.expiry, ...(opts.label ? { label: opts.label } : {}) });
    const res = (await this.perpsSend(account, command, { origin: opts.origin ?? 'extension', summary: `issue proxy ${proxy}` })) as { secret?: unknown };
    if (typeof res?.secret !== 'string' || res.secret.length === 0) throw new BaseError('The gateway did not return a proxy secret.');
    return this.o.vault.putProxy({ account, privateKey, secret: res.secret, proxy, expiry: opts.expiry, ...(opts.label ? { label: opts.label } : {}) });
  }

  /** Deletes a proxy: owner-signed deleteProxy at the gateway first, then the local record. */
  async deleteProxy(account: string, proxy: string, origin = 'extension'): Promise<void> {
    await this.perpsSend(account, deleteProxyCommand({ proxy }), { origin, summary: `delete proxy ${proxy}` });
    await this.o.vault.deleteProxy(proxy);
  }

  // ------------------------------------------------------------------------------------------
  // Order book

  /** Creates (or, when the nonce is used, derives) CLOB credentials for `account` and stores them. */
  async clobCreateOrDerive(account: string, opts: { nonce?: number } = {}) {
    const { clobUrl, clobChainId } = await this.o.settings();
    const owner = await this.o.vault.ownerAccount(account);
    const { credentials, derived } = await createOrDeriveApiKey(
      clobUrl,
      owner,
      { chainId: clobChainId, timestamp: Math.floor(this.now() / 1000), nonce: opts.nonce ?? 0 },
      this.o.fetchFn,
    );
    const info = await this.o.vault.putClobCredentials({ account, ...credentials, nonce: opts.nonce ?? 0 });
    return { info, derived };
  }

  private async market(tokenId: string): Promise<{ tickSize: string; negRisk: boolean }> {
    const { clobUrl } = await this.o.settings();
    const key = `${clobUrl}|${tokenId}`;
    let m = this.marketInfo.get(key);
    if (!m) {
      m = (async () => {
        const q = `?token_id=${encodeURIComponent(tokenId)}`;
        const [tick, neg] = await Promise.all([
          requestJson(`${clobUrl}/tick-size${q}`, { method: 'GET' }, this.o.fetchFn),
          requestJson(`${clobUrl}/neg-risk${q}`, { method: 'GET' }, this.o.fetchFn),
        ]);
        const t = (tick.body as { minimum_tick_size?: unknown })?.minimum_tick_size;
        const n = (neg.body as { neg_risk?: unknown })?.neg_risk;
        if (tick.status !== 200 || typeof t !== 'number' || !(t > 0 && t < 1) || typeof n !== 'boolean') {
          throw new BaseError('The exchange has no order book for this token.');
        }
        return { tickSize: String(t), negRisk: n };
      })();
      m.catch(() => this.marketInfo.delete(key));
      this.marketInfo.set(key, m);
    }
    return m;
  }

  /**
   * Maker/taker amounts of order requests at each token's tick size (nothing signed): what an approval
   * shows before the orders are built and signed.
   */
  async clobQuote(orders: readonly ClobOrderRequest[]) {
    const out = [];
    for (const req of orders) {
      const m = await this.market(req.tokenId);
      out.push({ ...m, amounts: orderRequestAmounts({ ...req, tickSize: m.tickSize }) });
    }
    return out;
  }

  /**
   * Builds and signs order bodies for `account` (amounts from price, size and the token's tick size;
   * the negative-risk exchange for negative-risk markets). Returns the bodies and their digests.
   */
  async clobBuildOrders(account: string, orders: readonly ClobOrderRequest[]): Promise<{ bodies: PostOrderBody[]; digests: Hex[] }> {
    const { clobChainId } = await this.o.settings();
    const creds = await this.o.vault.clobCredentials(account);
    const owner = await this.o.vault.ownerAccount(account);
    const bodies: PostOrderBody[] = [];
    const digests: Hex[] = [];
    for (const req of orders) {
      const m = await this.market(req.tokenId);
      const amounts = orderRequestAmounts({ ...req, tickSize: m.tickSize });
      const order = buildClobOrder({
        signer: owner.address,
        signatureType: creds.info.signatureType,
        ...(creds.info.funder ? { funder: creds.info.funder } : {}),
        tokenId: req.tokenId,
        side: req.side,
        makerAmount: amounts.makerAmount,
        takerAmount: amounts.takerAmount,
        timestampMs: this.now(),
      });
      const input = { chainId: clobChainId, verifyingContract: exchangeAddress({ negRisk: m.negRisk }), order };
      digests.push(clobOrderDigest(input));
      const signature = await signClobOrder(owner, input);
      bodies.push(
        toPostOrderBody({
          order,
          signature,
          owner: creds.apiKey,
          orderType: req.orderType,
          postOnly: req.postOnly ?? false,
          ...(req.expiration === undefined ? {} : { expiration: req.expiration }),
          nowMs: this.now(),
        }),
      );
    }
    return { bodies, digests };
  }

  private async l2(account: string, method: string, requestPath: string, body?: unknown): Promise<unknown> {
    const { clobUrl } = await this.o.settings();
    const creds = await this.o.vault.clobCredentials(account);
    const owner = creds.info.account as Address;
    let attempt = 0;
    for (;;) {
      try {
        return await clobL2Request(
          clobUrl,
          { address: owner, credentials: creds, method, requestPath, ...(body === undefined ? {} : { body }), timestamp: Math.floor(this.now() / 1000) },
          this.o.fetchFn,
        );
      } catch (err) {
        attempt++;
        if (!(err instanceof ClobError) || !err.retryable || attempt >= 4) throw err;
        const backoff = err.retryAfterMs ?? Math.min(8_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
        await this.sleep(backoff);
      }
    }
  }

  /**
   * Signs and posts 1-15 orders for `account` (`POST /order` for one, `POST /orders` for more) with L2
   * headers; returns one result per order (per-order exchange errors inside a 200 are results, not throws).
   */
  async clobPostOrders(account: string, orders: readonly ClobOrderRequest[], opts: { origin: string }): Promise<BatchOrderResult[]> {
    const { bodies, digests } = await this.clobBuildOrders(account, orders);
    toPostOrdersBody(bodies);
    const base = { origin: opts.origin, account: account.toLowerCase(), kind: 'clob.postOrders', summary: `${bodies.length} order(s)`, digest: digests.join(',') };
    try {
      let results: BatchOrderResult[];
      if (bodies.length === 1) {
        const r = (await this.l2(account, 'POST', '/order', bodies[0])) as { orderID: string; status: string; takingAmount: string; makingAmount: string };
        results = parseBatchResults([r], 1);
      } else {
        results = parseBatchResults(await this.l2(account, 'POST', '/orders', bodies), bodies.length);
      }
      await this.audit({ ...base, result: 'ok' });
      return results;
    } catch (err) {
      await this.audit({ ...base, result: err instanceof NetworkError ? 'unknown' : 'error', detail: err instanceof BaseError ? err.shortMessage : 'error' });
      throw err;
    }
  }

  /** Cancels order-book orders by id (`DELETE /orders`). */
  async clobCancel(account: string, orderIds: string[]): Promise<unknown> {
    return this.l2(account, 'DELETE', '/orders', orderIds);
  }

  /** Open order-book orders of `account`. */
  async clobOpenOrders(account: string): Promise<unknown> {
    return this.l2(account, 'GET', '/orders');
  }

  /**
   * The five L2 headers for a request the caller will send itself (`clob_signRequest`). The API secret
   * stays here; `timestamp` Unix seconds.
   */
  async clobSignRequest(account: string, req: { method: string; requestPath: string; body?: string }): Promise<L2Headers> {
    const creds = await this.o.vault.clobCredentials(account);
    return buildL2Headers({
      address: creds.info.account as Address,
      credentials: creds,
      timestamp: Math.floor(this.now() / 1000),
      method: req.method,
      requestPath: req.requestPath,
      ...(req.body === undefined ? {} : { body: req.body }),
    });
  }
}
