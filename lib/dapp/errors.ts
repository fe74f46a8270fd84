/**
 * Typed errors for dapps: what Countersign's provider answers, by EIP-1193 /
 * EIP-1474 code and `data`, as classes a dapp can `instanceof` (lib/page/README.md "Error codes"). `toCountersignError`
 * reads any error a viem client throws (viem wraps the provider's error in its own RPC error classes; the code and
 * `data` are found by walking `cause`).
 *
 * No class here is for an error a client should retry on its own: an `OutcomeUnknownError` means the
 * order may be at the venue already (look it up by its client order ids / order hashes), a
 * `VenueRefusedError` will be refused again, and a `BusyError` clears with time, not with a retry loop.
 */
/** Structured, non-secret values an error carries (`OutcomeUnknownError`'s order ids, `LockedError`'s `retryable`). */
export type CountersignErrorData = Record<string, string | number | boolean>;

/** A Countersign provider error as a site receives it: the code, the provider's message and its `data`. */
export class CountersignError extends Error {
  /** The code of this class's errors (EIP-1193 / EIP-1474; the base class: none, any code may come). */
  static readonly code: number | undefined = undefined;
  override name = 'Countersign.Error';
  /** The provider's EIP-1193 / EIP-1474 code (the subclasses' `static code`; this class: whatever came). */
  readonly rpcCode: number;
  /** The same as `rpcCode` (the field EIP-1193 errors carry). */
  readonly code: number;
  /** The provider's own sentence, without any library's wrapping text. */
  readonly shortMessage: string;
  /** Structured values the provider sent with the error (undefined when none). */
  readonly data: CountersignErrorData | undefined;
  constructor(rpcCode: number, message: string, data?: CountersignErrorData) {
    super(message);
    this.rpcCode = rpcCode;
    this.code = rpcCode;
    this.shortMessage = message;
    this.data = data;
  }
}

/** 4001: the person rejected the request (or closed the window, or it expired unapproved). Nothing was signed. */
export class UserRejectedError extends CountersignError {
  override name = 'Countersign.UserRejectedError';
  static override readonly code = 4001;
}

/** 4100: the site is not connected, or is connected to another account than the active one. */
export class NotConnectedError extends CountersignError {
  override name = 'Countersign.NotConnectedError';
  static override readonly code = 4100;
}

/** 4200: a method Countersign does not serve (or a payload it never signs, e.g. any `eth_signTypedData_v4`). */
export class UnsupportedError extends CountersignError {
  override name = 'Countersign.UnsupportedError';
  static override readonly code = 4200;
}

/**
 * 4900: locked, a trading session that does not cover the request, panic, or a restart; `retryable` when asking again
 * may succeed.
 */
export class LockedError extends CountersignError {
  override name = 'Countersign.LockedError';
  static override readonly code = 4900;
  /** The extension restarted while the request was pending: nothing was signed, asking again may succeed. */
  get retryable(): boolean {
    return this.data?.retryable === true;
  }
}

/** -32600 / -32602: the request or a field is invalid (the message names the field). Nothing was signed or sent. */
export class InvalidRequestError extends CountersignError {
  override name = 'Countersign.InvalidRequestError';
  static override readonly code = -32602;
}

/**
 * -32002 with `data.command`: the request was signed and sent and **no answer came**. The order may rest
 * at the venue: look it up by `coids` (perps client order ids) or `orderHashes` (order book) before
 * sending again. A repeat with the same keys within 24 h gets this error again (across a browser crash too), nothing is
 * sent.
 */
export class OutcomeUnknownError extends CountersignError {
  override name = 'Countersign.OutcomeUnknownError';
  static override readonly code = -32002;
  /** The command that was sent (`createOrders`, `postOrders`, `withdraw` …). */
  get command(): string | undefined {
    return typeof this.data?.command === 'string' ? this.data.command : undefined;
  }
  /** The perps client order ids of the orders sent (empty when none were given). */
  get coids(): string[] {
    return listOf(this.data?.coids);
  }
  /** The order-book order hashes (EIP-712) of the orders sent (empty for perps). */
  get orderHashes(): string[] {
    return listOf(this.data?.orderHashes);
  }
  /** The `idempotencyKey` the request carried (undefined when it had none). */
  get idempotencyKey(): string | undefined {
    return typeof this.data?.idempotencyKey === 'string' ? this.data.idempotencyKey : undefined;
  }
  /**
   * Perps: the EIP-712 digest signed, and the envelope's `salt` and `ts`, to find the command in the history when it
   * had no client order ids.
   */
  get perpsCommand(): { digest: string; salt: number; ts: number } | undefined {
    const { digest, salt, ts } = this.data ?? {};
    return typeof digest === 'string' && typeof salt === 'number' && typeof ts === 'number'
      ? { digest, salt, ts }
      : undefined;
  }
}

