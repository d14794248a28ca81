import { QUOTED_NAME_MAX_LENGTH, UNKNOWN_FIELDS_NAMED } from './limits';

/**
 * Pieces of the messages both doors send that quote what a client sent. A message is read by a person and
 * may be kept (a replayed answer), so it quotes a bounded part of the input, never all of it.
 */

/** A field name as a message quotes it: in double quotes, cut to QUOTED_NAME_MAX_LENGTH characters. */
export function quoteName(name: string): string {
  // Cut before spreading into code points, so a 64 KiB name is not spread whole.
  const characters = [...name.slice(0, QUOTED_NAME_MAX_LENGTH * 2)];
  return characters.length > QUOTED_NAME_MAX_LENGTH ? `"${characters.slice(0, QUOTED_NAME_MAX_LENGTH).join('')}…"` : `"${characters.join('')}"`;
}

/** `unknown field "x"`, or `unknown fields "a", "b", "c" and 4,997 more`: the first few named, the rest counted. */
export function unknownFields(names: readonly string[]): string {
  const named = names.slice(0, UNKNOWN_FIELDS_NAMED).map(quoteName).join(', ');
  const more = names.length - UNKNOWN_FIELDS_NAMED;
  return `unknown field${names.length > 1 ? 's' : ''} ${named}${more > 0 ? ` and ${more.toLocaleString('en-US')} more` : ''}`;
}

/** `a`, `a and b`, `a, b and c`: a list of fields in a message. */
export const listed = (words: readonly string[]): string => (words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`);
