/**
 * Kills inside each vault write (test-only), with the crash harness (`harness.ts`): for each seed, a
 * profile is onboarded (password, the sandbox's demo owner and proxy keys), then each operation that
 * changes the vault — a password change, a key import, a proxy key issued at the gateway, order-book
 * credentials created at the exchange, a backup restore — is started and the browser's process group
 * is SIGKILLed at a seeded instant inside it. The browser is relaunched on the same profile and the
 * invariants are checked:
 *
 * - the vault is there (or restorable from its copy): the popup would never offer onboarding;
 * - exactly one password opens it — the new one if the change was reported done, the old one if it never
 *   started; either (but only one) when the kill came in between;
 * - every key the person was told was saved is there, and every key record opens (the owner key is
 *   revealed with the password, the proxy key lists, the order-book credentials sign a read).
 *
 * Used by `crash.test.ts` (a short run in `npm test`) and `soak.ts` (`npm run soak`, hundreds of kills).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startSandbox, type RunningSandbox } from '../../lib/sandbox/server';
import { launchOn, pointAt, seeded, unlock, type Reply, type Running } from './harness';

/** The vault operations a kill lands in. */
export const OPS = [
  'changePassword',
  'importOwnerKey',
  'issueProxy',
  'createClobCredentials',
  'restoreBackup',
] as const;
export type Op = (typeof OPS)[number];

/**
 * One kill: where it landed (ms after the operation started), whether the operation had answered, and the broken
 * invariants.
 */
export type KillResult = { seed: number; op: Op; killAtMs: number; answered: boolean; problems: string[] };

/** What the person was told was saved, so far. */
type Known = { password: string; demo: string; owners: string[]; proxies: number; clob: boolean };

