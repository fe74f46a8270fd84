/**
 * What a grant can ever cover: every page method (`PAGE_METHODS`) and
 * every perps command kind (`PerpsCommandType`) runs through the real provider and grant service with
 * the broadest grants possible; only the kinds the grant code names (`GRANTABLE_PAGE_METHODS`,
 * `GRANTABLE_PERPS_COMMANDS`, pinned here) are signed without a window. The sample tables are typed
 * `Record<…>` over the enumerated kinds and compared with them at run time, so a method or command kind
 * added later fails this test until it is listed — and then asks unless the grant code names it.
 * Also: the kill-switch hook (`ProviderDeps.killSwitchArmed`). The signing service is a recording double.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { openVaultDb } from '../vault/db';
import { memorySessionStore, Vault } from '../vault/vault';
import { ApprovalRegistry } from '../approvals/registry';
import { userRejected } from '../errors/rpc';
import { ProviderService } from '../page/request';
import { PAGE_METHODS, type PageMethod } from '../page/methods';
import { l2Artifact, type SigningArtifact } from '../signer/artifact';
import { commandFromBody, type PerpsCommand, type PerpsCommandType } from '../perps/commands';
import type { ClobOrderRequest } from '../clob/request';
import { GrantService } from './service';
import { stubClobArtifact, stubPerpsArtifact } from '../../test/kits/grants';
import { GRANTABLE_PAGE_METHODS, GRANTABLE_PERPS_COMMANDS } from './requests';
import { Authority } from '../authority/epoch';

const ORIGIN = 'https://trade.example';
const TOKEN = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
const COID = 'ab'.repeat(16);
const USDC = '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB';
let dbn = 0;

/** A vault with one account connected to ORIGIN, a provider over a recording signer, and the broadest grants. */
async function setup(opts: { killSwitchArmed?: (venue: 'perps' | 'clob', account: string) => Promise<boolean> } = {}) {
  const db = await openVaultDb(`grant-coverage-${dbn++}`);
  const vault = new Vault({
    db,
    session: memorySessionStore(),
    kdf: { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 },
    bounds: { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 },
  });
  await vault.create('coverage password!');
  const owner = (await vault.generateOwnerKey('cover')).address;
  // The proxy key a covered perps command signs with (a granted perps order needs one).
  await vault.putProxy({
    account: owner,
    privateKey: generatePrivateKey(),
    secret: 'proxy-secret',
    expiry: Date.now() + 3_600_000,
  });
  await db.put('connections', { origin: ORIGIN, accounts: [owner], connectedAt: Date.now() });
  const signed: SigningArtifact[] = [];
  let nextOid = 1000;
  const service = {
    perpsRead: async (_a: unknown, name: string, q?: { instrument_id?: number }) => {
      if (name === 'tickers') return [{ instrument_id: q?.instrument_id, mark_price: '3000', mid_price: '3001' }];
      if (name === 'instruments') return [{ instrument_id: 2, symbol: 'ETH-PERP' }];
      throw new Error('not in this test');
    },
    // The order book bears out the ticker (lib/grants/reference.ts).
    perpsBook: async () => ({ bids: [['2999.5', '1']], asks: [['3001', '1']] }),
    clobMid: async () => '0.5',
    clobTop: async () => ({ bid: '0.49', ask: '0.51' }),
    preparePerps: async (account: string, cmd: PerpsCommand, o: { submit: boolean }) =>
      stubPerpsArtifact(account, cmd, o),
    prepareClob: async (account: string, orders: ClobOrderRequest[]) => stubClobArtifact(account, orders),
    prepareL2: async (account: string, req: { method: string; requestPath: string; body?: string }) =>
      l2Artifact({
        account: account as Address,
        ...req,
        timestamp: Math.floor(Date.now() / 1000),
        builtAt: Date.now(),
      }),
    execute: async (a: SigningArtifact) => {
      signed.push(a);
      if (a.kind === 'clob') return a.orders.map(() => ({ ok: true, orderID: '0x01', status: 'live' }));
      if (a.kind === 'perps' && a.envelope.op.type === 'createOrders')
        return (a.envelope.op.args as { c?: string }[]).map((o) => ({
          status: 'ok',
          oid: ++nextOid,
          ...(o.c ? { coid: o.c } : {}),
        }));
      return { status: 'ok' };
    },
  };
  let windows = 0;
  let registry!: ApprovalRegistry;
  registry = new ApprovalRegistry({
    // Every window is closed unanswered at once (not a "rejection", so the origin is never paused).
    onChange: (pending) => {
      if (!pending.length) return;
      windows += pending.length;
      queueMicrotask(() => registry.rejectAll(() => userRejected('closed by the test')));
    },
  });
  const grants = new GrantService({ authority: new Authority(), vault });
  const wide = {
    maxNotional: '1000000000',
    dailyNotional: '1000000000',
    priceBandPct: '20',
    maxSize: '1000000',
    ratePerMinute: 10_000,
  };
  await grants.create({
    origin: ORIGIN,
    account: owner,
    durationMs: 3_600_000,
    limits: {
      venue: 'perps',
      instruments: [1, 2, 3],
      allow: { order: true, cancel: true, leverage: true, market: true, triggers: true },
      slippagePct: '10',
      maxLeverage: 1000,
      ...wide,
    },
  });
  await grants.create({
    origin: ORIGIN,
    account: owner,
    durationMs: 3_600_000,
    limits: { venue: 'clob', markets: [TOKEN], allow: { order: true }, ...wide },
  });
  const provider = new ProviderService({
    vault,
    db,
    service: Object.assign(service, { authority: grants.authority, reads: service }) as never,
    registry,
    showApprovals: async () => undefined,
    emit: () => undefined,
    grants,
    ...(opts.killSwitchArmed ? { killSwitchArmed: opts.killSwitchArmed } : {}),
  });
  /** Sends one page request; true when it was signed without a window. */
  const covered = async (method: string, params: unknown) => {
    const [s, w] = [signed.length, windows];
    await provider.request(ORIGIN, method, params).catch(() => undefined);
    return signed.length > s && windows === w;
  };
  return { owner, provider, grants, signed, covered, windows: () => windows };
}

