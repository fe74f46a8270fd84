/**
 * Each page method is one complete record, and what is derived from the records holds: the policy of every method is
 * pinned here (a record whose policy changes fails until this table changes with it) and the session gates refuse
 * exactly what it says; the grants' allow-list is the records' `grantable`; every record documents itself (an example
 * its schema accepts, the codes its policy implies) and `lib/dapp/README.md`'s methods table is the one written from
 * the records; every method is requested through a page's port in some test.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as v from 'valibot';
import { GRANTABLE_PAGE_METHODS } from '../../grants/requests';
import type { Connections } from '../connections';
import type { ProviderDeps } from '../context';
import { sessionGates } from '../gates';
import { NO_PARAMS, unwrapParams, type PageMethodRecord } from '../method';
import { admit } from '../policy';
import { withMethodsTable } from './docs';
import { PAGE_METHODS, type PageMethod } from './index';

/**
 * Every method's policy as decided: `c` connected, `u` unlocked (`'session'`: a trading session serves it too), `a`
 * the approval, `g` a grant may cover it, `ungated` answered before the session gates.
 */
const POLICIES: Record<
  PageMethod,
  { c: boolean; u: boolean | 'session'; a: 'none' | 'connect' | 'sign' | 'refused'; g?: true; ungated?: true }
> = {
  eth_chainId: { c: false, u: false, a: 'none', ungated: true },
  eth_accounts: { c: false, u: false, a: 'none' },
  eth_requestAccounts: { c: false, u: false, a: 'connect' },
  wallet_connect: { c: false, u: false, a: 'connect' },
  wallet_requestPermissions: { c: false, u: false, a: 'connect' },
  wallet_getPermissions: { c: false, u: false, a: 'none' },
  wallet_revokePermissions: { c: true, u: false, a: 'none' },
  wallet_grantPermissions: { c: true, u: true, a: 'sign' },
  perps_sendCommand: { c: true, u: 'session', a: 'sign', g: true },
  perps_signCommand: { c: true, u: true, a: 'sign' },
  clob_postOrders: { c: true, u: 'session', a: 'sign', g: true },
  clob_signRequest: { c: true, u: true, a: 'sign' },
  countersign_getCapabilities: { c: false, u: false, a: 'none' },
  eth_signTypedData_v4: { c: false, u: false, a: 'refused' },
};

const SITE = 'https://trade.example';
const OWNER = { address: '0x00000000000000000000000000000000000000a1', createdAt: 1 };

/** What the session gates answer for `method` in a background that is in `state` (4100, 4900 or `'passes'`). */
async function gate(
  method: PageMethod,
  state: { connected: boolean; unlocked: boolean; session?: boolean; halted?: boolean },
): Promise<number | 'passes'> {
  const d = {
    db: { get: () => Promise.resolve(OWNER.address), put: () => Promise.resolve() },
    vault: {
      unlocked: state.unlocked,
      sessionLive: state.session === true,
      listOwners: () => Promise.resolve([OWNER]),
    },
    service: { halted: state.halted === true },
  } as unknown as ProviderDeps;
  const conn = state.connected ? { origin: SITE, accounts: [OWNER.address], connectedAt: 1 } : undefined;
  const connections = { get: () => Promise.resolve(conn) } as unknown as Connections;
  try {
    await sessionGates(d, connections, SITE, method);
    return 'passes';
  } catch (e) {
    return (e as { code: number }).code;
  }
}

