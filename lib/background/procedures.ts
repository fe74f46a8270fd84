/**
 * Handlers of the popup / approval-window procedures (one small handler per procedure; the table and
 * schemas live in `lib/messaging/protocol.ts`). Replies carry addresses, labels, expiries and gateway
 * answers — never a private key, proxy secret or API secret (except `vault.revealOwnerKey`).
 */

import { privateKeyToAccount } from 'viem/accounts';
import { commandFromBody } from '../perps/commands';
import { requestJson } from '../http/json';
import type { Handlers, IdentifiedSender } from '../messaging/router';
import { readSettings, readSettingsReport, writeSettings } from '../settings';
import type { SigningService } from '../signer/service';
import type { VaultDb } from '../vault/db';
import { ProxyKeyMismatchError } from '../vault/errors';
import type { Vault } from '../vault/vault';
import { BaseError } from '../errors/base';
import type { ApprovalRegistry } from '../approvals/registry';
import * as v from 'valibot';

// Gateway answers the popup shows, validated at the boundary (only the fields shown are kept).
const decimal = v.pipe(v.string(), v.regex(/^\d{1,20}(\.\d{1,20})?$/));
const clobBookSchema = v.object({
  bids: v.array(v.object({ price: decimal, size: decimal })),
  asks: v.array(v.object({ price: decimal, size: decimal })),
  tick_size: v.union([decimal, v.number()]),
  min_order_size: decimal,
  neg_risk: v.boolean(),
});
const clobTradeSchema = v.object({
  id: v.pipe(v.string(), v.maxLength(100)),
  side: v.picklist(['BUY', 'SELL']),
  size: decimal,
  price: decimal,
  outcome: v.pipe(v.string(), v.maxLength(60)),
  match_time: v.pipe(v.string(), v.regex(/^\d{1,13}$/)),
  trader_side: v.picklist(['TAKER', 'MAKER']),
});
const dataPositionsSchema = v.object({
  data: v.array(
    v.object({
      token_id: v.pipe(v.string(), v.regex(/^\d{1,78}$/)),
      title: v.pipe(v.string(), v.maxLength(300)),
      outcome: v.pipe(v.string(), v.maxLength(60)),
      current_size: decimal,
      avg_price: decimal,
      current_price: decimal,
      current_value: decimal,
      unrealized_pnl: v.pipe(v.string(), v.regex(/^-?\d{1,20}(\.\d{1,20})?$/)),
    }),
  ),
  pagination: v.object({ next_cursor: v.nullable(v.pipe(v.string(), v.maxLength(200))) }),
});
import { activeAccount, selectAccount } from '../accounts';
import type { GrantService } from '../grants/service';
import { ApprovalNotFoundError } from '../approvals/registry';
import { runPanic } from './panic';
import type { DeadManStatus } from './deadman';
import { appendAudit, auditCsv, verifyAudit } from '../audit';
import { disconnected } from '../provider/errors';

/** Thrown when the popup asks to trade for an account that is not the active one (a stale popup). */
export class NotActiveAccountError extends BaseError {
  override name = 'Accounts.NotActiveAccountError';
  readonly code = 4100;
  constructor() {
    super('That account is not the active one. Switch accounts first.');
  }
}

export type ProcedureDeps = {
  vault: Vault;
  db: VaultDb;
  service: SigningService;
  /** Called after the vault becomes unlocked (arm auto-lock, announce to pages). */
  onUnlocked: () => Promise<void>;
  /** Called after the vault locks (reject pending approvals, tell pages). */
  onLocked: () => Promise<void>;
  /** Called when settings change. */
  onSettings: () => Promise<void>;
  /** Called after the person switched the active account (reject pending, tell sites). */
  onAccountChanged: (active: string) => Promise<void>;
  /** Page requests sent as one-off messages (the bridge uses a port; this path answers the same way). */
  pageRequest: (input: { id: string; method: string; params?: unknown }, sender: IdentifiedSender) => Promise<unknown>;
  /** Pending approvals. */
  registry: ApprovalRegistry;
  /** Standing grants. */
  grants: GrantService;
  /** The dead-man timer's state. */
  deadman: () => DeadManStatus;
};

