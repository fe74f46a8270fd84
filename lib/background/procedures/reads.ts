/**
 * Popup procedures that read the gateways without a key (books, catalogue, data service, trades):
 * every answer is validated at the boundary and reduced to the fields the popup shows.
 */
import * as v from 'valibot';
import { requestJson } from '../../http/json';
import { BaseError } from '../../errors/base';
import { readSettings } from '../../settings';
import type { READ_CONTRACT } from '../../messaging/reads';
import type { ContractHandlers, ProcedureDeps } from './deps';

// Gateway answers the popup shows, validated at the boundary (only the fields shown are kept).
const decimal = v.pipe(v.string(), v.regex(/^\d{1,20}(\.\d{1,20})?$/));
const clobBookSchema = v.object({
  bids: v.array(v.object({ price: decimal, size: decimal })),
  asks: v.array(v.object({ price: decimal, size: decimal })),
  tick_size: v.union([decimal, v.number()]),
  min_order_size: decimal,
  neg_risk: v.boolean(),
});
const clobTradeSchema = v.object({
  id: v.pipe(v.string(), v.maxLength(100)),
  side: v.picklist(['BUY', 'SELL']),
  size: decimal,
  price: decimal,
  outcome: v.pipe(v.string(), v.maxLength(60)),
  match_time: v.pipe(v.string(), v.regex(/^\d{1,13}$/)),
  trader_side: v.picklist(['TAKER', 'MAKER']),
});
const dataPositionsSchema = v.object({
  data: v.array(
    v.object({
      token_id: v.pipe(v.string(), v.regex(/^\d{1,78}$/)),
      title: v.pipe(v.string(), v.maxLength(300)),
      outcome: v.pipe(v.string(), v.maxLength(60)),
      current_size: decimal,
      avg_price: decimal,
      current_price: decimal,
      current_value: decimal,
      unrealized_pnl: v.pipe(v.string(), v.regex(/^-?\d{1,20}(\.\d{1,20})?$/)),
    }),
  ),
  pagination: v.object({ next_cursor: v.nullable(v.pipe(v.string(), v.maxLength(200))) }),
});

/** Handlers of `perps.book`, `catalogue.markets`, `clob.book`, `clob.trades` and `data.portfolio`. */
export function gatewayReads(d: Pick<ProcedureDeps, 'db' | 'service'>): ContractHandlers<typeof READ_CONTRACT> {
  const { db, service } = d;
  return {
    'perps.book': async ({ iid }) => service.perpsBook(iid),
    'catalogue.markets': async ({ q, cursor }) => {
      const { gammaUrl } = await readSettings(db);
      const qs = new URLSearchParams({ limit: '10', closed: 'false' });
      if (q) qs.set('q', q);
      if (cursor) qs.set('after_cursor', cursor);
      const res = await requestJson(`${gammaUrl}/markets/keyset?${qs}`, { method: 'GET' });
      const body = res.body as { markets?: unknown[]; next_cursor?: unknown } | undefined;
      if (res.status !== 200 || !Array.isArray(body?.markets)) throw new BaseError('The catalogue did not answer.');
      const markets = body.markets.flatMap((raw) => {
        const m = raw as Record<string, unknown>;
        try {
          // The catalogue sends these lists as JSON-encoded strings; accept arrays too (PROTOCOL.md §3.3).
          const list = (x: unknown): unknown => (Array.isArray(x) ? x : JSON.parse(String(x)));
          const tokenIds = list(m.clobTokenIds);
          const outcomes = list(m.outcomes);
          if (!Array.isArray(tokenIds) || !Array.isArray(outcomes) || !tokenIds.every((t) => typeof t === 'string' && /^\d{1,78}$/.test(t))) return [];
          return [{ question: String(m.question ?? '').slice(0, 200), slug: String(m.slug ?? '').slice(0, 100), tokenIds: tokenIds as string[], outcomes: outcomes.map((o) => String(o).slice(0, 40)), negRisk: m.negRisk === true }];
        } catch {
          return [];
        }
      });
      return { markets, next_cursor: typeof body.next_cursor === 'string' ? body.next_cursor : null };
    },
    'clob.book': async ({ tokenId }) => {
      const { clobUrl } = await readSettings(db);
      const [res, fee] = await Promise.all([
        requestJson(`${clobUrl}/book?token_id=${tokenId}`, { method: 'GET' }),
        requestJson(`${clobUrl}/fee-rate?token_id=${tokenId}`, { method: 'GET' }).catch(() => undefined),
      ]);
      const b = v.safeParse(clobBookSchema, res.body);
      if (res.status !== 200 || !b.success) throw new BaseError('The exchange has no order book for this token.');
      // The venue lists bids ascending and asks descending (best last): best first here, 10 levels.
      const best = (xs: { price: string; size: string }[]) => xs.slice(-10).reverse().map((l) => [l.price, l.size] as [string, string]);
      const feeBps = (fee?.body as { base_fee?: unknown } | undefined)?.base_fee;
      return {
        tickSize: String(b.output.tick_size),
        minSize: b.output.min_order_size,
        negRisk: b.output.neg_risk,
        bestBid: b.output.bids.at(-1)?.price ?? null,
        bestAsk: b.output.asks.at(-1)?.price ?? null,
        bids: best(b.output.bids),
        asks: best(b.output.asks),
        feeRateBps: typeof feeBps === 'number' && Number.isFinite(feeBps) && feeBps >= 0 ? feeBps : 0,
      };
    },
    'clob.trades': async ({ account }) => {
      const page = (await service.clobTrades(account)) as { data?: unknown };
      const rows = v.safeParse(v.array(clobTradeSchema), page?.data);
      if (!rows.success) throw new BaseError('The exchange answered trades in an unexpected shape.');
      return rows.output.slice(0, 50);
    },
    'data.portfolio': async ({ account, cursor }) => {
      const { dataUrl } = await readSettings(db);
      const qs = new URLSearchParams({ user: account, limit: '20', ...(cursor ? { cursor } : {}) });
      const [pos, val] = await Promise.all([
        requestJson(`${dataUrl}/v2/positions?${qs}`, { method: 'GET' }),
        requestJson(`${dataUrl}/v2/value?user=${account}`, { method: 'GET' }),
      ]);
      const p = v.safeParse(dataPositionsSchema, pos.body);
      if (pos.status !== 200 || !p.success) throw new BaseError('The data service did not answer positions.');
      const value = (val.body as { data?: { value?: unknown } | null } | undefined)?.data?.value;
      return { positions: p.output.data, value: typeof value === 'string' || typeof value === 'number' ? String(value) : null, next_cursor: p.output.pagination.next_cursor };
    },
  };
}
