/**
 * The message contract: only the popup and the approval window reach a procedure, the page reaches the
 * background through its one port route and odd input is refused there before anything runs, replies to
 * extension pages carry no key or secret, the trading-session gate runs before any handler, and a page is
 * told codes a client does not retry (keyed submissions join or repeat their unknown outcome, never send
 * again). The real background on the fake browser against the in-process sandbox. Black-box: procedures
 * through `bg.handle(message, sender)`, page requests through the port (`bg.page(sender)`), the sandbox's
 * venue state and what this background put on the wire.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { createClient, custom } from 'viem';
import type { Harness } from '../../test/kits/sandbox';
import { PROCEDURES } from '../messaging/protocol';
import { PORT_NAME } from '../bridge/framing';
import { startBackground } from './index';
import { AUTOLOCK_ALARM } from './index';
import {
  BOUNDS,
  browser,
  KDF,
  onboardDemo,
  type PagedBackground,
  recordingFetch,
  type Reply,
  sandboxSuite,
  type SentRequest,
  sleep,
  until,
  waitPending,
  withPages,
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
const extBase = () => fakeBrowser.runtime.getURL('/').replace(/\/$/, '');
const popup = () => ({ id: fakeBrowser.runtime.id, url: `${extBase()}/popup.html` });
const approvalWindow = () => ({ id: fakeBrowser.runtime.id, url: `${extBase()}/approval.html` });
let n = 0;
type Bg = PagedBackground;
const call = async (bg: Bg, type: string, payload: unknown = {}, sender: object = popup()) =>
  (await bg.handle({ type, payload }, sender)) as Reply;

let h: Harness;
const started = sandboxSuite((x) => (h = x));

const owner = () => h.demo.owner.address;
const BTC = '1';
const mark = async (iid: string) =>
  ((await h.read('tickers', { instrument_id: Number(iid) })) as { mark_price: string }[])[0]!.mark_price;
const btcOrder = async (qty = '0.01') => ({
  op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty, p: await mark(BTC), tif: 'gtc', po: true }] },
});

/**
 * What this background sent, with hooks: `answer` rewrites a gateway answer by path; `dropAnswer` delivers the request
 * but loses the answer.
 */
type Wire = {
  sent: SentRequest[];
  dropAnswer?: (url: string, method: string) => boolean;
  answer?: (url: string, body: unknown) => unknown;
};

async function ready(o: { connect?: boolean } = {}): Promise<{ bg: Bg; wire: Wire }> {
  const wire: Wire = { sent: [] };
  const fetchFn = recordingFetch(wire, {
    onAnswer: async (url, method, res) => {
      if (wire.dropAnswer?.(url, method)) throw new TypeError('fetch failed: socket hang up (ECONNRESET) at 127.0.0.1');
      if (!wire.answer) return res;
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      const out = wire.answer(url, body);
      return new Response(typeof out === 'string' ? out : JSON.stringify(out), {
        status: res.status,
        headers: res.headers,
      });
    },
  });
  const bg = withPages(
    startBackground({ browser, dbName: `message-contract-${n++}`, kdf: KDF, bounds: BOUNDS, fetchFn }),
  );
  started.push(bg);
  await onboardDemo(bg, h, page, o);
  return { bg, wire };
}
const state = async (bg: Bg) => ((await call(bg, 'vault.status')).result as { state: string }).state;
const armed = async (bg: Bg, venue = 'perps') =>
  ((await call(bg, 'deadman.status')).result as { venues: { venue: string; armed: boolean }[] }).venues.some(
    (v) => v.venue === venue && v.armed,
  );
const grant = (bg: Bg, limits: object = btcOnly, durationMs = 3_600_000) =>
  bg.grants().create({ origin: SITE, account: owner(), limits: limits as never, durationMs });
const openPerps = () =>
  [...h.ctx.venue.orders.values()].filter((o) => o.owner === owner().toLowerCase() && o.status === 'open');
