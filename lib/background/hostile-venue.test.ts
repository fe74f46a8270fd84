/**
 * A hostile venue or relayer changes nothing it should not: live streams and the session transport
 * survive junk frames, gap resyncs are coalesced (`lib/streams/coalesce.ts`), stream decimals are
 * validated (`lib/streams/perps-frames.ts`), revoke, lock and panic act before the next session frame,
 * secrets appear in no push, the popup hears pushes only from the extension outside tabs
 * (`entrypoints/popup/api.ts`), a pinned EIP-712 domain is kept, deposit-wallet signing and re-deriving
 * API keys wait for the real-money confirmation, and a relayer answer that cannot be read after a submit
 * is an unknown outcome, never a plain failure (`lib/background/procedures/deposit.ts`). The real
 * background on the fake browser against the in-process sandbox; `ws` as the worker's WebSocket, wrapped
 * so a test can play a hostile venue by injecting frames into the background's sockets.
 */
import 'fake-indexeddb/auto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { WebSocket as NodeWebSocket } from 'ws';
import type { Address } from 'viem';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { startBackground } from './index';
import { onStreamPush } from '../../entrypoints/popup/api';
import type { BackgroundBrowser } from './browser';
import {
  BOUNDS,
  browser,
  callAs,
  KDF,
  onboardDemo,
  recordingFetch,
  recordingWebSocket,
  sandboxSuite,
  type SentRequest,
  sleep,
  until,
  waitPending,
  withPages,
  type PagedBackground,
  type Reply,
  markPrice,
  btcOnly,
} from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = {
  get id() {
    return fakeBrowser.runtime.id;
  },
  url: `${SITE}/app`,
  frameId: 0,
  tab: { id: 3, url: `${SITE}/app` },
};

const recorder = recordingWebSocket();
const wsLog = recorder.log;
/** Delivers `frame` to the background as if the venue had sent it on `ws`. */
const inject = (ws: NodeWebSocket, frame: unknown) =>
  ws.emit('message', Buffer.from(typeof frame === 'string' ? frame : JSON.stringify(frame)), false);
const sessionSocket = () => wsLog.sockets.filter((s) => s.authed && s.readyState === NodeWebSocket.OPEN).at(-1)!;
const commandFrames = () => wsLog.frames.filter((f) => 'sig' in f);

let h: Harness;
const started = sandboxSuite((x) => (h = x));
beforeEach(() => recorder.reset());
afterEach(() => {
  // The venue's per-account weight (the frame-flood test spends it on purpose): the next test starts with a fresh
  // budget.
  for (const w of [h.ctx.perpsRequestWeight, h.ctx.perpsActionWeight])
    (w as unknown as { log: Map<string, unknown> }).log.clear();
});

type Wire = { sent: SentRequest[] };
/** Everything the extension pages and the OS would see from the background. */
type Outside = { pushes: unknown[]; notices: unknown[] };
let n = 0;
async function ready(): Promise<{ bg: PagedBackground; wire: Wire; out: Outside }> {
  const wire: Wire = { sent: [] };
  const out: Outside = { pushes: [], notices: [] };
  const fetchFn = recordingFetch(wire);
  const b: BackgroundBrowser = {
    ...browser,
    runtime: { ...browser.runtime, sendMessage: async (m: unknown) => void out.pushes.push(structuredClone(m)) },
    notifications: { create: async (id: string, o: unknown) => void out.notices.push({ id, o }) },
  } as BackgroundBrowser;
  const bg = withPages(
    startBackground({
      browser: b,
      dbName: `hostile-venue-${n++}`,
      kdf: KDF,
      bounds: BOUNDS,
      fetchFn,
      WebSocket: recorder.WebSocket,
    }),
  );
  started.push(bg);
  await onboardDemo(bg, h, page);
  return { bg, wire, out };
}
async function sessionLive(bg: PagedBackground): Promise<void> {
  await until(
    async () =>
      JSON.stringify(await callAs(bg, 'streams.status')).includes('"venue":"perps","account"') &&
      JSON.stringify(await callAs(bg, 'streams.status')).includes('"state":"live"'),
  );
  await until(() => !!sessionSocket());
}
const owner = () => h.demo.owner.address;
const mark = (iid: number) => markPrice(h, iid);
let coidN = 0;
const freshCoid = () => `${Date.now().toString(16)}a${(++coidN).toString(16)}`.padStart(32, 'd').slice(-32);
const btcOrder = async (coid = freshCoid(), qty = '0.01') => ({
  op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty, p: await mark(1), tif: 'gtc', po: true, c: coid }] },
});
const grant = (bg: PagedBackground) =>
  bg.grants().create({ origin: SITE, account: owner(), limits: btcOnly as never, durationMs: 3_600_000 });
