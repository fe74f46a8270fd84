/**
 * The deposit-wallet panel, presentational: the wallet address (given only after the
 * background checked it against the chain's derivation and the relayer's `/deployed`), whether it is
 * deployed and whether it approved the exchanges (the venue's read: "Approved" replaces the button), the relayer
 * transaction in flight with a progress bar until mined (or its failure in words), and the redeemable positions with
 * Redeem. Buttons: set up, create, approve the exchanges, redeem, and a bridge withdraw form (the wallet is the source;
 * the approval window always asks).
 */
import { useState } from 'preact/hooks';
import { Button, ErrorText, Field, Notice, ProgressBar } from '../ui';

/** What the panel shows; `tx.progress` is 0-3 (3 = mined), `tx.text` the state in words. */
export type DepositWalletProps = {
  /** `approvals`: whether the wallet approved the exchanges, as the venue reads it (`approved` hides the button). */
  wallet: { wallet: string; deployed: boolean; approvals: 'approved' | 'missing' | 'unknown' } | null;
  tx: { label: string; progress: number; text: string; failed: boolean } | undefined;
  redeemable: readonly { conditionId: string; title: string; outcome: string; size: string }[];
  busy: boolean;
  error: string | undefined;
  /**
   * The signature type (0-2) of the account's API credentials when it already trades the order book
   * without a deposit wallet: setting one up switches its orders, so the panel names the switch and asks
   * for a confirmation first.
   */
  switchFrom?: 0 | 1 | 2;
  /** Sets the wallet up; `replace` true when the person confirmed the switch of `switchFrom`. */
  onSetUp: (replace: boolean) => void;
  onCreate: () => void;
  onApprove: () => void;
  onRedeem: (conditionId: string) => void;
  /**
   * A bridge withdraw: `amount` USDC (decimal string), the destination chain id, token and recipient (as typed; the
   * background validates).
   */
  onWithdraw: (w: WithdrawForm) => void;
};

/** The withdraw form's fields as typed. */
export type WithdrawForm = { amount: string; toChainId: string; toTokenAddress: string; recipient: string };

/** The panel (see the module docstring). */
export function DepositWallet(p: DepositWalletProps) {
  return (
    <section class="panel deposit-wallet" aria-label="Deposit wallet" data-testid="deposit-wallet">
      <h3>Deposit wallet</h3>
      {!p.wallet ? (
        p.switchFrom === undefined ? (
          <>
            <p class="muted">
              New order-book accounts trade through a deposit wallet that your owner key controls. Countersign derives
              its address and checks it with the relayer before showing it.
            </p>
            <Button kind="primary" disabled={p.busy} onClick={() => p.onSetUp(false)} data-testid="deposit-setup">
              Set up a deposit wallet
            </Button>
          </>
        ) : (
          <SwitchConfirm from={p.switchFrom} busy={p.busy} onSetUp={() => p.onSetUp(true)} />
        )
      ) : (
        <>
          <p>
            Address{' '}
            <code class="address" data-testid="deposit-address">
              {p.wallet.wallet}
            </code>
          </p>
          {p.wallet.deployed ? (
            <>
              <Notice>Deployed. Send collateral (USDC) only to this address, on the order book's chain.</Notice>
              {p.wallet.approvals === 'approved' ? (
                <p data-testid="deposit-approved">
                  Approved: the exchanges may use the wallet's collateral and outcome tokens.
                </p>
              ) : (
                <Button disabled={p.busy} onClick={p.onApprove} data-testid="deposit-approve">
                  Approve the exchanges
                </Button>
              )}
            </>
          ) : (
            <>
              <p class="warn">Not deployed yet: do not send funds, and orders wait until it is.</p>
              <Button kind="primary" disabled={p.busy} onClick={p.onCreate} data-testid="deposit-create">
                Create the wallet
              </Button>
            </>
          )}
        </>
      )}
      {p.wallet?.deployed ? <WithdrawFormView busy={p.busy} onWithdraw={p.onWithdraw} /> : null}
      {p.tx ? (
        <div data-testid="deposit-tx">
          <p>{p.tx.label}</p>
          {p.tx.failed ? (
            <p class="error" role="alert">
              {p.tx.text}
            </p>
          ) : (
            <ProgressBar value={p.tx.progress} max={3} label={p.tx.text} />
          )}
        </div>
      ) : null}
      {p.redeemable.length ? (
        <ul class="redeemable">
          {p.redeemable.map((r) => (
            <li key={`${r.conditionId}-${r.outcome}`}>
              {r.title} — {r.outcome}: {r.size} shares{' '}
              <Button disabled={p.busy} onClick={() => p.onRedeem(r.conditionId)} data-testid="deposit-redeem">
                Redeem
              </Button>
            </li>
          ))}
        </ul>
      ) : null}
      <ErrorText error={p.error} />
    </section>
  );
}