const perpsOrderPosts = (w: Wire) =>
  w.sent.filter((s) => s.method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(s.url)).length;

/** Every secret the background holds, in the forms it could appear in (hex with and without 0x, any case). */
function secrets(): string[] {
  const strip = (k: string) => k.replace(/^0x/, '').toLowerCase();
  return [
    strip(h.demo.owner.privateKey),
    strip(h.demo.proxy.privateKey),
    h.demo.proxy.secret,
    h.demo.clob.secret,
    h.demo.clob.secret.replace(/=+$/, ''),
    h.demo.clob.passphrase,
  ];
}
function leaked(x: unknown): string[] {
  const text = JSON.stringify(x).toLowerCase();
  return secrets().filter((s) => text.includes(s.toLowerCase()));
}

describe('senders: no content script, sub-frame, other extension or look-alike reaches a procedure', () => {
  it(
    'every procedure refuses (4100) every sender that is ' + 'not the popup or the approval window, and runs nothing',
    async () => {
      const { bg } = await ready({ connect: false });
      const id = fakeBrowser.runtime.id;
      const bad: [string, object][] = [
        ['content script (top frame)', page],
        ['content script in a sub-frame', { ...page, frameId: 7 }],
        ['another extension naming our popup', { id: 'evil-extension-id', url: `${extBase()}/popup.html` }],
        [
          'another extension from its own popup',
          { id: 'evil-extension-id', url: 'chrome-extension://evil-extension-id/popup.html' },
        ],
        [
          'our id, a web page called popup.html',
          {
            id,
            url: 'https://evil.example/popup.html',
            frameId: 0,
            tab: { id: 9, url: 'https://evil.example/popup.html' },
          },
        ],
        ['our id, another extension page (options)', { id, url: `${extBase()}/options.html` }],
        ['our id, popup path under a subfolder', { id, url: `${extBase()}/x/popup.html` }],
        ['our id, no url', { id }],
        ['our id, unparsable url', { id, url: 'not a url' }],
        ['our id, javascript: url', { id, url: 'javascript:alert(1)//popup.html' }],
        ['our id, file: url', { id, url: 'file:///popup.html', frameId: 0, tab: { id: 1 } }],
        ['our id, data: url', { id, url: 'data:text/html,popup.html', frameId: 0, tab: { id: 1 } }],
        ['no id at all, popup url', { url: `${extBase()}/popup.html` }],
      ];
      const before = JSON.stringify((await call(bg, 'vault.status')).result);
      for (const [what, sender] of bad) {
        for (const type of Object.keys(PROCEDURES)) {
          const payload =
            type === 'vault.revealOwnerKey'
              ? { address: owner(), password: 'a good password' }
              : type === 'vault.lock'
                ? {}
                : {};
          const r = await call(bg, type, payload, sender);
          expect(r.ok, `${what} → ${type}`).toBe(false);
          expect(r.error?.code, `${what} → ${type}`).toBe(4100);
        }
      }
      // Nothing ran: still unlocked (vault.lock refused), same status.
      expect(await state(bg)).toBe('unlocked');
      expect(JSON.stringify((await call(bg, 'vault.status')).result)).toBe(before);
    },
  );

  it('prototype keys, odd types and look-alike names as a procedure name: 4200, never a handler', async () => {
    const { bg } = await ready({ connect: false });
    for (const type of [
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      'valueOf',
      'vault.status ',
      'VAULT.STATUS',
      'vault',
      '',
      'vault.revealOwnerKey\u0000',
    ]) {
      expect((await call(bg, type)).error?.code, JSON.stringify(type)).toBe(4200);
    }
    for (const m of [
      null,
      undefined,
      1,
      'vault.status',
      [],
      { type: ['vault.status'] },
      { type: { toString: () => 'vault.status' } },
      { payload: {} },
    ]) {
      const r = (await bg.handle(m, popup())) as Reply;
      expect(r.ok, JSON.stringify(m)).toBe(false);
    }
    // An exported key via a prototype payload key: strict inputs refuse it.
    const r = (await bg.handle(
      JSON.parse(
        '{"type":"vault.revealOwnerKey","payload":{"__proto__":{"password":"a good password"},"address":"' +
          owner() +
          '"}}',
      ),
      popup(),
    )) as Reply;
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe(-32602);
  });

  it(
    'approval.showing / approval.empty from the popup: 4100; ' +
      'the approval window cannot close over a pending request',
    async () => {
      const { bg } = await ready();
      const p = bg
        .page(page)
        .request('perps_sendCommand', await btcOrder())
        .catch((e: { code?: number }) => e);
      const [view] = await waitPending(bg);
      expect(view).toBeDefined();
      expect((await call(bg, 'approval.showing', { id: view!.id, digest: view!.digest })).error).toMatchObject({
        code: 4100,
      });
      expect((await call(bg, 'approval.empty', {})).error).toMatchObject({ code: 4100 });
      expect((await call(bg, 'approval.empty', {}, approvalWindow())).result).toEqual({ closed: false });
      // showing a request id that is not pending, or with junk: refused by shape or ignored.
      expect(
        (await call(bg, 'approval.showing', { id: 'x'.repeat(65), digest: view!.digest }, approvalWindow())).error,
      ).toMatchObject({ code: -32602 });
      expect(
        (await call(bg, 'approval.showing', { id: view!.id, digest: 'nope' }, approvalWindow())).error,
      ).toMatchObject({ code: -32602 });
      expect(bg.registry.size).toBe(1);
      // Approving without the digest the window showed never signs.
      expect((await call(bg, 'approval.decide', { id: view!.id, approve: true }, approvalWindow())).ok).toBe(false);
      expect(await p).toMatchObject({ code: 4001 });
      expect(openPerps().filter((o) => o.status === 'open').length).toBe(0);
    },
  );
});

