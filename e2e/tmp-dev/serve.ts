import { writeFileSync } from 'node:fs';
import { startServer } from '../support/server-process';
import { WEBHOOKS_ENV } from '../browser/global-setup';
const server = await startServer({ env: WEBHOOKS_ENV });
writeFileSync('/tmp/av3/server.json', JSON.stringify({ baseUrl: server.baseUrl, token: server.adminToken, db: server.databaseUrl }));
console.log(server.baseUrl, server.databaseUrl);
process.on('SIGTERM', async () => { writeFileSync('/tmp/av3/server.log', server.log()); await server.stop(); process.exit(0); });
setInterval(() => writeFileSync('/tmp/av3/server.log', server.log()), 2000);
