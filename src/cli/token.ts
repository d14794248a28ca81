/**
 * `npm run --silent token -- create --user <name> [--role admin|member] [--expires-in-days N]`
 * `npm run --silent token -- list`
 * `npm run --silent token -- revoke <id>`
 *
 * `create` prints the new token alone on the last line of standard output, so scripts can take it with
 * `tail -n 1`. Opening the database applies pending migrations first, so it works on a fresh clone before the
 * first start.
 */
import { parseArgs } from 'node:util';

import { config, ConfigError } from '@/server/config';
import { openDatabase } from '@/server/db/client';
import { DatabaseUnavailableError } from '@/server/db/unavailable';
// No token cache here (it stays off unless configured): a one-shot command verifies no token twice.
import { issueToken, listTokens, revokeToken } from '@/server/tokens/service';
import { TOKEN_EXPIRY_DAYS_MAX, tokenExpiryDaysSchema } from '@/shared/users';

const USAGE = `usage:
  token create --user <name> [--role admin|member] [--expires-in-days <n>]
  token list
  token revoke <id>`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { user: { type: 'string' }, role: { type: 'string' }, 'expires-in-days': { type: 'string' } },
  });
  const [command, ...rest] = positionals;
  // Migration notes go to stderr: stdout is for what scripts read (the token on the last line, the list).
  database = await openDatabase(config(), { log: console.error });

  if (command === 'create') {
    const userName = values.user?.trim();
    if (!userName) throw new UsageError('create needs --user <name>');
    const role = values.role;
    if (role !== undefined && role !== 'admin' && role !== 'member') throw new UsageError('--role is admin or member');
    const days = values['expires-in-days'];
    if (days !== undefined && !(/^\d{1,9}$/.test(days) && tokenExpiryDaysSchema.safeParse(Number(days)).success)) {
      throw new UsageError(`--expires-in-days is a whole number of days, 1 to ${TOKEN_EXPIRY_DAYS_MAX}`);
    }
    const expiresAt = days === undefined ? undefined : new Date(Date.now() + Number(days) * 86_400_000);
    const issued = await issueToken({ userName, role, expiresAt });
    console.log(
      `${issued.createdUser ? 'Created user' : 'User'} ${issued.user.name} (${issued.user.role}); token ${issued.id}` +
        `${expiresAt ? `, expires ${expiresAt.toISOString()}` : ''}. It is shown once:`,
    );
    console.log(issued.token);
    return;
  }
  if (command === 'list' && rest.length === 0) {
    const tokens = await listTokens();
    if (tokens.length === 0) console.log('no tokens');
    for (const token of tokens) {
      const state = token.revokedAt ? `revoked ${token.revokedAt.toISOString()}` : token.expiresAt && token.expiresAt <= new Date() ? 'expired' : 'active';
      console.log(
        [token.id, `${token.prefix}…`, token.userName, token.role, state, `created ${token.createdAt.toISOString()}`, `last used ${token.lastUsedAt?.toISOString() ?? 'never'}`].join('\t'),
      );
    }
    return;
  }
  if (command === 'revoke' && rest.length === 1) {
    const id = rest[0]!;
    if (!/^\d{1,9}$/.test(id)) throw new UsageError('revoke takes the numeric token id that `token list` shows');
    if (!(await revokeToken(Number(id)))) {
      console.error(`no token with id ${id}`);
      process.exitCode = 1;
      return;
    }
    console.log(`token ${id} is revoked`);
    return;
  }
  throw new UsageError(command ? `unknown command: ${[command, ...rest].join(' ')}` : 'no command given');
}

/** A PostgreSQL pool keeps the process alive until its idle connections time out; close it when done. */
let database: Awaited<ReturnType<typeof openDatabase>> | undefined;
async function closeDatabase(): Promise<void> {
  await database?.$disconnect();
}

main(process.argv.slice(2))
  .catch((error: unknown) => {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
      console.error(`${error.message}\n${USAGE}`);
      process.exitCode = 2;
      return;
    }
    // An AppError is a refusal with a message for the person at the keyboard, as are a bad environment and a
    // database that cannot be used; anything else is a failure.
    const forPeople = error instanceof ConfigError || error instanceof DatabaseUnavailableError || (error instanceof Error && error.name === 'AppError');
    console.error(forPeople ? error.message : error);
    process.exitCode = 1;
  })
  .finally(closeDatabase);