const seen = (e: unknown) => ({ code: (e as { code?: number }).code, message: (e as { message?: string }).message });

describe('a hostile venue over the session socket', () => {
  it("a flood of sq-gapped frames does not spend the client weight budget nor block the person's orders", async () => {
    const { bg, wire } = await ready();
    await grant(bg);
    await sessionLive(bg);
    const ws = sessionSocket();
    await sleep(200); // the start resync
    const readsBefore = wire.sent.filter((s) => s.url.includes('/v1/account/open-orders')).length;
    // A channel the extension does not even show ("funding"), with a sequence that skips on every frame.
    for (let i = 0; i < 1000; i++) inject(ws, { ch: 'funding', ts: Date.now(), sq: (i % 2) * 10 + i * 3, data: {} });
    await sleep(5000); // the re-reads the flood started are all sent (or refused by the meter)
    const reads = wire.sent.filter((s) => s.url.includes('/v1/account/open-orders')).length - readsBefore;
    const r = await Promise.race([
      bg
        .page(page)
        .request('perps_sendCommand', await btcOrder())
        .catch((e: unknown) => e),
      sleep(8000).then(() => 'no answer in 8 s'),
    ]);
    if (process.env.ATK_DEBUG)
      console.log(
        'frame flood',
        bg.registry.size,
        JSON.stringify(bg.registry.list()).slice(0, 400),
        reads,
        wire.sent.filter((s) => s.url.includes('/v1/account/portfolio')).length,
        JSON.stringify(r),
        JSON.stringify(seen(r)),
      );
    // Secure: a gap forces at most a bounded number of re-reads, and the person's order is not refused by the client's
    // own meter.
    expect.soft(reads).toBeLessThanOrEqual(20);
    expect((r as { status?: string }[])[0]?.status, JSON.stringify(seen(r))).toBe('ok');
  });

  it(
    'malformed, huge, spoofed-answer and unknown-channel ' +
      'frames: no crash, session stays live, nothing signed or sent',
    async () => {
      const { bg, wire } = await ready();
      await sessionLive(bg);
      const ws = sessionSocket();
      const junk: unknown[] = [
        'not json',
        '{"id":',
        'x'.repeat(2_000_000),
        JSON.stringify({ ch: 'orders', ts: Date.now(), sq: 1, data: { oid: 'x'.repeat(100_000) } }),
        { id: 99999, data: { status: 'ok' } },
        { id: -1, data: null },
        { id: 1, data: { status: 'err', error: 'unauthorized' } }, // the auth request's id again, after it was answered
        { id: 2, data: [{ status: 'err' }] },
        { ch: '__proto__', ts: 1, sq: 1, data: {} },
        { ch: 'constructor', ts: 1, sq: 1, data: { a: 1 } },
        { ch: 'tpsl::999999999', ts: 1, sq: 1, data: { oid: 1, st: 'x'.repeat(10_000) } },
        [1, 2, 3],
        null,
        123,
      ];
      for (const j of junk) {
        inject(ws, j);
        await sleep(20);
        if (process.env.ATK_DEBUG) console.log(JSON.stringify(j).slice(0, 60), ws.readyState);
      }
      for (let i = 0; i < 5000; i++) inject(ws, '{');
      await sleep(300);
      expect(ws.readyState).toBe(NodeWebSocket.OPEN);
      expect(JSON.stringify(await callAs(bg, 'streams.status'))).toContain('"state":"live"');
      expect(commandFrames()).toHaveLength(0);
      expect(wire.sent.filter((s) => s.method === 'POST' && s.url.includes('/perps/v1/trade'))).toHaveLength(0);
      expect(bg.registry.size).toBe(0);
      expect((await bg.db().getAll('audit')).filter((e) => e.kind.startsWith('perps.'))).toHaveLength(0);
    },
  );

  it(
    'a stray answer for the next command id sent before the command, ' +
      "and a second answer after it, are not taken as the command's",
    async () => {
      const { bg } = await ready();
      await grant(bg);
      await sessionLive(bg);
      const ws = sessionSocket();
      // The hostile venue guesses the next ids and pre-answers "ok" for them.
      for (let id = 1; id < 50; id++) inject(ws, { id, data: [{ status: 'ok', oid: 424242, coid: 'spoofed' }] });
      // An order the venue refuses (far beyond the margin): the page must see the refusal, not the pre-answer.
      const tooBig = bg
        .page(page)
        .request('perps_sendCommand', await btcOrder(freshCoid(), '100000'))
        .catch((e: unknown) => e);
      const [view] = await waitPending(bg);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const refused = await tooBig;
      expect(seen(refused).code, JSON.stringify({ ...seen(refused), data: (refused as { data?: unknown }).data })).toBe(
        -32003,
      );
      // After the real answer, the venue answers the same id again with "ok": the next command is not confused.
      const last = commandFrames().at(-1)!;
      inject(ws, { id: last.id, data: [{ status: 'ok', oid: 1, coid: 'late' }] });
      const coid = freshCoid();
      const r = (await bg.page(page).request('perps_sendCommand', await btcOrder(coid))) as {
        status: string;
        coid?: string;
      }[];
      expect(r[0]).toMatchObject({ status: 'ok', coid });
    },
  );

  it(
    'lock closes the session before the next command: ' + 'after vault.lock nothing more is sent on the socket',
    async () => {
      const { bg } = await ready();
      await grant(bg);
      await sessionLive(bg);
      const ws = sessionSocket();
      await callAs(bg, 'vault.lock');
      await sleep(700); // one lock tick
      expect(ws.readyState).not.toBe(NodeWebSocket.OPEN);
      const frames = wsLog.frames.length;
      const r = await bg
        .page(page)
        .request('perps_sendCommand', await btcOrder())
        .catch((e: unknown) => e);
      expect((r as { code?: number }).code).toBeDefined();
      expect(wsLog.frames.length).toBe(frames);
    },
  );
});

