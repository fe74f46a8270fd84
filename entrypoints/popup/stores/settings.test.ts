import { describe, expect, it } from 'vitest';
import { createSettingsStore, DEFAULT_MAX_POSITION_USDC, invalidText } from './settings';
import { createPermissionsStore } from './permissions';
import { createVaultStore, hasLiveProxy, switchedText } from './vault';
import { fakeCall, FakeFailure } from './testkit';

const SETTINGS = {
  perpsUrl: 'http://127.0.0.1:1',
  clobUrl: 'http://127.0.0.1:2',
  gammaUrl: 'http://127.0.0.1:3',
  dataUrl: 'http://127.0.0.1:4',
  relayerUrl: 'http://127.0.0.1:5',
  rpcUrl: 'http://127.0.0.1:6',
  clobChainId: 137,
  autoLockMinutes: 15,
  theme: 'dark',
  headerSet: 'seed',
  maxPositionUsdc: 1_000,
  auditRetentionDays: 0,
  slippageBps: 50,
  preset: 'custom',
  perpsWsUrl: 'ws://127.0.0.1:1/v1/ws',
  clobWsUrl: 'ws://127.0.0.1:2/ws',
  bridgeUrl: 'http://127.0.0.1:7',
  perpsDomain: { name: 'Polymarket', version: '1' },
  confirmedPresets: [],
  venueChosen: true,
};

describe('createSettingsStore', () => {
  it('uses the default warning threshold until the settings are read', async () => {
    const { call } = fakeCall({
      'settings.get': () => ({
        settings: SETTINGS,
        invalid: [{ field: 'theme', reason: 'unknown theme' }],
        insecure: [],
        cleartext: [],
      }),
    });
    const s = createSettingsStore(call);
    expect(s.maxPositionUsdc.value).toBe(DEFAULT_MAX_POSITION_USDC);
    await s.load();
    expect(s.maxPositionUsdc.value).toBe(1_000);
    expect(s.slippageBps.value).toBe(50);
    expect(s.theme.value).toBe('dark');
    expect(invalidText(s.invalid.value)).toBe('theme (unknown theme)');
  });

  it('saves the draft, keeps what the background stored and clears the invalid list', async () => {
    const { call, calls } = fakeCall({
      'settings.get': () => ({
        settings: SETTINGS,
        invalid: [{ field: 'theme', reason: 'x' }],
        insecure: [],
        cleartext: [],
      }),
      'settings.set': (p) => ({ ...SETTINGS, ...p, autoLockMinutes: 30 }),
    });
    const s = createSettingsStore(call);
    await s.load();
    s.edit({ theme: 'light', maxPositionUsdc: 2_000 });
    expect(s.saved.value?.theme).toBe('dark');
    await s.save();
    expect(calls.at(-1)?.payload).toMatchObject({ theme: 'light', maxPositionUsdc: 2_000 });
    expect(s.saved.value?.autoLockMinutes).toBe(30);
    expect(s.maxPositionUsdc.value).toBe(2_000);
    expect(s.invalid.value).toEqual([]);
    expect(s.notice.value).toBe('Settings saved');
  });

  it('shows a refused action as the error, not a notice', async () => {
    const { call } = fakeCall({
      'vault.changePassword': () => {
        throw new FakeFailure({ name: 'Vault.WrongPasswordError', shortMessage: 'Wrong password.' });
      },
    });
    const s = createSettingsStore(call);
    await s.run(async () => {
      await s.changePassword('a', 'bbbbbbbb');
      return 'Password changed';
    });
    expect(s.error.value).toBe('Wrong password.');
    expect(s.notice.value).toBeUndefined();
  });
});

describe('createVaultStore', () => {
  const accounts = [
    { address: '0xA', label: 'main', proxies: [], hasClobCredentials: false },
    { address: '0xB', label: '', proxies: [], hasClobCredentials: false },
  ];
  const status = (active: string) => ({
    initialized: true,
    unlocked: true,
    state: 'unlocked',
    retryAfterMs: 0,
    accounts,
    activeAccount: active,
    pendingApprovals: 0,
    session: [],
    venueChosen: true,
    recoverable: false,
  });

  it('switches the active account and says what the switch cancelled', async () => {
    let active = '0xA';
    const { call } = fakeCall({
      'vault.status': () => status(active),
      'account.select': (p) => {
        const changed = p.address !== active;
        active = String(p.address);
        return { activeAccount: active, changed };
      },
    });
    const s = createVaultStore(call);
    await s.refresh();
    expect(s.account.value?.label).toBe('main');
    await s.select('0xB');
    expect(s.account.value?.address).toBe('0xB');
    expect(s.switched.value).toBe(switchedText(accounts, '0xB'));
    expect(s.switched.value).toMatch(/^Now acting as 0xB\. Pending site requests were cancelled/);
  });

  it('knows a live proxy key from an expired one', () => {
    expect(hasLiveProxy({ proxies: [{ proxy: '0x1', expiry: 2_000, label: '' }] }, 1_000)).toBe(true);
    expect(hasLiveProxy({ proxies: [{ proxy: '0x1', expiry: 500, label: '' }] }, 1_000)).toBe(false);
    expect(hasLiveProxy(undefined)).toBe(false);
  });
});

