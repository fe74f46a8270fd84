/**
 * The parts of the WebExtension API the background uses, as structural types: webextension-polyfill's
 * `browser` satisfies them in the extension, WXT's fake browser (`test/kits/background.ts`) in the unit suites.
 */
import type { BrowserSender } from '../messaging/router';

/** The parts of the WebExtension API the background uses (webextension-polyfill or WXT's fake browser). */
export type BackgroundBrowser = {
  runtime: {
    id: string;
    getURL: (path: string) => string;
    onMessage: { addListener: (fn: (message: unknown, sender: BrowserSender) => Promise<unknown> | undefined) => void };
    onStartup: { addListener: (fn: () => void) => void };
    /** Called every 20 s while the background is held alive (`lib/background/lifetime.ts`). */
    getPlatformInfo?: () => Promise<unknown>;
    onInstalled?: { addListener: (fn: (details: { reason: string }) => void) => void };
    onConnect?: { addListener: (fn: (port: BrowserPort) => void) => void };
    /** Broadcasts to extension pages (stream pushes, `lib/background/streams.ts`); rejects when no page listens. */
    sendMessage?: (message: unknown) => Promise<unknown>;
  };
  windows?: {
    create: (o: {
      url: string;
      type: 'popup';
      width: number;
      height: number;
      focused?: boolean;
    }) => Promise<{ id?: number }>;
    update: (id: number, o: { focused: boolean }) => Promise<unknown>;
    remove?: (id: number) => Promise<unknown>;
    onRemoved: { addListener: (fn: (id: number) => void) => void };
  };
  tabs?: { create: (o: { url: string }) => Promise<unknown> };
  /** Host permissions (`settings.set` checks a venue's hosts are granted before storing it). */
  permissions?: { contains: (p: { origins: string[] }) => Promise<boolean> };
  commands?: { onCommand: { addListener: (fn: (command: string) => void) => void } };
  action?: {
    setBadgeText: (o: { text: string }) => Promise<void> | void;
    setBadgeBackgroundColor?: (o: { color: string }) => Promise<void> | void;
    setTitle?: (o: { title: string }) => Promise<void> | void;
  };
  storage: {
    session: {
      get: (key: string) => Promise<Record<string, unknown>>;
      set: (items: Record<string, unknown>) => Promise<void>;
      remove: (key: string) => Promise<void>;
      setAccessLevel?: (o: { accessLevel: 'TRUSTED_CONTEXTS' | 'TRUSTED_AND_UNTRUSTED_CONTEXTS' }) => Promise<void>;
    };
  };
  alarms: {
    create: (name: string, info: { delayInMinutes?: number; periodInMinutes?: number }) => unknown;
    clear: (name: string) => Promise<unknown>;
    onAlarm: { addListener: (fn: (alarm: { name: string }) => void) => void };
  };
};

/** A runtime port (content script ↔ background): `name` is `PORT_NAME`, `sender` the content script's tab. */
export type BrowserPort = {
  name: string;
  sender?: BrowserSender;
  postMessage: (m: unknown) => void;
  disconnect: () => void;
  onMessage: { addListener: (fn: (m: unknown) => void) => void };
  onDisconnect: { addListener: (fn: () => void) => void };
};
