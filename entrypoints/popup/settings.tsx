/**
 * Settings: the venue preset and its connection check (`components/settings/Presets.tsx`), gateway URLs (default: the
 * sandbox), auto-lock minutes, theme (system / light / dark), encrypted backup export and restore, password change, and
 * adding another owner key. State: the app's settings store (`stores/settings.ts`); the passwords and the backup file
 * being entered stay local.
 */
import { useEffect, useState } from 'preact/hooks';
import { Button, ErrorText, Field, Notice } from '../../components/ui';
import { invalidText, type SettingsStore } from './stores/settings';
import { Permissions } from './permissions';
import { NotificationSettings } from '../../components/settings/Notifications';
import { call, type Status } from './api';
import { Presets } from '../../components/settings/Presets';
import { TRANSPORT_FIELDS } from '../../lib/settings/transport';

const THEMES = ['system', 'light', 'dark'] as const;
const HEADER_SETS = ['seed', 'venue'] as const;
/** `v` if it is one of `options`, else undefined (a `<select>` value narrowed without a cast). */
const oneOf = <T extends string>(options: readonly T[], v: string): T | undefined => options.find((o) => o === v);

const loadNotifications = () => call('notifications.get', {});
const saveNotifications = (patch: Parameters<typeof call<'notifications.set'>>[1]) => call('notifications.set', patch);

