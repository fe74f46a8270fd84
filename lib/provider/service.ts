/**
 * Page requests (issue #6; issues #13, #14): the origin comes from the browser's sender (the content
 * script's tab URL), never from the message. Every request is checked against the method policy
 * (connected origin, unlocked vault), validated and decoded into one canonical request. For anything
 * that signs, the signing service builds the complete artifact first (`lib/signer/artifact.ts`); the
 * approval window shows that artifact decoded in plain words with its binding digest; on approval the
 * service signs exactly that artifact and sends exactly its body. Nothing is rebuilt after consent.
 *
 * One rule for every page-reachable signing path: a page names *what* it wants (a perps command, order
 * requests, an L2 route), never bytes to sign. `eth_signTypedData_v4` therefore signs nothing: each
 * venue struct is refused with the method that shows it decoded (4200), and so is anything else.
 *
 * Accounts (issue #14 §3): a connection records the account it was granted; a site acts only while
 * that account is the active one (otherwise 4100 and `eth_accounts` is empty).
 *
 * Standing grants (issue #11): a `perps_sendCommand` or `clob_postOrders` that the origin's live grant
 * covers is signed without a window (the same artifact pipeline, counted against the grant and marked
 * in the audit log); one outside the grant opens the window, which says which limit it exceeds.
 * Fund-moving and key commands, `perps_signCommand` and `clob_signRequest` always ask.
 */
import { keccak256, numberToHex, toHex, type Address } from 'viem';
import { commandFromBody, type PerpsCommand, type PerpsOrderInput } from '../perps/commands';
import { InvalidFieldError, parseOrThrow } from '../validation';
import type { ApprovalKind, ApprovalRefresh, ApprovalRegistry, ApprovalView } from '../approvals/registry';
import type { SigningService, ClobOrderRequest } from '../signer/service';
import { describeArtifact, perpsArtifactCommand, type SigningArtifact } from '../signer/artifact';
import type { OwnerInfo, Vault } from '../vault/vault';
import type { VaultDb } from '../vault/db';
import { readSettings } from '../settings';
import { activeAccount } from '../accounts';
import type { GrantService } from '../grants/service';
import type { GrantRequest } from '../grants/evaluate';
import { groupDecimal, shortAddress } from '../format';
import { disconnected, unauthorized, unsupported } from './errors';
import { checkL2Route, clobOrdersParamsSchema, clobSignParamsSchema, isPageMethod, METHOD_POLICY, perpsParamsSchema, typedDataRefusal, unwrapParams } from './methods';

/** Approval time-to-live: trading 60 s; withdraw and transfer 300 s. */
export const TTL_TRADING_MS = 60_000;
export const TTL_FUNDS_MS = 300_000;

/** `https:` origins, or `http:` on localhost / 127.0.0.1 / [::1]. */
export function isAllowedOrigin(origin: string): boolean {
  try {
    const u = new URL(origin);
    if (u.protocol === 'https:') return true;
    return u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  } catch {
    return false;
  }
}

export type ProviderDeps = {
  /** Standing grants; absent: every signature asks. */
  grants?: GrantService;
  /**
   * Whether the dead-man's kill switch of `venue` is live for `account` (issue #17 §6); a request a grant
   * covers is signed without a window only when it answers true. Absent: grants are not checked against it.
   */
  killSwitchArmed?: (venue: 'perps' | 'clob', account: string) => Promise<boolean>;
  vault: Vault;
  db: VaultDb;
  service: SigningService;
  registry: ApprovalRegistry;
  /** Shows the approval window (one at a time). */
  showApprovals: () => Promise<void>;
  /** Sends an event to every page of `origin` (or of every origin when `origin` is undefined). */
  emit: (origin: string | undefined, event: 'accountsChanged' | 'connect' | 'disconnect', data: unknown) => void;
};

const DESTINATIONS_KEY = 'usedDestinations';

export class ProviderService {
  private symbols: Map<number, string> | undefined;

  constructor(private readonly d: ProviderDeps) {}

  private async connection(origin: string) {
    return this.d.db.get('connections', origin);
  }

