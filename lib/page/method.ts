/**
 * What one page method is: a single record (`PageMethodRecord`) holding its name, its params schema, its
 * policy (connected, unlocked, trading session, approval), whether a standing grant may cover it, its
 * handler and the documentation a site developer reads (summary, request, answer, errors, example) — as
 * MetaMask's PermissionController describes each method once, in its specification. The records are
 * listed in `methods/index.ts`; admission (`policy.ts`), the session gates (`gates.ts`), `PageCall` and
 * `parseCall` (`methods/index.ts`), the dispatch (`request.ts`), the capability answer and the methods table of
 * `lib/dapp/README.md` are derived from them; `methods/methods.test.ts` pins each policy and
 * `lib/dapp/contract.test.ts` holds the site client's types against the records.
 */
import * as v from 'valibot';
import { parseOrThrow } from '../validation';
import type { AccountMethods } from './accounts';
import type { PageRequest } from './context';
import type { GrantPermissionMethods } from './grant-permissions';
import type { OrderBookMethods } from './orderbook';
import type { PermissionMethods } from './permissions';
import type { PerpsMethods } from './perps';

/**
 * What a page method needs before it runs (`gates.ts`): a `connected` origin (4100 otherwise), an `unlocked`
 * vault (4900 otherwise) — of those, `session` ones are served in a trading session too (auto-lock with a live
 * grant; the grant still decides what is signed) — and which approval it asks for (`refused`: always 4200).
 */
export type MethodPolicy = {
  connected: boolean;
  approval: 'none' | 'connect' | 'sign' | 'refused';
} & ({ unlocked: false } | { unlocked: true; session: boolean });

/** The EIP-1193 / EIP-1474 codes a page method documents (`lib/errors/rpc.ts`). */
export type PageErrorCode = 4001 | 4100 | 4200 | 4900 | -32602 | -32002 | -32003;

/**
 * A page method's documentation, the rows of the methods table in `lib/dapp/README.md` (`npm run docs:methods`
 * writes it): `summary` what it does (one sentence), `request` the params as a site sends them (`—`: none read),
 * `answer` what it resolves with, `errors` every code it may answer beyond those any request may get (4100 for an
 * origin that is not https, 4900 on a worker restart) — at least the ones its policy implies (`methods.test.ts`) —,
 * `example` params it accepts (parsed by its schema in the tests), `note` words added to
 * its policy cell.
 */
export type MethodDocs = {
  summary: string;
  request: string;
  answer: string;
  errors: readonly PageErrorCode[];
  example: unknown;
  note?: string;
};

/**
 * What a handler runs in: the method families, one instance each per `ProviderService` (`request.ts`), and
 * `served`, the capability answer's list of served methods (given here, not imported by the record, because it is
 * derived from the list of records that holds the capability record itself).
 */
export type MethodHost = {
  accounts: AccountMethods;
  permissions: PermissionMethods;
  grantPermissions: GrantPermissionMethods;
  perps: PerpsMethods;
  orderBook: OrderBookMethods;
  /** The methods this build serves (every record's name but the refused ones). */
  served: () => string[];
};

/** The only policy an `ungated` method may have: no connection, no unlocked vault, no approval. */
type OpenPolicy = { connected: false; unlocked: false; approval: 'none' };

/**
 * One page method (see the module docstring). `params` parses what the page sent into `P` (`NO_PARAMS` for a
 * method that reads none). `grantable`: a standing grant may cover it — what a grant covers is decided by the
 * grants (`lib/grants/requests.ts` `GRANTABLE_PAGE_METHODS`, which `methods.test.ts` holds equal to the records'
 * flags), and a trading session serves exactly the grantable methods (`policy.session`). `ungated`: answered
 * without the session gates (no connection, account or vault is read), allowed only with the open policy (the
 * type and `request.ts` both hold it). `refuse`: for an `approval: 'refused'` method, the 4200 message for
 * `params` (read only to name the reason). `run` serves an admitted, gated, parsed request in its family
 * (`MethodHost`) and resolves with the answer `R` the page receives.
 */
export type PageMethodRecord<N extends string = string, P = unknown, R = unknown> = {
  name: N;
  params: v.GenericSchema<unknown, P>;
  grantable: boolean;
  refuse?: (params: unknown) => string;
  run(host: MethodHost, req: PageRequest, params: P): Promise<R>;
  docs: MethodDocs;
} & ({ policy: MethodPolicy; ungated?: never } | { policy: OpenPolicy; ungated: true });

/** The params schema of a method that reads none: whatever a page sent is ignored (parsed to `undefined`). */
export const NO_PARAMS = v.pipe(
  v.unknown(),
  v.transform((): undefined => undefined),
);

/** Accepts params as an object or as a one-element array holding it (both EIP-1193 styles). */
export function unwrapParams(params: unknown): unknown {
  return Array.isArray(params) && params.length === 1 ? params[0] : params;
}

/**
 * Parses `params` once with `record`'s schema over the unwrapped params (`unwrapParams`). Throws
 * `InvalidFieldError` (-32602) naming the field (`params.op.type`, `params.orders[0].price` …).
 */
export function parseParams<P>(record: Pick<PageMethodRecord<string, P>, 'params'>, params: unknown): P {
  return parseOrThrow(record.params, unwrapParams(params), 'params');
}

/**
 * A record as written, its name and params schema types kept (`PAGE_METHODS` derives `PageMethod` and `PageCall`;
 * the site client's contract test compares each schema's input with the package's params type).
 */
export function pageMethod<const N extends string, S extends v.GenericSchema<unknown, unknown>, R>(
  record: PageMethodRecord<N, v.InferOutput<S>, R> & { params: S },
): PageMethodRecord<N, v.InferOutput<S>, R> & { params: S } {
  return record;
}
