/**
 * 10 000 fuzzed page requests through the real provider and grant service (the
 * grant rules: one venue, required band, notional at the reference, cancels of owned orders only):
 * every request the grant does not cover must open a window (which this test rejects at once), so no
 * signature is ever produced outside the grant's limits. An independent oracle decides "covered".
 * The signing service is a recording double (no keys, no network); everything else is real.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey } from 'viem/accounts';
import { openVaultDb } from '../vault/db';
import { memorySessionStore, Vault } from '../vault/vault';
import { ApprovalRegistry } from '../approvals/registry';
import { userRejected } from '../errors/rpc';
import { ProviderService } from '../page/request';
import type { SigningArtifact } from '../signer/artifact';
import type { ClobOrderRequest } from '../clob/request';
import type { PerpsCommand } from '../perps/commands';
import { GrantService } from './service';
import { stubClobArtifact, stubPerpsArtifact } from '../../test/kits/grants';
import { toUnits } from '../decimal';
import { Authority } from '../authority/epoch';

const ORIGIN = 'https://trade.example';
const N = 10_000;

describe('grant fuzz', () => {
  it(`signs nothing outside a grant's limits across ${N.toLocaleString('en-US')} fuzzed requests`, async () => {
    const db = await openVaultDb('grant-fuzz');
    const vault = new Vault({
      db,
      session: memorySessionStore(),
      kdf: { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 },
      bounds: { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 },
    });
    await vault.create('fuzz password!');
    const owner = (await vault.generateOwnerKey('fuzz')).address;
    // The proxy key a covered perps command signs with (a granted perps order needs one).
    await vault.putProxy({
      account: owner,
      privateKey: generatePrivateKey(),
      secret: 'proxy-secret',
      expiry: Date.now() + 3_600_000,
    });
    await db.put('connections', { origin: ORIGIN, accounts: [owner], connectedAt: Date.now() });
    const signed: Record<string, unknown>[] = [];
    let rejectedWindows = 0;
    let nextOid = 0;
    const service = {
      perpsRead: async (_a: unknown, name: string) => {
        if (name === 'tickers') return [{ mark_price: '3000', mid_price: '3000.5' }];
        throw new Error('not in this test');
      },
      // The order book bears out the ticker (lib/grants/reference.ts).
      perpsBook: async () => ({ bids: [['2999.5', '1']], asks: [['3001', '1']] }),
      clobMid: async () => '0.5',
      clobTop: async () => ({ bid: '0.49', ask: '0.51' }),
      prepareClob: async (account: string, orders: ClobOrderRequest[]) => stubClobArtifact(account, orders),
      preparePerps: async (account: string, cmd: PerpsCommand, o: { submit: boolean }) =>
        stubPerpsArtifact(account, cmd, o),
      execute: async (a: SigningArtifact) => {
        signed.push(a.kind === 'perps' ? (a.envelope.op as Record<string, unknown>) : { type: a.kind });
        if (a.kind === 'perps' && a.envelope.op.type === 'createOrders')
          return (a.envelope.op.args as { c?: string }[]).map((x) => ({
            status: 'ok',
            oid: ++nextOid,
            ...(x.c ? { coid: x.c } : {}),
          }));
        return { status: 'ok' };
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
    const grants = new GrantService({ authority: new Authority(), vault });
    const grant = await grants.create({
      origin: ORIGIN,
      account: owner,
      limits: {
        venue: 'perps',
        instruments: [2],
        allow: { order: true, cancel: true, leverage: true },
        maxSize: '1',
        maxNotional: '2000',
        dailyNotional: '1000000000',
        maxLeverage: 5,
        priceBandPct: '2',
        slippagePct: '1',
        postOnly: true,
        ratePerMinute: 10_000,
      },
      durationMs: 3_600_000,
    });
    const provider = new ProviderService({
      vault,
      db,
      service: Object.assign(service, { authority: grants.authority, reads: service }) as never,
      registry,
      showApprovals: async () => undefined,
      emit: () => undefined,
      grants,
    });

    // An independent oracle of the grant's limits (bigint maths at 8 decimals), with the orders the
    // grant placed (the newest 1 000, as the grant remembers them).
    const u = (s: string) => toUnits(s, 8)!;
    const owned: { oid: number; coid?: string }[] = [];
    const covered = (method: string, op: { type: string; args: unknown }): boolean => {
      if (method !== 'perps_sendCommand') return false;
      if (op.type === 'cancelOrders') return (op.args as number[]).every((id) => owned.some((o) => o.oid === id));
      if (op.type === 'cancelOrdersCOID') return (op.args as string[]).every((c) => owned.some((o) => o.coid === c));
      if (op.type === 'updateLeverage') {
        const a = op.args as { lev: number; iid: number; cross: boolean };
        return a.lev <= 5 && a.iid === 2 && a.cross;
      }
      if (op.type !== 'createOrders') return false;
      return (op.args as { iid: number; qty: string; p?: string; po?: boolean; tr?: unknown }[]).every((o) => {
        if (o.iid !== 2 || !o.po || !o.p || o.tr) return false;
        if (u(o.qty) > u('1')) return false;
        const p = u(o.p);
        const ref = u('3000');
        const diff = p > ref ? p - ref : ref - p;
        if (diff * 100n > 2n * ref) return false;
        return (u(o.qty) * (p > ref ? p : ref)) / 10n ** 8n <= u('2000');
      });
    };
    let seed = 42;
    const rnd = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const dec = (lo: number, hi: number, dp: number) => (lo + rnd() * (hi - lo)).toFixed(dp);
    const pick = <T>(xs: T[]): T | undefined => xs[Math.floor(rnd() * xs.length)];
    const hex32 = () => Array.from({ length: 32 }, () => '0123456789abcdef'[Math.floor(rnd() * 16)]).join('');
    const perpsOp = (op: unknown) => ({ method: 'perps_sendCommand', params: { op } });
    const gen = (): { method: string; params: unknown } => {
      const k = rnd();
      if (k < 0.55) {
        const n = 1 + Math.floor(rnd() * 3);
        const orders = Array.from({ length: n }, () => {
          const kind = rnd();
          const base = {
            iid: 1 + Math.floor(rnd() * 3),
            buy: rnd() < 0.5,
            qty: dec(0.01, 1.2, 2),
            ...(rnd() < 0.3 ? { c: hex32() } : {}),
          };
          if (kind < 0.08)
            return {
              ...base,
              tr: {
                tpsl: rnd() < 0.5 ? 'sl' : 'tp',
                trp: dec(2950, 3050, 2),
                ...(rnd() < 0.5 ? { market: true } : {}),
              },
              ...(rnd() < 0.5 ? { p: dec(2950, 3050, 2) } : {}),
            };
          if (kind < 0.16) return { ...base, tif: 'ioc' };
          const p = dec(2900, 3100, 2);
          return rnd() < 0.85
            ? { ...base, p, tif: 'gtc', ...(rnd() < 0.85 ? { po: true } : {}) }
            : { ...base, p, tif: 'ioc' };
        }).map((o) => ('tr' in o && !('p' in o) && !(o.tr as { market?: boolean }).market ? { ...o, p: '3000' } : o));
        return perpsOp({ type: 'createOrders', args: orders });
      }
      if (k < 0.65)
        return perpsOp({
          type: 'cancelOrders',
          args: rnd() < 0.6 && owned.length ? [pick(owned)!.oid] : [1 + Math.floor(rnd() * (nextOid + 10))],
        });
      if (k < 0.68) {
        const mine = owned.filter((o) => o.coid);
        return perpsOp({ type: 'cancelOrdersCOID', args: [rnd() < 0.6 && mine.length ? pick(mine)!.coid! : hex32()] });
      }
      if (k < 0.71) return perpsOp({ type: 'cancelAll', args: rnd() < 0.5 ? {} : { iid: 2 } });
      if (k < 0.74) return perpsOp({ type: 'autoCancel', args: { time: rnd() < 0.5 ? 0 : Date.now() + 60_000 } });
      if (k < 0.82)
        return perpsOp({
          type: 'updateLeverage',
          args: { iid: 1 + Math.floor(rnd() * 3), lev: 1 + Math.floor(rnd() * 10), cross: rnd() < 0.85 },
        });
      if (k < 0.85)
        return perpsOp({
          type: 'withdraw',
          args: { account: owner, token: '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB', amount: '1000000', to: owner },
        });
      if (k < 0.88)
        return perpsOp({
          type: 'internalTransfer',
          args: {
            account: owner,
            token: '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB',
            amount: '5',
            to: '0x9999999999999999999999999999999999999999',
          },
        });
      if (k < 0.94)
        return {
          method: 'clob_postOrders',
          params: { orders: [{ tokenId: '1234', side: 'BUY', price: '0.50', size: dec(1, 100, 0), orderType: 'GTC' }] },
        };
      return {
        method: 'perps_signCommand',
        params: {
          op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '3000', tif: 'gtc', po: true }] },
        },
      };
    };
    let expectedCovered = 0;
    let outside = 0;
    let missed = 0;
    for (let i = 0; i < N; i++) {
      const req = JSON.parse(JSON.stringify(gen())) as {
        method: string;
        params: { op?: { type: string; args: unknown } };
      };
      const expected = covered(req.method, req.params.op ?? { type: 'none', args: null });
      if (expected) expectedCovered++;
      const before = signed.length;
      const result = await provider.request(ORIGIN, req.method, req.params).catch(() => undefined);
      const didSign = signed.length > before;
      if (didSign && !expected) outside++;
      if (!didSign && expected) missed++;
      if (didSign && req.params.op?.type === 'createOrders' && Array.isArray(result)) {
        for (const a of result as { oid: number; coid?: string }[])
          owned.push({ oid: a.oid, ...(a.coid ? { coid: a.coid } : {}) });
        owned.splice(0, Math.max(0, owned.length - 1_000));
      }
    }
    console.log(
      `grant fuzz: ${N} requests, ${signed.length} signed inside the grant, ${rejectedWindows} sent ` +
        `to a window, ${outside} signed outside the limits, ${missed} covered requests that asked`,
    );
    expect(outside).toBe(0);
    expect(missed).toBe(0);
    expect(signed.length).toBe(expectedCovered);
    expect(signed.length).toBeGreaterThan(1_000);
    expect(signed.filter((op) => op.type === 'cancelOrders').length).toBeGreaterThan(100);
    expect(grant.id).toBeTruthy();
  }, 180_000);
});
