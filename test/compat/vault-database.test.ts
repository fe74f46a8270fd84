/**
 * A vault database written by an earlier build (`test/fixtures/vault/schema-v2.json`, made by
 * `test/fixtures/vault/make.ts` before the code was restructured) opens with the code of the day,
 * unlocks with its password and still holds everything: the owner keys (they sign as their addresses),
 * the proxy key with its secret, the order-book and builder credentials, the grants with their uses,
 * the settings and connections, and an audit chain that verifies. A fixture altered on disk is refused.
 * Only the vault's public API is used, so the test holds across moves inside `lib/vault`.
 */
import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { recoverMessageAddress, recoverTypedDataAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { openVaultDb } from '../../lib/vault/db';
import { memorySessionStore, Vault } from '../../lib/vault/vault';
import { grantUseRecords } from '../../lib/grants/use-records';
import { auditLog, checkAudit, pageAudit, type AuditCheck } from '../../lib/audit';
import { readSettings } from '../../lib/settings';
import { fromUnits, toUnits } from '../../lib/decimal';
import { decode, encode, loadDatabase, type Fixture } from '../fixtures/vault/codec';
import { AT, CLOB, DB, DEPOSIT, grants, KDF, OWNER_KEY, PASSWORD, PROXY, USED } from '../fixtures/vault/scenario';

const FIXTURE = new URL('../fixtures/vault/schema-v2.json', import.meta.url);
const OWNER = privateKeyToAccount(OWNER_KEY).address;
let n = 0;

/**
 * Loads the fixture (after `alter`, which may change its records) under a fresh name and opens it as the extension
 * does.
 */
async function open(alter: (f: Fixture) => void = () => undefined) {
  const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Fixture;
  alter(fixture);
  const dump = fixture.databases.find((d) => d.name === DB);
  if (!dump) throw new Error(`the fixture holds no ${DB} database`);
  const name = `${DB}-compat-${n++}`;
  await loadDatabase({ ...dump, name });
  const db = await openVaultDb(name);
  const clock = { now: AT + 10 * 60_000 };
  const vault = new Vault({ db, session: memorySessionStore(), now: () => clock.now, kdf: KDF });
  const log = auditLog(db, () => vault.auditKey(), { now: () => clock.now });
  return { db, vault, log, clock };
}

/**
 * Replaces the value of record `key` in store `store` of the fixture's vault database with `change(value)` (decoded
 * values).
 */
function alterRecord(
  f: Fixture,
  store: string,
  key: unknown,
  change: (value: Record<string, unknown>) => unknown,
): void {
  const s = f.databases.find((d) => d.name === DB)?.stores.find((x) => x.name === store);
  const rec = s?.records.find(([k]) => decode(k) === key);
  if (!rec) throw new Error(`no record ${String(key)} in ${store}`);
  rec[1] = encode(change(decode(rec[1]) as Record<string, unknown>));
}

/** Flips one bit of the first ciphertext byte of a sealed value (`{ iv, ct }`). */
const flip = (sealed: unknown) => {
  const { iv, ct } = sealed as { iv: Uint8Array; ct: Uint8Array };
  const out = ct.slice();
  out[0] = (out[0] ?? 0) ^ 1;
  return { iv, ct: out };
};

/** The audit check once a full check (run in the background) has finished. */
async function fullCheck(log: ReturnType<typeof auditLog>): Promise<AuditCheck> {
  let c = await checkAudit(log, { full: true });
  for (let i = 0; c.state === 'checking' && i < 200; i++) {
    await new Promise((r) => setTimeout(r, 10));
    c = await checkAudit(log);
  }
  return c;
}

describe('a vault database written by an earlier build', () => {
  it('opens locked, refuses a wrong password and unlocks with the right one', async () => {
    const { vault, clock } = await open();
    expect(await vault.status()).toMatchObject({ initialized: true, unlocked: false, state: 'locked' });
    await expect(vault.unlock('not the password')).rejects.toMatchObject({ name: 'Vault.WrongPasswordError' });
    clock.now += 1_000;
    await vault.unlock(PASSWORD);
    expect((await vault.status()).state).toBe('unlocked');
  });

  it('keeps both owner keys, and each signs as its address', async () => {
    const { vault } = await open();
    const owners = await vault.listOwners();
    expect(owners.map((o) => o.label).sort()).toEqual(['main', 'spare']);
    expect(owners.find((o) => o.label === 'main')?.address).toBe(OWNER);
    await vault.unlock(PASSWORD);
    for (const o of owners) {
      const account = await vault.ownerAccount(o.address);
      const message = `countersign compat ${o.address}`;
      expect(await recoverMessageAddress({ message, signature: await account.signMessage({ message }) })).toBe(
        o.address,
      );
    }
  });

  it('keeps the proxy key with its secret, and the proxy key signs typed data as the proxy address', async () => {
    const { vault } = await open();
    await vault.unlock(PASSWORD);
    const { info, signer, secret } = await vault.proxyFor(OWNER);
    expect(info).toMatchObject({
      account: OWNER,
      proxy: privateKeyToAccount(PROXY.privateKey).address,
      expiry: PROXY.expiry,
      label: PROXY.label,
    });
    expect(secret).toBe(PROXY.secret);
    const typed = {
      domain: { name: 'Compat', version: '1', chainId: 80002 },
      types: { Ping: [{ name: 'n', type: 'uint256' }] },
      primaryType: 'Ping',
      message: { n: 1n },
    } as const;
    expect(await recoverTypedDataAddress({ ...typed, signature: await signer.signTypedData(typed) })).toBe(info.proxy);
  });

  it('keeps the order-book API credentials and the deposit wallet with its builder credentials', async () => {
    const { vault } = await open();
    await vault.unlock(PASSWORD);
    expect(await vault.clobCredentials(OWNER)).toMatchObject({
      apiKey: CLOB.apiKey,
      secret: CLOB.secret,
      passphrase: CLOB.passphrase,
      info: { account: OWNER, nonce: CLOB.nonce, signatureType: CLOB.signatureType, funder: null },
    });
    expect(await vault.storedKeys(OWNER)).toEqual({ proxy: true, expiredProxy: false, clob: true });
    expect(await vault.depositWallet(OWNER)).toMatchObject({
      account: OWNER,
      wallet: DEPOSIT.wallet,
      kind: DEPOSIT.kind,
    });
    expect(await vault.builderCredentials(OWNER)).toEqual(DEPOSIT.builder);
  });

  it('keeps the grants with every use, their recorded orders and the amounts used', async () => {
    const { vault } = await open();
    await vault.unlock(PASSWORD);
    const stored = await grantUseRecords(vault).listGrants();
    const expected = grants(OWNER);
    expect(stored.map((g) => g.grant.id).sort()).toEqual(expected.map((g) => g.grant.id).sort());
    for (const { grant, uses } of expected) {
      const got = stored.find((g) => g.grant.id === grant.id);
      expect(got?.grant).toEqual(grant);
      expect(got?.uses).toEqual(uses);
      const used = (got?.uses ?? []).reduce((sum, u) => sum + (toUnits(u.notional, 6) ?? 0n), 0n);
      expect(fromUnits(used, 6)).toBe(USED[grant.id]);
    }
  });

  it('keeps the settings and the connected site', async () => {
    const { db } = await open();
    expect(await readSettings(db)).toMatchObject({ autoLockMinutes: 30, theme: 'dark', slippageBps: 50 });
    expect(await db.get('connections', 'https://trade.example')).toEqual({
      origin: 'https://trade.example',
      accounts: [OWNER],
      connectedAt: AT,
    });
  });

  it('keeps an audit chain that verifies in full, with the entry recorded while locked marked as such', async () => {
    const { vault, log } = await open();
    expect((await checkAudit(log)).state).toBe('locked');
    await vault.unlock(PASSWORD);
    expect(await fullCheck(log)).toMatchObject({ ok: true, state: 'ok', count: 7, unauthenticated: 0, pending: 0 });
    const page = await pageAudit(log, { limit: 50 });
    expect(page.entries.map((e) => [e.kind, e.status])).toEqual([
      ['perps.createOrders', 'ok'],
      ['grant.create', 'ok'],
      ['grant.create', 'ok'],
      ['clob.postOrders', 'locked'],
      ['perps.createOrders', 'ok'],
      ['perps.createOrders', 'ok'],
      ['connect', 'ok'],
    ]);
  });
});

describe('the earlier build’s database, altered on disk', () => {
  it('a flipped bit in the sealed proxy record is refused as tampered; nothing is opened from it', async () => {
    const proxyId = `proxy:${privateKeyToAccount(PROXY.privateKey).address.toLowerCase()}`;
    const { vault } = await open((f) => alterRecord(f, 'secrets', proxyId, (r) => ({ ...r, sealed: flip(r.sealed) })));
    await vault.unlock(PASSWORD);
    await expect(vault.proxyFor(OWNER)).rejects.toMatchObject({ name: 'Vault.TamperedRecordError' });
  });

  it('a flipped bit in the wrapped master key refuses the right password as wrong', async () => {
    const { vault } = await open((f) => alterRecord(f, 'meta', 'vault', (r) => ({ ...r, wrapped: flip(r.wrapped) })));
    await expect(vault.unlock(PASSWORD)).rejects.toMatchObject({ name: 'Vault.WrongPasswordError' });
    expect((await vault.status()).unlocked).toBe(false);
  });

  it('a flipped bit in a grant use bucket refuses the grant list as tampered', async () => {
    const { vault } = await open((f) =>
      alterRecord(f, 'secrets', 'grantuse:g-perps-1:0030000001', (r) => ({ ...r, sealed: flip(r.sealed) })),
    );
    await vault.unlock(PASSWORD);
    await expect(grantUseRecords(vault).listGrants()).rejects.toMatchObject({ name: 'Vault.TamperedRecordError' });
  });

  it('an audit entry whose summary was rewritten breaks the chain at that entry', async () => {
    const { vault, log } = await open((f) =>
      alterRecord(f, 'audit', 2, (r) => ({ ...r, summary: 'Buy 10 BTC-PERP at 64000' })),
    );
    await vault.unlock(PASSWORD);
    expect(await fullCheck(log)).toMatchObject({ ok: false, state: 'broken', brokenAt: 2 });
  });
});
