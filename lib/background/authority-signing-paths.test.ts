/**
 * The one authority epoch on the signing paths beside page orders (`lib/authority/epoch.ts`): a
 * signature handed back to the page (L2 headers for a request the page sends itself, a signed perps
 * command it submits itself), a standing permission the person approved, the order-book API key
 * derivation and the deposit wallet's creation. Each test parks the request at one wait, an ending
 * event arrives (lock, panic, the site's `wallet_revokePermissions`, an account switch, a gateway URL
 * change), the wait is let go; what reached the page and the venue after the event is read from the
 * page's answer, the grants and the sandbox's request log: nothing may. The real background on the fake
 * browser against the in-process sandbox.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey } from 'viem/accounts';
import type { Harness } from '../../test/kits/sandbox';
import { startBackground } from './index';
import {
  BOUNDS,
  browser,
  btcOnly,
  callAs,
  KDF,
  markPrice,
  onboardDemo,
  pageSender,
  sandboxSuite,
  sleep,
  until,
  withPages,
  type PagedBackground,
  type Reply,
} from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
let h: Harness;
const started = sandboxSuite((x) => (h = x));

/** The codes a page may get when the request's authority ended (EIP-1193 4001 / 4100 / 4900, -32003 refused). */
const ENDED_CODES = [4001, 4100, 4900, -32003];

/** Gateway hosts a test can switch to: every one reaches the same sandbox (a new URL, the same venue behind it). */
const ALIASES = /^http:\/\/localhost:[1-3](?=\/)/;

/** A hold on the background's gateway requests matching `match` (one-shot: only the first one is held). */
type Hold = { match: (url: string, method: string) => boolean; held: number; release: () => void; gate: Promise<void> };
function hold(match: Hold['match']): Hold {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  return { match, held: 0, gate, release: () => open() };
}

/** `answer`: a test's own answer to a request instead of the sandbox's (undefined: the sandbox answers). */
type Ctx = {
  bg: PagedBackground;
  holds: Hold[];
  other: string;
  sent: { url: string; method: string }[];
  answer?: (url: string, method: string) => Response | undefined;
};

/**
 * A background on the sandbox with every gateway request logged (`sent`) and holdable; `onboard`: the demo account and
 * its site connected.
 */
async function ready(n: string, onboard = true): Promise<Ctx> {
  const holds: Hold[] = [];
  const sent: Ctx['sent'] = [];
  const fetchFn: typeof fetch = async (input, init) => {
    const raw = String(input instanceof Request ? input.url : input);
    const url = raw.replace(ALIASES, h.url);
    const method = init?.method ?? 'GET';
    for (const x of holds) {
      if (x.held === 0 && x.match(url, method)) {
        x.held++;
        await x.gate;
      }
    }
    sent.push({ url, method });
    const own = ctx.answer?.(url, method);
    if (own) return own;
    return fetch(input instanceof Request ? new Request(url, input) : url, init);
  };
  const ctx = {} as Ctx;
  const bg = withPages(
    startBackground({ browser, dbName: `authority-paths-${n}-${Math.random()}`, kdf: KDF, bounds: BOUNDS, fetchFn }),
  );
  started.push(bg);
  if (onboard) await onboardDemo(bg, h, page);
  else await callAs(bg, 'vault.create', { password: 'a good password' });
  const other = ((await callAs(bg, 'vault.importOwnerKey', { privateKey: generatePrivateKey() })) as Reply).result as {
    address: string;
  };
  return Object.assign(ctx, { bg, holds, other: other.address, sent });
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (r) => ({ r, e: undefined as unknown }),
    (e: unknown) => ({ r: undefined as T | undefined, e }),
  );
const code = (e: unknown) => (e as { code?: number } | undefined)?.code;

type Ending = { name: string; run: (c: Ctx) => Promise<void> };
const ENDINGS: Record<
  | 'lock'
  | 'panic'
  | 'siteRevoke'
  | 'accountSwitch'
  | 'switchAndBack'
  | 'venueChange'
  | 'venueAndBack'
  | 'lockAndUnlock',
  Ending
