/**
 * The order-book methods: `clob_postOrders` (sign exchange orders and post them) and `clob_signRequest`
 * (L2 HMAC headers for one allowed route). A page names the orders or the route, never bytes to sign.
 *
 * `clob_postOrders` is keyed by its `idempotencyKey` (`idempotency.ts`) and covered by the origin's
 * order-book grant when the built orders are within it (`coverage.ts`): judged on what will be signed —
 * the built orders' amounts (tick-rounded price, shares, USDC); an order rounding changed is no grant's
 * to cover. Otherwise, and always for `clob_signRequest`, it asks (`consent.ts`).
 */
import { describeArtifact, type ClobArtifact } from '../signer/artifact';
import type { SigningService } from '../signer/service';
import { clobRoundingFlags } from '../approvals/rounding-flags';
import { invalidParams, unsupported } from '../errors/rpc';
import { clobGrantRequest } from '../grants/requests';
import type { OwnerInfo } from '../vault/vault';
import { TTL_TRADING_MS, type Consent } from './consent';
import { connectedAccount, type PageRequest, type ProviderDeps } from './context';
import { NOT_COVERED, type Coverage } from './coverage';
import { clobFlags } from './flags';
import { clobSubmissionKeys, type BeforeSign, type Submissions } from './idempotency';
import type { ClobOrdersParams, ClobSignParams } from './params';
import type { PageReads } from './reads';

/** What the order-book methods use (one instance each, shared with the other families). */
export type OrderBookParts = {
  d: ProviderDeps;
  consent: Consent;
  coverage: Coverage;
  reads: PageReads;
  submissions: Submissions;
};

/** The order-book page methods (see the module docstring). */
export class OrderBookMethods {
  constructor(private readonly c: OrderBookParts) {}

  /** `clob_postOrders`: one answer per order, in order (`success`, `orderID`, `status` or `errorMsg`). */
  post(req: PageRequest, p: ClobOrdersParams): Promise<unknown> {
    const account = connectedAccount(req);
    return this.c.submissions.keyed(clobSubmissionKeys(req.origin, account.address, p), p, (beforeSign) =>
      this.postOnce(req, account, p, beforeSign),
    );
  }

  /** `clob_signRequest`: the L2 headers of `method requestPath` (an `L2_PAGE_ROUTES` route) with its exact body. */
  async sign(req: PageRequest, p: ClobSignParams): Promise<unknown> {
    const { d, consent } = this.c;
    const account = connectedAccount(req);
    checkL2Route(p.method, p.requestPath);
    const l2 = { method: p.method, requestPath: p.requestPath, ...(p.body === undefined ? {} : { body: p.body }) };
    const view = await consent.approve({
      origin: req.origin,
      kind: 'l2',
      account,
      build: () => d.service.prepareL2(account.address, l2),
      flagsFor: async () => [],
      ttlMs: TTL_TRADING_MS,
      ticket: req.ticket,
    });
    return d.service.execute(view.artifact, view.digest, {
      origin: req.origin,
      summary: `${p.method} ${p.requestPath.slice(0, 100)}`,
      authority: view.authority,
    });
  }

