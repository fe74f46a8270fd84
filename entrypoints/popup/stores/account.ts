/**
 * The Account tab's state: the venue's account reads (deposits with their
 * confirmations, internal transfers, per-instrument configuration, referral and invite code, proxy
 * keys, funding-rate history), each with its data and error; proxy key issue and delete; and the
 * move-funds flow (withdraw or internal transfer: review shows destination and amount in human and base
 * units, confirm signs with the owner key).
 */
import { signal } from '@preact/signals';
import { parseUnits } from 'viem';
import { COLLATERAL_TOKEN } from '../../../lib/clob/order';
import { internalTransfer, withdraw, type PerpsCommand } from '../../../lib/perps/commands';
import type { PerpsReadName } from '../../../lib/perps/reads';
import { parsePerpsAnswer, type PerpsReadAnswer } from '../../../lib/perps/wire';
import { InvalidFieldError } from '../../../lib/validation';
import { call as popupCall, messageOf, type Account } from '../api';
import type { Call } from './perps';

/** A deposit (`amount` USDC base units, 6 decimals; `created_timestamp` Unix ms). */
export type Deposit = PerpsReadAnswer<'deposits'>['data'][number];
/** A proxy key of the account (`expiry` Unix ms). */
export type ProxyKey = PerpsReadAnswer<'credentials'>['keys'][number];

/** A read's state: the last answer, the last error, and `load(query)`. */
export type Resource<T, Q> = {
  data: ReturnType<typeof signal<T | undefined>>;
  error: ReturnType<typeof signal<string | undefined>>;
  load: (q: Q) => Promise<void>;
};

function resource<T, Q>(fetch: (q: Q) => Promise<T>): Resource<T, Q> {
  const data = signal<T | undefined>(undefined);
  const error = signal<string | undefined>(undefined);
  const load = (q: Q) =>
    fetch(q).then(
      (d) => void (data.value = d),
      (e) => void (error.value = messageOf(e)),
    );
  return { data, error, load };
}

/** `query` without its empty fields (undefined or ''), as the venue expects filters. */
export function cleanQuery(query: Record<string, string | number | undefined>): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') out[k] = v;
  return out;
}

/** A move of funds under review: the command to sign and the amount in base units. */
export type PendingMove = { cmd: PerpsCommand; base: string };

/**
 * Builds the command of a withdrawal or internal transfer of `amount` USDC (at most 6 decimals, above 0)
 * to `to`. Throws `InvalidFieldError` naming `amount`, or the field the command builder refuses (`to` …).
 */
export function reviewMove(
  account: string,
  m: { kind: 'withdraw' | 'transfer'; to: string; amount: string; label: string },
): PendingMove {
  if (!/^(0|[1-9]\d*)(\.\d{1,6})?$/.test(m.amount) || /^0(\.0+)?$/.test(m.amount))
    throw new InvalidFieldError({ field: 'amount', reason: 'must be a positive amount with at most 6 decimals' });
  const base = parseUnits(m.amount, 6).toString();
  const cmd =
    m.kind === 'withdraw'
      ? withdraw({ account, token: COLLATERAL_TOKEN, amount: base, to: m.to.trim() })
      : internalTransfer({
          account,
          token: COLLATERAL_TOKEN,
          amount: m.amount,
          to: m.to.trim(),
          ...(m.label ? { label: m.label } : {}),
        });
  return { cmd, base };
}

/** Why a move was refused, naming the field as the form labels it ("Destination: …"). */
export const moveProblem = (err: unknown) =>
  err instanceof InvalidFieldError
    ? `${err.field === 'to' ? 'Destination' : err.field}: ${err.reason}`
    : messageOf(err);

/** The account store. */
export type AccountStore = ReturnType<typeof createAccountStore>;

