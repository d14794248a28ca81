import { JSON_MAX_DEPTH } from '@/shared/limits';

import { refuse } from '../reply';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * True when arrays and objects in `text` nest deeper than `limit`, counting brackets outside strings: one
 * pass over the text, no allocation, and it stops at the first level too many. The text need not be valid
 * JSON (the parser that runs next says what else is wrong with it); it only has to be impossible for a
 * parser to meet deeper nesting than this counts.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      for (index++; index < text.length; index++) {
        const inner = text.charCodeAt(index);
        if (inner === BACKSLASH) index++;
        else if (inner === QUOTE) break;
      }
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if ((code === CLOSE_BRACKET || code === CLOSE_BRACE) && depth > 0) {
      depth--;
    }
  }
  return false;
}

/**
 * Both doors, before anything parses or walks a JSON text (a REST body, a tRPC body or `input=`): deeper
 * nesting than JSON_MAX_DEPTH is a 400 of its own (40022). Every reader behind the doors recurses, and
 * superjson's walker costs the square of the depth: 2,400 levels in a 5 KB query took ~0.3 s of CPU.
 */
export function refuseDeepJson(text: string, what: string): void {
  if (nestsDeeperThan(text, JSON_MAX_DEPTH)) {
    throw refuse('jsonTooDeep', `${what} nests arrays and objects more than ${JSON_MAX_DEPTH} levels deep`);
  }
}
