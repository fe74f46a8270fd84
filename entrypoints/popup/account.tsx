/**
 * Account views: deposits (confirmation progress, status filter), internal transfers (in/out filter),
 * per-instrument configuration, referral and invite code, proxy keys (expiry countdown, delete with a
 * confirmation step), funding-rate chart, and the internal-transfer and withdraw forms whose
 * confirmation step shows the destination and the amount in human units and in base units.
 * State: `stores/account.ts`; filters, the sub-tab and the fields being typed stay local.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Address } from '../../components/Address';
import { FundingChart } from '../../components/FundingChart';
import {
  Button,
  ConfirmPanel,
  ErrorText,
  Field,
  formatCountdown,
  Notice,
  ProgressBar,
  TabPanel,
  Tabs,
} from '../../components/ui';
import type { Account } from './api';
import { createAccountStore, type AccountStore } from './stores/account';

type Sub = 'deposits' | 'transfers' | 'config' | 'referral' | 'keys' | 'funding' | 'move';
const SUBS = [
  { id: 'deposits', label: 'Deposits' },
  { id: 'transfers', label: 'Transfers' },
  { id: 'config', label: 'Config' },
  { id: 'referral', label: 'Referral' },
  { id: 'keys', label: 'Keys' },
  { id: 'funding', label: 'Funding' },
  { id: 'move', label: 'Move funds' },
] as const;

/** The Account tab for `account`; `onChanged` re-reads the vault status after a key change. */
export function AccountView({ account, onChanged }: { account: Account; onChanged: () => Promise<void> }) {
  const [sub, setSub] = useState<Sub>('deposits');
  const store = useMemo(() => createAccountStore(account), [account]);
  const hasProxy = account.proxies.some((p) => p.expiry > Date.now());
  return (
    <section class="panel">
      <Tabs tabs={SUBS} active={sub} onChange={setSub} label="Account" />
      <TabPanel id={sub}>
        {!hasProxy && sub !== 'keys' && sub !== 'funding' ? (
          <Notice>Issue a proxy key (Keys) to read this account.</Notice>
        ) : null}
        {sub === 'deposits' && hasProxy ? <Deposits store={store} /> : null}
        {sub === 'transfers' && hasProxy ? <Transfers store={store} /> : null}
        {sub === 'config' && hasProxy ? <Config store={store} /> : null}
        {sub === 'referral' && hasProxy ? <Referral store={store} /> : null}
        {sub === 'keys' ? <Keys store={store} hasProxy={hasProxy} onChanged={onChanged} /> : null}
        {sub === 'funding' ? <Funding store={store} /> : null}
        {sub === 'move' ? <MoveFunds store={store} /> : null}
      </TabPanel>
    </section>
  );
}

function Deposits({ store }: { store: AccountStore }) {
  const [status, setStatus] = useState('');
  useEffect(() => void store.deposits.load(status), [store, status]);
  const data = store.deposits.data.value;
  return (
    <div>
      <Field label="Status">
        <select name="deposit-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">All</option>
          <option value="pending">Pending</option>
          <option value="confirmed">Confirmed</option>
          <option value="removed">Removed</option>
        </select>
      </Field>
      <ErrorText error={store.deposits.error.value} />
      <ul class="list">
        {data?.data.map((d) => (
          <li key={d.hash}>
            <strong>{(Number(d.amount) / 1e6).toLocaleString('en-US')} USDC</strong>{' '}
            <span class="muted small">{new Date(d.created_timestamp).toLocaleString()}</span>
            <ProgressBar
              value={d.confirmations}
              max={d.required_confirmations}
              label={`${d.confirmations} / ${d.required_confirmations} confirmations · ${d.status}`}
            />
          </li>
        ))}
      </ul>
      {data && data.data.length === 0 ? <p class="muted">No deposits.</p> : null}
    </div>
  );
}

