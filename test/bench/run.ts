/** `npm run bench`: prints benchmark figures (never a pass/fail on timing). */
import { benchSigning, printSigning } from './signing';
import { benchVault } from './vault';
import { printSizes } from './size';
import { benchGrant } from './grant';
import { benchAudit } from './audit';

printSizes();
printSigning(await benchSigning());
await benchVault();
await benchGrant();
await benchAudit();
await (await import('./popup')).benchPopup();
