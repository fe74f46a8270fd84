import { describe, expect, it } from 'vitest';
import {
  DisconnectedError,
  fromRpcError,
  InvalidParamsRpcError,
  InvalidRequestRpcError,
  ProviderRpcError,
  readRpcError,
  ResourceUnavailableRpcError,
  toRpcError,
  UnauthorizedError,
  UnsupportedMethodError,
  UserRejectedRequestError,
} from './rpc';
import { BaseError } from './base';
import { InvalidFieldError } from '../validation';
import { KeyNotFoundError, TamperedRecordError, VaultLockedError, WrongPasswordError } from '../vault/errors';

import { HaltedError } from '../signer/service';
import { ArtifactMismatchError } from '../signer/artifact';
import { ApprovalChangedError, ApprovalMismatchError, ApprovalNotFoundError } from '../approvals/registry';
import { GrantLimitsError } from '../grants/errors';
import { GrantRevokedError } from '../grants/service';
import { UnauthorizedSenderError, UnknownProcedureError } from '../messaging/router';
import { NotActiveAccountError } from '../accounts';
import {
  ClobError,
  ClobOrderRejectedError,
  ClobRateLimitedError,
  ClobRestartingError,
  ClobServerError,
} from '../clob/errors';
import { PerpsGatewayError, PerpsRateLimitedError } from '../perps/errors';
import { OutcomeUnknownError, WeightBudgetError } from '../signer/service';
import { NetworkError } from '../http/json';
import { RequestTimeoutError } from '../http/timeout';
import { InvalidCommandAnswerError, InvalidPerpsAnswerError } from '../perps/wire';
import { ConflictError } from '../audit';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every module under `lib/` a page's request can run through (all but the sandbox, tests and type
 * declarations), loaded eagerly so the test sees every error class they export (discovered,
 * not listed by hand). The source text is read too, so a class that is *not* exported is found as well.
 */
const MODULES = import.meta.glob(
  ['../**/*.ts', '!../**/*.test.ts', '!../sandbox/**', '!../**/*.d.ts', '!../**/testkit.ts'],
  { eager: true },
);
const SOURCES = import.meta.glob(
  ['../**/*.ts', '!../**/*.test.ts', '!../sandbox/**', '!../**/*.d.ts', '!../**/testkit.ts'],
  { eager: true, query: '?raw', import: 'default' },
) as Record<string, string>;

type ErrorClass = { code?: number } & (new (...args: never[]) => BaseError);

/** The `BaseError` subclasses the modules export, by class name (one class per name). */
function exportedErrorClasses(): Map<string, ErrorClass> {
  const out = new Map<string, ErrorClass>();
  for (const mod of Object.values(MODULES)) {
    for (const x of Object.values(mod as Record<string, unknown>)) {
      if (typeof x === 'function' && (x === BaseError || x.prototype instanceof BaseError))
        out.set(x.name, x as unknown as ErrorClass);
    }
  }
  return out;
}
const CLASSES = exportedErrorClasses();
/** A discovered class by name (classes no page-facing module imports are reached this way, not by a static import). */
function cls<A extends unknown[]>(name: string): { code?: number } & (new (...args: A) => BaseError) {
  const c = CLASSES.get(name);
  if (!c) throw new Error(`${name} not found`);
  return c as unknown as { code?: number } & (new (...args: A) => BaseError);
}
const VenueNotConfirmedError = cls<[string]>('VenueNotConfirmedError');
const PerpsDomainMismatchError =
  cls<[{ name: string; version: string; chainId: number }, { name: string; version: string; chainId: number }]>(
    'PerpsDomainMismatchError',
  );
const GrantDurationError = cls<[]>('GrantDurationError');
/** The catch-all code a page receives for an error whose class declares none (lib/page/README.md "Error codes"). */
const CATCH_ALL = -32000;

