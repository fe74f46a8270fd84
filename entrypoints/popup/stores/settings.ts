/**
 * Settings state for the popup: the stored settings (and the fields that were
 * invalid and reset to their defaults), the draft being edited, and the vault actions of the Settings
 * tab (encrypted backup export and restore, password change) with their notice or error. The theme and
 * the position-size warning threshold are read from here by the app and the perps ticket.
 */
import { computed, signal } from '@preact/signals';
import type { ProcedureOutput } from '../../../lib/messaging/protocol';
import { call as popupCall, messageOf, requestHostPermissions } from '../api';
import { BaseError } from '../../../lib/errors/base';
import { hostOrigins } from '../../../lib/settings/hosts';
import { confirmationKey, needsConfirmation } from '../../../lib/settings/confirmation';
import { PRESET_FIELDS, presetById, type PresetId } from '../../../lib/settings/presets';
import type { Call } from './perps';
import { DEFAULT_SLIPPAGE_BPS } from '../../../lib/perps/risk';

/** The settings (`lib/settings` schema): gateway URLs, auto-lock minutes, theme, header names, limits. */
export type Settings = ProcedureOutput<'settings.get'>['settings'];
/** A stored field that was invalid and replaced by its default. */
export type InvalidSetting = ProcedureOutput<'settings.get'>['invalid'][number];
/** A stored service URL the transport rule refuses at use (`lib/settings/transport.ts`). */
export type InsecureSetting = ProcedureOutput<'settings.get'>['insecure'][number];
/** A service the stored settings ever named in clear, with what may have travelled (`lib/settings/cleartext.ts`). */
export type CleartextNotice = ProcedureOutput<'settings.get'>['cleartext'][number];

/** The warning threshold before the settings are read (USDC notional). */
export const DEFAULT_MAX_POSITION_USDC = 50_000;

/** The stored field names as a person reads them: "autoLockMinutes (must be 1-1440)". */
export const invalidText = (invalid: readonly InvalidSetting[]) =>
  invalid.map((i) => `${i.field} (${i.reason})`).join('; ');

/** One service's connection-check result (`settings.checkConnections`). */
export type ConnectionResult = ProcedureOutput<'settings.checkConnections'>['results'][number];

/** The settings store. */
export type SettingsStore = ReturnType<typeof createSettingsStore>;