describe('revoke and panic act before the next session frame', () => {
  it(
    'after a revoke the next order over the live session ' + 'asks the person; nothing is sent before the answer',
    async () => {
      const { bg } = await ready();
      const g = await grant(bg);
      await sessionLive(bg);
      const first = (await bg.page(page).request('perps_sendCommand', await btcOrder())) as { status: string }[];
      expect(first[0]!.status).toBe('ok');
      await bg.grants().revoke((g as { id: string }).id);
      const frames = commandFrames().length;
      const next = bg
        .page(page)
        .request('perps_sendCommand', await btcOrder())
        .catch((e: unknown) => e);
      const [view] = await waitPending(bg);
      expect(view).toBeDefined();
      expect(commandFrames()).toHaveLength(frames);
      bg.registry.decide(view!.id, { approve: false, digest: view!.digest });
      expect(seen(await next).code).toBe(4001);
      expect(commandFrames()).toHaveLength(frames);
    },
  );

  it(
    'while a command waits for its session answer, a halt ' + 'refuses the next one before signing (no second frame)',
    async () => {
      const { bg } = await ready();
      await grant(bg);
      await sessionLive(bg);
      h.ctx.delayMs.set('perps', 300);
      const a = bg
        .page(page)
        .request('perps_sendCommand', await btcOrder())
        .catch((e: unknown) => e);
      await until(() => commandFrames().length === 1);
      void bg.service().halt('panic');
      const b = await bg
        .page(page)
        .request('perps_sendCommand', await btcOrder())
        .catch((e: unknown) => e);
      expect(seen(b).code).toBe(4900);
      await a;
      h.ctx.delayMs.delete('perps');
      expect(commandFrames().filter((f) => (f.op as { type: string }).type === 'createOrders')).toHaveLength(1);
    },
  );
});

describe('notifications from a hostile venue frame', () => {
  it("an order frame whose quantity is words raises no OS notification carrying the venue's text", async () => {
    const { bg, out } = await ready();
    await sessionLive(bg);
    const lure =
      '0.01 BTC. SECURITY ALERT from Countersign: your vault is ' +
      'compromised, re-import your key at https://evil.example';
    inject(sessionSocket(), {
      ch: 'orders',
      ts: Date.now(),
      sq: 1,
      data: { oid: 987654, iid: 1, buy: true, p: '1', qty: lure, status: 'expired', rest: '0', fill: '0' },
    });
    await sleep(1500);
    const text = JSON.stringify(out.notices);
    expect(out.notices.length, 'the frame raised a notice').toBeGreaterThanOrEqual(0);
    expect(text).not.toContain('evil.example');
    expect(text).not.toContain('SECURITY ALERT');
  });
});

