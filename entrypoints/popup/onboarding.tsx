/**
 * Onboarding: in a release build's first run the venue first (`venue-step.tsx`), then password (strength hint, confirm)
 * → owner key (import, or generate and confirm it was saved — it is shown once, and again only after re-entering the
 * password) → proxy key for the perps gateway (expiry, label) → order-book API credentials (or a deposit wallet, which
 * sets them up; the step offers no creation once the key has credentials). Every step after the password can be
 * skipped. One component per step; the steps after the key receive its address.
 */
import { useEffect, useState } from 'preact/hooks';
import { Address } from '../../components/Address';
import { Button, ErrorText, Field, Notice, passwordStrength } from '../../components/ui';
import { call, changeHeld, messageOf, type Status } from './api';
import { DepositWalletPanel } from './deposit';
import { VenueStep } from './venue-step';

type Step = 'venue' | 'password' | 'key' | 'save' | 'proxy' | 'clob' | 'done';
const DAY = 86_400_000;

/** Runs one step's action with busy and error state (local to the step shown). */
function useRun() {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
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
  return { error, busy, run };
}

/**
 * The onboarding flow. With an initialised vault (adding a key) it starts at the key step and can be
 * cancelled; `refresh` re-reads the vault status before `onDone`.
 */
export function Onboarding({
  status,
  onDone,
  refresh,
}: {
  status: Status;
  onDone: () => void;
  refresh: () => Promise<void>;
}) {
  // A release has no venue until the person chooses one (development and test builds: the sandbox); the
  // background says whether one was chosen, and refuses a vault before it.
  const [step, setStep] = useState<Step>(status.initialized ? 'key' : status.venueChosen ? 'password' : 'venue');
  // The password typed at creation; the save step re-asks it when the vault existed before.
  const [password, setPassword] = useState('');
  const [address, setAddress] = useState<string | undefined>(status.accounts[0]?.address);
  const [done, setDone] = useState<string[]>([]);
  const noted = (d: string) => setDone((cur) => [...cur, d]);

  if (step === 'venue') return <VenueStep onChosen={() => setStep('password')} />;
  if (step === 'password')
    return <PasswordStep password={password} setPassword={setPassword} onCreated={() => setStep('key')} />;
  if (step === 'key') {
    return (
      <KeyStep
        initialized={status.initialized}
        onKey={(a, generated) => {
          setAddress(a);
          setStep(generated ? 'save' : 'proxy');
        }}
        onCancel={onDone}
        onSkip={() => setStep(address ? 'proxy' : 'done')}
      />
    );
  }
  if (step === 'save' && address)
    return (
      <SaveStep
        address={address}
        initialized={status.initialized}
        password={password}
        setPassword={setPassword}
        onSaved={() => setStep('proxy')}
      />
    );
  if (step === 'proxy' && address)
    return (
      <ProxyStep
        address={address}
        onIssued={() => {
          noted('Proxy key issued');
          setStep('clob');
        }}
        onSkip={() => setStep('clob')}
      />
    );
  if (step === 'clob' && address)
    return (
      <ClobStep
        address={address}
        done={done}
        onCreated={(d) => {
          noted(d);
          setStep('done');
        }}
        onSkip={() => setStep('done')}
      />
    );
  return (
    <main class="panel onboarding">
      <h2>You're set</h2>
      {done.map((d) => (
        <Notice key={d}>{d}</Notice>
      ))}
      <Button kind="primary" autoFocus onClick={() => void refresh().then(onDone)}>
        Start trading
      </Button>
    </main>
  );
}

