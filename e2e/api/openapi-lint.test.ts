/**
 * The served OpenAPI document lints clean: Spectral's OpenAPI rules and the OWASP API Security ruleset,
 * with the exceptions the committed ruleset (.spectral.yaml) names and docs/api.md explains. Any finding,
 * error or warning, fails. Spectral runs as a user runs it (its CLI, from this install, offline). The
 * document does not depend on the database, so the PostgreSQL run of the suite skips this file.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { expectStatus, setupServer } from '@test-support/api-fixture';
import { projectRoot } from '@test-support/build';

type Finding = { code: string; message: string; path: string[]; severity: number };

describe.skipIf(process.env.TEST_DATABASE === 'postgresql')('the served OpenAPI document, linted', () => {
  const server = setupServer();

  // Spectral lints ~100 KB with two rulesets in a child process: ~20 s alone, over a minute on a busy machine.
  it('has no finding from spectral:oas and the OWASP API ruleset, less the exceptions .spectral.yaml names', { timeout: 180_000 }, async () => {
    const served = await server.anonymous.get('/api/openapi.json', { authorization: null });
    expectStatus(served, 200);
    // Under test-results/, where the ruleset's overrides (`**/openapi.json#/…`) find it.
    const folder = path.join(projectRoot, 'test-results', 'openapi-lint');
    mkdirSync(folder, { recursive: true });
    const file = path.join(folder, 'openapi.json');
    writeFileSync(file, served.text);
    const spectral = path.join(projectRoot, 'node_modules', '.bin', 'spectral');
    const { stdout } = await promisify(execFile)(spectral, ['lint', file, '--ruleset', path.join(projectRoot, '.spectral.yaml'), '--format', 'json', '--fail-severity', 'hint'], {
      cwd: projectRoot,
    }).catch((error: { stdout?: string; stderr?: string }) => {
      // A finding exits 1; its report is still on stdout.
      if (error.stdout?.includes('[')) return { stdout: error.stdout };
      throw error;
    });
    const findings = JSON.parse(stdout.slice(stdout.indexOf('['), stdout.lastIndexOf(']') + 1)) as Finding[];
    const shown = findings.map(({ code, severity, path: at, message }) => `${['error', 'warning', 'info', 'hint'][severity]} ${code} at ${at.join('.')}: ${message}`);
    expect(shown).toEqual([]);
  });
});
