import { defineConfig, globalIgnores } from 'eslint/config';
import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTs from 'eslint-config-next/typescript';

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  {
    rules: {
      // `const { dropped, ...kept } = value` is how a field is left out; the dropped name is meant unused.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
    },
  },
  globalIgnores(['.next/**', '.next-*/**', 'dist/**', '.test-build/**', '.bench-build/**', 'node_modules/**', 'src/generated/**', 'next-env.d.ts', 'scratch/**', 'test-results/**', 'playwright-report/**']),
]);