  private async symbol(): Promise<(iid: number) => string> {
    if (!this.symbols) {
      try {
        const list = (await this.d.service.perpsRead(undefined, 'instruments')) as { instrument_id: number; symbol: string }[];
        this.symbols = new Map(list.map((i) => [i.instrument_id, String(i.symbol).slice(0, 20)]));
      } catch {
        return (iid) => `instrument #${iid}`;
      }
    }
    const m = this.symbols;
    return (iid) => m.get(iid) ?? `instrument #${iid}`;
  }

  /** Handles one page request from `origin`. Throws `ProviderRpcError` (or errors mapped by `toRpcError`). */
  async request(origin: string, method: string, params: unknown): Promise<unknown> {
    if (!isAllowedOrigin(origin)) throw unauthorized('Countersign only serves https sites (and localhost).');
    if (!isPageMethod(method)) throw unsupported(`Countersign does not support ${method.slice(0, 64)}.`);
    const policy = METHOD_POLICY[method];
    if (policy.approval === 'refused') throw unsupported(typedDataRefusal(params));
    const conn = await this.connection(origin);
    const active = await activeAccount(this.d.db, this.d.vault);
    const granted = conn && active && conn.accounts[0]?.toLowerCase() === active.address.toLowerCase() ? active : undefined;
    if (policy.connected && !conn) throw unauthorized();
    if (policy.connected && !granted) throw unauthorized('This site is connected to another account than the active one. Switch back in Countersign, or connect again.');
    if (policy.unlocked && !this.d.vault.unlocked) throw disconnected('Countersign is locked. Open the extension and unlock it.');
    switch (method) {
      case 'eth_chainId':
        return numberToHex((await readSettings(this.d.db)).clobChainId);
      case 'eth_accounts':
        return granted && this.d.vault.unlocked ? [granted.address] : [];
      case 'eth_requestAccounts':
      case 'wallet_connect':
        return this.connect(origin, active);
      case 'wallet_revokePermissions':
        await this.d.db.delete('connections', origin);
        await this.d.grants?.revokeOrigin(origin);
        this.d.emit(origin, 'accountsChanged', []);
        this.d.emit(origin, 'disconnect', { code: 4900, message: 'Disconnected by the site.' });
        return null;
      case 'perps_sendCommand':
      case 'perps_signCommand':
        return this.perps(origin, granted!, method === 'perps_sendCommand', params);
      case 'clob_postOrders':
        return this.clobPost(origin, granted!, params);
      case 'clob_signRequest':
        return this.clobSign(origin, granted!, params);
      case 'eth_signTypedData_v4':
        throw unsupported(typedDataRefusal(params));
    }
  }

  /**
   * Builds the artifact, shows it decoded, waits for the person, and returns the approved view (its
   * artifact and digest exactly as approved). The artifact is rebuilt only while pending, when it
   * would go stale (`validUntil`); the window then shows the new digest and re-arms.
   */
  /** The perps command as the grant evaluator sees it. */
  private static perpsGrantRequest(cmd: PerpsCommand): GrantRequest {
    switch (cmd.type) {
      case 'createOrders':
        return {
          kind: 'order',
          venue: 'perps',
          orders: (cmd.body.args as PerpsOrderInput[]).map((o) => ({
            market: String(o.iid),
            buy: o.buy,
            size: o.qty,
            ...(o.p ? { price: o.p } : o.tr ? { price: o.tr.trp } : {}),
            ...(o.po ? { postOnly: true } : {}),
            ...(o.ro ? { reduceOnly: true } : {}),
          })),
        };
      case 'cancelOrders':
      case 'cancelOrdersCOID':
      case 'cancelAll':
      case 'autoCancel':
        return { kind: 'cancel' };
      case 'updateLeverage': {
        const a = cmd.body.args as { iid: number; lev: number };
        return { kind: 'leverage', market: String(a.iid), leverage: a.lev };
      }
      default:
        return { kind: 'never', what: cmd.type === 'withdraw' ? 'A withdrawal' : cmd.type === 'internalTransfer' ? 'A transfer' : 'Managing keys and margin' };
    }
  }