/** One sample per perps command kind, each inside the broadest grant (cancels name orders the grant placed). */
const COMMANDS = (owner: string): Record<PerpsCommandType, unknown> => ({
  createOrders: [{ iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true, c: COID }],
  cancelOrders: [1001],
  cancelOrdersCOID: [COID],
  updateLeverage: { iid: 2, lev: 3, cross: true },
  internalTransfer: { account: owner, token: USDC, amount: '1', to: '0x9999999999999999999999999999999999999999' },
  deleteProxy: { proxy: '0x9999999999999999999999999999999999999999' },
  withdraw: { account: owner, token: USDC, amount: '1000000', to: owner },
  createProxy: { owner, proxy: '0x9999999999999999999999999999999999999999', expiry: Date.now() + 86_400_000 },
  cancelAll: { iid: 2 },
  autoCancel: { time: 0 },
  updateMargin: { iid: 2, amt: '10' },
});

/** One sample per page method (wallet_revokePermissions last: it ends the grants). */
const METHODS = (owner: string): Record<PageMethod, unknown> => ({
  eth_chainId: undefined,
  eth_accounts: undefined,
  eth_requestAccounts: undefined,
  wallet_connect: undefined,
  perps_sendCommand: {
    op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true }] },
  },
  perps_signCommand: {
    op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true }] },
  },
  clob_postOrders: { orders: [{ tokenId: TOKEN, side: 'BUY', price: '0.50', size: '10', orderType: 'GTC' }] },
  clob_signRequest: { method: 'DELETE', requestPath: '/cancel-all' },
  eth_signTypedData_v4: [owner, JSON.stringify({ primaryType: 'Order', types: {}, domain: {}, message: {} })],
  wallet_getPermissions: undefined,
  wallet_requestPermissions: [{ eth_accounts: {} }],
  wallet_grantPermissions: [
    {
      expiry: Math.floor(Date.now() / 1000) + 3600,
      permissions: [
        {
          type: 'countersign-grant',
          data: {
            venue: 'perps',
            instruments: [2],
            allow: { order: true },
            maxNotional: '10',
            dailyNotional: '10',
            priceBandPct: '1',
          },
        },
      ],
    },
  ],
  countersign_getCapabilities: undefined,
  wallet_revokePermissions: undefined,
});

