/**
 * A CSV file's text cut into the parts an import takes (docs/api.md, "CSV import"): each at most IMPORT_PART_LINES
 * lines, so at most that many rows, and at most `maxBytes` of UTF-8 once written as a JSON string, so a part and
 * its call's envelope stay within the 64 KiB body limit. Cuts fall after a line end; a line longer than a whole
 * part (a file of CR line ends read as one) is cut where it must, between characters, which the server takes too.
 */
export const IMPORT_PART_LINES = 1_000;
/** The csv text of one call, as JSON bytes: 64 KiB less the call's envelope and a margin. */
export const IMPORT_PART_JSON_BYTES = 60 * 1024;

const LINE = /\r\n|\r|\n/g;
const encoder = new TextEncoder();
/** What a piece of text adds to a JSON string, in UTF-8 bytes (its quotes and escapes included). */
const jsonBytes = (text: string) => encoder.encode(JSON.stringify(text)).length - 2;

/** Cuts `text` at the last whole character within `maxBytes` (as JSON); never inside a surrogate pair. */
function cutWithin(text: string, maxBytes: number): number {
  let low = 1;
  let high = text.length;
  // The longest prefix within the bound (JSON bytes grow with the prefix).
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (jsonBytes(text.slice(0, middle)) <= maxBytes) low = middle;
    else high = middle - 1;
  }
  return /[\uD800-\uDBFF]/.test(text[low - 1]!) && low > 1 ? low - 1 : low;
}

export function cutIntoParts(text: string, { maxLines = IMPORT_PART_LINES, maxBytes = IMPORT_PART_JSON_BYTES } = {}): string[] {
  const parts: string[] = [];
  let part = '';
  let partBytes = 0;
  let partLines = 0;
  let at = 0;
  const flush = () => {
    if (part !== '') parts.push(part);
    part = '';
    partBytes = 0;
    partLines = 0;
  };
  while (at < text.length) {
    LINE.lastIndex = at;
    const end = LINE.exec(text);
    let line = text.slice(at, end === null ? text.length : end.index + end[0].length);
    at += line.length;
    // A line longer than a part goes out in pieces of its own.
    while (jsonBytes(line) > maxBytes) {
      flush();
      const cut = cutWithin(line, maxBytes);
      parts.push(line.slice(0, cut));
      line = line.slice(cut);
    }
    const bytes = jsonBytes(line);
    if (partBytes + bytes > maxBytes || partLines === maxLines) flush();
    part += line;
    partBytes += bytes;
    partLines += 1;
  }
  flush();
  return parts;
}
