/**
 * The signed command envelope (seed "Command envelope"; PROTOCOL.md §1.2–§1.3):
 * `{ op: { type, args, grp? }, sig, salt, ts, exp?, label? }`.
 *
 * - `salt`: fresh random unsigned 32-bit integer per command, from `crypto.getRandomValues`;
 * - `ts`: Unix **ms**, except withdraw: Unix **seconds**;
 * - `exp` (optional, Unix ms): must be in the future and at most the gateway's command timeout ahead;
 *   it can shorten a command's validity, never extend it. It is not an order auto-cancel time.
 * - `label` (optional): unsigned; internal transfer and proxy issuance only.
 */
import type { Address, Hex, LocalAccount } from 'viem';
import { InvalidFieldError } from '../validation';
import type { PerpsBodyOp, PerpsCommand } from './commands';
import {
  signCreateProxy,
  signPerpsOp,
  signWithdraw,
  type PerpsCommandDomain,
  type PerpsWithdrawDomain,
} from './signing';

/** JSON body of every signed perps command. `salt` uint32; `ts` ms (seconds for withdraw); `exp` ms. */
export type PerpsEnvelope = {
  op: PerpsBodyOp;
  sig: Hex;
  salt: number;
  ts: number;
  exp?: number;
  label?: string;
};

/**
 * The gateway's default command timeout, in ms. The seed leaves it unshown; the sandbox enforces the
 * same value, and a client never sends an `exp` further ahead than this.
 */
export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;

/** A fresh random uint32 salt from the platform's crypto RNG. */
export function randomSalt(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}

/**
 * Checks an `exp` (Unix ms) against `nowMs`: a safe integer, strictly in the future, and no more than
 * `timeoutMs` ahead. Throws `InvalidFieldError` (field `exp`).
 */
export function assertExp(exp: unknown, nowMs: number, timeoutMs = DEFAULT_COMMAND_TIMEOUT_MS): asserts exp is number {
  if (typeof exp !== 'number' || !Number.isSafeInteger(exp)) {
    throw new InvalidFieldError({ field: 'exp', reason: 'must be an integer Unix time in ms' });
  }
  if (exp <= nowMs) throw new InvalidFieldError({ field: 'exp', reason: 'must be in the future' });
  if (exp > nowMs + timeoutMs) {
    throw new InvalidFieldError({
      field: 'exp',
      reason: `must be within the gateway's command timeout (${timeoutMs} ms from now)`,
    });
  }
}

/** `ts` of a command at `nowMs`: ms, or whole seconds for withdraw. */
export function commandTs(command: Pick<PerpsCommand, 'struct'>, nowMs: number): number {
  return command.struct === 'Withdraw' ? Math.floor(nowMs / 1000) : nowMs;
}

/** Options of `signPerpsCommand`. `nowMs` defaults to `Date.now()`, `salt` to `randomSalt()`. */
export type SignPerpsCommandOptions = {
  command: PerpsCommand;
  /** Command domain (every command but withdraw). */
  domain: PerpsCommandDomain;
  /** Withdraw domain; required for withdraw. */
  withdrawDomain?: PerpsWithdrawDomain;
  nowMs?: number;
  salt?: number;
  exp?: number;
  commandTimeoutMs?: number;
};

/** Thrown when a withdraw is signed without its domain's `verifyingContract`. */
export class MissingWithdrawDomainError extends InvalidFieldError {
  override name = 'MissingWithdrawDomainError';
  constructor() {
    super({ field: 'withdrawDomain', reason: 'is required to sign a withdraw (needs the deposit contract)' });
  }
}

/**
 * Signs `command` with `account` and returns the envelope to send as the JSON body.
 * The caller chooses `account` from `command.signer` (proxy vs owner, PROTOCOL.md §1.3).
 * Throws `InvalidFieldError` for a bad `exp`, `MissingWithdrawDomainError` for withdraw without its domain.
 */
export async function signPerpsCommand(
  account: LocalAccount,
  options: SignPerpsCommandOptions,
): Promise<PerpsEnvelope> {
  const { command, domain } = options;
  const nowMs = options.nowMs ?? Date.now();
  if (options.exp !== undefined) assertExp(options.exp, nowMs, options.commandTimeoutMs);
  const salt = options.salt ?? randomSalt();
  const ts = commandTs(command, nowMs);
  let sig: Hex;
  if (command.struct === 'Withdraw') {
    if (!options.withdrawDomain || !command.withdraw) throw new MissingWithdrawDomainError();
    sig = await signWithdraw(account, { domain: options.withdrawDomain, ...command.withdraw, salt, ts });
  } else if (command.struct === 'CreateProxy') {
    const p = command.createProxy!;
    sig = await signCreateProxy(account, { domain, proxy: p.proxy as Address, expiry: p.expiry, salt, ts });
  } else {
    sig = await signPerpsOp(account, { domain, op: command.op, salt, ts });
  }
  return {
    op: command.body,
    sig,
    salt,
    ts,
    ...(options.exp === undefined ? {} : { exp: options.exp }),
    ...(command.label === undefined ? {} : { label: command.label }),
  };
}
