/**
 * Settings: gateway URLs (default: the sandbox), auto-lock minutes, theme (system / light / dark),
 * encrypted backup export and restore, password change, and adding another owner key.
 */
import { useEffect, useState } from 'preact/hooks';
import { Button, ErrorText, Field, Notice } from '../../components/ui';
import { call, messageOf } from './api';
import { Permissions } from './permissions';

type Settings = { perpsUrl: string; clobUrl: string; gammaUrl: string; dataUrl: string; clobChainId: number; autoLockMinutes: number; theme: 'system' | 'light' | 'dark'; headerSet: 'seed' | 'venue'; maxPositionUsdc: number; auditRetentionDays: number };

export function SettingsView({ onChanged, onAddKey }: { onChanged: () => Promise<void>; onAddKey: () => void }) {
  const [s, setS] = useState<Settings>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [oldPw, setOldPw] = useState('');
  const [newPw, setNewPw] = useState('');
  const [restorePw, setRestorePw] = useState('');
  const [restoreText, setRestoreText] = useState<string>();
  const [invalid, setInvalid] = useState<{ field: string; reason: string }[]>([]);
  useEffect(
    () =>
      void call('settings.get', {}).then((r) => {
        setS(r.settings);
        setInvalid(r.invalid);
      }),
    [],
  );
  const run = async (fn: () => Promise<string>) => {
    setError(undefined);
    setNotice(undefined);
    try {
      setNotice(await fn());
    } catch (err) {
      setError(messageOf(err));
    }
  };
  if (!s) return <section class="panel">Loading…</section>;
  const save = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const next = await call('settings.set', s);
      setS(next);
      setInvalid([]);
      document.documentElement.dataset.theme = next.theme;
      return 'Settings saved';
    });
  };
  return (
    <section class="panel settings">
      <Permissions />
      <form onSubmit={save}>
        {invalid.length ? (
          <p class="error" role="alert" data-testid="invalid-settings">
            Some stored settings were invalid and were reset to their defaults: {invalid.map((i) => `${i.field} (${i.reason})`).join('; ')}. Check them and save.
          </p>
        ) : null}
        <h3>Gateways</h3>
        <Field label="Perps gateway"><input name="perpsUrl" value={s.perpsUrl} onInput={(e) => setS({ ...s, perpsUrl: e.currentTarget.value })} /></Field>
        <Field label="Order-book exchange"><input name="clobUrl" value={s.clobUrl} onInput={(e) => setS({ ...s, clobUrl: e.currentTarget.value })} /></Field>
        <Field label="Catalogue"><input name="gammaUrl" value={s.gammaUrl} onInput={(e) => setS({ ...s, gammaUrl: e.currentTarget.value })} /></Field>
        <Field label="Data service"><input name="dataUrl" value={s.dataUrl} onInput={(e) => setS({ ...s, dataUrl: e.currentTarget.value })} /></Field>
        <Field label="Authentication header names">
          <select name="headerSet" value={s.headerSet} onChange={(e) => setS({ ...s, headerSet: e.currentTarget.value as Settings['headerSet'] })}>
            <option value="seed">SVC_* / SERVICE-* (sandbox, default)</option><option value="venue">POLY_* / POLYMARKET-* (the venue's gateways)</option>
          </select>
        </Field>
        <Field label="Keep the audit log (days, 0 = forever)"><input name="auditRetentionDays" inputMode="numeric" value={String(s.auditRetentionDays)} onInput={(e) => setS({ ...s, auditRetentionDays: Number(e.currentTarget.value) })} /></Field>
        <Field label="Warn when a position would exceed (USDC notional)"><input name="maxPositionUsdc" inputMode="numeric" value={String(s.maxPositionUsdc)} onInput={(e) => setS({ ...s, maxPositionUsdc: Number(e.currentTarget.value) })} /></Field>
        <div class="grid3">
          <Field label="Auto-lock (minutes)"><input name="autoLockMinutes" inputMode="numeric" value={String(s.autoLockMinutes)} onInput={(e) => setS({ ...s, autoLockMinutes: Number(e.currentTarget.value) })} /></Field>
          <Field label="Theme">
            <select name="theme" value={s.theme} onChange={(e) => setS({ ...s, theme: e.currentTarget.value as Settings['theme'] })}>
              <option value="system">Follow the system</option><option value="light">Light</option><option value="dark">Dark</option>
            </select>
          </Field>
          <Button kind="primary" type="submit">Save</Button>
        </div>
      </form>
      <h3>Backup</h3>
      <div class="actions">
        <Button onClick={() => void run(async () => {
          const { backup } = await call('vault.exportBackup', {});
          const a = document.createElement('a');
          a.href = URL.createObjectURL(new Blob([backup], { type: 'application/json' }));
          a.download = `countersign-backup-${new Date().toISOString().slice(0, 10)}.json`;
          a.click();
          return 'Encrypted backup downloaded. It is useless without your password.';
        })}>Export encrypted backup</Button>
      </div>
      <Field label="Restore from a backup file"><input type="file" accept="application/json" onChange={(e) => void e.currentTarget.files?.[0]?.text().then(setRestoreText)} /></Field>
      {restoreText ? (
        <form onSubmit={(e) => { e.preventDefault(); void run(async () => { await call('vault.restoreBackup', { backup: restoreText, password: restorePw }); await onChanged(); return 'Backup restored'; }); }}>
          <Field label="Password of that backup"><input type="password" value={restorePw} onInput={(e) => setRestorePw(e.currentTarget.value)} /></Field>
          <Button kind="danger" type="submit">Replace this vault with the backup</Button>
        </form>
      ) : null}
      <h3>Password</h3>
      <form onSubmit={(e) => { e.preventDefault(); void run(async () => { await call('vault.changePassword', { oldPassword: oldPw, newPassword: newPw }); setOldPw(''); setNewPw(''); return 'Password changed'; }); }}>
        <Field label="Current password"><input type="password" value={oldPw} onInput={(e) => setOldPw(e.currentTarget.value)} autocomplete="current-password" /></Field>
        <Field label="New password"><input type="password" value={newPw} onInput={(e) => setNewPw(e.currentTarget.value)} autocomplete="new-password" /></Field>
        <Button type="submit" disabled={!oldPw || newPw.length < 8}>Change password</Button>
      </form>
      <h3>Keys</h3>
      <Button onClick={onAddKey}>Add or generate an owner key</Button>
      <ErrorText error={error} />
      {notice ? <Notice>{notice}</Notice> : null}
    </section>
  );
}
