/**
 * The same order over REST and over the perps session: Node, the sandbox in-process on loopback,
 * `SigningService` over fake-indexeddb with the session stream of `lib/streams/perps.ts` on `ws`. A
 * post-only ETH-PERP buy below the book (rests, never fills), signed and submitted by `perpsSend` — the
 * popup's path: sign, meter, send, classify, audit — in alternating blocks of 50 (REST, session), 200
 * each, so machine drift hits both alike. Prints p50 / p95 of the whole `perpsSend` and of the transport
 * alone (body handed over → answer classified), then the same with 50 ms added by the sandbox to every
 * answer and frame (`ctx.delayMs`). Never fails on timing. The sandbox's side is not the venue's: it
 * recovers a session command's signer once to check the session's proxy and again in the REST route it
 * reuses, and its delay hook delays both that internal REST call and the answer frame (twice the added
 * latency).
 */
import 'fake-indexeddb/auto';
import { WebSocket } from 'ws';
import { commandFromBody } from '../../lib/perps/commands';
import type { PerpsSessionTransport } from '../../lib/perps/transport';
import { startSandbox } from '../../lib/sandbox/server';
import { SigningService } from '../../lib/signer/service';
import { createPerpsStream } from '../../lib/streams/perps';
import { openVaultDb } from '../../lib/vault/db';
import { memorySessionStore, Vault } from '../../lib/vault/vault';
import { Authority, PERSON_SCOPES } from '../../lib/authority/epoch';

/** The one authority epoch of this bench's services, and a ticket of the person's taken from it now. */
const epoch = new Authority();
const held = () => epoch.capture(PERSON_SCOPES);

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const f = (x: number) => x.toFixed(1);
const KDF = { name: 'scrypt' as const, N: 2 ** 10, r: 8, p: 1, dkLen: 32 as const };
const BLOCK = 50;
/** The bench's order `i`: a post-only ETH-PERP buy below the book. */
const order = (i: number) =>
  commandFromBody({
    type: 'createOrders',
    args: [{ iid: 2, buy: true, qty: '0.01', p: (3000 - (i % 100) * 0.05).toFixed(2), tif: 'gtc', po: true }],
  });

export async function benchSession(): Promise<void> {
  const unlimited = { limit: 1_000_000, windowMs: 60_000 };
  const sb = await startSandbox(0, { config: { perpsRequestBudget: unlimited, perpsActionBudget: unlimited } });
  const perpsUrl = `${sb.url}/perps`;
  const db = await openVaultDb('bench-session');
  const vault = new Vault({
    db,
    session: memorySessionStore(),
    kdf: KDF,
    bounds: { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 },
  });
  await vault.create('benchmark password');
  const owner = await vault.importOwnerKey(sb.demo.owner.privateKey);
  const p = sb.demo.proxy;
  await vault.putProxy({
    account: owner.address,
    privateKey: p.privateKey,
    secret: p.secret,
    proxy: p.address,
    expiry: p.expiry,
  });

  // Transport-only timings: REST from the fetch, the session from its `command`.
  let transportMs = 0;
  const timedFetch: typeof fetch = async (input, init) => {
    const t0 = performance.now();
    try {
      return await fetch(input, init);
    } finally {
      if (init?.method === 'POST') transportMs = performance.now() - t0;
    }
  };
  const stream = createPerpsStream({
    wsUrl: `${perpsUrl.replace(/^http/, 'ws')}/v1/ws`,
    proxy: p.address,
    secret: p.secret,
    WebSocket,
    onEvent: () => undefined,
    onResync: () => undefined,
  });
  const timedSession: PerpsSessionTransport = {
    proxy: stream.proxy,
    command: async (cmd, timeoutMs) => {
      const t0 = performance.now();
      const out = await stream.command(cmd, timeoutMs);
      transportMs = performance.now() - t0;
      return out;
    },
  };
  let overSession = false;
  // A service per phase: its client-side weight meter allows 600 orders a minute.
  const newService = () =>
    new SigningService({
      authority: epoch,
      vault,
      db,
      fetchFn: timedFetch,
      settings: async () => ({ perpsUrl, clobUrl: `${sb.url}/clob`, clobChainId: 80002 }),
      session: () => (overSession ? timedSession : undefined),
    });
  stream.start();
  for (let i = 0; i < 100 && stream.status().state !== 'live'; i++) await new Promise((r) => setTimeout(r, 20));
  if (stream.status().state !== 'live') throw new Error('the perps session did not come up');

  const runs = async () => {
    const service = newService();
    // warm-up: domains cached, connection open
    await service.perpsSend(owner.address, order(0), { authority: held(), origin: 'bench' });
    const t = { rest: [] as number[], session: [] as number[], restT: [] as number[], sessionT: [] as number[] };
    let i = 0;
    for (const via of ['rest', 'session', 'rest', 'session', 'rest', 'session', 'rest', 'session'] as const) {
      overSession = via === 'session';
      for (let k = 0; k < BLOCK; k++) {
        const t0 = performance.now();
        await service.perpsSend(owner.address, order(i++), { authority: held(), origin: 'bench' });
        t[via].push(performance.now() - t0);
        (via === 'rest' ? t.restT : t.sessionT).push(transportMs);
      }
    }
    return t;
  };
  const print = (label: string, t: Awaited<ReturnType<typeof runs>>) => {
    console.log(`  ${label}`);
    console.log(
      `    REST    : perpsSend p50 ${f(pct(t.rest, 50))} / p95 ${f(pct(t.rest, 95))} ` +
        `ms; send → answer p50 ${f(pct(t.restT, 50))} / p95 ${f(pct(t.restT, 95))} ms`,
    );
    console.log(
      `    session : perpsSend p50 ${f(pct(t.session, 50))} / p95 ${f(pct(t.session, 95))} ` +
        `ms; send → ack    p50 ${f(pct(t.sessionT, 50))} / p95 ${f(pct(t.sessionT, 95))} ms`,
    );
    console.log(
      `    session / REST p50: ${(pct(t.session, 50) / pct(t.rest, 50)).toFixed(2)}× ` +
        `whole, ${(pct(t.sessionT, 50) / pct(t.restT, 50)).toFixed(2)}× transport`,
    );
  };
  try {
    console.log(
      `\nThe same order over REST vs over the perps session (Node, sandbox ` +
        `on loopback, ${4 * BLOCK} each, alternating blocks of ${BLOCK}):`,
    );
    print('no added latency', await runs());
    sb.ctx.delayMs.set('perps', 50);
    print('50 ms added to every sandbox answer and frame', await runs());
    console.log(
      '    (the sandbox runs a session command through its own REST ' +
        'route, verified once and delayed once: the answer frame)',
    );
  } finally {
    sb.ctx.delayMs.delete('perps');
    stream.stop();
    await sb.close();
  }
}