describe('the page route: the port refuses what is odd before anything runs', () => {
  it('prototype keys and non-string methods: 4200; no approval opens', async () => {
    const { bg } = await ready();
    const tab = bg.page(page);
    for (const m of [
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      'valueOf',
      'isPrototypeOf',
      '__defineGetter__',
    ]) {
      await expect(tab.request(m, [{}]), m).rejects.toMatchObject({ code: 4200 });
    }
    // A compromised content script: non-string method (becomes '') and odd ids.
    const replies: unknown[] = [];
    const raw = bg.page(page);
    for (const method of [1, null, { name: 'perps_sendCommand' }, ['perps_sendCommand']])
      raw.send({ id: `odd-${String(replies.length)}`, method, params: await btcOrder() });
    // ids that are not strings, or too long, are dropped unanswered (no work, no approval).
    raw.send({ id: 7, method: 'perps_sendCommand', params: await btcOrder() });
    raw.send({ id: 'x'.repeat(65), method: 'perps_sendCommand', params: await btcOrder() });
    raw.send({ id: { a: 1 }, method: 'perps_sendCommand', params: await btcOrder() });
    await sleep(300);
    expect(bg.registry.size).toBe(0);
  });

  it('params over 64 KiB, cyclic, BigInt: -32602 before anything runs', async () => {
    const { bg } = await ready();
    const tab = bg.page(page);
    const big = {
      op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.01', p: '1', tif: 'gtc', po: true }] },
      label: 'x'.repeat(70_000),
    };
    await expect(tab.request('perps_sendCommand', big)).rejects.toMatchObject({ code: -32602 });
    const cyc: Record<string, unknown> = { op: { type: 'createOrders', args: [] } };
    cyc.self = cyc;
    await expect(tab.request('perps_sendCommand', cyc)).rejects.toMatchObject({ code: -32602 });
    await expect(
      tab.request('perps_sendCommand', { op: { type: 'createOrders', args: [] }, exp: 10n }),
    ).rejects.toMatchObject({ code: -32602 });
    // Multi-byte: 30 000 × "€" is 90 000 bytes although 30 000 characters.
    await expect(tab.request('perps_sendCommand', { label: '€'.repeat(30_000) })).rejects.toMatchObject({
      code: -32602,
    });
    expect(bg.registry.size).toBe(0);
  });

  it(
    'params that are not JSON but serialise small (ArrayBuffer, Map, Set, a typed array ' +
      'inside a Map) are refused -32602 before anything runs (their size is not measured as {})',
    async () => {
      // Ports that carry structured clones (Firefox; the test kit) deliver these as they are. JSON.stringify
      // of an ArrayBuffer / Map / Set is "{}", so checkRequestSize measures 2 bytes for a 16 MiB payload.
      const { bg } = await ready();
      const tab = bg.page(page);
      const huge = new ArrayBuffer(16 * 1024 * 1024);
      const bigMap = new Map(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, 'v'.repeat(10)]));
      const outcomes: Record<string, unknown> = {};
      for (const [what, params] of [
        ['ArrayBuffer (16 MiB)', huge],
        ['Map (100 000 entries)', bigMap],
        ['Set', new Set(['a'])],
        ['Map holding a 1 MiB typed array', new Map([['k', new Uint8Array(1024 * 1024)]])],
        ['args: ArrayBuffer', { op: { type: 'createOrders', args: huge } }],
      ] as const) {
        outcomes[what] = await tab.request('eth_chainId', params).then(
          (r) => ({ resolved: r }),
          (e: { code?: number }) => ({ code: e.code }),
        );
      }
      // The rule (ports.ts): refused with -32602 when params are not JSON or larger than 64 KiB, before anything runs.
      for (const [what, out] of Object.entries(outcomes))
        expect.soft(out, `${what} reached the provider`).toEqual({ code: -32602 });
    },
  );
});

