import { defineConfig } from 'wxt';
import preact from '@preact/preset-vite';

/**
 * WXT build configuration (MV3 for Chrome, MV2/MV3 for Firefox).
 * `lib/sandbox/` is Node-only and must never be imported by an entrypoint.
 */
export default defineConfig({
  srcDir: '.',
  entrypointsDir: 'entrypoints',
  publicDir: 'public',
  imports: false,
  vite: () => ({ plugins: [preact()] }),
  manifest: {
    name: 'Countersign',
    description: 'Keeps trading keys encrypted and signs exactly what the venue verifies, only with your approval.',
    permissions: ['storage', 'alarms', 'unlimitedStorage'],
  },
});
