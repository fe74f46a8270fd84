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
import { GrantLimitsError, type GrantService } from '../grants/service';
import { grantOffer, serviceOfferReads } from '../grants/offer';
import { describeGrant } from '../grants/evaluate';
import { readSettings } from '../settings';
import { ApprovalNotFoundError } from '../approvals/registry';
import { runPanic, type PanicReport, type PanicStep, type PanicTiming } from './panic';
import { gatewayReads } from './reads';
import type { DeadManStatus } from './deadman';
import { appendAudit, auditCsv, auditLog, auditOrigins, checkAudit, exportAudit, pageAudit, resealAfterRestore } from '../audit';
import { disconnected } from '../provider/errors';

/**
 * What an extension page may call during a trading session (issue #17): status, unlock, lock, the
 * grants list and revoke, the dead-man status, panic, and the approval window's own calls. Everything
 * else (owner-key commands, reveal, backup, settings, new grants, popup trading, audit) needs the
 * password again: `VaultLockedError` (4900).
 */
export const SESSION_PROCEDURES: ReadonlySet<string> = new Set([
  'vault.status',
  'vault.unlock',
  'vault.lock',
  'grant.list',
  'grant.revoke',
  'deadman.status',
  'panic.run',
  'approval.list',
  'approval.showing',
  'approval.empty',
  'approval.decide',
  'session.activity',
  'settings.get',
]);

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
  /** Called after the vault becomes unlocked (arm auto-lock, announce to pages); `fromSession`: it was a trading session. */
  onUnlocked: (o: { fromSession: boolean }) => Promise<void>;
  /** Called after the vault locks (reject pending approvals, tell pages). */
  onLocked: () => Promise<void>;
  /** Called when settings change. */
  onSettings: () => Promise<void>;
  /** Called after the person switched the active account (reject pending, tell sites). */
  onAccountChanged: (active: string) => Promise<void>;
  /** Pending approvals. */
  registry: ApprovalRegistry;
  /** Standing grants. */
  grants: GrantService;
  /** The dead-man timer's state. */
  deadman: () => DeadManStatus;
  /** The approval window displays request `id` at `digest` (closing the window rejects only that one). */
  onApprovalShown?: (id: string, digest: string) => void;
  /** The approval window's queue is empty: close it (background-side, so a request arriving now gets a fresh window). */
  onApprovalEmpty?: () => Promise<boolean>;
  /** Stops the dead-man's renewals without disarming the venues' kill switches (panic; `DeadMan.halt`). */
  haltKillSwitches?: () => void;
  /** Panic's time limits (tests lower them; default `PANIC_TIMING`). */
  panicTiming?: Partial<PanicTiming>;
};

