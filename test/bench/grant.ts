/**
 * Page request → gateway acknowledgement under a standing grant: headless
 * Chromium with the extension built in bench mode (`wxt build --mode bench`, which adds the worker's
 * bench hooks, `lib/background/bench-hooks.ts`), against one sandbox, and in the same run the same
 * order signed and submitted from Node (`SigningService` over fake-indexeddb) to the same sandbox. Runs
 * in alternating blocks of 50 (page, Node) so machine drift hits both alike. Then:
 * - where the time goes: a page `eth_chainId` round trip (content-script relay + port + dispatch) and
 *   each stage of the granted path timed inside the worker (grant check + use write, key read, artifact
 *   build, sign + submit + audit, owned-order record);
 * - the same page and Node figures after 50 000 uses of the grant in the last 24 h (seeded through the
 *   vault API).
 * Prints p50 / p95 and the page / Node ratio (targets: ≤ 1.3× fresh; within 1.1× of fresh after 50 000
 * uses); never fails on timing. Skipped when Chromium is missing.
 */
import 'fake-indexeddb/auto';
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { commandFromBody } from '../../lib/perps/commands';
import { SigningService } from '../../lib/signer/service';
import { openVaultDb } from '../../lib/vault/db';
import { memorySessionStore, Vault } from '../../lib/vault/vault';
import type { BenchHooks, StageTimes } from '../../lib/background/bench-hooks';
import { Authority, PERSON_SCOPES } from '../../lib/authority/epoch';

/** The one authority epoch of this bench's services, and a ticket of the person's taken from it now. */
const epoch = new Authority();
const held = () => epoch.capture(PERSON_SCOPES);

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const f = (x: number) => x.toFixed(1);

declare const chrome: { runtime: { sendMessage: (m: unknown) => Promise<{ ok: boolean }> } };
declare const countersignBench: BenchHooks;
type Provider = { request: (a: unknown) => Promise<unknown> };

const SITE_PATH = '/demo';
/** The bench's order: a post-only ETH-PERP buy below the book (rests; never fills). */
const op = (i: number) => ({
  type: 'createOrders',
  args: [{ iid: 2, buy: true, qty: '0.01', p: (3099 - (i % 100) * 0.05).toFixed(2), tif: 'gtc', po: true }],
});