> = {
  lock: { name: 'the person locks', run: async (c) => void (await callAs(c.bg, 'vault.lock')) },
  panic: {
    name: 'the person presses panic',
    run: async (c) => void (await callAs(c.bg, 'panic.run', { closePositions: false })),
  },
  siteRevoke: {
    name: 'the site disconnects (wallet_revokePermissions)',
    run: async (c) => void (await c.bg.page(page).request('wallet_revokePermissions', [{ eth_accounts: {} }])),
  },
  accountSwitch: {
    name: 'the person switches accounts',
    run: async (c) => void (await callAs(c.bg, 'account.select', { address: c.other })),
  },
  switchAndBack: {
    name: 'the person switches to another account and back',
    run: async (c) => {
      await callAs(c.bg, 'account.select', { address: c.other });
      expect(((await callAs(c.bg, 'account.select', { address: h.demo.owner.address })) as Reply).result).toMatchObject(
        { changed: true },
      );
    },
  },
  venueAndBack: {
    name: 'the person changes the gateway URLs and back',
    run: async (c) => {
      const s = (((await callAs(c.bg, 'settings.get')) as Reply).result as { settings: Record<string, string> })
        .settings;
      await callAs(c.bg, 'settings.set', { perpsUrl: 'http://localhost:3/perps', clobUrl: 'http://localhost:3/clob' });
      await callAs(c.bg, 'settings.set', { perpsUrl: s.perpsUrl, clobUrl: s.clobUrl });
    },
  },
  lockAndUnlock: {
    name: 'the person locks and unlocks again',
    run: async (c) => {
      await callAs(c.bg, 'vault.lock');
      expect(((await callAs(c.bg, 'vault.unlock', { password: 'a good password' })) as Reply).ok).toBe(true);
    },
  },
  venueChange: {
    name: 'the person changes the gateway URLs',
    run: async (c) =>
      void (await callAs(c.bg, 'settings.set', {
        perpsUrl: 'http://localhost:3/perps',
        clobUrl: 'http://localhost:3/clob',
        relayerUrl: 'http://localhost:3/relayer',
      })),
  },
};

/**
 * Holds the signer's next audit entry of a kind `kinds` matches (written after the signature, before the answer goes
 * back).
 */
function holdAudit(bg: PagedBackground, kinds: RegExp) {
  const svc = bg.service() as unknown as { audit: (entry: { kind: string }, later?: boolean) => Promise<void> };
  const real = svc.audit.bind(svc);
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let held = 0;
  svc.audit = async (entry, later) => {
    if (held === 0 && kinds.test(entry.kind)) {
      held++;
      await gate;
    }
    return real(entry, later);
  };
  return { held: () => held, release: () => open() };
}

/** Approves the next approval window (as the person would). */
async function approveNext(bg: PagedBackground): Promise<void> {
  await until(() => bg.registry.size > 0);
  const [v] = bg.registry.list();
  bg.registry.decide(v!.id, { approve: true, digest: v!.digest });
}

type HandedBack = { name: string; kinds: RegExp; ask: (c: Ctx) => Promise<unknown> };
const HANDED_BACK: HandedBack[] = [
  {
    name: 'L2 headers for a request the page sends itself (clob_signRequest)',
    kinds: /^clob\.l2$/,
    ask: async (c) =>
      c.bg
        .page(page)
        .request('clob_signRequest', { method: 'DELETE', requestPath: '/order', body: '{"orderID":"0xabc"}' }),
  },
  {
    name: 'a signed perps command the page submits itself (perps_signCommand)',
    kinds: /^perps\..*\.sign$/,
    ask: async (c) =>
      c.bg.page(page).request('perps_signCommand', {
        op: {
          type: 'createOrders',
          args: [{ iid: 1, buy: true, qty: '0.01', p: await markPrice(h, 1), tif: 'gtc', po: true }],
        },
      }),
  },
];