describe('secrets appear in no push, and a page reaches no stream procedure', () => {
  it(
    'the proxy secret and order-book API credentials appear in no push, ' +
      'status, audit, notification or page event; a page gets no stream data',
    async () => {
      const { bg, out } = await ready();
      await grant(bg);
      await sessionLive(bg);
      await until(async () => JSON.stringify(await callAs(bg, 'streams.status')).includes('"venue":"clob"')).catch(
        () => undefined,
      );
      const pg = bg.page(page);
      const coid = freshCoid();
      await pg.request('perps_sendCommand', await btcOrder(coid));
      await pg
        .request('perps_sendCommand', { op: { type: 'cancelOrdersCOID', args: [{ iid: 1, c: coid }] } })
        .catch(() => undefined);
      // A hostile venue frame whose error/text is a guess at echoing things back.
      inject(sessionSocket(), { id: 777, data: { status: 'err', error: 'x' } });
      await sleep(500);
      const creds = await bg.vault().clobCredentials(owner());
      const secrets = [
        h.demo.proxy.secret,
        creds.secret,
        creds.passphrase,
        h.demo.proxy.privateKey.slice(2),
        h.demo.owner.privateKey.slice(2),
      ];
      const status = await callAs(bg, 'streams.status');
      const watch = await callAs(bg, 'streams.watch', { perpsIid: 1, account: owner() });
      const audit = await bg.db().getAll('audit');
      const check = await callAs(bg, 'settings.checkConnections');
      const blob = JSON.stringify({
        pushes: out.pushes,
        notices: out.notices,
        status,
        watch,
        audit,
        check,
        events: pg.events,
      });
      expect(out.pushes.length).toBeGreaterThan(0);
      for (const s of secrets) expect(blob.includes(s), `secret ${s.slice(0, 6)}… leaked`).toBe(false);
      // The API key is an identifier, not a secret, but it should not be pushed either.
      expect(JSON.stringify(out.pushes).includes(creds.apiKey)).toBe(false);
      // A page's port carries only provider events, never stream data.
      expect(JSON.stringify(pg.events)).not.toMatch(/streams\.|resync|portfolio|fills/);
    },
  );

  it('a web page cannot call any stream, settings, deposit-wallet or relayer procedure (popup only)', async () => {
    const { bg } = await ready();
    const tab = { id: fakeBrowser.runtime.id, url: `${SITE}/app`, frameId: 0, tab: { id: 3, url: `${SITE}/app` } };
    for (const type of [
      'streams.status',
      'streams.watch',
      'settings.checkConnections',
      'settings.set',
      'clob.depositWallet.derive',
      'clob.depositWallet.status',
      'clob.depositWallet.create',
      'clob.walletBatch',
      'clob.createOrDerive',
      'notifications.set',
    ]) {
      const r = (await callAs(bg, type, { account: owner(), replaceCredentials: true }, tab)) as Reply;
      expect(r.ok, type).toBe(false);
      expect(r.error?.code, type).toBe(4100);
    }
    // Nor over its port (the provider's methods).
    for (const m of ['streams.status', 'clob.depositWallet.derive', 'streams_subscribe']) {
      const e = await bg
        .page(page)
        .request(m, [{ account: owner() }])
        .catch((x: unknown) => x);
      expect((e as { code?: number }).code, m).toBeDefined();
    }
  });
});

describe('the popup hears pushes only from the extension', () => {
  it("the popup takes stream pushes only from the background, not from a tab's content script", async () => {
    const got: unknown[] = [];
    const off = onStreamPush((m) => got.push(m));
    const fake = {
      type: 'streams.push',
      account: owner(),
      push: {
        kind: 'fills',
        fills: [
          {
            order_id: 1,
            instrument_id: 1,
            side: 'long',
            price: '1',
            quantity: '1000',
            fee: '0',
            taker: true,
            timestamp: Date.now(),
          },
        ],
      },
    };
    // What a content script in an https tab (its renderer compromised) can send with runtime.sendMessage.
    const handled = await fakeBrowser.runtime.onMessage.trigger(
      fake,
      { id: fakeBrowser.runtime.id, url: 'https://evil.example/', tab: { id: 9 } as never, frameId: 0 },
      () => undefined,
    );
    await Promise.all(handled.map((answer) => Promise.resolve(answer)));
    off();
    expect(got).toHaveLength(0);
  });
});

