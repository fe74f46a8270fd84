/**
 * The perps domain pin: a gateway whose exchange-info read reports another domain than the
 * pinned one gets nothing signed and nothing sent, with a typed error naming both.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrders } from '../perps/commands';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { demoVault } from '../../test/kits/signer';
import { SigningService } from '../signer/service';
import { Authority, PERSON_SCOPES } from '../authority/epoch';

/** The one authority epoch of this file's signing services, and a ticket of the person's taken from it now. */
const epoch = new Authority();
const held = () => epoch.capture(PERSON_SCOPES);

/** The typed error's name (the class stays private to `domain.ts`). */
const MISMATCH = 'Settings.PerpsDomainMismatchError';
let h: Harness;
let db: VaultDb;
let vault: Vault;
let owner: string;

const service = (pin: { name: string; version: string }, chainId = 80002) =>
  new SigningService({
    authority: epoch,
    vault,
    db,
    settings: async () => ({ perpsUrl: h.perps, clobUrl: h.clobUrl, clobChainId: chainId, perpsDomain: pin }),
    now: () => h.clock.now,
  });
const sent = () => h.ctx.requestLog.filter((r) => r.method !== 'GET' && r.path.startsWith('/perps/v1/')).length;
const order = () => createOrders({ orders: [{ iid: 2, buy: false, qty: '0.1', tif: 'gtc', p: '4000' }] });

beforeAll(async () => {
  // A gateway that signs on another name than the venue's.
  h = await startHarness({ config: { perpsDomain: { name: 'Countersign Sandbox', version: '1', chainId: 80002 } } });
  ({ db, vault, owner } = await demoVault(h, 'settings-domain-test'));
});
afterAll(async () => {
  await h.close();
});

describe('the pinned perps domain', () => {
  it('refuses to sign when the gateway reports another name, naming both; nothing is sent', async () => {
    const before = sent();
    const err = await service({ name: 'Polymarket', version: '1' })
      .perpsSend(owner, order(), { authority: held(), origin: 'test' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: MISMATCH,
      code: -32002,
      data: {
        pinnedName: 'Polymarket',
        gatewayName: 'Countersign Sandbox',
        pinnedChainId: 80002,
        gatewayChainId: 80002,
      },
    });
    expect(err).toMatchObject({ shortMessage: expect.stringMatching(/"Countersign Sandbox".*"Polymarket"/) });
    await expect(
      service({ name: 'Polymarket', version: '1' }).perpsSign(owner, order(), { authority: held() }),
    ).rejects.toMatchObject({ name: MISMATCH });
    expect(sent()).toBe(before);
  });

  it("refuses another chain id than the preset's and signs when name, version and chain match", async () => {
    await expect(
      service({ name: 'Countersign Sandbox', version: '1' }, 137).perpsSign(owner, order(), { authority: held() }),
    ).rejects.toMatchObject({ name: MISMATCH });
    await expect(
      service({ name: 'Countersign Sandbox', version: '2' }).perpsSign(owner, order(), { authority: held() }),
    ).rejects.toMatchObject({ name: MISMATCH });
    const before = sent();
    await service({ name: 'Countersign Sandbox', version: '1' }).perpsSend(owner, order(), {
      authority: held(),
      origin: 'test',
    });
    expect(sent()).toBe(before + 1);
  });
});
