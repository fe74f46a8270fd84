/**
 * Recovering who signed a perps envelope (used by the sandbox gateway and by tests). Recovery goes
 * through viem's `recoverTypedDataAddress`, independent of the fast digest path used for signing.
 * Source: PROTOCOL.md §1.1–§1.3.
 */
import * as v from 'valibot';
import { recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { InvalidFieldError, parseOrThrow, uint32, nonNegativeSafeInteger } from '../validation';
import { commandFromBody, type PerpsCommand } from './commands';
import {
  createProxyTypedData,
  perpsOpTypedData,
  withdrawTypedData,
  type PerpsCommandDomain,
  type PerpsWithdrawDomain,
} from './signing';

const envelopeSchema = v.strictObject({
  op: v.unknown(),
  sig: v.pipe(v.string('must be a hex string'), v.regex(/^0x[0-9a-fA-F]{130}$/, 'must be a 65-byte 0x-hex signature')),
  salt: v.union([uint32, nonNegativeSafeInteger], 'must be an unsigned integer'),
  ts: nonNegativeSafeInteger,
  exp: v.optional(nonNegativeSafeInteger),
  label: v.optional(v.unknown()),
});

/** A parsed envelope: the rebuilt command plus its envelope fields. */
export type ParsedPerpsEnvelope = {
  command: PerpsCommand;
  sig: Hex;
  salt: number;
  ts: number;
  exp?: number;
};

/**
 * Validates a JSON envelope and rebuilds the command (and so the signed tuple) from its body.
 * Throws `InvalidFieldError` naming the field. For `Op`-signed commands `salt` must fit 32 bits.
 */
export function parsePerpsEnvelope(body: unknown): ParsedPerpsEnvelope {
  const e = parseOrThrow(envelopeSchema, body);
  const command = commandFromBody(e.op, e.label);
  if (command.struct === 'Op' && e.salt > 0xffffffff) {
    throw new InvalidFieldError({ field: 'salt', reason: 'must fit in 32 bits' });
  }
  return { command, sig: e.sig as Hex, salt: e.salt, ts: e.ts, ...(e.exp === undefined ? {} : { exp: e.exp }) };
}

/** Recovers the address that signed a parsed envelope (Op, CreateProxy or Withdraw typed data). */
export async function recoverPerpsSigner(
  parsed: ParsedPerpsEnvelope,
  domains: { domain: PerpsCommandDomain; withdrawDomain: PerpsWithdrawDomain },
): Promise<Address> {
  const { command, sig, salt, ts } = parsed;
  if (command.struct === 'Withdraw') {
    return recoverTypedDataAddress({
      ...withdrawTypedData({ domain: domains.withdrawDomain, ...command.withdraw!, salt, ts }),
      signature: sig,
    });
  }
  if (command.struct === 'CreateProxy') {
    const p = command.createProxy!;
    return recoverTypedDataAddress({
      ...createProxyTypedData({ domain: domains.domain, proxy: p.proxy, expiry: p.expiry, salt, ts }),
      signature: sig,
    });
  }
  return recoverTypedDataAddress({
    ...perpsOpTypedData({ domain: domains.domain, op: command.op, salt, ts }),
    signature: sig,
  });
}
