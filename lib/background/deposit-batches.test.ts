/**
 * Deposit-wallet batches sign only what their window shows, and the relayer's word alone changes nothing:
 * a call's calldata must be exactly the re-encoding of what it decodes to; calls a deposit wallet does not
 * need are refused and withdrawals flagged; a transaction's status is only the row with the id asked for;
 * a deposit wallet is deployed only when the relayer's `/deployed` and the chain's `eth_getCode` agree,
 * for the address shown, for batches and for type-3 orders; pages reach no deposit procedure and the
 * builder secret appears nowhere. Setup as deposit.test.ts: the real background on the fake browser
 * against the in-process sandbox, with a fetch that can rewrite relayer answers.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { encodeFunctionData, maxUint256, parseAbi, zeroHash, type Address, type Hex } from 'viem';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { venueContracts } from '../relayer/contracts';
import { describeWalletCalls } from '../relayer/decode';
import { startBackground } from './index';
import { BOUNDS, browser, callAs, KDF, waitPending, withPages, type PagedBackground } from '../../test/kits/background';

type Reply = { ok: boolean; result?: unknown; error?: { name: string; shortMessage: string; code?: number } };
const CHAIN = 80002;
const c = venueContracts(CHAIN);
const stranger: Address = '0x6666666666666666666666666666666666666666';
const lookalike: Address = '0xe111180000d2663c0091e4f400237545b87b996c';
const ABI = parseAbi([
  'function approve(address spender, uint256 amount)',
  'function increaseAllowance(address spender, uint256 amount)',
  'function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)',
  'function transfer(address to, uint256 amount)',
  'function transferFrom(address from, address to, uint256 amount)',
  'function setApprovalForAll(address operator, bool approved)',
  'function safeTransferFrom(address from, address to, uint256 id, uint256 amount, bytes data)',
  'function safeBatchTransferFrom(address from, address to, uint256[] ids, uint256[] amounts, bytes data)',
  'function redeemPositions(address collateral, bytes32 parentCollectionId, bytes32 conditionId, uint256[] indexSets)',
  'function multicall(bytes[] data)',
  'function execute(address target, uint256 value, bytes data, uint8 operation)',
]);
const enc = (functionName: string, args: readonly unknown[]) =>
  encodeFunctionData({ abi: ABI, functionName, args } as never) as Hex;

let h: Harness;
let n = 0;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  fakeBrowser.reset();
});

type Wire = {
  sent: { url: string; method: string; body: string; headers: Record<string, string> }[];
  answers: { url: string; text: string }[];
  rewrite?: (url: string, method: string) => unknown;
};
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
const mine = () => {
  h.clock.advance(h.ctx.config.relayerMineMs);
  h.ctx.relayerChain.settle(h.clock.now, h.ctx.config.relayerMineMs);
};

async function newAccount(): Promise<{ bg: PagedBackground; owner: Address; wire: Wire }> {
  const wire: Wire = { sent: [], answers: [] };
  const fetchFn: typeof fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const method = init?.method ?? 'GET';
    wire.sent.push({
      url,
      method,
      body: typeof init?.body === 'string' ? init.body : '',
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
    });
    const fake = wire.rewrite?.(url, method);
    if (fake !== undefined)
      return new Response(JSON.stringify(fake), { status: 200, headers: { 'content-type': 'application/json' } });
    const res = await fetch(input, init);
    const text = await res.clone().text();
    wire.answers.push({ url, text });
    return res;
  };
  const bg = withPages(
    startBackground({
      browser,
      dbName: `deposit-batches-${n++}`,
      kdf: KDF,
      bounds: BOUNDS,
      fetchFn,
      now: () => h.clock.now,
    }),
  );
  await ok(bg, 'vault.create', { password: 'a good password' });
  await ok(bg, 'settings.set', {
    perpsUrl: h.perps,
    clobUrl: h.clobUrl,
    gammaUrl: `${h.url}/gamma`,
    dataUrl: `${h.url}/data`,
    relayerUrl: `${h.url}/relayer`,
    rpcUrl: `${h.url}/rpc`,
  });
  const { address } = await ok<{ address: Address }>(bg, 'vault.generateOwnerKey', {});
  return { bg, owner: address, wire };
}
async function deployed(bg: PagedBackground, owner: Address): Promise<Address> {
  const { wallet } = await ok<{ wallet: Address }>(bg, 'clob.depositWallet.derive', { account: owner });
  const created = await ok<{ transaction: { transactionID: string } }>(bg, 'clob.depositWallet.create', {
    account: owner,
  });
  mine();
  await ok(bg, 'clob.depositWallet.status', { account: owner, transactionID: created.transaction.transactionID });
  return wallet;
}
type View = {
  id: string;
  digest: string;
  kind: string;
  lines: string[];
  flags: string[];
  grantable?: boolean;
  title?: string;
};
async function batch(bg: PagedBackground, owner: Address, b: unknown, decide: (view: View) => void) {
  const reply = call(bg, 'clob.walletBatch', { account: owner, batch: b });
  const [view] = (await waitPending(bg)) as unknown as View[];
  if (view) decide(view);
  return reply;
}
const submits = (w: Wire) => w.sent.filter((s) => s.url.endsWith('/relayer/submit'));

// ---------------------------------------------------------------------------------------------------
describe('decoder: calls that must be refused or flagged (describeWalletCalls, as clob.walletBatch runs it)', () => {
  const W: Address = '0x1111111111111111111111111111111111111111';
  const d = (calls: { target: Address; value?: string; data: Hex }[]) => () =>
    describeWalletCalls(
      CHAIN,
      W,
      calls.map((x) => ({ value: '0', ...x })),
    );

  it('calldata with trailing bytes after a known selector is refused (not signed as a plain approve)', () => {
    const data = `${enc('approve', [c.exchangeV2, 1n])}${'de'.repeat(64)}` as Hex;
    expect(d([{ target: c.collateral, data }])).toThrow(/cannot be shown in plain words/);
  });
  it('approve to the venue exchange on a foreign token is refused', () => {
    expect(d([{ target: stranger, data: enc('approve', [c.exchangeV2, maxUint256]) }])).toThrow(
      /not the venue's collateral/,
    );
    expect(d([{ target: c.conditionalTokens, data: enc('approve', [c.exchangeV2, maxUint256]) }])).toThrow(
      /collateral token only/,
    );
  });
  it(
    'setApprovalForAll on a lookalike contract / to a lookalike ' +
      'operator is refused; mixed case of the real one is accepted',
    () => {
      expect(d([{ target: lookalike, data: enc('setApprovalForAll', [c.exchangeV2, true]) }])).toThrow(
        /cannot be shown/,
      );
      expect(d([{ target: c.conditionalTokens, data: enc('setApprovalForAll', [lookalike, true]) }])).toThrow(
        /not one of the venue's exchanges/,
      );
      expect(d([{ target: c.collateral, data: enc('setApprovalForAll', [c.exchangeV2, true]) }])).toThrow(
        /outcome-token contract only/,
      );
      const lower = c.conditionalTokens.toLowerCase() as Address;
      expect(
        d([{ target: lower, data: enc('setApprovalForAll', [c.exchangeV2.toLowerCase(), true]) }])().calls[0]!.kind,
      ).toBe('setApprovalForAll');
    },
  );
  it('increaseAllowance, permit, multicall and a delegatecall execute wrapper are refused', () => {
    expect(d([{ target: c.collateral, data: enc('increaseAllowance', [stranger, maxUint256]) }])).toThrow(
      /not one a deposit wallet needs/,
    );
    expect(
      d([{ target: c.collateral, data: enc('permit', [W, stranger, maxUint256, 1n, 27, zeroHash, zeroHash]) }]),
    ).toThrow(/not one a deposit wallet needs/);
    expect(d([{ target: c.collateral, data: enc('multicall', [[enc('transfer', [stranger, 1n])]]) }])).toThrow(
      /not one a deposit wallet needs/,
    );
    expect(d([{ target: c.conditionalTokens, data: enc('execute', [stranger, 0n, '0x', 1]) }])).toThrow(
      /not one a deposit wallet needs/,
    );
  });
  it('transferFrom, safeTransferFrom, safeBatchTransferFrom are withdrawals (also to the wallet itself)', () => {
    for (const [target, data] of [
      [c.collateral, enc('transferFrom', [W, stranger, 5n])],
      [c.conditionalTokens, enc('safeTransferFrom', [W, stranger, 1n, 5n, '0x'])],
      [c.conditionalTokens, enc('safeBatchTransferFrom', [W, stranger, [1n, 2n], [5n, 6n], '0x'])],
      [c.conditionalTokens, enc('safeTransferFrom', [W, W, 1n, 5n, '0xdead'])],
    ] as const)
      expect(d([{ target, data }])().withdrawal).toBe(true);
    // A transfer mixed among approvals still flags the whole batch.
    expect(
      d([
        { target: c.collateral, data: enc('approve', [c.exchangeV2, 1n]) },
        { target: c.collateral, data: enc('transfer', [stranger, 1n]) },
      ])().withdrawal,
    ).toBe(true);
  });
  it('a redeem whose collateral differs or that is not at the top level is refused', () => {
    expect(
      d([
        {
          target: c.conditionalTokens,
          data: enc('redeemPositions', [stranger, zeroHash, `0x${'ab'.repeat(32)}`, [1n, 2n]]),
        },
      ]),
    ).toThrow(/not of the venue collateral/);
    expect(
      d([
        {
          target: c.conditionalTokens,
          data: enc('redeemPositions', [c.collateral, `0x${'01'.repeat(32)}`, `0x${'ab'.repeat(32)}`, [1n]]),
        },
      ]),
    ).toThrow(/not of the venue collateral/);
    expect(
      d([
        { target: c.collateral, data: enc('redeemPositions', [c.collateral, zeroHash, `0x${'ab'.repeat(32)}`, [1n]]) },
      ]),
    ).toThrow(/not of the venue collateral/);
  });
  it('a native value (also "00" / "01") is refused', () => {
    for (const value of ['1', '01', '00'])
      expect(d([{ target: c.collateral, value, data: enc('approve', [c.exchangeV2, 1n]) }])).toThrow(/cannot be shown/);
  });
});

// ---------------------------------------------------------------------------------------------------
describe(
  'deposit procedures sign the digest shown, trust no ' + 'relayer answer alone, reach no page and leak no secret',
  () => {
    it("the window's wallet and nonce are the signed ones; a different digest signs and sends nothing", async () => {
      const { bg, owner, wire } = await newAccount();
      const wallet = await deployed(bg, owner);
      const before = submits(wire).length;
      const rejected = await batch(bg, owner, { kind: 'setup' }, (view) => {
        expect(() => bg.registry.decide(view.id, { approve: true, digest: `0x${'00'.repeat(32)}` })).toThrow(
          /does not match/,
        );
      });
      expect(rejected.ok).toBe(false);
      expect(submits(wire).length).toBe(before);
      let shown: string[] = [];
      const r = await batch(bg, owner, { kind: 'setup' }, (view) => {
        shown = view.lines;
        bg.registry.decide(view.id, { approve: true, digest: view.digest });
      });
      expect(r.ok).toBe(true);
      const body = JSON.parse(submits(wire).at(-1)!.body) as {
        nonce: string;
        from: string;
        depositWalletParams: { depositWallet: string; calls: { data: string }[] };
      };
      expect(shown.at(-1)).toBe(`Deposit wallet ${wallet}, relayer nonce ${body.nonce}`);
      expect(body.depositWalletParams.depositWallet.toLowerCase()).toBe(wallet.toLowerCase());
      expect(body.depositWalletParams.calls).toHaveLength(4);
      expect(body.from.toLowerCase()).toBe(owner.toLowerCase());
    });

    it("a popup caller's crafted calls (trailing bytes hidden after approve) are not signed blind", async () => {
      // The bytes after the approve args would be signed but never shown: no window may open for it.
      const { bg, owner } = await newAccount();
      await deployed(bg, owner);
      const data = `${enc('approve', [c.exchangeV2, maxUint256])}${'ff'.repeat(32)}` as Hex;
      const reply = call(bg, 'clob.walletBatch', {
        account: owner,
        batch: { kind: 'calls', calls: [{ target: c.collateral, value: '0', data }] },
      });
      const pending = await waitPending(bg);
      for (const v of pending) bg.registry.decide(v.id, { approve: false });
      const r = await reply;
      expect(pending, 'a call with undecoded trailing bytes never reaches the approval window').toHaveLength(0);
      expect(r.error?.shortMessage).toMatch(/cannot be shown in plain words/);
    });

    it('a FAILED submit answer is shown with its reason and submitted once', async () => {
      const { bg, owner, wire } = await newAccount();
      await deployed(bg, owner);
      wire.rewrite = (url, method) =>
        method === 'POST' && url.endsWith('/relayer/submit')
          ? { transactionID: 'tx-x', state: 'STATE_FAILED', errorMsg: 'reverted: boom' }
          : undefined;
      const before = submits(wire).length;
      const r = await batch(bg, owner, { kind: 'setup' }, (view) =>
        bg.registry.decide(view.id, { approve: true, digest: view.digest }),
      );
      expect(r.error?.shortMessage).toMatch(/failed when mined: reverted: boom/);
      expect(submits(wire).length).toBe(before + 1);
    });

    it("status of transaction X answered with another transaction's row is not shown as X's state", async () => {
      const { bg, owner, wire } = await newAccount();
      await ok(bg, 'clob.depositWallet.derive', { account: owner });
      const created = await ok<{ transaction: { transactionID: string } }>(bg, 'clob.depositWallet.create', {
        account: owner,
      });
      const other = {
        transactionID: 'someone-elses-tx',
        transactionHash: `0x${'ab'.repeat(32)}`,
        from: stranger,
        to: c.depositWalletFactory,
        proxyAddress: stranger,
        nonce: '0',
        state: 'STATE_MINED',
        type: 'WALLET-CREATE',
        createdAt: '1',
        updatedAt: '2',
      };
      wire.rewrite = (url) => (url.includes('/relayer/transaction?') ? [other] : undefined);
      const r = await call(bg, 'clob.depositWallet.status', {
        account: owner,
        transactionID: created.transaction.transactionID,
      });
      // The rule: a relayer answer for another transaction must not be taken as this one's (it would show MINED for a
      // NEW creation).
      const shown = (r.result as { transaction?: { transactionID: string; state: string } } | undefined)?.transaction;
      expect(
        r.ok && shown?.transactionID !== created.transaction.transactionID,
        `the status shown for ${created.transaction.transactionID} ` +
          `is not another transaction's row (${JSON.stringify(shown)})`,
      ).toBe(false);
    });

    it('a page cannot reach the deposit procedures (by request or as a tab sender)', async () => {
      const { bg, owner, wire } = await newAccount();
      const tab = {
        id: fakeBrowser.runtime.id,
        url: 'https://evil.example/app',
        frameId: 0,
        tab: { id: 7, url: 'https://evil.example/app' },
      };
      const page = bg.page(tab as never);
      for (const m of [
        'clob.walletBatch',
        'clob.depositWallet.derive',
        'clob.depositWallet.create',
        'clob.depositWallet.status',
      ]) {
        await expect(page.request(m, [{ account: owner, batch: { kind: 'setup' } }])).rejects.toBeTruthy();
        const r = (await callAs(bg, m, { account: owner, batch: { kind: 'setup' } }, tab as never)) as Reply;
        expect(r.ok).toBe(false);
      }
      expect(bg.registry.size).toBe(0);
      expect(wire.sent.filter((s) => s.url.includes('/relayer/'))).toHaveLength(0);
    });

    it(
      'the builder secret is in no reply, audit entry, ' + 'export, or request body (headers only carry the HMAC)',
      async () => {
        const logs: string[] = [];
        const orig = {
          log: console.log,
          warn: console.warn,
          error: console.error,
          info: console.info,
          debug: console.debug,
        };
        for (const k of Object.keys(orig) as (keyof typeof orig)[])
          console[k] = (...a: unknown[]) => void logs.push(a.map(String).join(' '));
        try {
          const { bg, owner, wire } = await newAccount();
          const replies: unknown[] = [];
          const rec = async (type: string, payload: unknown) => {
            const r = await call(bg, type, payload);
            replies.push(r);
            return r;
          };
          await rec('clob.depositWallet.derive', { account: owner });
          const created = (await rec('clob.depositWallet.create', { account: owner })) as {
            result: { transaction: { transactionID: string } };
          };
          mine();
          await rec('clob.depositWallet.status', {
            account: owner,
            transactionID: created.result.transaction.transactionID,
          });
          await batch(bg, owner, { kind: 'setup' }, (view) => {
            replies.push(view);
            bg.registry.decide(view.id, { approve: true, digest: view.digest });
          });
          // An INVALID answer path too (stale nonce) for the error audit entry.
          const p = batch(bg, owner, { kind: 'setup' }, (view) => {
            h.ctx.relayerChain.nonces.set(owner.toLowerCase(), 99n);
            bg.registry.decide(view.id, { approve: true, digest: view.digest });
          });
          replies.push(await p);
          replies.push(await rec('audit.list', {}));
          replies.push(await rec('audit.export', { format: 'json' }));
          replies.push(await rec('audit.export', { format: 'csv' }));
          replies.push(await rec('settings.get', {}));
          const builder = wire.answers.find((a) => a.url.endsWith('/auth/builder-api-key'));
          expect(builder).toBeTruthy();
          const { secret, passphrase } = JSON.parse(builder!.text) as { secret: string; passphrase: string };
          const hay =
            JSON.stringify(replies) +
            logs.join('\n') +
            JSON.stringify(
              wire.sent.map((s) => ({
                ...s,
                headers: Object.fromEntries(Object.entries(s.headers).filter(([k]) => !/passphrase/i.test(k))),
              })),
            );
          expect(hay.includes(secret)).toBe(false);
          // The passphrase goes only in the builder header of relayer submit / transactions.
          expect(JSON.stringify(replies).includes(passphrase) || logs.join('\n').includes(passphrase)).toBe(false);
        } finally {
          Object.assign(console, orig);
        }
      },
    );

    it(
      'a relayer whose /deployed lies (true for a wallet the ' +
        'chain has no code for) does not make the address "deployed"',
      async () => {
        const { bg, owner, wire } = await newAccount();
        wire.rewrite = (url) => (url.includes('/relayer/deployed') ? { deployed: true } : undefined);
        const r = await call(bg, 'clob.depositWallet.derive', { account: owner });
        // No WALLET-CREATE was ever submitted: the chain (RPC eth_getCode) has no code at the address.
        const code = (await (
          await fetch(`${h.url}/rpc`, {
            method: 'POST',
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'eth_getCode',
              params: [(r.result as { wallet: string }).wallet, 'latest'],
            }),
          })
        ).json()) as { result: string };
        expect(code.result).toBe('0x');
        expect(
          (r.result as { deployed: boolean }).deployed,
          "derive does not report deployed:true on the relayer's word alone while the chain has no code",
        ).toBe(false);
      },
    );

    it(
      'with a lying /deployed, a type-3 order is not signed ' + 'before the wallet exists (the chain has no code)',
      async () => {
        const { bg, owner, wire } = await newAccount();
        wire.rewrite = (url) => (url.includes('/relayer/deployed') ? { deployed: true } : undefined);
        await ok(bg, 'clob.depositWallet.derive', { account: owner });
        const m = h.ctx.clob.markets[0]!;
        await call(bg, 'clob.postOrders', {
          account: owner,
          orders: [{ tokenId: m.tokenIds[0], side: 'BUY', price: '0.5', size: '10', orderType: 'GTC' }],
        });
        // The gate asks the chain too (eth_getCode): the relayer's word alone does not let an order through.
        expect(wire.sent.filter((s) => s.method === 'POST' && /\/clob\/orders?$/.test(s.url)).length).toBe(0);
      },
    );
  },
);
