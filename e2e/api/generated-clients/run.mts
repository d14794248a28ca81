/**
 * Runs one adapter's round trip in plain Node, as the generated client runs in a user's program:
 * `tsx run.mts <openapi-fetch|hey-api|orval> <token>` in the folder generated-clients.test.ts fills.
 */
const [client, token] = process.argv.slice(2);
const { run } = (await import(`./${client}.client.ts`)) as { run: (token: string) => Promise<void> };
await run(token!);