/** The panic audit entry's summary: each venue's outcome in plain words. */
function panicSummary(r: PanicReport): string {
  const line = (s: PanicStep) => ('skipped' in s ? `skipped (${s.skipped})` : s.ok ? s.detail : s.error);
  return `Panic switch: perps ${line(r.perps)}; order book ${line(r.clob)}; positions ${line(r.positions)}; ${r.grants} permission(s) revoked, ${r.pending} request(s) rejected${r.problems.length ? `; problems: ${r.problems.join(' ')}` : ''}`;
}

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
  const audit = auditLog(db, () => vault.auditKey());
  /** Popup trading acts for the active account only (a popup left open on another account cannot). */
  const requireActive = async (account: string) => {
    const active = await activeAccount(db, vault);
    if (!active || active.address.toLowerCase() !== account.toLowerCase()) throw new NotActiveAccountError();
  };
  /** Equity and names for a grant offer (issue #17). */
  const offerReads = serviceOfferReads({
    perpsRead: (account, name) => service.perpsRead(account, name),
    clobCollateral: (account) => service.clobCollateral(account),
    clobUrl: async () => (await readSettings(db)).clobUrl,
  });
  return {
    'vault.status': async () => ({
      ...(await vault.status()),
      accounts: await accounts(vault),
      activeAccount: (await activeAccount(db, vault))?.address ?? null,
      pendingApprovals: d.registry.size,
      // Live grants' sites and expiry: "Trading session: <site>, <time left>" (issue #17).
      session: vault.state === 'locked' ? [] : (await d.grants.list()).map((g) => ({ origin: g.origin, expiresAt: g.expiresAt })),
    }),
    'vault.create': async ({ password }) => {
      await vault.create(password);
      service.resume(); // a panic's signing gate lasts until the next successful unlock
      await d.onUnlocked({ fromSession: false });
      return null;
    },
    'vault.unlock': async ({ password }) => {
      const fromSession = vault.sessionLive;
      await vault.unlock(password);
      service.resume(); // a panic's signing gate lasts until the next successful unlock
      await d.onUnlocked({ fromSession });
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
      service.resume(); // a panic's signing gate lasts until the next successful unlock
      await resealAfterRestore(audit); // the log was sealed by the previous vault's key
      await d.onUnlocked({ fromSession: false });
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
    'audit.list': async ({ limit, origin, kind, before }) => (await pageAudit(audit, { limit: limit || 100, origin, kind, before })).entries,
    'audit.origins': async () => auditOrigins(audit),
    'audit.verify': async ({ full }) => checkAudit(audit, { full: !!full }),
    'audit.export': async ({ format, after, limit }) => {
      const page = await exportAudit(audit, { after, limit });
      const text = format === 'csv' ? auditCsv(page.entries, { header: after === undefined }) : JSON.stringify(page.entries, null, 2);
      return { text, next: page.next, ...(after === undefined ? { verification: await checkAudit(audit) } : {}) };
    },
    'approval.list': async () => d.registry.list(),
    'account.select': async ({ address }) => {
      const { active, changed } = await selectAccount(db, vault, address);
      if (changed) {
        await appendAudit(audit, { at: Date.now(), origin: 'extension', account: active.address.toLowerCase(), kind: 'account.switch', summary: `Switched the active account to ${active.address}`, result: 'ok' });
        await d.onAccountChanged(active.address);
      }
      return { activeAccount: active.address, changed };
    },
    'session.activity': async () => null,
    'grant.offer': async ({ approvalId }) => {
      const view = d.registry.list().find((x) => x.id === approvalId);
      if (!view || !view.account || !view.grantable || !view.markets?.length) throw new ApprovalNotFoundError();
      return grantOffer(view.kind === 'clob' ? 'clob' : 'perps', view.markets, view.account.address, offerReads);
    },
    'grant.create': async ({ approvalId, limits, minutes }) => {
      // The origin and account come from the pending request the window shows, never from the message;
      // the grant's venue and instruments / markets must be those of that request (issue #17).
      const view = d.registry.list().find((x) => x.id === approvalId);
      if (!view || !view.account || !view.grantable) throw new ApprovalNotFoundError();
      const scope = limits.venue === 'perps' ? limits.instruments.map(String) : limits.markets;
      if (limits.venue !== (view.kind === 'clob' ? 'clob' : 'perps')) throw new GrantLimitsError({ field: 'limits.venue', reason: 'must be the venue of the request being approved' });
      const other = scope.find((m) => !view.markets?.includes(m));
      if (other !== undefined) throw new GrantLimitsError({ field: limits.venue === 'perps' ? 'limits.instruments' : 'limits.markets', reason: `may name only what the request being approved trades (not ${other.slice(0, 20)})` });
      const names = await offerReads.names(limits.venue, scope).catch(() => ({}));
      const grant = await d.grants.create({ origin: view.origin, account: view.account.address, limits, durationMs: minutes * 60_000, names });
      await appendAudit(audit, { at: Date.now(), origin: view.origin, account: view.account.address.toLowerCase(), kind: 'grant.create', summary: `Standing permission for ${view.origin} until ${new Date(grant.expiresAt).toISOString()}: ${describeGrant(grant).slice(0, 2).join(' ')}`.slice(0, 500), result: 'ok' });
      return grant;
    },
    'grant.list': async () => d.grants.list(),
    'deadman.status': async () => d.deadman(),
    'panic.run': async ({ closePositions }) => {
      // Panic closes the signing gate before its first await (lib/background/panic.ts); everything else follows.
      let account: string | undefined;
      return runPanic({
        account: async () => (account = (await activeAccount(db, vault))?.address),
        vault,
        service,
        closePositions,
        revokeGrants: () => d.grants.revokeAll(),
        rejectPending: () => {
          const n = d.registry.size;
          d.registry.rejectAll(() => disconnected('Countersign was locked by its panic switch; the request was cancelled.'));
          return n;
        },
        ...(d.haltKillSwitches ? { haltKillSwitches: d.haltKillSwitches } : {}),
        killSwitches: d.deadman,
        audit: (report) =>
          appendAudit(audit, { at: Date.now(), origin: 'extension', account: account?.toLowerCase() ?? '', kind: 'panic', summary: panicSummary(report), result: report.problems.length ? 'error' : 'ok' }).then(() => undefined),
        lock: async () => {
          await vault.lock();
          await d.onLocked();
        },
        ...(d.panicTiming ? { timing: d.panicTiming } : {}),
      });
    },
    'grant.revoke': async ({ id }) => {
      await d.grants.revoke(id);
      return null;
    },
    'approval.showing': async ({ id, digest }) => {
      d.onApprovalShown?.(id, digest);
      return null;
    },
    'approval.empty': async () => ({ closed: (await d.onApprovalEmpty?.()) ?? false }),
    'approval.decide': async ({ id, approve, digest }) => {
      d.registry.decide(id, { approve, ...(digest === undefined ? {} : { digest }) });
      return null;
    },
  };
}

