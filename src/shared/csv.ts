/**
 * CSV as spreadsheets open it (RFC 4180): fields separated by commas, records by CRLF, a field quoted when it
 * holds a comma, a quote, CR or LF (quotes doubled), and a UTF-8 byte order mark first, without which Excel
 * reads UTF-8 as the machine's legacy code page. Text that a spreadsheet would run as a formula (OWASP, "CSV
 * Injection": a field starting with = + - @, a tab or a carriage return) gets a leading apostrophe, which
 * spreadsheets show as text. Numbers the export writes itself (ids) are exempt: a negative id is data.
 */
export const CSV_BOM = '\uFEFF';
export const CSV_NEWLINE = '\r\n';

const FORMULA_START = /^[=+\-@\t\r]/;
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