describe('createPermissionsStore', () => {
  it('revokes a grant and reads the list again', async () => {
    const grant = (id: string) => ({
      id,
      venue: 'perps',
      instruments: [1],
      slippagePct: '1',
      allow: { order: true },
      maxNotional: '100',
      dailyNotional: '1000',
      priceBandPct: '2',
      origin: 'https://app.example',
      account: '0xabc',
      createdAt: 0,
      expiresAt: 3_600_000,
      used24h: '0',
      uses24h: 0,
    });
    let grants = [grant('g1'), grant('g2')];
    const { call } = fakeCall({
      'grant.list': () => grants,
      'deadman.status': () => ({ armed: false, venues: [] }),
      'grant.revoke': (p) => {
        grants = grants.filter((g) => g.id !== p.id);
        return null;
      },
    });
    const s = createPermissionsStore(call);
    await s.load();
    expect(s.grants.value).toHaveLength(2);
    await s.revoke('g1');
    expect(s.grants.value?.map((g) => g.id)).toEqual(['g2']);
  });
});

describe('createSettingsStore: venue presets', () => {
  const POLY = { ...SETTINGS, preset: 'polymarket', perpsUrl: 'https://api.perpetuals.polymarket.com' };
  const RESULT = { service: 'perps', label: 'Perps gateway', url: 'x', ok: true, ms: 3 };

  it('switches to Sandbox (no host to ask for), stores it and runs the connection check', async () => {
    const { call, calls } = fakeCall({
      'settings.get': () => ({ settings: POLY, invalid: [], insecure: [], cleartext: [] }),
      'settings.set': (p) => ({ ...SETTINGS, ...p }),
      'settings.checkConnections': () => ({ results: [RESULT] }),
    });
    const s = createSettingsStore(call);
    await s.load();
    await s.choosePreset('sandbox');
    expect(calls.find((c) => c.type === 'settings.set')?.payload).toEqual({ preset: 'sandbox' });
    await until(() => s.checks.value !== undefined);
    expect(s.checks.value).toEqual([RESULT]);
  });

  it('makes the draft custom when a preset field is edited, not when another one is', async () => {
    const { call } = fakeCall({ 'settings.get': () => ({ settings: POLY, invalid: [], insecure: [], cleartext: [] }) });
    const s = createSettingsStore(call);
    await s.load();
    s.edit({ theme: 'light' });
    expect(s.draft.value?.preset).toBe('polymarket');
    s.edit({ bridgeUrl: 'https://bridge.example' });
    expect(s.draft.value?.preset).toBe('custom');
  });

  it('asks for the confirmation of an unconfirmed venue preset and stores it once', async () => {
    const { call, calls } = fakeCall({
      'settings.get': () => ({ settings: POLY, invalid: [], insecure: [], cleartext: [] }),
      'settings.set': (p) => ({ ...POLY, ...p }),
    });
    const s = createSettingsStore(call);
    await s.load();
    expect(s.unconfirmed.value).toBe(true);
    await s.confirmVenue();
    expect(calls.at(-1)?.payload).toEqual({ confirmedPresets: ['polymarket'] });
    expect(s.unconfirmed.value).toBe(false);
  });
});

describe('createSettingsStore: what travelled in clear', () => {
  const USE = {
    field: 'clobUrl' as const,
    url: 'http://gateway.example/clob',
    since: 1,
    secrets: 'your order-book API key, secret and passphrase',
    rotate: 'clob' as const,
  };
  const accounts = [
    {
      address: '0x00000000000000000000000000000000000000a1',
      proxies: [
        { proxy: '0x00000000000000000000000000000000000000b1' },
        { proxy: '0x00000000000000000000000000000000000000b2' },
      ],
      hasClobCredentials: true,
    },
    { address: '0x00000000000000000000000000000000000000a2', proxies: [], hasClobCredentials: false },
  ];

  it(
    'shows what may have travelled, rotates it for every ' +
      'account that has it, and clears the notice only when asked',
    async () => {
      const { call, calls } = fakeCall({
        'settings.get': () => ({
          settings: SETTINGS,
          invalid: [],
          insecure: [{ field: 'clobUrl', url: USE.url, reason: 'is not encrypted' }],
          cleartext: [USE],
        }),
        'clob.rotateCredentials': (p) => ({ account: p.account, nonce: 1, oldDeleted: true }),
        'proxy.issue': (p) => ({
          account: p.account,
          proxy: '0x00000000000000000000000000000000000000c1',
          expiry: p.expiry,
          label: '',
        }),
        'proxy.delete': () => null,
        'settings.clearCleartext': () => null,
      });
      const s = createSettingsStore(call);
      await s.load();
      expect(s.insecure.value.map((i) => i.field)).toEqual(['clobUrl']);
      expect(s.cleartext.value).toEqual([USE]);
      await s.rotate('clob', accounts);
      expect(calls.filter((c) => c.type === 'clob.rotateCredentials').map((c) => c.payload.account)).toEqual([
        accounts[0]?.address,
      ]);
      await s.rotate('proxy', accounts);
      // The new key first, then each old one deleted: the account is never left without a proxy key.
      expect(
        calls.filter((c) => c.type.startsWith('proxy.')).map((c) => `${c.type} ${String(c.payload.proxy ?? '')}`),
      ).toEqual([
        'proxy.issue ',
        'proxy.delete 0x00000000000000000000000000000000000000b1',
        'proxy.delete 0x00000000000000000000000000000000000000b2',
      ]);
      expect(s.cleartext.value).toEqual([USE]);
      await s.clearCleartext();
      expect(calls.at(-1)?.type).toBe('settings.clearCleartext');
      expect(s.cleartext.value).toEqual([]);
    },
  );

  it('never sends venueChosen when saving: it is the background’s to set', async () => {
    const { call, calls } = fakeCall({
      'settings.get': () => ({ settings: SETTINGS, invalid: [], insecure: [], cleartext: [] }),
      'settings.set': (p) => ({ ...SETTINGS, ...p }),
    });
    const s = createSettingsStore(call);
    await s.load();
    await s.save();
    expect(calls.at(-1)?.type).toBe('settings.set');
    expect(calls.at(-1)?.payload).not.toHaveProperty('venueChosen');
  });
});

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 50 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
}
