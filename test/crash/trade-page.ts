/**
 * The page side of the trade kills (test-only, `trade-kills.ts`): the sandbox's demo page in a browser of
 * the crash harness (`harness.ts`), requests through its provider (`window.countersign`), and the approval
 * window decided as a person decides it — Approve once it is armed (1 s of focus), the grant form filled
 * with chosen caps. Like `test/e2e/harness.ts`, but over the crash harness's CDP connection.
 */
import type { BrowserContext, Page } from 'playwright-core';
import type { RunningSandbox } from '../../lib/sandbox/server';
import type { Running } from './harness';

/** What a page request got: `ok` with the result `r`, or the provider error's `code`, `message` and flat `data`. */
export type PageAnswer =
  { ok: true; r: unknown } | { ok: false; code?: number; message?: string; data?: Record<string, unknown> };

/** Caps of a standing grant as the person types them in the window's form (USDC decimal strings). */
export type Caps = { perOrder: string; daily: string };

const isApproval = (p: Page) => p.url().endsWith('/approval.html');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sends `method` (with `params` when given) through `demo`'s provider: the answer, never a rejection from
 * the provider (its error is the answer); rejects only when the page or the browser is gone.
 */
export function pageRequest(demo: Page, method: string, params?: unknown): Promise<PageAnswer> {
  return demo.evaluate(
    ([m, p]) =>
      (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign
        .request({ method: m, ...(p === undefined ? {} : { params: p }) })
        .then(
          (r): PageAnswer => ({ ok: true, r }),
          (e: { code?: number; message?: string; data?: Record<string, unknown> } | undefined): PageAnswer => ({
            ok: false,
            code: e?.code,
            message: e?.message,
            data: e?.data,
          }),
        ),
    [method, params] as const,
  );
}

/** A page answer in a few words: `ok`, or the error's code and message. */
export function answerWords(a: PageAnswer | undefined): string {
  if (!a) return 'no answer';
  return a.ok ? 'ok' : `${a.code} ${a.message ?? ''}`.trim();
}

/**
 * Opens the sandbox's demo page in `r` and waits for its provider. The connection is stored in the
 * profile, so a page opened after a relaunch is connected already (`ensureConnected` when it may not be).
 */
export async function openDemo(r: Running, sandbox: RunningSandbox): Promise<Page> {
  const demo = await r.ctx.newPage();
  await demo.goto(`${sandbox.url}/demo`);
  await demo.getByText('Found Countersign').first().waitFor();
  return demo;
}

/**
 * Connects `demo` unless `eth_accounts` already names an account (the vault must be unlocked):
 * `eth_requestAccounts`, approved in its window. Whether it had to connect.
 */
export async function ensureConnected(r: Running, demo: Page): Promise<boolean> {
  const accounts = await pageRequest(demo, 'eth_accounts');
  if (accounts.ok && Array.isArray(accounts.r) && accounts.r.length > 0) return false;
  const answer = pageRequest(demo, 'eth_requestAccounts');
  const w = await armedWindow(r.ctx);
  if (!w) throw new Error('the connection window never armed');
  await clickApprove(w);
  const a = await answer;
  if (!a.ok) throw new Error(`eth_requestAccounts: ${answerWords(a)}`);
  return true;
}

/**
 * The approval window of `ctx` whose Approve is armed, waiting at most `timeoutMs` (ms) for one, or until
 * `stop()`: each window is brought to the front (Approve arms after 1 s of focus). Undefined when none
 * armed in time.
 */
export async function armedWindow(
  ctx: BrowserContext,
  timeoutMs = 15_000,
  stop: () => boolean = () => false,
): Promise<Page | undefined> {
  const until = Date.now() + timeoutMs;
  const fronted = new Set<Page>();
  while (Date.now() < until && !stop()) {
    for (const w of ctx.pages().filter(isApproval)) {
      if (w.isClosed()) continue;
      if (!fronted.has(w)) {
        fronted.add(w);
        await w.bringToFront().catch(() => undefined);
      }
      const armed = await w
        .evaluate(() => {
          const b = document.querySelector('[data-testid="approve"]');
          return b instanceof HTMLButtonElement && !b.disabled;
        })
        .catch(() => false);
      if (armed) return w;
    }
    await sleep(50);
  }
  return undefined;
}

/** Clicks Approve in window `w`; returns right after the click (a window that closed under the click took it). */
export async function clickApprove(w: Page): Promise<void> {
  try {
    await w.getByTestId('approve').click({ timeout: 5_000 });
  } catch (err) {
    if (!w.isClosed()) throw err;
  }
}

/**
 * Approves whatever an approval window of `ctx` shows next, if one arms within `timeoutMs` (ms) and
 * before `stop()`: whether one did. A person approving a window the site's retry opened is the worst case
 * a retry can meet.
 */
export async function approveIfAsked(ctx: BrowserContext, timeoutMs: number, stop?: () => boolean): Promise<boolean> {
  const w = await armedWindow(ctx, timeoutMs, stop);
  if (!w) return false;
  await clickApprove(w);
  return true;
}

/**
 * Grants the demo page a standing permission as a person does: the page sends `method(params)`, its
 * window offers "Allow this site within limits…", the form is saved with `caps` (the proposal's other
 * limits kept: 2 % band, 60 requests a minute, 8 h) and the request approved. Throws when the request that
 * offered the grant was not accepted.
 */
export async function grantInWindow(
  r: Running,
  demo: Page,
  method: string,
  params: unknown,
  caps: Caps,
): Promise<void> {
  const opened = r.ctx.waitForEvent('page', { predicate: isApproval, timeout: 10_000 });
  const first = pageRequest(demo, method, params);
  // An answer before any window (a refusal) says more than the window's timeout would.
  const w = await Promise.race([opened, first.then((a) => a)]);
  if (!('url' in w)) {
    opened.catch(() => undefined);
    throw new Error(`the ${method} request that was to offer a grant was answered without a window: ${answerWords(w)}`);
  }
  await w.getByRole('button', { name: 'Allow this site within limits…' }).click();
  await w.locator('input[name="grant-max-notional"]').fill(caps.perOrder);
  await w.locator('input[name="grant-daily"]').fill(caps.daily);
  await w.getByRole('button', { name: 'Save permission' }).click();
  await w.getByText(/Saved for/).waitFor();
  const armed = await armedWindow(r.ctx);
  if (!armed) throw new Error('the grant window never armed');
  await clickApprove(armed);
  const a = await first;
  if (!a.ok) throw new Error(`the ${method} request that offered the grant: ${answerWords(a)}`);
}
