/**
 * `npm run db:generate`: the declared plant fields' copies in prisma/schema.prisma (plant-field-models.ts), the
 * PostgreSQL schema from it, then both engines' clients.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { projectRoot } from '@/server/paths';

import { writePlantFieldCopies } from './plant-field-models';
import { writePostgresSchema } from './postgres-schema';

writePlantFieldCopies();
writePostgresSchema();
const result = spawnSync(process.execPath, [path.join(projectRoot, 'src', 'tooling', 'prisma-cli.mjs'), 'generate'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
