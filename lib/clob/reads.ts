/**
 * Public order-book reads a grant's reference price is taken from (PROTOCOL.md §3.1, keyless): the
 * token's midpoint and the top of its book. Both come from the exchange URL in the settings, so they
 * bear each other out only against a venue that does not lie the same way in both
 * (`lib/grants/reference.ts`). Answers of another shape read as absent; nothing throws on them.
 */
import * as v from 'valibot';
import { requestJson } from '../http/json';
import { clobBookSchema, clobMidpointSchema } from './wire';

/** The midpoint of token `tokenId` (`GET {clobUrl}/midpoint`) as a decimal string, or undefined when the book is one-sided. Throws `NetworkError` when the exchange does not answer. */
export async function readClobMid(clobUrl: string, tokenId: string, fetchFn: typeof fetch = fetch): Promise<string | undefined> {
  const res = await requestJson(`${clobUrl}/midpoint?token_id=${encodeURIComponent(tokenId)}`, { method: 'GET' }, fetchFn);
  const mid = v.safeParse(clobMidpointSchema, res.body);
  return res.status === 200 && mid.success ? mid.output.mid : undefined;
}

/**
 * The best bid and best ask of token `tokenId`'s book (`GET {clobUrl}/book`; the venue lists bids
 * ascending and asks descending, best last), as decimal strings; either absent when its side is empty
 * or the answer is not a book. Throws `NetworkError` when the exchange does not answer.
 */
export async function readClobTop(clobUrl: string, tokenId: string, fetchFn: typeof fetch = fetch): Promise<{ bid?: string; ask?: string }> {
  const res = await requestJson(`${clobUrl}/book?token_id=${encodeURIComponent(tokenId)}`, { method: 'GET' }, fetchFn);
  const b = v.safeParse(clobBookSchema, res.body);
  if (res.status !== 200 || !b.success) return {};
  const bid = b.output.bids.at(-1)?.price;
  const ask = b.output.asks.at(-1)?.price;
  return { ...(bid ? { bid } : {}), ...(ask ? { ask } : {}) };
}
