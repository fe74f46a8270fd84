/**
 * `npm run bench`: prints benchmark figures (never a pass/fail on timing). `BENCH_ONLY` (comma list of
 * `signing`, `vault`, `sizes`, `grant`, `grant-paths`, `peer`, `grant-use`, `session`, `audit`, `popup`, `streams`,
 * `cold`, `audit-browser`) runs only those parts. `audit-browser` (the audit log at 1 000 000 entries in Chromium's
 * IndexedDB, `audit-browser.ts`) is not part of the default run: it runs when `BENCH_ONLY` names it or with
 * `BENCH_AUDIT_BROWSER=1` (its seeded profile is cached outside the repository, made once in about 4 min: 2.5 min
 * seeding, then a full check).
 */
import { benchSigning, printSigning } from './signing';
import { benchVault } from './vault';
import { printSizes } from './size';
import { benchGrant } from './grant';
import { benchAudit } from './audit';
import { benchGrantUse } from './grant-use';
import { benchSession } from './session';

const only = process.env.BENCH_ONLY?.split(',');
const want = (part: string) => !only || only.includes(part);

if (want('sizes')) printSizes();
if (want('signing')) printSigning(await benchSigning());
if (want('vault')) await benchVault();
if (want('grant-use')) await benchGrantUse();
if (want('grant')) await benchGrant();
if (want('grant-paths')) await (await import('./grant-paths')).benchGrantPaths();
if (want('peer')) await (await import('./peer')).benchPeer();
if (want('session')) await benchSession();
if (want('audit')) await benchAudit();
if (want('popup')) await (await import('./popup')).benchPopup();
if (want('cold')) await (await import('./cold')).benchCold();
if (want('streams')) await (await import('./streams')).benchStreams();
if (only?.includes('audit-browser') || process.env.BENCH_AUDIT_BROWSER === '1')
  await (await import('./audit-browser')).benchAuditBrowser();

// Every figure is printed; a browser's or sandbox's handle left open by a part must not keep the run alive.
process.exit(process.exitCode ?? 0);