for (const x of HANDED_BACK) {
  describe(`a signature handed back to the page: ${x.name}`, () => {
    it('with no ending event the page gets it (the set-up reaches the hand-back)', async () => {
      const c = await ready(`handed-none-${x.kinds.source.length}`);
      const audit = holdAudit(c.bg, x.kinds);
      const asked = settle(x.ask(c));
      await approveNext(c.bg);
      await until(() => audit.held() > 0);
      audit.release();
      const { r, e } = await asked;
      expect(e).toBeUndefined();
      expect(r).toBeTruthy();
    }, 30_000);

    for (const [k, ending] of Object.entries(ENDINGS)) {
      it(`is not handed back when ${ending.name} after it was signed and before it left`, async () => {
        const c = await ready(`handed-${k}-${x.kinds.source.length}`);
        const audit = holdAudit(c.bg, x.kinds);
        const asked = settle(x.ask(c));
        await approveNext(c.bg);
        await until(() => audit.held() > 0);
        await ending.run(c);
        audit.release();
        const { r, e } = await asked;
        expect(r, 'what the page got after the event').toBeUndefined();
        expect(ENDED_CODES, `the page's error (${String((e as { message?: string } | undefined)?.message)})`).toContain(
          code(e),
        );
      }, 30_000);
    }
  });
}

describe('a standing permission approved just before the authority ended', () => {
  const params = () => [
    {
      expiry: Math.floor(Date.now() / 1000) + 3600,
      signer: { type: 'wallet' },
      permissions: [{ type: 'countersign-grant', policies: [], data: btcOnly }],
    },
  ];
  /** Holds the grants' next read after the window was approved (the check that it replaces nothing). */
  const holdNextList = (bg: PagedBackground) => {
    const grants = bg.grants() as unknown as { list: () => Promise<unknown[]> };
    const real = grants.list.bind(grants);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let held = 0;
    let armed = false;
    grants.list = async () => {
      if (armed && held === 0) {
        held++;
        await gate;
      }
      return real();
    };
    return { arm: () => (armed = true), held: () => held, release: () => open() };
  };

  it('with no ending event it is created (the set-up reaches the creation)', async () => {
    const c = await ready('grant-none');
    const list = holdNextList(c.bg);
    const asked = settle(c.bg.page(page).request('wallet_grantPermissions', params()));
    await until(() => c.bg.registry.size > 0);
    list.arm();
    await approveNext(c.bg);
    await until(() => list.held() > 0);
    list.release();
    expect((await asked).e).toBeUndefined();
    expect(await c.bg.grants().list()).toHaveLength(1);
  }, 30_000);

  for (const k of ['siteRevoke', 'accountSwitch', 'venueChange', 'lock'] as const) {
    const ending = ENDINGS[k];
    it(`is never created once ${ending.name} after the window was approved`, async () => {
      const c = await ready(`grant-${k}`);
      const list = holdNextList(c.bg);
      const asked = settle(c.bg.page(page).request('wallet_grantPermissions', params()));
      await until(() => c.bg.registry.size > 0);
      list.arm();
      await approveNext(c.bg);
      await until(() => list.held() > 0);
      await ending.run(c);
      list.release();
      const { e } = await asked;
      expect(ENDED_CODES, `the page's error (${String((e as { message?: string } | undefined)?.message)})`).toContain(
        code(e),
      );
      if (k === 'lock')
        expect(((await callAs(c.bg, 'vault.unlock', { password: 'a good password' })) as Reply).ok).toBe(true);
      expect(await c.bg.grants().list(), 'standing permissions after the event').toEqual([]);
    }, 30_000);
  }
});

