/**
 * The real-money confirmation: a live venue preset signs nothing until the person confirms
 * it once (stored per preset); the sandbox and a loopback custom setup never ask; panic's own commands pass.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelAll, createOrders } from '../perps/commands';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { demoVault } from '../../test/kits/signer';
import { PANIC_PASS, SigningService } from '../signer/service';
import { confirmationKey, type ConfirmationSettings } from './confirmation';
import { Authority, PERSON_SCOPES } from '../authority/epoch';

/** The one authority epoch of this file's signing services, and a ticket of the person's taken from it now. */
const epoch = new Authority();
const held = () => epoch.capture(PERSON_SCOPES);

describe('confirmationKey', () => {
  it('asks for the venue presets and remote custom hosts only', () => {
    expect(confirmationKey({ preset: 'sandbox', perpsUrl: 'https://api.perpetuals.polymarket.com' })).toBeUndefined();
    expect(confirmationKey({})).toBeUndefined();
    expect(confirmationKey({ preset: 'polymarket' })).toBe('polymarket');
    expect(confirmationKey({ preset: 'preproduction' })).toBe('preproduction');
    expect(
      confirmationKey({
        preset: 'custom',
        perpsUrl: 'http://127.0.0.1:9/perps',
        perpsWsUrl: 'ws://localhost:9/v1/ws',
        rpcUrl: 'http://[::1]:9/rpc',
      }),
    ).toBeUndefined();
    expect(
      confirmationKey({
        preset: 'custom',
        perpsUrl: 'https://b.example/perps',
        clobUrl: 'https://a.example',
        dataUrl: 'http://127.0.0.1/data',
      }),
    ).toBe('custom:a.example,b.example');
  });
});

let h: Harness;
let db: VaultDb;
let vault: Vault;
let owner: string;
let extra: ConfirmationSettings = {};
const UNCONFIRMED = { name: 'Settings.VenueNotConfirmedError' };
const service = () =>
  new SigningService({
    authority: epoch,
    vault,
    db,
    settings: async () => ({ perpsUrl: h.perps, clobUrl: h.clobUrl, clobChainId: 80002, ...extra }),
    now: () => h.clock.now,
  });
const sent = () => h.ctx.requestLog.filter((r) => r.method !== 'GET' && r.path.startsWith('/perps/v1/')).length;
const order = () => createOrders({ orders: [{ iid: 2, buy: false, qty: '0.1', tif: 'gtc', p: '4000' }] });

beforeAll(async () => {
  h = await startHarness();
  ({ db, vault, owner } = await demoVault(h, 'settings-confirmation-test'));
});
afterAll(async () => {
  await h.close();
});

describe('signing under a venue preset', () => {
  it('refuses before signing until the preset is confirmed, then signs; panic cancels pass regardless', async () => {
    extra = { preset: 'polymarket', confirmedPresets: ['preproduction'] };
    const before = sent();
    const err = await service()
      .perpsSend(owner, order(), { authority: held(), origin: 'test' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject(UNCONFIRMED);
    expect(err).toMatchObject({ code: 4100, data: { preset: 'polymarket' } });
    await expect(service().perpsSign(owner, order(), { authority: held() })).rejects.toMatchObject(UNCONFIRMED);
    expect(sent()).toBe(before);
    expect(
      await service().perpsSend(owner, cancelAll({}), { authority: held(), origin: 'panic', pass: PANIC_PASS }),
    ).toBeDefined();
    extra = { preset: 'polymarket', confirmedPresets: ['polymarket'] };
    await service().perpsSend(owner, order(), { authority: held(), origin: 'test' });
    expect(sent()).toBe(before + 2);
  });
});
