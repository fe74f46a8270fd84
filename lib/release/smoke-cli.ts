/**
 * `npm run smoke -- [--preset preproduction|polymarket|sandbox] [--base <sandbox URL>] [--out <file>]`,
 * with the owner key (optional) in the environment as `SMOKE_PRIVATE_KEY` (never on the command line):
 * runs `lib/release/smoke.ts` (reads and cancels only), prints each step and writes the record as JSON to
 * `--out` (default `test-results/smoke/<preset>-<UTC time>.json`). Exits 1 when a step failed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Hex } from 'viem';
import WebSocket from 'ws';
import { runSmoke, type SmokeOptions, type SmokeRecord } from './smoke';

const { values } = parseArgs({
  options: { preset: { type: 'string', default: 'preproduction' }, base: { type: 'string' }, out: { type: 'string' } },
});
const preset = values.preset;
if (preset !== 'preproduction' && preset !== 'polymarket' && preset !== 'sandbox')
  throw new Error('--preset must be preproduction, polymarket or sandbox');
/** Whether `k` is a private key: 0x and 64 hex digits. */
const isKey = (k: string): k is Hex => /^0x[0-9a-fA-F]{64}$/.test(k);
const key = process.env.SMOKE_PRIVATE_KEY;
if (key !== undefined && !isKey(key)) throw new Error('SMOKE_PRIVATE_KEY must be 0x and 64 hex digits');

const options: SmokeOptions = {
  preset,
  WebSocket,
  ...(values.base ? { base: values.base } : {}),
  ...(key ? { privateKey: key } : {}),
};
/** What the run found; written to `--out` as JSON (`SmokeRecord` is that file's shape). */
const record: SmokeRecord = await runSmoke(options);
for (const s of record.steps) console.log(`${s.ok ? 'ok  ' : 'FAIL'} ${s.step} (${s.ms} ms): ${s.detail}`);
const out = resolve(values.out ?? `test-results/smoke/${preset}-${record.startedAt.replace(/[:.]/g, '-')}.json`);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(record, null, 2)}\n`);
console.log(`${record.ok ? 'passed' : 'FAILED'}; record written to ${out}`);
process.exitCode = record.ok ? 0 : 1;
