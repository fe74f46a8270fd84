/**
 * Deposit wallets in real Chromium (popup at 360 × 600): a fresh install onboards a new API user through
 * the popup alone to a deposit wallet — the address shown is the PROTOCOL.md §4.2 derivation and the
 * relayer's `/deployed` — creates it (progress until mined), approves the setup batch in the approval
 * window (token, spender, amount in plain words), places a type-3 order that fills (the sandbox received
 * signature type 3, maker = signer = the wallet), resolves the market and redeems (the wallet is paid out
 * at the sandbox), withdraws through the bridge with the wallet as the source (the sandbox's
 * `/admin/withdrawals` records it, and a popup opened again while it is pending follows it until mined);
 * Settings edits the relayer and RPC URLs. Screenshots `test-results/screens/50-*`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { Address } from 'viem';
import { launchHarness, messenger, type Harness } from './harness';
import { uupsDepositWallet } from '../../lib/relayer/wallet';
import { venueContracts } from '../../lib/relayer/contracts';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let popup: Page;

const chainId = () => h.sandbox.ctx.config.clobChainId;
/** The sandbox's recorded requests to `path` with `method`, bodies parsed. */
const posted = (method: string, path: RegExp) =>
  h.sandbox.ctx.requestLog.filter((r) => r.method === method && path.test(r.path));

/** Waits until the followed relayer transaction's progress bar is full (3 of 3: mined). */
const mined = () =>
  popup.getByTestId('deposit-tx').locator('[role="progressbar"][aria-valuenow="3"]').waitFor({ timeout: 20_000 });

/** Waits for the approval window the next click opens, checks `expectText` in it, approves. */
async function approveInWindow(
  click: () => Promise<void>,
  shot: string,
  check: (w: Page) => Promise<void>,
): Promise<void> {
  const opened = h.ctx.waitForEvent('page', { predicate: (p) => p.url().endsWith('/approval.html'), timeout: 15_000 });
  await click();
  const w = await opened;
  await w.setViewportSize({ width: 360, height: 600 });
  await w.bringToFront();
  await w.waitForFunction(() => {
    const b = document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null;
    return !!b && !b.disabled;
  });
  await check(w);
  await h.screenshot(w, shot);
  await w.getByTestId('approve').click();
  await popup.bringToFront();
}

beforeAll(async () => {
  h = await launchHarness();
  popup = await h.openPopup();
  await popup.setViewportSize({ width: 360, height: 600 });
  // The harness points the other gateways at this sandbox; the relayer and chain RPC settings too.
  const r = await messenger(popup)('settings.set', {
    relayerUrl: `${h.sandbox.url}/relayer`,
    rpcUrl: `${h.sandbox.url}/rpc`,
  });
  expect(r.ok).toBe(true);
  await popup.reload();
});
afterAll(async () => {
  await h?.close();
});

