/**
 * The venue smoke run (`npm run smoke`, lib/release/smoke.ts) against the sandbox started with the venue's
 * names — its header names (`POLY_*`, `POLYMARKET-*`), chain id 137 and perps domain `Polymarket` / `1` —
 * passes every step, writes its record, and only reads and cancels: nothing is placed, created or moved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import { createOrDeriveApiKey } from '../../lib/clob/client';
import { startSandbox, type RunningSandbox } from '../../lib/sandbox/server';
import type { SmokeRecord } from '../../lib/release/smoke';
import { ROOT } from './artifacts';

let sandbox: RunningSandbox;
let dir: string;
const run = promisify(execFile);

/** Runs `npm run smoke` against the sandbox with `key` (or none) and returns its exit code and record. */
async function smoke(key: string | undefined, name: string): Promise<{ code: number; record: SmokeRecord }> {
  const out = join(dir, `${name}.json`);
  const env = { ...process.env, ...(key ? { SMOKE_PRIVATE_KEY: key } : {}) };
  const code = await run(
    'npx',
    ['tsx', 'lib/release/smoke-cli.ts', '--preset', 'preproduction', '--base', sandbox.url, '--out', out],
    { cwd: ROOT, env },
  ).then(
    () => 0,
    (err: { code?: number }) => err.code ?? 1,
  );
  return { code, record: JSON.parse(readFileSync(out, 'utf8')) as SmokeRecord };
}

beforeAll(async () => {
  sandbox = await startSandbox(0, {
    config: { clobChainId: 137, perpsDomain: { name: 'Polymarket', version: '1', chainId: 137 } },
  });
  dir = mkdtempSync(join(tmpdir(), 'countersign-smoke-'));
  // The person's wallet already trades on the order book: it has API credentials.
  const owner = privateKeyToAccount(sandbox.demo.owner.privateKey);
  const timestamp = Number(await (await fetch(`${sandbox.url}/clob/time`)).json());
  await createOrDeriveApiKey(`${sandbox.url}/clob`, owner, { chainId: 137, timestamp, nonce: 0 });
});
afterAll(async () => {
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('venue smoke run against the sandbox with the venue names', () => {
  it(
    'passes every read, the credential derivation, the L2 reads ' +
      'and the impossible cancel, with the venue header names',
    async () => {
      const before = sandbox.ctx.requestLog.length;
      const openBefore = [...sandbox.ctx.venue.orders.values()].filter((o) => o.status === 'open').length;
      const { code, record } = await smoke(sandbox.demo.owner.privateKey, 'full');
      expect(record.steps.filter((s) => !s.ok)).toEqual([]);
      expect(code).toBe(0);
      expect(record.steps.map((s) => s.step)).toEqual(
        expect.arrayContaining([
          'read perps',
          'read clob',
          'read rpc',
          'derive API credentials (L1)',
          'read open orders (L2)',
          'cancel an order id that cannot exist (L2)',
        ]),
      );
      expect(record.services).toMatchObject({ headerSet: 'venue', clobChainId: 137, clobUrl: `${sandbox.url}/clob` });
      // Reads and cancels only: every other request is a GET or the RPC read; no order was placed or removed.
      const requests = sandbox.ctx.requestLog.slice(before);
      expect(
        requests.filter(
          (r) =>
            r.method !== 'GET' &&
            !(r.method === 'DELETE' && r.path === '/clob/order') &&
            !(r.method === 'POST' && r.path === '/rpc'),
        ),
      ).toEqual([]);
      expect([...sandbox.ctx.venue.orders.values()].filter((o) => o.status === 'open').length).toBe(openBefore);
    },
    120_000,
  );

  it('fails, and says which step, when the gateway does not speak the preset (a wrong chain)', async () => {
    const other = await startSandbox(0);
    try {
      const out = join(dir, 'wrong.json');
      const code = await run(
        'npx',
        ['tsx', 'lib/release/smoke-cli.ts', '--preset', 'preproduction', '--base', other.url, '--out', out],
        { cwd: ROOT },
      ).then(
        () => 0,
        (e: { code?: number }) => e.code ?? 1,
      );
      const record = JSON.parse(readFileSync(out, 'utf8')) as SmokeRecord;
      expect(code).toBe(1);
      expect(record.ok).toBe(false);
      expect(record.steps.find((s) => s.step === 'read rpc')?.ok).toBe(false);
    } finally {
      await other.close();
    }
  }, 120_000);
});
