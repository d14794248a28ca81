/**
 * docs/live-feed.md as a reader follows it, its lines and program read from the file: the feed followed with
 * `curl -N` and resumed with `Last-Event-ID`, and the `eventsource` program run with Node in a new folder outside
 * the project (its install line from the npm registry), through a change, a stop, a change while stopped, a
 * resumed run, and a refused token. What is checked is what the page promises, not the feed's numbering: the
 * change arrives with its id exact, and a resumed feed sends the change made while away and not the one before.
 * The feed itself is e2e/api/live.test.ts's, on both engines; this file runs on SQLite only.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { setupServer } from '@test-support/api-fixture';
import { documentedCommands, documentedFiles, type RunningLines, runLines, startLines, userEnv } from '@test-support/documented';
import { changedFields } from '@test-support/plant-fields';

const DOC = 'docs/live-feed.md';

type SseEvent = { event?: string; data?: string; id?: string };

/** The events of an SSE stream's text so far: blocks between blank lines, `field: value` lines. */
function sseEvents(text: string): SseEvent[] {
  return text
    .split(/\n\n/)
    .map((block) => Object.fromEntries(block.split('\n').flatMap((line) => (/^(event|data|id): ?(.*)$/.exec(line) ? [[line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trimStart()]] : []))) as SseEvent)
    .filter((event) => event.data !== undefined);
}

/** The feed's own messages (tRPC's `connected`, `ping` and `serialized-error` are named events). */
const changes = (text: string) => sseEvents(text).filter((event) => event.event === undefined);

const changeOf = (event: SseEvent) => (JSON.parse(event.data!) as { json: { kind: string; id?: string; name?: string } }).json;

describe.skipIf(process.env.TEST_DATABASE === 'postgresql')('the live feed as docs/live-feed.md shows it', () => {
  const server = setupServer();
  let folder: string;
  const running: RunningLines[] = [];
  const start = (lines: string, env: Record<string, string>) => {
    const started = startLines(lines.replaceAll('http://localhost:3000', server.baseUrl), { cwd: folder, env: userEnv(env) });
    running.push(started);
    return started;
  };

  beforeAll(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'plant-store-feed-'));
  });
  afterAll(async () => {
    await Promise.all(running.map((lines) => lines.stop()));
    rmSync(folder, { recursive: true, force: true });
  });

  async function rest(token: string, method: string, at: string, body?: string): Promise<void> {
    const answer = await fetch(`${server.baseUrl}${at}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
    expect(answer.status, `${method} ${at}: ${await answer.clone().text()}`).toBe(200);
  }

  it('follows with curl -N, and resumes from the last id received with Last-Event-ID', { timeout: 120_000 }, async () => {
    const { token } = await server.createToken('feed-curl', 'member');
    const id = '9007199254740993';
    const follow = start(documentedCommands(DOC, 'follow-curl'), { TOKEN: token });
    await follow.waitFor((text) => changes(text).some((event) => changeOf(event).kind === 'live'), 'live event');
    await rest(token, 'POST', '/api/plants', `{"id": ${id}, "name": "Monstera"}`);
    const created = () => changes(follow.output()).find((event) => changeOf(event).kind === 'created' && changeOf(event).id === id);
    await follow.waitFor(() => created() !== undefined, 'created event');
    expect(changeOf(created()!)).toEqual({ kind: 'created', id, ...changedFields({ name: 'Monstera' }) });
    await follow.stop();

    await rest(token, 'PATCH', `/api/plants/${id}`, '{"name": "Monstera deliciosa"}');
    const resumed = start(documentedCommands(DOC, 'resume-curl'), { TOKEN: token, LAST_EVENT_ID: created()!.id! });
    await resumed.waitFor((text) => changes(text).some((event) => changeOf(event).kind === 'updated'), 'updated event');
    // What changed while away, and not what came before the id sent back.
    for (const change of changes(resumed.output()).map(changeOf)) expect(change).toEqual({ kind: 'updated', id, ...changedFields({ name: 'Monstera deliciosa' }) });
    await resumed.stop();
  });

  it('follows with the eventsource program in a folder of its own, resumes on the next run, and stops at a refused token', { timeout: 240_000 }, async () => {
    const { token } = await server.createToken('feed-node', 'member');
    const id = '9223372036854775807';
    const started = performance.now();
    await runLines(documentedCommands(DOC, 'follow-setup'), { cwd: folder, env: userEnv({ npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' }) });
    const setup = Math.round(performance.now() - started);
    const programFolder = path.join(folder, 'plant-store-feed');
    writeFileSync(path.join(programFolder, 'follow-plants.mjs'), documentedFiles(DOC).get('follow-plants.mjs')!.replaceAll('http://localhost:3000', server.baseUrl));
    const run = (runToken: string) => {
      const lines = startLines(documentedCommands(DOC, 'follow-node'), { cwd: programFolder, env: userEnv({ PLANT_STORE_TOKEN: runToken }) });
      running.push(lines);
      return lines;
    };

    const first = run(token);
    await first.waitFor((text) => text.includes('live: every change from now on arrives'), 'live line');
    await rest(token, 'POST', '/api/plants', `{"id": ${id}, "name": "Fern", "tag": "shade"}`);
    await first.waitFor((text) => text.includes(`created ${id} Fern shade`), 'created line');
    await first.stop();

    await rest(token, 'PATCH', `/api/plants/${id}`, '{"name": "Boston fern"}');
    const second = run(token);
    await second.waitFor((text) => text.includes(`updated ${id} Boston fern shade`), 'updated line');
    expect(second.output()).not.toContain(`created ${id}`);
    await second.stop();

    const refused = run('pst_not-a-token');
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toMatch(/^refused: 401 \(error 40101\) /m);
    console.log(`[live feed docs] npm i eventsource in ${setup} ms`);
  });
});
