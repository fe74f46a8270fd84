/**
 * Signing benchmarks: median µs per signature over N runs for each kind,
 * against the floor — a bare secp256k1 sign of a 32-byte digest with the same curve library viem uses.
 * Prints figures and the target ratios; it never fails on timing (a shared machine is noisy).
 */
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { buildL2Signature, signClobAuth } from '../../lib/clob/auth';
import { toOrderAmounts } from '../../lib/clob/amounts';
import { buildClobOrder, EXCHANGE_V2, signClobOrder } from '../../lib/clob/order';
import { cancelOrders, createOrders } from '../../lib/perps/commands';
import { signPerpsOp } from '../../lib/perps/signing';

const N = Number(process.env.BENCH_N ?? 1000);
const KEY = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * Runs every kind round-robin (one call of each per round) so that a shared machine's speed drift
 * affects all kinds alike, then reports the median µs of each.
 */
async function measureInterleaved(kinds: Record<string, (i: number) => unknown>): Promise<Record<string, number>> {
  const names = Object.keys(kinds);
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < 50; i++) for (const n of names) await kinds[n]!(i); // warm-up
  for (let i = 0; i < N; i++) {
    for (const n of names) {
      const t0 = performance.now();
      await kinds[n]!(i);
      times[n]!.push((performance.now() - t0) * 1000);
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(times[n]!)]));
}

/** Runs the signing benchmarks and returns the rows printed. */
export async function benchSigning(): Promise<Record<string, number>> {
  const account = privateKeyToAccount(KEY);
  const priv = new Uint8Array(Buffer.from(KEY.slice(2), 'hex'));
  const domain = { name: 'Polymarket', version: '1', chainId: 137 };
  const digests = Array.from({ length: 64 }, (_, i) => keccak256(toHex(`digest-${i}`), 'bytes'));
  const one = createOrders({
    orders: [{ iid: 1, buy: true, qty: '1.5', p: '3120.5', tif: 'gtc', c: 'a'.repeat(32) }],
  }).op;
  const twenty = createOrders({
    orders: Array.from({ length: 20 }, (_, i) => ({
      iid: i,
      buy: i % 2 === 0,
      qty: '1.5',
      p: `${3000 + i}.25`,
      tif: 'gtc' as const,
      c: i.toString(16).padStart(32, '0'),
    })),
  }).op;
  const cancel = cancelOrders({ oids: [11, 22, 33] }).op;
  const amounts = toOrderAmounts({ side: 'BUY', price: '0.56', size: '10', tickSize: '0.01' });
  const order = buildClobOrder({
    signer: account.address,
    signatureType: 0,
    tokenId: '71321045679252212594626385532706912750332728571942532289631379312455583992563',
    side: 'BUY',
    ...amounts,
    timestampMs: 1_751_500_000_000,
  });
  const secret = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
  const body = JSON.stringify({ deferExec: false, order: { ...order, signature: '0x' + '1'.repeat(130) } });

  // HMAC has an absolute target (no ratio): measured on its own, before the EC signatures' garbage.
  const hmac = await measureInterleaved({
    'HMAC L2': (i) =>
      buildL2Signature({ secret, timestamp: 1_751_500_000 + i, method: 'POST', requestPath: '/order', body }),
  });
  const rows = await measureInterleaved({
    'floor: bare secp256k1 sign of a digest': (i) => secp256k1.sign(digests[i % 64]!, priv, { lowS: true }),
    'perps Op (cancelOrders, 3 ids)': (i) =>
      signPerpsOp(account, { domain, op: cancel, salt: i, ts: 1_751_500_000_000 + i }),
    'perps createOrders, 1 order': (i) => signPerpsOp(account, { domain, op: one, salt: i, ts: 1_751_500_000_000 + i }),
    'perps createOrders, 20 orders': (i) =>
      signPerpsOp(account, { domain, op: twenty, salt: i, ts: 1_751_500_000_000 + i }),
    'ClobAuth (L1)': (i) => signClobAuth(account, { chainId: 137, timestamp: 1_751_500_000 + i, nonce: 0 }),
    'CLOB V2 order': (i) =>
      signClobOrder(account, {
        chainId: 137,
        verifyingContract: EXCHANGE_V2,
        order: { ...order, salt: String(i + 1) },
      }),
  });
  return { ...rows, ...hmac };
}

/** Prints the rows and whether each target is met (EIP-712 ≤ 1.30× the floor, HMAC < 50 µs, 20 orders ≤ 1.5× one). */
export function printSigning(rows: Record<string, number>): void {
  const floor = rows['floor: bare secp256k1 sign of a digest']!;
  console.log(`\nSigning: median µs per signature over ${N} runs`);
  for (const [name, us] of Object.entries(rows)) {
    const ratio = name.startsWith('HMAC') || name.startsWith('floor') ? '' : `  (${(us / floor).toFixed(2)}× floor)`;
    console.log(`  ${name.padEnd(42)} ${us.toFixed(1).padStart(8)} µs${ratio}`);
  }
  const eip712 = ['perps Op (cancelOrders, 3 ids)', 'perps createOrders, 1 order', 'ClobAuth (L1)', 'CLOB V2 order'];
  const worst = Math.max(...eip712.map((k) => rows[k]! / floor));
  const batch = rows['perps createOrders, 20 orders']! / rows['perps createOrders, 1 order']!;
  console.log(
    `  target: every EIP-712 signature ≤ 1.30× floor — worst ${worst.toFixed(2)}× ${worst <= 1.3 ? 'MET' : 'MISSED'}`,
  );
  console.log(`  target: HMAC < 50 µs — ${rows['HMAC L2']!.toFixed(1)} µs ${rows['HMAC L2']! < 50 ? 'MET' : 'MISSED'}`);
  console.log(
    `  target: 20-order createOrders ≤ 1.5× one-order — ${batch.toFixed(2)}× ${batch <= 1.5 ? 'MET' : 'MISSED'}`,
  );
}
