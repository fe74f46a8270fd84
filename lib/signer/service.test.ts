import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditWritten } from '../audit';
import { cancelOrders, createOrders, internalTransfer, updateLeverage, withdraw } from '../perps/commands';
import { openVaultDb, type VaultDb } from '../vault/db';
import { generatePrivateKey } from 'viem/accounts';
import { memorySessionStore, Vault } from '../vault/vault';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { OutcomeUnknownError, SigningService, WeightBudgetError } from './service';
import { ArtifactMismatchError, type SigningArtifact } from './artifact';
import { Authority, PERSON_SCOPES } from '../authority/epoch';

/** The one authority epoch of this file's signing services, and a ticket of the person's taken from it now. */
const epoch = new Authority();
const held = () => epoch.capture(PERSON_SCOPES);

let h: Harness;
let db: VaultDb;
let vault: Vault;
let service: SigningService;
let owner: string;

beforeAll(async () => {
  h = await startHarness();
  db = await openVaultDb('signer-service-test');
  vault = new Vault({
    db,
    session: memorySessionStore(),
    now: () => h.clock.now,
    kdf: { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 },
    bounds: { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 },
  });
  await vault.create('integration password');
  owner = (await vault.generateOwnerKey('test')).address;
  service = new SigningService({
    authority: epoch,
    vault,
    db,
    settings: async () => ({ perpsUrl: h.perps, clobUrl: h.clobUrl, clobChainId: h.ctx.config.clobChainId }),
    now: () => h.clock.now,
    sleep: async () => undefined,
  });
});
afterAll(async () => {
  await h.close();
});

type OrderView = { order_id: number; status: string };

