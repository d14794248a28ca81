/**
 * The served OpenAPI document lints clean, as docs/api.md ("The OpenAPI document: lint") tells a user to lint
 * it: the lines of its `sh run=openapi-lint` block, read from the file and run by a shell in the project's
 * folder, with the document saved outside it. Spectral's OpenAPI rules and the OWASP API Security ruleset
 * (less the exceptions .spectral.yaml names) and Redocly's `recommended` ruleset (its CLI fetched by npx, at
 * the version the line pins): any finding, error or warning, fails. The document does not depend on the
 * database, so the PostgreSQL run of the suite skips this file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { setupServer } from '@test-support/api-fixture';
import { projectRoot } from '@test-support/build';
import { documentedCommands, runLines, userEnv } from '@test-support/documented';

const DOCUMENTED_PATH = '/tmp/plant-store-openapi.json';

describe.skipIf(process.env.TEST_DATABASE === 'postgresql')('the served OpenAPI document, linted as docs/api.md says', () => {
  const server = setupServer();

  // Spectral lints ~100 KB with two rulesets (~6 s alone), Redocly ~4 s (its first npx fetch a few more):
  // over a minute on a busy machine.
  it('has no finding from Spectral (.spectral.yaml) or Redocly (recommended), saved outside the project', { timeout: 240_000 }, async () => {
    const commands = documentedCommands('docs/api.md', 'openapi-lint');
    expect(commands, 'the lines lint the document at the path they save it to').toContain(DOCUMENTED_PATH);
    const folder = mkdtempSync(path.join(os.tmpdir(), 'plant-store-lint-'));
    try {
      // Another name than openapi.json, in a folder of its own (several runs may share the machine).
      const script = commands.replaceAll('http://localhost:3000', server.baseUrl).replaceAll(DOCUMENTED_PATH, path.join(folder, 'served-document.json'));
      const started = performance.now();
      const output = await runLines(script, { cwd: projectRoot, env: userEnv({ REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }) });
      console.log(`[openapi lint] Spectral and Redocly in ${Math.round(performance.now() - started)} ms`);
      // Redocly exits 0 with warnings; a warning is a finding too.
      expect(output, output).toContain("No results with a severity of 'hint' or higher found!");
      expect(output, output).toContain('Your API description is valid');
      expect(output, output).not.toMatch(/You have \d+ warnings?/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