describe('each error class that can reach a page carries its EIP-1193 / EIP-1474 code', () => {
  // [class, one instance, the code a page receives]
  const table: [string, { code?: number }, unknown, number][] = [
    ['UserRejectedRequestError', UserRejectedRequestError, new UserRejectedRequestError(), 4001],
    ['UnauthorizedError', UnauthorizedError, new UnauthorizedError(), 4100],
    ['UnsupportedMethodError', UnsupportedMethodError, new UnsupportedMethodError(), 4200],
    ['DisconnectedError', DisconnectedError, new DisconnectedError(), 4900],
    ['InvalidRequestRpcError', InvalidRequestRpcError, new InvalidRequestRpcError('bad'), -32600],
    ['InvalidParamsRpcError', InvalidParamsRpcError, new InvalidParamsRpcError('bad'), -32602],
    ['ResourceUnavailableRpcError', ResourceUnavailableRpcError, new ResourceUnavailableRpcError('busy'), -32002],
    [
      'InvalidFieldError',
      InvalidFieldError,
      new InvalidFieldError({ field: 'op.args[0].qty', reason: 'must be a decimal' }),
      -32602,
    ],
    ['VaultLockedError', VaultLockedError, new VaultLockedError(), 4900],
    ['KeyNotFoundError', KeyNotFoundError, new KeyNotFoundError('proxy key'), 4100],
    ['TamperedRecordError', TamperedRecordError, new TamperedRecordError(), -32003],
    ['GrantRevokedError', GrantRevokedError, new GrantRevokedError(), -32003],
    ['HaltedError', HaltedError, new HaltedError('panic'), 4900],
    ['ArtifactMismatchError', ArtifactMismatchError, new ArtifactMismatchError('digest'), 4001],
    ['ApprovalNotFoundError', ApprovalNotFoundError, new ApprovalNotFoundError(), 4100],
    ['ApprovalMismatchError', ApprovalMismatchError, new ApprovalMismatchError(), 4001],
    ['ApprovalChangedError', ApprovalChangedError, new ApprovalChangedError(), 4001],
    [
      'GrantLimitsError',
      GrantLimitsError,
      new GrantLimitsError({ field: 'limits.venue', reason: 'is required' }),
      -32602,
    ],
    ['UnauthorizedSenderError', UnauthorizedSenderError, new UnauthorizedSenderError(), 4100],
    ['UnknownProcedureError', UnknownProcedureError, new UnknownProcedureError(), 4200],
    ['NotActiveAccountError', NotActiveAccountError, new NotActiveAccountError(), 4100],
    // Venue refusals and unknown outcomes: codes dapp libraries do not retry (a retry would send it twice).
    [
      'PerpsGatewayError',
      PerpsGatewayError,
      new PerpsGatewayError({ status: 400, error: 'insufficient_margin' }),
      -32003,
    ],
    [
      'PerpsRateLimitedError',
      PerpsRateLimitedError,
      new PerpsRateLimitedError({ status: 429, error: 'rate_limited' }),
      -32002,
    ],
    [
      'ClobError',
      ClobError,
      new ClobError('The exchange refused the order.', { status: 400, exchangeMessage: 'x' }),
      -32003,
    ],
    [
      'ClobOrderRejectedError',
      ClobOrderRejectedError,
      new ClobOrderRejectedError('Not enough balance.', { status: 400, exchangeMessage: 'x' }),
      -32003,
    ],
    [
      'ClobRateLimitedError',
      ClobRateLimitedError,
      new ClobRateLimitedError('Throttled.', { status: 429, exchangeMessage: 'x' }),
      -32002,
    ],
    [
      'ClobRestartingError',
      ClobRestartingError,
      new ClobRestartingError('Restarting.', { status: 425, exchangeMessage: 'x' }),
      -32002,
    ],
    [
      'ClobServerError',
      ClobServerError,
      new ClobServerError('Server error.', { status: 500, exchangeMessage: 'x' }),
      -32002,
    ],
    ['OutcomeUnknownError', OutcomeUnknownError, new OutcomeUnknownError('order', new Error('reset')), -32002],
    ['WeightBudgetError', WeightBudgetError, new WeightBudgetError(1000), -32002],
    ['InvalidCommandAnswerError', InvalidCommandAnswerError, new InvalidCommandAnswerError('0.oid'), -32002],
    ['InvalidPerpsAnswerError', InvalidPerpsAnswerError, new InvalidPerpsAnswerError('portfolio', 'margin'), -32002],
    ['VenueNotConfirmedError', VenueNotConfirmedError, new VenueNotConfirmedError('polymarket'), 4100],
    [
      'PerpsDomainMismatchError',
      PerpsDomainMismatchError,
      new PerpsDomainMismatchError({ name: 'a', version: '1', chainId: 1 }, { name: 'b', version: '1', chainId: 1 }),
      -32002,
    ],
    ['ConflictError', ConflictError, new ConflictError(), -32002],
    ['GrantDurationError', GrantDurationError, new GrantDurationError(), -32602],
  ];

  /**
   * Codes viem's `shouldRetry` retries (`utils/buildRequest.ts`, viem 2.57.1): a page-reachable error never uses one.
   */
  const RETRIED_BY_VIEM = [-1, -32005, -32603, 429, -32007];

  it(
    "the list of retried codes is viem's, and toRpcError never " +
      'gives a page one of them (even for a class that declared one)',
    () => {
      for (const code of RETRIED_BY_VIEM) {
        class Misdeclared extends BaseError {
          static override readonly code: number | undefined = code;
        }
        expect(toRpcError(new Misdeclared('x')).code).toBe(CATCH_ALL);
        expect(toRpcError(new ProviderRpcError(code, 'x')).code).toBe(CATCH_ALL);
      }
      const src = readFileSync(join(process.cwd(), 'node_modules/viem/utils/buildRequest.ts'), 'utf8');
      const body = src.slice(
        src.indexOf('export function shouldRetry'),
        src.indexOf('if (error instanceof HttpRequestError'),
      );
      // The codes viem names in `shouldRetry`: literals and the two error classes' codes (-32005, -32603).
      const literals = [...body.matchAll(/error\.code === (-?\d+)\)/g)].map((m) => Number(m[1]));
      expect(literals.sort()).toEqual([-1, -32007, 429].sort());
      expect(body).toMatch(/LimitExceededRpcError\.code/);
      expect(body).toMatch(/InternalRpcError\.code/);
    },
  );

  it(
    'every error class in lib/ (found by reading the source, exported or ' +
      'not) is exported and reaches a page with a code no client retries',
    () => {
      const classes = CLASSES;
      const declared = new Set<string>();
      for (const [path, src] of Object.entries(SOURCES)) {
        for (const m of src.matchAll(/^(export )?class (\w+) extends (\w+(?:\.\w+)?)/gm)) {
          if (!/Error$/.test(m[3]!)) continue;
          // RemoteError: the popup's own (not a BaseError, never sent to a page)
          if (m[3] === 'Error' && path.endsWith('/messaging/client.ts')) continue;
          // The site client's (lib/dapp): thrown in the site's page, never by the extension
          if (path.includes('/dapp/')) continue;
          declared.add(m[2]!);
          expect(m[1], `${path}: ${m[2]} must be exported so this test sees its code`).toBe('export ');
        }
      }
      // The discovery sees at least the classes this file names (a broken glob would pass vacuously).
      expect(declared.size).toBeGreaterThan(60);
      for (const [name] of table) expect(declared, name).toContain(name);
      for (const name of declared) {
        expect(classes.get(name), `${name} is declared but not found among the modules' exports`).toBeDefined();
        // What a page receives for an instance: the class's code, or the catch-all.
        const code = classes.get(name)!.code ?? CATCH_ALL;
        expect(RETRIED_BY_VIEM, `${name} → ${code}`).not.toContain(code);
      }
      expect(RETRIED_BY_VIEM).not.toContain(CATCH_ALL);
      expect(RETRIED_BY_VIEM).not.toContain(toRpcError(new DOMException('QuotaExceededError')).code);
    },
  );

  it('no error a page can receive uses a code viem retries (a retry would submit again or open another window)', () => {
    for (const [name, cls] of table) expect(RETRIED_BY_VIEM, name).not.toContain(cls.code);
    expect(RETRIED_BY_VIEM).not.toContain(
      new NetworkError('https://gateway.example', { cause: new Error('reset') }).code,
    );
    expect(RETRIED_BY_VIEM).not.toContain(new RequestTimeoutError('https://gateway.example', 15_000).code);
  });

  it.each(table)('%s → its static code, on the instance and on the page', (_name, cls, err, code) => {
    expect(cls.code).toBe(code);
    expect(err).toBeInstanceOf(BaseError);
    expect((err as BaseError).code).toBe(code);
    expect(toRpcError(err)).toEqual({ code, message: (err as BaseError).shortMessage });
  });

  it(
    'a BaseError whose class declares no code reaches the ' +
      'page as -32000 (not retried) with its short message only',
    () => {
      class Unclassified extends BaseError {}
      expect(toRpcError(new Unclassified('Something broke.', { details: 'secret detail' }))).toEqual({
        code: -32000,
        message: 'Something broke.',
      });
      expect(
        toRpcError(new ClobError('The exchange refused the order.', { status: 400, exchangeMessage: 'secret detail' })),
      ).toEqual({ code: -32003, message: 'The exchange refused the order.' });
      expect(toRpcError(new WrongPasswordError(1000))).not.toHaveProperty('data');
    },
  );

  it('maps by class, never by name: a renamed error keeps its code, an impostor with a code property gets none', () => {
    const renamed = new InvalidFieldError({ field: 'x', reason: 'y' });
    Object.defineProperty(renamed, 'name', { value: 'SomethingElse' });
    expect(toRpcError(renamed).code).toBe(-32602);
    const impostor = Object.assign(new Error('Vault.LockedError'), { name: 'Vault.LockedError', code: 4900 });
    expect(toRpcError(impostor)).toEqual({ code: -32000, message: 'Internal error.' });
  });

  it('keeps data on a ProviderRpcError and nothing from a cause', () => {
    const e = new DisconnectedError('Countersign restarted.', { retryable: true });
    expect(toRpcError(e)).toEqual({ code: 4900, message: 'Countersign restarted.', data: { retryable: true } });
    expect(
      JSON.stringify(toRpcError(new BaseError('Short.', { cause: new Error('0xsecret'), details: '0xdetail' }))),
    ).not.toMatch(/0xsecret|0xdetail/);
  });

  it('the page rebuilds the same class from the wire: one ProviderRpcError on both sides', () => {
    const wire = toRpcError(new UserRejectedRequestError('No.'));
    const page = fromRpcError(readRpcError(JSON.parse(JSON.stringify(wire))));
    expect(page).toBeInstanceOf(ProviderRpcError);
    expect(page).toMatchObject({ name: 'ProviderRpcError', code: 4001, message: 'No.' });
    expect(readRpcError({ code: 'x', message: 3, data: { nested: {} } })).toEqual({ code: -32000, message: 'Error' });
  });
});
