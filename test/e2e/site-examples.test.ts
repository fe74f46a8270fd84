/**
 * The site developers' examples (lib/dapp/examples/examples.ts, shown in lib/dapp/README.md) compiled with
 * esbuild and run in a page in real Chromium against the sandbox, with the extension's approval windows
 * decided as a person does: every page method answers what the README says it answers, directly and
 * through viem, ethers v6 and wagmi.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { decideNext, launchHarness, onboardDemo, type Harness } from './harness';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let page: Page;
let bundle: string;

/** Runs example `name` in the page with the provider it discovers and `args`; resolves with its answer. */
const run = (name: string, ...args: unknown[]) =>
  page.evaluate(
    async ([n, a]) => {
      const ex = (window as unknown as { examples: Record<string, (...x: unknown[]) => Promise<unknown>> }).examples;
      const provider = await ex.discover!();
      return ex[n as string]!(provider, ...(a as unknown[]));
    },
    [name, args] as const,
  );
/** Runs example `name` while the person decides the windows it opens, in order. */
async function runDeciding(name: string, decisions: ('approve' | 'reject')[], ...args: unknown[]): Promise<unknown> {
  const result = run(name, ...args);
  result.catch(() => undefined); // its rejection is awaited below, after the windows
  for (const d of decisions) await decideNext(h.ctx, d);
  return result;
}