describe('replies to extension pages never carry a key or a secret', () => {
  it(
    'every read a popup / approval window can make, with perps, ' +
      'order-book and L2 requests pending: no secret in any reply',
    async () => {
      const { bg } = await ready();
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const pendings = [
        bg
          .page(page)
          .request('perps_sendCommand', await btcOrder())
          .catch(() => undefined),
        bg
          .page(page)
          .request('perps_signCommand', await btcOrder())
          .catch(() => undefined),
        bg
          .page(page)
          .request('clob_postOrders', {
            orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
          })
          .catch(() => undefined),
        bg
          .page(page)
          .request('clob_signRequest', { method: 'GET', requestPath: '/data/orders' })
          .catch(() => undefined),
        bg
          .page(page)
          .request('perps_sendCommand', {
            op: { type: 'withdraw', args: [owner(), '0x0000000000000000000000000000000000000001', '1', owner()] },
          })
          .catch(() => undefined),
      ];
      await waitPending(bg, 4);
      const reads: [string, unknown][] = [
        ['vault.status', {}],
        ['vault.accounts', {}],
        ['proxy.list', {}],
        ['proxy.list', { account: owner() }],
        ['settings.get', {}],
        ['approval.list', {}],
        ['grant.list', {}],
        ['deadman.status', {}],
        ['audit.list', { limit: 500 }],
        ['audit.origins', {}],
        ['audit.verify', { full: true }],
        ['audit.export', { format: 'json' }],
        ['audit.export', { format: 'csv' }],
        ['clob.openOrders', { account: owner() }],
        ['clob.trades', { account: owner() }],
        ...(
          [
            'credentials',
            'referral',
            'invite',
            'stats',
            'portfolio',
            'balances',
            'config',
            'orders',
            'openOrders',
            'internalTransfers',
            'deposits',
            'withdrawals',
          ] as const
        ).map((name): [string, unknown] => ['perps.read', { account: owner(), name }]),
      ];
      for (const sender of [popup(), approvalWindow()]) {
        for (const [type, payload] of reads) {
          const r = await call(bg, type, payload, sender);
          expect(leaked(r), `${type} ${JSON.stringify(payload)}`).toEqual([]);
        }
      }
      for (const v of bg.registry.list()) {
        expect(leaked(await call(bg, 'grant.offer', { approvalId: v.id }))).toEqual([]);
        try {
          bg.registry.decide(v.id, { approve: false });
        } catch {
          /* already gone */
        }
      }
      await Promise.all(pendings);
      // perps.send createProxy is refused before signing.
      const cp = await call(bg, 'perps.send', {
        account: owner(),
        op: {
          type: 'createProxy',
          args: [owner(), '0x0000000000000000000000000000000000000002', Date.now() + 86_400_000],
        },
      });
      expect(cp.error).toMatchObject({ code: -32602 });
      expect(leaked(cp)).toEqual([]);
    },
  );

  it(
    'a gateway read answer carrying a secret does not reach the popup: ' +
      'read answers keep only the fields they name (no extras passed through)',
    async () => {
      // The proxy secret is a header the background sends (SERVICE-SECRET). A gateway (or a proxy / CDN in
      // front of it) may echo it, or list `secret` with each key: the popup gets only the output schema's
      // parse of the answer, never the handler's own object with its extra fields.
      const { bg, wire } = await ready({ connect: false });
      wire.answer = (url, body) => {
        if (url.includes('/v1/account/credentials') && body && typeof body === 'object') {
          const b = body as { keys: { proxy: string }[] };
          return { ...b, keys: b.keys.map((k) => ({ ...k, secret: h.demo.proxy.secret })) };
        }
        if (url.includes('/v1/account/stats') && body && typeof body === 'object')
          return { ...body, echo: { 'SERVICE-SECRET': h.demo.proxy.secret } };
        return body;
      };
      const creds = await call(bg, 'perps.read', { account: owner(), name: 'credentials' });
      const stats = await call(bg, 'perps.read', { account: owner(), name: 'stats' });
      wire.answer = undefined;
      expect(creds.ok).toBe(true);
      expect(stats.ok).toBe(true);
      expect.soft(leaked(creds), 'perps.read credentials reply carries the proxy secret').toEqual([]);
      expect.soft(leaked(stats), 'perps.read stats reply carries the proxy secret').toEqual([]);
    },
  );
});