  /** The instruments or tokens an artifact trades (to prefill a grant). */
  private static marketsOf(a: SigningArtifact | undefined): string[] {
    if (a?.kind === 'clob') return [...new Set(a.orders.map((o) => o.body.order.tokenId))];
    if (a?.kind === 'perps' && a.envelope.op.type === 'createOrders') return [...new Set((a.envelope.op.args as PerpsOrderInput[]).map((o) => String(o.iid)))];
    return [];
  }

  private readonly mids = new Map<string, { at: number; mid: Promise<string | undefined> }>();

  /** Mid price of a perps instrument (ticker read, reused for 1 s) for grant checks. */
  private async perpsMid(market: string): Promise<string | undefined> {
    const hit = this.mids.get(market);
    if (hit && Date.now() - hit.at < 1_000) return hit.mid;
    const mid = this.d.service.perpsRead(undefined, 'tickers', { instrument_id: Number(market) }).then((t) => {
      const m = (t as { mid_price?: unknown }[])[0]?.mid_price;
      return typeof m === 'string' && /^\d{1,20}(\.\d{1,20})?$/.test(m) ? m : undefined;
    });
    this.mids.set(market, { at: Date.now(), mid });
    mid.catch(() => this.mids.delete(market));
    return mid;
  }

  /**
   * Asks the origin's grant about `req`: `covered` when it may be signed without a window; otherwise
   * the flag for the window (`undefined` when there is no grant).
   */
  private async grantCheck(origin: string, account: OwnerInfo, req: GrantRequest, mid: (m: string) => Promise<string | undefined>): Promise<{ covered: boolean; flag?: string }> {
    const verdict = await this.d.grants?.consume(origin, account.address, req, mid);
    if (!verdict) return { covered: false };
    const venue = req.kind === 'order' ? req.venue : 'perps';
    if (verdict.ok && this.d.killSwitchArmed && !(await this.d.killSwitchArmed(venue, account.address))) {
      return { covered: false, flag: `Your standing permission for this site is paused: the ${venue === 'perps' ? 'perps auto-cancel' : 'order-book heartbeat'} (dead-man switch) is not armed, so this request needs your approval.` };
    }
    return verdict.ok ? { covered: true } : { covered: false, flag: `Outside your standing permission for this site: ${verdict.limit}.` };
  }

  private async approveArtifact(
    origin: string,
    kind: ApprovalKind,
    account: OwnerInfo,
    build: () => Promise<SigningArtifact>,
    flagsFor: (a: SigningArtifact) => Promise<string[]>,
    ttlMs: number,
  ): Promise<ApprovalView & { artifact: SigningArtifact }> {
    this.d.registry.checkCapacity(origin);
    const symbol = await this.symbol();
    const make = async () => {
      const artifact = await build();
      const { title, lines, signer } = describeArtifact(artifact, symbol);
      const refresh: ApprovalRefresh = { artifact, digest: artifact.digest, lines, flags: await flagsFor(artifact), refreshAt: artifact.validUntil };
      return { title, signer, refresh };
    };
    const first = await make();
    const grantable = (kind === 'clob' || (kind === 'perps' && first.refresh.artifact?.kind === 'perps' && first.refresh.artifact.submit && ProviderService.perpsGrantRequest(perpsArtifactCommand(first.refresh.artifact)).kind !== 'never')) && !!this.d.grants;
    const { approved } = this.d.registry.add(
      { origin, kind, title: first.title, signer: first.signer, account: { address: account.address, label: account.label }, grantable, markets: ProviderService.marketsOf(first.refresh.artifact), ...first.refresh },
      ttlMs,
      async () => (await make()).refresh,
    );
    await this.d.showApprovals();
    const view = await approved;
    if (!view.artifact) throw disconnected('The approved request carried nothing to sign.');
    return view as ApprovalView & { artifact: SigningArtifact };
  }

