/**
 * The dead-man timer (issue #11 §3): while a standing grant is live, the extension keeps both venues'
 * kill switches armed and renews them while the browser is alive. If the browser dies, sleeps or
 * loses the network, the venues cancel the account's orders themselves:
 * - perps: `autoCancel` (PATCH /v1/trade/auto-cancel, proxy-signed) set `PERPS_LEAD_MS` ahead, renewed
 *   every `PERPS_RENEW_MS` (each renewal is a signature, so it is in the audit log);
 * - order book: `POST /v1/heartbeats` every `HEARTBEAT_MS` (the exchange cancels the account's orders
 *   when heartbeats lapse; the sandbox after 10 s).
 * When the last grant ends it disarms perps auto-cancel (time 0) and stops the heartbeats (the exchange
 * then cancels that account's order-book orders: stopping is the safe side). The timers run in the
 * service worker, which stays alive while a page holds its port.
 */
import { autoCancel } from '../perps/commands';
import { BaseError } from '../errors/base';
import type { SigningService } from '../signer/service';
import type { Vault } from '../vault/vault';

/** How far ahead the perps auto-cancel is set (ms). */
export const PERPS_LEAD_MS = 20_000;
/** How often it is renewed (ms). */
export const PERPS_RENEW_MS = 8_000;
/** How often an order-book heartbeat is sent (ms). */
export const HEARTBEAT_MS = 5_000;

/** What the popup shows. Times Unix ms. */
export type DeadManStatus = { armed: boolean; account?: string; perpsCancelAt?: number; lastHeartbeat?: number; error?: string };

/** Arms and renews both venues' kill switches for the active account while a grant is live; `state` for the popup. */
export class DeadMan {
  private timers: ReturnType<typeof setInterval>[] = [];
  private status: DeadManStatus = { armed: false };
  private session = '';
  private readonly now: () => number;

  constructor(private readonly o: { service: SigningService; vault: Vault; account: () => Promise<string | undefined>; now?: () => number }) {
    this.now = o.now ?? Date.now;
  }

  get state(): DeadManStatus {
    return { ...this.status };
  }

  private async renewPerps(account: string): Promise<void> {
    if (!(await this.o.vault.listProxies(account)).some((p) => p.expiry > this.now())) return;
    const time = this.now() + PERPS_LEAD_MS;
    await this.o.service.perpsSend(account, autoCancel({ time }), { origin: 'dead-man', summary: `Dead-man: cancel all perps orders at ${new Date(time).toISOString()} unless renewed` });
    this.status.perpsCancelAt = time;
  }

  private async beat(account: string): Promise<void> {
    if (!(await this.o.vault.hasClobCredentials(account))) return;
    this.session = await this.o.service.clobHeartbeat(account, this.session);
    this.status.lastHeartbeat = this.now();
  }

  /** Arms both switches for the active account (idempotent). */
  async arm(): Promise<void> {
    if (this.status.armed) return;
    const account = await this.o.account();
    if (!account || !this.o.vault.unlocked) return;
    this.status = { armed: true, account };
    this.session = '';
    const guard = (fn: () => Promise<void>) => () =>
      void fn().catch((e) => {
        this.status.error = e instanceof BaseError ? e.shortMessage : 'A renewal failed.';
      });
    guard(() => this.renewPerps(account))();
    guard(() => this.beat(account))();
    this.timers.push(setInterval(guard(() => this.renewPerps(account)), PERPS_RENEW_MS), setInterval(guard(() => this.beat(account)), HEARTBEAT_MS));
  }

  /** Stops renewing; disarms perps auto-cancel when the vault is still unlocked. */
  async disarm(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    const { armed, account } = this.status;
    this.status = { armed: false };
    if (armed && account && this.o.vault.unlocked && (await this.o.vault.listProxies(account)).some((p) => p.expiry > this.now())) {
      await this.o.service.perpsSend(account, autoCancel({ time: 0 }), { origin: 'dead-man', summary: 'Dead-man: disarmed' }).catch(() => undefined);
    }
  }
}
