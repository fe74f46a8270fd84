/**
 * The panic switch (issue #11 §2): one action that cancels every open perps order (cancelAll) and every
 * order-book order (`DELETE /cancel-all`) of the active account, optionally closes its perps positions
 * (reduce-only market orders), revokes every standing grant, rejects everything pending and locks.
 * It reports what was done per venue and what failed. Cancels are idempotent, so each is retried once
 * when no answer came; closing orders are never retried (an unknown outcome is reported instead).
 */
import { cancelAll, createOrders } from '../perps/commands';
import { BaseError } from '../errors/base';
import type { SigningService } from '../signer/service';
import type { Vault } from '../vault/vault';

/** What happened at one venue. */
export type PanicStep = { ok: true; detail: string } | { ok: false; error: string } | { skipped: string };
/** The panic report: perps cancels, order-book cancels, closed positions, grants revoked, requests rejected. */
export type PanicReport = { perps: PanicStep; clob: PanicStep; positions: PanicStep; grants: number; pending: number; locked: boolean };

const msg = (e: unknown) => (e instanceof BaseError ? e.shortMessage : 'The gateway did not answer.');

async function once<T>(fn: () => Promise<T>, retry: boolean): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!retry || !(err instanceof BaseError) || !/OutcomeUnknown|NetworkError/.test(err.name)) throw err;
    return fn();
  }
}

/** Runs the panic switch for `account`. Never throws: every failure is in the report. */
export async function runPanic(d: {
  account: string | undefined;
  vault: Vault;
  service: SigningService;
  closePositions: boolean;
  revokeGrants: () => Promise<number>;
  rejectPending: () => number;
  lock: () => Promise<void>;
}): Promise<PanicReport> {
  const report: PanicReport = { perps: { skipped: 'no account' }, clob: { skipped: 'no account' }, positions: { skipped: 'not asked' }, grants: 0, pending: 0, locked: false };
  const account = d.account;
  if (account && d.vault.unlocked) {
    const hasProxy = (await d.vault.listProxies(account)).some((p) => p.expiry > Date.now());
    if (hasProxy) {
      try {
        const open = ((await d.service.perpsRead(account, 'openOrders').catch(() => [])) as unknown[]).length;
        await once(() => d.service.perpsSend(account, cancelAll({}), { origin: 'panic', summary: 'Panic: cancel every perps order' }), true);
        report.perps = { ok: true, detail: `${open} open order(s) cancelled` };
      } catch (e) {
        report.perps = { ok: false, error: msg(e) };
      }
      if (d.closePositions) {
        try {
          const portfolio = (await d.service.perpsRead(account, 'portfolio')) as { positions: { instrument_id: number; size: string; symbol: string }[] };
          const closed: string[] = [];
          const failed: string[] = [];
          for (const p of portfolio.positions) {
            try {
              await d.service.perpsSend(account, createOrders({ orders: [{ iid: p.instrument_id, buy: p.size.startsWith('-'), qty: p.size.replace('-', ''), tif: 'ioc', ro: true }] }), { origin: 'panic', summary: `Panic: close ${p.symbol}` });
              closed.push(p.symbol);
            } catch (e) {
              failed.push(`${p.symbol}: ${msg(e)}`);
            }
          }
          report.positions = failed.length ? { ok: false, error: `closed ${closed.join(', ') || 'none'}; failed ${failed.join('; ')}` } : { ok: true, detail: closed.length ? `closed ${closed.join(', ')}` : 'no open positions' };
        } catch (e) {
          report.positions = { ok: false, error: msg(e) };
        }
      }
    } else report.perps = { skipped: 'no proxy key' };
    if (await d.vault.hasClobCredentials(account)) {
      try {
        const r = await once(() => d.service.clobCancelAll(account), true);
        const left = Object.keys(r.not_canceled ?? {}).length;
        report.clob = left ? { ok: false, error: `${r.canceled.length} cancelled, ${left} not` } : { ok: true, detail: `${r.canceled.length} open order(s) cancelled` };
      } catch (e) {
        report.clob = { ok: false, error: msg(e) };
      }
    } else report.clob = { skipped: 'no API credentials' };
  }
  report.grants = await d.revokeGrants();
  report.pending = d.rejectPending();
  await d.lock();
  report.locked = true;
  return report;
}
