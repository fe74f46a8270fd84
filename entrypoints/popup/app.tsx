/**
 * Popup root: reads the vault status and shows onboarding, unlock, the panic confirmation and report,
 * the approval queue while approvals are pending, or the unlocked tabs. The vault, settings and perps
 * stores are created here once and passed to the screens.
 */
import { useEffect, useLayoutEffect, useMemo, useState } from 'preact/hooks';
import { AccountSwitcher } from '../../components/AccountSwitcher';
import { Button, Notice, TabPanel, Tabs } from '../../components/ui';
import { call, type Account, type Status } from './api';
import { Unlock } from './unlock';
import { PerpsTicket } from './perps';
import { createPerpsStore } from './stores/perps';
import { LAST_INSTRUMENT } from '../../lib/messaging/start-hint-keys';
import { StreamBadge } from '../../components/StreamBadge';
import { createSettingsStore, type SettingsStore } from './stores/settings';
import { bootVault, createVaultStore, hasLiveProxy, type VaultBoot, type VaultStore } from './stores/vault';
import { lazyScreen } from './lazy';
import { TradingSessionBanner } from '../../components/TradingSession';
import { PanicConfirm, PanicReportView, type PanicReport } from './panic';

// Only the shell, unlock, panic and the perps ticket load with the popup; the other screens (the
// approval queue too) load when first shown, or when the popup is idle.
const ApprovalQueueScreen = lazyScreen(() => import('./approvals').then((m) => m.ApprovalQueueScreen));
const Onboarding = lazyScreen(() => import('./onboarding').then((m) => m.Onboarding));
const PositionsView = lazyScreen(() => import('./positions').then((m) => m.PositionsView));
const ClobTicket = lazyScreen(() => import('./clob').then((m) => m.ClobTicket));
const AccountView = lazyScreen(() => import('./account').then((m) => m.AccountView));
const AuditView = lazyScreen(() => import('./audit').then((m) => m.AuditView));
const SettingsView = lazyScreen(() => import('./settings').then((m) => m.SettingsView));
const LATER = [PositionsView, ClobTicket, AccountView, AuditView, SettingsView, ApprovalQueueScreen];

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

/** Tells the background about a person's keys and clicks (throttled); returns the unsubscribe. */
function reportActivity(): () => void {
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
}

/**
 * The popup's root component. `boot`: the first reads, begun before the first render (`main.tsx`;
 * without it the component begins them itself). A start hint shows the unlocked screens at once; the
 * status replaces it when it arrives (popup open).
 */
export function App({ boot }: { boot?: VaultBoot }) {
  const [onboarding, setOnboarding] = useState(false);
  const vault = useMemo(() => {
    const store = createVaultStore();
    void store.start(boot ?? bootVault()).then(
      (s) => {
        if (!s.initialized) setOnboarding(true);
      },
      () => undefined,
    );
    return store;
  }, []);
  const settings = useMemo(() => createSettingsStore(), []);
  // The panic shortcut opens the popup at #panic: the confirmation is shown first.
  const [panic, setPanic] = useState(location.hash === '#panic');
  const [report, setReport] = useState<PanicReport>();
  const [tab, setTab] = useState<TabId>('perps');
  const refresh = async () => {
    const s = await vault.refresh();
    if (!s.initialized) setOnboarding(true);
  };
  useEffect(reportActivity, []);
  useEffect(() => {
    void settings.load().catch(() => undefined);
  }, []);
  const theme = settings.theme.value;
  useEffect(() => {
    if (theme) document.documentElement.dataset.theme = theme;
  }, [theme]);

  const status = vault.status.value;
  if (!status) return <main class="loading">Loading…</main>;
  if (report)
    return (
      <PanicReportView
        report={report}
        onDismiss={() => {
          setReport(undefined);
          void refresh();
        }}
      />
    );
  if (panic && status.state !== 'locked')
    return (
      <PanicConfirm
        onCancel={() => setPanic(false)}
        onDone={(r) => {
          setPanic(false);
          setReport(r);
        }}
      />
    );
  if (onboarding)
    return (
      <Onboarding
        status={status}
        onDone={() => {
          setOnboarding(false);
          void refresh();
        }}
        refresh={refresh}
      />
    );
  if (!status.unlocked)
    return (
      <Unlock
        retryAfterMs={status.retryAfterMs}
        recoverable={status.recoverable}
        onUnlocked={() => void refresh()}
        session={status.state === 'session' ? status.session : []}
        onPanic={() => setPanic(true)}
      />
    );
  // While approvals are pending the popup opens on the approval queue (the same view as the window).
  if (status.pendingApprovals > 0) return <ApprovalQueueScreen call={call} onEmpty={() => void refresh()} />;
  return (
    <Unlocked
      status={status}
      account={vault.account.value}
      vault={vault}
      settings={settings}
      tab={tab}
      setTab={setTab}
      refresh={refresh}
      onAddKey={() => setOnboarding(true)}
      onPanic={() => setPanic(true)}
    />
  );
}

