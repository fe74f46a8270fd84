/**
 * Signing artifacts: everything a signature and a submission need, built **before**
 * consent, stored with the approval, rendered by the approval window, and signed exactly as stored.
 *
 * One canonical request type per path — a perps command (popup or page), order-book orders (popup or
 * page), an L2 request a page will send itself — becomes one artifact:
 * - `perps`: the envelope without `sig` (`op` JSON, `salt` uint32, `ts` Unix ms — seconds for
 *   withdraw —, optional `exp` Unix ms and `label`), the EIP-712 domain and which key signs;
 * - `clob`: each `POST /order` body without `signature` (salt, timestamp ms, amounts in base units,
 *   owner = API key, order type, post-only, expiration seconds) with its exchange contract;
 * - `l2`: method, path, the exact body text, the timestamp (Unix s) and the HMAC message.
 *
 * `signDigests` are the EIP-712 digests the keys sign (none for `l2`: an HMAC, keyed by the API
 * secret, over `message`). `digest` (the *binding digest*) is keccak256 of the artifact's canonical
 * JSON without `digest`: what the approval binds and what the window shows. `verifyArtifact` recomputes
 * every digest from the artifact's content through the same decoders that built it (the perps tuple is
 * rebuilt from the JSON `op` that will be sent, each order struct from the body that will be sent), so
 * an artifact altered after approval — one byte anywhere — is refused before anything is signed. An
 * artifact the builders here made cannot be altered (plain data, frozen at every level): its digests,
 * checked at the build, are held to the approved one without encoding it again; any other object is
 * recomputed in full. Pure: no keys, no I/O.
 */
import * as v from 'valibot';
import { keccak256, stringToHex, type Address, type Hex } from 'viem';
import { BaseError } from '../errors/base';
import { commandFromBody, type PerpsBodyOp, type PerpsCommand, type PerpsEndpoint } from '../perps/commands';
import { DEFAULT_COMMAND_TIMEOUT_MS } from '../perps/envelope';
import {
  createProxyDigest,
  perpsOpDigest,
  withdrawDigest,
  type PerpsCommandDomain,
  type PerpsWithdrawDomain,
} from '../perps/signing';
import { l2Message } from '../clob/auth';
import { clobOrderDigest, exchangeAddress, parseClobOrder, type OrderType, type SignedOrderJson } from '../clob/order';
import { clobOrderLine } from '../clob/words';
import { describePerpsCommand, type PerpsSteps } from '../perps/words';

/** The unsigned perps envelope: what is sent once `sig` is added. */
export type UnsignedPerpsEnvelope = { op: PerpsBodyOp; salt: number; ts: number; exp?: number; label?: string };

/** A perps command ready to sign. `domain` is the withdraw domain (with `verifyingContract`) for withdraw. */
export type PerpsArtifact = {
  kind: 'perps';
  account: Address;
  key: 'owner' | 'proxy';
  /** The address whose key signs (owner, or the proxy key in use when the artifact was built). */
  signerAddress: Address;
  domain: PerpsCommandDomain | PerpsWithdrawDomain;
  endpoint: PerpsEndpoint;
  envelope: UnsignedPerpsEnvelope;
  /** true: sign and send to the gateway; false: sign and hand the envelope back (perps_signCommand). */
  submit: boolean;
  signDigests: readonly Hex[];
  digest: Hex;
  /** When the artifact was built and until when its `ts` is fresh enough for the gateway (Unix ms). */
  builtAt: number;
  validUntil: number;
};

/** A `POST /order` body without the signature. */
export type UnsignedOrderBody = {
  deferExec: false;
  postOnly: boolean;
  order: Omit<SignedOrderJson, 'signature'>;
  owner: string;
  orderType: OrderType;
};

/** Order-book orders ready to sign and post (`POST /order` for one, `POST /orders` for more). */
export type ClobArtifact = {
  kind: 'clob';
  account: Address;
  key: 'owner';
  signerAddress: Address;
  chainId: number;
  path: '/order' | '/orders';
  orders: readonly { verifyingContract: Address; negRisk: boolean; tickSize: string; body: UnsignedOrderBody }[];
  signDigests: readonly Hex[];
  digest: Hex;
  builtAt: number;
  validUntil: number;
};

/** L2 headers for a request the page sends itself. `timestamp` Unix s; `body` the exact text. */
export type L2Artifact = {
  kind: 'l2';
  account: Address;
  key: 'api';
  method: string;
  requestPath: string;
  body?: string;
  timestamp: number;
  message: string;
  signDigests: readonly Hex[];
  digest: Hex;
  builtAt: number;
  validUntil: number;
};

/**
 * What the approval window shows and the signer signs: a perps envelope, order-book orders, or an L2 request (by
 * `kind`).
 */
