/**
 * Account views: deposits (confirmation progress, status filter), internal transfers (in/out filter),
 * per-instrument configuration, referral and invite code, proxy keys (expiry countdown, delete with a
 * confirmation step), funding-rate chart, and the internal-transfer and withdraw forms whose
 * confirmation step shows the destination and the amount in human units and in base units.
 */
import { useEffect, useState } from 'preact/hooks';
import { parseUnits } from 'viem';
import { Address } from '../../components/Address';
import { FundingChart } from '../../components/FundingChart';
import { Button, ConfirmPanel, ErrorText, Field, formatCountdown, Notice, ProgressBar, Tabs } from '../../components/ui';
import { COLLATERAL_TOKEN } from '../../lib/clob/order';
import { internalTransfer, withdraw, type PerpsCommand } from '../../lib/perps/commands';
import { InvalidFieldError } from '../../lib/validation';
import { call, messageOf, type Account } from './api';

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

export function AccountView({ account, onChanged }: { account: Account; onChanged: () => Promise<void> }) {
  const [sub, setSub] = useState<Sub>('deposits');
  const hasProxy = account.proxies.some((p) => p.expiry > Date.now());
  return (
    <section class="panel">
      <Tabs tabs={SUBS} active={sub} onChange={setSub} />
      {!hasProxy && sub !== 'keys' && sub !== 'funding' ? <Notice>Issue a proxy key (Keys) to read this account.</Notice> : null}
      {sub === 'deposits' && hasProxy ? <Deposits account={account} /> : null}
      {sub === 'transfers' && hasProxy ? <Transfers account={account} /> : null}
      {sub === 'config' && hasProxy ? <Config account={account} /> : null}
      {sub === 'referral' && hasProxy ? <Referral account={account} /> : null}
      {sub === 'keys' ? <Keys account={account} onChanged={onChanged} /> : null}
      {sub === 'funding' ? <Funding /> : null}
      {sub === 'move' ? <MoveFunds account={account} /> : null}
    </section>
  );
}

function useRead<T>(account: Account, name: Parameters<typeof call<'perps.read'>>[1]['name'], query: Record<string, string | number | undefined>, deps: unknown[]) {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const load = () =>
    call<'perps.read', T>('perps.read', { account: account.address, name, query: Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== '')) as Record<string, string | number> })
      .then(setData, (e) => setError(messageOf(e)));
  useEffect(() => void load(), deps);
  return { data, error, reload: load };
}

type Deposit = { hash: string; amount: string; confirmations: number; required_confirmations: number; status: string; created_timestamp: number };
function Deposits({ account }: { account: Account }) {
  const [status, setStatus] = useState('');
  const { data, error } = useRead<{ data: Deposit[]; more: boolean }>(account, 'deposits', { status }, [status]);
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
      <ErrorText error={error} />
      <ul class="list">
        {data?.data.map((d) => (
          <li key={d.hash}>
            <strong>{(Number(d.amount) / 1e6).toLocaleString('en-US')} USDC</strong> <span class="muted small">{new Date(d.created_timestamp).toLocaleString()}</span>
            <ProgressBar value={d.confirmations} max={d.required_confirmations} label={`${d.confirmations} / ${d.required_confirmations} confirmations · ${d.status}`} />
          </li>
        ))}
      </ul>
      {data && data.data.length === 0 ? <p class="muted">No deposits.</p> : null}
    </div>
  );
}

type Transfer = { transfer_id: number; amount: string; direction: 'in' | 'out'; counterparty: string; created_timestamp: number; label: string };
function Transfers({ account }: { account: Account }) {
  const [direction, setDirection] = useState('');
  const { data, error } = useRead<{ data: Transfer[] }>(account, 'internalTransfers', { direction }, [direction]);
  return (
    <div>
      <Field label="Direction">
        <select name="direction" value={direction} onChange={(e) => setDirection(e.currentTarget.value)}>
          <option value="">In and out</option>
          <option value="in">In</option>
          <option value="out">Out</option>
        </select>
      </Field>
      <ErrorText error={error} />
      <ul class="list">
        {data?.data.map((t) => (
          <li key={`${t.transfer_id}-${t.direction}`}>
            <span class={t.direction === 'in' ? 'buy-text' : 'sell-text'}>{t.direction === 'in' ? '+' : '−'}{t.amount} USDC</span> {t.direction === 'in' ? 'from' : 'to'} <Address address={t.counterparty} /> {t.label ? <span class="muted">“{t.label}”</span> : null}
          </li>
        ))}
      </ul>
      {data && data.data.length === 0 ? <p class="muted">No transfers.</p> : null}
    </div>
  );
}

