/**
 * Page request → gateway acknowledgement through the bridge under a standing grant (issue #11 §6):
 * p50 and p95 over 200 requests in headless Chromium with the built extension, beside the same order
 * placed from the popup (the background signs on the popup's click). Prints figures; never fails on
 * timing. Skipped when Chromium or the build is missing.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EXTENSION_DIR, launchHarness } from '../e2e/harness';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

declare const chrome: { runtime: { sendMessage: (m: unknown) => Promise<{ ok: boolean }> } };
type Provider = { request: (a: unknown) => Promise<unknown> };

export async function benchGrant(): Promise<void> {
  if (!existsSync(join(EXTENSION_DIR, 'manifest.json')) || !['/usr/lib/chromium/chromium', '/usr/bin/chromium'].some((p) => existsSync(p))) {
    console.log('\nGrant bench: skipped (needs Chromium and npm run build).');
    return;
  }
  const h = await launchHarness();
  try {
    const popup = await h.openPopup();
    const send = (type: string, payload: unknown = {}) => popup.evaluate(([t, p]) => chrome.runtime.sendMessage({ type: t, payload: p }), [type, payload] as const);
    await send('vault.create', { password: 'benchmark password' });
    await send('vault.importOwnerKey', { privateKey: h.sandbox.demo.owner.privateKey });
    const p = h.sandbox.demo.proxy;
    await send('proxy.import', { account: h.sandbox.demo.owner.address, privateKey: p.privateKey, proxy: p.address, secret: p.secret, expiry: p.expiry });
    const demo = await h.ctx.newPage();
    await demo.goto(`${h.sandbox.url}/demo`);
    await demo.getByText('Found Countersign').first().waitFor();
    const approveNext = async () => {
      const w = await h.ctx.waitForEvent('page', { predicate: (x) => x.url().endsWith('/approval.html') });
      await w.bringToFront();
      return w;
    };
    const arm = async (w: Awaited<ReturnType<typeof approveNext>>) => {
      await w.waitForFunction(() => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled);
      await w.getByTestId('approve').click();
    };
    const req = (body: unknown) => demo.evaluate((b) => (window as unknown as { countersign: Provider }).countersign.request(b), body);
    const order = (i: number) => ({ method: 'perps_sendCommand', params: { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.01', p: (3100 - (i % 100) * 0.05).toFixed(2), tif: 'gtc', po: true }] } } });
    let w = approveNext();
    const c = req({ method: 'eth_requestAccounts' });
    await arm(await w);
    await c;
    w = approveNext();
    const first = req(order(0));
    const win = await w;
    await win.getByRole('button', { name: 'Allow this site within limits…' }).click();
    await win.locator('input[name="grant-rate"]').fill('1000');
    await win.locator('input[name="grant-daily"]').fill('100000');
    await win.getByRole('button', { name: 'Save permission' }).click();
    await win.getByText(/Saved for/).waitFor();
    await arm(win);
    await first;
    for (let i = 0; i < 10; i++) await req(order(i)); // warm-up
    const page = await demo.evaluate(async () => {
      const prov = (window as unknown as { countersign: Provider }).countersign;
      const out: number[] = [];
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now();
        await prov.request({ method: 'perps_sendCommand', params: { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.01', p: (3099 - (i % 100) * 0.05).toFixed(2), tif: 'gtc', po: true }] } } });
        out.push(performance.now() - t0);
      }
      return out;
    });
    const fromPopup = await popup.evaluate(async (account) => {
      const out: number[] = [];
      for (let i = 0; i < 50; i++) {
        const t0 = performance.now();
        await chrome.runtime.sendMessage({ type: 'perps.send', payload: { account, op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.01', p: (3098 - (i % 100) * 0.05).toFixed(2), tif: 'gtc', po: true }] } } });
        out.push(performance.now() - t0);
      }
      return out;
    }, h.sandbox.demo.owner.address);
    console.log(`\nPage → gateway ack under a standing grant (headless Chromium, sandbox on loopback): p50 ${pct(page, 50).toFixed(1)} ms, p95 ${pct(page, 95).toFixed(1)} ms over 200 (target p50 ≤ 15 ms)`);
    console.log(`Same order from the popup (perps.send): p50 ${pct(fromPopup, 50).toFixed(1)} ms, p95 ${pct(fromPopup, 95).toFixed(1)} ms over 50`);
  } finally {
    await h.close();
  }
}