export type SigningArtifact = PerpsArtifact | ClobArtifact | L2Artifact;

/** How long a perps artifact stays fresh: the gateway accepts a `ts` up to the command timeout old; 10 s margin. */
export const PERPS_ARTIFACT_TTL_MS = DEFAULT_COMMAND_TIMEOUT_MS - 10_000;
/** Order-book orders and L2 messages: the exchange accepts an L2 timestamp within 300 s; 60 s margin. */
export const CLOB_ARTIFACT_TTL_MS = 240_000;

/** Thrown when an artifact's content does not reproduce the digests that were approved. Nothing is signed. */
export class ArtifactMismatchError extends BaseError {
  override name = 'Signer.ArtifactMismatchError';
  static override readonly code = 4001;
  constructor(what: string) {
    super('What would be signed differs from what was approved; nothing was signed.', { details: what });
  }
}

/** keccak256 of the artifact's canonical JSON (every field but `digest`, in construction order). */
export function bindingDigest(a: Omit<SigningArtifact, 'digest'> & { digest?: Hex }): Hex {
  const { digest: _omit, ...rest } = a;
  return keccak256(stringToHex(JSON.stringify(rest)));
}

/**
 * The digests of artifacts built in this worker by `perpsArtifact` / `clobArtifact`, computed from their content at the
 * build and checked as `verifyArtifact` checks them: such an artifact is plain data frozen through and through (no
 * getter, no prototype but the plain ones), so its content cannot differ from what was digested, and `verifyArtifact`
 * need not encode and hash it again. An artifact that came any other way (a copy, one rebuilt from storage) or is not
 * plain data is not here and is verified in full.
 */
const builtDigests = new WeakMap<SigningArtifact, readonly Hex[]>();

/** Freezes an artifact and everything in it. */
export function freezeArtifact<T extends SigningArtifact>(a: T): T {
  // Every level, even one frozen already (a shallow freeze upstream leaves what is inside it open).
  const deep = (x: unknown): void => {
    if (x && typeof x === 'object') {
      Object.freeze(x);
      for (const v of Object.values(x)) deep(v);
    }
  };
  deep(a);
  return a;
}

/**
 * Whether `x` is plain data all through: objects and arrays of the plain prototypes with no getters or setters (a
 * frozen getter still answers what it likes), so freezing it fixes every value `JSON.stringify` and the digests read.
 */
function plainData(x: unknown): boolean {
  if (typeof x === 'function') return false; // an own `toJSON` would answer what it likes
  if (!x || typeof x !== 'object') return true;
  const proto: unknown = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) return false;
  for (const d of Object.values(Object.getOwnPropertyDescriptors(x)))
    if (d.get || d.set || !plainData(d.value)) return false;
  return true;
}

/** The perps command the envelope's `op` (and `label`) decode to. Throws `InvalidFieldError`. */
export function perpsArtifactCommand(a: Pick<PerpsArtifact, 'envelope'>): PerpsCommand {
  return commandFromBody(a.envelope.op, a.envelope.label);
}

/** The EIP-712 digest of a perps envelope on `domain`, recomputed from the JSON `op` that is sent. */
export function perpsEnvelopeDigest(
  domain: PerpsCommandDomain | PerpsWithdrawDomain,
  envelope: UnsignedPerpsEnvelope,
): { command: PerpsCommand; digest: Hex } {
  const command = commandFromBody(envelope.op, envelope.label);
  const { salt, ts } = envelope;
  if (command.struct === 'Withdraw') {
    if (!('verifyingContract' in domain)) throw new ArtifactMismatchError('withdraw without the withdraw domain');
    return { command, digest: withdrawDigest({ domain, ...command.withdraw!, salt, ts }) };
  }
  if (command.struct === 'CreateProxy') {
    const p = command.createProxy!;
    return { command, digest: createProxyDigest({ domain, proxy: p.proxy, expiry: p.expiry, salt, ts }) };
  }
  return { command, digest: perpsOpDigest({ domain, op: command.op, salt, ts }) };
}

/** The order struct inside an unsigned body (the 11 signed fields), validated. */
export function orderStructOf(body: UnsignedOrderBody) {
  const { expiration: _e, ...signed } = body.order;
  return parseClobOrder({ ...signed, salt: String(signed.salt) });
}

/** Builds a perps artifact (digests filled in, frozen). `builtAt` Unix ms. */
export function perpsArtifact(
  input: Omit<PerpsArtifact, 'kind' | 'signDigests' | 'digest' | 'validUntil'>,
): PerpsArtifact {
  const { command, digest: sd } = perpsEnvelopeDigest(input.domain, input.envelope);
  const base = {
    kind: 'perps' as const,
    ...input,
    signDigests: [sd],
    validUntil: input.builtAt + PERPS_ARTIFACT_TTL_MS,
  };
  if (base.kind !== 'perps') throw new ArtifactMismatchError('kind'); // input naming another kind
  const a = freezeArtifact({ ...base, digest: bindingDigest(base) });
  const consistent =
    plainData(a) &&
    command.signer === a.key &&
    command.endpoint.method === a.endpoint.method &&
    command.endpoint.path === a.endpoint.path;
  if (consistent) builtDigests.set(a, a.signDigests);
  return a;
}

