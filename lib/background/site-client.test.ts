/**
 * The site client (`lib/dapp`) and viem's own ERC-7715 action against a background on the sandbox, through
 * a page's port: the capability answer, the version check in words (also against an extension that does
 * not know the capability method), and a standing grant obtained with `erc7715Actions().grantPermissions`
 * unchanged that then covers an order without a window.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { createWalletClient, custom } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { erc7715Actions } from 'viem/experimental';
import { version } from '../../package.json';
import type { Harness } from '../../test/kits/sandbox';
import {
  btcOnly,
  type PagedBackground,
  pagePathKit,
  pageSender,
  sandboxSuite,
  until,
  waitPending,
} from '../../test/kits/background';
import { countersignActions, ExtensionOutdatedError, requireCountersign, UnsupportedError } from '../dapp/index';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { ready, armed, owner, btcOrder } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'site-client',
});

/** An EIP-1193 provider over `bg`'s page port; `rename` changes a method on the way (an older extension). */
function provider(bg: PagedBackground, rename: (m: string) => string = (m) => m) {
  const tab = bg.page(page);
  return { request: ({ method, params }: { method: string; params?: unknown }) => tab.request(rename(method), params) };
}

describe('the capability answer', () => {
  it('answers the version and the served methods to a page that is not connected, on a vault not set up', async () => {
    const { bg } = await ready({ onboard: false });
    const caps = (await bg.page(page).request('countersign_getCapabilities')) as { version: string; methods: string[] };
    expect(caps.version).toBe(version);
    expect(caps.methods).toEqual(
      expect.arrayContaining(['perps_sendCommand', 'clob_postOrders', 'countersign_getCapabilities']),
    );
    expect(caps.methods).not.toContain('eth_signTypedData_v4');
  });

  it('requireCountersign resolves when every method is served, and names the missing ones in words', async () => {
    const { bg } = await ready({ onboard: false });
    const client = createWalletClient({ transport: custom(provider(bg)) });
    await expect(
      requireCountersign(client, { methods: ['perps_sendCommand', 'clob_postOrders'] }),
    ).resolves.toMatchObject({ version });
    const err = await requireCountersign(client, { methods: ['perps_sendCommand', 'perps_futureMethod'] }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ExtensionOutdatedError);
    expect(err).toBeInstanceOf(UnsupportedError);
    expect((err as ExtensionOutdatedError).message).toBe(
      `Countersign ${version} is older than this site needs: update the extension (missing: perps_futureMethod)`,
    );
    expect((err as ExtensionOutdatedError).missing).toEqual(['perps_futureMethod']);
  });

  it("an extension's 4200 for the capability method itself is the same error in words, without a version", async () => {
    const { bg } = await ready({ onboard: false });
    const older = provider(bg, (m) => (m === 'countersign_getCapabilities' ? 'countersign_notYetKnown' : m));
    const client = createWalletClient({ transport: custom(older) });
    const err = await requireCountersign(client, { methods: ['perps_sendCommand'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExtensionOutdatedError);
    expect((err as ExtensionOutdatedError).version).toBeUndefined();
    expect((err as Error).message).toMatch(
      /^Countersign .* is older than this site needs: update the extension \(missing: countersign_getCapabilities\)$/,
    );
  });
});

describe("viem's own ERC-7715 action", () => {
  const data = { ...btcOnly, allow: { order: true, cancel: true } };

  it('obtains a standing grant unchanged, which then covers an order without a window', async () => {
    const { bg } = await ready();
    const client = createWalletClient({ transport: custom(provider(bg)) });
    const expiry = Math.floor(Date.now() / 1000) + 3600;
    // An address as `account`: viem sends `signer: { type: 'wallet' }` (a JSON-RPC account signs in the wallet).
    const asked = client.extend(erc7715Actions()).grantPermissions({
      account: owner() as `0x${string}`,
      expiry,
      permissions: [{ type: { custom: 'countersign-grant' }, data, policies: [], required: true }],
    });
    const [view] = await waitPending(bg);
    expect(view?.kind).toBe('grant');
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    const granted = await asked;
    expect(granted).toMatchObject({
      expiry,
      grantedPermissions: [{ type: 'countersign-grant', data: { venue: 'perps', instruments: [1] }, policies: [] }],
    });
    expect(granted.permissionsContext).toMatch(/\S/);
    await until(() => armed(bg));
    const answer = await client.extend(countersignActions).perpsSendCommand((await btcOrder()) as never);
    expect(bg.registry.size).toBe(0);
    expect(answer).toEqual([expect.objectContaining({ oid: expect.any(Number) })]);
  });

  it('a local account as the signer is refused naming the field: Countersign signs with its own key', async () => {
    const { bg } = await ready();
    const local = privateKeyToAccount(generatePrivateKey());
    const client = createWalletClient({ transport: custom(provider(bg)) });
    const err = (await client
      .extend(erc7715Actions())
      .grantPermissions({
        account: local,
        expiry: Math.floor(Date.now() / 1000) + 3600,
        permissions: [{ type: { custom: 'countersign-grant' }, data, policies: [] }],
      })
      .catch((e: unknown) => e)) as { code?: number; message?: string };
    expect(err.code).toBe(-32602);
    expect(err.message).toMatch(/params\.signer\.type/);
    expect(bg.registry.size).toBe(0);
  });
});
