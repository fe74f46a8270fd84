/**
 * Vault writes on a full disk, in real Chromium: the profile lives on a small tmpfs (mounted as root;
 * skipped with a printed note otherwise), which is then filled. Key imports, password changes and proxy
 * keys are asked for, again after earlier ones failed; each answers done or says in words that nothing
 * was saved. Then the disk is freed and the browser killed and relaunched on the same profile: the vault
 * is there (or restored from its copy by the unlock), exactly one password opens it — the last one
 * reported changed — and every key the person was told was saved is there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startSandbox, type RunningSandbox } from '../../lib/sandbox/server';
import { launchOn, type Reply, type Running } from './harness';

/** Whether this process may mount a tmpfs (root, and `mount` works here). */
function canMount(dir: string): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=160m', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const mountDir = mkdtempSync(join(tmpdir(), 'countersign-full-disk-'));
const mounted = canMount(mountDir);
if (!mounted) console.log('full-disk runs skipped: mounting a tmpfs needs root (and a machine that allows it)');

let sandbox: RunningSandbox;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Fills the tmpfs until the disk is full (a filler file grown in 1 MiB steps). */
function fill(): void {
  const chunk = Buffer.alloc(1 << 20);
  for (let i = 0; i < 10_000; i++) {
    try {
      writeFileSync(join(mountDir, `filler-${i}`), chunk);
    } catch {
      return; // ENOSPC: full
    }
  }
}

/** Frees the tmpfs (removes the filler files). */
function free(): void {
  execFileSync('sh', ['-c', `rm -f ${mountDir}/filler-*`]);
}

beforeAll(async () => {
  if (mounted) sandbox = await startSandbox(0, { now: undefined });
});
afterAll(async () => {
  await sandbox?.close();
  if (mounted) execFileSync('umount', ['-l', mountDir], { stdio: 'ignore' });
  rmSync(mountDir, { recursive: true, force: true });
});

describe.runIf(mounted)('vault writes on a full disk (Chromium)', () => {
  it(
    'each write says done or that nothing was saved; after the disk is freed and the browser ' +
      'killed, exactly one password opens the vault with every key the person was told was saved',
    { timeout: 240_000 },
    async () => {
      const profile = join(mountDir, 'profile');
      mkdirSync(profile);
      let r: Running = await launchOn(profile);
      const b = sandbox.url;
      expect(
        (
          await r.call('settings.set', {
            perpsUrl: `${b}/perps`,
            clobUrl: `${b}/clob`,
            gammaUrl: `${b}/gamma`,
            dataUrl: `${b}/data`,
          })
        ).ok,
      ).toBe(true);
      let password = 'first password on a small disk';
      expect((await r.call('vault.create', { password })).ok).toBe(true);
      const owner = sandbox.demo.owner.address;
      expect((await r.call('vault.importOwnerKey', { privateKey: sandbox.demo.owner.privateKey })).ok).toBe(true);
      const saved = new Set([owner.toLowerCase()]);
      fill();
      const answers: string[] = [];
      const words = (x: Reply) => (x.ok ? 'done' : `${x.error?.name}: ${x.error?.shortMessage}`);
      // Writes on the full disk, each after the ones before failed.
      for (let i = 0; i < 3; i++) {
        const key = generatePrivateKey();
        const imported = await r.call('vault.importOwnerKey', { privateKey: key });
        answers.push(`import: ${words(imported)}`);
        if (imported.ok) saved.add(privateKeyToAccount(key).address.toLowerCase());
        const next = `password number ${i} on a full disk`;
        const changed = await r.call('vault.changePassword', { oldPassword: password, newPassword: next });
        answers.push(`password: ${words(changed)}`);
        // A change reported done holds; a copy that failed (Vault.VaultCopyError) is a change that holds too.
        if (changed.ok || changed.error?.name === 'Vault.VaultCopyError') password = next;
      }
      console.log(answers.join('\n'));
      // Every failure says in words what happened; none is an unexplained error.
      for (const a of answers.filter((x) => !x.endsWith('done')))
        expect(a).toMatch(
          new RegExp(
            String.raw`Vault\.VaultWriteError: Nothing was saved|Vault\.VaultStorageClosedError: Nothing was saved|` +
              String.raw`Vault\.VaultCopyError: Saved in the vault`,
          ),
        );
      free();
      await r.kill();
      r = await launchOn(profile);
      const status = (await r.call('vault.status')).result as { initialized: boolean; recoverable: boolean };
      console.log(
        `after the restart: ` +
          `${status.recoverable ? 'the browser lost the vault; its copy restores it' : 'the vault is there'}`,
      );
      expect(status.initialized).toBe(true);
      const opened = await r.call('vault.unlock', { password });
      expect(opened.ok, JSON.stringify(opened.error)).toBe(true);
      const accounts = ((await r.call('vault.accounts')).result ?? []) as { address: string }[];
      for (const a of saved) expect(accounts.map((x) => x.address.toLowerCase())).toContain(a);
      for (const a of accounts)
        expect((await r.call('vault.revealOwnerKey', { address: a.address, password })).ok).toBe(true);
      // Only that password: the first one (when a later change held) opens nothing.
      await r.call('vault.lock');
      if (password !== 'first password on a small disk') {
        await sleep(50);
        expect((await r.call('vault.unlock', { password: 'first password on a small disk' })).error?.name).toBe(
          'Vault.WrongPasswordError',
        );
      }
      await r.close();
    },
  );
});
