/**
 * Admit, the page path's stage after capture (`request.ts`, stage 2): the origin must be an https site (or
 * localhost), the method one of the page methods' records (`methods/index.ts`), each with a literal policy:
 * whether it needs a connected origin, an unlocked vault, and which approval. Unknown methods are refused (4200);
 * nothing is forwarded anywhere by default. A refused method (`eth_signTypedData_v4`) ends here with its reason.
 */
import { unauthorized, unsupported } from '../errors/rpc';
import { isPageMethod, methodRecord, type PageMethod } from './methods';

/** `https:` origins, or `http:` on localhost / 127.0.0.1 / [::1]. */
export function isAllowedOrigin(origin: string): boolean {
  try {
    const u = new URL(origin);
    if (u.protocol === 'https:') return true;
    return u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  } catch {
    return false;
  }
}

/**
 * Admits a request of `origin` for `method` (the origin is the browser's sender, never the message's)
 * and returns the method as a `PageMethod`: throws 4100 for an origin that is not https (or http on localhost), 4200
 * for a method without a record and for a refused one (its record's `refuse` reads `params` only to name the
 * reason).
 */
export function admit(origin: string, method: string, params: unknown): PageMethod {
  if (!isAllowedOrigin(origin)) throw unauthorized('Countersign only serves https sites (and localhost).');
  if (!isPageMethod(method)) throw unsupported(`Countersign does not support ${method.slice(0, 64)}.`);
  const record = methodRecord(method);
  if (record.policy.approval === 'refused')
    throw unsupported(record.refuse?.(params) ?? `Countersign does not support ${method}.`);
  return method;
}
