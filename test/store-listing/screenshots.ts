/**
 * Store screenshots from the real extension (`npm run store:screenshots`; `test/release/store-listing.test.ts`
 * runs it into a temporary folder): the development build in real Chromium against an in-process sandbox, the demo
 * account onboarded; the popup's perps ticket and the approval window of a page's order are each captured as they
 * render, then laid out with a caption on a 1280 × 800 canvas and the same layout at 640 × 400 (the Chrome Web Store's
 * two sizes; AMO takes either). Writes `<out>/<n>-<name>-1280x800.png` and `…-640x400.png` and returns their paths.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { connectDemo, launchHarness, onboardDemo, type Harness } from '../e2e/harness';

const PASSWORD = 'correct horse battery staple';

/** One shot: the file stem, the caption's title and line, and the captured extension page (PNG). */
type Shot = { name: string; title: string; line: string; png: Buffer };

/** Lays `shot` out on a canvas of `width` × `height` (the 1280 × 800 layout scaled) and saves it to `path`. */
async function compose(page: Page, shot: Shot, width: number, height: number, path: string): Promise<void> {
  const scale = width / 1280;
  await page.setViewportSize({ width, height });
  const img = `data:image/png;base64,${shot.png.toString('base64')}`;
  await page.setContent(`<!doctype html><html><head><style>
    .frame{width:1280px;height:800px;transform:scale(${scale});transform-origin:0 0;display:flex;align-items:center;
      gap:64px;padding:0 96px;box-sizing:border-box;background:linear-gradient(135deg,#eef1fe,#dfe5fd);
      font-family:system-ui,sans-serif;color:#14183a}
    .brand{font-size:22px;font-weight:600;color:#4a6cf0;letter-spacing:.04em}
    h1{font-size:52px;line-height:1.1;margin:16px 0}
    p{font-size:26px;line-height:1.4;margin:0;color:#3a4066}
    img{max-height:700px;max-width:560px;border-radius:14px;box-shadow:0 18px 50px rgba(20,24,58,.28)}
    </style></head><body style="margin:0;overflow:hidden">
    <div class="frame">
      <div style="flex:1"><div class="brand">COUNTERSIGN</div>
        <h1>${shot.title}</h1><p>${shot.line}</p></div>
      <img src="${img}"/>
    </div></body></html>`);
  await page.locator('img').evaluate((el: HTMLImageElement) => el.decode());
  await page.screenshot({ path, clip: { x: 0, y: 0, width, height } });
}

/** Makes the store screenshots in `outDir` (see the module comment); returns the written paths. */
export async function makeStoreScreenshots(outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const h: Harness = await launchHarness();
  try {
    const { popup } = await onboardDemo(h, PASSWORD, { clob: true });
    await popup.setViewportSize({ width: 380, height: 600 });
    await popup.reload();
    await popup.locator('select[name="instrument"]').selectOption({ label: 'BTC-PERP (#1)' });
    await popup.getByTestId('ladder').waitFor();
    await popup.locator('input[name="qty"]').fill('0.5');
    await popup.getByTestId('risk-liq').waitFor();
    const ticket = await popup.screenshot();

    const demo = await connectDemo(h);
    const opened = h.ctx.waitForEvent('page', {
      predicate: (p) => p.url().endsWith('/approval.html'),
      timeout: 15_000,
    });
    await demo.click('#order');
    const w = await opened;
    await w.setViewportSize({ width: 420, height: 640 });
    await w.getByTestId('approval-lines').waitFor();
    const approval = await w.screenshot();

    const shots: Shot[] = [
      {
        name: '1-approval',
        title: 'See exactly what you sign',
        line:
          'A site asks; the approval window shows the order decoded — market, ' +
          'side, size, price, the key that signs — before anything is signed.',
        png: approval,
      },
      {
        name: '2-ticket',
        title: 'Trade from the toolbar',
        line:
          'The order ticket with the book, your risk before signing, and ' +
          'keys that never leave the extension, encrypted on this device.',
        png: ticket,
      },
    ];
    const canvas = await h.ctx.newPage();
    const out: string[] = [];
    for (const shot of shots) {
      for (const [width, height] of [
        [1280, 800],
        [640, 400],
      ] as const) {
        const path = join(outDir, `${shot.name}-${width}x${height}.png`);
        await compose(canvas, shot, width, height, path);
        out.push(path);
      }
    }
    return out;
  } finally {
    await h.close();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const paths = await makeStoreScreenshots(resolve(import.meta.dirname, 'screenshots'));
  console.log(paths.join('\n'));
}
