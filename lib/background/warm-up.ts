/**
 * CPU work a cold worker would otherwise do inside its first signing-key read, done while the worker
 * waits for the I/O of its first answers: the first secp256k1 point multiplication builds the curve
 * library's precomputed table of the generator (tens of ms on a cold worker), and `Vault.proxyFor`
 * would pay it inside the vault's one-writer section, where every other vault read queues behind it.
 * `startBackground` runs it in a task of its own when the first page request arrives (the requests that
 * sign or show an approval window; the popup's reads need no signature): that request has begun its
 * database reads and venue requests by then, and those proceed in the browser's processes meanwhile.
 */
import { privateKeyToAccount } from 'viem/accounts';

/** The scalar 1: its account is the address of the curve's generator point, public knowledge; no secret is used. */
const PUBLIC_SCALAR = '0x0000000000000000000000000000000000000000000000000000000000000001';

/** Builds the curve's generator table (and runs keccak once) by deriving the account of a public scalar; never throws. */
export function warmSigning(): void {
  try {
    privateKeyToAccount(PUBLIC_SCALAR);
  } catch {
    /* a warm-up only: the first real key read pays the cost instead */
  }
}
