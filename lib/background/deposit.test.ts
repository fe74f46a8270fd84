/**
 * Deposit wallets through the real background (extension side) on the fake browser against
 * the in-process sandbox: a new account derives its deposit wallet through the RPC setting, creates it
 * through the relayer, approves the setup batch in the approval window, trades type 3 (refused before
 * the wallet is deployed), and redeems after the market resolves; a page's `clob_postOrders` signs type 3
 * (approved in the window, and under a standing grant); an existing type-0 account is never switched unasked. And as
 * the attacker: a batch that cannot be decoded or approves a stranger never reaches a window; a withdrawal is flagged,
 * never grantable, and nothing is sent when the person rejects it; an unreachable RPC shows no address.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { encodeFunctionData, parseAbi, type Address } from 'viem';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { uupsDepositWallet } from '../relayer/wallet';
import { venueContracts } from '../relayer/contracts';
import { startBackground } from './index';
import {
  BOUNDS,
  browser,
  callAs,
  KDF,
  pageSender,
  waitPending,
  withPages,
  type PagedBackground,
} from '../../test/kits/background';

type Reply = { ok: boolean; result?: unknown; error?: { name: string; shortMessage: string; code?: number } };
const CHAIN = 80002;
const c = venueContracts(CHAIN);
let h: Harness;
let n = 0;
const sent: { url: string; method: string }[] = [];

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  fakeBrowser.reset();
  sent.length = 0;
});

const call = async (bg: PagedBackground, type: string, payload: unknown = {}) =>
  (await callAs(bg, type, payload)) as Reply;
const ok = async <T = Record<string, unknown>>(
  bg: PagedBackground,
  type: string,
  payload: unknown = {},
): Promise<T> => {
  const r = await call(bg, type, payload);
  if (!r.ok) throw new Error(`${type}: ${r.error?.name} ${r.error?.shortMessage}`);
  return r.result as T;
};
/** A market not resolved by an earlier test (the first test resolves the first market). */
const openMarket = () =>
  h.ctx.clob.markets.find((m) => !m.negRisk && !h.ctx.relayerChain.resolutions.has(m.conditionId.toLowerCase()))!;
/** Lets the sandbox relayer mine what was submitted. */
const mine = () => {
  h.clock.advance(h.ctx.config.relayerMineMs);
  h.ctx.relayerChain.settle(h.clock.now, h.ctx.config.relayerMineMs);
};

/** A fresh install with a new owner key and the sandbox's URLs (RPC `rpcUrl`, default the sandbox's /rpc). */
async function newAccount(
  rpcUrl = `${h.url}/rpc`,
): Promise<{ bg: PagedBackground; owner: Address; restart: () => PagedBackground }> {
  const fetchFn: typeof fetch = async (input, init) => {
    sent.push({ url: String(input instanceof Request ? input.url : input), method: init?.method ?? 'GET' });
    return fetch(input, init);
  };
  const dbName = `deposit-${n++}`;
  const start = () =>
    withPages(startBackground({ browser, dbName, kdf: KDF, bounds: BOUNDS, fetchFn, now: () => h.clock.now }));
  const bg = start();
  await ok(bg, 'vault.create', { password: 'a good password' });
  await ok(bg, 'settings.set', {
    perpsUrl: h.perps,
    clobUrl: h.clobUrl,
    gammaUrl: `${h.url}/gamma`,
    dataUrl: `${h.url}/data`,
    relayerUrl: `${h.url}/relayer`,
    rpcUrl,
  });
  const { address } = await ok<{ address: Address }>(bg, 'vault.generateOwnerKey', {});
  return { bg, owner: address, restart: start };
}

/** Runs a batch: waits for its window, hands the view to `decide`, resolves the procedure's reply. */
async function batch(
  bg: PagedBackground,
  owner: Address,
  b: unknown,
  decide: (view: {
    id: string;
    digest: string;
    kind: string;
    lines: string[];
    flags: string[];
    grantable?: boolean;
  }) => void,
) {
  const reply = call(bg, 'clob.walletBatch', { account: owner, batch: b });
  const [view] = await waitPending(bg);
  if (!view) return reply;
  decide(view);
  return reply;
}