/**
 * -32002 without a command: a limit (pending requests per site / in all, a site paused after rejections, the venue's
 * rate limit). Nothing was sent.
 */
export class BusyError extends CountersignError {
  override name = 'Countersign.BusyError';
  static override readonly code = -32002;
}

/**
 * -32003: the venue refused (insufficient margin, order rejected). Sent once; sending it again will be refused again.
 */
export class VenueRefusedError extends CountersignError {
  override name = 'Countersign.VenueRefusedError';
  static override readonly code = -32003;
}

/**
 * Raised by the client, not the provider: Countersign's provider is not there (no EIP-6963 announcement in
 * time, or no `window` at all, as in server-side rendering). `rpcCode` 4900 (disconnected); nothing was sent.
 */
export class NotInstalledError extends CountersignError {
  override name = 'Countersign.NotInstalledError';
  constructor(message: string) {
    super(4900, message);
  }
}

/**
 * Raised by `requireCountersign`: the installed extension is older than the site needs. `version` is its
 * version (undefined when it predates `countersign_getCapabilities`), `missing` the methods it lacks. An
 * `UnsupportedError` (4200), so code that handles unknown methods handles this too; the message says it in
 * words: "Countersign 0.1.0 is older than this site needs: update the extension (missing: …)".
 */
export class ExtensionOutdatedError extends UnsupportedError {
  override name = 'Countersign.ExtensionOutdatedError';
  /** The extension's version, or undefined when it does not answer `countersign_getCapabilities`. */
  readonly version: string | undefined;
  /** The methods the site needs that the extension does not serve. */
  readonly missing: readonly string[];
  constructor(version: string | undefined, missing: readonly string[]) {
    super(
      4200,
      `Countersign ${version ?? '(a version without countersign_getCapabilities)'} is older than this site needs: ` +
        `update the extension (missing: ${missing.join(', ')})`,
      { missing: missing.join(','), ...(version === undefined ? {} : { version }) },
    );
    this.version = version;
    this.missing = missing;
  }
}

const listOf = (x: unknown): string[] => (typeof x === 'string' && x ? x.split(',') : []);

/**
 * The first numeric `code` and the first flat `data` record along `err`'s `cause` chain (viem wraps the provider's
 * error).
 */
function codeAndData(err: unknown): {
  code: number | undefined;
  message: string | undefined;
  data: Record<string, string | number | boolean> | undefined;
} {
  let code: number | undefined;
  let message: string | undefined;
  let data: Record<string, string | number | boolean> | undefined;
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 10; depth++) {
    if (code === undefined && 'code' in e && typeof e.code === 'number') code = e.code;
    if ('data' in e && typeof e.data === 'object' && e.data !== null && !Array.isArray(e.data) && data === undefined) {
      data = Object.fromEntries(
        Object.entries(e.data).filter((kv): kv is [string, string | number | boolean] =>
          ['string', 'number', 'boolean'].includes(typeof kv[1]),
        ),
      );
    }
    // The innermost message is the provider's own sentence (viem prefixes its own).
    if ('shortMessage' in e && typeof e.shortMessage === 'string') message = e.shortMessage;
    else if ('message' in e && typeof e.message === 'string') message = e.message;
    e = 'cause' in e ? e.cause : undefined;
  }
  return { code, message, data };
}

/**
 * Any error from a Countersign request (through viem or the raw provider) as a typed error: by code, and
 * for -32002 by whether `data.command` says the request was sent (`OutcomeUnknownError`) or not
 * (`BusyError`). An error already typed is returned as it is; one without a code becomes a
 * `CountersignError` with code -32603.
 */
export function toCountersignError(err: unknown): CountersignError {
  if (err instanceof CountersignError) return err;
  const { code = -32603, message = 'Countersign request failed.', data } = codeAndData(err);
  switch (code) {
    case 4001:
      return new UserRejectedError(code, message, data);
    case 4100:
      return new NotConnectedError(code, message, data);
    case 4200:
      return new UnsupportedError(code, message, data);
    case 4900:
      return new LockedError(code, message, data);
    case -32600:
    case -32602:
      return new InvalidRequestError(code, message, data);
    case -32002:
      return typeof data?.command === 'string'
        ? new OutcomeUnknownError(code, message, data)
        : new BusyError(code, message, data);
    case -32003:
      return new VenueRefusedError(code, message, data);
    default:
      return new CountersignError(code, message, data);
  }
}
