/**
 * The cockpit in the browser's side panel, a cockpit that stays open: the built manifest
 * declares Chrome's side panel with the sidepanel page, and that page — the same cockpit as the popup,
 * at the panel's width — trades against the sandbox while the venue's page is open in the window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { EXTENSION_DIR, launchHarness, onboardDemo, type Harness } from './harness';

let h: Harness;
let panel: Page;

beforeAll(async () => {
  h = await launchHarness();
  const { popup } = await onboardDemo(h, 'correct horse battery staple', { label: 'Demo' });
  await popup.close();
});
afterAll(async () => {
  await h?.close();
});

describe('side panel', () => {
  it('is declared in the manifest (Chrome side_panel + sidePanel permission)', () => {
    const manifest = JSON.parse(readFileSync(join(EXTENSION_DIR, 'manifest.json'), 'utf8')) as {
      side_panel?: { default_path: string };
      permissions: string[];
    };
    expect(manifest.side_panel?.default_path).toBe('sidepanel.html');
    expect(manifest.permissions).toContain('sidePanel');
  });

  it('opens the cockpit beside the venue page and places an order the sandbox records', async () => {
    const venue = await h.ctx.newPage();
    await venue.goto(`${h.sandbox.url}/demo`);
    panel = await h.ctx.newPage();
    await panel.setViewportSize({ width: 400, height: 800 });
    await panel.goto(`chrome-extension://${h.extensionId}/sidepanel.html`);
    const qty = panel.locator('input[name="qty"]');
    await qty.waitFor();
    // The panel is not the toolbar popup: it takes the panel's width and offers no "open in the side panel".
    expect(await panel.evaluate(() => document.body.getBoundingClientRect().width)).toBe(400);
    expect(await panel.getByText('Keep the cockpit open in the side panel').count()).toBe(0);
    await panel.locator('select[name="instrument"]').selectOption({ label: 'ETH-PERP (#2)' });
    await panel.getByTestId('ladder').waitFor();
    await qty.fill('1.5');
    await panel.locator('input[name="price"]').fill('3000');
    await panel.getByLabel('Post-only').check();
    await h.screenshot(panel, '42-side-panel');
    await qty.press('Enter');
    await panel
      .getByTestId('ticket-result')
      .filter({ hasText: /Resting on the book/ })
      .waitFor();
    const resting = [...h.sandbox.ctx.venue.orders.values()].filter(
      (o) => o.status === 'open' && o.iid === 2 && o.qty === 150_000_000n && o.po,
    );
    expect(resting).toHaveLength(1);
    await panel.locator(`li[data-oid="${resting[0]!.oid}"]`).waitFor();
  });
});
