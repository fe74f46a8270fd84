/**
 * Calling the venue's relayer (PROTOCOL.md §4.4; the paths `RelayClient` of
 * `@polymarket/builder-relayer-client` 0.0.10 calls), pure over `fetch`: `GET /nonce` (the owner's
 * `WALLET` nonce), `GET /deployed`, `POST /submit` (a `WALLET-CREATE` or an owner-signed `WALLET` batch,
 * builder headers over the exact body text), `GET /transaction` and `GET /transactions` (builder
 * headers), and a poll until a transaction is mined. Every answer is validated (valibot) before anything
 * reads it. A transaction the relayer answers `STATE_FAILED` or `STATE_INVALID` throws
 * `RelayerTransactionFailedError` with the relayer's reason — nothing here ever submits again (nothing
 * is retried without the person). The deposit-wallet safe/proxy flows and
 * `/relay-payload` (proxy only) are not called.
 */
import { venueText } from '../validation/venue-text';
import * as v from 'valibot';
import type { Address } from 'viem';
import { BaseError } from '../errors/base';
import { requestJson } from '../http/json';
import type { WalletBatchRequest, WalletCreateRequest } from './batch';
import { builderHeaders, type BuilderCredentials } from './builder';

const states = [
  'STATE_NEW',
  'STATE_EXECUTED',
  'STATE_MINED',
  'STATE_CONFIRMED',
  'STATE_FAILED',
  'STATE_INVALID',
] as const;
/**
 * A relayer transaction state (enum `RelayerTransactionState`): success is MINED or CONFIRMED; FAILED and INVALID are
 * final failures.
 */
export type RelayerState = (typeof states)[number];

const text = (max: number) => v.pipe(v.string(), v.maxLength(max));
/**
 * A relayer's free text (a failure reason), validated at the boundary (`venueText`): `undefined` when it is not safe to
 * show.
 */
const relayerText = v.optional(
  v.pipe(
    v.string(),
    v.transform((x) => venueText(x, { max: 500 })),
  ),
);

/**
 * One relayer transaction row (`RelayerTransaction`, PROTOCOL.md §4.4), with `errorMsg` for FAILED / INVALID. Other
 * fields are kept.
 */
const transactionSchema = v.looseObject({
  transactionID: text(100),
  transactionHash: text(80),
  from: text(42),
  to: text(42),
  proxyAddress: text(42),
  nonce: text(80),
  state: v.picklist(states),
  type: text(20),
  createdAt: text(40),
  updatedAt: text(40),
  errorMsg: relayerText,
});
/** A validated relayer transaction row. */
export type RelayerTransaction = v.InferOutput<typeof transactionSchema>;

const submitAnswerSchema = v.looseObject({
  transactionID: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  state: v.picklist(states),
  errorMsg: relayerText,
});
const nonceSchema = v.object({ nonce: v.pipe(v.string(), v.regex(/^\d{1,78}$/)) });
const deployedSchema = v.object({ deployed: v.boolean() });

/**
 * Options of `waitMined`: poll every `pollMs` (ms, default 2000 as the official client), at most `tries` polls (default
 * 100); `onRow` sees each row.
 */
type WaitOptions = {
  pollMs?: number;
  tries?: number;
  sleep?: (ms: number) => Promise<void>;
  onRow?: (row: RelayerTransaction) => void;
};

/** The relayer calls (see the module docstring). `now` Unix ms (builder timestamps are its seconds). */
type RelayerClient = {
  /** The owner EOA's next `WALLET` nonce (decimal string). */
  nonce: (owner: Address) => Promise<string>;
  /** Whether `wallet` is deployed (`GET /deployed`). */
  deployed: (wallet: Address) => Promise<boolean>;
  /**
   * Submits a request with builder headers: `{ transactionID, state }`. An INVALID answer throws
   * `RelayerTransactionFailedError`.
   */
  submit: (
    request: WalletCreateRequest | WalletBatchRequest,
    creds: BuilderCredentials,
  ) => Promise<{ transactionID: string; state: RelayerState }>;
  /** One transaction by id (`GET /transaction?id=`, the first row). */
  transaction: (id: string) => Promise<RelayerTransaction>;
  /** The builder key's transactions, newest first (`GET /transactions`). */
  transactions: (creds: BuilderCredentials) => Promise<RelayerTransaction[]>;
  /**
   * Polls `id` until MINED or CONFIRMED (the row); FAILED / INVALID throw `RelayerTransactionFailedError`, no end in
   * time `RelayerTimeoutError`.
   */
  waitMined: (id: string, o?: WaitOptions) => Promise<RelayerTransaction>;
};

/**
 * A client of the relayer at `baseUrl` (e.g. `http://127.0.0.1:8787/relayer`; a trailing `/` is
 * dropped). Errors: `Http.NetworkError` (no answer), `RelayerRequestError` (non-2xx, with the relayer's
 * message), `RelayerMalformedAnswerError`, `RelayerTransactionFailedError`, `RelayerTimeoutError`.
 */
