/**
 * The page path's entry: `ProviderService.request(origin, method, params)` serves one EIP-1193 request
 * of a web page. `ProviderService` is the background half of the EIP-1193 provider: the page half,
 * `window.countersign`, only frames requests (`lib/bridge/provider.ts`); `lib/background/ports.ts` and
 * `lib/background/compose.ts` (`servePage`) hand each one here with its origin. A request runs a chain of named
 * stages (the same as steps 4–8 of `lib/page/README.md`, "A page's order, from the page to the gateway", which follows
 * an order end to end):
 *
 * 1. capture — the request's authority ticket, from its start (`lib/authority/epoch.ts`): checked before
 *    its window, its signature and its send;
 * 2. admit (`policy.ts`) — the origin (the browser's sender, never the message) and the method's record
 *    (`methods/index.ts`: one record per method, with its policy);
 * 3. session gates (`gates.ts`) — connection, active account, lock, panic;
 * 4. parse (`methods/index.ts` `parseCall`) — the params, validated once by the record's schema into a typed
 *    `PageCall`;
 * 5. dispatch — the record's handler, in the method's family (`MethodHost`): `accounts.ts`, `permissions.ts`
 *    (EIP-2255), `grant-permissions.ts` (ERC-7715), `perps.ts`, `orderbook.ts`.
 *
 * The families share one instance of each part: consent (`consent.ts`: build → window → approved
 * artifact), coverage (`coverage.ts`: a standing grant as a caveat, covered or ask), idempotency
 * (`idempotency.ts`: keys, joins, unknown outcomes), the window's flags (`flags.ts`), connections
 * (`connections.ts`) and the venue reads with their caches (`reads.ts` `PageReads`).
 *
 * One rule for every page-reachable signing path: a page names *what* it wants (a perps command, order
 * requests, an L2 route), never bytes to sign. `eth_signTypedData_v4` therefore signs nothing: each
 * venue struct is refused with the method that shows it decoded (4200), and so is anything else.
 */
import { BaseError } from '../errors/base';
import { pageScopes, type Authority } from '../authority/epoch';
import { AccountMethods } from './accounts';
import { Connections } from './connections';
import { Consent } from './consent';
import type { PageRequest, ProviderDeps } from './context';
import { Coverage } from './coverage';
import { sessionGates } from './gates';
import { GrantPermissionMethods } from './grant-permissions';
import { Submissions } from './idempotency';
import type { MethodHost } from './method';
import { methodRecord, PAGE_METHODS, parseCall, type PageCall } from './methods';
import { OrderBookMethods } from './orderbook';
import { PermissionMethods } from './permissions';
import { PerpsMethods } from './perps';
import { admit } from './policy';
import { PageReads } from './reads';

/**
 * Serves page requests (see the module docstring): `request(origin, method, params)` resolves with the
 * method's result or throws a `ProviderRpcError` subclass (or another `BaseError`, mapped by class with
 * `toRpcError`, `lib/errors/rpc.ts`).
 */
export class ProviderService {
  /** The authority epoch every page request captures at its start: the signer's, which the grants share. */
  private readonly authority: Authority;
  private readonly connections: Connections;
  /** The method families the records' handlers run in. */
  private readonly host: MethodHost;

  /**
   * Builds the parts and the method families over `d`. Throws `BaseError` when the grants and the
   * signing service do not share one authority epoch (a second one would let revokes and the signing
   * checks count apart).
   */
  constructor(private readonly d: ProviderDeps) {
    // Started first: a worker that starts must know what a stopped one left in flight.
    const submissions = new Submissions(d.outcomes);
    const authority = (this.authority = d.service.authority);
    if (d.grants && d.grants.authority !== authority)
      throw new BaseError('The grants and the signing service must share one authority epoch.');
    const reads = new PageReads(d);
    const consent = new Consent(d, authority, reads);
    const coverage = new Coverage(d);
    this.connections = new Connections(d.db);
    const accounts = new AccountMethods(d, this.connections);
    const parts = { d, consent, coverage, reads, submissions };
    this.host = {
      accounts,
      permissions: new PermissionMethods(d, authority, this.connections, accounts),
      grantPermissions: new GrantPermissionMethods({ d, authority, consent, reads }),
      perps: new PerpsMethods(parts),
      orderBook: new OrderBookMethods(parts),
      served: () => PAGE_METHODS.filter((r) => r.policy.approval !== 'refused').map((r) => r.name),
    };
  }

  /**
   * Handles one page request from `origin` through the stages of the module docstring. Throws `ProviderRpcError` (or
   * errors mapped by `toRpcError`).
   */
  async request(origin: string, method: string, params: unknown): Promise<unknown> {
    const ticket = this.authority.capture(pageScopes(origin));
    const admitted = admit(origin, method, params);
    // An `ungated` method needs no connection, account or unlocked vault: answered without reading them (only with
    // the open policy, which its record's type requires too).
    const { ungated, policy } = methodRecord(admitted);
    const open = ungated === true && !policy.connected && !policy.unlocked && policy.approval === 'none';
    const session = open
      ? { conn: undefined, active: undefined, granted: undefined }
      : await sessionGates(this.d, this.connections, origin, admitted);
    const call = parseCall(admitted, params);
    return this.dispatch({ origin, ticket, session }, call);
  }

  /** Runs `call` in its method family: its record's handler. */
  private dispatch(req: PageRequest, call: PageCall): Promise<unknown> {
    return methodRecord(call.method).run(this.host, req, call.params);
  }
}