/** Accounts view: owners with their proxies and CLOB credential info (non-secret). */
async function accounts(vault: Vault) {
  const owners = await vault.listOwners();
  const proxies = await vault.listProxies();
  return Promise.all(
    owners.map(async (o) => ({
      address: o.address,
      label: o.label,
      proxies: proxies.filter((p) => p.account.toLowerCase() === o.address.toLowerCase()).map(({ proxy, expiry, label }) => ({ proxy, expiry, label })),
      hasClobCredentials: await vault.hasClobCredentials(o.address),
    })),
  );
}

export function createProcedures(d: ProcedureDeps): Handlers {
  const { vault, db, service } = d;
  /** Popup trading acts for the active account only (a popup left open on another account cannot). */
  const requireActive = async (account: string) => {
    const active = await activeAccount(db, vault);
    if (!active || active.address.toLowerCase() !== account.toLowerCase()) throw new NotActiveAccountError();
  };
  return {
    'vault.status': async () => ({
      ...(await vault.status()),
      accounts: await accounts(vault),
      activeAccount: (await activeAccount(db, vault))?.address ?? null,
      pendingApprovals: d.registry.size,
    }),
    'vault.create': async ({ password }) => {
      await vault.create(password);
      await d.onUnlocked();
      return null;
    },
    'vault.unlock': async ({ password }) => {
      await vault.unlock(password);
      await d.onUnlocked();
      return null;
    },
    'vault.lock': async () => {
      await vault.lock();
      await d.onLocked();
      return null;
    },
    'vault.changePassword': async ({ oldPassword, newPassword }) => {
      await vault.changePassword(oldPassword, newPassword);
      return null;
    },
    'vault.importOwnerKey': async ({ privateKey, label }) => {
      const o = await vault.importOwnerKey(privateKey as `0x${string}`, label ?? '');
      await activeAccount(db, vault); // the first key becomes active; later keys never change it
      return { address: o.address };
    },
    'vault.generateOwnerKey': async ({ label }) => {
      const o = await vault.generateOwnerKey(label ?? '');
      await activeAccount(db, vault);
      return { address: o.address };
    },
    'vault.revealOwnerKey': async ({ address, password }) => ({ privateKey: await vault.revealOwnerKey(address, password) }),
    'vault.accounts': async () => accounts(vault),
    'vault.exportBackup': async () => ({ backup: await vault.exportBackup() }),
    'vault.restoreBackup': async ({ backup, password }) => {
      await vault.restoreBackup(backup, password);
      await d.onUnlocked();
      return null;
    },
    'settings.get': async () => readSettingsReport(db),
    'settings.set': async (patch) => {
      const s = await writeSettings(db, patch);
      await d.onSettings();
      return s;
    },
    'proxy.issue': async ({ account, expiry, label }) => {
      const p = await service.issueProxy(account, { expiry, ...(label ? { label } : {}) });
      return { proxy: p.proxy, expiry: p.expiry, label: p.label };
    },
    'proxy.import': async ({ account, privateKey, proxy, secret, expiry, label }) => {
      if (privateKeyToAccount(privateKey as `0x${string}`).address.toLowerCase() !== proxy.toLowerCase()) throw new ProxyKeyMismatchError();
      const p = await vault.putProxy({ account, privateKey: privateKey as `0x${string}`, proxy, secret, expiry, ...(label ? { label } : {}) });
      return { proxy: p.proxy, expiry: p.expiry, label: p.label };
    },
    'proxy.delete': async ({ account, proxy }) => {
      await service.deleteProxy(account, proxy, 'extension');
      return null;
    },
    'proxy.list': async ({ account }) => (await vault.listProxies(account)).map(({ account: a, proxy, expiry, label }) => ({ account: a, proxy, expiry, label })),
    'clob.createOrDerive': async ({ account, nonce }) => {
      const { info, derived } = await service.clobCreateOrDerive(account, nonce === undefined ? {} : { nonce });
      return { account: info.account, nonce: info.nonce, derived };
    },
    'clob.postOrders': async ({ account, orders }) => {
      await requireActive(account);
      const results = await service.clobPostOrders(account, orders, { origin: 'extension' });
      return results.map((r) => (r.ok ? { ok: true, orderID: r.orderID, status: r.status } : { ok: false, error: r.error.shortMessage }));
    },
    'clob.cancel': async ({ account, orderIds }) => service.clobCancel(account, orderIds),
    'clob.openOrders': async ({ account }) => service.clobOpenOrders(account),
    'perps.send': async ({ account, op, label, exp }) => {
      await requireActive(account);
      const command = commandFromBody(op, label);
      return service.perpsSend(account, command, { origin: 'extension', ...(exp === undefined ? {} : { exp }) });
    },
    'perps.read': async ({ account, name, query }) => service.perpsRead(account, name, query),
    'perps.book': async ({ iid }) => {
      const { perpsUrl } = await readSettings(db);
      const res = await requestJson(`${perpsUrl}/v1/info/book?instrument_id=${iid}`, { method: 'GET' });
      if (res.status !== 200) throw new BaseError('The gateway has no book for this instrument.');
      return res.body;
    },
    'catalogue.markets': async ({ q, cursor }) => {
      const { gammaUrl } = await readSettings(db);
      const qs = new URLSearchParams({ limit: '10', closed: 'false' });
      if (q) qs.set('q', q);
      if (cursor) qs.set('after_cursor', cursor);
      const res = await requestJson(`${gammaUrl}/markets/keyset?${qs}`, { method: 'GET' });
      const body = res.body as { markets?: unknown[]; next_cursor?: unknown } | undefined;
      if (res.status !== 200 || !Array.isArray(body?.markets)) throw new BaseError('The catalogue did not answer.');
      const markets = body.markets.flatMap((raw) => {
        const m = raw as Record<string, unknown>;
        try {
          // The catalogue sends these lists as JSON-encoded strings; accept arrays too (PROTOCOL.md §3.3).
          const list = (x: unknown): unknown => (Array.isArray(x) ? x : JSON.parse(String(x)));
          const tokenIds = list(m.clobTokenIds);
          const outcomes = list(m.outcomes);
          if (!Array.isArray(tokenIds) || !Array.isArray(outcomes) || !tokenIds.every((t) => typeof t === 'string' && /^\d{1,78}$/.test(t))) return [];
          return [{ question: String(m.question ?? '').slice(0, 200), slug: String(m.slug ?? '').slice(0, 100), tokenIds: tokenIds as string[], outcomes: outcomes.map((o) => String(o).slice(0, 40)), negRisk: m.negRisk === true }];
        } catch {
          return [];
        }
      });
      return { markets, next_cursor: typeof body.next_cursor === 'string' ? body.next_cursor : null };
    },
    'clob.book': async ({ tokenId }) => {
      const { clobUrl } = await readSettings(db);
      const [res, fee] = await Promise.all([
        requestJson(`${clobUrl}/book?token_id=${tokenId}`, { method: 'GET' }),
        requestJson(`${clobUrl}/fee-rate?token_id=${tokenId}`, { method: 'GET' }).catch(() => undefined),
      ]);
      const b = v.safeParse(clobBookSchema, res.body);
      if (res.status !== 200 || !b.success) throw new BaseError('The exchange has no order book for this token.');
      // The venue lists bids ascending and asks descending (best last): best first here, 10 levels.
      const best = (xs: { price: string; size: string }[]) => xs.slice(-10).reverse().map((l) => [l.price, l.size] as [string, string]);
      const feeBps = (fee?.body as { base_fee?: unknown } | undefined)?.base_fee;
      return {
        tickSize: String(b.output.tick_size),
        minSize: b.output.min_order_size,
        negRisk: b.output.neg_risk,
        bestBid: b.output.bids.at(-1)?.price ?? null,
        bestAsk: b.output.asks.at(-1)?.price ?? null,
        bids: best(b.output.bids),
        asks: best(b.output.asks),
        feeRateBps: typeof feeBps === 'number' && Number.isFinite(feeBps) && feeBps >= 0 ? feeBps : 0,
      };
    },
    'clob.trades': async ({ account }) => {
      const page = (await service.clobTrades(account)) as { data?: unknown };
      const rows = v.safeParse(v.array(clobTradeSchema), page?.data);
      if (!rows.success) throw new BaseError('The exchange answered trades in an unexpected shape.');
      return rows.output.slice(0, 50);
    },
    'data.portfolio': async ({ account, cursor }) => {
      const { dataUrl } = await readSettings(db);
      const qs = new URLSearchParams({ user: account, limit: '20', ...(cursor ? { cursor } : {}) });
      const [pos, val] = await Promise.all([
        requestJson(`${dataUrl}/v2/positions?${qs}`, { method: 'GET' }),
        requestJson(`${dataUrl}/v2/value?user=${account}`, { method: 'GET' }),
      ]);
      const p = v.safeParse(dataPositionsSchema, pos.body);
      if (pos.status !== 200 || !p.success) throw new BaseError('The data service did not answer positions.');
      const value = (val.body as { data?: { value?: unknown } | null } | undefined)?.data?.value;
      return { positions: p.output.data, value: typeof value === 'string' || typeof value === 'number' ? String(value) : null, next_cursor: p.output.pagination.next_cursor };
    },
    'audit.list': async ({ limit, origin, kind }) => {
      const all = (await db.getAll('audit')).filter((e) => (!origin || e.origin === origin) && (!kind || e.kind.startsWith(kind)));
      return all.slice(-(limit ?? 100)).reverse();
    },
    'audit.verify': async () => verifyAudit(db),
    'audit.export': async ({ format }) => {
      const all = await db.getAll('audit');
      return { text: format === 'csv' ? auditCsv(all) : JSON.stringify(all, null, 2), verification: await verifyAudit(db) };
    },
    'approval.list': async () => d.registry.list(),
    'account.select': async ({ address }) => {
      const { active, changed } = await selectAccount(db, vault, address);
      if (changed) {
        await appendAudit(db, { at: Date.now(), origin: 'extension', account: active.address.toLowerCase(), kind: 'account.switch', summary: `Switched the active account to ${active.address}`, result: 'ok' });
        await d.onAccountChanged(active.address);
      }
      return { activeAccount: active.address, changed };
    },
    'session.activity': async () => null,
    'grant.create': async ({ approvalId, limits, minutes }) => {
      // The origin and account come from the pending request the window shows, never from the message.
      const view = d.registry.list().find((x) => x.id === approvalId);
      if (!view || !view.account || !view.grantable) throw new ApprovalNotFoundError();
      const grant = await d.grants.create({ origin: view.origin, account: view.account.address, limits, durationMs: minutes * 60_000 });
      await appendAudit(db, { at: Date.now(), origin: view.origin, account: view.account.address.toLowerCase(), kind: 'grant.create', summary: `Standing permission for ${view.origin} until ${new Date(grant.expiresAt).toISOString()}`, result: 'ok' });
      return grant;
    },
    'grant.list': async () => d.grants.list(),
    'deadman.status': async () => d.deadman(),
    'panic.run': async ({ closePositions }) => {
      const active = await activeAccount(db, vault);
      const report = await runPanic({
        account: active?.address,
        vault,
        service,
        closePositions,
        revokeGrants: () => d.grants.revokeAll(),
        rejectPending: () => {
          const n = d.registry.size;
          d.registry.rejectAll(() => disconnected('Countersign was locked by its panic switch; the request was cancelled.'));
          return n;
        },
        lock: async () => {
          await vault.lock();
          await d.onLocked();
        },
      });
      await appendAudit(db, { at: Date.now(), origin: 'extension', account: active?.address.toLowerCase() ?? '', kind: 'panic', summary: `Panic switch: perps ${JSON.stringify(report.perps)}, order book ${JSON.stringify(report.clob)}`, result: 'ok' });
      return report;
    },
    'grant.revoke': async ({ id }) => {
      await d.grants.revoke(id);
      return null;
    },
    'approval.decide': async ({ id, approve, digest }) => {
      d.registry.decide(id, { approve, ...(digest === undefined ? {} : { digest }) });
      return null;
    },
    'page.request': (input, sender) => d.pageRequest(input, sender),
  };
}

