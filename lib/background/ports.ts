/**
 * The page ↔ background ports, the one route from a page: the content script of each
 * page opens a port named `PORT_NAME`; the page's origin is the port sender's tab URL, never anything in
 * a message. Each message on a port is one request (`PortRequest`), refused with -32602 when its params
 * are not JSON or larger than `MAX_REQUEST_BYTES` (64 KiB) before anything else runs, and otherwise
 * answered with `{ id, result }` or `{ id, error }` (`toRpcError`). `emit` sends events to the pages of
 * one origin (or of all). This is the only route from a page into the provider.
 */
import { identifySender } from '../messaging/router';
import {
  MAX_REQUEST_BYTES,
  PORT_NAME,
  readPortRequest,
  type PageEvent,
  type PageEventMessage,
  type Reply,
} from '../bridge/framing';
import { invalidParams, toRpcError } from '../errors/rpc';
import type { BackgroundBrowser, BrowserPort } from './browser';

/** Serves one page request from `origin` (the provider, once the background is ready); throws to refuse. */
export type ServePage = (origin: string, method: string, params: unknown) => Promise<unknown>;

/** Sends `event` with `data` to every open port of `origin` (of every origin when `origin` is undefined). */
export type Emit = (origin: string | undefined, event: PageEvent, data: unknown) => void;

/**
 * True when `x` is plain JSON data: null, booleans, finite numbers, strings, arrays and plain objects
 * (prototype `Object.prototype` or null), nested at most 64 deep and with at most 100 000 values. A port
 * that carries structured clones (Firefox) can deliver an `ArrayBuffer`, `Map`, `Set` or typed array,
 * which `JSON.stringify` would measure as `{}`: those are not JSON.
 */
function isPlainJson(x: unknown): boolean {
  let budget = 100_000;
  const walk = (value: unknown, depth: number): boolean => {
    if (--budget < 0 || depth > 64) return false;
    if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
    if (typeof value === 'number') return Number.isFinite(value);
    if (Array.isArray(value)) return value.every((item) => walk(item, depth + 1));
    if (typeof value !== 'object') return false;
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return false;
    return Object.values(value).every((item) => walk(item, depth + 1));
  };
  return walk(x, 0);
}

/**
 * Throws -32602 unless `params` is plain JSON (`isPlainJson`) of at most `MAX_REQUEST_BYTES` bytes
 * (UTF-8). The content script checks the same; this check holds even against a content script that
 * skipped it.
 */
function checkRequestSize(params: unknown): void {
  if (params !== undefined && !isPlainJson(params)) throw invalidParams('params must be JSON.');
  let size = 0;
  try {
    size = new TextEncoder().encode(JSON.stringify(params ?? null)).length;
  } catch {
    throw invalidParams('params must be JSON.');
  }
  if (size > MAX_REQUEST_BYTES) throw invalidParams('The request is larger than 64 KiB.');
}

/** The open page ports, by origin: `emit` to them, and `listen` to serve their requests. */
export class PagePorts {
  private readonly open = new Set<{ port: BrowserPort; origin: string }>();
  private readonly extensionOrigin: string;

  constructor(private readonly browser: BackgroundBrowser) {
    this.extensionOrigin = browser.runtime.getURL('/');
  }

  /** Sends an event to the pages of `origin` (all when undefined); a port that throws is dropped. */
  readonly emit: Emit = (origin, event, data) => {
    const message: PageEventMessage = { event, data };
    for (const p of this.open) {
      if (origin !== undefined && p.origin !== origin) continue;
      try {
        p.port.postMessage(message);
      } catch {
        this.open.delete(p);
      }
    }
  };

  /**
   * Registers `runtime.onConnect` (synchronously, in the background's `main`): ports with another name
   * or from anything but a top-frame http(s) tab are disconnected; each request on an accepted port is
   * size-checked and handed to `serve`. Requests without a string `id` of at most 64 characters are
   * dropped unanswered.
   */
  listen(serve: ServePage): void {
    this.browser.runtime.onConnect?.addListener((port) => {
      const who = port.sender ? identifySender(port.sender, this.browser.runtime.id, this.extensionOrigin) : undefined;
      if (port.name !== PORT_NAME || !who || who.kind !== 'content') {
        port.disconnect();
        return;
      }
      const entry = { port, origin: who.origin };
      this.open.add(entry);
      port.onDisconnect.addListener(() => this.open.delete(entry));
      port.onMessage.addListener((m) => {
        const req = readPortRequest(m);
        if (!req) return;
        const answer = (reply: Reply) => {
          try {
            port.postMessage(reply);
          } catch {
            /* page went away */
          }
        };
        new Promise<unknown>((resolve) => {
          checkRequestSize(req.params);
          resolve(serve(who.origin, req.method, req.params));
        }).then(
          (result) => answer({ id: req.id, result: result ?? null }),
          (err: unknown) => answer({ id: req.id, error: toRpcError(err) }),
        );
      });
    });
  }
}
