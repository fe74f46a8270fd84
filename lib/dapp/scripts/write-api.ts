/** `npm run docs:api` (in lib/dapp): writes API.md from the package's doc comments (`api.ts`). */
import { writeFileSync } from 'node:fs';
import { API_MD, apiReference } from './api';

writeFileSync(API_MD, apiReference());
