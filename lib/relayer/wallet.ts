/**
 * Deposit-wallet addresses (PROTOCOL.md §4.2; `@polymarket/builder-relayer-client` 0.0.10
 * `builder/derive.js`): CREATE2 from the DepositWalletFactory with `salt = keccak256(args)`,
 * `args = abi.encode(factory, bytes32(owner))`, and Solady's ERC-1967 init-code hash — UUPS (the
 * implementation) or beacon (a beacon the factory names through `BEACON()`).
 */
import { concat, encodeAbiParameters, getCreate2Address, keccak256, pad, toHex, type Address, type Hex } from 'viem';
import { address as addressSchema, parseOrThrow } from '../validation';
import { venueContracts } from './contracts';

const ERC1967_PREFIX = 0x61003d3d8160233d3973n;
const ERC1967_CONST1: Hex = '0xcc3735a920a3ca505d382bbc545af43d6000803e6038573d6000fd5b3d6000f3';
const ERC1967_CONST2: Hex = '0x5155f3363d3d373d3d363d7f360894a13ba1a3210667c828492db98dca3e2076';
const BEACON_PREFIX = 0x6100523d8160233d3973n;
const BEACON_CONST1: Hex = '0xb3582b35133d50545afa5036515af43d6000803e604d573d6000fd5b3d6000f3';
const BEACON_CONST2: Hex = '0x1b60e01b36527fa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6c';
const BEACON_CONST3: Hex = '0x60195155f3363d3d373d3d363d602036600436635c60da';

/** Selector of the factory's `BEACON()` (PROTOCOL.md §4.3: the one `eth_call` the relayer client makes). */
export const FACTORY_BEACON_SELECTOR: Hex = '0x49493a4d';

function walletArgs(owner: Address, factory: Address): Hex {
  return encodeAbiParameters(
    [{ type: 'address' }, { type: 'bytes32' }],
    [factory, pad(owner, { dir: 'left', size: 32 })],
  );
}

function argsLength(args: Hex): bigint {
  return BigInt((args.length - 2) / 2);
}

/**
 * The UUPS deposit wallet of `owner` on `chainId` (what the factory deploys when it has no beacon).
 * Throws `InvalidFieldError` (`owner`, `chainId`).
 */
export function uupsDepositWallet(owner: Address, chainId: number): Address {
  const o = parseOrThrow(addressSchema, owner, 'owner');
  const c = venueContracts(chainId);
  const args = walletArgs(o, c.depositWalletFactory);
  const bytecodeHash = keccak256(
    concat([
      toHex(ERC1967_PREFIX + (argsLength(args) << 56n), { size: 10 }),
      c.depositWalletImplementation,
      '0x6009',
      ERC1967_CONST2,
      ERC1967_CONST1,
      args,
    ]),
  );
  return getCreate2Address({ from: c.depositWalletFactory, salt: keccak256(args), bytecodeHash });
}

/** The beacon-proxy deposit wallet of `owner` for `beacon` on `chainId`. Throws `InvalidFieldError`. */
export function beaconDepositWallet(owner: Address, chainId: number, beacon: Address): Address {
  const o = parseOrThrow(addressSchema, owner, 'owner');
  const b = parseOrThrow(addressSchema, beacon, 'beacon');
  const c = venueContracts(chainId);
  const args = walletArgs(o, c.depositWalletFactory);
  const bytecodeHash = keccak256(
    concat([
      toHex(BEACON_PREFIX + (argsLength(args) << 56n), { size: 10 }),
      b,
      BEACON_CONST3,
      BEACON_CONST2,
      BEACON_CONST1,
      args,
    ]),
  );
  return getCreate2Address({ from: c.depositWalletFactory, salt: keccak256(args), bytecodeHash });
}
