/** The deposit-wallet panel wired to its store for `account` (the panel is `components/clob/DepositWallet`). */
import { useEffect, useMemo } from 'preact/hooks';
import { DepositWallet } from '../../components/clob/DepositWallet';
import { call } from './api';
import { createDepositStore, txProgress, txStateText } from './stores/deposit';

/**
 * Reads the wallet when shown; every action goes through the store. `onSetUp` runs after a set-up
 * succeeded (the API credentials exist then). `clobType`: the signature type of the account's stored API
 * credentials, if any — for types 0-2 the set-up asks to confirm the switch of the account's orders.
 */
export function DepositWalletPanel({
  account,
  clobType,
  onSetUp,
}: {
  account: string;
  clobType?: 0 | 1 | 2 | 3;
  onSetUp?: () => void;
}) {
  const store = useMemo(() => createDepositStore(call, account), [account]);
  useEffect(() => void store.resume(), [store]);
  const t = store.tx.value;
  return (
    <DepositWallet
      wallet={store.wallet.value}
      tx={
        t && {
          label: t.label,
          progress: txProgress(t.state),
          text: txStateText(t),
          failed: t.state === 'STATE_FAILED' || t.state === 'STATE_INVALID',
        }
      }
      redeemable={store.status.value?.redeemable ?? []}
      busy={store.busy.value}
      error={store.error.value}
      switchFrom={clobType === 3 ? undefined : clobType}
      onSetUp={(replace) =>
        void store.setUp(replace).then(() => {
          if (store.wallet.value) onSetUp?.();
        })
      }
      onCreate={() => void store.create()}
      onApprove={() => void store.approve()}
      onRedeem={(id) => void store.redeem(id)}
      onWithdraw={(w) => void store.withdraw(w)}
    />
  );
}