  private async postOnce(
    req: PageRequest,
    account: OwnerInfo,
    p: ClobOrdersParams,
    beforeSign?: BeforeSign,
  ): Promise<unknown> {
    const { d, consent, coverage, reads } = this.c;
    const { origin, ticket } = req;
    const { orders } = p;
    // The market channel's reference of each token the origin's grant covers starts as the request arrives (its `PING`
    // under way while the orders are built); the grant check below takes it. A site without a grant sends no PING.
    const covered = d.grants?.clobMarketsHeld(origin, account.address);
    const refs = covered?.size
      ? reads.startClobRefs(orders.flatMap((o) => (covered.has(o.tokenId) ? [o.tokenId] : [])))
      : undefined;
    // Judged on what will be signed: the built orders' amounts (tick-rounded price, shares, USDC). An order
    // rounding changed (a price off the tick the exchange reports, a size past 2 decimals) is no grant's to cover.
    const built: ClobArtifact | undefined = d.grants ? await d.service.prepareClob(account.address, orders) : undefined;
    const rounded = built !== undefined && clobRoundingFlags(orders, built).length > 0;
    const check =
      built && !rounded
        ? await coverage.check(origin, account, clobGrantRequest(built), (m) => reads.clobRef(m, refs), ticket)
        : NOT_COVERED;
    type Results = Awaited<ReturnType<SigningService['clobPostOrders']>>;
    // The use is counted while the orders are signed; nothing is posted before it is (`beforeSend`).
    const results = await coverage.coveredOrAsk<Results>(check, 'send', {
      covered: async (grant, beforeSend) => {
        // Covered only when built (a grant check needs the built orders).
        const artifact = built;
        if (!artifact) throw new Error('a covered order-book request without its built orders');
        const { lines } = describeArtifact(artifact, await reads.symbol());
        await beforeSign?.(artifact);
        return (await d.service.execute(artifact, artifact.digest, {
          origin,
          summary: `${lines[0] ?? 'orders'} (standing permission)`,
          still: grant.still,
          ...(beforeSend ? { beforeSend } : {}),
          grantUse: grant.use,
          authority: grant.authority,
        })) as Results;
      },
      ask: async (flag) => {
        const view = await consent.approve({
          origin,
          kind: 'clob',
          account,
          build: () => d.service.prepareClob(account.address, orders),
          flagsFor: async (a) => [...(flag ? [flag] : []), ...clobFlags(orders, a)],
          ttlMs: TTL_TRADING_MS,
          ticket,
        });
        await beforeSign?.(view.artifact);
        return (await d.service.execute(view.artifact, view.digest, {
          origin,
          summary: view.lines[0] ?? 'orders',
          authority: view.authority,
        })) as Results;
      },
    });
    return results.map((r) =>
      r.ok
        ? { success: true, orderID: r.orderID, status: r.status, errorMsg: '' }
        : { success: false, orderID: r.orderID, errorMsg: r.error.exchangeMessage },
    );
  }
}

/**
 * Order-book routes a page may get L2 headers for: order placement and cancels, the
 * account's orders and trades reads, balance-allowance and heartbeats. Never the credential and
 * key-management routes (`/auth/…`): their answers carry the API secret. Queries only on reads.
 */
export const L2_PAGE_ROUTES: readonly { method: 'GET' | 'POST' | 'DELETE'; path: RegExp }[] = [
  { method: 'POST', path: /^\/orders?$/ },
  { method: 'DELETE', path: /^\/orders?$/ },
  { method: 'DELETE', path: /^\/cancel-all$/ },
  { method: 'DELETE', path: /^\/cancel-market-orders$/ },
  { method: 'GET', path: /^\/data\/(orders|trades)$/ },
  { method: 'GET', path: /^\/data\/order\/[0-9A-Za-z_-]{1,100}$/ },
  { method: 'GET', path: /^\/balance-allowance$/ },
  { method: 'POST', path: /^\/v1\/heartbeats$/ },
];

/** Throws 4200 unless `method requestPath` is one of `L2_PAGE_ROUTES`. */
export function checkL2Route(method: string, requestPath: string): void {
  const q = requestPath.indexOf('?');
  const path = q === -1 ? requestPath : requestPath.slice(0, q);
  if (/^\/+auth(\/|$)/i.test(path) || /auth/i.test(decodeURIComponentSafe(path))) {
    throw unsupported(
      'Sites cannot get L2 headers for the API-key routes (/auth/…); credentials are managed only in the extension.',
    );
  }
  if (q !== -1 && method !== 'GET') throw invalidParams('requestPath may carry a query string only with GET.');
  if (!L2_PAGE_ROUTES.some((r) => r.method === method && r.path.test(path))) {
    throw unsupported(
      `Countersign does not sign ${method} ${path.slice(0, 64)} ` +
        `for sites (order, cancel and account-read routes only).`,
    );
  }
}

/** `s` URI-decoded, or `s` itself when it is not valid URI encoding. */
function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
