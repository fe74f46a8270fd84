/**
 * What viem, ethers v6 and wagmi report for each of Countersign's error codes (lib/dapp/README.md
 * "Errors"): a provider answering each code is called through each library, and the README's table row
 * must say what the library threw — and no library retries (the provider is asked once).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import * as wagmi from '@wagmi/core';
import { polygonAmoy } from '@wagmi/core/chains';
import { BrowserProvider } from 'ethers';
import { createWalletClient, custom } from 'viem';
import { README } from './regions';

const CODES = [4001, 4100, 4200, 4900, -32600, -32602, -32002, -32003, -32000] as const;

/** A provider that answers `eth_chainId` and fails every other request with `code` (and `data`), counting the calls. */
function failing(code: number) {
  const calls = { n: 0 };
  const provider = {
    request: async ({ method }: { method: string }) => {
      if (method === 'eth_chainId') return '0x13882';
      calls.n++;
      throw Object.assign(new Error('the provider message'), { code, data: { command: 'createOrders' } });
    },
  };
  return { provider, calls };
}

const ACCOUNT = '0x5a6b8e4af1cd01b9b3a4ac8dd43b63d1b53de5b7';

/**
 * A connected provider for wagmi: answers the connect requests (`wallet_requestPermissions`, `eth_accounts`,
 * `eth_chainId`; `wallet_requestPermissions` fails with `connectCode` when given) and fails every other request with
 * `code` (and `data`), counting those calls.
 */
function connectedFailing(code: number, connectCode?: number) {
  const calls = { n: 0 };
  const provider = {
    on: () => undefined,
    removeListener: () => undefined,
    request: async ({ method }: { method: string }) => {
      if (method === 'eth_chainId') return '0x13882';
      if (method === 'eth_accounts') return [ACCOUNT];
      if (method === 'wallet_requestPermissions') {
        if (connectCode !== undefined) throw Object.assign(new Error('the provider message'), { code: connectCode });
        return [
          { parentCapability: 'eth_accounts', caveats: [{ type: 'restrictReturnedAccounts', value: [ACCOUNT] }] },
        ];
      }
      calls.n++;
      throw Object.assign(new Error('the provider message'), { code, data: { command: 'createOrders' } });
    },
  };
  return { provider, calls };
}

/** A page `window` (for wagmi's EIP-6963 discovery in Node) where `provider` announces itself as Countersign. */
function pageAnnouncing(provider: unknown): void {
  const win = new EventTarget();
  const info = {
    uuid: '5b0a3a4e-7c1d-4a6e-9a51-0b5f3f0c2d11',
    name: 'Countersign',
    icon: 'data:image/svg+xml,<svg/>',
    rdns: 'xyz.countersign',
  };
  win.addEventListener('eip6963:requestProvider', () =>
    win.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: { info, provider } })),
  );
  vi.stubGlobal('window', win);
}

/** wagmi over the announced provider: createConfig (discovery on), the `xyz.countersign` connector. */
function wagmiConfig() {
  const config = wagmi.createConfig({ chains: [polygonAmoy], transports: { [polygonAmoy.id]: wagmi.http() } });
  const connector = config.connectors.find((c) => c.id === 'xyz.countersign');
  if (!connector) throw new Error('wagmi found no xyz.countersign connector');
  return { config, connector };
}

/** The README's row for `code` (`| <code> | … |`). */
function row(code: number): string {
  const line = readFileSync(README, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`| ${code} |`));
  if (!line) throw new Error(`README has no row for ${code}`);
  return line;
}

describe('library errors for the product codes', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it.each(CODES)('viem: code %i is the error class the README names, with the code, asked once', async (code) => {
    const { provider, calls } = failing(code);
    const err = await createWalletClient({ transport: custom(provider) })
      .request({ method: 'eth_accounts' }, { retryCount: 0 })
      .catch((e: unknown) => e);
    const { name, code: got } = err as { name: string; code: number };
    expect(got).toBe(code);
    expect(row(code)).toContain(`| \`${name}\`, ${code} |`);
    expect(calls.n).toBe(1);
  });

  it.each(CODES)(
    'ethers v6: code %i is the ethers code the README names, the provider error kept, asked once',
    async (code) => {
      const { provider, calls } = failing(code);
      const err = await new BrowserProvider(provider).send('perps_sendCommand', [{}]).catch((e: unknown) => e);
      const { code: ethersCode, error } = err as { code: string; error?: { code: number; data?: unknown } };
      const cell = row(code).split('|')[3]!.trim();
      expect(cell.startsWith(`\`${ethersCode}\``)).toBe(true);
      if (ethersCode !== 'ACTION_REJECTED') expect(error).toMatchObject({ code, data: { command: 'createOrders' } });
      expect(calls.n).toBe(1);
    },
  );

  it.each(CODES)(
    'wagmi: code %i through the connector client is the error class the README names, with the code, asked once',
    async (code) => {
      const { provider, calls } = connectedFailing(code);
      pageAnnouncing(provider);
      const { config, connector } = wagmiConfig();
      await wagmi.connect(config, { connector });
      const client = await wagmi.getConnectorClient(config);
      const err = await client
        .request<{ Parameters: unknown[]; ReturnType: unknown }>({ method: 'perps_sendCommand', params: [{}] })
        .catch((e: unknown) => e);
      const { name, code: got } = err as { name: string; code: number };
      expect(got).toBe(code);
      expect(row(code).split('|')[4]!.trim()).toBe(`\`${name}\`, ${code}`);
      expect(calls.n).toBe(1);
    },
  );

  it(
    'wagmi: a rejected connect window is UserRejectedRequestError ' + '4001 and leaves the config disconnected',
    async () => {
      pageAnnouncing(connectedFailing(-32603, 4001).provider);
      const { config, connector } = wagmiConfig();
      const err = await wagmi.connect(config, { connector }).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'UserRejectedRequestError', code: 4001 });
      expect(wagmi.getConnection(config).status).toBe('disconnected');
    },
  );
});