async function deployed(bg: PagedBackground, owner: Address): Promise<string> {
  const { wallet } = await ok<{ wallet: string; deployed: boolean }>(bg, 'clob.depositWallet.derive', {
    account: owner,
  });
  const created = await ok<{ transaction: { transactionID: string } }>(bg, 'clob.depositWallet.create', {
    account: owner,
  });
  mine();
  const status = await ok<{ wallet: { deployed: boolean }; transaction: { state: string } }>(
    bg,
    'clob.depositWallet.status',
    { account: owner, transactionID: created.transaction.transactionID },
  );
  expect(status).toMatchObject({ wallet: { deployed: true }, transaction: { state: 'STATE_MINED' } });
  return wallet;
}

describe('deposit wallet: a new account from derive to redeem', () => {
  it(
    'derives, waits for deployment before type-3 orders, ' + 'creates, approves in plain words, trades and redeems',
    async () => {
      const { bg, owner } = await newAccount();
      const derived = await ok<{ wallet: string; kind: string; deployed: boolean }>(bg, 'clob.depositWallet.derive', {
        account: owner,
      });
      expect(derived).toEqual({ wallet: uupsDepositWallet(owner, CHAIN), kind: 'uups', deployed: false });
      expect(sent.some((s) => s.url.endsWith('/rpc')) && sent.some((s) => s.url.includes('/relayer/deployed'))).toBe(
        true,
      );

      const m = h.ctx.clob.markets[0]!;
      const order = { tokenId: m.tokenIds[0], side: 'BUY', price: '0.99', size: '10', orderType: 'GTC' };
      const early = await call(bg, 'clob.postOrders', { account: owner, orders: [order] });
      expect(early.error).toMatchObject({ name: 'Relayer.DepositWalletNotDeployedError' });
      expect(sent.filter((s) => s.method === 'POST' && /\/clob\/orders?$/.test(s.url))).toHaveLength(0);

      const created = await ok<{ deployed: boolean; transaction: { transactionID: string; state: string } }>(
        bg,
        'clob.depositWallet.create',
        { account: owner },
      );
      expect(created).toMatchObject({ deployed: false, transaction: { state: 'STATE_NEW' } });
      const pending = await ok(bg, 'clob.depositWallet.status', {
        account: owner,
        transactionID: created.transaction.transactionID,
      });
      expect(pending).toMatchObject({ wallet: { deployed: false }, transaction: { state: 'STATE_NEW' } });
      mine();
      expect(
        await ok(bg, 'clob.depositWallet.status', { account: owner, transactionID: created.transaction.transactionID }),
      ).toMatchObject({ wallet: { deployed: true, approvals: 'missing' }, transaction: { state: 'STATE_MINED' } });

      const setup = await batch(bg, owner, { kind: 'setup' }, (view) => {
        expect(view).toMatchObject({ kind: 'relayer', grantable: false, flags: [] });
        expect(view.lines[0]).toBe(
          `Allow the exchange (V2) (${c.exchangeV2}) to spend an ` +
            `unlimited amount of collateral (USDC) of the deposit wallet`,
        );
        expect(view.lines).toHaveLength(5);
        bg.registry.decide(view.id, { approve: true, digest: view.digest });
      });
      expect(setup).toMatchObject({ ok: true, result: { state: 'STATE_NEW' } });
      // Submitted, not mined: the venue does not see the approvals yet, so the popup keeps the button.
      expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).toMatchObject({
        wallet: { approvals: 'missing' },
      });
      mine();
      expect(h.ctx.relayerChain.isOperator(derived.wallet, 'negRiskExchangeV2')).toBe(true);
      // Mined: the venue's balance-allowance (signature_type=3) lists the allowances, and status says so.
      const allowanceReads = sent.filter((x) =>
        x.url.includes('/balance-allowance?asset_type=COLLATERAL&signature_type=3'),
      ).length;
      expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).toMatchObject({
        wallet: { approvals: 'approved' },
      });
      expect(
        sent.filter((x) => x.url.includes('/balance-allowance?asset_type=COLLATERAL&signature_type=3')).length,
      ).toBe(allowanceReads + 1);

      const posted = await ok<{ ok: boolean }[]>(bg, 'clob.postOrders', { account: owner, orders: [order] });
      expect(posted[0]).toMatchObject({ ok: true });
      const shares = h.ctx.clob.tokenBalance(derived.wallet.toLowerCase(), m.tokenIds[0]!);
      expect(shares).toBeGreaterThan(0n);
      // Holding outcome tokens, Approved also needs their approval (setApprovalForAll), read from the venue.
      expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).toMatchObject({
        wallet: { approvals: 'approved' },
      });
      expect(
        sent.some(
          (x) =>
            x.url.includes('/balance-allowance?asset_type=CONDITIONAL&token_id=') &&
            x.url.endsWith('&signature_type=3'),
        ),
      ).toBe(true);
      const operators = h.ctx.relayerChain.operators.get(derived.wallet.toLowerCase())!;
      operators.delete('negRiskExchangeV2');
      expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).toMatchObject({
        wallet: { approvals: 'missing' },
      });
      operators.add('negRiskExchangeV2');
      // While panic holds the signing gate closed the status signs no read: the approvals are unknown.
      const readsBefore = sent.filter((x) => x.url.includes('/balance-allowance?')).length;
      void bg.service().halt('panic in the test', 0);
      expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).toMatchObject({
        wallet: { approvals: 'unknown' },
      });
      expect(sent.filter((x) => x.url.includes('/balance-allowance?')).length).toBe(readsBefore);
      bg.service().resume();

      expect(
        (
          await fetch(`${h.url}/admin/resolve`, {
            method: 'POST',
            body: JSON.stringify({ condition_id: m.conditionId, winner: 0 }),
          })
        ).status,
      ).toBe(200);
      const listed = await ok<{ redeemable: { conditionId: string; size: string }[] }>(
        bg,
        'clob.depositWallet.status',
        {
          account: owner,
        },
      );
      expect(listed.redeemable.map((r) => r.conditionId.toLowerCase())).toContain(m.conditionId.toLowerCase());
      const before = h.ctx.clob.balanceOf(derived.wallet.toLowerCase());
      const redeem = await batch(bg, owner, { kind: 'redeem', conditionId: m.conditionId }, (view) => {
        expect(view.lines[0]).toMatch(/^Redeem the resolved positions of market .* into the deposit wallet$/);
        bg.registry.decide(view.id, { approve: true, digest: view.digest });
      });
      expect(redeem.ok).toBe(true);
      mine();
      await ok(bg, 'clob.depositWallet.status', { account: owner });
      expect(h.ctx.clob.balanceOf(derived.wallet.toLowerCase()) - before).toBe(shares);
    },
  );
});