describe("the person's order-book key set-up and deposit wallet creation hold the authority of their start", () => {
  /**
   * A fresh vault whose active account has no order-book credentials yet, on the sandbox's URLs (relayer and RPC too).
   */
  const fresh = async (n: string) => {
    const c = await ready(n, false);
    await callAs(c.bg, 'settings.set', {
      perpsUrl: h.perps,
      clobUrl: h.clobUrl,
      gammaUrl: `${h.url}/gamma`,
      dataUrl: `${h.url}/data`,
      relayerUrl: `${h.url}/relayer`,
      rpcUrl: `${h.url}/rpc`,
    });
    const owner = ((await callAs(c.bg, 'vault.generateOwnerKey', {})) as Reply).result as { address: string };
    expect(((await callAs(c.bg, 'account.select', { address: owner.address })) as Reply).ok).toBe(true);
    return { ...c, owner: owner.address };
  };
  const keyRequests = (c: Ctx, from: number) =>
    c.sent.slice(from).filter((s) => /\/auth\/(api-key|derive-api-key|builder-api-key)$/.test(new URL(s.url).pathname));
  const submits = (c: Ctx, from: number) =>
    c.sent.slice(from).filter((s) => s.method === 'POST' && s.url.endsWith('/relayer/submit'));
  /**
   * Calls procedure `type` for `c`'s account with the relayer's deployed check held; once it is held runs
   * `during` (an ending event, or nothing), then lets the check go. Returns the reply and the wire's length
   * at that moment (what was sent after it came from the rest of the procedure).
   */
  const heldAtDeployed = async (
    c: Ctx & { owner: string },
    type: string,
    during: () => Promise<void> = async () => undefined,
  ) => {
    const x = hold((url, m) => m === 'GET' && url.includes('/relayer/deployed'));
    c.holds.push(x);
    const pending = callAs(c.bg, type, { account: c.owner });
    await until(() => x.held > 0);
    await during();
    const from = c.sent.length;
    x.release();
    return { reply: (await pending) as Reply, from };
  };

  it('with no ending event the deposit wallet is set up and created (the set-up reaches both)', async () => {
    const c = await fresh('deposit-none');
    const derived = await heldAtDeployed(c, 'clob.depositWallet.derive');
    expect(derived.reply.error).toBeUndefined();
    expect(keyRequests(c, derived.from).length).toBeGreaterThan(0);
    const created = await heldAtDeployed(c, 'clob.depositWallet.create');
    expect(created.reply.error).toBeUndefined();
    expect(submits(c, created.from)).toHaveLength(1);
  }, 30_000);

  for (const k of ['accountSwitch', 'venueChange', 'panic'] as const) {
    const ending = ENDINGS[k];
    it(`no API key is created or derived once ${ending.name} during the set-up's reads`, async () => {
      const c = await fresh(`derive-${k}`);
      const { reply, from } = await heldAtDeployed(c, 'clob.depositWallet.derive', () => ending.run(c));
      await sleep(50);
      expect(keyRequests(c, from), 'key requests after the event').toEqual([]);
      expect(ENDED_CODES, `the popup's error (${reply.error?.shortMessage})`).toContain(reply.error?.code);
    }, 30_000);

    it(`no deposit-wallet creation is submitted once ${ending.name} during its deployed check`, async () => {
      const c = await fresh(`create-${k}`);
      expect(((await callAs(c.bg, 'clob.depositWallet.derive', { account: c.owner })) as Reply).error).toBeUndefined();
      const { reply, from } = await heldAtDeployed(c, 'clob.depositWallet.create', () => ending.run(c));
      await sleep(50);
      expect(submits(c, from), 'relayer submissions after the event').toEqual([]);
      expect(ENDED_CODES, `the popup's error (${reply.error?.shortMessage})`).toContain(reply.error?.code);
    }, 30_000);
  }
});

