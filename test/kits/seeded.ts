/**
 * Seeded random inputs for the differential suites (`test/conformance/*-differential.test.ts`): a small
 * PRNG (mulberry32), one generator per case derived from the run's seed, the kind and the case number,
 * and a runner that reports the first failing case with its seed and its generated input.
 *
 * A run is `FUZZ_CASES` cases per kind (default: the suite's own count) from `FUZZ_SEED` (default: a fixed
 * seed, so `npm test` is repeatable; `npm run fuzz` draws a fresh one and prints it). A failing case reads
 * `seed 123 case 45` and is reproduced by `FUZZ_SEED=123 FUZZ_CASES=46`.
 */
import { bytesToHex, getAddress, type Address, type Hex } from 'viem';

/** The default seed of `npm test` (any change of it is a new, equally valid run). */
export const DEFAULT_SEED = 20_261_207;

/** A seeded source of the values the generators need. Every method advances the same stream. */
export type Rng = {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [lo, hi] (both inclusive, safe integers). */
  int(lo: number, hi: number): number;
  /** True with probability `p`. */
  bool(p?: number): boolean;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** `n` random bytes. */
  bytes(n: number): Uint8Array;
  /** `n` random lowercase hex characters (no `0x`). */
  hex(n: number): string;
  /** A random checksummed address. */
  address(): Address;
  /** A random secp256k1 private key (never 0, always below the group order). */
  privateKey(): Hex;
};

/** mulberry32: a 32-bit state PRNG, good enough to spread test inputs (not for keys that guard money). */
export function seeded(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (lo: number, hi: number): number => {
    const span = hi - lo + 1;
    if (span <= 2 ** 32) return lo + Math.floor(next() * span);
    // Two draws give 53 exact bits, enough for any safe-integer span.
    return lo + ((Math.floor(next() * 2 ** 21) * 2 ** 32 + Math.floor(next() * 2 ** 32)) % span);
  };
  const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => Math.floor(next() * 256));
  const rng: Rng = {
    next,
    int,
    bool: (p = 0.5) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)]!,
    bytes,
    hex: (n) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(next() * 16)]).join(''),
    address: () => getAddress(bytesToHex(bytes(20))),
    privateKey: () => {
      const b = bytes(32);
      b[0] = Math.min(b[0]!, 0xfe); // below the group order n = 0xffff…
      b[31] = b[31]! | 1; // never zero
      return bytesToHex(b);
    },
  };
  return rng;
}

/** The seed and the number of cases per kind of one run. `fuzzing`: `FUZZ_CASES` was given (`npm run fuzz`). */
export type FuzzRun = { seed: number; cases: number; fuzzing: boolean };

/**
 * Reads `FUZZ_SEED` and `FUZZ_CASES` (see the module docstring): `defaultCases` and `DEFAULT_SEED` when
 * both are unset; a fresh random seed when only `FUZZ_CASES` is set. A fuzzing run prints its seed and
 * case count, prefixed with `name`.
 */
export function fuzzRun(name: string, defaultCases: number): FuzzRun {
  const env = process.env;
  const fuzzing = env.FUZZ_CASES !== undefined;
  const cases = fuzzing ? Number(env.FUZZ_CASES) : defaultCases;
  if (!Number.isSafeInteger(cases) || cases < 1)
    throw new Error(`FUZZ_CASES must be a positive integer, not ${env.FUZZ_CASES}`);
  let seed = DEFAULT_SEED;
  if (env.FUZZ_SEED !== undefined) seed = Number(env.FUZZ_SEED);
  else if (fuzzing) seed = crypto.getRandomValues(new Uint32Array(1))[0]!;
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new Error(`FUZZ_SEED must be a non-negative integer, not ${env.FUZZ_SEED}`);
  if (fuzzing) console.log(`${name}: FUZZ_SEED=${seed} FUZZ_CASES=${cases}`);
  return { seed, cases, fuzzing };
}

/**
 * The seed of case `i` of `kind` in a run: the run's seed, the kind's name and `i` mixed (FNV-1a + murmur finaliser).
 */
export function caseSeed(runSeed: number, kind: string, i: number): number {
  let h = 0x811c9dc5 ^ runSeed;
  for (const c of `${kind}#${i}`) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/** Serialises a generated input for a failure message (bigints as `123n`). */
export function describeInput(input: unknown): string {
  return JSON.stringify(input, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}

/**
 * Runs `run.cases` cases of `kind`: each case draws its input with `generate` from its own generator and
 * checks it with `check`. The first failing case throws an error that names the kind, the run's seed,
 * the case number and its input (the minimal report: later cases are not run). Resolves the number of
 * cases run.
 */
export async function forEachCase<I>(
  run: FuzzRun,
  kind: string,
  generate: (rng: Rng) => I,
  check: (input: I) => Promise<void> | void,
): Promise<number> {
  for (let i = 0; i < run.cases; i++) {
    const input = generate(seeded(caseSeed(run.seed, kind, i)));
    try {
      await check(input);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      const failure = new Error(
        `${kind}: seed ${run.seed} case ${i} (FUZZ_SEED=${run.seed} ` +
          `FUZZ_CASES=${i + 1})\ninput: ${describeInput(input)}\n${reason}`,
      );
      if (err instanceof Error) failure.stack = `${failure.message}\n${err.stack ?? ''}`;
      throw failure;
    }
  }
  return run.cases;
}

/** A per-test timeout that grows with the number of cases (`msPerCase` each, plus 20 s). */
export function timeoutFor(run: FuzzRun, msPerCase: number): number {
  return 20_000 + run.cases * msPerCase;
}

/**
 * Replaces `target[key]` with `value` and returns the function that puts the original back. A plain
 * assignment rather than `vi.spyOn`: the spies vitest registers keep every call they saw, which a run of
 * 20 000 cases per kind cannot afford.
 */
export function pin<T extends object, K extends keyof T>(target: T, key: K, value: T[K]): () => void {
  const own = Object.prototype.hasOwnProperty.call(target, key);
  const original = target[key];
  target[key] = value;
  return () => {
    if (own) target[key] = original;
    else delete target[key];
  };
}