describe("deposit wallet: a page's clob_postOrders for a type-3 account", () => {
  type Posted = { order: { signatureType: number; maker: string; signer: string; signature: string } };
  /** The orders the sandbox received on POST /clob/order(s) since `from` (request log index). */
  const postedSince = (from: number): Posted[] =>
    h.ctx.requestLog
      .slice(from)
      .filter((r) => r.method === 'POST' && /^\/clob\/orders?$/.test(r.path))
      .flatMap((r) => {
        const body = JSON.parse(r.body ?? '{}') as Posted | Posted[];
        return Array.isArray(body) ? body : [body];
      });

  it(
    'signs a type-3 order (maker = signer = the wallet, 317-byte ERC-7739 signature) ' +
      'the sandbox accepts: approved in the window, then under a standing grant without one',
    async () => {
      const { bg, owner } = await newAccount();
      const wallet = await deployed(bg, owner);
      await batch(bg, owner, { kind: 'setup' }, (view) =>
        bg.registry.decide(view.id, { approve: true, digest: view.digest }),
      );
      mine();
      const site = 'https://trade.example';
      const tab = bg.page(pageSender(site, 7));
      const connected = tab.request('eth_requestAccounts');
      const [cv] = await waitPending(bg);
      bg.registry.decide(cv!.id, { approve: true, digest: cv!.digest });
      expect(await connected).toEqual([owner]);

      const token = openMarket().tokenIds[0]!;
      const order = { tokenId: token, side: 'BUY', price: '0.50', size: '10', orderType: 'GTC' };
      const expectType3 = (got: Posted[]) => {
        expect(got).toHaveLength(1);
        expect(got[0]!.order.signatureType).toBe(3);
        expect(got[0]!.order.maker.toLowerCase()).toBe(wallet.toLowerCase());
        expect(got[0]!.order.signer.toLowerCase()).toBe(wallet.toLowerCase());
        expect(got[0]!.order.signature).toMatch(/^0x[0-9a-f]{634}$/i);
      };

      let from = h.ctx.requestLog.length;
      const asked = tab.request('clob_postOrders', { orders: [order] });
      const [view] = await waitPending(bg);
      expect(view).toMatchObject({ origin: site, kind: 'clob' });
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      expect(await asked).toMatchObject([{ success: true, orderID: expect.stringMatching(/^0x/) }]);
      expectType3(postedSince(from));

      await bg.grants().create({
        origin: site,
        account: owner,
        limits: {
          venue: 'clob',
          markets: [token],
          allow: { order: true },
          maxNotional: '100',
          dailyNotional: '1000',
          priceBandPct: '20',
        } as never,
        durationMs: 3_600_000,
      });
      from = h.ctx.requestLog.length;
      const granted = await tab.request('clob_postOrders', { orders: [{ ...order, price: '0.49' }] });
      expect(bg.registry.size).toBe(0);
      expect(granted).toMatchObject([{ success: true }]);
      expectType3(postedSince(from));
    },
  );
});

