/**
 * Runs one adapter's round trip in plain Node, as the generated client runs in a user's program:
 * `npx tsx run.mts <openapi-fetch|hey-api|orval> <token>` in a folder generated-clients.test.ts made as docs/api.md says.
 */
const [client, token] = process.argv.slice(2);
const { run } = (await import(`./${client}.client.ts`)) as { run: (token: string) => Promise<void> };
await run(token!);