function Transfers({ store }: { store: AccountStore }) {
  const [direction, setDirection] = useState('');
  useEffect(() => void store.transfers.load(direction), [store, direction]);
  const data = store.transfers.data.value;
  return (
    <div>
      <Field label="Direction">
        <select name="direction" value={direction} onChange={(e) => setDirection(e.currentTarget.value)}>
          <option value="">In and out</option>
          <option value="in">In</option>
          <option value="out">Out</option>
        </select>
      </Field>
      <ErrorText error={store.transfers.error.value} />
      <ul class="list">
        {data?.data.map((t) => (
          <li key={`${t.transfer_id}-${t.direction}`}>
            <span class={t.direction === 'in' ? 'buy-text' : 'sell-text'}>
              {t.direction === 'in' ? '+' : '−'}
              {t.amount} USDC
            </span>{' '}
            {t.direction === 'in' ? 'from' : 'to'} <Address address={t.counterparty} />{' '}
            {t.label ? <span class="muted">“{t.label}”</span> : null}
          </li>
        ))}
      </ul>
      {data && data.data.length === 0 ? <p class="muted">No transfers.</p> : null}
    </div>
  );
}

function Config({ store }: { store: AccountStore }) {
  useEffect(() => void store.config.load(undefined), [store]);
  return (
    <div>
      <ErrorText error={store.config.error.value} />
      <table class="table">
        <thead>
          <tr>
            <th>Instrument</th>
            <th>Leverage</th>
            <th>Margin</th>
          </tr>
        </thead>
        <tbody>
          {store.config.data.value?.map((c) => (
            <tr key={c.instrument_id}>
              <td>#{c.instrument_id}</td>
              <td>{c.leverage}×</td>
              <td>{c.cross ? 'cross' : 'isolated'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Referral({ store }: { store: AccountStore }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => void store.referral.load(undefined), [store]);
  const data = store.referral.data.value;
  const shown = store.invite.value ?? (data?.code || undefined);
  return (
    <div>
      <ErrorText error={store.referral.error.value} />
      {data ? (
        <p>
          {data.children_count} referred · {data.referrals_left} referrals left · fee share{' '}
          {Number(data.fee_share_rate) * 100}%{data.parent ? ` · referred by ${data.parent}` : ''}
        </p>
      ) : null}
      {shown ? (
        <p>
          Invite code <code data-testid="invite-code">{shown}</code>{' '}
          <Button onClick={() => void navigator.clipboard.writeText(shown).then(() => setCopied(true))}>
            {copied ? 'Copied' : 'Copy'}
          </Button>
        </p>
      ) : (
        <Button kind="primary" onClick={() => void store.createInvite()}>
          Create invite code
        </Button>
      )}
    </div>
  );
}

function Keys({
  store,
  hasProxy,
  onChanged,
}: {
  store: AccountStore;
  hasProxy: boolean;
  onChanged: () => Promise<void>;
}) {
  const [now, setNow] = useState(Date.now());
  const [confirming, setConfirming] = useState<string>();
  const [expiryDays, setExpiryDays] = useState('30');
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30_000);
    if (hasProxy) void store.loadKeys();
    return () => clearInterval(t);
  }, [store]);
  const keys = store.keys.value;
  const busy = store.keysBusy.value;
  return (
    <div>
      <h3>Proxy keys</h3>
      <ul class="list">
        {keys.map((k) => (
          <li key={k.proxy}>
            <Address address={k.proxy} /> {k.label ? <span class="muted">{k.label}</span> : null} · expires{' '}
            {formatCountdown(k.expiry, now)}
            {confirming === k.proxy ? (
              <ConfirmPanel
                title="Delete this proxy key?"
                rows={[
                  ['Proxy', <Address address={k.proxy} />],
                  ['Signed by', 'your owner key'],
                  ['Effect', 'the key can no longer trade'],
                ]}
                confirmLabel="Delete key"
                busy={busy}
                onBack={() => setConfirming(undefined)}
                onConfirm={() => void store.deleteKey(k.proxy, onChanged).then(() => setConfirming(undefined))}
              />
            ) : (
              <Button kind="danger" onClick={() => setConfirming(k.proxy)}>
                Delete
              </Button>
            )}
          </li>
        ))}
      </ul>
      {keys.length === 0 ? <p class="muted">No proxy keys.</p> : null}
      <div class="grid2">
        <Field label="New key expires after">
          <select value={expiryDays} onChange={(e) => setExpiryDays(e.currentTarget.value)}>
            <option value="1">1 day</option>
            <option value="7">7 days</option>
            <option value="30">30 days</option>
            <option value="90">90 days</option>
          </select>
        </Field>
        <Button kind="primary" disabled={busy} onClick={() => void store.issueKey(Number(expiryDays), onChanged)}>
          Issue proxy key
        </Button>
      </div>
      <ErrorText error={store.keysError.value} />
    </div>
  );
}

function Funding({ store }: { store: AccountStore }) {
  const [iid, setIid] = useState(1);
  useEffect(() => void store.funding.load(iid), [store, iid]);
  return (
    <div>
      <Field label="Instrument">
        <select value={iid} onChange={(e) => setIid(Number(e.currentTarget.value))}>
          <option value={1}>BTC-PERP</option>
          <option value={2}>ETH-PERP</option>
          <option value={3}>SOL-PERP</option>
        </select>
      </Field>
      <ErrorText error={store.funding.error.value} />
      <FundingChart points={store.funding.data.value?.data ?? []} />
      <p class="muted small">Hourly funding, last 72 h.</p>
    </div>
  );
}

function MoveFunds({ store }: { store: AccountStore }) {
  const [kind, setKind] = useState<'withdraw' | 'transfer'>('withdraw');
  const [to, setTo] = useState('');
  const [amount, setAmount] = useState('');
  const [label, setLabel] = useState('');
  const { pending: pendingSignal, error, done, busy } = store.move;
  const pending = pendingSignal.value;
  const review = (e: Event) => {
    e.preventDefault();
    store.reviewFunds({ kind, to, amount, label });
  };
  const confirm = async () => {
    if (await store.confirmFunds()) setAmount('');
  };
  if (pending) {
    const rows: [string, ComponentChildren][] = [
      ['Destination', <code class="full-address">{to.trim()}</code>],
      [
        'Amount',
        `${Number(amount).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })} USDC`,
      ],
      ['Base units', pending.base],
      ['Signed by', 'your owner key'],
    ];
    if (label && kind === 'transfer') rows.push(['Label', label]);
    return (
      <ConfirmPanel
        title={kind === 'withdraw' ? 'Confirm withdrawal' : 'Confirm transfer'}
        rows={rows}
        confirmLabel={kind === 'withdraw' ? 'Withdraw' : 'Transfer'}
        busy={busy.value}
        onBack={() => (pendingSignal.value = undefined)}
        onConfirm={() => void confirm()}
      />
    );
  }
  return (
    <form onSubmit={review}>
      <div class="side" role="radiogroup" aria-label="Kind">
        <button
          type="button"
          role="radio"
          aria-checked={kind === 'withdraw'}
          class={kind === 'withdraw' ? 'on' : ''}
          onClick={() => setKind('withdraw')}
        >
          Withdraw
        </button>
        <button
          type="button"
          role="radio"
          aria-checked={kind === 'transfer'}
          class={kind === 'transfer' ? 'on' : ''}
          onClick={() => setKind('transfer')}
        >
          Internal transfer
        </button>
      </div>
      <Field label="Destination address">
        <input
          name="to"
          value={to}
          onInput={(e) => setTo(e.currentTarget.value)}
          spellcheck={false}
          autocomplete="off"
        />
      </Field>
      <Field label="Amount (USDC)">
        <input
          name="amount"
          inputMode="decimal"
          value={amount}
          onInput={(e) => setAmount(e.currentTarget.value.trim())}
          autocomplete="off"
        />
      </Field>
      {kind === 'transfer' ? (
        <Field label="Label (optional)">
          <input name="transfer-label" maxLength={64} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
        </Field>
      ) : null}
      <ErrorText error={error.value} />
      {done.value ? <Notice>{done.value}</Notice> : null}
      <Button kind="primary" type="submit">
        Review
      </Button>
    </form>
  );
}
