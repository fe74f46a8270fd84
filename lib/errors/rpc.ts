/**
 * EIP-1193 provider errors (codes from EIP-1193 and EIP-1474), one class per code as in viem's
 * `errors/rpc.ts` and ox's `Provider` errors: each declares its code as `static code`, and the instance's
 * `code` comes from it. `ProviderRpcError` is the one class both sides use: the background throws its
 * subclasses, and the page's provider (`lib/bridge/provider.ts`) rebuilds every error it receives as a
 * `ProviderRpcError` (`fromRpcError`).
 *
 * What a page receives is `RpcErrorObject` — `{ code, message, data? }` — never a cause, a stack, or
 * anything from the vault or signer (`toRpcError`).
 *
 * ox's classes are not reused: they carry no `data` (the retryable 4900 needs it), they are not
 * `BaseError`s (no `shortMessage`, nothing for `toWireError`), and `ox/Provider` would bring its event
 * emitter and RPC modules into the main-world script, which holds nothing but framing.
 */
import { BaseError } from './base';

/** Structured, non-secret values an error carries to the page (numbers, strings, booleans only). */
export type RpcErrorData = Record<string, string | number | boolean>;

/** The error object a page receives (EIP-1193 `ProviderRpcError` shape; also the port's `error` field). */
export type RpcErrorObject = { code: number; message: string; data?: RpcErrorData };

/**
 * An EIP-1193 error with a numeric `code` and optional `data`. Thrown in the background (mostly as one of
 * the subclasses below) and rejected to the page (rebuilt from the wire by `fromRpcError`).
 */
export class ProviderRpcError extends BaseError {
  override name = 'ProviderRpcError';
  /** The EIP-1193 / EIP-1474 code (the subclasses' `static code`, or what the wire said on the page). */
  override readonly code: number;
  constructor(code: number, message: string, data?: RpcErrorData) {
    super(message, data ? { data } : {});
    this.code = code;
  }
}

/** 4001: the person rejected (or did not approve in time). */
export class UserRejectedRequestError extends ProviderRpcError {
  static override readonly code = 4001;
  constructor(message = 'The request was rejected.') {
    super(UserRejectedRequestError.code, message);
  }
}

/** 4100: this origin is not connected / not allowed. */
export class UnauthorizedError extends ProviderRpcError {
  static override readonly code = 4100;
  constructor(message = 'This site is not connected to Countersign. Call eth_requestAccounts first.') {
    super(UnauthorizedError.code, message);
  }
}

/** 4200: unknown or unsupported method (or a payload Countersign refuses to sign). */
export class UnsupportedMethodError extends ProviderRpcError {
  static override readonly code = 4200;
  constructor(message = 'Countersign does not support this method.') {
    super(UnsupportedMethodError.code, message);
  }
}

/**
 * 4900: disconnected (locked, a trading session, panic, or the extension restarted); `data.retryable` when a retry may
 * succeed.
 */
export class DisconnectedError extends ProviderRpcError {
  static override readonly code = 4900;
  constructor(message = 'Countersign is locked.', data?: RpcErrorData) {
    super(DisconnectedError.code, message, data);
  }
}

/** -32600: the request object is malformed (the page's provider, before anything is sent). */
export class InvalidRequestRpcError extends ProviderRpcError {
  static override readonly code = -32600;
  constructor(message: string) {
    super(InvalidRequestRpcError.code, message);
  }
}

/** -32602: invalid params (too large, not JSON, a query string on a non-GET route). */
export class InvalidParamsRpcError extends ProviderRpcError {
  static override readonly code = -32602;
  constructor(message: string) {
    super(InvalidParamsRpcError.code, message);
  }
}

/**
 * -32002 "resource unavailable": a limit of pending requests is reached (this site's 5, all sites' 20),
 * the site is paused after repeated rejections, or the venue is rate-limiting or not answering. Never
 * -32005, which dapp libraries retry at once (a retry would open a window as soon as the limit clears).
 */
export class ResourceUnavailableRpcError extends ProviderRpcError {
  static override readonly code = -32002;
  constructor(message: string) {
    super(ResourceUnavailableRpcError.code, message);
  }
}