/** Creates the store for `account`. */
export function createAccountStore(account: Account, call: Call = popupCall) {
  /**
   * One venue read (with the account's proxy headers unless `withAccount` is false), its answer checked against the
   * read's schema.
   */
  const read = async <N extends PerpsReadName>(
    name: N,
    query: Record<string, string | number | undefined> = {},
    withAccount = true,
  ): Promise<PerpsReadAnswer<N>> => {
    const q = cleanQuery(query);
    return parsePerpsAnswer(
      name,
      await call('perps.read', {
        ...(withAccount ? { account: account.address } : {}),
        name,
        ...(Object.keys(q).length ? { query: q } : {}),
      }),
    );
  };

  const deposits = resource((status: string) => read('deposits', { status }));
  const transfers = resource((direction: string) => read('internalTransfers', { direction }));
  const config = resource(() => read('config'));
  const referral = resource(() => read('referral'));
  const funding = resource((iid: number) => {
    const end = Date.now();
    return read('funding', { instrument_id: iid, start_time: end - 72 * 3_600_000, end_time: end }, false);
  });
  /** The invite code just created (before the referral read shows it). */
  const invite = signal<string | undefined>(undefined);
  /** The account's proxy keys (the venue's list, else the vault's). */
  const keys = signal<ProxyKey[]>(account.proxies);
  const keysError = signal<string | undefined>(undefined);
  const keysBusy = signal(false);

  /** Creates an invite code and reads the referral programme again. */
  async function createInvite(): Promise<void> {
    invite.value = (await read('invite')).code;
    await referral.load(undefined);
  }
  /** Reads the venue's list of proxy keys (falls back to the vault's on failure). */
  async function loadKeys(): Promise<void> {
    try {
      keys.value = (await read('credentials')).keys;
    } catch {
      keys.value = account.proxies;
    }
  }
  /** Runs a key action, then `onChanged`; a failure shows the error. */
  async function keyAction(fn: () => Promise<unknown>, onChanged: () => Promise<void>): Promise<void> {
    keysBusy.value = true;
    keysError.value = undefined;
    try {
      await fn();
      await onChanged();
    } catch (e) {
      keysError.value = messageOf(e);
    } finally {
      keysBusy.value = false;
    }
  }
  /** Issues a proxy key valid for `days` days (signed by the owner key). */
  const issueKey = (days: number, onChanged: () => Promise<void>) =>
    keyAction(
      () => call('proxy.issue', { account: account.address, expiry: Date.now() + days * 86_400_000 }),
      onChanged,
    );
  /** Deletes proxy key `proxy` at the gateway and in the vault. */
  const deleteKey = (proxy: string, onChanged: () => Promise<void>) =>
    keyAction(() => call('proxy.delete', { account: account.address, proxy }), onChanged);
  /** Signs and sends a reviewed move; resolves to the venue's answer (`withdraw_id` or `transfer_id`). */
  const sendMove = (m: PendingMove) =>
    call('perps.send', { account: account.address, op: m.cmd.body, ...(m.cmd.label ? { label: m.cmd.label } : {}) });

  /** The move under review (shown for confirmation), its kind, and the outcome of the last one. */
  const move = {
    pending: signal<(PendingMove & { kind: 'withdraw' | 'transfer' }) | undefined>(undefined),
    error: signal<string | undefined>(undefined),
    done: signal<string | undefined>(undefined),
    busy: signal(false),
  };
  /** Builds the move for review; a refused field becomes the error. */
  function reviewFunds(m: { kind: 'withdraw' | 'transfer'; to: string; amount: string; label: string }): void {
    move.error.value = undefined;
    move.done.value = undefined;
    try {
      move.pending.value = { ...reviewMove(account.address, m), kind: m.kind };
    } catch (err) {
      move.error.value = moveProblem(err);
    }
  }
  /** Signs and sends the move under review; resolves true when the venue accepted it. */
  async function confirmFunds(): Promise<boolean> {
    const m = move.pending.value;
    if (!m) return false;
    move.busy.value = true;
    try {
      const answer = await sendMove(m);
      const r = Array.isArray(answer) ? {} : answer;
      move.done.value =
        m.kind === 'withdraw' ? `Withdrawal #${r.withdraw_id} accepted` : `Transfer #${r.transfer_id} done`;
      return true;
    } catch (err) {
      move.error.value = messageOf(err);
      return false;
    } finally {
      move.pending.value = undefined;
      move.busy.value = false;
    }
  }

  return {
    deposits,
    transfers,
    config,
    referral,
    funding,
    invite,
    keys,
    keysError,
    keysBusy,
    move,
    createInvite,
    loadKeys,
    issueKey,
    deleteKey,
    reviewFunds,
    confirmFunds,
  };
}