describe('what a grant can ever cover', () => {
  it('the allow-lists are exactly these (changing them is a decision this test makes visible)', () => {
    expect([...GRANTABLE_PAGE_METHODS]).toEqual(['perps_sendCommand', 'clob_postOrders']);
    expect([...GRANTABLE_PERPS_COMMANDS]).toEqual([
      'createOrders',
      'cancelOrders',
      'cancelOrdersCOID',
      'updateLeverage',
    ]);
  });

  it(
    'every perps command kind through perps_sendCommand under the ' +
      'broadest grant: only the named kinds are signed without a window',
    async () => {
      const { owner, covered } = await setup();
      const samples = COMMANDS(owner);
      // Every kind the command decoder knows has a sample (and each sample decodes).
      for (const [type, args] of Object.entries(samples))
        expect(() => commandFromBody({ type, args }), type).not.toThrow();
      expect(() => commandFromBody({ type: 'somethingNew', args: {} })).toThrow();
      const coverable: string[] = [];
      for (const [type, args] of Object.entries(samples))
        if (await covered('perps_sendCommand', { op: { type, args } })) coverable.push(type);
      expect(coverable).toEqual([...GRANTABLE_PERPS_COMMANDS]);
      // Isolated margin through updateLeverage is never covered either.
      expect(
        await covered('perps_sendCommand', { op: { type: 'updateLeverage', args: { iid: 2, lev: 3, cross: false } } }),
      ).toBe(false);
      // A sized stop-loss is a trigger order the grant allows; the same leg protecting the whole position is not.
      const leg = (qty: string) => ({
        iid: 2,
        buy: false,
        qty,
        ro: true,
        tr: { tpsl: 'sl', trp: '3000', market: true },
      });
      expect(await covered('perps_sendCommand', { op: { type: 'createOrders', args: [leg('0.5')] } })).toBe(true);
      expect(
        await covered('perps_sendCommand', { op: { type: 'createOrders', args: [leg('0')], grp: 'position' } }),
      ).toBe(false);
    },
  );

  it('every page method under the broadest grants: only the named methods are signed without a window', async () => {
    const { owner, covered } = await setup();
    const samples = METHODS(owner);
    expect(Object.keys(samples).sort()).toEqual(PAGE_METHODS.map((r) => r.name).sort());
    const coverable: string[] = [];
    for (const [method, params] of Object.entries(samples)) if (await covered(method, params)) coverable.push(method);
    expect(coverable.sort()).toEqual([...GRANTABLE_PAGE_METHODS].sort());
  });
});

describe('the kill-switch hook', () => {
  it(
    'a covered request is signed only while the venue kill ' + 'switch is armed; otherwise it asks and is not counted',
    async () => {
      const asked: [string, string][] = [];
      let armed: boolean | 'throw' = false;
      const t = await setup({
        killSwitchArmed: async (venue, account) => {
          asked.push([venue, account]);
          if (armed === 'throw') throw new Error('venue silent');
          return armed;
        },
      });
      const order = {
        op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true }] },
      };
      const book = { orders: [{ tokenId: TOKEN, side: 'BUY', price: '0.50', size: '10', orderType: 'GTC' }] };
      expect(await t.covered('perps_sendCommand', order)).toBe(false);
      expect(await t.covered('clob_postOrders', book)).toBe(false);
      armed = 'throw';
      expect(await t.covered('perps_sendCommand', order)).toBe(false);
      expect(t.signed).toHaveLength(0);
      expect((await t.grants.list()).every((g) => g.uses24h === 0)).toBe(true);
      armed = true;
      expect(await t.covered('perps_sendCommand', order)).toBe(true);
      expect(await t.covered('clob_postOrders', book)).toBe(true);
      expect(asked).toEqual([
        ['perps', t.owner],
        ['clob', t.owner],
        ['perps', t.owner],
        ['perps', t.owner],
        ['clob', t.owner],
      ]);
    },
  );
});
