import { describe, expect, it } from 'vitest';

import { csvRecord, csvText } from './csv';

describe('CSV for spreadsheets', () => {
  it('neutralises text a spreadsheet would run as a formula (OWASP: = + - @ tab CR)', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r']) expect(csvText(`${start}1+1`).startsWith(start === '\r' ? '"\'' : "'")).toBe(true);
    expect(csvText('=HYPERLINK("http://evil","x")')).toBe('"\'=HYPERLINK(""http://evil"",""x"")"');
    expect(csvText('Fern')).toBe('Fern');
  });

  it('quotes commas, quotes and line ends, ends records with CRLF, and writes raw fields as given', () => {
    expect(csvRecord([{ raw: '-9223372036854775808' }, 'a, "b"', 'line\nend', ''])).toBe('-9223372036854775808,"a, ""b""","line\nend",\r\n');
  });
});