function Config({ account }: { account: Account }) {
  const { data, error } = useRead<{ instrument_id: number; leverage: number; cross: boolean }[]>(account, 'config', {}, []);
  return (
    <div>
      <ErrorText error={error} />
      <table class="table">
        <thead><tr><th>Instrument</th><th>Leverage</th><th>Margin</th></tr></thead>
        <tbody>{data?.map((c) => <tr key={c.instrument_id}><td>#{c.instrument_id}</td><td>{c.leverage}×</td><td>{c.cross ? 'cross' : 'isolated'}</td></tr>)}</tbody>
      </table>
    </div>
  );
}

function Referral({ account }: { account: Account }) {
  const { data, error, reload } = useRead<{ code: string; children_count: number; referrals_left: number; fee_share_rate: string; parent?: string }>(account, 'referral', {}, []);
  const [code, setCode] = useState<string>();
  const [copied, setCopied] = useState(false);
  const shown = code ?? (data?.code || undefined);
  return (
    <div>
      <ErrorText error={error} />
      {data ? <p>{data.children_count} referred · {data.referrals_left} referrals left · fee share {Number(data.fee_share_rate) * 100}%{data.parent ? ` · referred by ${data.parent}` : ''}</p> : null}
      {shown ? (
        <p>
          Invite code <code data-testid="invite-code">{shown}</code>{' '}
          <Button onClick={() => void navigator.clipboard.writeText(shown).then(() => setCopied(true))}>{copied ? 'Copied' : 'Copy'}</Button>
        </p>
      ) : (
        <Button kind="primary" onClick={() => void call<'perps.read', { code: string }>('perps.read', { account: account.address, name: 'invite' }).then((r) => { setCode(r.code); void reload(); })}>Create invite code</Button>
      )}
    </div>
  );
}

function Keys({ account, onChanged }: { account: Account; onChanged: () => Promise<void> }) {
  const [now, setNow] = useState(Date.now());
  const [confirming, setConfirming] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [expiryDays, setExpiryDays] = useState('30');
  const [keys, setKeys] = useState<{ proxy: string; expiry: number; label: string }[]>(account.proxies);
  const hasProxy = account.proxies.some((p) => p.expiry > now);
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30_000);
    if (hasProxy) {
      void call<'perps.read', { keys: { proxy: string; expiry: number; label: string }[] }>('perps.read', { account: account.address, name: 'credentials' })
        .then((r) => setKeys(r.keys), () => setKeys(account.proxies));
    }
    return () => clearInterval(t);
  }, [account]);
  const run = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
      await onChanged();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      <h3>Proxy keys</h3>
      <ul class="list">
        {keys.map((k) => (
          <li key={k.proxy}>
            <Address address={k.proxy} /> {k.label ? <span class="muted">{k.label}</span> : null} · expires {formatCountdown(k.expiry, now)}
            {confirming === k.proxy ? (
              <ConfirmPanel
                title="Delete this proxy key?"
                rows={[['Proxy', <Address address={k.proxy} />], ['Signed by', 'your owner key'], ['Effect', 'the key can no longer trade']]}
                confirmLabel="Delete key"
                busy={busy}
                onBack={() => setConfirming(undefined)}
                onConfirm={() => void run(() => call('proxy.delete', { account: account.address, proxy: k.proxy })).then(() => setConfirming(undefined))}
              />
            ) : (
              <Button kind="danger" onClick={() => setConfirming(k.proxy)}>Delete</Button>
            )}
          </li>
        ))}
      </ul>
      {keys.length === 0 ? <p class="muted">No proxy keys.</p> : null}
      <div class="grid2">
        <Field label="New key expires after">
          <select value={expiryDays} onChange={(e) => setExpiryDays(e.currentTarget.value)}>
            <option value="1">1 day</option><option value="7">7 days</option><option value="30">30 days</option><option value="90">90 days</option>
          </select>
        </Field>
        <Button kind="primary" disabled={busy} onClick={() => void run(() => call('proxy.issue', { account: account.address, expiry: Date.now() + Number(expiryDays) * 86_400_000 }))}>Issue proxy key</Button>
      </div>
      <ErrorText error={error} />
    </div>
  );
}