describe('SigningService against the sandbox', () => {
  it('issues a proxy key (owner-signed CreateProxy) and stores key + secret', async () => {
    const info = await service.issueProxy(owner, {
      authority: held(),
      expiry: h.clock.now + 86_400_000,
      label: 'test desk',
    });
    expect(info.account).toBe(owner);
    const creds = (await service.reads.perpsRead(owner, 'credentials')) as {
      address: string;
      keys: { proxy: string }[];
    };
    expect(creds.address).toBe(owner);
    expect(creds.keys.map((k) => k.proxy)).toContain(info.proxy);
  });

  it('places and cancels a perps order with the proxy key', async () => {
    const [ack] = (await service.perpsSend(
      owner,
      createOrders({ orders: [{ iid: 2, buy: true, qty: '1', p: '3000', tif: 'gtc', po: true }] }),
      { authority: held(), origin: 'test' },
    )) as { oid: number }[];
    const open = ((await service.reads.perpsRead(owner, 'orders', { order_id: ack!.oid })) as OrderView[])[0]!;
    expect(open.status).toBe('open');
    await service.perpsSend(owner, cancelOrders({ oids: [ack!.oid] }), { authority: held(), origin: 'test' });
    expect(((await service.reads.perpsRead(owner, 'orders', { order_id: ack!.oid })) as OrderView[])[0]!.status).toBe(
      'cancelled',
    );
  });

  it('updates leverage, transfers internally and withdraws (owner key for the last two)', async () => {
    expect(
      await service.perpsSend(owner, updateLeverage({ iid: 1, lev: 3, cross: true }), {
        authority: held(),
        origin: 'test',
      }),
    ).toMatchObject({ status: 'ok', leverage: 3 });
    const t = (await service.perpsSend(
      owner,
      internalTransfer({
        account: owner,
        token: h.ctx.config.usdc,
        amount: '5',
        to: h.demo.counterparty.address,
        label: 'x',
      }),
      { authority: held(), origin: 'test' },
    )) as { status: string };
    expect(t.status).toBe('ok');
    const w = (await service.perpsSend(
      owner,
      withdraw({ account: owner, token: h.ctx.config.usdc, amount: '1000000', to: owner }),
      { authority: held(), origin: 'test' },
    )) as { status: string };
    expect(w.status).toBe('ok');
    const audit = await auditWritten({ db }).then(() => db.getAll('audit'));
    expect(audit.map((a) => a.kind)).toEqual(expect.arrayContaining(['perps.internalTransfer', 'perps.withdraw']));
    expect(JSON.stringify(audit)).not.toMatch(/secret|privateKey/i);
  });

  it('creates, then derives, CLOB credentials', async () => {
    expect((await service.clobCreateOrDerive(owner, { authority: held() })).derived).toBe(false);
    expect((await service.clobCreateOrDerive(owner, { authority: held() })).derived).toBe(true);
  });

  it('posts and cancels an order-book order with L2 headers', async () => {
    const tokenId = h.ctx.clob.markets[0]!.tokenIds[0];
    const [result] = await service.clobPostOrders(
      owner,
      [{ tokenId, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
      { authority: held(), origin: 'test' },
    );
    expect(result!.ok).toBe(true);
    const open = (await service.reads.clobOpenOrders(owner)) as { data: { id: string }[] };
    expect(open.data.map((o) => o.id)).toEqual([result!.orderID]);
    expect(await service.clobCancel(owner, [result!.orderID], { authority: held() })).toMatchObject({
      canceled: [result!.orderID],
    });
  });

  it('returns L2 headers that the exchange accepts, without exposing the secret', async () => {
    const headers = await service.clobSignRequest(
      owner,
      { method: 'GET', requestPath: '/data/orders?next_cursor=MA==' },
      { authority: held() },
    );
    expect(JSON.stringify(headers)).not.toContain((await vault.clobCredentials(owner)).secret);
    const res = await fetch(`${h.clobUrl}/data/orders?next_cursor=MA==`, { headers: { ...headers } });
    expect(res.status).toBe(200);
  });

  it('deletes the proxy at the gateway, then locally', async () => {
    const [p] = await vault.listProxies(owner);
    const auth = { proxy: p!.proxy, secret: (await vault.proxyFor(owner)).secret };
    // Before: the gateway knows the proxy (its credentials authenticate a read).
    expect(await h.read('credentials', undefined, auth)).toMatchObject({ address: owner });
    await service.deleteProxy(owner, p!.proxy, { authority: held() });
    // After: the gateway no longer knows it (the same credentials are refused) and it is gone locally.
    await expect(h.read('credentials', undefined, auth)).rejects.toMatchObject({ status: 401 });
    expect(await vault.listProxies(owner)).toEqual([]);
  });

  it('never retries a withdraw without an answer: the outcome is unknown', async () => {
    const dead = new SigningService({
      authority: epoch,
      vault,
      db,
      settings: async () => ({ perpsUrl: h.perps, clobUrl: h.clobUrl, clobChainId: h.ctx.config.clobChainId }),
      now: () => h.clock.now,
      fetchFn: async (input, init) => {
        if (String(input).endsWith('/v1/account/withdraw')) {
          calls++;
          throw new TypeError('network down');
        }
        return fetch(input, init);
      },
    });
    let calls = 0;
    await expect(
      dead.perpsSend(owner, withdraw({ account: owner, token: h.ctx.config.usdc, amount: '1', to: owner }), {
        authority: held(),
        origin: 'test',
      }),
    ).rejects.toBeInstanceOf(OutcomeUnknownError);
    expect(calls).toBe(1);
  });

  it('meters weight client-side and refuses before the gateway would answer 429', async () => {
    const h2 = await startHarness();
    try {
      const settings = async () => ({
        perpsUrl: h2.perps,
        clobUrl: h2.clobUrl,
        clobChainId: h2.ctx.config.clobChainId,
      });
      const meterTest = new SigningService({ authority: epoch, vault, db, settings, now: () => h2.clock.now });
      const fresh = (await vault.generateOwnerKey('meter')).address;
      await meterTest.issueProxy(fresh, { authority: held(), expiry: h2.clock.now + 3_600_000 });
      const big = createOrders({
        orders: Array.from({ length: 100 }, () => ({ iid: 2, buy: true, qty: '0.01', p: '100', tif: 'gtc' as const })),
      });
      const before = h2.ctx.requestLog.length;
      let refused: unknown;
      let sent = 0;
      for (let i = 0; i < 8 && !refused; i++) {
        await meterTest.perpsSend(fresh, big, { authority: held(), origin: 'test' }).then(
          () => sent++,
          (e) => (refused = e),
        );
      }
      // 600 action weight per minute, of which the person's own orders (and a site's the person approved in
      // its window, as origin 'test' here) may fill 90 %: five batches of 100 pass, the sixth is refused before
      // sending.
      expect(refused).toBeInstanceOf(WeightBudgetError);
      expect(sent).toBe(5);
      expect(h2.ctx.requestLog.length - before).toBe(5);
      // The rest is the reserve: the person's reduce-only close still goes (not refused before sending).
      await expect(
        meterTest.perpsSend(
          fresh,
          createOrders({ orders: [{ iid: 2, buy: false, qty: '0.01', p: '100', tif: 'ioc', ro: true }] }),
          { authority: held(), origin: 'extension' },
        ),
      ).resolves.toBeDefined();
      expect(h2.ctx.requestLog.length - before).toBe(6);
    } finally {
      await h2.close();
    }
  });

  it(
    'sends exactly the stored artifact: the body the sandbox ' + 'received is the approved envelope plus the signature',
    async () => {
      await service.issueProxy(owner, { authority: held(), expiry: h.clock.now + 3_600_000 });
      const a = await service.preparePerps(
        owner,
        createOrders({ orders: [{ iid: 2, buy: true, qty: '1', p: '2900', tif: 'gtc', po: true }] }),
        { submit: true },
      );
      const before = h.ctx.requestLog.length;
      await service.execute(a, a.digest, { authority: held(), origin: 'test' });
      const [received] = h.ctx.requestLog.slice(before).filter((r) => r.path === '/perps/v1/trade/orders');
      const { sig, ...rest } = JSON.parse(received!.body!) as { sig: string };
      expect(rest).toEqual(a.envelope);
      expect(sig).toMatch(/^0x[0-9a-f]{130}$/);

      const c = await service.prepareClob(owner, [
        { tokenId: h.ctx.clob.markets[0]!.tokenIds[0]!, side: 'BUY', price: '0.30', size: '10', orderType: 'GTC' },
      ]);
      const mark = h.ctx.requestLog.length;
      await service.execute(c, c.digest, { authority: held(), origin: 'test' });
      const [posted] = h.ctx.requestLog.slice(mark).filter((r) => r.path === '/clob/order');
      const body = JSON.parse(posted!.body!) as { order: { signature: string } };
      const { signature: _s, ...order } = body.order;
      expect({ ...body, order }).toEqual(c.orders[0]!.body);
    },
  );

  it('signs nothing and sends nothing when an artifact was altered after approval', async () => {
    let sent = 0;
    const spy = new SigningService({
      authority: epoch,
      vault,
      db,
      settings: async () => ({ perpsUrl: h.perps, clobUrl: h.clobUrl, clobChainId: h.ctx.config.clobChainId }),
      now: () => h.clock.now,
      fetchFn: async (input, init) => {
        if ((init?.method ?? 'GET') !== 'GET') sent++;
        return fetch(input, init);
      },
    });
    const auditBefore = (await auditWritten({ db }).then(() => db.getAll('audit'))).length;
    const perps = await spy.preparePerps(
      owner,
      withdraw({ account: owner, token: h.ctx.config.usdc, amount: '1000000', to: owner }),
      { submit: true },
    );
    const clob = await spy.prepareClob(owner, [
      { tokenId: h.ctx.clob.markets[0]!.tokenIds[0]!, side: 'BUY', price: '0.30', size: '10', orderType: 'GTC' },
    ]);
    const op = perps.envelope.op;
    if (op.type !== 'withdraw') throw new Error('expected a withdraw');
    const tampered: SigningArtifact[] = [
      {
        ...perps,
        envelope: { ...perps.envelope, op: { ...op, args: { ...op.args, to: h.demo.counterparty.address } } },
      },
      {
        ...clob,
        orders: [
          {
            ...clob.orders[0]!,
            body: { ...clob.orders[0]!.body, order: { ...clob.orders[0]!.body.order, makerAmount: '9000000' } },
          },
        ],
      },
    ];
    for (const [i, t] of tampered.entries()) {
      await expect(
        spy.execute(t, [perps, clob][i]!.digest, { authority: held(), origin: 'test' }),
      ).rejects.toBeInstanceOf(ArtifactMismatchError);
    }
    expect(sent).toBe(0);
    expect((await auditWritten({ db }).then(() => db.getAll('audit'))).length).toBe(auditBefore);
    // The untouched artifact still goes through with the same digest.
    await expect(spy.execute(perps, perps.digest, { authority: held(), origin: 'test' })).resolves.toMatchObject({
      status: 'ok',
    });
    expect(sent).toBe(1);
  });

  it("reaches a gateway that uses the venue's header names when the profile says so", async () => {
    const seen: string[] = [];
    const SEED: Record<string, string> = {
      poly_address: 'SVC_ADDRESS',
      poly_signature: 'SVC_SIGNATURE',
      poly_timestamp: 'SVC_TIMESTAMP',
      poly_nonce: 'SVC_NONCE',
      poly_api_key: 'SVC_API_KEY',
      poly_passphrase: 'SVC_PASSPHRASE',
      'polymarket-proxy': 'SERVICE-PROXY',
      'polymarket-secret': 'SERVICE-SECRET',
    };
    // A venue-named gateway in front of the sandbox: it refuses seed names and translates venue names.
    const venueGateway: typeof fetch = async (input, init) => {
      const headers = Object.fromEntries(new Headers(init?.headers).entries());
      for (const k of Object.keys(headers)) seen.push(k);
      if (Object.keys(headers).some((k) => k.startsWith('svc_') || k.startsWith('service-')))
        return new Response(JSON.stringify({ error: 'unknown headers' }), { status: 401 });
      return fetch(input, {
        ...init,
        headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [SEED[k] ?? k, v])),
      });
    };
    const venue = new SigningService({
      authority: epoch,
      vault,
      db,
      settings: async () => ({
        perpsUrl: h.perps,
        clobUrl: h.clobUrl,
        clobChainId: h.ctx.config.clobChainId,
        headerSet: 'venue',
      }),
      now: () => h.clock.now,
      fetchFn: venueGateway,
    });
    await venue.issueProxy(owner, { authority: held(), expiry: h.clock.now + 3_600_000 });
    expect(await venue.reads.perpsRead(owner, 'balances')).toEqual([expect.objectContaining({ asset: 'USDC' })]);
    const [r] = await venue.clobPostOrders(
      owner,
      [{ tokenId: h.ctx.clob.markets[0]!.tokenIds[0]!, side: 'BUY', price: '0.20', size: '10', orderType: 'GTC' }],
      { authority: held(), origin: 'test' },
    );
    expect(r!.ok).toBe(true);
    expect(seen).toContain('polymarket-proxy');
    expect(seen).toContain('poly_api_key');
    expect(
      Object.keys(
        await venue.clobSignRequest(owner, { method: 'GET', requestPath: '/data/orders' }, { authority: held() }),
      ).sort(),
    ).toEqual(['POLY_ADDRESS', 'POLY_API_KEY', 'POLY_PASSPHRASE', 'POLY_SIGNATURE', 'POLY_TIMESTAMP']);
  });

  it('signs and sends nothing when a key record was rolled back to an older copy', async () => {
    const fresh = (await vault.generateOwnerKey('rollback')).address;
    const pk = generatePrivateKey();
    const p = await vault.putProxy({
      account: fresh,
      privateKey: pk,
      secret: 'old-secret',
      expiry: h.clock.now + 3_600_000,
    });
    const id = `proxy:${p.proxy.toLowerCase()}`;
    const old = (await db.get('secrets', id))!;
    await vault.putProxy({ account: fresh, privateKey: pk, secret: 'new-secret', expiry: h.clock.now + 7_200_000 });
    await db.put('secrets', old); // the older copy back on disk
    const before = h.ctx.requestLog.length;
    await expect(
      service.perpsSend(fresh, cancelOrders({ oids: [1] }), { authority: held(), origin: 'test' }),
    ).rejects.toMatchObject({ name: 'Vault.TamperedRecordError' });
    expect(h.ctx.requestLog.length).toBe(before);
  });
});