/** How long after an operation starts a kill may land (ms): a little past its usual duration on this machine. */
const WINDOW_MS: Record<Op, number> = {
  changePassword: 1_500,
  importOwnerKey: 40,
  issueProxy: 80,
  createClobCredentials: 80,
  restoreBackup: 700,
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts operation `op` (not awaited by the caller): the reply, or a rejection when the browser dies under it. */
function start(
  r: Running,
  op: Op,
  known: Known,
  sandbox: RunningSandbox,
  next: { password: string; owner: `0x${string}` },
): Promise<Reply> {
  const owner = sandbox.demo.owner.address;
  switch (op) {
    case 'changePassword':
      return r.call('vault.changePassword', { oldPassword: known.password, newPassword: next.password });
    case 'importOwnerKey':
      return r.call('vault.importOwnerKey', { privateKey: next.owner });
    case 'issueProxy':
      return r.call('proxy.issue', { account: owner, expiry: Date.now() + 7 * 86_400_000 });
    case 'createClobCredentials':
      return r.call('clob.createOrDerive', { account: owner });
    case 'restoreBackup':
      return r.call('vault.exportBackup').then((b) =>
        b.ok
          ? r.call('vault.restoreBackup', {
              backup: (b.result as { backup: string }).backup,
              password: known.password,
            })
          : b,
      );
  }
}

/** Checks the invariants on a relaunched browser; returns the problems and what is now known to be saved. */
async function check(
  r: Running,
  op: Op,
  known: Known,
  next: { password: string; owner: `0x${string}` },
  answered: Reply | undefined,
): Promise<{ problems: string[]; known: Known }> {
  const problems: string[] = [];
  const status = (await r.call('vault.status')).result as { initialized: boolean; recoverable: boolean } | undefined;
  if (!status?.initialized) return { problems: ['the vault is gone: onboarding would be offered'], known };
  const told = answered?.ok === true;
  // Exactly one password opens the vault.
  let password = known.password;
  if (op === 'changePassword') {
    const first = told ? next.password : known.password;
    const second = told ? known.password : next.password;
    const a = await unlock(r, first);
    if (a.ok) {
      password = first;
      await r.call('vault.lock');
      const b = await unlock(r, second);
      if (b.ok) problems.push('both the old and the new password open the vault');
      else if (b.error?.name !== 'Vault.WrongPasswordError') problems.push(`the other password: ${b.error?.name}`);
    } else {
      if (told)
        problems.push(`the change was reported done but the new password does not open the vault (${a.error?.name})`);
      password = second;
    }
    if ((await unlock(r, password)).ok === false)
      return { problems: [...problems, 'no password opens the vault'], known };
  } else {
    const a = await unlock(r, password);
    if (!a.ok)
      return { problems: [`the password does not open the vault (${a.error?.name}: ${a.error?.shortMessage})`], known };
  }
  const accounts = ((await r.call('vault.accounts')).result ?? []) as {
    address: string;
    proxies: unknown[];
    hasClobCredentials: boolean;
  }[];
  const addresses = accounts.map((a) => a.address.toLowerCase());
  for (const o of known.owners)
    if (!addresses.includes(o.toLowerCase())) problems.push(`owner key ${o} the person was told was saved is missing`);
  const added = privateKeyToAccount(next.owner).address;
  if (op === 'importOwnerKey' && told && !addresses.includes(added.toLowerCase()))
    problems.push('the imported key was reported saved but is missing');
  const demo = accounts.find((a) => a.address.toLowerCase() === known.demo.toLowerCase());
  const proxies = demo?.proxies.length ?? 0;
  if (proxies < known.proxies) problems.push(`proxy keys: ${proxies}, the person was told ${known.proxies}`);
  if (op === 'issueProxy' && told && proxies < known.proxies + 1)
    problems.push('the issued proxy key was reported saved but is missing');
  const clob = demo?.hasClobCredentials ?? false;
  if ((known.clob || (op === 'createClobCredentials' && told)) && !clob)
    problems.push('order-book credentials the person was told were saved are missing');
  // Every record opens: each owner key with the password, the order-book credentials by signing a read.
  for (const a of accounts) {
    const revealed = await r.call('vault.revealOwnerKey', { address: a.address, password });
    if (!revealed.ok) problems.push(`owner key ${a.address} does not open (${revealed.error?.name})`);
  }
  if (clob && demo) {
    const read = await r.call('clob.openOrders', { account: demo.address });
    if (!read.ok) problems.push(`the order-book credentials do not sign a read (${read.error?.name})`);
  }
  await r.call('vault.lock');
  return { problems, known: { password, demo: known.demo, owners: accounts.map((a) => a.address), proxies, clob } };
}

/**
 * Runs every operation of `ops` once per seed of `seeds`, each killed at a seeded instant; `log`
 * receives a line per kill. Each seed uses a fresh profile and a fresh in-process sandbox (the venue
 * caps an account's proxy keys), both removed afterwards.
 */
export async function runVaultKills(o: {
  seeds: readonly number[];
  ops?: readonly Op[];
  log?: (line: string) => void;
}): Promise<KillResult[]> {
  const results: KillResult[] = [];
  for (const seed of o.seeds) {
    const rng = seeded(seed);
    const profile = mkdtempSync(join(tmpdir(), 'countersign-crash-'));
    const sandbox = await startSandbox(0, { now: undefined });
    let r: Running | undefined;
    try {
      r = await launchOn(profile);
      await pointAt(r, sandbox);
      let known: Known = {
        password: `first password ${seed}`,
        demo: sandbox.demo.owner.address,
        owners: [sandbox.demo.owner.address],
        proxies: 1,
        clob: false,
      };
      const setup = [
        await r.call('vault.create', { password: known.password }),
        await r.call('vault.importOwnerKey', { privateKey: sandbox.demo.owner.privateKey }),
        await r.call('proxy.import', {
          account: sandbox.demo.owner.address,
          privateKey: sandbox.demo.proxy.privateKey,
          proxy: sandbox.demo.proxy.address,
          secret: sandbox.demo.proxy.secret,
          expiry: sandbox.demo.proxy.expiry,
        }),
        await r.call('vault.lock'),
      ];
      const failed = setup.find((x) => !x.ok);
      if (failed) throw new Error(`onboarding: ${JSON.stringify(failed.error)}`);
      await r.close();
      r = undefined;
      for (const op of o.ops ?? OPS) {
        r = await launchOn(profile);
        const unlocked = await unlock(r, known.password);
        if (!unlocked.ok) throw new Error(`seed ${seed} before ${op}: ${JSON.stringify(unlocked.error)}`);
        const next = { password: `password ${seed} ${op} ${rng.int(0, 1e9)}`, owner: generatePrivateKey() };
        const killAtMs = rng.int(0, WINDOW_MS[op]);
        let answered: Reply | undefined;
        const running = start(r, op, known, sandbox, next).then(
          (x) => (answered = x),
          () => undefined,
        );
        await sleep(killAtMs);
        await r.kill();
        await running;
        r = await launchOn(profile);
        const c = await check(r, op, known, next, answered);
        known = c.known;
        await r.close();
        r = undefined;
        const result: KillResult = { seed, op, killAtMs, answered: answered !== undefined, problems: c.problems };
        results.push(result);
        o.log?.(
          `seed ${seed} ${op} killed at ${killAtMs} ms ` +
            `(${answered ? `answered ${answered.ok ? 'ok' : answered.error?.name}` : 'no answer'}): ` +
            `${c.problems.length ? c.problems.join('; ') : 'holds'}`,
        );
      }
    } finally {
      await r?.close(); // a seed that failed leaves no browser running
      await sandbox.close();
      rmSync(profile, { recursive: true, force: true });
    }
  }
  return results;
}