function PasswordStep({
  password,
  setPassword,
  onCreated,
}: {
  password: string;
  setPassword: (p: string) => void;
  onCreated: () => void;
}) {
  const [confirm, setConfirm] = useState('');
  const { error, busy, run } = useRun();
  const strength = passwordStrength(password);
  const mismatch = confirm.length > 0 && confirm !== password;
  return (
    <main class="panel onboarding">
      <h1>Welcome to Countersign</h1>
      <p class="muted">Choose a password. It encrypts your keys on this device; it cannot be recovered.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (strength.score > 0 && !mismatch)
            void run(async () => {
              await call('vault.create', { password }).catch((err: unknown) => {
                if (!changeHeld(err)) throw err;
              });
              onCreated();
            });
        }}
      >
        <Field label="Password" hint={<span class={`strength s${strength.score}`}>{strength.label}</span>}>
          <input
            type="password"
            name="new-password"
            autoFocus
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            autocomplete="new-password"
          />
        </Field>
        <Field label="Confirm password" hint={mismatch ? 'The passwords differ.' : undefined}>
          <input
            type="password"
            name="confirm-password"
            value={confirm}
            onInput={(e) => setConfirm(e.currentTarget.value)}
            autocomplete="new-password"
          />
        </Field>
        <ErrorText error={error} />
        <Button kind="primary" type="submit" disabled={busy || strength.score === 0 || confirm !== password}>
          Create vault
        </Button>
      </form>
    </main>
  );
}

function KeyStep({
  initialized,
  onKey,
  onCancel,
  onSkip,
}: {
  initialized: boolean;
  onKey: (address: string, generated: boolean) => void;
  onCancel: () => void;
  onSkip: () => void;
}) {
  const [importKey, setImportKey] = useState('');
  const { error, busy, run } = useRun();
  return (
    <main class="panel onboarding">
      <h2>Owner key</h2>
      <p class="muted">The owner key controls your account. Import one you have, or generate a new one.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            const r = await call('vault.importOwnerKey', { privateKey: importKey.trim() });
            setImportKey('');
            onKey(r.address, false);
          });
        }}
      >
        <Field label="Private key (0x…)">
          <input
            type="password"
            name="owner-key"
            value={importKey}
            onInput={(e) => setImportKey(e.currentTarget.value)}
            autocomplete="off"
            spellcheck={false}
          />
        </Field>
        <div class="actions">
          <Button kind="primary" type="submit" disabled={busy || !importKey}>
            Import key
          </Button>
          <Button
            onClick={() =>
              void run(async () => {
                const r = await call('vault.generateOwnerKey', {});
                onKey(r.address, true);
              })
            }
            disabled={busy}
          >
            Generate a new key
          </Button>
        </div>
      </form>
      <ErrorText error={error} />
      {initialized ? <Button onClick={onCancel}>Cancel</Button> : <Button onClick={onSkip}>Skip for now</Button>}
    </main>
  );
}

function SaveStep({
  address,
  initialized,
  password,
  setPassword,
  onSaved,
}: {
  address: string;
  initialized: boolean;
  password: string;
  setPassword: (p: string) => void;
  onSaved: () => void;
}) {
  const [revealed, setRevealed] = useState<string>();
  const [saved, setSaved] = useState(false);
  const { error, busy, run } = useRun();
  return (
    <main class="panel onboarding">
      <h2>Save your new key</h2>
      <p>
        Address <Address address={address} />
      </p>
      <p class="muted">
        Write the private key down and keep it offline. It is shown now, and later only after you re-enter your
        password.
      </p>
      {revealed ? (
        <code class="secret" data-testid="revealed-key">
          {revealed}
        </code>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              const r = await call('vault.revealOwnerKey', { address, password });
              setRevealed(r.privateKey);
            });
          }}
        >
          {initialized ? (
            <Field label="Password">
              <input type="password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
            </Field>
          ) : null}
          <Button type="submit" disabled={busy}>
            Show the key
          </Button>
        </form>
      )}
      <label class="check">
        <input type="checkbox" checked={saved} onChange={(e) => setSaved(e.currentTarget.checked)} /> I have saved this
        key somewhere safe
      </label>
      <ErrorText error={error} />
      <Button
        kind="primary"
        disabled={!saved}
        onClick={() => {
          setRevealed(undefined);
          onSaved();
        }}
      >
        Continue
      </Button>
    </main>
  );
}