describe("the person's own order holds the authority of the click", () => {
  /** Holds the vault's next read of the accounts (the check that the order's account is the active one). */
  const holdOwners = (bg: PagedBackground) => {
    const vault = bg.vault() as unknown as { listOwners: () => Promise<unknown[]> };
    const real = vault.listOwners.bind(vault);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let held = 0;
    vault.listOwners = async () => {
      if (held === 0) {
        held++;
        await gate;
      }
      return real();
    };
    return { held: () => held, release: () => open() };
  };
  const orders = (c: Ctx, from: number) =>
    c.sent
      .slice(from)
      .filter(
        (s) => s.method === 'POST' && /\/perps\/v1\/trade\/orders$|\/clob\/orders?$/.test(new URL(s.url).pathname),
      ).length;
  type Order = { name: string; send: (c: Ctx) => Promise<Reply> };
  const ORDERS: Order[] = [
    {
      name: 'a perps order (perps.send)',
      send: async (c) =>
        (await callAs(c.bg, 'perps.send', {
          account: h.demo.owner.address,
          op: {
            type: 'createOrders',
            args: [{ iid: 1, buy: true, qty: '0.01', p: await markPrice(h, 1), tif: 'gtc', po: true }],
          },
        })) as Reply,
    },
    {
      name: 'an order-book order (clob.postOrders)',
      send: async (c) =>
        (await callAs(c.bg, 'clob.postOrders', {
          account: h.demo.owner.address,
          orders: [
            { tokenId: h.ctx.clob.markets[0]!.tokenIds[0]!, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' },
          ],
        })) as Reply,
    },
  ];
  for (const o of ORDERS) {
    it(`${o.name}: with no ending event it reaches the venue (the set-up reaches the send)`, async () => {
      const c = await ready(`popup-none-${o.name.length}`);
      const owners = holdOwners(c.bg);
      const sent = o.send(c);
      await until(() => owners.held() > 0);
      const from = c.sent.length;
      owners.release();
      expect((await sent).error).toBeUndefined();
      expect(orders(c, from)).toBe(1);
    }, 30_000);
    for (const k of [
      'accountSwitch',
      'switchAndBack',
      'venueChange',
      'venueAndBack',
      'lock',
      'lockAndUnlock',
    ] as const) {
      const ending = ENDINGS[k];
      it(`${o.name}: nothing is sent once ${ending.name} while its account was being checked`, async () => {
        const c = await ready(`popup-${k}-${o.name.length}`);
        const owners = holdOwners(c.bg);
        const sent = o.send(c);
        await until(() => owners.held() > 0);
        await ending.run(c);
        const from = c.sent.length;
        owners.release();
        const reply = await sent;
        await sleep(50);
        expect(orders(c, from), 'orders that reached the venue after the event').toBe(0);
        expect(reply.ok).toBe(false);
      }, 30_000);
    }
  }
});

describe('panic pressed twice', () => {
  it(
    "the second press does not drop the first one's cancels: " + 'both reports say the perps orders were cancelled',
    async () => {
      const c = await ready('panic-twice');
      // A gateway URL whose domain is not read yet: the first panic's cancel waits for that read before it is signed.
      expect(((await callAs(c.bg, 'settings.set', { perpsUrl: 'http://localhost:2/perps' })) as Reply).ok).toBe(true);
      const x = hold((url, m) => m === 'GET' && url.includes('/v1/info/exchange'));
      c.holds.push(x);
      const first = callAs(c.bg, 'panic.run', { closePositions: false });
      await until(() => x.held > 0);
      const second = callAs(c.bg, 'panic.run', { closePositions: false });
      await sleep(200);
      x.release();
      const reports = (await Promise.all([first, second])).map(
        (r) => (r as Reply).result as { perps: { ok?: boolean; error?: string } },
      );
      expect(reports[0]!.perps, 'the first press').toMatchObject({ ok: true });
      expect(reports[1]!.perps, 'the second press').toMatchObject({ ok: true });
    },
    30_000,
  );
});

describe('an order-book post the exchange asked to retry', () => {
  const post = (c: Ctx) =>
    settle(
      c.bg.page(page).request('clob_postOrders', {
        orders: [
          { tokenId: h.ctx.clob.markets[0]!.tokenIds[0]!, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' },
        ],
      }),
    );
  const posts = (c: Ctx, from: number) =>
    c.sent.slice(from).filter((s) => s.method === 'POST' && /\/clob\/orders?$/.test(new URL(s.url).pathname)).length;
  /** The exchange answers the first post 429 with a 1 s Retry-After; `retried` resolves once the signer waits it. */
  const slowDownOnce = (c: Ctx) => {
    let answered = false;
    c.answer = (url, method) => {
      if (answered || method !== 'POST' || !/\/clob\/orders?$/.test(new URL(url).pathname)) return undefined;
      answered = true;
      return new Response(JSON.stringify({ error: 'Too many requests' }), {
        status: 429,
        headers: { 'content-type': 'application/json', 'Retry-After': '1' },
      });
    };
    return { answered: () => answered };
  };

  it('with no ending event the retry reaches the exchange after the wait', async () => {
    const c = await ready('retry-none');
    const once = slowDownOnce(c);
    const from = c.sent.length;
    const asked = post(c);
    await approveNext(c.bg);
    await until(() => once.answered());
    expect((await asked).e).toBeUndefined();
    expect(posts(c, from)).toBe(2);
  }, 30_000);

  for (const k of ['lock', 'siteRevoke', 'accountSwitch', 'panic'] as const) {
    const ending = ENDINGS[k];
    it(`is not sent again once ${ending.name} during the wait`, async () => {
      const c = await ready(`retry-${k}`);
      const once = slowDownOnce(c);
      const asked = post(c);
      await approveNext(c.bg);
      await until(() => once.answered());
      const from = c.sent.length;
      await ending.run(c);
      const { e } = await asked;
      await sleep(1_200);
      expect(posts(c, from), 'posts after the event').toBe(0);
      expect(ENDED_CODES, `the page's error (${String((e as { message?: string } | undefined)?.message)})`).toContain(
        code(e),
      );
    }, 30_000);
  }
});

describe('two sites', () => {
  const SITE_B = 'https://other.example';
  const pageB = pageSender(SITE_B, 4);
  it("one site's disconnect ends its own pending request only: the other site's approved order goes", async () => {
    const c = await ready('two-sites');
    const connected = c.bg.page(pageB).request('eth_requestAccounts', undefined);
    await approveNext(c.bg);
    await connected;
    const order = {
      op: {
        type: 'createOrders',
        args: [{ iid: 1, buy: true, qty: '0.01', p: await markPrice(h, 1), tif: 'gtc', po: true }],
      },
    };
    const a = settle(c.bg.page(page).request('perps_sendCommand', order));
    await until(() => c.bg.registry.size > 0);
    const b = settle(
      c.bg
        .page(pageB)
        .request('perps_sendCommand', { op: { ...order.op, args: [{ ...order.op.args[0]!, qty: '0.02' }] } }),
    );
    await until(() => c.bg.registry.size > 1);
    await ENDINGS.siteRevoke.run(c);
    expect(c.bg.registry.list().map((v) => v.origin)).toEqual([SITE_B]);
    const from = c.sent.length;
    await approveNext(c.bg);
    expect((await b).e).toBeUndefined();
    expect(code((await a).e)).toBe(4100);
    expect(
      c.sent.slice(from).filter((s) => s.method === 'POST' && s.url.endsWith('/perps/v1/trade/orders')),
    ).toHaveLength(1);
  }, 30_000);
});

describe('a keyed request repeated after an end', () => {
  it(
    'joins the request started before the lock and nothing ' +
      'is sent for either, even after an unlock and an approval',
    async () => {
      const c = await ready('keyed-join');
      const order = {
        op: {
          type: 'createOrders',
          args: [{ iid: 1, buy: true, qty: '0.01', p: await markPrice(h, 1), tif: 'gtc', po: true }],
        },
        idempotencyKey: 'join-after-lock',
      };
      const x = hold((url, m) => m === 'GET' && url.includes('/v1/info/book'));
      c.holds.push(x);
      const first = settle(c.bg.page(page).request('perps_sendCommand', order));
      await until(() => x.held > 0);
      await ENDINGS.lockAndUnlock.run(c);
      const from = c.sent.length;
      const again = settle(c.bg.page(page).request('perps_sendCommand', order));
      x.release();
      let done = false;
      void Promise.all([first, again]).finally(() => (done = true));
      for (let i = 0; i < 200 && !done; i++) {
        for (const v of c.bg.registry.list()) c.bg.registry.decide(v.id, { approve: true, digest: v.digest });
        await sleep(10);
      }
      expect(ENDED_CODES).toContain(code((await first).e));
      expect(ENDED_CODES).toContain(code((await again).e));
      expect(
        c.sent.slice(from).filter((s) => s.method === 'POST' && s.url.endsWith('/perps/v1/trade/orders')),
      ).toHaveLength(0);
    },
    30_000,
  );
});
