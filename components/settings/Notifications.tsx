/**
 * The "Notifications" section of Settings: each kind of browser notification switched on or
 * off, the liquidation distance (% of the mark) and the stream-down delay (s). Presentational: it reads
 * and saves through the `load` / `save` it is given (the popup passes `notifications.get` / `.set`);
 * a refused value shows the background's message and keeps what was typed.
 */
import { useEffect, useState } from 'preact/hooks';
import type { NotificationPrefs } from '../../lib/notifications/prefs';
import { Button, ErrorText, Field, Notice } from '../ui';

/**
 * Props: `load` the stored preferences, `save` a patch (resolves the new preferences; rejects with a `shortMessage`
 * error when refused).
 */
export function NotificationSettings({
  load,
  save,
}: {
  load: () => Promise<NotificationPrefs>;
  save: (patch: Partial<NotificationPrefs>) => Promise<NotificationPrefs>;
}) {
  const [prefs, setPrefs] = useState<NotificationPrefs>();
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);
  useEffect(() => void load().then(setPrefs, () => setError('Could not read the notification settings.')), [load]);
  if (!prefs) return error ? <ErrorText error={error} /> : null;
  const edit = (patch: Partial<NotificationPrefs>) => {
    setPrefs({ ...prefs, ...patch });
    setSaved(false);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    setError(undefined);
    save(prefs).then(
      (next) => {
        setPrefs(next);
        setSaved(true);
      },
      (err: unknown) =>
        setError(
          err && typeof err === 'object' && 'shortMessage' in err && typeof err.shortMessage === 'string'
            ? err.shortMessage
            : 'Could not save.',
        ),
    );
  };
  const box = (key: 'fills' | 'cancels' | 'liquidation' | 'streamDown', label: string) => (
    <label class="check">
      <input
        type="checkbox"
        name={`notify-${key}`}
        checked={prefs[key]}
        onChange={(e) => edit({ [key]: e.currentTarget.checked })}
      />{' '}
      {label}
    </label>
  );
  return (
    <form aria-label="Notifications" data-testid="notification-settings" onSubmit={submit}>
      <h3>Notifications</h3>
      <p class="field-hint">
        Shown by the browser, also while this popup is closed. They name the market, side, size and price — never a key
        or secret.
      </p>
      {box('fills', 'An order filled or partly filled')}
      {box('cancels', 'An order cancelled by the venue or the dead-man switch')}
      {box('liquidation', 'A position near its liquidation price')}
      <Field label="…within (% of the mark price)">
        <input
          name="liquidationPct"
          inputMode="decimal"
          value={String(prefs.liquidationPct)}
          onInput={(e) => edit({ liquidationPct: Number(e.currentTarget.value) })}
        />
      </Field>
      {box('streamDown', 'The live stream down while a permission is live')}
      <Field label="…for more than (seconds)">
        <input
          name="streamDownSeconds"
          inputMode="numeric"
          value={String(prefs.streamDownSeconds)}
          onInput={(e) => edit({ streamDownSeconds: Number(e.currentTarget.value) })}
        />
      </Field>
      <Button kind="primary" type="submit">
        Save notifications
      </Button>
      <ErrorText error={error} />
      {saved ? <Notice>Notification settings saved</Notice> : null}
    </form>
  );
}
