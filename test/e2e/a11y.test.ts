/**
 * Accessibility and fit (keyboard, screen readers, the popup's size): axe-core
 * (`node_modules/axe-core/axe.min.js`, injected into the page) in real Chromium on every popup screen
 * (onboarding step by step, the close-position preview, the deposit-wallet panel before and after its
 * set-up, the panic dialog and its report), the side panel page and the approval window (connect,
 * withdrawal, grant form, a perps order with its summary), light and dark (`prefers-color-scheme` emulated), at 360 ×
 * 600 px. A screen fails on any serious or critical violation and when the document is wider than 360 px (a sideways
 * scroll). Also: the order summary and submit button of both tickets are in view without scrolling (screenshots in
 * test-results/screens/), the Panic dialog takes focus and Escape closes it, the tabs are one Tab stop with arrow keys,
 * and the order button is a few Tab presses from the size field.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { ARTIFACTS, launchHarness, messenger, type Harness } from './harness';

const PASSWORD = 'correct horse battery staple';
const AXE = resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js');
const WIDTH = 360;
const HEIGHT = 600;
let h: Harness;
let popup: Page;

type AxeNode = { target: unknown[]; failureSummary?: string };
type AxeViolation = { id: string; impact: string | null; help: string; nodes: AxeNode[] };
declare const axe: { run: (ctx: Document, opts: object) => Promise<{ violations: AxeViolation[] }> };

/**
 * Puts axe-core into `page`: `addScriptTag` where the page allows it; the extension's pages forbid
 * inline scripts (CSP `script-src 'self'`), so there the same file is evaluated through the DevTools
 * protocol, which the page's CSP does not govern.
 */
async function injectAxe(page: Page): Promise<void> {
  try {
    await page.addScriptTag({ path: AXE });
  } catch {
    await page.evaluate(readFileSync(AXE, 'utf8'));
  }
}

/** Serious / critical axe violations and horizontal overflow of `page`, light then dark; one line each. */
async function audit(page: Page, screen: string): Promise<string[]> {
  const problems: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    if (!(await page.evaluate(() => 'axe' in window))) await injectAxe(page);
    const violations = await page.evaluate(async () => {
      // label-content-name-mismatch is experimental in axe (off by default): a visible label must be in the accessible
      // name, so it runs.
      const r = await axe.run(document, {
        resultTypes: ['violations'],
        rules: { 'label-content-name-mismatch': { enabled: true } },
      });
      return r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
      }));
    });
    for (const v of violations.filter((x) => x.impact === 'serious' || x.impact === 'critical')) {
      problems.push(
        `${screen} (${scheme}): ${v.id} [${v.impact}] ${v.help} — ${v.nodes
          .slice(0, 3)
          .map((n) => JSON.stringify(n.target))
          .join(', ')}`,
      );
    }
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    if (width > WIDTH) problems.push(`${screen} (${scheme}): ${width} px wide, scrolls sideways`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return problems;
}

/** The element's box lies inside the 600 px viewport with the page scrolled to the top. */
async function inView(page: Page, selector: string): Promise<boolean> {
  return page.evaluate(
    ([sel, height]) => {
      window.scrollTo(0, 0);
      const el = document.querySelector(sel);
      if (!el) return false;
      const r = el.getBoundingClientRect();
      return r.height > 0 && r.top >= 0 && r.bottom <= height;
    },
    [selector, HEIGHT] as const,
  );
}

let found: string[] = [];
const check = async (page: Page, screen: string) => found.push(...(await audit(page, screen)));

beforeEach(() => {
  found = [];
});
beforeAll(async () => {
  h = await launchHarness();
  popup = await h.openPopup();
  await popup.setViewportSize({ width: WIDTH, height: HEIGHT });
});
afterAll(async () => {
  await h?.close();
});

