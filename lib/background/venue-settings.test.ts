/**
 * A change of venue settings ends the authority of everything started before it, and it does so before
 * the new settings are stored: whoever reads the stored settings and finds the new venue finds every
 * earlier request's authority already ended (`lib/authority/epoch.ts`, scope `all`). Every settings field
 * is either a venue field or not (`VENUE_FIELDS`): the catalogue and data service URLs are venue fields,
 * the theme is not. The real background on the fake browser; the database's settings write is observed.
 */
import 'fake-indexeddb/auto';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { readSettings } from '../settings';
import { startBackground, type Background } from './index';
import { BOUNDS, browser, callAs, KDF, type Reply } from '../../test/kits/background';

beforeEach(() => fakeBrowser.reset());

/**
 * A background whose settings writes are observed: right when a write has landed (before the procedure
 * that made it goes on), `probe` tells whether a request started before the write still holds its authority.
 */
async function observed(): Promise<{
  bg: Background;
  landed: { ended: string | undefined; perpsUrl: string }[];
  start: () => void;
}> {
  const bg = startBackground({ browser, dbName: `venue-settings-${Math.random()}`, kdf: KDF, bounds: BOUNDS });
  await bg.ready;
  const db = bg.db();
  const authority = bg.service().authority;
  let ticket = authority.capture(['all']);
  const landed: { ended: string | undefined; perpsUrl: string }[] = [];
  const realPut = db.put.bind(db);
  (db as unknown as { put: typeof db.put }).put = (async (...args: Parameters<typeof db.put>) => {
    const key = await realPut(...args);
    if (args[0] === 'settings') {
      const ended = authority.endedBy(ticket); // a request that reads the stored settings now
      landed.push({ ended, perpsUrl: (await readSettings(db)).perpsUrl });
    }
    return key;
  }) as typeof db.put;
  return { bg, landed, start: () => void (ticket = authority.capture(['all'])) };
}

describe('venue settings end authority before they are stored', () => {
  it(
    'a gateway URL change: once the new URL is stored, ' + 'a request started before it has no authority left',
    async () => {
      const { bg, landed } = await observed();
      const r = (await callAs(bg, 'settings.set', { perpsUrl: 'http://localhost:2/perps' })) as Reply;
      expect(r.ok).toBe(true);
      expect(landed).toEqual([{ ended: 'venue', perpsUrl: 'http://localhost:2/perps' }]);
    },
  );

  it('the catalogue and data service URLs are venue settings; the theme is not', async () => {
    const { bg, landed, start } = await observed();
    for (const patch of [
      { gammaUrl: 'http://localhost:2/gamma' },
      { dataUrl: 'http://localhost:2/data' },
      { theme: 'dark' },
    ]) {
      start();
      expect(((await callAs(bg, 'settings.set', patch)) as Reply).ok, JSON.stringify(patch)).toBe(true);
    }
    expect(landed.map((l) => l.ended)).toEqual(['venue', 'venue', undefined]);
  });

  it('a refused patch (an invalid URL) stores nothing and ends nothing', async () => {
    const { bg, landed } = await observed();
    const authority = bg.service().authority;
    const before = authority.capture(['all']);
    const r = (await callAs(bg, 'settings.set', { perpsUrl: 'not a url' })) as Reply;
    expect(r).toMatchObject({ ok: false, error: { name: expect.stringMatching(/Invalid/) } });
    expect(landed).toEqual([]);
    expect(authority.endedBy(before)).toBeUndefined();
  });
});
