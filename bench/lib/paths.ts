import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const projectRoot = path.resolve(benchDir, '..');
/** tsx's command line in a checkout's own node_modules (a baseline runs its own tools). */
export const tsxCli = (dir: string) => path.join(dir, 'node_modules', 'tsx', 'dist', 'cli.mjs');
