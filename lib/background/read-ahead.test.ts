import { describe, expect, it } from 'vitest';
import { Authority } from '../authority/epoch';
import { READ_AHEAD_MS, ReadAhead, readsAfterWatch, type AheadRead, type WatchSeen } from './read-ahead';

const ACCOUNT = '0x00000000000000000000000000000000000000Aa';
const cold: WatchSeen = { asked: { perpsIid: 2, account: ACCOUNT }, answer: { perpsBook: null, perpsAccount: null } };

/** A ReadAhead over a fake venue: each read answers `n` (its number), or fails when `fail` says so. */
function ahead(fail: (r: AheadRead) => boolean = () => false) {
  let t = 1_000;
  const sent: AheadRead[] = [];
  const authority = new Authority();
  const ra = new ReadAhead(
    async (r) => {
      sent.push(r);
      if (fail(r)) throw new Error('the venue did not answer');
      return { n: sent.length, name: r.name };
    },
    authority,
    () => t,
  );
  return { ra, sent, authority, later: (ms: number) => (t += ms) };
}

describe('reads ahead of a popup on a cold worker', () => {
  it('reads what the first watch did not bring: a book at most 1 s old, the account of a live session', () => {
    expect(readsAfterWatch(cold)).toEqual([
      { name: 'book', query: { instrument_id: 2, depth: 10 } },
      { account: ACCOUNT, name: 'portfolio' },
      { account: ACCOUNT, name: 'openOrders' },
    ]);
    const warm = { ...cold, answer: { perpsBook: { ageMs: 40 }, perpsAccount: { portfolio: {} } } };
    expect(readsAfterWatch(warm)).toEqual([]);
    const staleBook = { ...warm, answer: { ...warm.answer, perpsBook: { ageMs: 1_500 } } };
    expect(readsAfterWatch(staleBook).map((r) => r.name)).toEqual(['book']);
    expect(readsAfterWatch({ asked: {}, answer: cold.answer })).toEqual([]);
  });

  it("answers the popup's matching read once, from the read started at the watch", async () => {
    const { ra, sent } = ahead();
    await ra.watch(cold.asked, async () => cold.answer);
    expect(sent).toHaveLength(3);
    const book = ra.take({ name: 'book', query: { depth: 10, instrument_id: 2 } }); // any order of the query
    expect(await book).toEqual({ n: 1, name: 'book' });
    expect(ra.take({ name: 'book', query: { depth: 10, instrument_id: 2 } })).toBeUndefined();
    expect(await ra.take({ account: ACCOUNT.toLowerCase(), name: 'portfolio' })).toEqual({ n: 2, name: 'portfolio' });
  });

  it("never answers another account's read, another query, or a read of another name", async () => {
    const { ra } = ahead();
    await ra.watch(cold.asked, async () => cold.answer);
    expect(ra.take({ account: '0x00000000000000000000000000000000000000bb', name: 'portfolio' })).toBeUndefined();
    expect(ra.take({ name: 'book', query: { instrument_id: 2, depth: 20 } })).toBeUndefined();
    expect(ra.take({ name: 'book', query: { instrument_id: 3, depth: 10 } })).toBeUndefined();
    expect(ra.take({ account: ACCOUNT, name: 'fills' })).toBeUndefined();
  });

  it('answers nothing older than 1 s, and nothing that failed', async () => {
    const { ra, later } = ahead((r) => r.name === 'portfolio');
    await ra.watch(cold.asked, async () => cold.answer);
    await new Promise((r) => setTimeout(r, 0));
    expect(ra.take({ account: ACCOUNT, name: 'portfolio' })).toBeUndefined();
    later(READ_AHEAD_MS + 1);
    expect(ra.take({ name: 'book', query: { instrument_id: 2, depth: 10 } })).toBeUndefined();
  });

  it('a lock, an account switch or a venue change drops every read ahead: none answers across it', async () => {
    for (const end of [
      (a: Authority) => a.end('all', 'lock'),
      (a: Authority) => a.end('person', 'account'),
      (a: Authority) => a.end('all', 'venue'),
      (a: Authority) => a.end('person', 'session'),
    ]) {
      const { ra, authority } = ahead();
      await ra.watch(cold.asked, async () => cold.answer);
      end(authority);
      expect(ra.take({ account: ACCOUNT, name: 'portfolio' })).toBeUndefined();
      expect(ra.take({ name: 'book', query: { instrument_id: 2, depth: 10 } })).toBeUndefined();
    }
    // A site's authority ending (a disconnect) is not the person's: the popup's reads stay.
    const { ra, authority } = ahead();
    await ra.watch(cold.asked, async () => cold.answer);
    authority.end('origin:https://site.example', 'disconnect');
    expect(ra.take({ account: ACCOUNT, name: 'portfolio' })).toBeDefined();
  });

  it('a lock while the watch is being answered starts no read ahead', async () => {
    const { ra, sent, authority } = ahead();
    const answer = await ra.watch(cold.asked, async () => {
      authority.end('all', 'lock');
      return cold.answer;
    });
    expect(answer).toBe(cold.answer);
    expect(sent).toEqual([]);
  });

  it('a second watch while reads are ahead sends no read twice', async () => {
    const { ra, sent } = ahead();
    await ra.watch(cold.asked, async () => cold.answer);
    await ra.watch(cold.asked, async () => cold.answer);
    expect(sent).toHaveLength(3);
  });
});
