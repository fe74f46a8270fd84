/**
 * The package's copies of what it shares with the extension cannot drift: each wire type equals the
 * extension's own (checked by `tsc`), every error code the extension declares maps to a typed class of the
 * package, the grant type and the capability method are the extension's, and the package's sources import
 * nothing outside this folder but viem.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type * as v from 'valibot';
import type { PerpsBodyOp as ExtPerpsBodyOp } from '../perps/commands';
import type { PerpsCommandAnswer as ExtPerpsCommandAnswer } from '../perps/wire';
import type { PerpsEnvelope as ExtPerpsEnvelope } from '../perps/envelope';
import type { L2Headers as ExtL2Headers } from '../clob/auth';
import type { ClobOrderRequest as ExtClobOrderRequest } from '../clob/request';
import type { GrantLimitsInput as ExtGrantLimitsInput } from '../grants/schema';
import type { GrantLimits as ExtGrantLimits } from '../grants/evaluate';
import type { AccountsPermission as ExtAccountsPermission } from '../page/permissions';
import type { clobOrdersParamsSchema, clobSignParamsSchema, perpsParamsSchema } from '../page/params';
import { GRANT_PERMISSION_TYPE } from '../page/params';
import type { NO_PARAMS } from '../page/method';
import { PAGE_METHODS, type PageMethod } from '../page/methods';
import * as pkg from './types';
import { CAPABILITIES_METHOD, CountersignError, toCountersignError } from './index';

/** `true` when each of `A` and `B` is assignable to the other (a union compared as a whole). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

describe('the site client matches the extension', () => {
  it('each shared request and answer type equals the extension’s own', () => {
    expectTypeOf<pkg.PerpsBodyOp>().toEqualTypeOf<ExtPerpsBodyOp>();
    expectTypeOf<pkg.PerpsCommandAnswer>().toEqualTypeOf<ExtPerpsCommandAnswer>();
    expectTypeOf<pkg.L2Headers>().toEqualTypeOf<ExtL2Headers>();
    expectTypeOf<pkg.ClobOrderRequest>().toEqualTypeOf<ExtClobOrderRequest>();
    expectTypeOf<Same<pkg.GrantLimitsInput, ExtGrantLimitsInput>>().toEqualTypeOf<true>();
    expectTypeOf<Same<pkg.GrantLimits, ExtGrantLimits>>().toEqualTypeOf<true>();
    expectTypeOf<pkg.AccountsPermission>().toEqualTypeOf<ExtAccountsPermission>();
    expectTypeOf<pkg.ClobSignRequestParameters>().toEqualTypeOf<v.InferInput<typeof clobSignParamsSchema>>();
    expectTypeOf<pkg.ClobPostOrdersParameters>().branded.toEqualTypeOf<v.InferInput<typeof clobOrdersParamsSchema>>();
    expectTypeOf<Omit<pkg.PerpsSendCommandParameters, 'op'>>().toEqualTypeOf<
      Omit<v.InferInput<typeof perpsParamsSchema>, 'op'>
    >();
    expectTypeOf<pkg.PerpsSignedEnvelope>().toEqualTypeOf<ExtPerpsEnvelope>();
    expect(pkg.COUNTERSIGN_GRANT).toBe(GRANT_PERMISSION_TYPE);
    expect(PAGE_METHODS.map((r) => r.name)).toContain(CAPABILITIES_METHOD);
  });

  it("the package's method schema names every method of Countersign's own, each with the extension's params", () => {
    // Countersign's own methods: every record but the standard ones (viem's actions type those) and refused ones.
    type Own = Exclude<
      Extract<(typeof PAGE_METHODS)[number], { policy: { approval: 'none' | 'connect' | 'sign' } }>['name'],
      `eth_${string}` | `wallet_${string}`
    >;
    expectTypeOf<keyof pkg.CountersignMethods>().toEqualTypeOf<Own>();
    type Record<M extends PageMethod> = Extract<(typeof PAGE_METHODS)[number], { name: M }>;
    type ParamsMatch = {
      [M in Own]: pkg.CountersignMethods[M]['Parameters'] extends [infer P]
        ? [P] extends [v.InferInput<Record<M>['params']>]
          ? true
          : false
        : Record<M>['params'] extends typeof NO_PARAMS
          ? true // the method reads no params
          : false;
    };
    expectTypeOf<ParamsMatch>().toEqualTypeOf<{ [M in Own]: true }>();
    // Where the handler's answer is typed (not `unknown`), the package's answer type is the handler's.
    type Answer<M extends PageMethod> = Awaited<ReturnType<Record<M>['run']>>;
    expectTypeOf<Answer<'countersign_getCapabilities'>>().toEqualTypeOf<pkg.CountersignCapabilities>();
  });

  it('every error code a class of the extension declares becomes a typed class, not the catch-all', () => {
    const codes = new Set<number>();
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory() && e.name !== 'dapp' && e.name !== 'node_modules') walk(p);
        else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
          for (const m of readFileSync(p, 'utf8').matchAll(/static (?:override )?readonly code = (-?\d+)/g))
            codes.add(Number(m[1]));
      }
    };
    walk(resolve(import.meta.dirname, '..'));
    expect(codes.size).toBeGreaterThan(5);
    const untyped = [...codes].filter(
      (code) => toCountersignError({ code, message: 'x' }).constructor === CountersignError,
    );
    expect(untyped).toEqual([]);
  });

  it("the package's sources import nothing but viem and their own folder", () => {
    const sources = readdirSync(import.meta.dirname).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    const outside = sources.flatMap((f) =>
      [...readFileSync(join(import.meta.dirname, f), 'utf8').matchAll(/from '([^']+)'/g)]
        .map((m) => m[1]!)
        .filter((s) => !/^\.\/[\w-]+\.js$/.test(s) && s !== 'viem')
        .map((s) => `${f}: ${s}`),
    );
    expect(outside).toEqual([]);
  });
});
