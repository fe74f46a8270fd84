/**
 * The signing gate and request deadlines of `SigningService`, against the sandbox:
 * what a halted service refuses, what panic's pass lets through, and that no call hangs on a silent venue.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autoCancel, cancelAll, createOrders } from '../perps/commands';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { demoVault } from '../../test/kits/signer';
import { OutcomeUnknownError, PANIC_PASS, SigningService } from './service';
import { JournalError, type AuditJournal } from '../audit/journal';
import { auditWritten } from '../audit';
import { Authority, PERSON_SCOPES } from '../authority/epoch';

/** The one authority epoch of this file's signing services, and a ticket of the person's taken from it now. */
const epoch = new Authority();
const held = () => epoch.capture(PERSON_SCOPES);

let h: Harness;
let db: VaultDb;
let vault: Vault;
let owner: string;
/** Requests to perps order placement wait on this while set (a submission held in flight). */
let hold: Promise<void> | undefined;

const service = (o: { requestTimeoutMs?: number; journal?: AuditJournal } = {}) =>
  new SigningService({
    authority: epoch,
    vault,
    db,
    settings: async () => ({ perpsUrl: h.perps, clobUrl: h.clobUrl, clobChainId: h.ctx.config.clobChainId }),
    now: () => h.clock.now,
    sleep: async () => undefined,
    fetchFn: async (input, init) => {
      if (hold && String(input).endsWith('/perps/v1/trade/orders') && init?.method === 'POST') await hold;
      return fetch(input, init);
    },
    ...o,
  });
const trading = () =>
  h.ctx.requestLog.filter(
    (r) =>
      r.method !== 'GET' && /^\/perps\/v1\/(trade|account)|^\/clob\/(orders?|cancel|v1\/heartbeats|auth)/.test(r.path),
  ).length;
const order = (o: Partial<{ ro: boolean; tif: 'ioc' | 'gtc' }> = {}) =>
  createOrders({
    orders: [{ iid: 2, buy: false, qty: '0.1', tif: o.tif ?? 'gtc', p: '4000', ...(o.ro ? { ro: true } : {}) }],
  });
const tokenId = () => h.ctx.clob.markets[0]!.tokenIds[0]!;

beforeAll(async () => {
  h = await startHarness();
  ({ db, vault, owner } = await demoVault(h, 'signer-gate-test'));
  await service().clobCreateOrDerive(owner, { authority: held() });
});
afterAll(async () => {
  await h.close();
});

describe('the audit journal refusing its record', () => {
  it("stops an order before anything is sent, but never panic's own commands", async () => {
    const refusing = {
      open: () => ({ id: 'x', stored: Promise.reject(new JournalError(new Error('quota'))) }),
      close: async () => undefined,
      useStored: async () => undefined,
      discard: async () => undefined,
      carries: () => false,
      leftovers: async () => [],
    };
    const s = service({ journal: refusing });
    const before = trading();
    await expect(s.perpsSend(owner, order(), { authority: held(), origin: 'test' })).rejects.toMatchObject({
      name: 'Audit.JournalError',
    });
    expect(trading(), 'nothing was sent').toBe(before);
    await expect(
      s.perpsSend(owner, cancelAll({}), { authority: held(), origin: 'panic', pass: PANIC_PASS }),
    ).resolves.toMatchObject({ status: 'ok' });
    expect(trading()).toBe(before + 1);
    // A journal whose store never answers holds an order, never panic.
    const silent = {
      open: () => ({ id: 'y', stored: new Promise<void>(() => undefined) }),
      close: async () => undefined,
      useStored: async () => undefined,
      discard: async () => undefined,
      carries: () => false,
      leftovers: async () => [],
    };
    await expect(
      service({ journal: silent }).perpsSend(owner, cancelAll({}), {
        authority: held(),
        origin: 'panic',
        pass: PANIC_PASS,
      }),
    ).resolves.toMatchObject({ status: 'ok' });
    await auditWritten({ db }); // the entries of these answers are in the log before the next test counts it
  });
});

