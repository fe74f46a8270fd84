/** Popup root: loads the vault status and shows onboarding, unlock, or the unlocked tabs. */
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { AccountSwitcher } from '../../components/AccountSwitcher';
import { Button, Notice, Tabs } from '../../components/ui';
import { call, messageOf, type Status } from './api';
import { Onboarding } from './onboarding';
import { Unlock } from './unlock';
import { PerpsTicket } from './perps';
import { PositionsView } from './positions';
import { AuditView } from './audit';
import { createPerpsStore } from './stores/perps';
import { ClobTicket } from './clob';
import { AccountView } from './account';
import { SettingsView } from './settings';
import { ApprovalQueueScreen } from './approvals';
import { TradingSessionBanner } from '../../components/TradingSession';
import { PanicConfirm, PanicReportView, type PanicReport } from './panic';

type TabId = 'perps' | 'positions' | 'clob' | 'account' | 'audit' | 'settings';
const TABS = [
  { id: 'perps', label: 'Perps' },
  { id: 'positions', label: 'Positions' },
  { id: 'clob', label: 'Order book' },
  { id: 'account', label: 'Account' },
  { id: 'audit', label: 'Audit' },
  { id: 'settings', label: 'Settings' },
] as const;

/** A person's input re-arms auto-lock (at most every 30 s); the popup's scheduled reads never do. */
const ACTIVITY_THROTTLE_MS = 30_000;

export function App() {
  const [status, setStatus] = useState<Status | undefined>();
  const [switched, setSwitched] = useState<string>();
  const [maxPositionUsdc, setMaxPositionUsdc] = useState(50_000);
  // The panic shortcut opens the popup at #panic: the confirmation is shown first.
  const [panic, setPanic] = useState(location.hash === '#panic');
  const [report, setReport] = useState<PanicReport>();
  const [tab, setTab] = useState<TabId>('perps');
  const [onboarding, setOnboarding] = useState(false);
  const refresh = useCallback(async () => {
    const s = await call('vault.status', {});
    setStatus(s);
    if (!s.initialized) setOnboarding(true);
  }, []);
  useEffect(() => {
    let last = 0;
    const activity = () => {
      if (Date.now() - last < ACTIVITY_THROTTLE_MS) return;
      last = Date.now();
      void call('session.activity', {}).catch(() => undefined);
    };
    activity(); // opening the popup is a person's action
    window.addEventListener('keydown', activity, true);
    window.addEventListener('pointerdown', activity, true);
    return () => {
      window.removeEventListener('keydown', activity, true);
      window.removeEventListener('pointerdown', activity, true);
    };
  }, []);
  useEffect(() => {
    void refresh();
    void call('settings.get', {}).then((r) => {
      document.documentElement.dataset.theme = r.settings.theme;
      setMaxPositionUsdc(r.settings.maxPositionUsdc);
    });
  }, [refresh]);

  if (!status) return <main class="loading">Loading…</main>;
  if (report) return <PanicReportView report={report} onDismiss={() => { setReport(undefined); void refresh(); }} />;
  if (panic && status.state !== 'locked') return <PanicConfirm onCancel={() => setPanic(false)} onDone={(r) => { setPanic(false); setReport(r); }} />;
  if (onboarding) return <Onboarding status={status} onDone={() => { setOnboarding(false); void refresh(); }} refresh={refresh} />;
  if (!status.unlocked) return <Unlock retryAfterMs={status.retryAfterMs} onUnlocked={refresh} session={status.state === 'session' ? status.session : []} onPanic={() => setPanic(true)} />;
  // While approvals are pending the popup opens on the approval queue (the same view as the window).
  if (status.pendingApprovals > 0) return <ApprovalQueueScreen call={call} onEmpty={() => void refresh()} />;
  const account = status.accounts.find((a) => a.address === status.activeAccount);
  return <Unlocked status={status} account={account} tab={tab} setTab={setTab} refresh={refresh} switched={switched} setSwitched={setSwitched} maxPositionUsdc={maxPositionUsdc} onAddKey={() => setOnboarding(true)} onPanic={() => setPanic(true)} />;
}

/** The unlocked popup: header, tabs, and one perps store shared by the ticket and the positions view. */
function Unlocked({ status, account, tab, setTab, refresh, switched, setSwitched, maxPositionUsdc, onAddKey, onPanic }: {
  status: Status;
  account: Status['accounts'][number] | undefined;
  tab: TabId;
  setTab: (t: TabId) => void;
  refresh: () => Promise<void>;
  switched: string | undefined;
  setSwitched: (s: string | undefined) => void;
  maxPositionUsdc: number;
  onAddKey: () => void;
  onPanic: () => void;
}) {
  const hasProxy = !!account?.proxies.some((p) => p.expiry > Date.now());
  const store = useMemo(() => createPerpsStore(hasProxy ? account!.address : undefined), [account?.address, hasProxy]);
  useEffect(() => {
    void store.start();
    return () => store.stop();
  }, [store]);
  const lock = async () => {
    await call('vault.lock', {});
    await refresh();
  };
  const select = async (address: string) => {
    try {
      const r = await call('account.select', { address });
      const a = status.accounts.find((x) => x.address === address);
      if (r.changed) setSwitched(`Now acting as ${a?.label || address}. Pending site requests were cancelled and connected sites were told.`);
    } catch (err) {
      setSwitched(messageOf(err));
    }
    await refresh();
  };
  return (
    <main class="app">
      <header class="top">
        <strong class="brand">Countersign</strong>
        {account ? <AccountSwitcher accounts={status.accounts} active={account.address} onSelect={(a) => void select(a)} /> : <span class="muted">no key</span>}
        <Button kind="danger" onClick={onPanic} title="Cancel everything at both venues, revoke permissions and lock (Alt+Shift+X)">Panic</Button>
        <Button onClick={lock} aria-label="Lock" title="Lock (Ctrl+L)">Lock</Button>
      </header>
      <TradingSessionBanner sites={status.session} now={Date.now()} />
      <Tabs tabs={TABS} active={tab} onChange={setTab} />
      {switched ? <Notice>{switched}</Notice> : null}
      {!account ? (
        <section class="panel">
          <p>No owner key yet.</p>
          <Button kind="primary" onClick={onAddKey}>Add a key</Button>
        </section>
      ) : tab === 'perps' ? (
        <PerpsTicket key={account.address} account={account} store={store} maxPositionUsdc={maxPositionUsdc} />
      ) : tab === 'positions' ? (
        <PositionsView key={account.address} account={account} store={store} />
      ) : tab === 'clob' ? (
        <ClobTicket key={account.address} account={account} onCredentials={refresh} />
      ) : tab === 'audit' ? (
        <AuditView />
      ) : tab === 'account' ? (
        <AccountView key={account.address} account={account} onChanged={refresh} />
      ) : (
        <SettingsView onChanged={refresh} onAddKey={onAddKey} />
      )}
    </main>
  );
}