/**
 * -32000: what a page receives for an error whose class declares no code, or for anything unknown (an
 * IndexedDB `DOMException`, a library's error). JSON-RPC 2.0 reserves -32000…-32099 for
 * implementation-defined server errors (EIP-1474 lists -32000 as "invalid input"; nodes use it as their
 * generic error). Never -32603: viem retries -32603 (and -1, -32005, -32007, 429) up to three times, and a
 * retry of a request that failed after it was signed could send it again. An error raised
 * after a submission was sent never reaches this path: the signer turns it into the unknown-outcome
 * error (-32002 with `data.command` and the order ids, `OutcomeUnknownError`).
 */
const INTERNAL_ERROR_CODE = -32000;

/**
 * Codes dapp libraries retry on their own (viem's `shouldRetry`: -1, -32005, -32603, -32007, 429): no error a page
 * receives uses one (`toRpcError`).
 */
const RETRIED_CODES: readonly number[] = [-1, -32005, -32603, -32007, 429];

/** 4001 with `message` (the registry's and the background's rejections). */
export const userRejected = (message?: string) => new UserRejectedRequestError(message);
/** 4100 with `message`. */
export const unauthorized = (message?: string) => new UnauthorizedError(message);
/** 4200 with `message`. */
export const unsupported = (message?: string) => new UnsupportedMethodError(message);
/** 4900 with `message` and optional `data`. */
export const disconnected = (message?: string, data?: RpcErrorData) => new DisconnectedError(message, data);
/** -32602 with `message`. */
export const invalidParams = (message: string) => new InvalidParamsRpcError(message);
/** -32002 with `message`. */
export const resourceUnavailable = (message: string) => new ResourceUnavailableRpcError(message);

/**
 * The page-visible form of any thrown value, by class: a `ProviderRpcError` keeps its code and `data`;
 * another `BaseError` gets its class's `static code` (-32000 when it declares none) and its
 * `shortMessage` only; anything else becomes -32000 "Internal error." (a library's text never leaves).
 */
export function toRpcError(err: unknown): RpcErrorObject {
  if (err instanceof ProviderRpcError)
    return { code: pageCode(err.code), message: err.shortMessage, ...(err.data ? { data: err.data } : {}) };
  if (err instanceof BaseError)
    return {
      code: pageCode(err.code),
      message: err.shortMessage,
      ...(err.pageData && err.data ? { data: err.data } : {}),
    };
  return { code: INTERNAL_ERROR_CODE, message: 'Internal error.' };
}

/**
 * `code` as a page may receive it: the catch-all for none, and for a code clients retry (a class declaring one is a
 * bug; the page still gets no retried code).
 */
function pageCode(code: number | undefined): number {
  return code === undefined || RETRIED_CODES.includes(code) ? INTERNAL_ERROR_CODE : code;
}

/** The error a page's `request` rejects with, rebuilt from the wire's `{ code, message, data? }`. */
export function fromRpcError(e: RpcErrorObject): ProviderRpcError {
  return new ProviderRpcError(e.code, e.message, e.data);
}

/** `data` as a page may receive it: a flat record of strings, numbers and booleans, or nothing. */
function readRpcData(x: unknown): RpcErrorData | undefined {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return undefined;
  const out: RpcErrorData = {};
  for (const [k, v] of Object.entries(x)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return undefined;
    out[k] = v;
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * Reads an `error` field received over the port or the window (untrusted shape): an integer non-zero
 * `code` (else -32000), a string `message` (else "Error"), and `data` only when it is a flat record.
 */
export function readRpcError(x: unknown): RpcErrorObject {
  if (typeof x !== 'object' || x === null) return { code: INTERNAL_ERROR_CODE, message: 'Error' };
  const code =
    'code' in x && typeof x.code === 'number' && Number.isInteger(x.code) && x.code !== 0
      ? x.code
      : INTERNAL_ERROR_CODE;
  const message = 'message' in x && typeof x.message === 'string' ? x.message : 'Error';
  const data = 'data' in x ? readRpcData(x.data) : undefined;
  return { code, message, ...(data ? { data } : {}) };
}