describe('deposit wallet: an existing account (API credentials of type 0) is not switched without being asked', () => {
  it(
    'refuses to replace type-0 credentials unless the request ' +
      'confirms the switch; nothing is read or stored before',
    async () => {
      const { bg, owner } = await newAccount();
      await ok(bg, 'clob.createOrDerive', { account: owner });
      const typeOf = async () =>
        (await ok<{ address: string; clobSignatureType?: number }[]>(bg, 'vault.accounts')).find(
          (a) => a.address === owner,
        )?.clobSignatureType;
      expect(await typeOf()).toBe(0);
      sent.length = 0;
      const refused = await call(bg, 'clob.depositWallet.derive', { account: owner });
      expect(refused.error).toMatchObject({ name: 'Relayer.ReplacesCredentialsError' });
      expect(refused.error?.shortMessage).toMatch(
        /^Invalid replaceCredentials: .*signature type 0.*switch its orders to the wallet \(type 3\)/,
      );
      expect(sent).toEqual([]);
      expect(await typeOf()).toBe(0);
      expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).toMatchObject({ wallet: null });
      // A type-0 order still goes out as type 0.
      const m = openMarket();
      const order = { tokenId: m.tokenIds[0], side: 'BUY', price: '0.01', size: '10', orderType: 'GTC' };
      await ok(bg, 'clob.postOrders', { account: owner, orders: [order] });
      const last = h.ctx.requestLog.filter((r) => r.method === 'POST' && r.path === '/clob/order').at(-1);
      expect(JSON.parse(last?.body ?? '{}')).toMatchObject({ order: { signatureType: 0 } });

      const switched = await ok<{ wallet: string }>(bg, 'clob.depositWallet.derive', {
        account: owner,
        replaceCredentials: true,
      });
      expect(switched.wallet).toBe(uupsDepositWallet(owner, CHAIN));
      expect(await typeOf()).toBe(3);
      const audit = await ok<{ kind: string; summary: string }[]>(bg, 'audit.list', {
        kind: 'clob.credentials.switch',
      });
      expect(audit[0]?.summary).toContain(`from signature type 0 to the deposit wallet ${switched.wallet}`);
    },
  );

  it('re-deriving the API key of a deposit-wallet account keeps it type 3 with its wallet as funder', async () => {
    const { bg, owner } = await newAccount();
    const wallet = await deployed(bg, owner);
    const before = (await ok<{ address: string; clobSignatureType?: number }[]>(bg, 'vault.accounts')).find(
      (a) => a.address === owner,
    );
    expect(before?.clobSignatureType).toBe(3);
    await ok(bg, 'clob.createOrDerive', { account: owner });
    const after = (await ok<{ address: string; clobSignatureType?: number }[]>(bg, 'vault.accounts')).find(
      (a) => a.address === owner,
    );
    expect(after?.clobSignatureType).toBe(3);
    expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).toMatchObject({
      wallet: { wallet, deployed: true },
    });
  });
});