describe('a page method is one record', () => {
  it('the records are exactly the methods whose policy this test pins, each named once', () => {
    const names = PAGE_METHODS.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(Object.keys(POLICIES).sort());
  });

  it.each(PAGE_METHODS.map((r) => [r.name, r] as const))('%s: the policy is the one pinned here', (name, r) => {
    const p = POLICIES[name];
    expect({
      c: r.policy.connected,
      u: r.policy.unlocked && r.policy.session ? 'session' : r.policy.unlocked,
      a: r.policy.approval,
      ...(r.grantable ? { g: true } : {}),
      ...(r.ungated ? { ungated: true } : {}),
    }).toEqual(p);
  });

  it.each(Object.entries(POLICIES) as [PageMethod, (typeof POLICIES)[PageMethod]][])(
    '%s: the session gates refuse what its policy says',
    async (name, p) => {
      if (p.a === 'refused') {
        expect(() => admit(SITE, name, [])).toThrow(expect.objectContaining({ code: 4200 }));
        return;
      }
      expect(() => admit(SITE, name, [])).not.toThrow();
      expect(() => admit('http://trade.example', name, [])).toThrow(expect.objectContaining({ code: 4100 }));
      expect(await gate(name, { connected: false, unlocked: true })).toBe(p.c ? 4100 : 'passes');
      expect(await gate(name, { connected: true, unlocked: false })).toBe(p.u ? 4900 : 'passes');
      expect(await gate(name, { connected: true, unlocked: false, session: true })).toBe(
        p.u === true ? 4900 : 'passes',
      );
      expect(await gate(name, { connected: true, unlocked: true, halted: true })).toBe(
        p.a === 'sign' ? 4900 : 'passes',
      );
      expect(await gate(name, { connected: true, unlocked: true })).toBe('passes');
    },
  );

  it("the methods a grant may cover are the grants' own allow-list, and exactly those serve a trading session", () => {
    expect(PAGE_METHODS.filter((r) => r.grantable).map((r) => r.name)).toEqual([...GRANTABLE_PAGE_METHODS]);
    for (const r of PAGE_METHODS)
      expect([r.name, r.policy.unlocked && r.policy.session]).toEqual([r.name, r.grantable]);
  });

  it('a method answered without the session gates has the open policy: no connection, no unlock, no approval', () => {
    for (const r of PAGE_METHODS)
      if (r.ungated)
        expect([r.name, r.policy]).toEqual([r.name, { connected: false, unlocked: false, approval: 'none' }]);
  });

  it.each(PAGE_METHODS.map((r) => [r.name, r] as const))(
    '%s: documents itself, with an example its schema accepts and the codes its policy implies',
    (_name, r: PageMethodRecord) => {
      for (const field of [r.docs.summary, r.docs.request, r.docs.answer]) expect(field.trim()).not.toBe('');
      const implied = [
        ...(r.policy.connected ? [4100] : []),
        ...(r.policy.unlocked ? [4900] : []),
        ...(r.policy.approval === 'connect' || r.policy.approval === 'sign' ? [4001] : []),
        ...(r.policy.approval === 'refused' ? [4200] : []),
        ...(r.params === NO_PARAMS ? [] : [-32602]),
      ];
      expect(implied.filter((c) => !r.docs.errors.includes(c as never))).toEqual([]);
      expect(v.safeParse(r.params, unwrapParams(r.docs.example)).issues).toBeUndefined();
      expect(r.policy.approval === 'refused').toBe(r.refuse !== undefined);
    },
  );

  it("lib/dapp/README.md's methods table is the one written from the records (npm run docs:methods)", () => {
    const readme = readFileSync(resolve(import.meta.dirname, '../../dapp/README.md'), 'utf8');
    expect(readme).toBe(withMethodsTable(readme, PAGE_METHODS));
  });

  it("every method is requested through a page's port in a browser test or a background test", () => {
    const root = resolve(import.meta.dirname, '../../..');
    const texts: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.test.ts')) texts.push(readFileSync(p, 'utf8'));
      }
    };
    for (const dir of ['test/e2e', 'test/firefox', 'lib/background']) walk(join(root, dir));
    const requested = (m: string) =>
      texts.some((t) => t.includes(`request('${m}'`) || t.includes(`method: '${m}'`) || t.includes(`'${m}', [`));
    expect(PAGE_METHODS.map((r) => r.name).filter((m) => !requested(m))).toEqual([]);
  });
});