describe('every screen at 360 × 600, light and dark', () => {
  it('onboarding and unlock', async () => {
    await popup.locator('input[name="new-password"]').waitFor();
    await check(popup, 'onboarding');
    // Every step after the password, by clicks: the demo key imported, a proxy key issued, credentials created.
    const button = (name: string) => popup.getByRole('button', { name, exact: true });
    await popup.locator('input[name="new-password"]').fill(PASSWORD);
    await popup.locator('input[name="confirm-password"]').fill(PASSWORD);
    await button('Create vault').click();
    await popup.getByRole('heading', { name: 'Owner key' }).waitFor();
    await check(popup, 'onboarding / owner key');
    await popup.locator('input[name="owner-key"]').fill(h.sandbox.demo.owner.privateKey);
    await button('Import key').click();
    await popup.getByRole('heading', { name: 'Trading key for perps' }).waitFor();
    await check(popup, 'onboarding / proxy key');
    await button('Issue proxy key').click();
    await popup.getByRole('heading', { name: 'Order-book credentials' }).waitFor();
    await popup.getByText('Proxy key issued').waitFor();
    await check(popup, 'onboarding / order-book credentials: the two choices');
    await button('New account — deposit wallet').click();
    await popup.getByTestId('deposit-wallet').waitFor();
    await check(popup, 'onboarding / order-book credentials with the deposit-wallet panel');
    await button('Existing key — API credentials').click();
    await button('Create API credentials').click();
    await popup.getByRole('heading', { name: "You're set" }).waitFor();
    await check(popup, 'onboarding / done');
    await button('Start trading').click();
    await popup.getByRole('tab', { name: 'Perps' }).waitFor();
    const send = messenger(popup);
    expect((await send('vault.lock', {})).ok).toBe(true);
    await popup.reload();
    await popup.locator('input[name="password"]').waitFor();
    await check(popup, 'unlock');
    await popup.locator('input[name="password"]').fill(PASSWORD);
    await popup.locator('input[name="password"]').press('Enter');
    await popup.locator('input[name="qty"]').waitFor();
    expect(found).toEqual([]);
  });

  it(
    'perps ticket: the summary and the submit button are ' + 'in view; the order button is a few Tab presses away',
    async () => {
      await popup.locator('select[name="instrument"]').selectOption({ label: 'BTC-PERP (#1)' });
      await popup.getByTestId('ladder').waitFor();
      await popup.locator('input[name="qty"]').fill('0.5');
      await popup.getByTestId('risk-liq').waitFor();
      expect(await inView(popup, '[data-testid="risk"]')).toBe(true);
      expect(await inView(popup, '[data-testid="submit"]')).toBe(true);
      // BTC's 0.5 tick: ladder prices shown with one decimal, with headers and the spread in ticks and bp.
      expect(await popup.getByTestId('ladder').locator('th').allTextContents()).toEqual(['Price', 'Size', 'Total']);
      expect(await popup.getByTestId('ladder').locator('.ask td').first().textContent()).toMatch(
        /^\d{1,3}(,\d{3})*\.[05]$/,
      );
      expect(await popup.getByTestId('spread').textContent()).toMatch(/ticks · \d+\.\d bp/);
      // the viewport, as the popup shows it
      await popup.screenshot({ path: resolve(ARTIFACTS, 'screens/40-perps-ticket-360x600.png') });
      // From the size field to the order button: presets, unit, price, time in force, two checkboxes — no ladder rows.
      await popup.locator('input[name="qty"]').focus();
      let presses = 0;
      while (
        presses < 15 &&
        !(await popup.evaluate(() => document.activeElement?.getAttribute('data-testid') === 'submit'))
      ) {
        await popup.keyboard.press('Tab');
        presses++;
      }
      expect(presses).toBeLessThanOrEqual(10);
      // The size presets are one Tab stop; ← / → move between them.
      await popup.locator('.presets button').first().focus();
      await popup.keyboard.press('ArrowRight');
      expect(await popup.evaluate(() => document.activeElement?.textContent)).toBe('50%');
      await check(popup, 'perps');
      // A key cycles the instrument (outside text fields): I → the next one, Shift+I → back.
      const instrument = popup.locator('select[name="instrument"]');
      const before = await instrument.inputValue();
      await popup.locator('form').first().focus();
      await popup.keyboard.press('i');
      await popup.waitForFunction(
        (b) => (document.querySelector('select[name="instrument"]') as HTMLSelectElement).value !== b,
        before,
      );
      await popup.keyboard.press('Shift+I');
      await popup.waitForFunction(
        (b) => (document.querySelector('select[name="instrument"]') as HTMLSelectElement).value === b,
        before,
      );
      // The close-position preview (role=alertdialog) over a position opened by a protected market buy.
      await popup.locator('input[name="qty"]').fill('0.1');
      await popup.locator('input[name="price"]').fill('');
      await popup.getByTestId('risk-limit').waitFor();
      await popup.getByTestId('submit').click();
      await popup
        .getByText(/Filled 0.1/)
        .first()
        .waitFor();
      await popup.getByTestId('close-position').click();
      await popup.getByRole('alertdialog', { name: 'Close position' }).waitFor();
      await check(popup, 'perps / close preview');
      await popup.getByRole('alertdialog', { name: 'Close position' }).getByRole('button', { name: 'Back' }).click();
      expect(found).toEqual([]);
    },
  );

  it('tabs: one Tab stop, arrow keys move and select, each tab controls its panel', async () => {
    const tabs = popup.getByRole('tablist', { name: 'Countersign screens' }).getByRole('tab');
    expect(await tabs.evaluateAll((els) => els.filter((e) => e.getAttribute('tabindex') === '0').length)).toBe(1);
    await popup.getByRole('tab', { name: 'Perps' }).focus();
    await popup.keyboard.press('ArrowRight');
    await popup.getByRole('tab', { name: 'Positions', selected: true }).waitFor();
    expect(await popup.evaluate(() => document.activeElement?.textContent)).toBe('Positions');
    const controls = await popup.getByRole('tab', { name: 'Positions' }).getAttribute('aria-controls');
    expect(await popup.locator(`#${controls}`).getAttribute('role')).toBe('tabpanel');
    await popup.keyboard.press('ArrowLeft');
    await popup.getByRole('tab', { name: 'Perps', selected: true }).waitFor();
  });

  it('order-book ticket: the summary and the submit button are in view', async () => {
    await popup.getByRole('tab', { name: 'Order book' }).click();
    await popup.getByRole('button', { name: 'Will the sandbox stay up all day?' }).click();
    await popup.waitForFunction(
      () => (document.querySelector('input[name="clob-price"]') as HTMLInputElement | null)?.value !== '',
    );
    await popup.locator('input[name="clob-price"]').fill('0.40');
    await popup.locator('input[name="clob-size"]').fill('10');
    await popup.getByTestId('amounts').waitFor();
    expect(await inView(popup, '[data-testid="amounts"]')).toBe(true);
    expect(await inView(popup, '[data-testid="clob-submit"]')).toBe(true);
    await popup.screenshot({ path: resolve(ARTIFACTS, 'screens/41-clob-ticket-360x600.png') });
    await check(popup, 'order book');
    expect(found).toEqual([]);
  });

  it('positions, account (each section), audit and settings', async () => {
    await popup.getByRole('tab', { name: 'Positions' }).click();
    await popup.getByTestId('account-summary').waitFor();
    await check(popup, 'positions');
    await popup.getByRole('tab', { name: 'Account' }).click();
    for (const sub of ['Deposits', 'Transfers', 'Config', 'Referral', 'Keys', 'Funding', 'Move funds']) {
      await popup.getByRole('tab', { name: sub }).click();
      await popup.waitForTimeout(150);
      await check(popup, `account / ${sub}`);
    }
    await popup.getByRole('tab', { name: 'Audit' }).click();
    await popup.waitForTimeout(200);
    await check(popup, 'audit');
    await popup.getByRole('tab', { name: 'Settings' }).click();
    await popup.locator('input[name="perpsUrl"]').waitFor();
    await check(popup, 'settings');
    expect(found).toEqual([]);
  });

  it('panic: the dialog takes focus, passes axe, and Escape closes it', async () => {
    await popup.getByRole('button', { name: 'Panic' }).click();
    const dialog = popup.getByRole('alertdialog', { name: 'Stop everything?' });
    await dialog.waitFor();
    // Focus moves in once the dialog is shown (an effect after its render; under load a frame later).
    await popup.waitForFunction(
      () => document.querySelector('[role="alertdialog"]')?.contains(document.activeElement) ?? false,
      undefined,
      { timeout: 3_000 },
    );
    expect(await dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
    await check(popup, 'panic');
    await popup.keyboard.press('Escape');
    await popup.getByRole('tablist', { name: 'Countersign screens' }).waitFor();
    expect(await popup.getByRole('alertdialog').count()).toBe(0);
    expect(found).toEqual([]);
  });

  it('approval window (connect, withdrawal with flags, grant form), the popup queue, and permissions', async () => {
    const demo = await h.ctx.newPage();
    await demo.goto(`${h.sandbox.url}/demo`);
    await demo.getByText('Found Countersign').first().waitFor();
    const windowFor = async (button: string) => {
      const opened = h.ctx.waitForEvent('page', {
        predicate: (p) => p.url().endsWith('/approval.html'),
        timeout: 10_000,
      });
      await demo.click(`#${button}`);
      const w = await opened;
      await w.setViewportSize({ width: WIDTH, height: HEIGHT });
      await w.getByTestId('approve').waitFor();
      return w;
    };
    const approve = async (w: Page) => {
      await w.bringToFront();
      await w.waitForFunction(
        () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
        undefined,
        { timeout: 5_000 },
      );
      await w.getByTestId('approve').click();
    };
    const connect = await windowFor('connect');
    await check(connect, 'approval window / connect');
    // While it is pending, the popup opens on the same queue.
    await popup.reload();
    await popup.getByTestId('approve').waitFor();
    await check(popup, 'popup approval queue');
    await approve(connect);

    const withdraw = await windowFor('withdraw');
    await withdraw.getByText('A new address: you have never sent funds here.').waitFor();
    await check(withdraw, 'approval window / withdrawal');
    // The flags keep their list semantics inside the alert.
    expect(await withdraw.getByRole('alert').getByRole('listitem').count()).toBeGreaterThan(0);
    await withdraw.getByRole('button', { name: 'Reject' }).click();

    const clob = await windowFor('clob');
    await clob.getByRole('button', { name: 'Allow this site within limits…' }).click();
    await clob.getByRole('button', { name: 'Save permission' }).waitFor();
    await check(clob, 'approval window / grant form');
    await clob.getByRole('button', { name: 'Save permission' }).click();
    await clob.getByText(/Saved for/).waitFor();
    await approve(clob);

    // A page's perps order: the window shows its numbers (notional, margin, fee, position after, liquidation).
    const opened = h.ctx.waitForEvent('page', {
      predicate: (p) => p.url().endsWith('/approval.html'),
      timeout: 10_000,
    });
    const asked = demo.evaluate(() =>
      (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign
        .request({
          method: 'perps_sendCommand',
          params: {
            op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true }] },
          },
        })
        .catch(() => 'rejected'),
    );
    const order = await opened;
    await order.setViewportSize({ width: WIDTH, height: HEIGHT });
    await order.getByTestId('approval-notional').waitFor();
    await check(order, 'approval window / perps order summary');
    await order.getByRole('button', { name: 'Reject' }).click();
    expect(await asked).toBe('rejected');

    await popup.reload();
    await popup.getByRole('tab', { name: 'Settings' }).click();
    await popup.locator('input[name="perpsUrl"]').waitFor();
    await popup.waitForTimeout(200);
    await check(popup, 'settings / permissions');
    expect(found).toEqual([]);
  });

  it(
    'the deposit-wallet panel once set up (after the approval ' +
      'windows: the set-up makes the wallet the order-book funder)',
    async () => {
      // The relayer and chain RPC settings pointed at this sandbox, as the harness does for the other gateways.
      expect(
        (
          await messenger(popup)('settings.set', {
            relayerUrl: `${h.sandbox.url}/relayer`,
            rpcUrl: `${h.sandbox.url}/rpc`,
          })
        ).ok,
      ).toBe(true);
      await popup.reload();
      await popup.getByRole('tab', { name: 'Order book' }).click();
      // The account trades with type-0 API credentials: the panel offers the switch, confirmed first.
      await popup.getByRole('checkbox', { name: "Switch this account's orders to the deposit wallet" }).waitFor();
      await check(popup, 'order book / deposit-wallet switch for an account with API credentials');
      await popup.getByRole('checkbox', { name: "Switch this account's orders to the deposit wallet" }).check();
      await popup.getByTestId('deposit-setup').click();
      await popup.getByTestId('deposit-address').waitFor({ timeout: 20_000 });
      await popup.getByText('Not deployed yet: do not send funds').waitFor();
      await check(popup, 'order book / deposit-wallet panel, set up');
      expect(found).toEqual([]);
    },
  );

  it('the side panel page', async () => {
    const panel = await h.ctx.newPage();
    await panel.setViewportSize({ width: WIDTH, height: HEIGHT });
    await panel.goto(`chrome-extension://${h.extensionId}/sidepanel.html`);
    await panel.getByRole('tablist', { name: 'Countersign screens' }).waitFor();
    await panel.locator('input[name="qty"]').waitFor();
    await check(panel, 'side panel');
    await panel.close();
    expect(found).toEqual([]);
  });

  it('panic report (last: it locks Countersign)', async () => {
    await popup.bringToFront();
    await popup.reload();
    await popup.getByRole('button', { name: 'Panic' }).click();
    await popup.getByTestId('panic-confirm').click();
    await popup.getByTestId('panic-report').waitFor({ timeout: 30_000 });
    await check(popup, 'panic report');
    expect(found).toEqual([]);
  });
});
