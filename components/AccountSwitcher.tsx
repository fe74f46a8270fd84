/**
 * The active account in the popup header: its label and short address; with more than
 * one owner key, a labelled select to switch. Switching is the person's explicit action — the popup
 * asks the background, which cancels pending requests and tells connected sites. Presentational.
 */
import { shortAddress } from '../lib/format';

/** An owner key as the switcher lists it: address and the person's label (may be empty). */
export type AccountOption = { address: string; label: string };

/** The header's account: a label with one key, a select with several; `onSelect` receives the chosen address. */
export function AccountSwitcher(props: {
  accounts: readonly AccountOption[];
  active: string;
  onSelect: (address: string) => void;
  disabled?: boolean;
}) {
  const name = (a: AccountOption) => `${a.label ? `${a.label} · ` : ''}${shortAddress(a.address)}`;
  const current = props.accounts.find((a) => a.address.toLowerCase() === props.active.toLowerCase());
  if (props.accounts.length < 2 || !current) {
    return (
      <span class="account" data-testid="active-account" title={props.active}>
        {current ? name(current) : shortAddress(props.active)}
      </span>
    );
  }
  return (
    <select
      class="account-select"
      aria-label="Active account"
      data-testid="active-account"
      value={current.address}
      disabled={props.disabled}
      onChange={(e) => props.onSelect(e.currentTarget.value)}
    >
      {props.accounts.map((a) => (
        <option key={a.address} value={a.address} title={a.address}>
          {name(a)}
        </option>
      ))}
    </select>
  );
}
