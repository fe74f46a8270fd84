import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { cancelOrders, createOrders, createProxy, internalTransfer, withdraw } from './commands';
import { assertExp, DEFAULT_COMMAND_TIMEOUT_MS, randomSalt, signPerpsCommand } from './envelope';
import { parsePerpsEnvelope, recoverPerpsSigner } from './verify';

const domain = { name: 'Polymarket', version: '1', chainId: 137 };
const withdrawDomain = { ...domain, verifyingContract: '0x1111111111111111111111111111111111111111' as const };
const owner = privateKeyToAccount(generatePrivateKey());
const proxy = privateKeyToAccount(generatePrivateKey());
const NOW = 1_751_500_000_123;

describe('signPerpsCommand', () => {
  it('builds { op, sig, salt, ts } with ts in ms and recovers to the proxy', async () => {
    const cmd = createOrders({ orders: [{ iid: 1, buy: true, qty: '1', p: '10', tif: 'gtc' }] });
    const env = await signPerpsCommand(proxy, { command: cmd, domain, nowMs: NOW });
    expect(Object.keys(env).sort()).toEqual(['op', 'salt', 'sig', 'ts']);
    expect(env.ts).toBe(NOW);
    expect(env.op).toEqual(cmd.body);
    const parsed = parsePerpsEnvelope(JSON.parse(JSON.stringify(env)));
    expect(await recoverPerpsSigner(parsed, { domain, withdrawDomain })).toBe(proxy.address);
  });

  it('puts ts in whole seconds for withdraw and signs on the withdraw domain', async () => {
    const cmd = withdraw({
      account: owner.address,
      token: withdrawDomain.verifyingContract,
      amount: '10000000',
      to: proxy.address,
    });
    const env = await signPerpsCommand(owner, { command: cmd, domain, withdrawDomain, nowMs: NOW });
    expect(env.ts).toBe(1_751_500_000);
    const parsed = parsePerpsEnvelope(JSON.parse(JSON.stringify(env)));
    expect(await recoverPerpsSigner(parsed, { domain, withdrawDomain })).toBe(owner.address);
  });

  it('refuses to sign a withdraw without the withdraw domain', async () => {
    const cmd = withdraw({ account: owner.address, token: proxy.address, amount: '1', to: proxy.address });
    await expect(signPerpsCommand(owner, { command: cmd, domain, nowMs: NOW })).rejects.toThrow(/withdrawDomain/);
  });

  it('carries label (unsigned) and exp', async () => {
    const cmd = internalTransfer({
      account: owner.address,
      token: proxy.address,
      amount: '1.5',
      to: proxy.address,
      label: 'desk',
    });
    const env = await signPerpsCommand(owner, { command: cmd, domain, nowMs: NOW, exp: NOW + 10_000 });
    expect(env.label).toBe('desk');
    expect(env.exp).toBe(NOW + 10_000);
    // Changing the label does not change who signed (it is not covered by the signature)...
    const relabelled = parsePerpsEnvelope({ ...env, label: 'other' });
    expect(await recoverPerpsSigner(relabelled, { domain, withdrawDomain })).toBe(owner.address);
    // ...but changing a signed field does.
    const tampered = parsePerpsEnvelope({
      ...env,
      op: { ...env.op, args: { ...(env.op.args as object), amount: '15' } },
    });
    expect(await recoverPerpsSigner(tampered, { domain, withdrawDomain })).not.toBe(owner.address);
  });

  it('signs a createProxy with the owner', async () => {
    const cmd = createProxy({ owner: owner.address, proxy: proxy.address, expiry: NOW + 86_400_000 });
    const env = await signPerpsCommand(owner, { command: cmd, domain, nowMs: NOW });
    expect(await recoverPerpsSigner(parsePerpsEnvelope(env), { domain, withdrawDomain })).toBe(owner.address);
  });

  it('rejects an exp in the past, now, or beyond the command timeout, and signs nothing', async () => {
    const cmd = cancelOrders({ oids: [1] });
    for (const exp of [NOW - 1, NOW, NOW + DEFAULT_COMMAND_TIMEOUT_MS + 1, 1.5]) {
      await expect(signPerpsCommand(proxy, { command: cmd, domain, nowMs: NOW, exp })).rejects.toThrow(/exp/);
    }
    expect(() => assertExp(NOW + DEFAULT_COMMAND_TIMEOUT_MS, NOW)).not.toThrow();
  });

  it('uses a fresh salt per command', async () => {
    const cmd = cancelOrders({ oids: [1] });
    const salts = new Set<number>();
    for (let i = 0; i < 20; i++) salts.add((await signPerpsCommand(proxy, { command: cmd, domain, nowMs: NOW })).salt);
    expect(salts.size).toBeGreaterThan(18);
    const s = randomSalt();
    expect(Number.isInteger(s) && s >= 0 && s <= 0xffffffff).toBe(true);
  });
});

describe('parsePerpsEnvelope', () => {
  it('rejects a short signature, a float ts, a 33-bit Op salt and unknown fields', () => {
    const base = { op: { type: 'cancelOrders', args: [1] }, sig: '0x' + '1'.repeat(130), salt: 1, ts: 1 };
    expect(() => parsePerpsEnvelope({ ...base, sig: '0x12' })).toThrow(/sig/);
    expect(() => parsePerpsEnvelope({ ...base, ts: 1.5 })).toThrow(/ts/);
    expect(() => parsePerpsEnvelope({ ...base, salt: 2 ** 32 })).toThrow(/salt/);
    expect(() => parsePerpsEnvelope({ ...base, extra: true })).toThrow(/extra/);
  });
});
