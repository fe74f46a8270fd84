/**
 * Shared set-up of the approval-words suites (`lib/approvals/*-words.test.ts`; test-only, nothing in the
 * extension imports it): what a person reads from a rendered component tree, and the popup's `call`
 * over a background's procedures, so the popup's own stores and the approval window's store read through
 * that background.
 */
import type { VNode } from 'preact';
import type { Call } from '../../entrypoints/popup/stores/perps';
import { callAs, type PagedBackground } from './background';

/**
 * Every text a vnode tree renders, in order: function components are called with their props, strings
 * and numbers kept, `null` / `undefined` / booleans dropped, and each element's children followed by one
 * space. White space is kept as rendered (a caller that compares words folds runs of it).
 */
export function renderedText(n: unknown): string {
  if (n === null || n === undefined || typeof n === 'boolean') return '';
  if (typeof n === 'string' || typeof n === 'number') return String(n);
  if (Array.isArray(n)) return n.map(renderedText).join('');
  const v = n as VNode<{ children?: unknown }>;
  if (typeof v.type === 'function') return renderedText((v.type as (p: unknown) => unknown)(v.props));
  return `${renderedText(v.props?.children)} `;
}

/**
 * The popup's `call` over the procedures of `bg`, sent as the popup (`callAs`): resolves a procedure's
 * result; a refused procedure rejects with an `Error` whose message is the reply's `shortMessage`
 * ("failed" when there is none).
 */
export const popupCall = (bg: PagedBackground): Call =>
  (async (type: string, payload: unknown) => {
    const r = (await callAs(bg, type, payload)) as { ok: boolean; result?: unknown; error?: { shortMessage: string } };
    if (!r.ok) throw new Error(r.error?.shortMessage ?? 'failed');
    return r.result;
  }) as Call;
