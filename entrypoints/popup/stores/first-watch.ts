/**
 * The popup's first `streams.watch` at open (`beginFirstWatch`, started from `main.tsx` before the first render) and
 * how the perps store takes its answer (`takeFirstWatch`) and waits for it before its other reads
 * (`firstAnswerOrLater`).
 */
import { createCaller } from '../../../lib/messaging/client';
import type { EarlyWatch } from '../../../lib/messaging/start-hint-keys';
import { call as popupCall, takeBootWatch } from '../api';

/** The `streams.watch` answer. */
type WatchAnswer = Awaited<ReturnType<typeof popupCall<'streams.watch'>>>;

/** The popup's first `streams.watch` (see `beginFirstWatch`) and when its answer came (Unix ms); taken once. */
let firstWatch: Promise<{ account: string; iid: number; answer: WatchAnswer; at: number } | undefined> | undefined;

/**
 * Begins the popup's first `streams.watch` as soon as the start hint is read (popup open →
 * loaded), before the first render: for the hinted active account when it has a live proxy key, and
 * `last`, the instrument shown last (`LAST_INSTRUMENT`; not a positive integer: no early watch). When
 * the boot script already asked for that account and instrument (`early`, `takeBootWatch`), its
 * reply is taken instead, parsed by the procedure's output schema like any answer. The perps store of
 * that account takes the answer for its first watch of that instrument (`takeFirstWatch`); anything
 * else asks afresh. Never rejects; resolves when the answer came (or none will).
 */
export function beginFirstWatch(
  hint: Promise<{
    status?: { activeAccount: string | null; accounts: { address: string; proxies: { expiry: number }[] }[] };
  }>,
  last: number,
  call: typeof popupCall = popupCall,
  early: Promise<EarlyWatch | undefined> | undefined = takeBootWatch(),
): Promise<void> {
  firstWatch = hint
    .then(async ({ status }) => {
      const acc = status?.accounts.find((a) => a.address === status.activeAccount);
      if (!acc || !acc.proxies.some((p) => p.expiry > Date.now()) || !Number.isInteger(last) || last <= 0)
        return undefined;
      const boot = await early?.catch(() => undefined);
      // The boot script's reply when it asked the same; else ask now. Either way parsed by the contract.
      const came = boot && boot.account === acc.address && boot.iid === last ? await boot.reply : undefined;
      const ask = came ? createCaller(async () => came.reply) : call;
      const answer = await ask('streams.watch', { account: acc.address, perpsIid: last });
      return { account: acc.address, iid: last, answer, at: came?.at ?? Date.now() };
    })
    .catch(() => undefined);
  return firstWatch.then(() => undefined);
}

/**
 * The first watch's answer when it was for `account` and `iid`, with when it came (once; later calls get undefined).
 */
export async function takeFirstWatch(
  account: string | undefined,
  iid: number | undefined,
): Promise<{ answer: WatchAnswer; at: number } | undefined> {
  const pending = firstWatch;
  firstWatch = undefined;
  const got = pending && (await pending);
  return got && account && got.account.toLowerCase() === account.toLowerCase() && got.iid === iid ? got : undefined;
}

/** Whether the popup's first watch was begun and not taken yet (its answer is on its way or came). */
export const firstWatchPending = (): boolean => firstWatch !== undefined;

/**
 * How long (ms) the perps store's other reads wait at open for the popup's first watch's answer
 * (`beginFirstWatch`) before they are asked anyway: a running background answers within a few ms, and
 * one the browser stopped must not hold the instruments back.
 */
const FIRST_ANSWER_WAIT_MS = 30;

/**
 * Resolves when `watched` (the store's first watch at open, its answer already on its way) does, or
 * after `FIRST_ANSWER_WAIT_MS`: the store's other reads wait for it, so that on the popup's one thread
 * their sends and answers do not come before it.
 */
export const firstAnswerOrLater = (watched: Promise<unknown>): Promise<unknown> =>
  Promise.race([watched, new Promise((resolve) => setTimeout(resolve, FIRST_ANSWER_WAIT_MS))]);
