/** Popup root: loads the vault status and shows onboarding, unlock, or the unlocked tabs. */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Address } from '../../components/Address';
import { Button, Tabs } from '../../components/ui';
import { call, type Status } from './api';
import { Onboarding } from './onboarding';
import { Unlock } from './unlock';
import { PerpsTicket } from './perps';
import { ClobTicket } from './clob';
import { AccountView } from './account';
import { SettingsView } from './settings';
import { ApprovalQueue } from '../approval/queue';

type TabId = 'perps' | 'clob' | 'account' | 'settings';
const TABS = [
  { id: 'perps', label: 'Perps' },
  { id: 'clob', label: 'Order book' },
  { id: 'account', label: 'Account' },
  { id: 'settings', label: 'Settings' },
] as const;

export function App() {
  const [status, setStatus] = useState<Status | undefined>();
  const [tab, setTab] = useState<TabId>('perps');
  const [onboarding, setOnboarding] = useState(false);
  const refresh = useCallback(async () => {
    const s = await call<'vault.status', Status>('vault.status', {});
    setStatus(s);
    if (!s.initialized) setOnboarding(true);
  }, []);
  useEffect(() => {
    void refresh();
    void call<'settings.get', { settings: { theme: string } }>('settings.get', {}).then((r) => {
      document.documentElement.dataset.theme = r.settings.theme;
    });
  }, [refresh]);

  if (!status) return <main class="loading">Loading…</main>;
  if (onboarding) return <Onboarding status={status} onDone={() => { setOnboarding(false); void refresh(); }} refresh={refresh} />;
  if (!status.unlocked) return <Unlock retryAfterMs={status.retryAfterMs} onUnlocked={refresh} />;
  // While approvals are pending the popup opens on the approval queue (the same view as the window).
  if (status.pendingApprovals > 0) return <ApprovalQueue call={call} onEmpty={() => void refresh()} />;
  const account = status.accounts[0];
  const lock = async () => {
    await call('vault.lock', {});
    await refresh();
  };
  return (
    <main class="app">
      <header class="top">
        <strong class="brand">Countersign</strong>
        {account ? <Address address={account.address} /> : <span class="muted">no key</span>}
        <Button onClick={lock} aria-label="Lock" title="Lock (Ctrl+L)">Lock</Button>
      </header>
      <Tabs tabs={TABS} active={tab} onChange={setTab} />
      {!account ? (
        <section class="panel">
          <p>No owner key yet.</p>
          <Button kind="primary" onClick={() => setOnboarding(true)}>Add a key</Button>
        </section>
      ) : tab === 'perps' ? (
        <PerpsTicket account={account} />
      ) : tab === 'clob' ? (
        <ClobTicket account={account} onCredentials={refresh} />
      ) : tab === 'account' ? (
        <AccountView account={account} onChanged={refresh} />
      ) : (
        <SettingsView onChanged={refresh} onAddKey={() => setOnboarding(true)} />
      )}
    </main>
  );
}