describe('the session gate runs before any handler', () => {
  it(
    'in a trading session, reveal / backup / export / settings / reads ' +
      'are refused 4900 even with the right password, and nothing changes',
    async () => {
      const { bg } = await ready();
      await grant(bg);
      await until(() => armed(bg));
      await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
        typeof fakeBrowser.alarms.onAlarm.trigger
      >[0]);
      await until(async () => (await state(bg)) === 'session');
      const settingsBefore = JSON.stringify((await call(bg, 'settings.get')).result);
      for (const [type, payload] of [
        ['vault.revealOwnerKey', { address: owner(), password: 'a good password' }],
        ['vault.exportBackup', {}],
        ['vault.changePassword', { oldPassword: 'a good password', newPassword: 'another good password' }],
        ['settings.set', { perpsUrl: 'https://evil.example/perps' }],
        ['audit.export', { format: 'json' }],
        ['perps.read', { account: owner(), name: 'credentials' }],
        ['proxy.list', {}],
        ['vault.accounts', {}],
        ['perps.send', { account: owner(), op: (await btcOrder()).op }],
        ['grant.offer', { approvalId: 'x' }],
      ] as const) {
        const r = await call(bg, type, payload);
        expect(r.error, type).toMatchObject({ code: 4900 });
        expect(leaked(r)).toEqual([]);
      }
      expect(JSON.stringify((await call(bg, 'settings.get')).result)).toBe(settingsBefore);
      // The password still unlocks (changePassword did not run).
      expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
    },
  );
});

