/**
 * CSV as spreadsheets open it (RFC 4180): fields separated by commas, records by CRLF, a field quoted when it
 * holds a comma, a quote, CR or LF (quotes doubled), and a UTF-8 byte order mark first, without which Excel
 * reads UTF-8 as the machine's legacy code page. Text that a spreadsheet would run as a formula (OWASP, "CSV
 * Injection": a field starting with = + - @, a tab or a carriage return) gets a leading apostrophe, which
 * spreadsheets show as text. Numbers the export writes itself (ids) are exempt: a negative id is data.
 *
 * The reader takes the same files back (the import): `readCsvText` removes exactly the apostrophe the writer
 * added. So that it can, the writer also adds one to text that already starts with apostrophes before a formula
 * character ("'=x" is written "''=x"): reading strips one apostrophe from text of that shape, and every text
 * comes back as it was written.
 */
export const CSV_BOM = '\uFEFF';
export const CSV_NEWLINE = '\r\n';

const FORMULA_START = /^'*[=+\-@\t\r]/;
const NEUTRALISED = /^'+[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One text field, safe to open. */
export function csvText(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** One record: text fields are neutralised and quoted as needed; `raw` fields (digits the caller wrote) go as they are. */
export function csvRecord(fields: readonly (string | { raw: string })[]): string {
  return fields.map((field) => (typeof field === 'string' ? csvText(field) : field.raw)).join(',') + CSV_NEWLINE;
}

/** A text field as read (its quotes already undone): the text the writer was given (csvText's apostrophe removed). */
export function readCsvText(field: string): string {
  return NEUTRALISED.test(field) ? field.slice(1) : field;
}

/**
 * One record as read: the line it starts on, its fields (quotes undone, nothing else), and why it cannot be
 * read when it cannot (a quote never closed, text after a closing quote): the rest of the file is still read.
 */
export type CsvRecordRead = { line: number; fields: string[]; problem?: string };

export type CsvRead =
  | {
      ok: true;
      records: CsvRecordRead[];
      /** The text after the last whole record: not a record yet, to be read again with what follows it. */
      rest: string;
      /** The line `rest` starts on. */
      restLine: number;
    }
  /** A record longer than `maxRecordLength` (a quote never closed, or not CSV at all): nothing after it can be read. */
  | { ok: false; line: number; problem: string };

const COMMA = 0x2c;
const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;
const FIELD_END = /[,\r\n]/g;
const LINE_END = /[\r\n]/g;
const LINE_BREAK = /\r\n|\r|\n/g;

const lineBreaks = (text: string) => text.match(LINE_BREAK)?.length ?? 0;

/**
 * Reads the whole records of `text`, a piece of a CSV file whose first character is on line `firstLine`. A
 * record ends at CRLF, LF or CR outside quotes; empty lines are no records. Without `final`, a record the text
 * ends in the middle of is not read but handed back as `rest` (a CR at the very end too: an LF may follow), so
 * a file can be read in parts of any size that end between characters, with nothing but `rest` kept between
 * them. With `final` (the file's end), everything is read: a quote never closed makes its record's problem.
 *
 * Bounded: no record may be longer than `maxRecordLength` characters, so what is kept between parts, and the
 * work of finding a record's end, is bounded too, whatever the text holds.
 */
export function readCsvRecords(text: string, options: { firstLine: number; final: boolean; maxRecordLength: number }): CsvRead {
  const { final, maxRecordLength } = options;
  const records: CsvRecordRead[] = [];
  const length = text.length;
  let line = options.firstLine;
  let at = 0;
  const tooLong = (recordLine: number): CsvRead => ({
    ok: false,
    line: recordLine,
    problem: `the record on line ${recordLine} is longer than ${maxRecordLength.toLocaleString('en-US')} characters (a quote never closed?): the rest of the file cannot be read`,
  });
  const unfinished = (start: number, recordLine: number): CsvRead =>
    start + maxRecordLength < length ? tooLong(recordLine) : { ok: true, records, rest: text.slice(start), restLine: recordLine };

  while (at < length) {
    const start = at;
    const recordLine = line;
    const first = text.charCodeAt(at);
    // An empty line.
    if (first === LF) {
      at += 1;
      line += 1;
      continue;
    }
    if (first === CR) {
      if (at + 1 === length && !final) return unfinished(start, recordLine);
      at += text.charCodeAt(at + 1) === LF ? 2 : 1;
      line += 1;
      continue;
    }
    const fields: string[] = [];
    let problem: string | undefined;
    let ended = false;
    while (!ended) {
      if (at - start > maxRecordLength) return tooLong(recordLine);
      if (at < length && text.charCodeAt(at) === QUOTE) {
        // A quoted field: up to the quote that is not doubled.
        let value = '';
        let from = at + 1;
        for (;;) {
          const quote = text.indexOf('"', from);
          if (quote === -1 || quote - start > maxRecordLength) {
            if (quote === -1 && length - start <= maxRecordLength && !final) return unfinished(start, recordLine);
            if (quote !== -1 || length - start > maxRecordLength) return tooLong(recordLine);
            // The file ends inside the quotes: the record is everything after them, and cannot be trusted.
            value += text.slice(from);
            at = length;
            problem = `the quote opened on line ${recordLine + lineBreaks(text.slice(start, from))} is never closed`;
            break;
          }
          value += text.slice(from, quote);
          if (quote + 1 === length && !final) return unfinished(start, recordLine);
          if (text.charCodeAt(quote + 1) === QUOTE) {
            value += '"';
            from = quote + 2;
            continue;
          }
          at = quote + 1;
          break;
        }
        fields.push(value);
        if (problem === undefined && at < length) {
          const next = text.charCodeAt(at);
          if (next !== COMMA && next !== CR && next !== LF) {
            // `"ab"c`: not CSV. The record is refused, and reading goes on at its line's end.
            problem = `text follows a closing quote on line ${recordLine + lineBreaks(text.slice(start, at))}; a field with quotes must be quoted whole`;
            LINE_END.lastIndex = at;
            const lineEnd = LINE_END.exec(text);
            if (lineEnd === null) {
              if (!final) return unfinished(start, recordLine);
              at = length;
            } else at = lineEnd.index;
          }
        }
      } else {
        FIELD_END.lastIndex = at;
        const end = FIELD_END.exec(text);
        if (end === null && !final) return unfinished(start, recordLine);
        const stop = end === null ? length : end.index;
        fields.push(text.slice(at, stop));
        at = stop;
      }
      if (at - start > maxRecordLength) return tooLong(recordLine);
      if (at === length) {
        if (!final) return unfinished(start, recordLine);
        ended = true;
        break;
      }
      const delimiter = text.charCodeAt(at);
      if (delimiter === COMMA) {
        at += 1;
        // A comma last in the text: the next field may still come, or be empty at the file's end.
        if (at === length) {
          if (!final) return unfinished(start, recordLine);
          fields.push('');
          ended = true;
        }
        continue;
      }
      if (delimiter === CR) {
        if (at + 1 === length && !final) return unfinished(start, recordLine);
        at += text.charCodeAt(at + 1) === LF ? 2 : 1;
      } else {
        at += 1;
      }
      ended = true;
    }
    records.push(problem === undefined ? { line: recordLine, fields } : { line: recordLine, fields, problem });
    line = recordLine + lineBreaks(text.slice(start, at));
  }
  return { ok: true, records, rest: '', restLine: line };
}
