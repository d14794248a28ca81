import { describe, expect, it } from 'vitest';

import { CSV_BOM, csvRecord, csvText } from './csv';

describe('CSV for spreadsheets', () => {
  it('neutralises text a spreadsheet would run as a formula (OWASP: = + - @ tab CR)', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r']) expect(csvText(`${start}1+1`).startsWith(start === '\r' ? '"\'' : "'")).toBe(true);
    expect(csvText('=HYPERLINK("http://evil","x")')).toBe('"\'=HYPERLINK(""http://evil"",""x"")"');
    expect(csvText('Fern')).toBe('Fern');
  });

  it('quotes commas, quotes and line ends, ends records with CRLF, and writes raw fields as given', () => {
    expect(csvRecord([{ raw: '-9223372036854775808' }, 'a, "b"', 'line\nend', ''])).toBe('-9223372036854775808,"a, ""b""","line\nend",\r\n');
  });

  it('leaves a formula character alone after the start: only a field that begins with one is neutralised', () => {
    for (const text of ['a=b', 'x-1', 'pot+soil', 'fern@home', 'a\tb']) expect(csvText(text)).toBe(text);
  });

  it('begins the file with the UTF-8 byte order mark, without which Excel reads UTF-8 as a legacy code page', () => {
    expect([...Buffer.from(CSV_BOM, 'utf8')]).toEqual([0xef, 0xbb, 0xbf]);
  });
});
