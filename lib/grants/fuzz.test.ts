/**
 * 10 000 fuzzed page requests through the real provider and grant service (issue #11 Done when):
 * every request the grant does not cover must open a window (which this test rejects at once), so no
 * signature is ever produced outside the grant's limits. An independent oracle decides "covered".
 * The signing service is a recording double (no keys, no network); everything else is real.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { openVaultDb } from '../vault/db';
import { memorySessionStore, Vault } from '../vault/vault';
import { ApprovalRegistry } from '../approvals/registry';
import { userRejected } from '../provider/errors';
import { ProviderService } from '../provider/service';
import { perpsArtifact, type SigningArtifact } from '../signer/artifact';
import type { PerpsCommand } from '../perps/commands';
import { GrantService } from './service';
import { toUnits } from '../decimal';

const ORIGIN = 'https://trade.example';
const N = 10_000;

describe('grant fuzz', () => {
  it(`signs nothing outside a grant's limits across ${N.toLocaleString('en-US')} fuzzed requests`, async () => {
    const db = await openVaultDb('grant-fuzz');
    const vault = new Vault({ db, session: memorySessionStore(), kdf: { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 }, bounds: { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 } });
    await vault.create('fuzz password!');
    const owner = (await vault.generateOwnerKey('fuzz')).address;
    await db.put('connections', { origin: ORIGIN, accounts: [owner], connectedAt: Date.now() });
    const signed: Record<string, unknown>[] = [];
    let rejectedWindows = 0;
    const service = {
      perpsRead: async (_a: unknown, name: string) => {
        if (name === 'tickers') return [{ mid_price: '3000' }];
        throw new Error('not in this test');
      },
      perpsBook: async () => {
        throw new Error('not in this test');
      },
      preparePerps: async (account: string, cmd: PerpsCommand, o: { submit: boolean }) =>
        perpsArtifact({ account: account as Address, key: cmd.signer, signerAddress: account as Address, domain: { name: 'P', version: '1', chainId: 1 }, endpoint: cmd.endpoint, envelope: { op: cmd.body, salt: 1, ts: Date.now() }, submit: o.submit, builtAt: Date.now() }),
      execute: async (a: SigningArtifact) => {
        if (a.kind === 'perps') signed.push(a.envelope.op as Record<string, unknown>);
        return [{ status: 'ok', oid: signed.length }];
      },
    };
    let registry!: ApprovalRegistry;
    registry = new ApprovalRegistry({
      // Every window is closed unanswered at once (not a "rejection", so the origin is never paused).
      onChange: (pending) => {
        if (!pending.length) return;
        rejectedWindows += pending.length;
        queueMicrotask(() => registry.rejectAll(() => userRejected('closed by the test')));
      },
    });
    const grants = new GrantService({ vault });
    const grant = await grants.create({
      origin: ORIGIN,
      account: owner,
      limits: { allow: { order: true, cancel: true, leverage: true }, instruments: [2], maxSize: '1', maxNotional: '2000', dailyNotional: '1000000000', maxLeverage: 5, priceBandPct: '2', postOnly: true, ratePerMinute: 1_000_000 },
      durationMs: 3_600_000,
    });
    const provider = new ProviderService({ vault, db, service: service as never, registry, showApprovals: async () => undefined, emit: () => undefined, grants });

    // An independent oracle of the grant's limits (bigint maths at 8 decimals).
    const u = (s: string) => toUnits(s, 8)!;
    const covered = (op: { type: string; args: unknown }): boolean => {
      if (['cancelOrders', 'cancelAll'].includes(op.type)) return true;
      if (op.type === 'updateLeverage') return (op.args as { lev: number; iid: number }).lev <= 5 && (op.args as { iid: number }).iid === 2;
      if (op.type !== 'createOrders') return false;
      return (op.args as { iid: number; qty: string; p?: string; po?: boolean }[]).every((o) => {
        if (o.iid !== 2 || !o.po || !o.p) return false;
        if (u(o.qty) > u('1')) return false;
        const p = u(o.p);
        const mid = u('3000');
        const diff = p > mid ? p - mid : mid - p;
        if (diff * 100n > 2n * mid) return false;
        return (u(o.qty) * p) / 10n ** 8n <= u('2000');
      });
    };
    let seed = 42;
    const rnd = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const dec = (lo: number, hi: number, dp: number) => (lo + rnd() * (hi - lo)).toFixed(dp);
    const gen = () => {
      const k = rnd();
      if (k < 0.7) {
        const n = 1 + Math.floor(rnd() * 3);
        return { type: 'createOrders', args: Array.from({ length: n }, () => ({ iid: 1 + Math.floor(rnd() * 3), buy: rnd() < 0.5, qty: dec(0.01, 1.2, 2), ...(rnd() < 0.9 ? { p: dec(2900, 3100, 2) } : {}), tif: rnd() < 0.9 ? 'gtc' : 'ioc', ...(rnd() < 0.8 ? { po: true } : {}) })).map((o) => (o.tif !== 'gtc' || !o.p ? { ...o, tif: 'ioc', po: undefined } : o)) };
      }
      if (k < 0.8) return { type: 'cancelOrders', args: [1 + Math.floor(rnd() * 1000)] };
      if (k < 0.88) return { type: 'updateLeverage', args: { iid: 1 + Math.floor(rnd() * 3), lev: 1 + Math.floor(rnd() * 10), cross: true } };
      if (k < 0.94) return { type: 'withdraw', args: { account: owner, token: '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB', amount: '1000000', to: owner } };
      return { type: 'internalTransfer', args: { account: owner, token: '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB', amount: '5', to: '0x9999999999999999999999999999999999999999' } };
    };
    let expectedCovered = 0;
    for (let i = 0; i < N; i++) {
      const op = gen();
      const clean = JSON.parse(JSON.stringify(op)) as { type: string; args: unknown };
      if (covered(clean)) expectedCovered++;
      await provider.request(ORIGIN, 'perps_sendCommand', { op: clean }).catch(() => undefined);
    }
    const outside = signed.filter((op) => !covered(op as { type: string; args: unknown })).length;
    console.log(`grant fuzz: ${N} requests, ${signed.length} signed inside the grant, ${rejectedWindows} sent to a window, ${outside} signed outside the limits`);
    expect(outside).toBe(0);
    expect(signed.length).toBe(expectedCovered);
    expect(signed.length).toBeGreaterThan(1_000);
    expect(grant.id).toBeTruthy();
  }, 180_000);
});