  private async connect(origin: string, active: OwnerInfo | undefined): Promise<string[]> {
    if (!active) throw unauthorized('Countersign has no account yet. Finish setup in the extension first.');
    const existing = await this.connection(origin);
    if (existing && existing.accounts[0]?.toLowerCase() === active.address.toLowerCase()) return existing.accounts;
    this.d.registry.checkCapacity(origin);
    const { approved } = this.d.registry.add(
      {
        origin,
        kind: 'connect',
        title: 'Connect this site',
        lines: [`Let ${origin} see your address ${shortAddress(active.address)}${active.label ? ` (“${active.label}”)` : ''} and ask you to sign trades.`, 'Every signature still needs your approval.'],
        flags: existing ? ['This site was connected to another of your accounts; it will now act for this one.'] : [],
        signer: null,
        account: { address: active.address, label: active.label },
        digest: keccak256(toHex(`connect:${origin}:${active.address}`)),
      },
      TTL_FUNDS_MS,
    );
    await this.d.showApprovals();
    await approved;
    await this.d.db.put('connections', { origin, accounts: [active.address], connectedAt: Date.now() });
    this.d.emit(origin, 'connect', { chainId: numberToHex((await readSettings(this.d.db)).clobChainId) });
    this.d.emit(origin, 'accountsChanged', [active.address]);
    return [active.address];
  }

  private async perpsFlags(account: Address, cmd: PerpsCommand): Promise<string[]> {
    const flags: string[] = [];
    const args = cmd.body.args as Record<string, unknown>;
    if (cmd.type === 'withdraw' || cmd.type === 'internalTransfer') {
      const used = ((await this.d.db.get('settings', DESTINATIONS_KEY)) as string[] | undefined) ?? [];
      if (!used.includes(String(args.to).toLowerCase())) flags.push('A new address: you have never sent funds here.');
    }
    if (cmd.type === 'createOrders') {
      const orders = cmd.body.args as PerpsOrderInput[];
      if (orders.length > 1) flags.push(`A batch of ${orders.length} orders.`);
      let positions: { instrument_id: number; size: string }[] = [];
      try {
        positions = ((await this.d.service.perpsRead(account, 'portfolio')) as { positions: { instrument_id: number; size: string }[] }).positions ?? [];
      } catch {
        /* no portfolio read: skip the flip check */
      }
      for (const o of orders) {
        if (o.p) {
          try {
            const book = (await this.d.service.perpsBook(o.iid)) as { bids: [string, string][]; asks: [string, string][] };
            const best = Number(o.buy ? book.asks[0]?.[0] : book.bids[0]?.[0]);
            const p = Number(o.p);
            if (best > 0 && (o.buy ? p > best * 1.05 : p < best * 0.95)) flags.push(`The price ${groupDecimal(o.p)} is more than 5% through the book (best ${o.buy ? 'ask' : 'bid'} ${best}).`);
          } catch {
            /* no book: no flag */
          }
        }
        const pos = Number(positions.find((x) => x.instrument_id === o.iid)?.size ?? '0');
        if (!o.ro && pos !== 0 && (o.buy ? pos < 0 : pos > 0) && Number(o.qty) > Math.abs(pos)) flags.push('Reduce-only is off and this order flips your position.');
      }
    }
    if (cmd.type === 'updateLeverage') {
      try {
        const cfg = (await this.d.service.perpsRead(account, 'config', { instrument_id: args.iid as number })) as { leverage: number }[];
        if (cfg[0] && (args.lev as number) > cfg[0].leverage) flags.push(`Leverage raised from ${cfg[0].leverage}× to ${args.lev}×.`);
      } catch {
        /* unknown current leverage */
      }
    }
    return flags;
  }

