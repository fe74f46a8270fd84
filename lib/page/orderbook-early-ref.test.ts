/**
 * An order-book request's market-channel reference starts as it arrives, for the tokens its origin's live grant covers
 * (the grant check then takes it): the `PING` is under way while the orders are built. An origin without a grant makes
 * the channel send nothing.
 */
import { describe, expect, it } from 'vitest';
import { PageReads } from './reads';
import { OrderBookMethods } from './orderbook';
import { Coverage } from './coverage';
import { ClobStreamReference } from '../streams/reference';
import type { ClobStreamEvent } from '../streams/clob';
import type { ProviderDeps } from './context';

const GRANTED = 'https://granted.example';

/** The page's order-book methods over a live market channel holding token T's book, counting its PINGs. */
function methods() {
  const reference = new ClobStreamReference();
  reference.connection(true);
  const book = { kind: 'book', tokenId: 'T', bids: [['0.49', '10']], asks: [['0.51', '10']] };
  reference.event(book as unknown as ClobStreamEvent);
  const seen = { pings: 0, pingsWhenBuilt: -1 };
  const ping = () => (seen.pings++, reference.pinged(), setTimeout(() => reference.ponged(), 1), true);
  const grantBooks = { ref: (t: string) => reference.judge(t, ping, 50) };
  const grants = {
    clobMarketsHeld: (origin: string) => new Set(origin === GRANTED ? ['T'] : []),
    decide: async (_o: string, _a: string, _r: unknown, ref: (m: string) => Promise<unknown>) => (
      await ref('T'),
      undefined
    ),
    integrityFailed: false,
  };
  const service = {
    prepareClob: async () => {
      seen.pingsWhenBuilt = seen.pings;
      throw new Error('the bench of this test stops at the build');
    },
    reads: { clobMid: () => Promise.reject(new Error('no REST read')), clobTop: () => Promise.reject(new Error('no')) },
  };
  const d = { grants, service, grantBooks, db: undefined } as unknown as ProviderDeps;
  const submissions = { keyed: (_k: unknown, _p: unknown, run: (b?: unknown) => Promise<unknown>) => run(undefined) };
  const m = new OrderBookMethods({
    d,
    consent: {} as never,
    coverage: new Coverage(d),
    reads: new PageReads(d),
    submissions: submissions as never,
  });
  const post = (origin: string) =>
    m
      .post({ origin, ticket: {}, session: { granted: { address: '0xabc' } } } as never, {
        orders: [{ tokenId: 'T', side: 'BUY', price: '0.5', size: '1', orderType: 'GTC' }],
      })
      .catch(() => undefined);
  return { post, seen };
}

describe("an order-book request's market-channel reference", () => {
  it("goes before the request's orders are built when its origin's grant covers the token", async () => {
    const { post, seen } = methods();
    await post(GRANTED);
    expect(seen.pingsWhenBuilt, 'the PING was sent before the build').toBe(1);
  });

  it('is never started for an origin that holds no grant', async () => {
    const { post, seen } = methods();
    for (let i = 0; i < 20; i++) await post('https://ungranted.example');
    expect(seen.pings).toBe(0);
  });
});
