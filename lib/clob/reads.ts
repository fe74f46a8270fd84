/**
 * Public order-book reads (PROTOCOL.md §3.1, keyless). The token's midpoint and the top of its book: a
 * grant's reference price is taken from them. Both come from the exchange URL in the settings, so they
 * bear each other out only against a venue that does not lie the same way in both
 * (`lib/grants/reference.ts`); answers of another shape read as absent, nothing throws on them. And the
 * token's market (tick size, negative-risk flag), which an order is built at before it is signed.
 */
import * as v from 'valibot';
import { BaseError } from '../errors/base';
import { requestJson } from '../http/json';
import { clobBookSchema, clobMidpointSchema, clobNegRiskSchema, clobTickSizeSchema } from './wire';

/**
 * A token's market as the exchange serves it: `tickSize` a decimal string (e.g. `"0.01"`), `negRisk` which exchange
 * contract its orders are signed for.
 */
export type ClobMarket = { tickSize: string; negRisk: boolean };

/**
 * The market of token `tokenId` (`GET {clobUrl}/tick-size` and `GET {clobUrl}/neg-risk`, together).
 * Throws `BaseError` ("no order book for this token") when either answer is not 200 and of its shape,
 * `NetworkError` when the exchange does not answer.
 */
export async function readClobMarket(
  clobUrl: string,
  tokenId: string,
  fetchFn: typeof fetch = fetch,
): Promise<ClobMarket> {
  const q = `?token_id=${encodeURIComponent(tokenId)}`;
  const [tick, neg] = await Promise.all([
    requestJson(`${clobUrl}/tick-size${q}`, { method: 'GET' }, fetchFn),
    requestJson(`${clobUrl}/neg-risk${q}`, { method: 'GET' }, fetchFn),
  ]);
  const t = v.safeParse(clobTickSizeSchema, tick.body);
  const n = v.safeParse(clobNegRiskSchema, neg.body);
  if (tick.status !== 200 || !t.success || !n.success)
    throw new BaseError('The exchange has no order book for this token.');
  return { tickSize: String(t.output.minimum_tick_size), negRisk: n.output.neg_risk };
}

/**
 * The midpoint of token `tokenId` (`GET {clobUrl}/midpoint`) as a decimal string, or undefined when the book is
 * one-sided. Throws `NetworkError` when the exchange does not answer.
 */
export async function readClobMid(
  clobUrl: string,
  tokenId: string,
  fetchFn: typeof fetch = fetch,
): Promise<string | undefined> {
  const res = await requestJson(
    `${clobUrl}/midpoint?token_id=${encodeURIComponent(tokenId)}`,
    { method: 'GET' },
    fetchFn,
  );
  const mid = v.safeParse(clobMidpointSchema, res.body);
  return res.status === 200 && mid.success ? mid.output.mid : undefined;
}

/**
 * The best bid and best ask of token `tokenId`'s book (`GET {clobUrl}/book`; the venue lists bids
 * ascending and asks descending, best last), as decimal strings; either absent when its side is empty
 * or the answer is not a book. Throws `NetworkError` when the exchange does not answer.
 */
export async function readClobTop(
  clobUrl: string,
  tokenId: string,
  fetchFn: typeof fetch = fetch,
): Promise<{ bid?: string; ask?: string }> {
  const res = await requestJson(`${clobUrl}/book?token_id=${encodeURIComponent(tokenId)}`, { method: 'GET' }, fetchFn);
  const b = v.safeParse(clobBookSchema, res.body);
  if (res.status !== 200 || !b.success) return {};
  const bid = b.output.bids.at(-1)?.price;
  const ask = b.output.asks.at(-1)?.price;
  return { ...(bid ? { bid } : {}), ...(ask ? { ask } : {}) };
}
