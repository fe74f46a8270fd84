/**
 * A perps read with proxy headers asks the account's key only once its gateway is known, at the vault's lock like any
 * key read: a lock or a key deletion that resolved before the read's turn leaves it without the key, so no request
 * carries the secret after either resolved.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { KdfParams } from '../vault/crypto';
import { openVaultDb } from '../vault/db';
import { memorySessionStore, Vault } from '../vault/vault';
import { VenueReads } from './venue-reads';
import { WeightMeter } from '../ratelimit/meter';

const FAST: KdfParams = { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 };
const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };
const T0 = 1_800_000_000_000;
let n = 0;

/** A vault with a proxy key, and reads whose settings read waits for `releaseSettings()`; `sent` the requests made. */
async function setup() {
  const db = await openVaultDb(`venue-reads-keys-${n++}`);
  const vault = new Vault({ db, session: memorySessionStore(), now: () => T0, kdf: FAST, bounds: BOUNDS });
  await vault.create('correct horse battery');
  const owner = (await vault.importOwnerKey(generatePrivateKey())).address;
  const proxyKey = generatePrivateKey();
  await vault.putProxy({ account: owner, privateKey: proxyKey, secret: 'proxy-secret', expiry: T0 + 3_600_000 });
  const sent: { at: string; secret: string | null }[] = [];
  let phase = 'before';
  const fetchFn = (async (_u: string, init?: RequestInit) => {
    sent.push({ at: phase, secret: new Headers(init?.headers).get('SERVICE-SECRET') });
    return new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  let gate!: () => void;
  const settingsRead = new Promise<void>((r) => (gate = r));
  const settings = async () => (
    await settingsRead,
    { perpsUrl: 'https://perps.example', clobUrl: 'https://clob.example' }
  );
  const reads = new VenueReads({
    settings: settings as never,
    vault,
    meter: new WeightMeter(() => T0),
    clobRead: async () => undefined,
    fetchFn,
  });
  return { vault, owner, proxyKey, reads, sent, setPhase: (p: string) => (phase = p), releaseSettings: () => gate() };
}

describe('a proxy-header read asked before a lock or a key deletion resolved', () => {
  it('sends no request with the secret after the lock', async () => {
    const s = await setup();
    const read = s.reads.perpsRead(s.owner, 'openOrders').catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 5));
    await s.vault.lock();
    s.setPhase('after lock');
    s.releaseSettings();
    await read;
    expect(s.sent.filter((x) => x.at === 'after lock' && x.secret !== null)).toEqual([]);
  });

  it('sends no request with the deleted secret', async () => {
    const s = await setup();
    const read = s.reads.perpsRead(s.owner, 'openOrders').catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 5));
    await s.vault.deleteProxy(privateKeyToAccount(s.proxyKey).address);
    s.setPhase('after delete');
    s.releaseSettings();
    await read;
    expect(s.sent.filter((x) => x.at === 'after delete' && x.secret !== null)).toEqual([]);
  });
});
