import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { builderSignature } from '../relayer/builder';
import { walletCreateRequest } from '../relayer/batch';
import { uupsDepositWallet } from '../relayer/wallet';
import { buildL1Headers } from '../clob/auth';
import { startHarness, type Harness } from '../../test/kits/sandbox';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});
const get = async (path: string) => {
  const res = await fetch(h.url + path);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('catalogue', () => {
  it('pages markets with keyset cursors and refuses offset and limit > 100', async () => {
    const first = await get('/gamma/markets/keyset?limit=3');
    const markets = first.body.markets as { clobTokenIds: string; orderPriceMinTickSize: number; negRisk: boolean }[];
    expect(markets).toHaveLength(3);
    expect(JSON.parse(markets[0]!.clobTokenIds)).toHaveLength(2);
    expect(first.body.next_cursor).toBeTypeOf('string');
    const second = await get(`/gamma/markets/keyset?limit=3&after_cursor=${first.body.next_cursor}`);
    expect((second.body.markets as unknown[]).length).toBe(1);
    expect(second.body).not.toHaveProperty('next_cursor'); // the last page carries no cursor
    expect((await get('/gamma/markets/keyset?offset=3')).status).toBe(400);
    expect((await get('/gamma/markets/keyset?limit=101')).status).toBe(400);
  });

  it('serves events with nested markets and finds them by id; searches by text', async () => {
    const events = (await get('/gamma/events/keyset?limit=100')).body.events as {
      id: string;
      negRisk: boolean;
      markets: unknown[];
    }[];
    const negRisk = events.find((e) => e.negRisk)!;
    expect(negRisk.markets).toHaveLength(2);
    expect((await get(`/gamma/events/${negRisk.id}`)).body).toMatchObject({ id: negRisk.id, negRisk: true });
    expect((await get('/gamma/events/999')).status).toBe(404);
    const found = (await get('/gamma/markets/keyset?q=quarter')).body.markets as { orderPriceMinTickSize: number }[];
    expect(found.map((m) => m.orderPriceMinTickSize)).toEqual([0.0025]);
  });
});

describe('data service v2', () => {
  it('wraps positions, value and activity in the data / pagination envelope', async () => {
    const user = h.demo.owner.address;
    const positions = await get(`/data/v2/positions?user=${user}`);
    expect(positions.body.pagination).toEqual({ limit: 100, offset: 0, has_more: false, next_cursor: null });
    expect((positions.body.data as { current_size: string }[])[0]).toMatchObject({
      current_size: '50',
      redeemable: false,
      status: 'OPEN',
    });
    expect((await get(`/data/v2/value?user=${user}`)).body.data).toMatchObject({ proxy_wallet: user.toLowerCase() });
    expect((await get('/data/v2/value?user=nobody')).body).toEqual({ data: null });
    expect((await get(`/data/v2/activity?user=${user}`)).body).toEqual({
      data: [],
      pagination: { limit: 100, offset: 0, has_more: false, next_cursor: null },
    });
  });
});

describe('relayer and bridge', () => {
  it(
    'answers /submit at once with STATE_NEW, reports ' + 'the hash once mined, and refuses an unsigned submit',
    async () => {
      const builder = { key: 'bk', secret: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=', passphrase: 'pp' };
      h.ctx.relayerChain.builderKeys.set(builder.key, {
        ...builder,
        owner: h.owner.address.toLowerCase(),
        createdAt: h.clock.now,
        revokedAt: null,
      });
      const body = JSON.stringify(walletCreateRequest(h.owner.address, h.ctx.config.clobChainId));
      const unsigned = await fetch(`${h.url}/relayer/submit`, { method: 'POST', body });
      expect(unsigned.status).toBe(401);
      const ts = Math.floor(h.clock.now / 1000);
      const headers = {
        POLY_BUILDER_API_KEY: 'bk',
        POLY_BUILDER_PASSPHRASE: 'pp',
        POLY_BUILDER_TIMESTAMP: String(ts),
        POLY_BUILDER_SIGNATURE: builderSignature({
          secret: builder.secret,
          timestamp: ts,
          method: 'POST',
          path: '/submit',
          body,
        }),
      };
      const res = await fetch(`${h.url}/relayer/submit`, { method: 'POST', headers: { ...headers }, body });
      const { transactionID, state } = (await res.json()) as { transactionID: string; state: string };
      expect(state).toBe('STATE_NEW');
      expect(
        ((await get(`/relayer/transaction?id=${transactionID}`)).body as unknown as { state: string }[])[0]!.state,
      ).toBe('STATE_NEW');
      h.clock.advance(h.ctx.config.relayerMineMs);
      const mined = (await get(`/relayer/transaction?id=${transactionID}`)).body as unknown as {
        state: string;
        transactionHash: string;
      }[];
      expect(mined[0]).toMatchObject({
        state: 'STATE_MINED',
        transactionHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
      expect(
        (await get(`/relayer/deployed?address=${uupsDepositWallet(h.owner.address, h.ctx.config.clobChainId)}`)).body,
      ).toEqual({ deployed: true });
    },
  );

  it('accepts a bridge withdraw signed with L1 headers and refuses a forged one', async () => {
    const body = JSON.stringify({
      address: h.owner.address,
      toChainId: 1,
      toTokenAddress: h.ctx.config.usdc,
      recipientAddr: h.demo.counterparty.address,
      amount: '1000000',
    });
    const headers = await buildL1Headers(h.owner, {
      chainId: h.ctx.config.clobChainId,
      timestamp: Math.floor(h.clock.now / 1000),
      nonce: 0,
    });
    const ok = await fetch(`${h.url}/bridge/withdraw`, { method: 'POST', headers: { ...headers }, body });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'pending' });
    const forged = await fetch(`${h.url}/bridge/withdraw`, {
      method: 'POST',
      headers: { ...headers, SVC_ADDRESS: h.demo.counterparty.address },
      body,
    });
    expect(forged.status).toBe(401);
    expect(h.ctx.bridgeWithdrawals).toHaveLength(1);
  });
});

/** Source files under `dir` (`.ts` / `.tsx`, tests excluded), relative to the repository root. */
function sources(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [p] : [];
  });
}