function Funding() {
  const [iid, setIid] = useState(1);
  const [points, setPoints] = useState<{ timestamp: number; funding_rate: string }[]>([]);
  const [error, setError] = useState<string>();
  useEffect(() => {
    const end = Date.now();
    void call<'perps.read', { data: { timestamp: number; funding_rate: string }[] }>('perps.read', { name: 'funding', query: { instrument_id: iid, start_time: end - 72 * 3_600_000, end_time: end } })
      .then((r) => setPoints(r.data), (e) => setError(messageOf(e)));
  }, [iid]);
  return (
    <div>
      <Field label="Instrument">
        <select value={iid} onChange={(e) => setIid(Number(e.currentTarget.value))}>
          <option value={1}>BTC-PERP</option><option value={2}>ETH-PERP</option><option value={3}>SOL-PERP</option>
        </select>
      </Field>
      <ErrorText error={error} />
      <FundingChart points={points} />
      <p class="muted small">Hourly funding, last 72 h.</p>
    </div>
  );
}

function MoveFunds({ account }: { account: Account }) {
  const [kind, setKind] = useState<'withdraw' | 'transfer'>('withdraw');
  const [to, setTo] = useState('');
  const [amount, setAmount] = useState('');
  const [label, setLabel] = useState('');
  const [pending, setPending] = useState<{ cmd: PerpsCommand; base: string }>();
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const [busy, setBusy] = useState(false);
  const review = (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setDone(undefined);
    try {
      if (!/^(0|[1-9]\d*)(\.\d{1,6})?$/.test(amount) || /^0(\.0+)?$/.test(amount)) throw new InvalidFieldError({ field: 'amount', reason: 'must be a positive amount with at most 6 decimals' });
      const base = parseUnits(amount, 6).toString();
      const cmd =
        kind === 'withdraw'
          ? withdraw({ account: account.address, token: COLLATERAL_TOKEN, amount: base, to: to.trim() })
          : internalTransfer({ account: account.address, token: COLLATERAL_TOKEN, amount, to: to.trim(), ...(label ? { label } : {}) });
      setPending({ cmd, base });
    } catch (err) {
      setError(err instanceof InvalidFieldError ? `${err.field === 'to' ? 'Destination' : err.field}: ${err.reason}` : messageOf(err));
    }
  };
  const confirm = async () => {
    if (!pending) return;
    setBusy(true);
    try {
      const r = (await call('perps.send', { account: account.address, op: pending.cmd.body, ...(pending.cmd.label ? { label: pending.cmd.label } : {}) })) as { withdraw_id?: number; transfer_id?: number };
      setDone(kind === 'withdraw' ? `Withdrawal #${r.withdraw_id} accepted` : `Transfer #${r.transfer_id} done`);
      setPending(undefined);
      setAmount('');
    } catch (err) {
      setError(messageOf(err));
      setPending(undefined);
    } finally {
      setBusy(false);
    }
  };
  if (pending) {
    return (
      <ConfirmPanel
        title={kind === 'withdraw' ? 'Confirm withdrawal' : 'Confirm transfer'}
        rows={[
          ['Destination', <code class="full-address">{to.trim()}</code>],
          ['Amount', `${Number(amount).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })} USDC`],
          ['Base units', pending.base],
          ['Signed by', 'your owner key'],
          ...(label && kind === 'transfer' ? [['Label', label] as [string, string]] : []),
        ]}
        confirmLabel={kind === 'withdraw' ? 'Withdraw' : 'Transfer'}
        busy={busy}
        onBack={() => setPending(undefined)}
        onConfirm={() => void confirm()}
      />
    );
  }
  return (
    <form onSubmit={review}>
      <div class="side" role="radiogroup" aria-label="Kind">
        <button type="button" role="radio" aria-checked={kind === 'withdraw'} class={kind === 'withdraw' ? 'on' : ''} onClick={() => setKind('withdraw')}>Withdraw</button>
        <button type="button" role="radio" aria-checked={kind === 'transfer'} class={kind === 'transfer' ? 'on' : ''} onClick={() => setKind('transfer')}>Internal transfer</button>
      </div>
      <Field label="Destination address"><input name="to" value={to} onInput={(e) => setTo(e.currentTarget.value)} spellcheck={false} autocomplete="off" /></Field>
      <Field label="Amount (USDC)"><input name="amount" inputMode="decimal" value={amount} onInput={(e) => setAmount(e.currentTarget.value.trim())} autocomplete="off" /></Field>
      {kind === 'transfer' ? <Field label="Label (optional)"><input name="transfer-label" maxLength={64} value={label} onInput={(e) => setLabel(e.currentTarget.value)} /></Field> : null}
      <ErrorText error={error} />
      {done ? <Notice>{done}</Notice> : null}
      <Button kind="primary" type="submit">Review</Button>
    </form>
  );
}