describe('a page is told codes a client does not retry', () => {
  it(
    'a granted order whose answer was lost is answered with a code ' +
      'viem does not retry (not -32603): one dapp call, one signed order',
    async () => {
      const { bg, wire } = await ready();
      await grant(bg);
      await until(() => armed(bg));
      const tab = bg.page(page);
      // The venue takes the order, the answer is lost (connection reset): the signer throws
      // Signer.OutcomeUnknownError ("may or may not have happened; check the history before trying again").
      wire.dropAnswer = (url, method) => method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(url);
      const before = perpsOrderPosts(wire);
      const openBefore = openPerps().length;
      // The page's error: its code and text.
      const lost = await btcOrder();
      const coid = 'c0ffee00c0ffee00c0ffee00c0ffee01';
      const withCoid = { op: { type: 'createOrders', args: lost.op.args.map((o) => ({ ...o, c: coid })) } };
      const direct = await tab.request('perps_sendCommand', withCoid).then(
        () => undefined,
        (e: { code: number; message: string; data?: unknown }) => e,
      );
      expect(direct).toBeDefined();
      // Unknown outcome: the page gets the client order ids to look the order up, never a resend.
      expect(direct).toMatchObject({ code: -32002, data: { command: 'createOrders', coids: coid } });
      // no internal text reaches the page
      expect(direct!.message).not.toMatch(/ECONNRESET|127\.0\.0\.1|fetch failed|at /);
      // A dapp using viem's EIP-1193 transport (`custom(window.countersign)`), default retry policy.
      const provider = {
        request: ({ method, params }: { method: string; params?: unknown }) => tab.request(method, params),
      };
      const client = createClient({ transport: custom(provider) });
      const afterDirect = perpsOrderPosts(wire);
      await client
        .request({ method: 'perps_sendCommand' as never, params: (await btcOrder()) as never })
        .catch(() => undefined);
      const viemSent = perpsOrderPosts(wire) - afterDirect;
      wire.dropAnswer = undefined;
      expect(afterDirect - before).toBe(1);
      // Codes viem's shouldRetry retries: -1, -32005, -32603, 429, -32007.
      expect
        .soft([-1, -32005, -32603, 429, -32007], `OutcomeUnknownError reached the page as ${direct!.code}`)
        .not.toContain(direct!.code);
      expect
        .soft(
          viemSent,
          `one perps_sendCommand from the dapp was signed and sent ${viemSent} ` +
            `times (${openPerps().length - openBefore} orders rest on the book)`,
        )
        .toBe(1);
    },
    30_000,
  );
});

