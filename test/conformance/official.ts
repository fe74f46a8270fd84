/**
 * Running the venue's official clients against the sandbox (issue #9 §5): the only change is at the
 * transport — the venue's header names (`POLY_…`) are renamed to the seeds' (`SVC_…`) on the way out.
 * Nothing else of the official code is touched.
 */
import axios from 'axios';

const SEED_HEADER: Record<string, string> = {
  POLY_ADDRESS: 'SVC_ADDRESS',
  POLY_SIGNATURE: 'SVC_SIGNATURE',
  POLY_TIMESTAMP: 'SVC_TIMESTAMP',
  POLY_NONCE: 'SVC_NONCE',
  POLY_API_KEY: 'SVC_API_KEY',
  POLY_PASSPHRASE: 'SVC_PASSPHRASE',
  'POLYMARKET-PROXY': 'SERVICE-PROXY',
  'POLYMARKET-SECRET': 'SERVICE-SECRET',
};

let installed = false;
/** Every request the official CLOB client sends (method, url, headers as renamed, data), for assertions. */
export const sent: { method: string; url: string; headers: Record<string, string>; data: unknown }[] = [];

/** Renames the venue's header names to the seeds' on every axios request (the official CLOB client uses axios). */
export function translateHeadersAtTransport(): void {
  if (installed) return;
  installed = true;
  axios.interceptors.request.use((cfg) => {
    const headers = cfg.headers.toJSON() as Record<string, string>;
    for (const [venue, seed] of Object.entries(SEED_HEADER)) {
      if (headers[venue] !== undefined) {
        cfg.headers.set(seed, headers[venue]);
        cfg.headers.delete(venue);
      }
    }
    sent.push({ method: String(cfg.method).toUpperCase(), url: String(cfg.url), headers: cfg.headers.toJSON() as Record<string, string>, data: cfg.data });
    return cfg;
  });
}