describe('a new API user, from a fresh install to a filled type-3 order and a redeem (Chromium)', () => {
  let owner: Address;
  let wallet: string;

  it(
    'onboards: vault, a generated owner key, and the deposit ' +
      "wallet whose address is the derivation and the relayer's",
    async () => {
      await popup.locator('input[name="new-password"]').fill(PASSWORD);
      await popup.locator('input[name="confirm-password"]').fill(PASSWORD);
      await popup.getByRole('button', { name: 'Create vault' }).click();
      await popup.getByRole('button', { name: 'Generate a new key' }).click();
      await popup.getByRole('heading', { name: 'Save your new key' }).waitFor();
      await popup.getByRole('button', { name: 'Show the key' }).click();
      await popup.getByTestId('revealed-key').waitFor();
      await popup.getByLabel('I have saved this key somewhere safe').check();
      await popup.getByRole('button', { name: 'Continue' }).click();
      await popup.getByRole('heading', { name: 'Trading key for perps' }).waitFor();
      await popup.getByRole('button', { name: 'Skip' }).click();
      await popup.getByRole('heading', { name: 'Order-book credentials' }).waitFor();
      // Two labelled options; nothing is set up before the person picks one.
      await popup.getByRole('button', { name: 'Existing key — API credentials' }).waitFor();
      expect(await popup.getByTestId('deposit-setup').count()).toBe(0);
      await popup.getByRole('button', { name: 'New account — deposit wallet' }).click();
      await h.screenshot(popup, '50-deposit-onboarding');

      const status = await messenger(popup)('vault.status');
      const accounts = (status.result as { accounts: { address: Address }[] }).accounts;
      expect(accounts).toHaveLength(1);
      owner = accounts[0]!.address;

      await popup.getByTestId('deposit-setup').click();
      const shown = popup.getByTestId('deposit-address');
      await shown.waitFor({ timeout: 20_000 });
      wallet = (await shown.textContent())?.trim() ?? '';
      expect(wallet).toBe(uupsDepositWallet(owner, chainId()));
      const deployed = await (await fetch(`${h.sandbox.url}/relayer/deployed?address=${wallet}`)).json();
      expect(deployed).toEqual({ deployed: false });
      // The popup asked the chain RPC stand-in and the relayer before it showed the address.
      expect(posted('POST', /^\/rpc/).length).toBeGreaterThan(0);
      expect(posted('GET', /^\/relayer\/deployed$/).length).toBeGreaterThan(0);
      await popup.getByText('Not deployed yet: do not send funds').waitFor();
      // The set-up made the API credentials (type 3, funder = the wallet): the step no longer offers to create them.
      await popup.getByText('API credentials are set up for this key.').waitFor();
      expect(await popup.getByRole('button', { name: 'Create API credentials' }).count()).toBe(0);
      await h.screenshot(popup, '51-deposit-address');
    },
  );

  it('creates the wallet through the relayer, with progress until mined', async () => {
    await popup.getByTestId('deposit-create').click();
    const bar = popup.getByTestId('deposit-tx').getByRole('progressbar');
    await bar.waitFor();
    await h.screenshot(popup, '52-deposit-creating');
    await mined();
    await popup.getByTestId('deposit-approve').waitFor();
    expect(await (await fetch(`${h.sandbox.url}/relayer/deployed?address=${wallet}`)).json()).toEqual({
      deployed: true,
    });
    const creation = posted('POST', /^\/relayer\/submit$/).map((r) => JSON.parse(r.body ?? '{}') as { type?: string });
    expect(creation.map((c) => c.type)).toEqual(['WALLET-CREATE']);
    await h.screenshot(popup, '53-deposit-mined');
  });

  it('approves the setup batch in the approval window, each call in plain words', async () => {
    const c = venueContracts(chainId());
    await approveInWindow(
      () => popup.getByTestId('deposit-approve').click(),
      '54-deposit-approve-window',
      async (w) => {
        const body = (await w.locator('body').textContent()) ?? '';
        expect(body).toContain(
          `Allow the exchange (V2) (${c.exchangeV2}) to spend an ` +
            `unlimited amount of collateral (USDC) of the deposit wallet`,
        );
        expect(body).toContain(c.negRiskExchangeV2);
        expect(body).toMatch(/outcome tokens/i);
      },
    );
    await popup.getByTestId('deposit-tx').getByText('Approving the exchanges').waitFor();
    await mined();
    expect(h.sandbox.ctx.relayerChain.isOperator(wallet, 'exchangeV2')).toBe(true);
    expect(h.sandbox.ctx.relayerChain.isOperator(wallet, 'negRiskExchangeV2')).toBe(true);
    // Mined and read back from the venue: "Approved" replaces the button, which no longer asks again.
    await popup.getByTestId('deposit-approved').waitFor({ timeout: 10_000 });
    expect(await popup.getByTestId('deposit-approve').count()).toBe(0);
    await h.screenshot(popup, '55-deposit-approved');
  });

  it('places a type-3 order from the Order book tab that fills', async () => {
    await popup.getByRole('button', { name: 'Continue' }).click();
    await popup.getByText('Order-book API credentials set up').waitFor();
    await popup.getByRole('button', { name: 'Start trading' }).click();
    await popup.getByRole('tab', { name: 'Order book' }).click();
    const m = h.sandbox.ctx.clob.markets[0]!;
    await popup.getByRole('button', { name: m.question }).click();
    await popup.waitForFunction(
      () => (document.querySelector('input[name="clob-price"]') as HTMLInputElement | null)?.value !== '',
    );
    await popup.locator('input[name="clob-price"]').fill('0.99');
    await popup.locator('input[name="clob-size"]').fill('10');
    await popup.getByTestId('amounts').waitFor();
    await h.screenshot(popup, '56-deposit-ticket');
    await popup.getByTestId('clob-submit').click();
    await popup
      .getByTestId('clob-result')
      .getByText(/filled|matched/i)
      .first()
      .waitFor({ timeout: 15_000 });
    const sent = posted('POST', /^\/clob\/order$/).map(
      (r) =>
        JSON.parse(r.body ?? '{}') as {
          order: { signatureType: number; maker: string; signer: string; signature: string };
        },
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]!.order).toMatchObject({ signatureType: 3 });
    expect(sent[0]!.order.maker.toLowerCase()).toBe(wallet.toLowerCase());
    expect(sent[0]!.order.signer.toLowerCase()).toBe(wallet.toLowerCase());
    expect(h.sandbox.ctx.clob.tokenBalance(wallet.toLowerCase(), m.tokenIds[0]!)).toBeGreaterThan(0n);
    // The shares are the wallet's: the portfolio reads the deposit wallet's positions, not the owner's.
    await popup
      .getByTestId('clob-portfolio')
      .locator('li')
      .filter({ hasText: /^10 Yes/ })
      .waitFor({ timeout: 10_000 });
    await h.screenshot(popup, '57-deposit-filled');
  });

  it('redeems the resolved market: one approval, one batch, the wallet paid out', async () => {
    const m = h.sandbox.ctx.clob.markets[0]!;
    const shares = h.sandbox.ctx.clob.tokenBalance(wallet.toLowerCase(), m.tokenIds[0]!);
    const resolved = await fetch(`${h.sandbox.url}/admin/resolve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ condition_id: m.conditionId, winner: 0 }),
    });
    expect(resolved.status).toBe(200);
    await popup.reload();
    await popup.getByRole('tab', { name: 'Order book' }).click();
    const redeem = popup.getByTestId('deposit-redeem');
    await redeem.waitFor({ timeout: 15_000 });
    await h.screenshot(popup, '58-deposit-redeemable');
    const before = h.sandbox.ctx.clob.balanceOf(wallet.toLowerCase());
    await approveInWindow(
      () => redeem.click(),
      '59-deposit-redeem-window',
      async (w) => {
        await w.getByText(/Redeem the resolved positions of market .* into the deposit wallet/).waitFor();
      },
    );
    await popup.getByTestId('deposit-tx').getByText('Redeeming').waitFor();
    await mined();
    await expect
      .poll(() => h.sandbox.ctx.clob.balanceOf(wallet.toLowerCase()) - before, { timeout: 10_000 })
      .toBe(shares);
    await h.screenshot(popup, '60-deposit-redeemed');
  });

  it(
    'withdraws through the bridge from the popup: the window ' + 'asks with its flags, the sandbox bridge records it',
    async () => {
      const recipient = '0x6666666666666666666666666666666666666666';
      const token = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
      const before = h.sandbox.ctx.clob.balanceOf(wallet.toLowerCase());
      const form = popup.getByTestId('deposit-withdraw');
      await form.getByText('Withdraw through the bridge').click();
      await form.locator('input[name="withdraw-amount"]').fill('2.5');
      await form.locator('input[name="withdraw-chain"]').fill('1');
      await form.locator('input[name="withdraw-token"]').fill(token);
      await form.locator('input[name="withdraw-recipient"]').fill(recipient);
      await h.screenshot(popup, '61-deposit-withdraw-form');
      // The relayer holds the withdrawal at NEW while the popup is closed and opened again.
      const mineMs = h.sandbox.ctx.config.relayerMineMs;
      h.sandbox.ctx.config.relayerMineMs = 600_000;
      try {
        await approveInWindow(
          () => form.getByTestId('withdraw-submit').click(),
          '62-deposit-withdraw-window',
          async (w) => {
            const body = (await w.locator('body').textContent()) ?? '';
            expect(body).toMatch(/Withdraw 2\.5 collateral \(USDC\) to 0x[0-9a-fA-F]{40}/);
            expect(body).toContain(`it sends the USDC to ${recipient} on chain 1`);
            expect(body).toContain('a withdrawal');
            expect(body).toContain('never covered by a grant');
          },
        );
        await popup.getByTestId('deposit-tx').getByText('Withdrawing 2.5 USDC').waitFor();
        // A new popup knows nothing of it: the background remembers the transaction and the panel follows it again.
        await popup.reload();
        await popup.getByRole('tab', { name: 'Order book' }).click();
        await popup.getByTestId('deposit-tx').getByText('Withdrawing 2.5 USDC').waitFor({ timeout: 10_000 });
        await popup.getByTestId('deposit-tx').locator('[role="progressbar"][aria-valuenow="1"]').waitFor();
        await h.screenshot(popup, '65-deposit-withdraw-reopened');
      } finally {
        h.sandbox.ctx.config.relayerMineMs = mineMs;
      }
      await mined();
      const recorded = (await (await fetch(`${h.sandbox.url}/admin/withdrawals`)).json()) as {
        bridge: { address: string; amount: string; toChainId: number; recipient: string }[];
      };
      expect(recorded.bridge).toEqual([
        expect.objectContaining({ address: wallet.toLowerCase(), amount: '2500000', toChainId: 1, recipient }),
      ]);
      expect(before - h.sandbox.ctx.clob.balanceOf(wallet.toLowerCase())).toBe(2_500_000n);
      await h.screenshot(popup, '63-deposit-withdrawn');
    },
  );

  it(
    'Settings shows the relayer and chain RPC the wallet used, and saves an edited ' +
      'RPC (a loopback one: an https host would first ask the browser for its permission)',
    async () => {
      await popup.getByRole('tab', { name: 'Settings' }).click();
      expect(await popup.locator('input[name="relayerUrl"]').inputValue()).toBe(`${h.sandbox.url}/relayer`);
      const rpc = popup.locator('input[name="rpcUrl"]');
      expect(await rpc.inputValue()).toBe(`${h.sandbox.url}/rpc`);
      await rpc.fill('http://localhost:8545');
      await h.screenshot(popup, '64-deposit-settings');
      await popup.getByRole('button', { name: 'Save', exact: true }).click();
      // A venue setting's save asks the browser for the host and ends what was allowed before it (windows, grants'
      // requests) first: allow it time under load.
      await expect
        .poll(
          async () =>
            ((await messenger(popup)('settings.get')).result as { settings?: { rpcUrl?: string } }).settings?.rpcUrl,
          { timeout: 30_000 },
        )
        .toBe('http://localhost:8545');
    },
  );
});