describe('deposit wallet: relayer progress outlives the popup', () => {
  it(
    'remembers a submitted transaction in the background: a status without its id (a ' +
      'reopened popup, a restarted worker) shows it until it lands, once landed, then no more',
    async () => {
      const { bg, owner, restart } = await newAccount();
      await ok(bg, 'clob.depositWallet.derive', { account: owner });
      const created = await ok<{ transaction: { transactionID: string } }>(bg, 'clob.depositWallet.create', {
        account: owner,
      });
      const id = created.transaction.transactionID;
      expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).toMatchObject({
        pending: [{ label: 'Creating the deposit wallet', transactionID: id, state: 'STATE_NEW' }],
      });
      // The worker restarts (same database): the new background still knows the transaction.
      const again = restart();
      h.clock.advance(h.ctx.config.relayerMineMs / 2);
      expect(await ok(again, 'clob.depositWallet.status', { account: owner })).toMatchObject({
        pending: [{ transactionID: id, state: 'STATE_EXECUTED' }],
      });
      mine();
      expect(await ok(again, 'clob.depositWallet.status', { account: owner })).toMatchObject({
        wallet: { deployed: true },
        pending: [{ label: 'Creating the deposit wallet', transactionID: id, state: 'STATE_MINED' }],
      });
      expect(await ok(again, 'clob.depositWallet.status', { account: owner })).not.toHaveProperty('pending');
    },
  );

  it(
    'remembers a batch with its words and reports a ' + 'failure with the reason once; nothing is resubmitted',
    async () => {
      const { bg, owner } = await newAccount();
      const wallet = (await deployed(bg, owner)).toLowerCase();
      const tooMuch = (h.ctx.clob.balanceOf(wallet) + 1n).toString();
      const stranger: Address = '0x6666666666666666666666666666666666666666';
      await batch(
        bg,
        owner,
        { kind: 'withdraw', amount: tooMuch, toChainId: 1, toTokenAddress: stranger, recipient: stranger },
        (view) => bg.registry.decide(view.id, { approve: true, digest: view.digest }),
      );
      const submits = sent.filter((x) => x.url.endsWith('/relayer/submit')).length;
      expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).toMatchObject({
        pending: [{ label: `Withdrawing ${tooMuch} USDC`, state: 'STATE_NEW' }],
      });
      mine();
      expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).toMatchObject({
        pending: [{ state: 'STATE_FAILED', error: 'ERC20: transfer amount exceeds balance' }],
      });
      expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).not.toHaveProperty('pending');
      expect(sent.filter((x) => x.url.endsWith('/relayer/submit')).length).toBe(submits);
    },
  );
});

