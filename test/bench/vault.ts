/**
 * Vault and submit benchmarks: unlock time at the default KDF cost (scrypt N = 2^17, r = 8,
 * p = 1; median of 5), and sign-and-submit latency of a perps command to the sandbox on loopback
 * (median of 50). Prints figures; never fails on timing.
 */
import 'fake-indexeddb/auto';
import { cancelOrders } from '../../lib/perps/commands';
import { startSandbox } from '../../lib/sandbox/server';
import { SigningService } from '../../lib/signer/service';
import { openVaultDb } from '../../lib/vault/db';
import { memorySessionStore, Vault } from '../../lib/vault/vault';
import { DEFAULT_KDF } from '../../lib/vault/crypto';
import { Authority, PERSON_SCOPES } from '../../lib/authority/epoch';

/** The one authority epoch of this bench's services, and a ticket of the person's taken from it now. */
const epoch = new Authority();
const held = () => epoch.capture(PERSON_SCOPES);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchVault(): Promise<void> {
  const db = await openVaultDb('bench-vault');
  const vault = new Vault({ db, session: memorySessionStore() });
  await vault.create('benchmark password');
  const unlock: number[] = [];
  for (let i = 0; i < 5; i++) {
    await vault.lock();
    const t0 = performance.now();
    await vault.unlock('benchmark password');
    unlock.push(performance.now() - t0);
  }
  console.log(
    `\nVault: unlock at scrypt N=2^${Math.log2(DEFAULT_KDF.N)}, r=${DEFAULT_KDF.r}, ` +
      `p=${DEFAULT_KDF.p}: median ${median(unlock).toFixed(0)} ms over 5`,
  );

  const sb = await startSandbox(0);
  try {
    const owner = await vault.importOwnerKey(sb.demo.owner.privateKey);
    await vault.putProxy({
      account: owner.address,
      privateKey: sb.demo.proxy.privateKey,
      secret: sb.demo.proxy.secret,
      proxy: sb.demo.proxy.address,
      expiry: sb.demo.proxy.expiry,
    });
    const service = new SigningService({
      authority: epoch,
      vault,
      db,
      settings: async () => ({ perpsUrl: `${sb.url}/perps`, clobUrl: `${sb.url}/clob`, clobChainId: 80002 }),
    });
    const cmd = cancelOrders({ oids: [1] });
    await service.perpsSend(owner.address, cmd, { authority: held(), origin: 'bench' }); // warm-up (domains cached)
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t0 = performance.now();
      await service.perpsSend(owner.address, cmd, { authority: held(), origin: 'bench' });
      times.push(performance.now() - t0);
    }
    console.log(
      `Sign-and-submit (cancelOrders, proxy key, sandbox on loopback): median ${median(times).toFixed(2)} ms over 50`,
    );
  } finally {
    await sb.close();
  }
}
