/** The popup's only way to the background: typed messages (no `browser.*` elsewhere in the popup). */
import browser from 'webextension-polyfill';
import { createCaller, RemoteError } from '../../lib/messaging/client';

export const call = createCaller((m) => browser.runtime.sendMessage(m));

/** A person-readable message for any error. */
export function messageOf(err: unknown): string {
  if (err instanceof RemoteError) return err.shortMessage;
  if (err && typeof err === 'object' && 'shortMessage' in err) return String((err as { shortMessage: unknown }).shortMessage);
  return 'Something went wrong. Try again.';
}

export type Account = { address: string; label: string; proxies: { proxy: string; expiry: number; label: string }[]; hasClobCredentials: boolean };
/** `vault.status`: lock state, owner keys, the active account (the person's choice) and pending approvals. */
export type Status = {
  initialized: boolean;
  unlocked: boolean;
  /** 'session': auto-lock kept only the live grants' keys (trading session). */
  state: 'locked' | 'session' | 'unlocked';
  retryAfterMs: number;
  accounts: Account[];
  activeAccount: string | null;
  pendingApprovals: number;
  /** Live standing grants (site, expiry Unix ms): the trading-session banner. */
  session: { origin: string; expiresAt: number }[];
};
