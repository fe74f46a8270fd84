/**
 * Handlers of the popup / approval-window procedures (one small handler per procedure; the table and
 * schemas live in `lib/messaging/protocol.ts`). Replies carry addresses, labels, expiries and gateway
 * answers — never a private key, proxy secret or API secret (except `vault.revealOwnerKey`).
 */

import { privateKeyToAccount } from 'viem/accounts';
import { commandFromBody } from '../perps/commands';
import type { Handlers, IdentifiedSender } from '../messaging/router';
import { readSettingsReport, writeSettings } from '../settings';
import type { SigningService } from '../signer/service';
import type { VaultDb } from '../vault/db';
import { ProxyKeyMismatchError } from '../vault/errors';
import type { Vault } from '../vault/vault';
import { BaseError } from '../errors/base';
import type { ApprovalRegistry } from '../approvals/registry';


import { activeAccount, selectAccount } from '../accounts';
import type { GrantService } from '../grants/service';
import { ApprovalNotFoundError } from '../approvals/registry';
import { runPanic } from './panic';
import { gatewayReads } from './reads';
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
  /** Called first when panic starts (the dead-man halts: the venues' switches are never unset). */
  onPanic?: () => Promise<void>;
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
    ...gatewayReads(d),
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
      await d.onPanic?.();
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