describe('deposit wallet: as the attacker, and when things fail', () => {
  const ABI = parseAbi([
    'function approve(address spender, uint256 amount)',
    'function transfer(address to, uint256 amount)',
  ]);
  const stranger: Address = '0x6666666666666666666666666666666666666666';

  it(
    'refuses an undecodable batch and a foreign spender ' + 'before any window; nothing is sent to the relayer',
    async () => {
      const { bg, owner } = await newAccount();
      await deployed(bg, owner);
      const submits = () => sent.filter((s) => s.url.endsWith('/relayer/submit')).length;
      const before = submits();
      const foreign = await call(bg, 'clob.walletBatch', {
        account: owner,
        batch: {
          kind: 'calls',
          calls: [
            {
              target: c.collateral,
              value: '0',
              data: encodeFunctionData({ abi: ABI, functionName: 'approve', args: [stranger, 1n] }),
            },
          ],
        },
      });
      expect(foreign.error).toMatchObject({ name: 'ForbiddenSpenderError' });
      const blind = await call(bg, 'clob.walletBatch', {
        account: owner,
        batch: { kind: 'calls', calls: [{ target: c.collateral, value: '0', data: '0xdeadbeef' }] },
      });
      expect(blind.error?.shortMessage).toMatch(/cannot be shown in plain words/);
      expect(bg.registry.size).toBe(0);
      expect(submits()).toBe(before);
    },
  );

  it('flags a withdrawal, never offers a grant for it, and sends nothing when the person rejects it', async () => {
    const { bg, owner } = await newAccount();
    await deployed(bg, owner);
    const txs = h.ctx.relayerChain.txs.length;
    const data = encodeFunctionData({ abi: ABI, functionName: 'transfer', args: [stranger, 5_000_000n] });
    const reply = await batch(
      bg,
      owner,
      { kind: 'calls', calls: [{ target: c.collateral, value: '0', data }] },
      (view) => {
        expect(view.grantable).toBe(false);
        expect(view.flags[0]).toMatch(/withdrawal/);
        expect(view.lines[0]).toBe(`Withdraw 5 collateral (USDC) to ${stranger}`);
        bg.registry.decide(view.id, { approve: false });
      },
    );
    expect(reply.error).toMatchObject({ code: 4001 });
    expect(h.ctx.relayerChain.txs.length).toBe(txs);
  });

  it('surfaces a relayer refusal (INVALID: expired nonce) with its reason and submits once', async () => {
    const { bg, owner } = await newAccount();
    const wallet = await deployed(bg, owner);
    // The person approves while another batch moves the nonce: the relayer refuses the stale one.
    const reply = call(bg, 'clob.walletBatch', { account: owner, batch: { kind: 'setup' } });
    const [view] = await waitPending(bg);
    h.ctx.relayerChain.nonces.set(owner.toLowerCase(), 5n);
    const submits = sent.filter((s) => s.url.endsWith('/relayer/submit')).length;
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    const r = await reply;
    expect(r.error?.shortMessage).toMatch(/refused by the relayer: .*nonce/);
    expect(sent.filter((s) => s.url.endsWith('/relayer/submit')).length).toBe(submits + 1);
    expect(h.ctx.relayerChain.isOperator(wallet, 'exchangeV2')).toBe(false);
  });

  it(
    'a venue setting changed while a batch window is open: ' +
      'approving it afterwards signs and submits nothing (4900)',
    async () => {
      const { bg, owner } = await newAccount();
      await deployed(bg, owner);
      const reply = call(bg, 'clob.walletBatch', { account: owner, batch: { kind: 'setup' } });
      const [view] = await waitPending(bg);
      const submits = sent.filter((s) => s.url.endsWith('/relayer/submit')).length;
      expect((await call(bg, 'settings.set', { bridgeUrl: `${h.url}/bridge-moved` })).ok).toBe(true);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const r = await reply;
      expect(r.error?.code).toBe(4900);
      expect(sent.filter((s) => s.url.endsWith('/relayer/submit')).length).toBe(submits);
    },
  );

  it(
    'a batch asked for while the panic switch holds the ' + 'signing gate: approving it signs and submits nothing',
    async () => {
      const { bg, owner } = await newAccount();
      await deployed(bg, owner);
      const submits = sent.filter((s) => s.url.endsWith('/relayer/submit')).length;
      void bg.service().halt('the panic switch is running'); // panic's first step; its cancels and lock follow
      const reply = call(bg, 'clob.walletBatch', { account: owner, batch: { kind: 'setup' } });
      const [view] = await waitPending(bg);
      if (view) bg.registry.decide(view.id, { approve: true, digest: view.digest });
      expect((await reply).error?.name).toBe('Signer.HaltedError');
      expect(sent.filter((s) => s.url.endsWith('/relayer/submit')).length).toBe(submits);
    },
  );

  it(
    'withdraws through the bridge with the deposit wallet as the ' +
      'source: flagged, never grantable, recorded by the bridge when mined',
    async () => {
      const { bg, owner } = await newAccount();
      const wallet = (await deployed(bg, owner)).toLowerCase();
      const token: Address = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
      const before = h.ctx.clob.balanceOf(wallet);
      const seen = h.ctx.bridgeWithdrawals.length;
      const reply = await batch(
        bg,
        owner,
        { kind: 'withdraw', amount: '5.5', toChainId: 1, toTokenAddress: token, recipient: stranger },
        (view) => {
          expect(view.grantable).toBe(false);
          expect(view.flags[0]).toMatch(/withdrawal/);
          expect(view.flags[1]).toMatch(/bridge chose the deposit address/);
          expect(view.lines[0]).toMatch(/^Withdraw 5\.5 collateral \(USDC\) to 0x[0-9a-fA-F]{40}$/);
          expect(view.lines[1]).toContain(`it sends the USDC to ${stranger} on chain 1, as token ${token}`);
          bg.registry.decide(view.id, { approve: true, digest: view.digest });
        },
      );
      expect(reply).toMatchObject({ ok: true, result: { state: 'STATE_NEW' } });
      expect(sent.filter((x) => x.method === 'POST' && x.url.endsWith('/bridge/withdraw'))).toHaveLength(1);
      expect(h.ctx.bridgeWithdrawals.length).toBe(seen);
      mine();
      await ok(bg, 'clob.depositWallet.status', { account: owner });
      expect(h.ctx.bridgeWithdrawals.slice(seen)).toEqual([
        expect.objectContaining({
          address: wallet,
          amount: '5500000',
          toChainId: 1,
          recipient: stranger.toLowerCase(),
        }),
      ]);
      expect(before - h.ctx.clob.balanceOf(wallet)).toBe(5_500_000n);
    },
  );

  it('shows a withdrawal that fails when mined with its reason, records nothing and submits it once', async () => {
    const { bg, owner } = await newAccount();
    const wallet = (await deployed(bg, owner)).toLowerCase();
    const seen = h.ctx.bridgeWithdrawals.length;
    const tooMuch = (h.ctx.clob.balanceOf(wallet) + 1n).toString();
    const reply = await batch(
      bg,
      owner,
      { kind: 'withdraw', amount: `${tooMuch}`, toChainId: 1, toTokenAddress: stranger, recipient: stranger },
      (view) => bg.registry.decide(view.id, { approve: true, digest: view.digest }),
    );
    const { transactionID } = (reply.result ?? {}) as { transactionID: string };
    mine();
    const status = await ok(bg, 'clob.depositWallet.status', { account: owner, transactionID });
    expect(status).toMatchObject({
      transaction: { state: 'STATE_FAILED', error: 'ERC20: transfer amount exceeds balance' },
    });
    await ok(bg, 'clob.depositWallet.status', { account: owner, transactionID });
    expect(sent.filter((x) => x.url.endsWith('/relayer/submit')).length).toBe(2);
    expect(h.ctx.bridgeWithdrawals.length).toBe(seen);
  });

  it('refuses a withdraw amount with more than 6 decimals before asking the bridge or opening a window', async () => {
    const { bg, owner } = await newAccount();
    await deployed(bg, owner);
    const r = await call(bg, 'clob.walletBatch', {
      account: owner,
      batch: { kind: 'withdraw', amount: '1.0000001', toChainId: 1, toTokenAddress: stranger, recipient: stranger },
    });
    expect(r.error).toMatchObject({ name: 'InvalidFieldError' });
    expect(sent.filter((x) => x.url.endsWith('/bridge/withdraw'))).toHaveLength(0);
    expect(bg.registry.size).toBe(0);
  });

  it('shows no address when the chain RPC is unreachable', async () => {
    const { bg, owner } = await newAccount('http://127.0.0.1:9/rpc');
    const r = await call(bg, 'clob.depositWallet.derive', { account: owner });
    expect(r.error).toMatchObject({ name: 'Relayer.ChainRpcUnavailableError', code: -32002 });
    expect(r.error?.shortMessage).not.toMatch(/0x[0-9a-fA-F]{40}/);
    expect(await ok(bg, 'clob.depositWallet.status', { account: owner })).toEqual({ wallet: null, redeemable: [] });
  });
});