const TYPE_NAMES = ['your key (EOA, type 0)', 'a proxy wallet (type 1)', 'a Safe (type 2)'] as const;

/**
 * For an account that already trades the order book (API credentials of type 0-2): what a deposit
 * wallet changes, and a checkbox that must be ticked before the set-up button does anything.
 */
function SwitchConfirm({ from, busy, onSetUp }: { from: 0 | 1 | 2; busy: boolean; onSetUp: () => void }) {
  const [sure, setSure] = useState(false);
  return (
    <div data-testid="deposit-switch">
      <p class="warn">
        This account already trades the order book through {TYPE_NAMES[from]}. Setting up a deposit wallet switches its
        orders to the wallet (type 3): new orders are paid from the wallet, which starts empty and undeployed, and the
        funds and positions of {TYPE_NAMES[from]} are no longer used for them.
      </p>
      <label class="check">
        <input
          type="checkbox"
          name="deposit-switch"
          checked={sure}
          onChange={(e) => setSure(e.currentTarget.checked)}
        />{' '}
        Switch this account's orders to the deposit wallet
      </label>
      <Button kind="danger" disabled={busy || !sure} onClick={onSetUp} data-testid="deposit-setup">
        Switch to a deposit wallet
      </Button>
    </div>
  );
}

/** Withdraw from the deposit wallet through the bridge: amount in USDC, destination chain, token and recipient. */
function WithdrawFormView({ busy, onWithdraw }: { busy: boolean; onWithdraw: (w: WithdrawForm) => void }) {
  const [f, setF] = useState<WithdrawForm>({ amount: '', toChainId: '', toTokenAddress: '', recipient: '' });
  const set = (k: keyof WithdrawForm) => (e: { currentTarget: HTMLInputElement }) =>
    setF({ ...f, [k]: e.currentTarget.value.trim() });
  return (
    <details class="withdraw" data-testid="deposit-withdraw">
      <summary>Withdraw through the bridge</summary>
      <p class="muted">
        Sends USDC from the deposit wallet to the bridge, which delivers it to the recipient on the chain you name. You
        approve it in a window; it is never covered by a permission.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onWithdraw(f);
        }}
      >
        <Field label="Amount (USDC)">
          <input
            name="withdraw-amount"
            inputMode="decimal"
            value={f.amount}
            onInput={set('amount')}
            autocomplete="off"
          />
        </Field>
        <Field label="Destination chain id">
          <input
            name="withdraw-chain"
            inputMode="numeric"
            value={f.toChainId}
            onInput={set('toChainId')}
            autocomplete="off"
          />
        </Field>
        <Field label="Token there (0x…)">
          <input
            name="withdraw-token"
            value={f.toTokenAddress}
            onInput={set('toTokenAddress')}
            autocomplete="off"
            spellcheck={false}
          />
        </Field>
        <Field label="Recipient there (0x…)">
          <input
            name="withdraw-recipient"
            value={f.recipient}
            onInput={set('recipient')}
            autocomplete="off"
            spellcheck={false}
          />
        </Field>
        <Button
          type="submit"
          disabled={busy || !f.amount || !f.toChainId || !f.toTokenAddress || !f.recipient}
          data-testid="withdraw-submit"
        >
          Withdraw
        </Button>
      </form>
    </details>
  );
}
