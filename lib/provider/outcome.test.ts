/**
 * An order-book submission whose answer never came (issue #20): the page's unknown-outcome error names
 * the orders' hashes (`data.orderHashes`, the EIP-712 digests that were signed), which is what the
 * typed dapp client reads as `OutcomeUnknownError.orderHashes`. The real background on the fake browser
 * against the in-process sandbox, with the venue's answer dropped on the wire.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { startHarness, type Harness } from '../sandbox/testkit';
import { startBackground } from '../background/index';
import { BOUNDS, browser, KDF, onboardDemo, waitPending, withPages } from '../background/testkit';
import { toCountersignError, OutcomeUnknownError } from '../dapp/errors';

const SITE = 'https://trade.example';
const page = { get id() { return fakeBrowser.runtime.id; }, url: `${SITE}/app`, frameId: 0, tab: { id: 3, url: `${SITE}/app` } };
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ now: undefined });
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  fakeBrowser.reset();
  h.clock.now = Date.now();
});

describe('unknown outcome of an order-book post', () => {
  it('carries the signed order hashes to the page, and the typed client reads them', async () => {
    let drop = false;
    const fetchFn: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (drop && init?.method === 'POST' && /\/clob\/orders?$/.test(String(input))) throw new TypeError('fetch failed: socket hang up (ECONNRESET)');
      return res;
    };
    const bg = withPages(startBackground({ browser, dbName: 'outcome-1', kdf: KDF, bounds: BOUNDS, fetchFn }));
    await onboardDemo(bg, h, page, { connect: true });
    const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
    drop = true;
    const lost = bg.page(page).request('clob_postOrders', { orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }], idempotencyKey: 'k-1' }).catch((e: unknown) => e);
    const [view] = await waitPending(bg);
    const hashes = [...(view!.artifact?.signDigests ?? [])];
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    const err = await lost;
    expect(err).toMatchObject({ code: -32002, data: { command: 'postOrders', orderHashes: hashes.join(',') } });
    const typed = toCountersignError(err);
    expect(typed).toBeInstanceOf(OutcomeUnknownError);
    expect((typed as OutcomeUnknownError).orderHashes).toEqual(hashes);
  });
});