/** Creates the store; `load()` reads the settings. */
export function createSettingsStore(call: Call = popupCall) {
  /** The draft shown in the form (the stored settings until edited). */
  const draft = signal<Settings | undefined>(undefined);
  /** The settings as last read or saved. */
  const saved = signal<Settings | undefined>(undefined);
  const invalid = signal<InvalidSetting[]>([]);
  const insecure = signal<InsecureSetting[]>([]);
  const cleartext = signal<CleartextNotice[]>([]);
  const error = signal<string | undefined>(undefined);
  const notice = signal<string | undefined>(undefined);
  const theme = computed(() => saved.value?.theme);
  const maxPositionUsdc = computed(() => saved.value?.maxPositionUsdc ?? DEFAULT_MAX_POSITION_USDC);
  /** The protected market orders' slippage cap, basis points (default 100 = 1 %). */
  const slippageBps = computed(() => saved.value?.slippageBps ?? DEFAULT_SLIPPAGE_BPS);

  /** The last connection check's results, undefined before the first. */
  const checks = signal<ConnectionResult[] | undefined>(undefined);
  const checking = signal(false);
  /** Whether the saved settings' venue preset still waits for the person's real-money confirmation. */
  const unconfirmed = computed(() => (saved.value ? needsConfirmation(saved.value) : false));

  /** Reads the settings (and the invalid fields). */
  async function load(): Promise<void> {
    const r = await call('settings.get', {});
    saved.value = r.settings;
    draft.value = r.settings;
    invalid.value = r.invalid;
    insecure.value = r.insecure;
    cleartext.value = r.cleartext;
  }
  /**
   * Rotates what may have travelled in clear, for every account that has it: `proxy` issues a new proxy
   * key (30 days) and then deletes the old ones at the gateway; `clob` replaces the order-book API
   * credentials (`clob.rotateCredentials`: the old key deleted at the exchange first).
   */
  const rotate = (
    what: 'proxy' | 'clob',
    accounts: readonly { address: string; proxies: readonly { proxy: string }[]; hasClobCredentials: boolean }[],
  ) =>
    run(async () => {
      let n = 0;
      let kept = 0;
      for (const a of accounts) {
        if (what === 'clob' && a.hasClobCredentials) {
          if (!(await call('clob.rotateCredentials', { account: a.address })).oldDeleted) kept++;
          n++;
        }
        if (what === 'proxy' && a.proxies.length) {
          await call('proxy.issue', { account: a.address, expiry: Date.now() + 30 * 86_400_000 });
          for (const p of a.proxies) await call('proxy.delete', { account: a.address, proxy: p.proxy });
          n++;
        }
      }
      if (what === 'proxy') return `New proxy keys for ${n} account(s); the old ones were deleted.`;
      const old = kept
        ? `the exchange refused to delete the old key of ${kept} of them: it may still be valid`
        : 'the old ones were deleted at the exchange';
      return `New order-book API credentials for ${n} account(s); ${old}.`;
    });
  /** Clears the record of services named in clear (the person rotated, or keeps, what it names). */
  const clearCleartext = () =>
    run(async () => {
      await call('settings.clearCleartext', {});
      cleartext.value = [];
      return 'Noted.';
    });
  /** Changes fields of the draft; editing a field a preset fills makes the draft `custom`. */
  function edit(patch: Partial<Settings>): void {
    if (!draft.value) return;
    const custom = patch.preset === undefined && PRESET_FIELDS.some((f) => f in patch);
    draft.value = { ...draft.value, ...patch, ...(custom ? { preset: 'custom' as const } : {}) };
  }
  /** Runs the connection check of the stored settings (`settings.checkConnections`). */
  async function check(): Promise<void> {
    checking.value = true;
    try {
      checks.value = (await call('settings.checkConnections', {})).results;
    } catch (err) {
      error.value = messageOf(err);
    } finally {
      checking.value = false;
    }
  }
  /**
   * Switches to preset `id`: asks the browser for exactly its hosts' permissions (in this
   * click), stores all its values, then runs the connection check. Refused permissions switch nothing.
   */
  const choosePreset = (id: Exclude<PresetId, 'custom'>) =>
    run(async () => {
      const preset = presetById(id);
      if (!preset) return 'Nothing to switch';
      const origins = hostOrigins(preset.values);
      if (!(await requestHostPermissions(origins)))
        throw new BaseError(
          `The browser did not allow Countersign to reach ${origins.join(', ')}: the preset was not switched.`,
        );
      const next = await call('settings.set', { preset: id });
      saved.value = next;
      draft.value = next;
      checks.value = undefined;
      void check();
      return `${preset.label}: every service filled in. Checking the connections…`;
    });
  /** Stores the person's real-money confirmation of the saved venue preset (once per preset). */
  const confirmVenue = () =>
    run(async () => {
      const s = saved.value;
      const key = s && confirmationKey(s);
      if (!s || !key) return 'Nothing to confirm';
      const next = await call('settings.set', { confirmedPresets: [...s.confirmedPresets, key] });
      saved.value = next;
      draft.value = draft.value ? { ...draft.value, confirmedPresets: next.confirmedPresets } : next;
      return 'Real-money signatures with this preset are allowed.';
    });
  /** Runs a Settings action: its resolved text becomes the notice, a failure the error. */
  async function run(fn: () => Promise<string>): Promise<void> {
    error.value = undefined;
    notice.value = undefined;
    try {
      notice.value = await fn();
    } catch (err) {
      error.value = messageOf(err);
    }
  }
  /**
   * Saves the draft (asking the browser for its https hosts first, in this click); the background answers the stored
   * settings.
   */
  const save = () =>
    run(async () => {
      const d = draft.value;
      if (!d) return 'Nothing to save';
      const origins = hostOrigins(d);
      if (!(await requestHostPermissions(origins)))
        throw new BaseError(`The browser did not allow Countersign to reach ${origins.join(', ')}: nothing was saved.`);
      const { venueChosen: _chosen, ...patch } = d; // the background's to set
      const next = await call('settings.set', patch);
      saved.value = next;
      draft.value = next;
      invalid.value = [];
      insecure.value = [];
      return 'Settings saved';
    });
  /** The encrypted backup (JSON text) for download. */
  const exportBackup = async () => (await call('vault.exportBackup', {})).backup;
  /** Replaces the vault with `backup`, decrypted with `password`. */
  const restore = (backup: string, password: string) => call('vault.restoreBackup', { backup, password });
  /** Changes the vault password. */
  const changePassword = (oldPassword: string, newPassword: string) =>
    call('vault.changePassword', { oldPassword, newPassword });

  return {
    draft,
    saved,
    invalid,
    insecure,
    cleartext,
    rotate,
    clearCleartext,
    error,
    notice,
    theme,
    maxPositionUsdc,
    slippageBps,
    checks,
    checking,
    unconfirmed,
    load,
    edit,
    run,
    save,
    choosePreset,
    check,
    confirmVenue,
    exportBackup,
    restore,
    changePassword,
  };
}
