/**
 * The one point where a signed perps command leaves the background (one submission path, two
 * transports: REST or the perps session). Everything before it — artifact, approval, grant
 * checks, keyed duplicate detection, the panic gate, the weight meter, the signature — is the same
 * whichever transport carries the body; so is what follows: the answer is classified by
 * `classifyPerpsAnswer` into the same typed errors, a missing answer is `Http.NetworkError` (the
 * signer turns it into `OutcomeUnknownError` with the client order ids), and the audit entry is the
 * signer's.
 *
 * The session carries a command when (PROTOCOL.md §5.1 "REST versus WS"): it is one the official client
 * sends over the session (createOrders, cancelOrders, cancelOrdersCOID, updateLeverage), the
 * background's session stream for this account and perps URL exists, it is live (authenticated and
 * subscribed) at the moment of sending, and it authenticated with the proxy that signed the command.
 * Otherwise REST carries it. A command the session did not send (`not_sent`) goes over REST; a command
 * it sent and got no answer for is **never** resent over REST (PROTOCOL.md §2.4: never retry a command
 * whose outcome is unknown).
 */
import { NetworkError } from '../http/json';
import type { SessionCommand, SessionCommandOutcome } from '../streams/perps';
import { sendPerpsCommand } from './client';
import type { PerpsCommand } from './commands';
import type { PerpsEnvelope } from './envelope';
import { classifyPerpsAnswer } from './errors';

/**
 * A live perps session a command may go over (`lib/background/streams.ts` `session(account, perpsUrl)`):
 * `proxy` the address it authenticated with (undefined: a public-only stream, which carries no command); `command`
 * sends a signed command and resolves its outcome (`lib/streams/perps.ts`), never throws.
 */
export type PerpsSessionTransport = {
  readonly proxy: string | undefined;
  command: (cmd: SessionCommand, timeoutMs: number) => Promise<SessionCommandOutcome>;
};

/** The commands the official client sends over the session (PROTOCOL.md §5.1); every other goes over REST. */
const SESSION_COMMANDS: ReadonlySet<string> = new Set([
  'createOrders',
  'cancelOrders',
  'cancelOrdersCOID',
  'updateLeverage',
]);

/**
 * The HTTP status REST answers with each refusal the session reports only by name (the venue's session
 * has no status): so that `classifyPerpsAnswer` gives the same class and message either way —
 * 429 `Perps.RateLimitedError`, 401 "refused the signature or credentials", 409 replayed, else 400.
 */
const REFUSAL_STATUS: Readonly<Record<string, number>> = {
  rate_limited: 429,
  unauthorized: 401,
  unauthenticated: 401,
  invalid_signature: 401,
  unknown_proxy: 401,
  proxy_expired: 401,
  signer_mismatch: 401,
  session_signer_mismatch: 401,
  unknown_account: 401,
  replayed: 409,
};

/**
 * What `submitPerpsCommand` sends and over what. `timeoutMs`: the REST deadline, also the session acknowledgement's
 * (ms).
 */
export type PerpsSubmission = {
  perpsUrl: string;
  command: Pick<PerpsCommand, 'endpoint'>;
  envelope: PerpsEnvelope;
  /** The address that signed `envelope` (the artifact's `signerAddress`). */
  signerAddress: string;
  fetchFn: typeof fetch;
  timeoutMs: number;
  /** The account's session, when the background holds one for `perpsUrl`. */
  session?: PerpsSessionTransport | undefined;
  /**
   * The caller's last check, run synchronously right before the body leaves over either transport (the
   * session frame, and REST — also after the session did not send it); it throws to send nothing
   * (the signer passes its gate and authority check, `lib/authority/epoch.ts`).
   */
  beforeSend?: () => void;
};

/**
 * Sends a signed command over the session when it can carry it (see the module comment), else over
 * REST; returns the gateway's success body. Throws what `sendPerpsCommand` throws: the gateway's typed
 * error (`PerpsGatewayError`, `PerpsRateLimitedError`) or `Http.NetworkError` (no answer: the session
 * dropped after the frame was sent, or the deadline passed — outcome unknown, nothing resent).
 */
export async function submitPerpsCommand(s: PerpsSubmission): Promise<unknown> {
  const { session, envelope } = s;
  if (
    session &&
    SESSION_COMMANDS.has(envelope.op.type) &&
    session.proxy?.toLowerCase() === s.signerAddress.toLowerCase()
  ) {
    s.beforeSend?.();
    const out = await session.command(envelope, s.timeoutMs);
    if (out.kind === 'answer') return sessionAnswer(out.data);
    if (out.kind === 'no_answer') throw new NetworkError(s.perpsUrl, { cause: new Error(`session ${out.reason}`) });
    // not_sent: the session was not live when the command was ready; REST carries it.
  }
  s.beforeSend?.();
  return sendPerpsCommand(s.perpsUrl, s.command, envelope, s.fetchFn);
}

/**
 * The session's `data` for a command, classified as REST's answer would be: the success body, or the same typed error.
 */
function sessionAnswer(data: unknown): unknown {
  const error =
    typeof data === 'object' && data !== null && 'status' in data && data.status === 'err'
      ? 'error' in data && typeof data.error === 'string'
        ? data.error
        : ''
      : undefined;
  const err = classifyPerpsAnswer({
    status: error === undefined ? 200 : (REFUSAL_STATUS[error] ?? 400),
    headers: {},
    body: data,
  });
  if (err) throw err;
  return data;
}