/** The Settings tab; `onChanged` re-reads the vault status after a restore. */
export function SettingsView({
  settings: st,
  accounts,
  onChanged,
  onAddKey,
}: {
  settings: SettingsStore;
  accounts: Status['accounts'];
  onChanged: () => Promise<void>;
  onAddKey: () => void;
}) {
  // Opening the tab reads the stored settings again (and which were invalid).
  useEffect(() => void st.load().catch(() => undefined), [st]);
  const s = st.draft.value;
  if (!s) return <section class="panel">Loading…</section>;
  const invalid = st.invalid.value;
  const save = (e: Event) => {
    e.preventDefault();
    void st.save();
  };
  const num = (v: string) => Number(v);
  return (
    <section class="panel settings">
      <Permissions />
      <form onSubmit={save}>
        {invalid.length ? (
          <p class="error" role="alert" data-testid="invalid-settings">
            Some stored settings were invalid and were reset to their defaults: {invalidText(invalid)}. Check them and
            save.
          </p>
        ) : null}
        <TransportNotices settings={st} accounts={accounts} onChanged={onChanged} />
        <PresetsSection settings={st} />
        <h3>Gateways</h3>
        <Field label="Perps gateway">
          <input name="perpsUrl" value={s.perpsUrl} onInput={(e) => st.edit({ perpsUrl: e.currentTarget.value })} />
        </Field>
        <Field label="Order-book exchange">
          <input name="clobUrl" value={s.clobUrl} onInput={(e) => st.edit({ clobUrl: e.currentTarget.value })} />
        </Field>
        <Field label="Catalogue">
          <input name="gammaUrl" value={s.gammaUrl} onInput={(e) => st.edit({ gammaUrl: e.currentTarget.value })} />
        </Field>
        <Field label="Data service">
          <input name="dataUrl" value={s.dataUrl} onInput={(e) => st.edit({ dataUrl: e.currentTarget.value })} />
        </Field>
        <Field label="Relayer (deposit wallets)">
          <input
            name="relayerUrl"
            value={s.relayerUrl}
            onInput={(e) => st.edit({ relayerUrl: e.currentTarget.value })}
          />
        </Field>
        <Field label="Chain RPC (deposit-wallet reads)">
          <input name="rpcUrl" value={s.rpcUrl} onInput={(e) => st.edit({ rpcUrl: e.currentTarget.value })} />
        </Field>
        <Field label="Authentication header names">
          <select
            name="headerSet"
            value={s.headerSet}
            onChange={(e) => st.edit({ headerSet: oneOf(HEADER_SETS, e.currentTarget.value) ?? s.headerSet })}
          >
            <option value="seed">SVC_* / SERVICE-* (sandbox, default)</option>
            <option value="venue">POLY_* / POLYMARKET-* (the venue's gateways)</option>
          </select>
        </Field>
        <Field label="Keep the audit log (days, 0 = forever)">
          <input
            name="auditRetentionDays"
            inputMode="numeric"
            value={String(s.auditRetentionDays)}
            onInput={(e) => st.edit({ auditRetentionDays: num(e.currentTarget.value) })}
          />
        </Field>
        <Field label="Warn when a position would exceed (USDC notional)">
          <input
            name="maxPositionUsdc"
            inputMode="numeric"
            value={String(s.maxPositionUsdc)}
            onInput={(e) => st.edit({ maxPositionUsdc: num(e.currentTarget.value) })}
          />
        </Field>
        <Field label="Market order slippage cap (basis points)">
          <input
            name="slippageBps"
            inputMode="numeric"
            value={String(s.slippageBps)}
            onInput={(e) => st.edit({ slippageBps: num(e.currentTarget.value) })}
          />
        </Field>
        <div class="grid3">
          <Field label="Auto-lock (minutes)">
            <input
              name="autoLockMinutes"
              inputMode="numeric"
              value={String(s.autoLockMinutes)}
              onInput={(e) => st.edit({ autoLockMinutes: num(e.currentTarget.value) })}
            />
          </Field>
          <Field label="Theme">
            <select
              name="theme"
              value={s.theme}
              onChange={(e) => st.edit({ theme: oneOf(THEMES, e.currentTarget.value) ?? s.theme })}
            >
              <option value="system">Follow the system</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </Field>
          <Button kind="primary" type="submit">
            Save
          </Button>
        </div>
      </form>
      <NotificationSettings load={loadNotifications} save={saveNotifications} />
      <BackupSettings settings={st} onChanged={onChanged} />
      <PasswordSettings settings={st} />
      <h3>Keys</h3>
      <Button onClick={onAddKey}>Add or generate an owner key</Button>
      <ErrorText error={st.error.value} />
      {st.notice.value ? <Notice>{st.notice.value}</Notice> : null}
    </section>
  );
}

/** The settings form's venue preset section: the store's draft, saved preset and check given to `Presets`. */
function PresetsSection({ settings: st }: { settings: SettingsStore }) {
  const draft = st.draft.value;
  const saved = st.saved.value;
  if (!draft || !saved) return null;
  return (
    <Presets
      draft={draft}
      savedPreset={saved.preset}
      checks={st.checks.value}
      checking={st.checking.value}
      unconfirmed={st.unconfirmed.value}
      onEdit={st.edit}
      onChoosePreset={(id) => void st.choosePreset(id)}
      onConfirm={() => void st.confirmVenue()}
      onCheck={() => void st.check()}
    />
  );
}

/**
 * Backup: exports the encrypted backup as a download, and restores one from a file with its password (then
 * `onChanged` re-reads the vault status). The file's text and the password stay local.
 */
function BackupSettings({ settings: st, onChanged }: { settings: SettingsStore; onChanged: () => Promise<void> }) {
  const [restorePw, setRestorePw] = useState('');
  const [restoreText, setRestoreText] = useState<string>();
  return (
    <>
      <h3>Backup</h3>
      <div class="actions">
        <Button
          onClick={() =>
            void st.run(async () => {
              const backup = await st.exportBackup();
              const a = document.createElement('a');
              a.href = URL.createObjectURL(new Blob([backup], { type: 'application/json' }));
              a.download = `countersign-backup-${new Date().toISOString().slice(0, 10)}.json`;
              a.click();
              return 'Encrypted backup downloaded. It is useless without your password.';
            })
          }
        >
          Export encrypted backup
        </Button>
      </div>
      <Field label="Restore from a backup file">
        <input
          type="file"
          accept="application/json"
          onChange={(e) => void e.currentTarget.files?.[0]?.text().then(setRestoreText)}
        />
      </Field>
      {restoreText ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void st.run(async () => {
              await st.restore(restoreText, restorePw);
              await onChanged();
              return 'Backup restored';
            });
          }}
        >
          <Field label="Password of that backup">
            <input type="password" value={restorePw} onInput={(e) => setRestorePw(e.currentTarget.value)} />
          </Field>
          <Button kind="danger" type="submit">
            Replace this vault with the backup
          </Button>
        </form>
      ) : null}
    </>
  );
}

