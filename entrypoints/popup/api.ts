/** The popup's only way to the background: typed messages (no `browser.*` elsewhere in the popup). */
import { browser } from 'wxt/browser';
import { createCaller, RemoteError } from '../../lib/messaging/client';
import type { ProcedureOutput } from '../../lib/messaging/protocol';
import { START_HINT_KEY, usableHint, VAULT_EPOCH_KEY, type StartHint } from '../../lib/messaging/start-hint';
import { readHintKeys, takeEarlyRead, takeEarlyWatch } from '../../lib/messaging/early-reads';

/**
 * Calls a background procedure: `call('vault.status', {})` resolves its contract's output type; throws `RemoteError`.
 */
export const call = createCaller((m) => browser.runtime.sendMessage(m));

/**
 * Listens for the background's stream pushes (`lib/messaging/streams.ts`; the listener
 * validates them); returns the unsubscribe. The listener never answers, so procedure calls are untouched.
 * Only this extension's own contexts outside any tab are heard: a content script (a tab's renderer) can
 * send runtime messages too, and its pushes — fake positions or fills — are dropped.
 */
export function onStreamPush(fn: (message: unknown) => void): () => void {
  const listener = (message: unknown, sender: { id?: string; tab?: unknown }): undefined => {
    if (sender.id !== browser.runtime.id || sender.tab !== undefined) return;
    fn(message);
  };
  browser.runtime.onMessage.addListener(listener);
  return () => browser.runtime.onMessage.removeListener(listener);
}

/**
 * The popup's start hint (`lib/messaging/start-hint.ts`), read from `storage.session` in one
 * call: `status`, a status of this unlock the popup may show before its own `vault.status` answers
 * (undefined when none is usable), and `epoch`, the vault's current session epoch (undefined before the
 * first unlock of this browser session). Never throws (an unreadable area reads as no hint).
 */
export async function readStartHint(): Promise<{ status?: Status; epoch?: string }> {
  try {
    // The first read was begun by the boot script, before this module loaded.
    const stored = await (takeEarlyRead() ?? readHintKeys());
    const epoch = stored[VAULT_EPOCH_KEY];
    const status = usableHint(stored);
    return { ...(status ? { status } : {}), ...(typeof epoch === 'string' ? { epoch } : {}) };
  } catch {
    return {};
  }
}

/**
 * The ticket's first `streams.watch` as the boot script asked it (`lib/messaging/early-reads.ts`):
 * the account and instrument it named and the reply as it came, unparsed — the perps store parses it by
 * the procedure's output schema. Once; undefined without one.
 */
export const takeBootWatch = takeEarlyWatch;

/** Stores the start hint (an unlocked status with the epoch read before it was asked); a failed write is ignored. */
export async function writeStartHint(hint: StartHint): Promise<void> {
  await browser.storage.session.set({ [START_HINT_KEY]: hint }).catch(() => undefined);
}

/**
 * Asks the browser for host permissions on `origins` (match patterns, e.g. `https://clob.polymarket.com/*`;
 * the venue presets and a release's first-run venue choice). Must run in the click that asked for it.
 * `permissions.request` is its first call (Firefox accepts it only while the click is handled): origins
 * granted already resolve true without a prompt. Resolves true when granted (or nothing was asked), false
 * when the person or the browser refused.
 */
export async function requestHostPermissions(origins: readonly string[]): Promise<boolean> {
  if (origins.length === 0) return true;
  try {
    return await browser.permissions.request({ origins: [...origins] });
  } catch {
    return false;
  }
}

/** A person-readable message for any error: the background's `shortMessage`, or a generic sentence. */
export function messageOf(err: unknown): string {
  if (err instanceof RemoteError) return err.shortMessage;
  if (err && typeof err === 'object' && 'shortMessage' in err && typeof err.shortMessage === 'string')
    return err.shortMessage;
  return 'Something went wrong. Try again.';
}

/**
 * `vault.status`: lock state, owner keys, the active account (the person's choice), pending approvals, live grants
 * (lib/messaging/vault.ts).
 */
export type Status = ProcedureOutput<'vault.status'>;
/**
 * An owner key as the popup lists it: address, label, proxies (expiry Unix ms), whether CLOB credentials are stored.
 */
export type Account = Status['accounts'][number];

/** The browser's side-panel APIs where they exist: Chrome's `sidePanel` (MV3), Firefox's `sidebarAction`. */
type SidePanelHost = {
  /** Every page has one; it makes `globalThis` assignable to this type without a cast. */
  document?: unknown;
  chrome?: {
    sidePanel?: { open: (o: { windowId: number }) => Promise<void> };
    windows?: { getCurrent: () => Promise<{ id?: number }> };
  };
  browser?: { sidebarAction?: { open: () => Promise<void> } };
};

/**
 * Opens the cockpit in the browser's side panel: Chrome `sidePanel.open` for the current
 * window, Firefox `sidebarAction.open`. Must run from a person's click. Resolves `false` where the
 * browser has neither (the side panel can still be chosen from the browser's own menu).
 */
export async function openSidePanel(): Promise<boolean> {
  const host: SidePanelHost = globalThis;
  const firefox = host.browser?.sidebarAction;
  if (firefox) {
    await firefox.open();
    return true;
  }
  const chrome = host.chrome;
  if (!chrome?.sidePanel || !chrome.windows) return false;
  const win = await chrome.windows.getCurrent();
  if (win.id === undefined) return false;
  await chrome.sidePanel.open({ windowId: win.id });
  return true;
}

/** This page is the side panel (its body carries `class="sidepanel"`), not the toolbar popup. */
export const inSidePanel = () => document.body.classList.contains('sidepanel');

/**
 * Whether `err` is a change that holds although its second copy could not be written
 * (`Vault.VaultCopyError`, `lib/vault/copy.ts`): the vault was created, unlocked or changed, and its copy
 * is written again at the next change or start. A screen goes on as after success.
 */
export const changeHeld = (err: unknown): boolean => err instanceof RemoteError && err.name === 'Vault.VaultCopyError';
