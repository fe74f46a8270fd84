/**
 * EIP-1193 provider errors (codes from EIP-1193 and EIP-1474). What a page receives is
 * `{ code, message, data? }` — never a cause, a stack, or anything from the vault or signer.
 */
import { BaseError } from '../errors/base';

export class ProviderRpcError extends BaseError {
  override name = 'ProviderRpcError';
  readonly code: number;
  constructor(code: number, message: string, data?: Record<string, string | number | boolean>) {
    super(message, data ? { data } : {});
    this.code = code;
  }
}

/** 4001: the person rejected (or did not approve in time). */
export const userRejected = (message = 'The request was rejected.') => new ProviderRpcError(4001, message);
/** 4100: this origin is not connected / not allowed. */
export const unauthorized = (message = 'This site is not connected to Countersign. Call eth_requestAccounts first.') => new ProviderRpcError(4100, message);
/** 4200: unknown or unsupported method. */
export const unsupported = (message = 'Countersign does not support this method.') => new ProviderRpcError(4200, message);
/** 4900: disconnected (locked, or the extension restarted). */
export const disconnected = (message = 'Countersign is locked.', data?: Record<string, string | number | boolean>) => new ProviderRpcError(4900, message, data);
/** -32602: invalid params. */
export const invalidParams = (message: string) => new ProviderRpcError(-32602, message);
/** -32603: internal error. */
export const internal = (message = 'Internal error.') => new ProviderRpcError(-32603, message);
/** -32002: a limit of pending requests for this site is reached. */
export const resourceUnavailable = (message: string) => new ProviderRpcError(-32002, message);
/** -32005: a global limit is exceeded. */
export const limitExceeded = (message: string) => new ProviderRpcError(-32005, message);

/** The page-visible form of any error. Unknown errors become -32603 with a generic message. */
export function toRpcError(err: unknown): { code: number; message: string; data?: Record<string, string | number | boolean> } {
  if (err instanceof ProviderRpcError) return { code: err.code, message: err.shortMessage, ...(err.data ? { data: err.data } : {}) };
  if (err instanceof BaseError) {
    const code = (err as { code?: unknown }).code;
    if (err.name === 'InvalidFieldError') return { code: -32602, message: err.shortMessage };
    if (err.name === 'Vault.LockedError') return { code: 4900, message: err.shortMessage };
    return { code: typeof code === 'number' && Number.isInteger(code) ? code : -32603, message: err.shortMessage };
  }
  return { code: -32603, message: 'Internal error.' };
}
