/**
 * Opening the extension's popup as its toolbar button does, for the popup bench: the
 * worker calls `chrome.action.openPopup()` and Chromium opens the action popup — its own view, loaded
 * straight into the extension's process, with no `about:blank` page before it and no Playwright
 * instrumentation in it. Playwright does not expose that view (it is not a tab), so this talks to the
 * browser over its DevTools WebSocket (Chromium launched with `--remote-debugging-port=0`; the port
 * is in the profile's `DevToolsActivePort`): new targets are attached paused, the popup gets the
 * bench's init script before its first script runs, and is then let go.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { Worker } from 'playwright-core';

/** A DevTools message: a reply (`id`) or an event (`method`), `sessionId` naming the attached target. */
type Message = {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
};

/** A browser-level DevTools connection with flat sessions: `send` a command (to a session), `on` events. */
export type BrowserCdp = {
  send: (method: string, params?: Record<string, unknown>, sessionId?: string) => Promise<Record<string, unknown>>;
  on: (listener: (m: Message) => void) => () => void;
  close: () => void;
};

/** Connects to the browser of the profile at `userDataDir` (launched with `--remote-debugging-port=0`). */
export async function connectBrowserCdp(userDataDir: string): Promise<BrowserCdp> {
  const [port, path] = readFileSync(join(userDataDir, 'DevToolsActivePort'), 'utf8').split('\n');
  const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let next = 0;
  const pending = new Map<number, { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  const listeners = new Set<(m: Message) => void>();
  ws.on('message', (data) => {
    const m: Message = JSON.parse(String(data));
    const waiter = m.id === undefined ? undefined : pending.get(m.id);
    if (m.id !== undefined && waiter) {
      pending.delete(m.id);
      if (m.error) waiter.reject(new Error(m.error.message));
      else waiter.resolve(m.result ?? {});
    } else for (const l of listeners) l(m);
  });
  return {
    send: (method, params = {}, sessionId) =>
      new Promise((resolve, reject) => {
        const id = ++next;
        pending.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
      }),
    on: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => ws.close(),
  };
}

/** An open toolbar popup: evaluate an expression in it (by value), close it. */
export type ToolbarPopup = { evaluate: (expression: string) => Promise<unknown>; close: () => Promise<void> };

/**
 * Opens the toolbar popup (`chrome.action.openPopup()` in `worker`) with `initScript` evaluated in it
 * before any of its scripts, and resolves once the popup's document at `path` (e.g. `/popup.html`)
 * is found. Every target created meanwhile is attached paused and let go at once; only the popup's
 * session is kept.
 */
export async function openToolbarPopup(
  cdp: BrowserCdp,
  worker: Worker,
  initScript: string,
  path: string,
): Promise<ToolbarPopup> {
  const sessions: { sessionId: string; targetId: unknown }[] = [];
  const attached: Promise<void>[] = [];
  const off = cdp.on((m) => {
    if (m.method !== 'Target.attachedToTarget' || !m.params) return;
    const { sessionId, targetInfo, waitingForDebugger } = m.params;
    if (typeof sessionId !== 'string') return;
    // Targets that existed before are attached too (not paused): let them be.
    if (waitingForDebugger !== true)
      return void cdp.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
    const type = typeof targetInfo === 'object' && targetInfo !== null ? Reflect.get(targetInfo, 'type') : undefined;
    attached.push(
      (async () => {
        if (type === 'other' || type === 'page') {
          await cdp.send('Page.enable', {}, sessionId).catch(() => undefined);
          await cdp
            .send('Page.addScriptToEvaluateOnNewDocument', { source: initScript }, sessionId)
            .catch(() => undefined);
          sessions.push({ sessionId, targetId: Reflect.get(Object(targetInfo), 'targetId') });
        }
        await cdp.send('Runtime.runIfWaitingForDebugger', {}, sessionId).catch(() => undefined);
      })(),
    );
  });
  // Only while opening: pages Playwright opens meanwhile would otherwise wait for this client too.
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true });
  try {
    const opened = await worker.evaluate(async () => {
      try {
        await Reflect.get(globalThis, 'chrome').action.openPopup();
        return 'ok';
      } catch (e) {
        return String(e);
      }
    });
    if (opened !== 'ok') throw new Error(`chrome.action.openPopup: ${opened}`);
    for (let i = 0; i < 500; i++) {
      await Promise.all(attached);
      for (const { sessionId, targetId } of sessions) {
        const r = await cdp
          .send('Runtime.evaluate', { expression: 'location.pathname', returnByValue: true }, sessionId)
          .catch(() => undefined);
        const value =
          r && typeof r.result === 'object' && r.result !== null ? Reflect.get(r.result, 'value') : undefined;
        if (value !== path) continue;
        // A session of its own: ending the auto-attach below detaches the auto-attached ones.
        off();
        const own = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
        if (typeof own.sessionId === 'string') return popupOn(cdp, own.sessionId);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`the toolbar popup ${path} did not open`);
  } finally {
    await cdp
      .send('Target.setAutoAttach', { autoAttach: false, waitForDebuggerOnStart: false, flatten: true })
      .catch(() => undefined);
    off();
  }
}

/** The handle of the popup attached as `sessionId`. */
function popupOn(cdp: BrowserCdp, sessionId: string): ToolbarPopup {
  return {
    evaluate: async (expression) => {
      const r = await cdp.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
      return typeof r.result === 'object' && r.result !== null ? Reflect.get(r.result, 'value') : undefined;
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => {
        const off = cdp.on((m) => {
          if (m.method === 'Target.detachedFromTarget' && m.params?.sessionId === sessionId) {
            off();
            resolve();
          }
        });
        setTimeout(() => {
          off();
          resolve();
        }, 2_000);
      });
      await cdp.send('Runtime.evaluate', { expression: 'window.close()' }, sessionId).catch(() => undefined);
      await closed;
    },
  };
}
