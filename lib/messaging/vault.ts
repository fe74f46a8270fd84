/**
 * Contract of the vault procedures: lock state, owner keys, password, backup.
 * Answers carry addresses and labels — never key material, except `vault.revealOwnerKey` (popup only,
 * after the password was typed again).
 */
import * as v from 'valibot';
import { address } from '../validation';
import { accountSchema } from './accounts';
import { done, EXT, label, noInput, password, POPUP, privateKey, procedure } from './procedure';

/**
 * `vault.status`'s answer: lock state (`state` 'session' = auto-lock kept only the live grants' keys),
 * the unlock back-off (`retryAfterMs`, ms), owner keys, the active account (the person's choice, or
 * null), pending approvals, and the live grants' sites and expiry (Unix ms; the trading-session banner).
 */
const statusSchema = v.object({
  initialized: v.boolean(),
  unlocked: v.boolean(),
  state: v.picklist(['locked', 'session', 'unlocked']),
  retryAfterMs: v.number(),
  accounts: v.array(accountSchema),
  activeAccount: v.nullable(v.string()),
  pendingApprovals: v.number(),
  session: v.array(v.object({ origin: v.string(), expiresAt: v.number() })),
  /**
   * Whether the venue was chosen (a release's first run asks first; a vault's existence implies it): the popup's
   * onboarding starts at the venue step when false.
   */
  venueChosen: v.boolean(),
  /**
   * The vault is missing or older than its second copy (`lib/vault/copy.ts`): the next unlock restores it from the copy
   * with the password.
   */
  recoverable: v.boolean(),
});

const addressOut = v.object({ address: v.string() });

/** Vault procedures. */
export const VAULT_CONTRACT = {
  'vault.status': procedure({ input: noInput, output: statusSchema, senders: EXT, activity: false }),
  'vault.create': procedure({ input: v.strictObject({ password }), output: done, senders: POPUP, activity: true }),
  'vault.unlock': procedure({ input: v.strictObject({ password }), output: done, senders: EXT, activity: true }),
  'vault.lock': procedure({ input: noInput, output: done, senders: EXT, activity: false }),
  'vault.changePassword': procedure({
    input: v.strictObject({ oldPassword: password, newPassword: password }),
    output: done,
    senders: POPUP,
    activity: true,
  }),
  'vault.importOwnerKey': procedure({
    input: v.strictObject({ privateKey, label }),
    output: addressOut,
    senders: POPUP,
    activity: true,
  }),
  'vault.generateOwnerKey': procedure({
    input: v.strictObject({ label }),
    output: addressOut,
    senders: POPUP,
    activity: true,
  }),
  /** The one answer with key material: the owner key, to a person who has just re-entered the password. */
  'vault.revealOwnerKey': procedure({
    input: v.strictObject({ address, password }),
    output: v.object({ privateKey: v.string() }),
    senders: POPUP,
    activity: true,
  }),
  'vault.accounts': procedure({ input: noInput, output: v.array(accountSchema), senders: EXT, activity: false }),
  'vault.exportBackup': procedure({
    input: noInput,
    output: v.object({ backup: v.string() }),
    senders: POPUP,
    activity: true,
  }),
  'vault.restoreBackup': procedure({
    input: v.strictObject({ backup: v.pipe(v.string(), v.maxLength(5_000_000)), password }),
    output: done,
    senders: POPUP,
    activity: true,
  }),
} as const;
