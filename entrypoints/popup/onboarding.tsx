/**
 * Onboarding: password (strength hint, confirm) → owner key (import, or generate and confirm it was
 * saved — it is shown once, and again only after re-entering the password) → proxy key for the perps
 * gateway (expiry, label) → order-book API credentials. Every step after the password can be skipped.
 */
import { useState } from 'preact/hooks';
import { Address } from '../../components/Address';
import { Button, ErrorText, Field, Notice, passwordStrength } from '../../components/ui';
import { call, messageOf, type Status } from './api';

type Step = 'password' | 'key' | 'save' | 'proxy' | 'clob' | 'done';
const DAY = 86_400_000;

export function Onboarding({ status, onDone, refresh }: { status: Status; onDone: () => void; refresh: () => Promise<void> }) {
  const [step, setStep] = useState<Step>(status.initialized ? 'key' : 'password');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [address, setAddress] = useState<string | undefined>(status.accounts[0]?.address);
  const [importKey, setImportKey] = useState('');
  const [revealed, setRevealed] = useState<string>();
  const [saved, setSaved] = useState(false);
  const [expiryDays, setExpiryDays] = useState('30');
  const [label, setLabel] = useState('popup');
  const [done, setDone] = useState<string[]>([]);
  const strength = passwordStrength(password);

  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  if (step === 'password') {
    const mismatch = confirm.length > 0 && confirm !== password;
    return (
      <main class="panel onboarding">
        <h1>Welcome to Countersign</h1>
        <p class="muted">Choose a password. It encrypts your keys on this device; it cannot be recovered.</p>
        <form onSubmit={(e) => { e.preventDefault(); if (strength.score > 0 && !mismatch) void run(async () => { await call('vault.create', { password }); setStep('key'); }); }}>
          <Field label="Password" hint={<span class={`strength s${strength.score}`}>{strength.label}</span>}>
            <input type="password" name="new-password" autoFocus value={password} onInput={(e) => setPassword(e.currentTarget.value)} autocomplete="new-password" />
          </Field>
          <Field label="Confirm password" hint={mismatch ? 'The passwords differ.' : undefined}>
            <input type="password" name="confirm-password" value={confirm} onInput={(e) => setConfirm(e.currentTarget.value)} autocomplete="new-password" />
          </Field>
          <ErrorText error={error} />
          <Button kind="primary" type="submit" disabled={busy || strength.score === 0 || confirm !== password}>Create vault</Button>
        </form>
      </main>
    );
  }

  if (step === 'key') {
    return (
      <main class="panel onboarding">
        <h2>Owner key</h2>
        <p class="muted">The owner key controls your account. Import one you have, or generate a new one.</p>
        <form onSubmit={(e) => { e.preventDefault(); void run(async () => { const r = await call('vault.importOwnerKey', { privateKey: importKey.trim() }); setImportKey(''); setAddress(r.address); setStep('proxy'); }); }}>
          <Field label="Private key (0x…)">
            <input type="password" name="owner-key" value={importKey} onInput={(e) => setImportKey(e.currentTarget.value)} autocomplete="off" spellcheck={false} />
          </Field>
          <div class="actions">
            <Button kind="primary" type="submit" disabled={busy || !importKey}>Import key</Button>
            <Button onClick={() => void run(async () => { const r = await call('vault.generateOwnerKey', {}); setAddress(r.address); setStep('save'); })} disabled={busy}>Generate a new key</Button>
          </div>
        </form>
        <ErrorText error={error} />
        {status.initialized ? <Button onClick={onDone}>Cancel</Button> : <Button onClick={() => setStep(address ? 'proxy' : 'done')}>Skip for now</Button>}
      </main>
    );
  }

  if (step === 'save') {
    return (
      <main class="panel onboarding">
        <h2>Save your new key</h2>
        <p>Address <Address address={address!} /></p>
        <p class="muted">Write the private key down and keep it offline. It is shown now, and later only after you re-enter your password.</p>
        {revealed ? (
          <code class="secret" data-testid="revealed-key">{revealed}</code>
        ) : (
          <form onSubmit={(e) => { e.preventDefault(); void run(async () => { const r = await call('vault.revealOwnerKey', { address: address!, password }); setRevealed(r.privateKey); }); }}>
            {status.initialized ? (
              <Field label="Password"><input type="password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} /></Field>
            ) : null}
            <Button type="submit" disabled={busy}>Show the key</Button>
          </form>
        )}
        <label class="check">
          <input type="checkbox" checked={saved} onChange={(e) => setSaved(e.currentTarget.checked)} /> I have saved this key somewhere safe
        </label>
        <ErrorText error={error} />
        <Button kind="primary" disabled={!saved} onClick={() => { setRevealed(undefined); setStep('proxy'); }}>Continue</Button>
      </main>
    );
  }

  if (step === 'proxy') {
    return (
      <main class="panel onboarding">
        <h2>Trading key for perps</h2>
        <p class="muted">A proxy key signs your orders so the owner key stays out of day-to-day trading. Your owner key authorises it.</p>
        <form onSubmit={(e) => { e.preventDefault(); void run(async () => { await call('proxy.issue', { account: address!, expiry: Date.now() + Number(expiryDays) * DAY, label: label || undefined }); setDone((d) => [...d, 'Proxy key issued']); setStep('clob'); }); }}>
          <Field label="Expires after">
            <select value={expiryDays} onChange={(e) => setExpiryDays(e.currentTarget.value)} name="expiry">
              <option value="1">1 day</option>
              <option value="7">7 days</option>
              <option value="30">30 days</option>
              <option value="90">90 days</option>
              <option value="180">180 days</option>
            </select>
          </Field>
          <Field label="Label"><input value={label} name="label" maxLength={64} onInput={(e) => setLabel(e.currentTarget.value)} /></Field>
          <ErrorText error={error} />
          <div class="actions">
            <Button kind="primary" type="submit" disabled={busy}>Issue proxy key</Button>
            <Button onClick={() => setStep('clob')}>Skip</Button>
          </div>
        </form>
      </main>
    );
  }

  if (step === 'clob') {
    return (
      <main class="panel onboarding">
        <h2>Order-book credentials</h2>
        <p class="muted">API credentials let the extension authenticate order-book requests. Your owner key signs their creation.</p>
        {done.map((d) => <Notice key={d}>{d}</Notice>)}
        <ErrorText error={error} />
        <div class="actions">
          <Button kind="primary" disabled={busy} onClick={() => void run(async () => { const r = await call('clob.createOrDerive', { account: address! }); setDone((d) => [...d, r.derived ? 'Existing API credentials restored' : 'API credentials created']); setStep('done'); })}>Create API credentials</Button>
          <Button onClick={() => setStep('done')}>Skip</Button>
        </div>
      </main>
    );
  }

  return (
    <main class="panel onboarding">
      <h2>You're set</h2>
      {done.map((d) => <Notice key={d}>{d}</Notice>)}
      <Button kind="primary" autoFocus onClick={() => void refresh().then(onDone)}>Start trading</Button>
    </main>
  );
}