export function relayerClient(
  baseUrl: string,
  fetchFn: typeof fetch = fetch,
  now: () => number = Date.now,
): RelayerClient {
  const base = baseUrl.replace(/\/+$/, '');
  async function call<S extends v.GenericSchema>(
    schema: S,
    method: string,
    path: string,
    o: { query?: string; body?: string; creds?: BuilderCredentials } = {},
  ): Promise<v.InferOutput<S>> {
    const headers = o.creds
      ? builderHeaders(o.creds, {
          timestamp: Math.floor(now() / 1000),
          method,
          path,
          ...(o.body === undefined ? {} : { body: o.body }),
        })
      : {};
    const answer = await requestJson(
      `${base}${path}${o.query ?? ''}`,
      { method, headers, ...(o.body === undefined ? {} : { body: o.body }) },
      fetchFn,
    );
    if (answer.status < 200 || answer.status > 299)
      throw new RelayerRequestError(answer.status, relayerMessage(answer.body));
    const parsed = v.safeParse(schema, answer.body);
    if (!parsed.success) throw new RelayerMalformedAnswerError(path);
    return parsed.output;
  }
  const final = (row: { transactionID: string; state: RelayerState; errorMsg?: string | undefined }) => {
    if (row.state === 'STATE_FAILED' || row.state === 'STATE_INVALID')
      throw new RelayerTransactionFailedError(row.transactionID, row.state, row.errorMsg ?? '');
  };
  const transaction = async (id: string) => {
    const rows = await call(
      v.pipe(v.array(transactionSchema), v.minLength(1), v.maxLength(10)),
      'GET',
      '/transaction',
      { query: `?id=${encodeURIComponent(id)}` },
    );
    // Only the row of the transaction asked for: another's state must never be shown as this one's.
    const row = rows.find((r) => r.transactionID === id);
    if (!row) throw new RelayerMalformedAnswerError('/transaction');
    return row;
  };
  return {
    nonce: async (owner) =>
      (await call(nonceSchema, 'GET', '/nonce', { query: `?address=${owner}&type=WALLET` })).nonce,
    deployed: async (wallet) =>
      (await call(deployedSchema, 'GET', '/deployed', { query: `?address=${wallet}` })).deployed,
    submit: async (request, creds) => {
      const answer = await call(submitAnswerSchema, 'POST', '/submit', { body: JSON.stringify(request), creds });
      final(answer);
      return { transactionID: answer.transactionID, state: answer.state };
    },
    transaction,
    transactions: (creds) =>
      call(v.pipe(v.array(transactionSchema), v.maxLength(1000)), 'GET', '/transactions', { creds }),
    waitMined: async (id, o = {}) => {
      const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
      const tries = o.tries ?? 100;
      for (let i = 0; i < tries; i++) {
        const row = await transaction(id);
        o.onRow?.(row);
        final(row);
        if (row.state === 'STATE_MINED' || row.state === 'STATE_CONFIRMED') return row;
        await sleep(o.pollMs ?? 2000);
      }
      throw new RelayerTimeoutError(id);
    },
  };
}

/**
 * The relayer's error sentence from a non-2xx body (`{ error }`) when it passes the venue-text rules (`venueText`),
 * else empty.
 */
function relayerMessage(body: unknown): string {
  const p = v.safeParse(v.object({ error: v.string() }), body);
  return p.success ? (venueText(p.output.error, { max: 300 }) ?? '') : '';
}

/**
 * The relayer answered a non-2xx status; `data.status` and the relayer's message (e.g. 401 `invalid builder
 * credentials`).
 */
export class RelayerRequestError extends BaseError {
  override name = 'Relayer.RequestError';
  /** EIP-1474 -32003: the relayer refused (never -32603, which dapp libraries retry). */
  static override readonly code = -32003;
  readonly status: number;
  constructor(status: number, message: string) {
    super(`The relayer refused the request (${status})${message ? `: ${message}` : ''}.`, {
      data: { status, message },
    });
    this.status = status;
  }
}

/** The relayer answered in a shape that is not the venue's; nothing of it is used. */
export class RelayerMalformedAnswerError extends BaseError {
  override name = 'Relayer.MalformedAnswerError';
  /** EIP-1474 -32002: the answer could not be used (never -32603, which dapp libraries retry). */
  static override readonly code = -32002;
  constructor(path: string) {
    super(`The relayer answered ${path} in an unexpected shape.`, { data: { path } });
  }
}

/**
 * A relayer transaction ended `STATE_FAILED` (it reverted when mined) or `STATE_INVALID` (refused when
 * submitted), with the relayer's reason. Final: it is shown to the person and never submitted again by
 * Countersign.
 */
export class RelayerTransactionFailedError extends BaseError {
  override name = 'Relayer.TransactionFailedError';
  /** EIP-1474 -32003 "transaction rejected" (never -32603, which dapp libraries retry). */
  static override readonly code = -32003;
  readonly state: 'STATE_FAILED' | 'STATE_INVALID';
  readonly reason: string;
  constructor(id: string, state: 'STATE_FAILED' | 'STATE_INVALID', reason: string) {
    const what = state === 'STATE_FAILED' ? 'failed when mined' : 'was refused by the relayer';
    super(`The relayer transaction ${what}${reason ? `: ${reason}` : ''}. Nothing was retried.`, {
      data: { transactionID: id, state, reason },
    });
    this.state = state;
    this.reason = reason;
  }
}

/** A relayer transaction was not mined within the polls; its outcome is unknown (it may still be mined). */
export class RelayerTimeoutError extends BaseError {
  override name = 'Relayer.TimeoutError';
  static override readonly code = -32002;
  constructor(id: string) {
    super(
      'The relayer transaction is not mined yet; its outcome is ' +
        'unknown. Check its state again before doing anything else.',
      { data: { transactionID: id } },
    );
  }
}

/**
 * A type-3 order was asked for before the account's deposit wallet is deployed (relayer `/deployed`
 * false). Nothing is signed: the venue would answer "the order signer address has to be the address of
 * the API KEY" (PROTOCOL.md §4.7). The person creates the wallet first and waits until it is mined.
 */
export class DepositWalletNotDeployedError extends BaseError {
  override name = 'Relayer.DepositWalletNotDeployedError';
  static override readonly code = 4100;
  constructor(wallet: Address) {
    super(
      'Your deposit wallet is not deployed yet, so the exchange would refuse this ' +
        'order. Create it in the deposit wallet panel and wait until it is mined.',
      { data: { wallet } },
    );
  }
}
