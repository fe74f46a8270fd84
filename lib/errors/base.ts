/**
 * One error contract for the whole project (after viem's `BaseError`):
 * - `shortMessage`: one sentence a person can read in the UI;
 * - `metaMessages`: optional hints (how to fix it);
 * - `details`: optional technical detail (never a secret);
 * - `cause`: the underlying error, kept in the context that threw it;
 * - `data`: optional structured, non-secret values a caller acts on (e.g. `{ retryAfterMs }`), so no
 *   context ever parses them back out of the message text.
 *
 * Across extension contexts only `{ name, shortMessage, code?, data? }` travels (see `toWireError`);
 * `cause`, `details` and `metaMessages` stay where they were created.
 *
 * Codes (after viem's `errors/rpc.ts` and ox's `Provider` errors): a class whose errors may
 * reach a page or the popup declares its EIP-1193 / EIP-1474 code once, as `static code`; every
 * instance's `code` is read from its class (`new.target`), so the code is never guessed from a name.
 * Classes without one leave `code` undefined (a page then receives -32000, `INTERNAL_ERROR_CODE` in
 * `lib/errors/rpc.ts`; never a code dapp libraries retry).
 */
export class BaseError extends Error {
  /** The EIP-1193 / EIP-1474 code of this class's errors (undefined: none; subclasses override). */
  static readonly code: number | undefined = undefined;
  override name = 'BaseError';
  /** This error's code: its class's `static code` (`ProviderRpcError` sets it per instance). */
  readonly code: number | undefined;
  readonly shortMessage: string;
  readonly metaMessages: readonly string[];
  readonly details: string | undefined;
  /** Structured values for callers (numbers, strings, booleans only; never a secret). */
  readonly data: Record<string, string | number | boolean> | undefined;
  /** Whether this class's `data` is meant for pages too (sent with the page's error; default: extension pages only). */
  static readonly pageData: boolean = false;
  /** This error's `pageData`: its class's `static pageData`. */
  readonly pageData: boolean;

  constructor(
    shortMessage: string,
    options: {
      cause?: unknown;
      metaMessages?: readonly string[];
      details?: string;
      data?: Record<string, string | number | boolean>;
    } = {},
  ) {
    const parts = [shortMessage];
    if (options.metaMessages?.length) parts.push('', ...options.metaMessages);
    if (options.details) parts.push('', `Details: ${options.details}`);
    super(parts.join('\n'), options.cause === undefined ? undefined : { cause: options.cause });
    this.shortMessage = shortMessage;
    this.metaMessages = options.metaMessages ?? [];
    this.details = options.details;
    this.data = options.data;
    this.code = new.target.code;
    this.pageData = new.target.pageData;
  }

  /** Walks the `cause` chain; returns the first error for which `fn` is true (or the deepest one). */
  walk(fn?: (err: unknown) => boolean): unknown {
    let err: unknown = this;
    for (;;) {
      if (fn?.(err)) return err;
      const next = err instanceof Error ? err.cause : undefined;
      if (next === undefined) return fn ? undefined : err;
      err = next;
    }
  }
}

/** The shape of an error that may cross a context boundary: nothing from `cause` or `details`. */
export type WireError = {
  name: string;
  shortMessage: string;
  code?: number | string;
  data?: Record<string, string | number | boolean>;
};

/**
 * Reduces any thrown value to a `WireError`. Unknown errors become a generic internal error so that a
 * message from a library (which might quote input) never leaves the context that threw it.
 */
export function toWireError(err: unknown): WireError {
  if (err instanceof BaseError) {
    const { code } = err;
    const data =
      err.data &&
      Object.fromEntries(
        Object.entries(err.data).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v)),
      );
    return {
      name: err.name,
      shortMessage: err.shortMessage,
      ...(code === undefined ? {} : { code }),
      ...(data && Object.keys(data).length ? { data } : {}),
    };
  }
  return { name: 'InternalError', shortMessage: 'An internal error occurred.' };
}