export async function benchGrant(): Promise<void> {
  if (!['/usr/lib/chromium/chromium', '/usr/bin/chromium'].some((p) => existsSync(p))) {
    console.log('\nGrant bench: skipped (needs Chromium).');
    return;
  }
  // BENCH_GRANT_BUILD: an existing bench build's directory under .output (for before/after runs); otherwise built now.
  if (!process.env.BENCH_GRANT_BUILD) execSync('npx wxt build --mode bench', { stdio: 'ignore' });
  process.env.COUNTERSIGN_BUILD = process.env.BENCH_GRANT_BUILD ?? 'chrome-mv3-bench';
  const { launchHarness } = await import('../e2e/harness');
  // Page and Node trade the same account: the sandbox's per-account budgets are lifted (this measures latency, not
  // limits).
  const h = await launchHarness({
    config: {
      perpsRequestBudget: { limit: 1_000_000, windowMs: 60_000 },
      perpsActionBudget: { limit: 1_000_000, windowMs: 60_000 },
    },
  });
  try {
    const popup = await h.openPopup();
    const send = (type: string, payload: unknown = {}) =>
      popup.evaluate(([t, p]) => chrome.runtime.sendMessage({ type: t, payload: p }), [type, payload] as const);
    await send('vault.create', { password: 'benchmark password' });
    await send('vault.importOwnerKey', { privateKey: h.sandbox.demo.owner.privateKey });
    const p = h.sandbox.demo.proxy;
    const account = h.sandbox.demo.owner.address;
    await send('proxy.import', {
      account,
      privateKey: p.privateKey,
      proxy: p.address,
      secret: p.secret,
      expiry: p.expiry,
    });
    const demo = await h.ctx.newPage();
    await demo.goto(`${h.sandbox.url}${SITE_PATH}`);
    await demo.getByText('Found Countersign').first().waitFor();
    const origin = new URL(h.sandbox.url).origin;
    const approveNext = async () => {
      const w = await h.ctx.waitForEvent('page', { predicate: (x) => x.url().endsWith('/approval.html') });
      await w.bringToFront();
      return w;
    };
    const arm = async (w: Awaited<ReturnType<typeof approveNext>>) => {
      await w.waitForFunction(
        () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
      );
      await w.getByTestId('approve').click();
    };
    const req = (body: unknown) =>
      demo.evaluate((b) => (window as unknown as { countersign: Provider }).countersign.request(b), body);
    let w = approveNext();
    const c = req({ method: 'eth_requestAccounts' });
    await arm(await w);
    await c;
    w = approveNext();
    const first = req({ method: 'perps_sendCommand', params: { op: op(0) } });
    const win = await w;
    await win.getByRole('button', { name: 'Allow this site within limits…' }).click();
    await win.locator('input[name="grant-rate"]').fill('1000');
    await win.locator('input[name="grant-daily"]').fill('100000');
    await win.getByRole('button', { name: 'Save permission' }).click();
    await win.getByText(/Saved for/).waitFor();
    await arm(win);
    await first;
    for (let i = 0; i < 10; i++) await req({ method: 'perps_sendCommand', params: { op: op(i) } }); // warm-up

    // Node: the same order, signed and submitted by the signing service to the same sandbox.
    const db = await openVaultDb('bench-grant-node');
    const vault = new Vault({
      db,
      session: memorySessionStore(),
      kdf: { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 },
      bounds: { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 },
    });
    await vault.create('benchmark password');
    await vault.importOwnerKey(h.sandbox.demo.owner.privateKey);
    await vault.putProxy({ account, privateKey: p.privateKey, secret: p.secret, proxy: p.address, expiry: p.expiry });
    const service = new SigningService({
      authority: epoch,
      vault,
      db,
      settings: async () => ({
        perpsUrl: `${h.sandbox.url}/perps`,
        clobUrl: `${h.sandbox.url}/clob`,
        clobChainId: 80002,
      }),
    });
    await service.perpsSend(account, commandFromBody(op(0)), { authority: held(), origin: 'bench' });

    let n = 0;
    const pageBlock = (count: number) =>
      demo.evaluate(
        async ([count, start]) => {
          const prov = (window as unknown as { countersign: Provider }).countersign;
          const out: number[] = [];
          for (let i = 0; i < count; i++) {
            const t0 = performance.now();
            await prov.request({
              method: 'perps_sendCommand',
              params: {
                op: {
                  type: 'createOrders',
                  args: [
                    {
                      iid: 2,
                      buy: true,
                      qty: '0.01',
                      p: (3099 - ((start + i) % 100) * 0.05).toFixed(2),
                      tif: 'gtc',
                      po: true,
                    },
                  ],
                },
              },
            });
            out.push(performance.now() - t0);
          }
          return out;
        },
        [count, (n += count)] as const,
      );
    const nodeBlock = async (count: number) => {
      const out: number[] = [];
      for (let i = 0; i < count; i++) {
        const t0 = performance.now();
        await service.perpsSend(account, commandFromBody(op(n + i)), { authority: held(), origin: 'bench' });
        out.push(performance.now() - t0);
      }
      n += count;
      return out;
    };
    const run = async () => {
      const page: number[] = [];
      const node: number[] = [];
      for (let b = 0; b < 4; b++) {
        page.push(...(await pageBlock(50)));
        node.push(...(await nodeBlock(50)));
      }
      return { page, node };
    };
    const line = (what: string, r: { page: number[]; node: number[] }) =>
      console.log(
        `${what}: page → ack p50 ${f(pct(r.page, 50))} ms, p95 ${f(pct(r.page, 95))} ` +
          `ms; Node sign-and-submit p50 ${f(pct(r.node, 50))} ms, p95 ${f(pct(r.node, 95))} ` +
          `ms; ratio p50 ${(pct(r.page, 50) / pct(r.node, 50)).toFixed(2)}×, ` +
          `p95 ${(pct(r.page, 95) / pct(r.node, 95)).toFixed(2)}× (over 200 each)`,
      );

    console.log(
      '\nPage → gateway ack under a standing grant (headless Chromium, sandbox on ' +
        'loopback) beside Node sign-and-submit of the same order to the same sandbox:',
    );
    const fresh = await run();
    line('  fresh grant', fresh);

    // Where the time goes.
    const chainId = await demo.evaluate(async () => {
      const prov = (window as unknown as { countersign: Provider }).countersign;
      const out: number[] = [];
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now();
        await prov.request({ method: 'eth_chainId' });
        out.push(performance.now() - t0);
      }
      return out;
    });
    const stagesLine = async (what: string) => {
      const ops = Array.from({ length: 50 }, (_, i) => op(n + i));
      n += 50;
      const stages: StageTimes = await h.worker.evaluate(
        ([o, a, list]) => countersignBench.stages({ origin: o, account: a, ops: list, ref: '3100' }),
        [origin, account, ops] as const,
      );
      const p50 = (k: string) => pct(stages[k] ?? [], 50);
      console.log(
        `  ${what} in the worker (p50 over 50): ${Object.entries(stages)
          .map(([k, v]) => `${k} ${pct(v, 50).toFixed(2)} ms`)
          .join(', ')}`,
      );
      // execute = key read + sign, the submit fetch, the audit append, and the rest (the background keeps one settings
      // read; an uncached read is shown beside).
      const parts = p50('exec.sign') + p50('exec.submit') + p50('exec.audit');
      console.log(
        `    execute split (p50): sign ${p50('exec.sign').toFixed(2)} + submit (session when ` +
          `live, else REST) ${p50('exec.submit').toFixed(2)} + audit ${p50('exec.audit').toFixed(2)} ` +
          `ms; other ≈ ${(p50('execute') - parts).toFixed(2)} ms (an uncached settings ` +
          `read ${p50('exec.settings').toFixed(2)} ms; the signer made three per order before)`,
      );
    };
    console.log(
      `  breakdown: page eth_chainId round trip (content-script ` +
        `relay + port + dispatch) p50 ${f(pct(chainId, 50))} ms over 200`,
    );
    await stagesLine('stages of a granted order');

    const total = await h.worker.evaluate(([o]) => countersignBench.seedUses(o, 50_000), [origin] as const);
    const seeded = await run();
    line(`  after ${total} uses in 24 h`, seeded);
    await stagesLine('the same stages after the seeding');
    console.log(
      `  after / fresh: page p50 ${(pct(seeded.page, 50) / pct(fresh.page, 50)).toFixed(2)}×, ` +
        `p95 ${(pct(seeded.page, 95) / pct(fresh.page, 95)).toFixed(2)}× (target ≤ 1.1×)`,
    );
    db.close();
  } finally {
    await h.close();
  }
}
