/**
 * The popup, as a person uses it, in real Chromium against the sandbox: onboarding from nothing to a
 * proxy key and CLOB credentials; lock and unlock (wrong, then right password); a perps limit order
 * that the sandbox verifies and get-orders reports, then its cancel; an order-book order placed and
 * listed; a withdrawal through its confirmation step. Screenshots of each main screen are saved under
 * test-results/screens/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchHarness, type Harness } from './harness';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let popup: Page;

beforeAll(async () => {
  h = await launchHarness();
  popup = await h.openPopup();
});
afterAll(async () => {
  await h?.close();
});

const button = (name: string | RegExp) => popup.getByRole('button', { name });

describe('popup in Chromium', () => {
  it('onboards from nothing to a proxy key and CLOB credentials', async () => {
    await popup.locator('input[name="new-password"]').fill('short');
    // The strength hint says why, and the vault cannot be created with a short password.
    await popup.getByText('Too short').waitFor({ timeout: 2_000 });
    expect(await button('Create vault').isDisabled()).toBe(true);
    await popup.locator('input[name="new-password"]').fill(PASSWORD);
    await popup.locator('input[name="confirm-password"]').fill(PASSWORD);
    await h.screenshot(popup, '01-onboarding-password');
    await button('Create vault').click();
    await button('Generate a new key').click();
    await button('Show the key').click();
    const key = await popup.getByTestId('revealed-key').textContent();
    expect(key).toMatch(/^0x[0-9a-f]{64}$/);
    await h.screenshot(popup, '02-onboarding-save-key');
    expect(await button('Continue').isDisabled()).toBe(true);
    await popup.getByLabel('I have saved this key somewhere safe').check();
    await button('Continue').click();
    await expect(popup.getByTestId('revealed-key').count()).resolves.toBe(0);
    await h.screenshot(popup, '03-onboarding-proxy');
    await button('Issue proxy key').click();
    await popup.getByText('Proxy key issued').waitFor();
    await button('Existing key — API credentials').click();
    await button('Create API credentials').click();
    await popup.getByText('API credentials created').waitFor();
    await button('Start trading').click();
    await popup.getByRole('tab', { name: 'Perps' }).waitFor();
    // The sandbox registered the proxy and the API key for the new owner.
    const owners = [...h.sandbox.ctx.venue.accounts.values()].filter(
      (a) => a.proxies.size > 0 && a.owner !== h.sandbox.demo.owner.address,
    );
    expect(owners).toHaveLength(1);
    expect(
      [...h.sandbox.ctx.clob.creds.values()].some((c) => c.address.toLowerCase() === owners[0]!.owner.toLowerCase()),
    ).toBe(true);
  });

  it('locks, refuses a wrong password with a back-off, then unlocks with the right one', async () => {
    await button('Lock').click();
    const pw = popup.locator('input[name="password"]');
    await pw.fill('not my password');
    await pw.press('Enter');
    await popup.getByRole('alert').filter({ hasText: 'Wrong password' }).waitFor();
    await popup.getByText(/You can try again in \d+ s/).waitFor();
    await h.screenshot(popup, '04-unlock-wrong-password');
    await popup.waitForTimeout(1_100);
    await pw.fill(PASSWORD);
    await pw.press('Enter');
    await popup.getByRole('tab', { name: 'Perps' }).waitFor();
  });

  it(
    'places a perps limit order from the ticket; the sandbox ' +
      'verifies it and get-orders reports it; then cancels it',
    async () => {
      const qty = popup.locator('input[name="qty"]');
      await qty.waitFor();
      await popup.locator('select[name="instrument"]').selectOption({ label: 'ETH-PERP (#2)' });
      await popup.waitForFunction(
        () => (document.querySelector('input[name="price"]') as HTMLInputElement | null)?.value !== '',
      );
      expect(await popup.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('qty');
      await qty.fill('1.5');
      await popup.locator('input[name="price"]').fill('3000');
      await popup.getByLabel('Post-only').check();
      await popup.getByText(/request weight 1, action weight 1/).waitFor();
      await h.screenshot(popup, '05-perps-ticket');
      await qty.press('Enter');
      await popup.getByText(/Resting on the book/).waitFor();
      const resting = [...h.sandbox.ctx.venue.orders.values()].filter(
        (o) => o.status === 'open' && o.qty === 150_000_000n && o.iid === 2 && o.po,
      );
      expect(resting).toHaveLength(1);
      const oid = resting[0]!.oid;
      await popup.locator(`li[data-oid="${oid}"]`).waitFor();
      await h.screenshot(popup, '06-perps-open-orders');
      await popup.getByRole('button', { name: `Cancel order ${oid}` }).click();
      await popup.getByText(`Order #${oid} cancelled`).waitFor();
      expect(h.sandbox.ctx.venue.orders.get(oid)!.status).toBe('cancelled');
    },
  );

  it('places an order-book order and lists it', async () => {
    await popup.getByRole('tab', { name: 'Order book' }).click();
    await popup.getByRole('button', { name: 'Will the sandbox stay up all day?' }).click();
    await popup.waitForFunction(
      () => (document.querySelector('input[name="clob-price"]') as HTMLInputElement | null)?.value !== '',
    );
    await popup.locator('input[name="clob-price"]').fill('0.40');
    await popup.locator('input[name="clob-size"]').fill('10');
    await popup.getByTestId('amounts').filter({ hasText: '4000000 base units' }).waitFor();
    await h.screenshot(popup, '07-clob-ticket');
    await popup.locator('input[name="clob-size"]').press('Enter');
    await popup.getByText(/is resting on the book/).waitFor();
    const live = [...h.sandbox.ctx.clob.orders.values()].filter(
      (o) => o.status === 'live' && o.owner !== 'market-maker',
    );
    expect(live).toHaveLength(1);
    await popup.locator(`li[data-order-id="${live[0]!.id}"]`).waitFor();
    await h.screenshot(popup, '08-clob-open-orders');
    // An account with type-0 credentials is not switched to a deposit wallet by one click: the panel
    // names the switch and its button stays disabled until the person ticks the confirmation.
    const panel = popup.getByTestId('deposit-switch');
    await panel.getByText(/already trades the order book through your key \(EOA, type 0\)/).waitFor();
    expect(await panel.getByTestId('deposit-setup').isDisabled()).toBe(true);
    await panel.getByLabel("Switch this account's orders to the deposit wallet").check();
    expect(await panel.getByTestId('deposit-setup').isDisabled()).toBe(false);
    await panel.getByLabel("Switch this account's orders to the deposit wallet").uncheck();
  });

  it('withdraws through the confirmation step (human and base units)', async () => {
    await popup.getByRole('tab', { name: 'Account' }).click();
    await h.screenshot(popup, '09-account-deposits');
    await popup.getByRole('tab', { name: 'Move funds' }).click();
    await popup.locator('input[name="to"]').fill(h.sandbox.demo.counterparty.address);
    await popup.locator('input[name="amount"]').fill('10');
    await button('Review').click();
    const confirm = popup.getByRole('region', { name: 'Confirm withdrawal' });
    await confirm.getByText('10000000').waitFor();
    await confirm.getByText('10.00 USDC').waitFor();
    await confirm.getByText(h.sandbox.demo.counterparty.address).waitFor();
    await h.screenshot(popup, '10-withdraw-confirm');
    await button('Withdraw').last().click();
    await popup.getByText(/Withdrawal #\d+ accepted/).waitFor();
    const withdrawals = [...h.sandbox.ctx.venue.accounts.values()].flatMap((a) => a.withdrawals);
    expect(withdrawals).toHaveLength(1);
    expect(withdrawals[0]!.amount).toBe(10_000_000n);
  });

  it('shows the settings screen with the gateway it trades against', async () => {
    await popup.getByRole('tab', { name: 'Settings' }).click();
    expect(await popup.locator('input[name="perpsUrl"]').inputValue()).toBe(`${h.sandbox.url}/perps`);
    await h.screenshot(popup, '11-settings');
  });

  it(
    'adding a second key keeps the active account; ' + "switching is the person's choice and shows in the header",
    async () => {
      const status = () =>
        popup.evaluate(() => chrome.runtime.sendMessage({ type: 'vault.status', payload: {} })) as Promise<{
          result: { activeAccount: string };
        }>;
      const first = (await status()).result.activeAccount;
      const added = (await popup.evaluate(() =>
        chrome.runtime.sendMessage({ type: 'vault.generateOwnerKey', payload: { label: 'Desk 2' } }),
      )) as { result: { address: string } };
      await popup.reload();
      const select = popup.getByLabel('Active account');
      await select.waitFor();
      expect(await select.inputValue()).toBe(first);
      expect((await status()).result.activeAccount).toBe(first);
      await select.selectOption(added.result.address);
      await popup.getByText('Now acting as Desk 2').waitFor();
      expect((await status()).result.activeAccount).toBe(added.result.address);
      await h.screenshot(popup, '12-account-switched');
      await popup.getByLabel('Active account').selectOption(first);
      await popup
        .getByText(/^Now acting as/)
        .filter({ hasNotText: 'Desk 2' })
        .waitFor();
      expect((await status()).result.activeAccount).toBe(first);
    },
  );
});

declare const chrome: { runtime: { sendMessage: (m: unknown) => Promise<unknown> } };
