/** Unlock screen: password, clear message on a wrong one, and the back-off countdown. */
import { useEffect, useState } from 'preact/hooks';
import { Button, ErrorText, Field } from '../../components/ui';
import { call, changeHeld, messageOf } from './api';
import { RemoteError } from '../../lib/messaging/client';
import { TradingSessionBanner, type SessionSite } from '../../components/TradingSession';

/**
 * In a trading session (`session` non-empty: auto-lock kept only the live grants' keys) the screen says
 * so, and offers Lock (ends the session and every grant) and Panic without the password. When the vault
 * is `recoverable` (missing or older than its second copy, `lib/vault/copy.ts`) it says the unlock restores it.
 */
export function Unlock({
  retryAfterMs,
  onUnlocked,
  session = [],
  onPanic,
  recoverable = false,
}: {
  retryAfterMs: number;
  onUnlocked: () => void;
  session?: SessionSite[];
  onPanic?: () => void;
  recoverable?: boolean;
}) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [waitUntil, setWaitUntil] = useState(Date.now() + retryAfterMs);
  const [now, setNow] = useState(Date.now());
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(t);
  }, []);
  const wait = Math.max(0, Math.ceil((waitUntil - now) / 1000));
  const submit = async (e: Event) => {
    e.preventDefault();
    if (wait > 0 || busy) return;
    setBusy(true);
    setError(undefined);
    try {
      await call('vault.unlock', { password });
      onUnlocked();
    } catch (err) {
      if (changeHeld(err)) return onUnlocked(); // unlocked; its copy is written at the next start
      setError(messageOf(err));
      const retryAfterMs = err instanceof RemoteError ? err.data.retryAfterMs : undefined;
      if (typeof retryAfterMs === 'number') setWaitUntil(Date.now() + retryAfterMs);
      setPassword('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="panel unlock">
      <h1>Countersign</h1>
      {session.length ? (
        <div>
          <TradingSessionBanner sites={session} now={now} sealed />
          <div class="row">
            <Button
              kind="danger"
              onClick={onPanic}
              title="Cancel everything at both venues, revoke permissions and lock"
            >
              Panic
            </Button>
            <Button onClick={() => void call('vault.lock', {}).then(onUnlocked)}>End session and lock</Button>
          </div>
        </div>
      ) : null}
      {recoverable ? (
        <p class="notice" role="status" data-testid="vault-recoverable">
          The browser lost your vault’s storage, or part of it. A copy of it is kept apart: unlock with your password
          and Countersign restores your keys from it.
        </p>
      ) : null}
      <form onSubmit={(e) => void submit(e)}>
        <Field label="Password">
          <input
            type="password"
            name="password"
            autoFocus
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            autocomplete="current-password"
          />
        </Field>
        <ErrorText error={error} />
        {wait > 0 ? (
          <p class="muted" role="status">
            You can try again in {wait} s.
          </p>
        ) : null}
        <Button kind="primary" type="submit" disabled={wait > 0 || busy || !password}>
          Unlock
        </Button>
      </form>
    </main>
  );
}