/** Builds an order-book artifact (digests filled in, frozen). */
export function clobArtifact(
  input: Omit<ClobArtifact, 'kind' | 'key' | 'signDigests' | 'digest' | 'validUntil' | 'path'>,
): ClobArtifact {
  let consistent = input.orders.length > 0;
  const signDigests = input.orders.map((o) => {
    const order = orderStructOf(o.body);
    const signer = order.signatureType === 3 ? order.maker : input.signerAddress;
    consistent &&=
      o.verifyingContract === exchangeAddress({ negRisk: o.negRisk }) &&
      order.signer.toLowerCase() === signer.toLowerCase();
    return clobOrderDigest({ chainId: input.chainId, verifyingContract: o.verifyingContract, order });
  });
  const path: ClobArtifact['path'] = input.orders.length === 1 ? '/order' : '/orders';
  const base = {
    kind: 'clob' as const,
    account: input.account,
    key: 'owner' as const,
    signerAddress: input.signerAddress,
    chainId: input.chainId,
    path,
    orders: input.orders,
    signDigests,
    builtAt: input.builtAt,
    validUntil: input.builtAt + CLOB_ARTIFACT_TTL_MS,
  };
  const a = freezeArtifact({ ...base, digest: bindingDigest(base) });
  if (consistent && plainData(a)) builtDigests.set(a, a.signDigests);
  return a;
}

/** Builds an L2 artifact (message and digest filled in, frozen). */
export function l2Artifact(input: {
  account: Address;
  method: string;
  requestPath: string;
  body?: string;
  timestamp: number;
  builtAt: number;
}): L2Artifact {
  const signDigests: Hex[] = []; // HMAC: nothing is signed with a key
  const base = {
    kind: 'l2' as const,
    account: input.account,
    key: 'api' as const,
    method: input.method,
    requestPath: input.requestPath,
    ...(input.body === undefined ? {} : { body: input.body }),
    timestamp: input.timestamp,
    message: l2Message(input),
    signDigests,
    builtAt: input.builtAt,
    validUntil: input.builtAt + CLOB_ARTIFACT_TTL_MS,
  };
  return freezeArtifact({ ...base, digest: bindingDigest(base) });
}

/**
 * Recomputes every digest of `a` from its content and checks them against the stored ones and the binding digest
 * against `approvedDigest`. Returns the digests to sign. Throws `ArtifactMismatchError` (or the decoder's
 * `InvalidFieldError`) — before anything is signed. An artifact built in this worker (plain data frozen at every level,
 * its digests checked at the build: `builtDigests`) is held to `approvedDigest` without encoding it again.
 */
export function verifyArtifact(a: SigningArtifact, approvedDigest: Hex): readonly Hex[] {
  const built = builtDigests.get(a); // checked at its build, and frozen since
  if (built) {
    if (a.digest !== approvedDigest) throw new ArtifactMismatchError('binding digest');
    return built;
  }
  let digests: Hex[];
  switch (a.kind) {
    case 'perps': {
      const { command, digest } = perpsEnvelopeDigest(a.domain, a.envelope);
      if (command.signer !== a.key) throw new ArtifactMismatchError('signing key');
      if (command.endpoint.method !== a.endpoint.method || command.endpoint.path !== a.endpoint.path)
        throw new ArtifactMismatchError('endpoint');
      digests = [digest];
      break;
    }
    case 'clob': {
      if (a.orders.length < 1 || a.path !== (a.orders.length === 1 ? '/order' : '/orders'))
        throw new ArtifactMismatchError('path');
      digests = a.orders.map((o) => {
        if (o.verifyingContract !== exchangeAddress({ negRisk: o.negRisk }))
          throw new ArtifactMismatchError('exchange contract');
        const order = orderStructOf(o.body);
        // Type 3 (deposit wallet): maker = signer = the wallet; signDepositWalletOrder checks it is the key's.
        const signer = order.signatureType === 3 ? order.maker : a.signerAddress;
        if (order.signer.toLowerCase() !== signer.toLowerCase()) throw new ArtifactMismatchError('order signer');
        return clobOrderDigest({ chainId: a.chainId, verifyingContract: o.verifyingContract, order });
      });
      break;
    }
    case 'l2':
      if (a.message !== l2Message(a)) throw new ArtifactMismatchError('L2 message');
      digests = [];
      break;
    default:
      throw new ArtifactMismatchError('kind');
  }
  if (digests.length !== a.signDigests.length || digests.some((d, i) => d !== a.signDigests[i]))
    throw new ArtifactMismatchError('signed digests');
  const binding = bindingDigest(a);
  if (binding !== a.digest || binding !== approvedDigest) throw new ArtifactMismatchError('binding digest');
  return digests;
}

