/**
 * Which transports may carry a signature, a proxy secret, an API secret or passphrase, or a
 * credential-creating request: only encrypted ones. `https:` and `wss:` to any host; `http:` and `ws:`
 * only to this machine's loopback (`127.0.0.1`, `localhost`, `[::1]`: the sandbox) and only where the
 * rule allows it — development and test builds (`BUILD_TRANSPORT_RULE`, `lib/settings/transport.ts`). A
 * release build sends nothing in clear, loopback included.
 *
 * Checked where each request is made: every gateway `fetch` (`guardedFetch`, inside `gatewayTransport`)
 * and every WebSocket the background opens (`guardedWebSocket`). A URL that breaks the rule is refused
 * with `InsecureTransportError` before anything is sent.
 */
import { BaseError } from '../errors/base';

/** Whether cleartext (`http:` / `ws:`) to loopback is allowed (development and test builds only). */
export type TransportRule = { loopbackCleartext: boolean };

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether `hostname` (a URL's `hostname`: no port) is this machine's loopback: `127.0.0.1`, `localhost`, `[::1]`. */
export const isLoopbackHost = (hostname: string): boolean => LOOPBACK.has(hostname);

/**
 * Why `url` may not carry secrets or signatures under `rule`, in words, or undefined when it may.
 * Refused: a URL that does not parse, a scheme other than http(s) / ws(s), and `http:` / `ws:` to a host
 * that is not loopback (or to loopback when `rule.loopbackCleartext` is false).
 */
export function transportRefusal(url: string, rule: TransportRule): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (u.protocol === 'https:' || u.protocol === 'wss:') return undefined;
  if (u.protocol !== 'http:' && u.protocol !== 'ws:') return `uses ${u.protocol}, which Countersign never uses`;
  if (!isLoopbackHost(u.hostname))
    return `is not encrypted (${u.protocol}): Countersign sends signatures and secrets only over https: and wss:`;
  if (!rule.loopbackCleartext)
    return (
      `is not encrypted (${u.protocol} on this machine's loopback): only a ` +
      `development build talks to a local sandbox; a release uses https: and wss: only`
    );
  return undefined;
}

/**
 * Thrown before anything is sent to a URL that breaks the transport rule (`transportRefusal`).
 * `data`: `url`, and `field` when a setting names it (`service`: its words, e.g. "perps gateway").
 * EIP-1193 4100 "unauthorized": nothing was signed or sent.
 */
export class InsecureTransportError extends BaseError {
  override name = 'Http.InsecureTransportError';
  static override readonly code: number | undefined = 4100;
  constructor(url: string, reason: string, setting?: { field: string; service: string }) {
    super(`Nothing was sent: ${setting ? `the ${setting.service} URL ${url}` : url} ${reason}.`, {
      metaMessages: setting ? ['Change it in Settings (Venue).'] : [],
      data: setting ? { url, field: setting.field } : { url },
    });
  }
}

/** Throws `InsecureTransportError` when `url` breaks `rule`. */
export function assertSecureTransport(url: string, rule: TransportRule): void {
  const reason = transportRefusal(url, rule);
  if (reason !== undefined) throw new InsecureTransportError(url, reason);
}

/** The URL a `fetch` call is made to (a string, a `URL` or a `Request`). */
function urlOf(input: Parameters<typeof fetch>[0]): string {
  if (typeof input === 'string') return input;
  if (input instanceof URL) return input.href;
  return input.url;
}

/**
 * `fetchFn` that rejects with `InsecureTransportError`, sending nothing, for a URL that breaks `rule`.
 * Every request it lets through follows no redirect (`redirect: 'error'`: a 3xx answer fails as "no
 * answer"): `fetch` would otherwise re-send the method, body and headers (signatures, API key and
 * passphrase) to wherever the answer points, `http:` included, past the check above.
 */
export function guardedFetch(fetchFn: typeof fetch, rule: TransportRule): typeof fetch {
  return async (input, init) => {
    assertSecureTransport(urlOf(input), rule);
    return fetchFn(input, { ...init, redirect: 'error' });
  };
}

/**
 * A WebSocket constructor that throws `InsecureTransportError` (opening nothing) for a URL that breaks
 * `rule`, and is `Ws` otherwise. The stream clients catch a constructor's throw as a failed open.
 */
export function guardedWebSocket<W extends new (url: string) => object>(Ws: W, rule: TransportRule): W {
  const Guarded = function (this: unknown, url: string) {
    assertSecureTransport(url, rule);
    return new Ws(url);
  };
  return Guarded as unknown as W;
}