describe('idempotent submissions keyed by client order ids', () => {
  const withCoid = async (coid: string) => {
    const o = await btcOrder();
    return { op: { type: 'createOrders', args: o.op.args.map((x) => ({ ...x, c: coid })) } };
  };

  it(
    'a repeat of a pending order (same client order id) joins it: one window, one ' +
      'submission, both get the same answer; a repeat after the answer gets it again',
    async () => {
      const { bg, wire } = await ready();
      const tab = bg.page(page);
      const order = await withCoid('0123456789abcdef0123456789abcdef');
      const before = perpsOrderPosts(wire);
      const first = tab.request('perps_sendCommand', order);
      const [view] = await waitPending(bg);
      const repeat = tab.request('perps_sendCommand', order); // a client library's retry
      await sleep(50);
      expect(bg.registry.size).toBe(1);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const [a, b] = await Promise.all([first, repeat]);
      expect(b).toEqual(a);
      expect(perpsOrderPosts(wire) - before).toBe(1);
      // Once answered, the same request again (a retry that lost the answer) gets that answer: no window, nothing sent.
      expect(await tab.request('perps_sendCommand', order)).toEqual(a);
      expect(bg.registry.size).toBe(0);
      expect(perpsOrderPosts(wire) - before).toBe(1);
      // Another order under ids still pending is refused, never told the other's outcome.
      const next = await withCoid('0123456789abcdef0123456789abcde0');
      const pending = tab.request('perps_sendCommand', next).catch(() => undefined);
      await waitPending(bg);
      const other = { op: { type: 'createOrders', args: next.op.args.map((x) => ({ ...x, qty: '0.02' })) } };
      await expect(tab.request('perps_sendCommand', other)).rejects.toMatchObject({ code: -32602 });
      expect(bg.registry.size).toBe(1);
      for (const x of bg.registry.list()) bg.registry.decide(x.id, { approve: false });
      await pending;
      // Without client order ids two identical requests are two orders (a trader may want two): two windows.
      const plain = await btcOrder();
      const p1 = tab.request('perps_sendCommand', plain).catch(() => undefined);
      const p2 = tab.request('perps_sendCommand', plain).catch(() => undefined);
      await waitPending(bg, 2);
      expect(bg.registry.size).toBe(2);
      for (const x of bg.registry.list()) bg.registry.decide(x.id, { approve: false });
      await Promise.all([p1, p2]);
    },
  );

  it(
    'an order-book submission with an idempotencyKey: a repeat ' +
      'joins it (one window, one POST), a lost answer is not sent again',
    async () => {
      const { bg, wire } = await ready();
      const tab = bg.page(page);
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const params = {
        orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
        idempotencyKey: 'order-7',
      };
      const posts = () => wire.sent.filter((s) => s.method === 'POST' && /\/clob\/orders?$/.test(s.url)).length;
      const before = posts();
      const first = tab.request('clob_postOrders', params);
      const [view] = await waitPending(bg);
      const repeat = tab.request('clob_postOrders', params);
      await sleep(50);
      expect(bg.registry.size).toBe(1);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const [a, b] = await Promise.all([first, repeat]);
      expect(b).toEqual(a);
      expect(posts() - before).toBe(1);
      // The answer to a new key is lost: a repeat of that key is not posted again, whatever the page retries.
      wire.dropAnswer = (url, method) => method === 'POST' && /\/clob\/orders?$/.test(url);
      const lostParams = { ...params, idempotencyKey: 'order-8' };
      const lost = tab.request('clob_postOrders', lostParams).catch((e: unknown) => e);
      const [v2] = await waitPending(bg);
      bg.registry.decide(v2!.id, { approve: true, digest: v2!.digest });
      const firstLost = await lost;
      wire.dropAnswer = undefined;
      const postedLost = posts();
      const again = await tab.request('clob_postOrders', lostParams).catch((e: unknown) => e);
      expect(firstLost).toMatchObject({ code: -32002 });
      expect(again).toMatchObject({ code: -32002 });
      expect(posts()).toBe(postedLost);
      expect(bg.registry.size).toBe(0);
    },
  );

  it(
    'after an unknown outcome a repeat with the same client order ' +
      'id is not sent again: it gets the same -32002 with the ids',
    async () => {
      const { bg, wire } = await ready();
      await grant(bg);
      await until(() => armed(bg));
      const tab = bg.page(page);
      const coid = 'fedcba9876543210fedcba9876543210';
      const order = await withCoid(coid);
      wire.dropAnswer = (url, method) => method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(url);
      const before = perpsOrderPosts(wire);
      const first = await tab.request('perps_sendCommand', order).catch((e: unknown) => e);
      wire.dropAnswer = undefined;
      const again = await tab.request('perps_sendCommand', order).catch((e: unknown) => e);
      expect(first).toMatchObject({ code: -32002, data: { coids: coid } });
      expect(again).toMatchObject({ code: -32002, data: { coids: coid } });
      expect(perpsOrderPosts(wire) - before).toBe(1);
      expect(bg.registry.size).toBe(0);
    },
  );
});
