// ESLint (flat config): typescript-eslint's type-checked rules that guard a codebase whose safety rests on
// awaited writes. Formatting is Prettier's (`.prettierrc.json`); `max-len` holds the 120-character width
// for what Prettier leaves long (comments, strings). `npm run lint` runs both; `npm test` runs it right after
// the typecheck.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.output/**', '.wxt/**', '.release/**', 'test-results/**', 'lib/dapp/dist/**'] },
  {
    files: ['**/*.{ts,tsx}'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/require-await': 'off',
      'max-len': ['error', { code: 120, ignoreUrls: false }],
    },
  },
);
