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
 * 2. admit (`policy.ts`) — the origin (the browser's sender, never the message) and the method policy;
 * 3. session gates (`gates.ts`) — connection, active account, lock, panic;
 * 4. parse (`params.ts`) — the params, validated once into a typed `PageCall`;
 * 5. dispatch — to the method's family: `accounts.ts`, `permissions.ts` (EIP-2255),
 *    `grant-permissions.ts` (ERC-7715), `perps.ts`, `orderbook.ts`, `capabilities.ts`.
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
import { unsupported } from '../errors/rpc';
import { pageScopes, type Authority } from '../authority/epoch';
import { AccountMethods } from './accounts';
import { Connections } from './connections';
import { Consent } from './consent';
import type { PageRequest, ProviderDeps } from './context';
import { capabilities } from './capabilities';
import { Coverage } from './coverage';
import { sessionGates } from './gates';
import { GrantPermissionMethods } from './grant-permissions';
import { Submissions } from './idempotency';
import { OrderBookMethods } from './orderbook';
import { parseCall, type PageCall } from './params';
import { PermissionMethods } from './permissions';
import { PerpsMethods } from './perps';
import { admit, typedDataRefusal } from './policy';
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
  private readonly accounts: AccountMethods;
  private readonly permissions: PermissionMethods;
  private readonly grantPermissions: GrantPermissionMethods;
  private readonly perps: PerpsMethods;
  private readonly orderBook: OrderBookMethods;

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
    this.accounts = new AccountMethods(d, this.connections);
    this.permissions = new PermissionMethods(d, authority, this.connections, this.accounts);
    this.grantPermissions = new GrantPermissionMethods({ d, authority, consent, reads });
    const parts = { d, consent, coverage, reads, submissions };
    this.perps = new PerpsMethods(parts);
    this.orderBook = new OrderBookMethods(parts);
  }

  /**
   * Handles one page request from `origin` through the stages of the module docstring. Throws `ProviderRpcError` (or
   * errors mapped by `toRpcError`).
   */
  async request(origin: string, method: string, params: unknown): Promise<unknown> {
    const ticket = this.authority.capture(pageScopes(origin));
    const admitted = admit(origin, method, params);
    // Needs no connection, account or unlocked vault: answered without reading them.
    if (admitted === 'eth_chainId') return this.accounts.chainId();
    const session = await sessionGates(this.d, this.connections, origin, admitted);
    const call = parseCall(admitted, params);
    return this.dispatch({ origin, ticket, session }, call);
  }

  /** Runs `call` in its method family. */
  private dispatch(req: PageRequest, call: PageCall): Promise<unknown> {
    switch (call.method) {
      case 'eth_chainId':
        return this.accounts.chainId();
      case 'eth_accounts':
        return this.accounts.accounts(req);
      case 'eth_requestAccounts':
      case 'wallet_connect':
        return this.accounts.connect(req.origin, req.session.active, false);
      case 'wallet_requestPermissions':
        return this.permissions.request(req);
      case 'wallet_getPermissions':
        return this.permissions.get(req);
      case 'wallet_revokePermissions':
        return this.permissions.revoke(req);
      case 'wallet_grantPermissions':
        return this.grantPermissions.grant(req, call.params);
      case 'perps_sendCommand':
        return this.perps.send(req, call.params);
      case 'perps_signCommand':
        return this.perps.sign(req, call.params);
      case 'clob_postOrders':
        return this.orderBook.post(req, call.params);
      case 'clob_signRequest':
        return this.orderBook.sign(req, call.params);
      case 'countersign_getCapabilities':
        return Promise.resolve(capabilities());
      case 'eth_signTypedData_v4':
        // Refused at admission (`METHOD_POLICY`); listed so every method has its line.
        return Promise.reject(unsupported(typedDataRefusal(undefined)));
    }
  }
}
