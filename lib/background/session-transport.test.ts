/**
 * Trading over the perps session: one submission path, two
 * transports. The real background on the fake browser against the in-process sandbox, `ws` as the
 * worker's WebSocket. Every frame the background writes to its sockets and every request it makes
 * over HTTP is recorded, so each test can say which transport carried an order — and that the other
 * carried nothing.
 */
import 'fake-indexeddb/auto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auditWritten } from '../audit';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { WebSocket as NodeWebSocket } from 'ws';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { AUTOLOCK_ALARM, startBackground } from './index';
import {
  BOUNDS,
  browser,
  callAs,
  KDF,
  onboardDemo,
  recordingWebSocket,
  sandboxSuite,
  until,
  waitPending,
  withPages,
  type PagedBackground,
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
/** The command frames (signed envelopes) the background sent over a session. */
const commandFrames = () => wsLog.frames.filter((f) => 'sig' in f);

let h: Harness;
const started = sandboxSuite((x) => (h = x));
beforeEach(() => recorder.reset());
afterEach(() => void h.ctx.delayMs.delete('perps'));

type Wire = { sent: { url: string; method: string }[] };
let n = 0;
async function ready(b = browser): Promise<{ bg: PagedBackground; wire: Wire }> {
  const wire: Wire = { sent: [] };
  const fetchFn: typeof fetch = async (input, init) => {
    wire.sent.push({ url: String(input instanceof Request ? input.url : input), method: init?.method ?? 'GET' });
    return fetch(input, init);
  };
  const bg = withPages(
    startBackground({
      browser: b,
      dbName: `session-transport-${n++}`,
      kdf: KDF,
      bounds: BOUNDS,
      fetchFn,
      WebSocket: recorder.WebSocket,
    }),
  );
  started.push(bg);
  await onboardDemo(bg, h, page);
  return { bg, wire };
}
/** REST submissions of perps orders by the background (the sandbox's REST submit route). */
const restOrderPosts = (w: Wire) =>
  w.sent.filter((s) => s.method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(s.url)).length;
/** Opens the popup (it asks `streams.status`) until the account's session is live. */
/** Waits until the perps session of the account is live (the order-book stream going live first is not enough). */
async function sessionLive(bg: PagedBackground): Promise<void> {
  const perps = async () =>
    (
      (await callAs(bg, 'streams.status')) as { result: { streams: { venue: string; state: string }[] } }
    ).result.streams.find((s) => s.venue === 'perps')?.state;
  await until(async () => (await perps()) === 'live');
}

const owner = () => h.demo.owner.address;
const mark = (iid: number) => markPrice(h, iid);
const btcOrder = async (o: { coid?: string; qty?: string; iid?: number } = {}) => ({
  op: {
    type: 'createOrders',
    args: [
      {
        iid: o.iid ?? 1,
        buy: true,
        qty: o.qty ?? '0.01',
        p: await mark(o.iid ?? 1),
        tif: 'gtc',
        po: true,
        ...(o.coid ? { c: o.coid } : {}),
      },
    ],
  },
});
const grant = (bg: PagedBackground) =>
  bg.grants().create({ origin: SITE, account: owner(), limits: btcOnly as never, durationMs: 3_600_000 });
let coidN = 0;
const freshCoid = () => `${Date.now().toString(16)}${(++coidN).toString(16)}`.padStart(32, 'c').slice(-32);
const restingWith = (coid: string) => [...h.ctx.venue.orders.values()].filter((o) => o.coid === coid);

/** Approves the one pending approval of `bg` (the person's click). */
async function approveNext(bg: PagedBackground): Promise<void> {
  const [view] = await waitPending(bg);
  bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
}
/** An error as the page sees it: code, name and message. */
const seen = (e: unknown) => {
  const x = e as { code?: number; name?: string; message?: string; data?: unknown };
  return { code: x.code, message: x.message, data: x.data };
};

describe('perps commands over the session: one submission path, two transports', () => {
  it('an approved order goes over the live session, is accepted, and the REST submit route sees nothing', async () => {
    const { bg, wire } = await ready();
    await sessionLive(bg);
    const coid = freshCoid();
    const sent = bg.page(page).request('perps_sendCommand', await btcOrder({ coid }));
    await approveNext(bg);
    const result = (await sent) as { status: string; oid: number }[];
    expect(result).toEqual([{ status: 'ok', oid: expect.any(Number), coid }]);
    expect(restOrderPosts(wire)).toBe(0);
    const [frame] = commandFrames();
    // The official client's frame: the signed envelope first, then id, op, req (PROTOCOL.md §5.1).
    expect(Object.keys(frame!)).toEqual(['salt', 'sig', 'ts', 'id', 'op', 'req']);
    expect(frame).toMatchObject({ req: 'post', op: { type: 'createOrders' } });
    expect(restingWith(coid)).toHaveLength(1);
    expect(restingWith(coid)[0]!.oid).toBe(result[0]!.oid);
  });

  it(
    'the session carries the signed bytes REST would: the ' +
      'same envelope sent over REST afterwards is a replay (409)',
    async () => {
      const { bg } = await ready();
      await sessionLive(bg);
      const sent = bg.page(page).request('perps_sendCommand', await btcOrder({ coid: freshCoid() }));
      const [view] = await waitPending(bg);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      await sent;
      const { salt, sig, ts, op } = commandFrames()[0]!;
      // The same envelope sent over REST is a replay of the one the session ran: the gateway saw these exact bytes.
      const again = await h.raw('POST', '/v1/trade/orders', { op, sig, salt, ts });
      expect(again).toMatchObject({ status: 409, body: { error: 'replayed' } });
    },
  );

  it(
    'a granted order over the session is checked as over REST: ' +
      'a covered one goes without a window, an uncovered one asks',
    async () => {
      const { bg, wire } = await ready();
      await grant(bg);
      await sessionLive(bg);
      const covered = (await bg.page(page).request('perps_sendCommand', await btcOrder({ coid: freshCoid() }))) as {
        status: string;
      }[];
      expect(covered[0]!.status).toBe('ok');
      expect(commandFrames()).toHaveLength(1);
      // Another instrument is outside the grant: it asks the person, nothing is sent before the answer.
      const uncovered = bg
        .page(page)
        .request('perps_sendCommand', await btcOrder({ iid: 2, coid: freshCoid() }))
        .catch((e: unknown) => e);
      const [view] = await waitPending(bg);
      expect(view).toBeDefined();
      expect(commandFrames()).toHaveLength(1);
      bg.registry.decide(view!.id, { approve: false, digest: view!.digest });
      expect(seen(await uncovered).code).toBe(4001);
      expect(commandFrames()).toHaveLength(1);
      expect(restOrderPosts(wire)).toBe(0);
    },
  );

  it(
    'a grant made opens the perps session at once: the ' + "site's first covered order goes over it, not over REST",
    async () => {
      const { bg, wire } = await ready();
      // No popup asks for the streams and the background's own need check runs every 5 s: the grant opens the session.
      await grant(bg);
      await until(() => wsLog.frames.some((f) => f.req === 'sub'), 40); // authenticated and subscribing within 400 ms
      await sessionLive(bg); // its subscription answered
      const coid = freshCoid();
      const result = (await bg.page(page).request('perps_sendCommand', await btcOrder({ coid }))) as {
        status: string;
      }[];
      expect(result[0]!.status).toBe('ok');
      expect(commandFrames(), 'the first covered order went over the session').toHaveLength(1);
      expect(restOrderPosts(wire)).toBe(0);
    },
  );

  it('a repeated keyed request joins the one in flight: one command frame, one order, the same answer', async () => {
    const { bg, wire } = await ready();
    await grant(bg);
    await sessionLive(bg);
    h.ctx.delayMs.set('perps', 150); // the first is still in flight when the repeat comes
    const params = await btcOrder({ coid: freshCoid() });
    const coid = params.op.args[0]!.c!;
    const [a, b] = await Promise.all([
      bg.page(page).request('perps_sendCommand', params),
      bg.page(page).request('perps_sendCommand', params),
    ]);
    expect(b).toEqual(a);
    expect(commandFrames()).toHaveLength(1);
    expect(restOrderPosts(wire)).toBe(0);
    expect(restingWith(coid)).toHaveLength(1);
  });

  it('the panic gate blocks an order bound for the session before it is signed: 4900, no frame', async () => {
    const { bg, wire } = await ready();
    await grant(bg);
    await sessionLive(bg);
    void bg.service().halt('the panic switch is running');
    const e = await bg
      .page(page)
      .request('perps_sendCommand', await btcOrder({ coid: freshCoid() }))
      .catch((x: unknown) => x);
    expect(seen(e).code).toBe(4900);
    expect(commandFrames()).toHaveLength(0);
    expect(restOrderPosts(wire)).toBe(0);
  });

  it('the audit log has the same entry for an order over the session as over REST', async () => {
    const { bg, wire } = await ready();
    await grant(bg);
    wsLog.unreachable = true; // no session yet: REST
    const restDone = await bg.page(page).request('perps_sendCommand', await btcOrder({ coid: freshCoid() }));
    expect(restOrderPosts(wire)).toBe(1);
    wsLog.unreachable = false;
    await sessionLive(bg);
    await bg.page(page).request('perps_sendCommand', await btcOrder({ coid: freshCoid() }));
    expect(commandFrames()).toHaveLength(1);
    expect(restDone).toBeDefined();
    const orders = (await auditWritten({ db: bg.db() }).then(() => bg.db().getAll('audit'))).filter(
      (e) => e.kind === 'perps.createOrders',
    );
    expect(orders).toHaveLength(2);
    const shape = ({ origin, account, kind, summary, result, detail }: (typeof orders)[number]) => ({
      origin,
      account,
      kind,
      summary,
      result,
      detail,
    });
    expect(shape(orders[1]!)).toEqual(shape(orders[0]!));
    expect(orders[1]!.digest).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('a session that is down when the order is ready: REST carries it, nothing goes on the socket', async () => {
    const { bg, wire } = await ready();
    await grant(bg);
    await sessionLive(bg);
    wsLog.unreachable = true; // reconnects fail: the session stays down
    // closing now (the session and any public socket): not open when the order is sent
    for (const ws of wsLog.sockets) ws.close();
    const perpsState = async () =>
      (
        (await callAs(bg, 'streams.status')) as { result: { streams: { venue: string; state: string }[] } }
      ).result.streams.find((x) => x.venue === 'perps')?.state;
    await until(async () => (await perpsState()) !== 'live');
    const r = (await bg.page(page).request('perps_sendCommand', await btcOrder({ coid: freshCoid() }))) as {
      status: string;
    }[];
    expect(r[0]!.status).toBe('ok');
    expect(commandFrames()).toHaveLength(0);
    expect(restOrderPosts(wire)).toBe(1);
  });

  it(
    'a socket that drops after the frame was sent: unknown outcome ' +
      'with the client order id, nothing resent, a repeat is refused',
    async () => {
      const { bg, wire } = await ready();
      await grant(bg);
      await sessionLive(bg);
      h.ctx.delayMs.set('perps', 300); // the answer would come late; the socket drops first
      wsLog.onCommand = (ws) => setTimeout(() => ws.terminate(), 20);
      const params = await btcOrder({ coid: freshCoid() });
      const coid = params.op.args[0]!.c!;
      const e = seen(
        await bg
          .page(page)
          .request('perps_sendCommand', params)
          .catch((x: unknown) => x),
      );
      expect(e.code).toBe(-32002);
      expect(e.data).toMatchObject({ command: 'createOrders', coids: coid });
      expect(commandFrames()).toHaveLength(1);
      expect(restOrderPosts(wire)).toBe(0);
      // The dapp retries with the same ids: the same unknown outcome, nothing sent over either transport.
      wsLog.onCommand = undefined;
      await sessionLive(bg);
      const again = seen(
        await bg
          .page(page)
          .request('perps_sendCommand', params)
          .catch((x: unknown) => x),
      );
      expect(again.code).toBe(-32002);
      expect(commandFrames()).toHaveLength(1);
      expect(restOrderPosts(wire)).toBe(0);
      const audit = (await auditWritten({ db: bg.db() }).then(() => bg.db().getAll('audit'))).filter(
        (x) => x.kind === 'perps.createOrders',
      );
      expect(audit.map((x) => x.result)).toEqual(['unknown']);
    },
  );

  it('a refused command gives the page the same code and message over the session as over REST', async () => {
    const { bg, wire } = await ready();
    const tooBig = async () => btcOrder({ qty: '100000', coid: freshCoid() }); // far beyond the account's margin
    wsLog.unreachable = true; // no session yet: REST
    const overRest = bg
      .page(page)
      .request('perps_sendCommand', await tooBig())
      .catch((x: unknown) => x);
    await approveNext(bg);
    const rest = seen(await overRest);
    expect(restOrderPosts(wire)).toBe(1);
    wsLog.unreachable = false;
    await sessionLive(bg);
    let carrier: NodeWebSocket | undefined;
    wsLog.onCommand = (ws) => (carrier = ws);
    const overSession = bg
      .page(page)
      .request('perps_sendCommand', await tooBig())
      .catch((x: unknown) => x);
    await approveNext(bg);
    const session = seen(await overSession);
    expect(commandFrames()).toHaveLength(1);
    expect(restOrderPosts(wire)).toBe(1);
    expect(rest.code).toBe(-32003);
    expect(session).toEqual(rest);
    // A refusal is an answer, not a broken session: the socket that carried the command stays open
    // and live (other sockets — the public market-data stream — may open beside it at any time).
    await new Promise((r) => setTimeout(r, 100));
    expect(carrier?.readyState).toBe(NodeWebSocket.OPEN);
    const commands = wsLog.frames.length;
    const again = bg
      .page(page)
      .request('perps_sendCommand', await tooBig())
      .catch((x: unknown) => x);
    await approveNext(bg);
    expect(seen(await again).code).toBe(-32003);
    expect(wsLog.frames.length).toBeGreaterThan(commands);
    expect(commandFrames()).toHaveLength(2);
    expect(restOrderPosts(wire)).toBe(1);
    expect(JSON.stringify(await callAs(bg, 'streams.status'))).toContain('"state":"live"');
  });
});

describe('a trading session keeps the perps session for its grants', () => {
  /** Fires auto-lock with the grant live: the vault turns into a trading session. */
  const autoLock = async (bg: PagedBackground) => {
    await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
      typeof fakeBrowser.alarms.onAlarm.trigger
    >[0]);
    await until(
      async () => ((await callAs(bg, 'vault.status')) as { result: { state: string } }).result.state === 'session',
    );
  };

  it(
    'in a trading session a granted order goes over the live ' +
      'perps session, and the REST submit route sees nothing',
    async () => {
      const { bg, wire } = await ready();
      await grant(bg);
      await sessionLive(bg);
      await autoLock(bg);
      await sessionLive(bg);
      const coid = freshCoid();
      const result = (await bg.page(page).request('perps_sendCommand', await btcOrder({ coid }))) as {
        status: string;
        oid: number;
      }[];
      expect(result).toEqual([{ status: 'ok', oid: expect.any(Number), coid }]);
      expect(commandFrames()).toHaveLength(1);
      expect(restOrderPosts(wire)).toBe(0);
      expect(restingWith(coid)).toHaveLength(1);
    },
  );

  it(
    'the trading session ending (lock) closes the perps ' + 'session: nothing is sent on it or over REST after',
    async () => {
      const { bg, wire } = await ready();
      await grant(bg);
      await sessionLive(bg);
      await autoLock(bg);
      await sessionLive(bg);
      await callAs(bg, 'vault.lock');
      await until(async () => !JSON.stringify(await callAs(bg, 'streams.status')).includes('"venue":"perps"'));
      const refused = await bg
        .page(page)
        .request('perps_sendCommand', await btcOrder({ coid: freshCoid() }))
        .catch((e: unknown) => e);
      expect(seen(refused).code).toBe(4900);
      expect(commandFrames()).toHaveLength(0);
      expect(restOrderPosts(wire)).toBe(0);
    },
  );

  it(
    'in a trading session the stream pushes nothing to the ' +
      'extension pages; unlocked, the same granted order is pushed',
    async () => {
      const pushes: unknown[] = [];
      const { bg } = await ready({
        ...browser,
        runtime: { ...browser.runtime, sendMessage: async (m: unknown) => void pushes.push(m) },
      });
      const orderPushes = () => pushes.filter((m) => JSON.stringify(m).includes('"kind":"order"')).length;
      await grant(bg);
      await sessionLive(bg);
      await bg.page(page).request('perps_sendCommand', await btcOrder({ coid: freshCoid() }));
      await until(() => orderPushes() > 0);
      await autoLock(bg);
      await sessionLive(bg);
      pushes.length = 0;
      const coid = freshCoid();
      await bg.page(page).request('perps_sendCommand', await btcOrder({ coid }));
      expect(restingWith(coid)).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 300));
      expect(pushes.filter((m) => JSON.stringify(m).includes('streams.push'))).toEqual([]);
    },
  );

  it(
    'the stream of an account no grant names closes when ' + 'the trading session starts (its proxy key is not kept)',
    async () => {
      const { bg } = await ready();
      await grant(bg);
      const otherKey = generatePrivateKey();
      const other = privateKeyToAccount(otherKey);
      const otherProxy = generatePrivateKey();
      expect(((await callAs(bg, 'vault.importOwnerKey', { privateKey: otherKey })) as { ok: boolean }).ok).toBe(true);
      await callAs(bg, 'proxy.import', {
        account: other.address,
        privateKey: otherProxy,
        proxy: privateKeyToAccount(otherProxy).address,
        secret: 'a-secret-of-the-other-account',
        expiry: Date.now() + 86_400_000,
      });
      await callAs(bg, 'account.select', { address: other.address });
      const perpsOf = async () =>
        (
          (await callAs(bg, 'streams.status')) as { result: { streams: { venue: string; account: string }[] } }
        ).result.streams.find((x) => x.venue === 'perps')?.account;
      await until(async () => (await perpsOf())?.toLowerCase() === other.address.toLowerCase());
      await autoLock(bg);
      await until(async () => (await perpsOf()) === undefined);
    },
  );

  it(
    'the stream of an account the trading session did not keep closes within ' +
      '500 ms of the session start, even while another vault call holds the vault',
    async () => {
      const { bg } = await ready();
      await grant(bg);
      const otherKey = generatePrivateKey();
      const other = privateKeyToAccount(otherKey);
      const otherProxy = generatePrivateKey();
      expect(((await callAs(bg, 'vault.importOwnerKey', { privateKey: otherKey })) as { ok: boolean }).ok).toBe(true);
      await callAs(bg, 'proxy.import', {
        account: other.address,
        privateKey: otherProxy,
        proxy: privateKeyToAccount(otherProxy).address,
        secret: 'a-secret-of-the-other-account',
        expiry: Date.now() + 86_400_000,
      });
      await callAs(bg, 'account.select', { address: other.address });
      const streamOf = () => bg.session(other.address, h.perps);
      await until(() => streamOf() !== undefined);
      // Another vault call (a password check while its KDF runs) takes the vault's writer lock as the session starts.
      const vault = bg.vault();
      const enter = vault.enterTradingSession.bind(vault);
      let go!: () => void;
      const busy = new Promise<void>((r) => (go = r));
      let holding: Promise<void> | undefined;
      vault.enterTradingSession = async (o) => {
        await enter(o);
        holding = vault.exclusive(() => busy);
      };
      await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
        typeof fakeBrowser.alarms.onAlarm.trigger
      >[0]);
      await until(() => holding !== undefined);
      await new Promise((r) => setTimeout(r, 800));
      const kept = streamOf() !== undefined;
      go();
      await holding;
      expect(kept, 'the stream of the account the session did not keep is closed').toBe(false);
    },
  );
});