  private async perps(origin: string, account: OwnerInfo, submit: boolean, params: unknown): Promise<unknown> {
    const p = parseOrThrow(perpsParamsSchema, unwrapParams(params), 'params');
    const cmd = commandFromBody(p.op, p.label);
    if (cmd.type === 'createProxy') throw unsupported('Sites cannot issue proxy keys; use the extension.');
    const funds = cmd.type === 'withdraw' || cmd.type === 'internalTransfer';
    if (funds && String((cmd.body.args as { account?: unknown }).account).toLowerCase() !== account.address.toLowerCase()) {
      throw new InvalidFieldError({ field: 'op.args.account', reason: 'must be the connected account' });
    }
    const prepare = () => this.d.service.preparePerps(account.address, cmd, { submit, ...(p.exp === undefined ? {} : { exp: p.exp }) });
    const grant = submit ? await this.grantCheck(origin, account, ProviderService.perpsGrantRequest(cmd), (m) => this.perpsMid(m)) : { covered: false };
    if (grant.covered) {
      const artifact = await prepare();
      const { lines } = describeArtifact(artifact, await this.symbol());
      return this.d.service.execute(artifact, artifact.digest, { origin, summary: `${lines[0] ?? cmd.type} (standing permission)` });
    }
    const view = await this.approveArtifact(
      origin,
      'perps',
      account,
      prepare,
      async (a) => [...(grant.flag ? [grant.flag] : []), ...(a.kind === 'perps' ? await this.perpsFlags(account.address, perpsArtifactCommand(a)) : [])],
      funds ? TTL_FUNDS_MS : TTL_TRADING_MS,
    );
    const result = await this.d.service.execute(view.artifact, view.digest, { origin, summary: view.lines[0] ?? cmd.type });
    if (funds && submit) {
      const used = ((await this.d.db.get('settings', DESTINATIONS_KEY)) as string[] | undefined) ?? [];
      const to = String((cmd.body.args as Record<string, unknown>).to).toLowerCase();
      if (!used.includes(to)) await this.d.db.put('settings', [...used, to].slice(-500), DESTINATIONS_KEY);
    }
    return result;
  }

  private async clobPost(origin: string, account: OwnerInfo, params: unknown): Promise<unknown> {
    const p = parseOrThrow(clobOrdersParamsSchema, unwrapParams(params), 'params');
    const orders = p.orders as ClobOrderRequest[];
    const req: GrantRequest = { kind: 'order', venue: 'clob', orders: orders.map((o) => ({ market: o.tokenId, buy: o.side === 'BUY', size: o.size, price: o.price, ...(o.postOnly ? { postOnly: true } : {}) })) };
    const grant = await this.grantCheck(origin, account, req, (m) => this.d.service.clobMid(m));
    let results: Awaited<ReturnType<SigningService['clobPostOrders']>>;
    if (grant.covered) {
      const artifact = await this.d.service.prepareClob(account.address, orders);
      const { lines } = describeArtifact(artifact, await this.symbol());
      results = (await this.d.service.execute(artifact, artifact.digest, { origin, summary: `${lines[0] ?? 'orders'} (standing permission)` })) as typeof results;
    } else {
      const view = await this.approveArtifact(
        origin,
        'clob',
        account,
        () => this.d.service.prepareClob(account.address, orders),
        async (a) => [...(grant.flag ? [grant.flag] : []), ...(a.kind === 'clob' && a.orders.length > 1 ? [`A batch of ${a.orders.length} orders.`] : [])],
        TTL_TRADING_MS,
      );
      results = (await this.d.service.execute(view.artifact, view.digest, { origin, summary: view.lines[0] ?? 'orders' })) as typeof results;
    }
    return results.map((r) => (r.ok ? { success: true, orderID: r.orderID, status: r.status, errorMsg: '' } : { success: false, orderID: r.orderID, errorMsg: r.error.exchangeMessage }));
  }

  private async clobSign(origin: string, account: OwnerInfo, params: unknown): Promise<unknown> {
    const p = parseOrThrow(clobSignParamsSchema, unwrapParams(params), 'params');
    checkL2Route(p.method, p.requestPath);
    const req = { method: p.method, requestPath: p.requestPath, ...(p.body === undefined ? {} : { body: p.body }) };
    const view = await this.approveArtifact(origin, 'l2', account, () => this.d.service.prepareL2(account.address, req), async () => [], TTL_TRADING_MS);
    return this.d.service.execute(view.artifact, view.digest, { origin, summary: `${p.method} ${p.requestPath.slice(0, 100)}` });
  }
}