describe('the gateway never chooses what keys sign', () => {
  it(
    "a pinned perps domain that differs from the gateway's " +
      'exchange info refuses before signing: no frame, no REST post',
    async () => {
      const { bg, wire } = await ready();
      await grant(bg);
      await sessionLive(bg);
      await callAs(bg, 'settings.set', { perpsDomain: { name: 'Polymarket', version: '9' } });
      const e = await bg
        .page(page)
        .request('perps_sendCommand', await btcOrder())
        .catch((x: unknown) => x);
      expect(seen(e).message).toMatch(/Refused to sign|domain/);
      expect(commandFrames()).toHaveLength(0);
      expect(wire.sent.filter((s) => s.method === 'POST' && s.url.includes('/perps/v1/trade'))).toHaveLength(0);
    },
  );
});

describe(
  'deposit wallet and relayer wait for the real-money ' +
    'confirmation; the pending memory is bounded and holds no secret',
  () => {
    let h2: Harness;
    beforeAll(async () => {
      h2 = await startHarness();
    });
    afterAll(async () => {
      await h2.close();
    });
    /** A fresh install with a new owner key on `h2`; `tamper` may rewrite a relayer answer (a hostile relayer). */
    async function depositAccount(tamper?: (url: string, body: string) => string | undefined) {
      const log: { sent: SentRequest[] } = { sent: [] };
      const sent = log.sent;
      const fetchFn = recordingFetch(log, {
        onAnswer: async (url, _method, res) => {
          if (!tamper) return res;
          const text = await res.text();
          const changed = tamper(url, text);
          return new Response(changed ?? text, { status: res.status, headers: res.headers });
        },
      });
      const bg = withPages(
        startBackground({
          browser,
          dbName: `hostile-venue-dep-${n++}`,
          kdf: KDF,
          bounds: BOUNDS,
          fetchFn,
          now: () => h2.clock.now,
        }),
      );
      started.push(bg);
      const ok = async <T = Record<string, unknown>>(type: string, payload: unknown = {}): Promise<T> => {
        const r = (await callAs(bg, type, payload)) as Reply;
        if (!r.ok) throw new Error(`${type}: ${r.error?.name} ${r.error?.shortMessage}`);
        return r.result as T;
      };
      await ok('vault.create', { password: 'a good password' });
      await ok('settings.set', {
        perpsUrl: h2.perps,
        clobUrl: h2.clobUrl,
        gammaUrl: `${h2.url}/gamma`,
        dataUrl: `${h2.url}/data`,
        relayerUrl: `${h2.url}/relayer`,
        rpcUrl: `${h2.url}/rpc`,
      });
      const { address: owner } = await ok<{ address: Address }>('vault.generateOwnerKey', {});
      const mine = () => {
        h2.clock.advance(h2.ctx.config.relayerMineMs);
        h2.ctx.relayerChain.settle(h2.clock.now, h2.ctx.config.relayerMineMs);
      };
      const deploy = async () => {
        await ok('clob.depositWallet.derive', { account: owner });
        const created = await ok<{ transaction: { transactionID: string } }>('clob.depositWallet.create', {
          account: owner,
        });
        mine();
        await ok('clob.depositWallet.status', { account: owner, transactionID: created.transaction.transactionID });
      };
      return { bg, owner, sent, ok, mine, deploy };
    }
    /** A custom setup with one service off loopback (a bridge the batch never calls): real money, not confirmed. */
    const unconfirmed = { bridgeUrl: 'https://bridge.example' };

    it(
      'a deposit-wallet batch (owner-signed, moves funds) is ' +
        'refused while the venue is not confirmed, like an order',
      async () => {
        const { bg, owner, sent, ok, deploy } = await depositAccount();
        await deploy();
        const s = await ok<{ preset: string }>('settings.set', unconfirmed);
        expect(s.preset).toBe('custom');
        // Control: an order is refused before signing (the confirmation gate holds for orders).
        const m = h2.ctx.clob.markets[0]!;
        const order = (await callAs(bg, 'clob.postOrders', {
          account: owner,
          orders: [{ tokenId: m.tokenIds[0], side: 'BUY', price: '0.5', size: '10', orderType: 'GTC' }],
        })) as Reply;
        expect(order.error?.name).toBe('Settings.VenueNotConfirmedError');
        // The batch: the person approves its window (or the window is never shown); nothing may be signed or submitted.
        const submitsBefore = sent.filter((x) => x.method === 'POST' && x.url.endsWith('/relayer/submit')).length;
        const reply = callAs(bg, 'clob.walletBatch', { account: owner, batch: { kind: 'setup' } }) as Promise<Reply>;
        const view = await Promise.race([reply.then(() => undefined), waitPending(bg).then(([v]) => v)]);
        if (view) bg.registry.decide(view.id, { approve: true, digest: view.digest });
        const r = await reply;
        expect(
          sent.filter((x) => x.method === 'POST' && x.url.endsWith('/relayer/submit')).length - submitsBefore,
        ).toBe(0);
        expect(r.error?.name).toBe('Settings.VenueNotConfirmedError');
      },
    );

    it(
      're-deriving order-book API credentials (an owner-key ' + 'L1 signature) waits for the real-money confirmation',
      async () => {
        const { bg, owner, sent, ok } = await depositAccount();
        await ok('settings.set', unconfirmed);
        const before = sent.length;
        const r = (await callAs(bg, 'clob.createOrDerive', { account: owner })) as Reply;
        const l1 = sent.slice(before).filter((x) => /\/auth\/(api-key|derive-api-key)/.test(x.url));
        expect(l1).toHaveLength(0);
        expect(r.error?.name).toBe('Settings.VenueNotConfirmedError');
      },
    );

    it(
      'a relayer that answers a batch with an empty transaction id: the ' +
        'submitted batch is not reported (and audited) as a plain failure',
      async () => {
        let hostile = false;
        const { bg, owner, sent, deploy } = await depositAccount((url, body) =>
          hostile && url.endsWith('/relayer/submit') && body.includes('"transactionID"')
            ? body.replace(/"transactionID":"[^"]*"/, '"transactionID":""')
            : undefined,
        );
        await deploy();
        hostile = true;
        const reply = callAs(bg, 'clob.walletBatch', { account: owner, batch: { kind: 'setup' } }) as Promise<Reply>;
        const [view] = await waitPending(bg);
        bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
        const r = await reply;
        // The relayer took the owner-signed batch (it is on its way on chain)…
        expect(sent.filter((x) => x.method === 'POST' && x.url.endsWith('/relayer/submit'))).toHaveLength(2);
        // …so neither the audit nor the popup may say it failed (a person would run it again).
        const audit = (await bg.db().getAll('audit')).filter((e) => e.kind === 'relayer.walletBatch');
        expect
          .soft(
            audit.map((e) => e.result),
            JSON.stringify(audit),
          )
          .not.toContain('error');
        expect(r.ok || /Unknown|unknown/.test(r.error?.name ?? ''), JSON.stringify(r)).toBe(true);
      },
    );

    it(
      'the pending memory holds no secret and stays ' + 'bounded (20) however many transactions are submitted',
      async () => {
        const { bg, owner, ok, deploy } = await depositAccount();
        await deploy();
        for (let i = 0; i < 23; i++) {
          const reply = callAs(bg, 'clob.walletBatch', { account: owner, batch: { kind: 'setup' } }) as Promise<Reply>;
          const [view] = await waitPending(bg);
          bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
          expect((await reply).ok).toBe(true);
        }
        const stored = (await bg.db().get('settings', 'relayerPending')) as unknown[];
        expect(stored.length).toBeLessThanOrEqual(20);
        const blob = JSON.stringify(stored);
        const builder = await bg.vault().builderCredentials(owner);
        const api = await bg.vault().clobCredentials(owner);
        for (const s of [builder.secret, builder.passphrase, api.secret, api.passphrase])
          expect(blob.includes(s)).toBe(false);
        const status = await ok<{ pending?: unknown[] }>('clob.depositWallet.status', { account: owner });
        expect((status.pending ?? []).length).toBeLessThanOrEqual(20);
      },
    );
  },
);
