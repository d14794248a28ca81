/** `npm run db:generate`: the PostgreSQL schema from prisma/schema.prisma, then both engines' clients. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { projectRoot } from '@/server/paths';

import { writePostgresSchema } from './postgres-schema';

writePostgresSchema();
const result = spawnSync(process.execPath, [path.join(projectRoot, 'src', 'tooling', 'prisma-cli.mjs'), 'generate'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