/** Password: changes the vault password (current and new, at least 8 characters); the fields stay local. */
function PasswordSettings({ settings: st }: { settings: SettingsStore }) {
  const [oldPw, setOldPw] = useState('');
  const [newPw, setNewPw] = useState('');
  return (
    <>
      <h3>Password</h3>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void st.run(async () => {
            await st.changePassword(oldPw, newPw);
            setOldPw('');
            setNewPw('');
            return 'Password changed';
          });
        }}
      >
        <Field label="Current password">
          <input
            type="password"
            value={oldPw}
            onInput={(e) => setOldPw(e.currentTarget.value)}
            autocomplete="current-password"
          />
        </Field>
        <Field label="New password">
          <input
            type="password"
            value={newPw}
            onInput={(e) => setNewPw(e.currentTarget.value)}
            autocomplete="new-password"
          />
        </Field>
        <Button type="submit" disabled={!oldPw || newPw.length < 8}>
          Change password
        </Button>
      </form>
    </>
  );
}

/**
 * What the transport rule found (`lib/settings/transport.ts`): the stored service URLs it refuses at use,
 * and the services the stored settings ever named in clear with what may have travelled, offering the
 * rotation that makes it worthless (a new proxy key; new order-book API credentials) and, once done, to
 * clear the notice.
 */
function TransportNotices({
  settings: st,
  accounts,
  onChanged,
}: {
  settings: SettingsStore;
  accounts: Status['accounts'];
  onChanged: () => Promise<void>;
}) {
  const insecure = st.insecure.value;
  const uses = st.cleartext.value;
  if (!insecure.length && !uses.length) return null;
  const rotations = new Set(uses.flatMap((u) => (u.rotate ? [u.rotate] : [])));
  const rotate = (what: 'proxy' | 'clob') => void st.rotate(what, accounts).then(onChanged);
  return (
    <div data-testid="transport-notices">
      {insecure.length ? (
        <p class="error" role="alert" data-testid="insecure-settings">
          Countersign will not use these until they are changed:{' '}
          {insecure.map((i) => `the ${TRANSPORT_FIELDS[i.field]} ${i.url} (${i.reason})`).join('; ')}.
        </p>
      ) : null}
      {uses.length ? (
        <div class="error" role="alert" data-testid="cleartext-uses">
          <p>Your settings named services without encryption. What may have travelled in clear:</p>
          <ul>
            {uses.map((u) => (
              <li key={`${u.field} ${u.url}`}>
                {u.url} (since {new Date(u.since).toLocaleString()}):{' '}
                {u.secrets || 'nothing secret; what it answered may have been altered'}.
              </li>
            ))}
          </ul>
          {insecure.length && rotations.size ? (
            <p class="small">Change the URLs above first: new keys sent in clear would be exposed again.</p>
          ) : null}
          {rotations.has('proxy') ? (
            <Button disabled={insecure.length > 0} onClick={() => rotate('proxy')}>
              Issue new proxy keys
            </Button>
          ) : null}
          {rotations.has('clob') ? (
            <Button disabled={insecure.length > 0} onClick={() => rotate('clob')}>
              Replace the order-book API credentials
            </Button>
          ) : null}
          <Button onClick={() => void st.clearCleartext()}>Done: clear this notice</Button>
        </div>
      ) : null}
    </div>
  );
}
