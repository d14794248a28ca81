import { defineConfig, globalIgnores } from 'eslint/config';
import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTs from 'eslint-config-next/typescript';
import regexp from 'eslint-plugin-regexp';

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  {
    rules: {
      // `const { dropped, ...kept } = value` is how a field is left out; the dropped name is meant unused.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
    },
  },
  // Every regular expression, in the server, the page, the tests, the tooling and the bench. The rules that
  // refuse a pattern whose matching time can grow faster than its input are named, at their strictest, so no
  // later change of the recommended set drops them: one backtracking pattern on a request path froze the
  // server. The rest of the recommended set finds patterns that cannot mean what they say; its
  // purely stylistic rules are off, as they would rewrite correct patterns all over for no change in behaviour.
  regexp.configs['flat/recommended'],
  {
    rules: {
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      'regexp/no-super-linear-move': ['error', { report: 'potential', ignoreSticky: false, ignorePartial: false }],
      'regexp/prefer-w': 'off',
      'regexp/use-ignore-case': 'off',
      'regexp/no-unused-capturing-group': 'off',
      'regexp/negation': 'off',
      'regexp/optimal-quantifier-concatenation': 'off',
    },
  },
  // A promise the server drops is a charge not taken, a write not awaited, or a rejection nobody handles: a
  // webhook queue batch wrote 500 rows past a refused charge when charges became promises and one call site did
  // not await (its parameter was typed to return void). Type-aware, so only where it guards that: the server's
  // own code, not its tests.
  {
    files: ['src/server/**/*.ts'],
    ignores: ['src/server/**/*.test.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  globalIgnores(['.next/**', '.next-*/**', 'dist/**', '.test-build/**', '.bench-build/**', 'node_modules/**', 'src/generated/**', 'next-env.d.ts', 'scratch/**', 'test-results/**', 'playwright-report/**', '.stryker-tmp/**', 'reports/**']),
]);
