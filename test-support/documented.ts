/**
 * What the docs tell a user to write and run, read from the docs themselves, so that a test runs the very text
 * a user copies: code blocks marked with a file name (```ts file=plant-store-json.ts) and blocks of shell lines
 * marked with what they do (```sh run=openapi-lint).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { projectRoot } from './build';

const read = (doc: string) => readFileSync(path.join(projectRoot, doc), 'utf8');

/** Every ```<language> file=<name> block of `doc` (a path from the project's folder), by name. */
export function documentedFiles(doc: string): Map<string, string> {
  return new Map([...read(doc).matchAll(/^```[a-z]+ file=(\S+)\n([\s\S]*?)^```$/gm)].map((match) => [match[1]!, match[2]!]));
}

/** The lines of the ```sh run=<name> block of `doc`. */
export function documentedCommands(doc: string, name: string): string {
  const blocks = [...read(doc).matchAll(/^```sh run=(\S+)\n([\s\S]*?)^```$/gm)].filter((match) => match[1] === name);
  if (blocks.length !== 1) throw new Error(`${doc} has ${blocks.length} \`\`\`sh run=${name} blocks, not one`);
  return blocks[0]![2]!;
}