describe('SigningService.halt', () => {
  it(
    'refuses every signing path with Signer.HaltedError ' + 'before anything is signed or sent, until resume()',
    async () => {
      const s = service();
      await s.halt('test');
      const before = trading();
      const audit = (await db.getAll('audit')).length;
      const attempts: [string, () => Promise<unknown>][] = [
        ['perpsSend', () => s.perpsSend(owner, order(), { authority: held(), origin: 'test' })],
        ['perpsSign', () => s.perpsSign(owner, order(), { authority: held() })],
        ['autoCancel', () => s.perpsSend(owner, autoCancel({ time: 0 }), { authority: held(), origin: 'dead-man' })],
        [
          'clobPostOrders',
          () =>
            s.clobPostOrders(
              owner,
              [{ tokenId: tokenId(), side: 'BUY', price: '0.10', size: '10', orderType: 'GTC' }],
              {
                authority: held(),
                origin: 'test',
              },
            ),
        ],
        [
          'clobSignRequest',
          () => s.clobSignRequest(owner, { method: 'GET', requestPath: '/data/orders' }, { authority: held() }),
        ],
        ['clobCancelAll', () => s.clobCancelAll(owner, { authority: held() })],
        ['clobCancel', () => s.clobCancel(owner, ['0x1'], { authority: held() })],
        ['clobHeartbeat', () => s.clobHeartbeat(owner, '', { authority: held() })],
        ['clobCreateOrDerive', () => s.clobCreateOrDerive(owner, { authority: held() })],
        ['issueProxy', () => s.issueProxy(owner, { authority: held(), expiry: h.clock.now + 86_400_000 })],
      ];
      for (const [what, fn] of attempts)
        await expect(fn(), what).rejects.toMatchObject({ name: 'Signer.HaltedError', code: 4900 });
      expect(trading()).toBe(before);
      expect((await db.getAll('audit')).length).toBe(audit);
      s.resume();
      const [ack] = (await s.perpsSend(owner, order(), { authority: held(), origin: 'test' })) as { status: string }[];
      expect(ack!.status).toBe('ok');
    },
  );

  it("lets panic's pass through for cancels and reduce-only IOC closes only", async () => {
    const s = service();
    await s.perpsSend(owner, order(), { authority: held(), origin: 'test' });
    await s.clobPostOrders(owner, [{ tokenId: tokenId(), side: 'BUY', price: '0.10', size: '10', orderType: 'GTC' }], {
      authority: held(),
      origin: 'test',
    });
    await s.halt('test');
    const refused = [
      order(),
      order({ tif: 'ioc' }),
      order({ ro: true }),
      autoCancel({ time: 0 }),
      autoCancel({ time: h.clock.now + 60_000 }),
    ];
    for (const c of refused)
      await expect(
        s.perpsSend(owner, c, { authority: held(), origin: 'panic', pass: PANIC_PASS }),
        c.type,
      ).rejects.toMatchObject({ name: 'Signer.HaltedError' });
    await expect(
      s.perpsSend(owner, cancelAll({}), { authority: held(), origin: 'panic', pass: PANIC_PASS }),
    ).resolves.toMatchObject({ status: 'ok' });
    await expect(s.clobCancelAll(owner, { authority: held(), pass: PANIC_PASS })).resolves.toMatchObject({
      canceled: [expect.any(String)],
    });
    // A reduce-only IOC close is let through (the venue refuses it here: there is no position to reduce).
    const close = await s
      .perpsSend(owner, order({ ro: true, tif: 'ioc' }), { authority: held(), origin: 'panic', pass: PANIC_PASS })
      .catch((e: unknown) => e);
    expect(close).not.toMatchObject({ name: 'Signer.HaltedError' });
    s.resume();
  });

  it('resolves once a submission already in flight has settled, and at most after its drain time', async () => {
    const s = service();
    let release!: () => void;
    hold = new Promise((r) => (release = r));
    const inFlight = s.perpsSend(owner, order(), { authority: held(), origin: 'test' });
    await new Promise((r) => setTimeout(r, 50));
    let drained: { unsettled: number } | undefined;
    const halted = s.halt('test', 10_000).then((x) => (drained = x));
    await new Promise((r) => setTimeout(r, 50));
    expect(drained).toBeUndefined(); // still waiting for the order
    release();
    hold = undefined;
    await expect(inFlight).resolves.toMatchObject([{ status: 'ok' }]);
    await halted;
    expect(drained).toEqual({ unsettled: 0 });
    s.resume();
    // Never answered: the drain gives up after drainMs and says so.
    hold = new Promise(() => undefined);
    void s.perpsSend(owner, order(), { authority: held(), origin: 'test' }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    await expect(s.halt('test', 100)).resolves.toEqual({ unsettled: 1 });
    hold = undefined;
    s.resume();
  });
});

describe('SigningService request deadlines', () => {
  it('a silent venue gives "no answer" after the deadline instead of hanging', async () => {
    const s = service({ requestTimeoutMs: 300 });
    await s.perpsDomains();
    h.ctx.setSilent('perps', true);
    h.ctx.setSilent('clob', true);
    try {
      await expect(s.reads.perpsRead(owner, 'openOrders')).rejects.toMatchObject({ name: 'Http.NetworkError' });
      await expect(s.perpsSend(owner, order(), { authority: held(), origin: 'test' })).rejects.toBeInstanceOf(
        OutcomeUnknownError,
      );
      await expect(s.reads.clobOpenOrders(owner)).rejects.toMatchObject({ name: 'Http.NetworkError' });
      await expect(s.clobCancelAll(owner, { authority: held() })).rejects.toMatchObject({ name: 'Http.NetworkError' });
      // A per-call deadline overrides the default.
      const t0 = Date.now();
      await expect(s.reads.perpsRead(owner, 'portfolio', undefined, { timeoutMs: 50 })).rejects.toMatchObject({
        name: 'Http.NetworkError',
      });
      expect(Date.now() - t0).toBeLessThan(300);
    } finally {
      h.ctx.setSilent('perps', false);
      h.ctx.setSilent('clob', false);
    }
  });
});