function ProxyStep({ address, onIssued, onSkip }: { address: string; onIssued: () => void; onSkip: () => void }) {
  const [expiryDays, setExpiryDays] = useState('30');
  const [label, setLabel] = useState('popup');
  const { error, busy, run } = useRun();
  return (
    <main class="panel onboarding">
      <h2>Trading key for perps</h2>
      <p class="muted">
        A proxy key signs your orders so the owner key stays out of day-to-day trading. Your owner key authorises it.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            await call('proxy.issue', {
              account: address,
              expiry: Date.now() + Number(expiryDays) * DAY,
              label: label || undefined,
            });
            onIssued();
          });
        }}
      >
        <Field label="Expires after">
          <select value={expiryDays} onChange={(e) => setExpiryDays(e.currentTarget.value)} name="expiry">
            <option value="1">1 day</option>
            <option value="7">7 days</option>
            <option value="30">30 days</option>
            <option value="90">90 days</option>
            <option value="180">180 days</option>
          </select>
        </Field>
        <Field label="Label">
          <input value={label} name="label" maxLength={64} onInput={(e) => setLabel(e.currentTarget.value)} />
        </Field>
        <ErrorText error={error} />
        <div class="actions">
          <Button kind="primary" type="submit" disabled={busy}>
            Issue proxy key
          </Button>
          <Button onClick={onSkip}>Skip</Button>
        </div>
      </form>
    </main>
  );
}

/**
 * The order-book step: two labelled options — "New account — deposit wallet" (signature type 3, the
 * venue's path for new API users: the deposit-wallet panel derives, creates and approves it) and
 * "Existing key — API credentials" (creates or restores the key's API credentials, type 0). Once the key
 * has credentials the step only continues; a key whose credentials are of type 0-2 is offered the deposit
 * wallet only with a confirmation that names the switch (the panel asks, the background refuses otherwise).
 */
function ClobStep({
  address,
  done,
  onCreated,
  onSkip,
}: {
  address: string;
  done: readonly string[];
  onCreated: (notice: string) => void;
  onSkip: () => void;
}) {
  const { error, busy, run } = useRun();
  // Whether the account already has API credentials (stored before, or made by the deposit-wallet set-up),
  // and their signature type: then there is nothing to create, and the step only continues.
  const [stored, setStored] = useState<{ has: boolean; type?: 0 | 1 | 2 | 3 }>();
  const [choice, setChoice] = useState<'wallet' | 'key'>();
  const recheck = () =>
    void call('vault.accounts', {}).then(
      (all) => {
        const a = all.find((x) => x.address.toLowerCase() === address.toLowerCase());
        setStored({
          has: !!a?.hasClobCredentials,
          ...(a?.clobSignatureType === undefined ? {} : { type: a.clobSignatureType }),
        });
      },
      () => setStored({ has: false }),
    );
  useEffect(recheck, [address]);
  return (
    <main class="panel onboarding">
      <h2>Order-book credentials</h2>
      <p class="muted">How will this key trade on the order book? Your owner key signs either set-up.</p>
      {done.map((d) => (
        <Notice key={d}>{d}</Notice>
      ))}
      <div class="actions choices" role="group" aria-label="Order-book account">
        <Button
          kind={choice === 'wallet' ? 'primary' : undefined}
          aria-pressed={choice === 'wallet'}
          onClick={() => setChoice('wallet')}
        >
          New account — deposit wallet
        </Button>
        <Button
          kind={choice === 'key' ? 'primary' : undefined}
          aria-pressed={choice === 'key'}
          onClick={() => setChoice('key')}
        >
          Existing key — API credentials
        </Button>
      </div>
      {choice === undefined ? (
        <p class="muted small">
          New to the order book? The venue asks new API users to trade through a deposit wallet (signature type 3).
          Already trading with this key? Restore its API credentials; your account keeps working as it is.
        </p>
      ) : null}
      <ErrorText error={error} />
      {stored?.has ? (
        <>
          <Notice>API credentials are set up for this key.</Notice>
          <div class="actions">
            <Button kind="primary" onClick={() => onCreated('Order-book API credentials set up')}>
              Continue
            </Button>
          </div>
        </>
      ) : choice === 'key' ? (
        <div class="actions">
          <Button
            kind="primary"
            disabled={busy || stored === undefined}
            onClick={() =>
              void run(async () => {
                const r = await call('clob.createOrDerive', { account: address });
                onCreated(r.derived ? 'Existing API credentials restored' : 'API credentials created');
              })
            }
          >
            Create API credentials
          </Button>
        </div>
      ) : null}
      {choice === 'wallet' ? <DepositWalletPanel account={address} clobType={stored?.type} onSetUp={recheck} /> : null}
      {stored?.has ? null : <Button onClick={onSkip}>Skip</Button>}
    </main>
  );
}