beforeAll(async () => {
  const esbuild = await import('esbuild');
  const built = await esbuild.build({
    entryPoints: [resolve(import.meta.dirname, '../../lib/dapp/examples/examples.ts')],
    // The package name the examples import, as a site does (the packed package itself: test/e2e/site-client.test.ts).
    alias: { '@countersign/site-client': resolve(import.meta.dirname, '../../lib/dapp/index.ts') },
    bundle: true,
    format: 'iife',
    globalName: 'examples',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  bundle = built.outputFiles[0]!.text;
  h = await launchHarness({
    extend: (app) => {
      app.get('/examples/app.js', (c) => c.body(bundle, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));
      app.get('/examples', (c) =>
        c.html('<!doctype html><title>examples</title><script src="/examples/app.js"></script>'),
      );
    },
  });
  await onboardDemo(h, PASSWORD, { clob: true });
  page = await h.ctx.newPage();
  await page.goto(`${h.sandbox.url}/examples`);
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('site developer examples (lib/dapp/README.md) against the sandbox', () => {
  it(
    'discover + connect: EIP-6963 finds Countersign; ' + 'eth_chainId, eth_requestAccounts (approved), eth_accounts',
    async () => {
      const r = await runDeciding('connect', ['approve']);
      expect(r).toEqual({
        chainId: '0x13882',
        account: h.sandbox.demo.owner.address,
        accounts: [h.sandbox.demo.owner.address],
      });
    },
  );

  it(
    'permissions: wallet_requestPermissions (approved) and ' +
      'wallet_getPermissions answer the eth_accounts permission',
    async () => {
      const r = (await runDeciding('permissions', ['approve'])) as { requested: unknown[]; current: unknown[] };
      const perm = {
        invoker: h.sandbox.url,
        parentCapability: 'eth_accounts',
        caveats: [{ type: 'restrictReturnedAccounts', value: [h.sandbox.demo.owner.address] }],
      };
      expect(r.requested).toEqual([expect.objectContaining(perm)]);
      expect(r.current).toEqual([expect.objectContaining(perm)]);
    },
  );

  it('perps_sendCommand (approved): the order rests at the sandbox', async () => {
    const before = h.sandbox.ctx.requestLog.filter(
      (q) => q.path === '/perps/v1/trade/orders' && q.status === 200,
    ).length;
    const answer = await runDeciding('perpsSendCommand', ['approve']);
    expect(answer).toEqual([
      expect.objectContaining({ status: 'ok', oid: expect.any(Number), coid: expect.stringMatching(/^[0-9a-f]{32}$/) }),
    ]);
    expect(
      h.sandbox.ctx.requestLog.filter((q) => q.path === '/perps/v1/trade/orders' && q.status === 200).length - before,
    ).toBe(1);
  });

  it('perps_signCommand (approved): a signed envelope comes back and nothing is sent', async () => {
    const before = h.sandbox.ctx.requestLog.length;
    const signed = (await runDeciding('perpsSignCommand', ['approve'])) as Record<string, unknown>;
    expect(signed).toEqual(
      expect.objectContaining({
        op: { type: 'cancelOrders', args: [123456] },
        sig: expect.stringMatching(/^0x[0-9a-f]{130}$/),
        salt: expect.any(Number),
        ts: expect.any(Number),
      }),
    );
    expect(h.sandbox.ctx.requestLog.slice(before).filter((q) => q.method !== 'GET')).toEqual([]);
  });

  it('clob_postOrders (approved): one result per order, accepted', async () => {
    const tokenId = h.sandbox.ctx.clob.markets[0]!.tokenIds[0];
    const results = (await runDeciding('clobPostOrders', ['approve'], tokenId)) as {
      success: boolean;
      errorMsg: string;
    }[];
    expect(results).toEqual([expect.objectContaining({ success: true, errorMsg: '' })]);
  });

  it('clob_signRequest (approved): five L2 headers the order book accepts', async () => {
    const r = await runDeciding('clobSignRequest', ['approve'], `${h.sandbox.url}/clob`);
    expect(r).toEqual({
      headerNames: ['SVC_ADDRESS', 'SVC_API_KEY', 'SVC_PASSPHRASE', 'SVC_SIGNATURE', 'SVC_TIMESTAMP'],
      status: 200,
    });
  });

  it('wallet_grantPermissions (approved): the ERC-7715 answer names the countersign-grant', async () => {
    const r = (await runDeciding('grantPermissions', ['approve'])) as {
      grantedPermissions: { type: string }[];
      permissionsContext: string;
    };
    expect(r.grantedPermissions.map((p) => p.type)).toEqual(['countersign-grant']);
    expect(typeof r.permissionsContext).toBe('string');
  });

  it('errors: eth_signTypedData_v4 is refused with 4200 and no window', async () => {
    expect(await run('refusedTypedData')).toEqual({ code: 4200, message: expect.stringContaining('typed data') });
  });

  it('viem: requestAddresses, getChainId and perps_sendCommand through a viem wallet client', async () => {
    const r = (await runDeciding('withViem', ['approve'])) as { account: string; chainId: number; answer: unknown };
    expect(r).toEqual(expect.objectContaining({ account: h.sandbox.demo.owner.address, chainId: 80002 }));
    expect(Array.isArray(r.answer)).toBe(true);
  });

  it('the site client: discovery, the version check and an order through its typed action', async () => {
    const r = await runDeciding('withSiteClient', ['approve']);
    expect(r).toEqual({
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      account: h.sandbox.demo.owner.address,
      answer: [
        expect.objectContaining({
          status: 'ok',
          oid: expect.any(Number),
          coid: expect.stringMatching(/^[0-9a-f]{32}$/),
        }),
      ],
    });
  });

  it("viem errors: a rejected window is viem's UserRejectedRequestError with code 4001", async () => {
    expect(await runDeciding('viemError', ['reject'])).toEqual({ name: 'UserRejectedRequestError', code: 4001 });
  });

  it(
    'ethers v6: BrowserProvider getSigner, getNetwork ' + 'and send; a refusal keeps the provider code on error',
    async () => {
      const r = (await runDeciding('withEthers', ['approve'])) as {
        account: string;
        chainId: number;
        answer: unknown;
        refused: unknown;
      };
      expect(r).toEqual({
        account: h.sandbox.demo.owner.address,
        chainId: 80002,
        answer: expect.any(Array),
        refused: { code: 'UNKNOWN_ERROR', providerCode: 4200 },
      });
    },
  );

  it('wallet_revokePermissions ends the connection: eth_accounts answers []', async () => {
    expect(await run('revoke')).toEqual([]);
  });

  // Runs after the revoke: wagmi's connect starts from a site that is not connected (one connect window).
  it(
    'wagmi: the EIP-6963 connector connects (approved), reports the account and 80002, sends ' +
      'an order the sandbox acknowledges; a rejected window is UserRejectedRequestError 4001',
    async () => {
      const orders = () =>
        h.sandbox.ctx.requestLog.filter(
          (q) => q.method === 'POST' && q.path === '/perps/v1/trade/orders' && q.status === 200,
        );
      const before = orders().length;
      const r = (await runDeciding('withWagmi', ['approve', 'approve', 'reject'])) as Record<string, unknown>;
      expect(r).toEqual({
        address: h.sandbox.demo.owner.address,
        status: 'connected',
        chainId: 80002,
        answer: [expect.objectContaining({ status: 'ok', oid: expect.any(Number) })],
        rejected: { name: 'UserRejectedRequestError', code: 4001 },
        after: [],
      });
      const sent = orders().slice(before);
      expect(sent).toHaveLength(1); // the approved createOrders; the rejected cancelOrders never left the extension
      expect(JSON.parse(sent[0]!.body!).op.type).toBe('createOrders');
    },
  );
});
