/** `npm run bench`: prints benchmark figures (never a pass/fail on timing). */
import { benchSigning, printSigning } from './signing';

printSigning(await benchSigning());