/**
 * The files `file` imports at run time (relative, `@/` and `~/` specifiers; packages and `import type` left out),
 * resolved to paths.
 */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(
    new RegExp(
      String.raw`(?:import|export)\s(?!type\s)[^'"]*?from\s*['"]([^'"]+)['"]|` +
        String.raw`import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]`,
      'g',
    ),
  )) {
    const spec = m[1] ?? m[2] ?? m[3] ?? '';
    const base = spec.startsWith('.') ? join(dirname(file), spec) : /^[@~]\//.test(spec) ? spec.slice(2) : undefined;
    if (base === undefined) continue;
    const found = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')].find(
      (c) => existsSync(c) && statSync(c).isFile(),
    );
    if (found) out.push(normalize(found));
  }
  return out;
}

/** Every file reachable from `roots` through imports, not entering `stops` (they are reached but not followed). */
function reachable(roots: string[], stops: string[] = []): Set<string> {
  const seen = new Set<string>();
  const queue = [...roots.map((r) => normalize(r))];
  for (let f = queue.shift(); f !== undefined; f = queue.shift()) {
    if (seen.has(f)) continue;
    seen.add(f);
    if (!stops.includes(f)) queue.push(...importsOf(f));
  }
  return seen;
}

describe('isolation', () => {
  it(
    'no extension entrypoint or component reaches lib/sandbox or ' +
      'lib/release (Node-only), directly or through other modules',
    () => {
      const roots = [...sources('entrypoints'), ...sources('components')];
      const reached = [...reachable(roots)];
      // The walk really followed imports into other folders (not only the roots themselves).
      expect(reached.filter((f) => f.startsWith('lib/')).length).toBeGreaterThan(10);
      expect(reached.filter((f) => f.startsWith('lib/sandbox/') || f.startsWith('lib/release/'))).toEqual([]);
    },
  );

  it('the import walk follows imports transitively (a chain through lib/ is seen)', () => {
    // lib/sandbox/server.ts imports the perps routes, which import lib/perps/verify, which imports lib/validation.
    const reached = reachable(['lib/sandbox/server.ts']);
    expect(reached.has(normalize('lib/sandbox/perps/gateway.ts'))).toBe(true);
    expect(reached.has(normalize('lib/perps/verify.ts'))).toBe(true);
    expect(reached.has(normalize('lib/validation/index.ts'))).toBe(true);
  });

  it(
    'no component, and no popup screen but its message caller, reaches ' +
      'into browser.* or IndexedDB, directly or through other modules',
    () => {
      // The message callers (and the caller module they share) are the only doors to the background.
      const allowed = ['entrypoints/popup/api.ts', 'entrypoints/approval/main.tsx', 'lib/messaging/client.ts'].map(
        (f) => normalize(f),
      );
      const roots = [
        ...sources('components'),
        ...sources('entrypoints/popup'),
        ...sources('entrypoints/approval'),
      ].filter((f) => !allowed.includes(normalize(f)));
      const reached = [...reachable(roots, allowed)].filter((f) => !allowed.includes(f));
      expect(
        reached.filter((f) => !f.startsWith('components/') && !f.startsWith('entrypoints/')).length,
      ).toBeGreaterThan(0);
      const offenders = reached.filter((f) =>
        /webextension-polyfill|from ['"]idb['"]|indexedDB|\bbrowser\.|\bchrome\./.test(readFileSync(f, 'utf8')),
      );
      expect(offenders).toEqual([]);
    },
  );
});
