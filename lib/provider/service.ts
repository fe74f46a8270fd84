/**
 * Page requests (issue #6): the origin comes from the browser's sender (the content script's tab URL),
 * never from the message. Every request is checked against the method policy (connected origin,
 * unlocked vault), validated, described in plain words, and — for anything that signs — approved one
 * by one in the approval window before the background signs exactly what was shown (the approval is
 * bound to the request id and to its digest). Connections are per origin and persisted.
 */
import * as v from 'valibot';
import { keccak256, numberToHex, toHex, type Address, type Hex, type TypedDataDefinition } from 'viem';
import { commandFromBody, type PerpsCommand, type PerpsOrderInput } from '../perps/commands';
import { hashPerpsOp } from '../perps/signing';
import { parseOrThrow } from '../validation';
import type { ApprovalKind, ApprovalRegistry } from '../approvals/registry';
import type { SigningService, ClobOrderRequest } from '../signer/service';
import type { Vault } from '../vault/vault';
import type { VaultDb } from '../vault/db';
import { readSettings } from '../settings';
import { formatUnitsMin2, groupDecimal, shortAddress } from '../format';
import { describePerpsCommand } from './describe';
import { disconnected, invalidParams, ProviderRpcError, unauthorized, unsupported } from './errors';
import { clobOrdersParamsSchema, clobSignParamsSchema, isPageMethod, METHOD_POLICY, perpsParamsSchema, unwrapParams } from './methods';

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

  private async account(): Promise<Address | undefined> {
    return (await this.d.vault.listOwners())[0]?.address;
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
    const conn = await this.connection(origin);
    if (policy.connected && !conn) throw unauthorized();
    if (policy.unlocked && !this.d.vault.unlocked) throw disconnected('Countersign is locked. Open the extension and unlock it.');
    switch (method) {
      case 'eth_chainId':
        return numberToHex((await readSettings(this.d.db)).clobChainId);
      case 'eth_accounts':
        return conn && this.d.vault.unlocked ? conn.accounts : [];
      case 'eth_requestAccounts':
      case 'wallet_connect':
        return this.connect(origin);
      case 'wallet_revokePermissions':
        await this.d.db.delete('connections', origin);
        this.d.emit(origin, 'accountsChanged', []);
        this.d.emit(origin, 'disconnect', { code: 4900, message: 'Disconnected by the site.' });
        return null;
      case 'perps_sendCommand':
      case 'perps_signCommand':
        return this.perps(origin, conn!.accounts[0]! as Address, method === 'perps_sendCommand', params);
      case 'clob_postOrders':
        return this.clobPost(origin, conn!.accounts[0]! as Address, params);
      case 'clob_signRequest':
        return this.clobSign(origin, conn!.accounts[0]! as Address, params);
      case 'eth_signTypedData_v4':
        return this.typedData(origin, conn!.accounts[0]! as Address, params);
    }
  }

  private async approve(origin: string, kind: ApprovalKind, view: { title: string; lines: string[]; flags: string[]; signer: 'owner key' | 'proxy key' | 'API key' | null; digest: Hex }, ttlMs: number): Promise<Hex> {
    const { approved } = this.d.registry.add({ origin, kind, ...view }, ttlMs);
    await this.d.showApprovals();
    await approved;
    return view.digest;
  }

  private async connect(origin: string): Promise<string[]> {
    const existing = await this.connection(origin);
    if (existing) return existing.accounts;
    const account = await this.account();
    if (!account) throw unauthorized('Countersign has no account yet. Finish setup in the extension first.');
    await this.approve(
      origin,
      'connect',
      { title: 'Connect this site', lines: [`Let ${origin} see your address ${shortAddress(account)} and ask you to sign trades.`, 'Every signature still needs your approval.'], flags: [], signer: null, digest: keccak256(toHex(`connect:${origin}:${account}`)) },
      TTL_FUNDS_MS,
    );
    await this.d.db.put('connections', { origin, accounts: [account], connectedAt: Date.now() });
    this.d.emit(origin, 'connect', { chainId: numberToHex((await readSettings(this.d.db)).clobChainId) });
    this.d.emit(origin, 'accountsChanged', [account]);
    return [account];
  }

  private static commandDigest(cmd: PerpsCommand): Hex {
    return cmd.struct === 'Op' ? hashPerpsOp(cmd.op) : keccak256(toHex(JSON.stringify(cmd.op)));
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
        positions = ((await this.d.service.perpsRead(account, 'summary')) as { positions: { instrument_id: number; size: string }[] }).positions ?? [];
      } catch {
        /* the real gateway's positions read is unshown; skip the flip check */
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

  private async perps(origin: string, account: Address, submit: boolean, params: unknown): Promise<unknown> {
    const p = parseOrThrow(perpsParamsSchema, unwrapParams(params), 'params');
    const cmd = commandFromBody(p.op, p.label);
    if (cmd.type === 'createProxy') throw unsupported('Sites cannot issue proxy keys; use the extension.');
    const digest = ProviderService.commandDigest(cmd);
    const { title, lines } = describePerpsCommand(cmd, await this.symbol());
    const funds = cmd.type === 'withdraw' || cmd.type === 'internalTransfer';
    const flags = await this.perpsFlags(account, cmd);
    await this.approve(origin, 'perps', { title, lines: submit ? lines : [...lines, 'The signed command is returned to the site, which may submit it.'], flags, signer: cmd.signer === 'owner' ? 'owner key' : 'proxy key', digest }, funds ? TTL_FUNDS_MS : TTL_TRADING_MS);
    if (ProviderService.commandDigest(cmd) !== digest) throw new ProviderRpcError(-32603, 'The command changed after approval.');
    if (!submit) return this.d.service.perpsSign(account, cmd, p.exp === undefined ? {} : { exp: p.exp });
    const result = await this.d.service.perpsSend(account, cmd, { origin, ...(p.exp === undefined ? {} : { exp: p.exp }), summary: lines[0] ?? cmd.type });
    if (funds) {
      const used = ((await this.d.db.get('settings', DESTINATIONS_KEY)) as string[] | undefined) ?? [];
      const to = String((cmd.body.args as Record<string, unknown>).to).toLowerCase();
      if (!used.includes(to)) await this.d.db.put('settings', [...used, to].slice(-500), DESTINATIONS_KEY);
    }
    return result;
  }

  private async clobPost(origin: string, account: Address, params: unknown): Promise<unknown> {
    const p = parseOrThrow(clobOrdersParamsSchema, unwrapParams(params), 'params');
    const orders = p.orders as ClobOrderRequest[];
    const quotes = await this.d.service.clobQuote(orders);
    const lines = orders.map((o, i) => {
      const q = quotes[i]!;
      const pay = o.side === 'BUY' ? `pay ${formatUnitsMin2(q.amounts.makerAmount, 6)} USDC` : `receive ${formatUnitsMin2(q.amounts.takerAmount, 6)} USDC`;
      return `${o.side === 'BUY' ? 'Buy' : 'Sell'} ${q.amounts.size} shares of token ${o.tokenId.slice(0, 6)}…${o.tokenId.slice(-4)} at ${q.amounts.price} (${pay}), ${o.orderType}${o.postOnly ? ', post-only' : ''}${q.negRisk ? ', negative-risk market' : ''}`;
    });
    const canonical = JSON.stringify(orders.map((o, i) => ({ ...o, makerAmount: quotes[i]!.amounts.makerAmount, takerAmount: quotes[i]!.amounts.takerAmount })));
    const digest = keccak256(toHex(canonical));
    const flags = orders.length > 1 ? [`A batch of ${orders.length} orders.`] : [];
    await this.approve(origin, 'clob', { title: orders.length > 1 ? `Place ${orders.length} order-book orders` : 'Place an order-book order', lines, flags, signer: 'owner key', digest }, TTL_TRADING_MS);
    const results = await this.d.service.clobPostOrders(account, orders, { origin });
    return results.map((r) => (r.ok ? { success: true, orderID: r.orderID, status: r.status, errorMsg: '' } : { success: false, orderID: r.orderID, errorMsg: r.error.exchangeMessage }));
  }

  private async clobSign(origin: string, account: Address, params: unknown): Promise<unknown> {
    const p = parseOrThrow(clobSignParamsSchema, unwrapParams(params), 'params');
    const digest = keccak256(toHex(JSON.stringify([p.method, p.requestPath, p.body ?? ''])));
    await this.approve(origin, 'l2', { title: 'Authenticate a request', lines: [`Sign ${p.method} ${p.requestPath.slice(0, 120)} for the order-book exchange with your API key.`, p.body ? `Body: ${p.body.slice(0, 200)}${p.body.length > 200 ? '…' : ''}` : 'No body.'], flags: [], signer: 'API key', digest }, TTL_TRADING_MS);
    return this.d.service.clobSignRequest(account, { method: p.method, requestPath: p.requestPath, ...(p.body === undefined ? {} : { body: p.body }) });
  }

  private async typedData(origin: string, account: Address, params: unknown): Promise<unknown> {
    if (!Array.isArray(params) || params.length !== 2) throw invalidParams('eth_signTypedData_v4 takes [address, typedData].');
    const [addr, raw] = params as [unknown, unknown];
    if (typeof addr !== 'string' || addr.toLowerCase() !== account.toLowerCase()) throw unauthorized('That address is not connected to this site.');
    let td: TypedDataDefinition & { domain?: Record<string, unknown> };
    try {
      td = (typeof raw === 'string' ? JSON.parse(raw) : raw) as typeof td;
    } catch {
      throw invalidParams('typedData must be JSON.');
    }
    const schema = v.object({ domain: v.record(v.string(), v.unknown()), types: v.record(v.string(), v.array(v.object({ name: v.string(), type: v.string() }))), primaryType: v.string(), message: v.record(v.string(), v.unknown()) });
    if (!v.safeParse(schema, td).success) throw invalidParams('typedData must have domain, types, primaryType and message.');
    const d = td.domain ?? {};
    const { domain: perpsDomain } = await this.d.service.perpsDomains().catch(() => ({ domain: undefined }));
    const venue =
      (d.name === 'ClobAuthDomain' && d.version === '1' && td.primaryType === 'ClobAuth') ||
      (d.name === 'Polymarket CTF Exchange' && d.version === '2' && td.primaryType === 'Order') ||
      (!!perpsDomain && d.name === perpsDomain.name && d.version === perpsDomain.version && Number(d.chainId) === perpsDomain.chainId && ['Op', 'CreateProxy', 'Withdraw'].includes(String(td.primaryType)));
    if (!venue) throw unsupported("Countersign only signs the venue's own typed data (ClobAuth, exchange V2 orders, perps commands); this domain is not one of them.");
    if (td.primaryType === 'CreateProxy') throw unsupported('Sites cannot issue proxy keys; use the extension.');
    const { hashTypedData } = await import('viem');
    let digest: Hex;
    try {
      digest = hashTypedData(td as Parameters<typeof hashTypedData>[0]);
    } catch {
      throw invalidParams('typedData does not encode.');
    }
    await this.approve(origin, 'typedData', { title: `Sign ${String(td.primaryType)} typed data`, lines: [`Domain: ${String(d.name)} v${String(d.version)} (chain ${String(d.chainId)})`, `Message: ${JSON.stringify(td.message).slice(0, 300)}`], flags: [], signer: 'owner key', digest }, TTL_TRADING_MS);
    const owner = await this.d.vault.ownerAccount(account);
    return owner.signTypedData(td as Parameters<typeof owner.signTypedData>[0]);
  }
}
