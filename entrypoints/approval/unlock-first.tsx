/**
 * The approval window on a locked vault: a site called `eth_requestAccounts` (or
 * `wallet_requestPermissions`) while Countersign was locked, so the window shows the unlock form first,
 * then the approval queue (the connection request). While the unlock form is up the window still reports
 * the request it stands for (`approval.showing`), so closing it rejects that request (4001), and it closes
 * itself when the queue empties (the request expired or was cancelled).
 */
import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { Unlock } from '../popup/unlock';
import type { Call } from '../popup/stores/perps';

/** How often the locked window re-reads the queue (ms). */
const POLL_MS = 1_000;

/**
 * The window's lock state from a `vault.status` call: the password back-off when locked, else null (an unanswered
 * status reads as not locked: the queue shows, and the background refuses what a lock refuses).
 */
export async function lockedFrom(
  status: Promise<{ initialized: boolean; state: string; retryAfterMs: number }>,
): Promise<{ retryAfterMs: number } | null> {
  return status.then(
    (s) => (s.initialized && s.state === 'locked' ? { retryAfterMs: s.retryAfterMs } : null),
    () => null,
  );
}

/**
 * Renders `children` (the approval queue) once the vault is not locked; before that, the unlock form and
 * the waiting request's origin. `known`: the lock state read before the first render (`lockedFrom`); without
 * it the component asks `vault.status` itself.
 */
export function UnlockFirst({
  call,
  onEmpty,
  known,
  children,
}: {
  call: Call;
  onEmpty: () => void;
  known?: { retryAfterMs: number } | null;
  children: ComponentChildren;
}) {
  const [locked, setLocked] = useState<{ retryAfterMs: number } | null | undefined>(known);
  const [origin, setOrigin] = useState<string>();
  useEffect(() => {
    if (known === undefined) void lockedFrom(call('vault.status', {})).then(setLocked);
  }, []);
  useEffect(() => {
    if (!locked) return;
    let shown: string | undefined;
    const read = async () => {
      const [head] = await call('approval.list', {});
      if (!head) return onEmpty();
      setOrigin(head.origin);
      if (shown !== `${head.id}:${head.digest}`) {
        shown = `${head.id}:${head.digest}`;
        await call('approval.showing', { id: head.id, digest: head.digest });
      }
    };
    void read().catch(() => undefined);
    const t = setInterval(() => void read().catch(() => undefined), POLL_MS);
    return () => clearInterval(t);
  }, [locked]);
  if (locked === undefined) return <main class="panel">Loading…</main>;
  if (locked === null) return <>{children}</>;
  return (
    <div>
      <p class="panel small" data-testid="unlock-first">
        {origin ? <strong>{origin}</strong> : 'A site'} asks to connect. Countersign is locked: unlock it first, then
        review the request.
      </p>
      <Unlock retryAfterMs={locked.retryAfterMs} onUnlocked={() => setLocked(null)} />
    </div>
  );
}
