/**
 * The audit log's state: entries a page at a time (newest first, `PAGE` per page,
 * the next page before the last id shown), the origin and kind filters, the origins seen, the chain
 * check (polled while the background is checking) and the export, assembled here page by page so
 * neither side holds more than a page of the log. Plain signals over an injected `call`.
 */
import { signal } from '@preact/signals';
import type { AuditCheck, AuditEntryView } from '../../../lib/audit';
import { call as popupCall, messageOf } from '../api';
import type { Call } from './perps';

/** Entries per page. */
export const PAGE = 50;

/**
 * Joins export pages into one document's parts: CSV pages are concatenated with CRLF between them (each
 * page after the first without its header, as the background sends them); JSON pages are arrays whose
 * items are spliced into one array.
 */
export function joinExport(format: 'csv' | 'json', pages: readonly string[]): string[] {
  if (format === 'csv') return pages.map((t, n) => (n ? `\r\n${t}` : t));
  const parts: string[] = [];
  for (const text of pages) {
    const inner = text.trim().slice(1, -1).trim();
    if (inner) parts.push(parts.length ? `,\n${inner}` : inner);
  }
  return ['[\n', ...parts, '\n]'];
}

/** The audit store. */
export type AuditStore = ReturnType<typeof createAuditStore>;

/**
 * Creates the store; `start()` reads the newest page, then checks new entries and reads the origins, and returns
 * `stop`.
 */
export function createAuditStore(call: Call = popupCall, pollMs = 400) {
  const entries = signal<AuditEntryView[]>([]);
  const next = signal<number | null>(null);
  const origins = signal<string[]>([]);
  const origin = signal('');
  const kind = signal('');
  const check = signal<AuditCheck | undefined>(undefined);
  const error = signal<string | undefined>(undefined);
  const exporting = signal<string | undefined>(undefined);
  let poll: ReturnType<typeof setTimeout> | undefined;

  /** Checks the chain (`full`: every entry, else the entries added since the last check), polling while it runs. */
  function runCheck(full: boolean): void {
    clearTimeout(poll);
    const step = (first: boolean) =>
      void call('audit.verify', first && full ? { full: true } : {}).then(
        (r) => {
          check.value = r;
          if (r.state === 'checking') poll = setTimeout(() => step(false), pollMs);
        },
        (e) => (error.value = messageOf(e)),
      );
    step(true);
  }
  /** Reads the newest page under the filters, or (with `before`, an entry id) the older page, appended. */
  async function load(before?: number): Promise<void> {
    try {
      const page = await call('audit.list', {
        limit: PAGE,
        ...(origin.value ? { origin: origin.value } : {}),
        ...(kind.value ? { kind: kind.value } : {}),
        ...(before === undefined ? {} : { before }),
      });
      entries.value = before === undefined ? page : [...entries.value, ...page];
      const last = page.at(-1);
      next.value = page.length === PAGE && last ? last.id : null;
    } catch (e) {
      error.value = messageOf(e);
    }
  }
  /** Sets the filters and reads the newest page again. */
  function filter(f: { origin?: string; kind?: string }): Promise<void> {
    if (f.origin !== undefined) origin.value = f.origin;
    if (f.kind !== undefined) kind.value = f.kind;
    return load();
  }
  /** Reads every export page; resolves to the document's parts (undefined on failure, with the error shown). */
  async function exportAll(format: 'csv' | 'json'): Promise<string[] | undefined> {
    const pages: string[] = [];
    let after: number | undefined;
    try {
      for (let n = 0; ; n++) {
        const page = await call('audit.export', { format, ...(after === undefined ? {} : { after }) });
        pages.push(page.text);
        exporting.value = `Exporting… page ${n + 1}`;
        if (page.next === null || (format === 'csv' && !page.text)) break;
        after = page.next;
      }
      return joinExport(format, pages);
    } catch (e) {
      error.value = messageOf(e);
      return undefined;
    } finally {
      exporting.value = undefined;
    }
  }
  /**
   * First reads: the newest page, then the chain's status (the check of new entries) once the page is
   * in, and the origins. The rows never wait for a check. Returns `stop`.
   */
  function start(): () => void {
    let stopped = false;
    void load().then(() => {
      if (stopped) return;
      runCheck(false);
      void call('audit.origins', {}).then(
        (o) => (origins.value = o),
        () => undefined,
      );
    });
    return () => {
      stopped = true;
      clearTimeout(poll);
    };
  }

  return { entries, next, origins, origin, kind, check, error, exporting, runCheck, load, filter, exportAll, start };
}
