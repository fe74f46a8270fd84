/**
 * What viem and ethers v6 report for each of Countersign's error codes (lib/dapp/README.md "Errors"):
 * a provider answering each code is called through each library, and the README's table row must say
 * what the library threw — and neither library retries (the provider is asked once).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
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

/** The README's row for `code` (`| <code> | … |`). */
function row(code: number): string {
  const line = readFileSync(README, 'utf8').split('\n').find((l) => l.startsWith(`| ${code} |`));
  if (!line) throw new Error(`README has no row for ${code}`);
  return line;
}

describe('library errors for the product codes', () => {
  it.each(CODES)('viem: code %i is the error class the README names, with the code, asked once', async (code) => {
    const { provider, calls } = failing(code);
    const err = await createWalletClient({ transport: custom(provider) }).request({ method: 'eth_accounts' }, { retryCount: 0 }).catch((e: unknown) => e);
    const { name, code: got } = err as { name: string; code: number };
    expect(got).toBe(code);
    expect(row(code)).toContain(`| \`${name}\`, ${code} |`);
    expect(calls.n).toBe(1);
  });

  it.each(CODES)('ethers v6: code %i is the ethers code the README names, the provider error kept, asked once', async (code) => {
    const { provider, calls } = failing(code);
    const err = await new BrowserProvider(provider).send('perps_sendCommand', [{}]).catch((e: unknown) => e);
    const { code: ethersCode, error } = err as { code: string; error?: { code: number; data?: unknown } };
    const cell = row(code).split('|')[3]!.trim();
    expect(cell.startsWith(`\`${ethersCode}\``)).toBe(true);
    if (ethersCode !== 'ACTION_REJECTED') expect(error).toMatchObject({ code, data: { command: 'createOrders' } });
    expect(calls.n).toBe(1);
  });
});