/** What the approval window and the audit log say about an artifact: title, plain-words lines, key. */
export type ArtifactDescription = { title: string; lines: string[]; signer: 'owner key' | 'proxy key' | 'API key' };

/**
 * One line per order-book order, the order book's words (`clobOrderLine`, `lib/clob/words.ts`) decoded from the signed
 * amounts: side, shares, token id, price, USDC, order type and flags.
 */
function describeOrderBody(o: { body: UnsignedOrderBody; negRisk?: boolean }): string {
  return clobOrderLine({ ...o.body, negRisk: o.negRisk });
}

const digits = v.pipe(v.string(), v.regex(/^\d{1,78}$/));
const address = v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/));

/**
 * One order of an L2 `POST /order(s)` body a page will send itself, as far as the window words it: token id, side,
 * maker / taker amounts (base-unit integer strings), maker and signer addresses, and an expiration (Unix seconds)
 * that a GTD order must carry. An order without them is shown as one the window cannot decode, never worded with a
 * part left out.
 */
const l2OrderBody = v.pipe(
  v.looseObject({
    order: v.looseObject({
      tokenId: digits,
      side: v.picklist(['BUY', 'SELL']),
      makerAmount: digits,
      takerAmount: digits,
      maker: address,
      signer: address,
      expiration: v.optional(v.pipe(v.string(), v.regex(/^\d{1,12}$/))),
    }),
    orderType: v.pipe(v.string(), v.maxLength(8)),
    postOnly: v.optional(v.boolean()),
  }),
  v.check((b) => b.orderType !== 'GTD' || b.order.expiration !== undefined, 'a GTD order needs an expiration'),
);

/** Plain words for an L2 request body the page will send (orders decoded, cancels listed). */
function describeL2Body(method: string, path: string, body: string | undefined): string[] {
  if (!body) return ['No body.'];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [`Body (not JSON): ${body.slice(0, 200)}${body.length > 200 ? '…' : ''}`];
  }
  const route = path.split('?')[0];
  if (method === 'POST' && (route === '/order' || route === '/orders')) {
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.slice(0, 15).map((x) => {
      try {
        return clobOrderLine(v.parse(l2OrderBody, x));
      } catch {
        return `An order this window cannot decode: ${JSON.stringify(x).slice(0, 200)}`;
      }
    });
  }
  if (method === 'DELETE' && route === '/order' && parsed && typeof parsed === 'object' && 'orderID' in parsed)
    return [`Cancel order ${String(parsed.orderID).slice(0, 80)}`];
  if (method === 'DELETE' && route === '/orders' && Array.isArray(parsed))
    return [
      `Cancel ${parsed.length} order(s): ${parsed
        .slice(0, 5)
        .map((x) => String(x).slice(0, 20))
        .join(', ')}${parsed.length > 5 ? ', …' : ''}`,
    ];
  return [`Body: ${body.slice(0, 200)}${body.length > 200 ? '…' : ''}`];
}

/**
 * Decodes an artifact into what the approval window shows, in each venue's order words (`lib/perps/words.ts`,
 * `lib/clob/words.ts`). `symbol` names a perps instrument id; `steps`, when given, the tick and lot its numbers are
 * padded to. Throws the decoder's `InvalidFieldError` for an artifact that does not decode (nothing to approve).
 */
export function describeArtifact(
  a: SigningArtifact,
  symbol: (iid: number) => string,
  steps?: (iid: number) => PerpsSteps,
): ArtifactDescription {
  switch (a.kind) {
    case 'perps': {
      const { title, lines } = describePerpsCommand(perpsArtifactCommand(a), symbol, steps);
      return {
        title,
        lines: a.submit ? lines : [...lines, 'The signed command is returned to the site, which may submit it.'],
        signer: a.key === 'owner' ? 'owner key' : 'proxy key',
      };
    }
    case 'clob':
      return {
        title: a.orders.length > 1 ? `Place ${a.orders.length} order-book orders` : 'Place an order-book order',
        lines: a.orders.map((o) => describeOrderBody(o)),
        signer: 'owner key',
      };
    case 'l2':
      return {
        title: 'Authenticate a request',
        lines: [
          `Sign ${a.method} ${a.requestPath.slice(0, 120)} for the order-book exchange with your API key.`,
          ...describeL2Body(a.method, a.requestPath, a.body),
        ],
        signer: 'API key',
      };
  }
}