/** The unlocked popup: header, tabs, and one perps store shared by the ticket and the positions view. */
function Unlocked({
  status,
  account,
  vault,
  settings,
  tab,
  setTab,
  refresh,
  onAddKey,
  onPanic,
}: {
  status: Status;
  account: Account | undefined;
  vault: VaultStore;
  settings: SettingsStore;
  tab: TabId;
  setTab: (t: TabId) => void;
  refresh: () => Promise<void>;
  onAddKey: () => void;
  onPanic: () => void;
}) {
  const proxyAccount = hasLiveProxy(account) ? account?.address : undefined;
  const store = useMemo(() => {
    const created = createPerpsStore(proxyAccount, undefined, undefined, account?.address);
    // The instrument shown last opens again, chosen before the ticket's first render (no second
    // render for it); its book comes with the popup's first watch.
    const last = Number(localStorage.getItem(LAST_INSTRUMENT));
    if (Number.isInteger(last) && last > 0) created.iid.value = last;
    return created;
  }, [proxyAccount, account?.address]);
  // A layout effect: the reads begin with the first render of the ticket, not a frame later.
  useLayoutEffect(() => {
    performance.mark('countersign:unlocked'); // the bench's stage marks
    void store.start().then(() => {
      const first = store.instruments.value[0];
      if (first && !store.instruments.value.some((i) => i.instrument_id === store.iid.value))
        store.select(first.instrument_id);
    });
    const unwatch = store.iid.subscribe((id) => id !== undefined && localStorage.setItem(LAST_INSTRUMENT, String(id)));
    return () => {
      unwatch();
      store.stop();
    };
  }, [store]);
  useEffect(() => {
    const later = () => LATER.forEach((s) => void s.preload().catch(() => undefined));
    const id = setTimeout(later, 300);
    return () => clearTimeout(id);
  }, []);
  const switched = vault.switched.value;
  return (
    <main class="app">
      <header class="top">
        <strong class="brand">Countersign</strong>
        <StreamBadge venues={store.venues.value} />
        {account ? (
          <AccountSwitcher accounts={status.accounts} active={account.address} onSelect={(a) => void vault.select(a)} />
        ) : (
          <span class="muted">no key</span>
        )}
        <Button
          kind="danger"
          onClick={onPanic}
          title="Cancel everything at both venues, revoke permissions and lock (Alt+Shift+X)"
        >
          Panic
        </Button>
        <Button onClick={() => void vault.lock()} aria-label="Lock" title="Lock (Ctrl+L)">
          Lock
        </Button>
      </header>
      <TradingSessionBanner sites={status.session} now={Date.now()} />
      <Tabs tabs={TABS} active={tab} onChange={setTab} label="Countersign screens" />
      {switched ? <Notice>{switched}</Notice> : null}
      <TabPanel id={tab}>
        {!account ? (
          <section class="panel">
            <p>No owner key yet.</p>
            <Button kind="primary" onClick={onAddKey}>
              Add a key
            </Button>
          </section>
        ) : tab === 'perps' ? (
          <PerpsTicket
            key={account.address}
            account={account}
            store={store}
            maxPositionUsdc={settings.maxPositionUsdc.value}
            slippageBps={settings.slippageBps.value}
          />
        ) : tab === 'positions' ? (
          <PositionsView
            key={account.address}
            account={account}
            store={store}
            slippageBps={settings.slippageBps.value}
          />
        ) : tab === 'clob' ? (
          <ClobTicket
            key={account.address}
            account={account}
            onCredentials={() => void refresh()}
            slippageBps={settings.slippageBps.value}
          />
        ) : tab === 'audit' ? (
          <AuditView />
        ) : tab === 'account' ? (
          <AccountView key={account.address} account={account} onChanged={refresh} />
        ) : (
          <SettingsView settings={settings} accounts={status.accounts} onChanged={refresh} onAddKey={onAddKey} />
        )}
      </TabPanel>
    </main>
  );
}
