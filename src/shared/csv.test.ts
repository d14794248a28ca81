import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { CSV_BOM, csvRecord, csvText, readCsvRecords, readCsvText } from './csv';

const MAX = 4_096;

/** Every record of `text`, read as one piece. */
const readAll = (text: string) => readCsvRecords(text, { firstLine: 1, final: true, maxRecordLength: MAX });

/** Every record of `text`, read in pieces cut at `cuts`, carrying each piece's rest to the next as the import does. */
function readInPieces(text: string, cuts: number[]) {
  const records = [];
  let rest = '';
  let line = 1;
  const bounds = [0, ...cuts.filter((cut) => cut > 0 && cut < text.length).sort((a, b) => a - b), text.length];
  for (let index = 1; index < bounds.length; index++) {
    const read = readCsvRecords(rest + text.slice(bounds[index - 1], bounds[index]), { firstLine: line, final: index === bounds.length - 1, maxRecordLength: MAX });
    if (!read.ok) return read;
    records.push(...read.records);
    rest = read.rest;
    line = read.restLine;
  }
  return { ok: true, records, rest };
}

describe('CSV for spreadsheets', () => {
  it('neutralises text a spreadsheet would run as a formula (OWASP: = + - @ tab CR)', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r']) expect(csvText(`${start}1+1`).startsWith(start === '\r' ? '"\'' : "'")).toBe(true);
    expect(csvText('=HYPERLINK("http://evil","x")')).toBe('"\'=HYPERLINK(""http://evil"",""x"")"');
    expect(csvText('Fern')).toBe('Fern');
    // Text that already looks neutralised gets one more apostrophe, so reading it back takes one off.
    expect(csvText("'=x")).toBe("''=x");
    expect(csvText("'plain")).toBe("'plain");
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

describe('reading CSV', () => {
  it('reads what the writer wrote, text exactly as it was given, whichever way the file is cut into pieces', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', '😀', ',', '"', '\r', '\n', '=', '+', '-', '@', '\t', "'", ' '), maxLength: 12 });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), text, text), { minLength: 1, maxLength: 8 }), fc.array(fc.nat(400)), (rows, cuts) => {
        const file = csvRecord(['id', 'name', 'tag']) + rows.map(([id, name, tag]) => csvRecord([{ raw: id.toString() }, name, tag])).join('');
        const read = readInPieces(file, cuts);
        expect(read.ok).toBe(true);
        if (!read.ok) return;
        expect(read.rest).toBe('');
        expect(read.records.map((record) => record.fields)).toEqual([['id', 'name', 'tag'], ...rows.map(([id, name, tag]) => [id.toString(), csvText(name).replace(/^"|"$/g, '').replaceAll('""', '"'), csvText(tag).replace(/^"|"$/g, '').replaceAll('""', '"')])]);
        expect(read.records.slice(1).map((record) => [BigInt(record.fields[0]!), readCsvText(record.fields[1]!), readCsvText(record.fields[2]!)])).toEqual(rows);
        expect(read.records.every((record) => record.problem === undefined)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('numbers records by the line they start on, across quoted line breaks, CRLF, LF, CR and empty lines', () => {
    const read = readAll('id,name\r\n\r\n1,"two\r\nlines"\n\n\n2,b\r3,c');
    expect(read).toEqual({
      ok: true,
      rest: '',
      restLine: 8,
      records: [
        { line: 1, fields: ['id', 'name'] },
        { line: 3, fields: ['1', 'two\r\nlines'] },
        { line: 7, fields: ['2', 'b'] },
        { line: 8, fields: ['3', 'c'] },
      ],
    });
  });

  it('hands back a record the piece ends in, a CR at the very end included (its LF may follow)', () => {
    expect(readCsvRecords('1,a\r\n2,b', { firstLine: 1, final: false, maxRecordLength: MAX })).toEqual({ ok: true, records: [{ line: 1, fields: ['1', 'a'] }], rest: '2,b', restLine: 2 });
    expect(readCsvRecords('1,a\r', { firstLine: 5, final: false, maxRecordLength: MAX })).toEqual({ ok: true, records: [], rest: '1,a\r', restLine: 5 });
    expect(readCsvRecords('1,"a""', { firstLine: 1, final: false, maxRecordLength: MAX })).toMatchObject({ ok: true, records: [], rest: '1,"a""' });
    expect(readCsvRecords('1,', { firstLine: 1, final: true, maxRecordLength: MAX })).toMatchObject({ records: [{ fields: ['1', ''] }] });
  });

  it('refuses a record whose quote is never closed, or with text after its closing quote, and reads on', () => {
    expect(readAll('1,"a"b,c\r\n2,d\r\n3,"never closed\r\n4,e\r\n')).toEqual({
      ok: true,
      rest: '',
      restLine: 5,
      records: [
        { line: 1, fields: ['1', 'a'], problem: 'text follows a closing quote on line 1; a field with quotes must be quoted whole' },
        { line: 2, fields: ['2', 'd'] },
        { line: 3, fields: ['3', 'never closed\r\n4,e\r\n'], problem: 'the quote opened on line 3 is never closed' },
      ],
    });
    // A quote inside an unquoted field is text.
    expect(readAll('1,a"b"').ok && readAll('1,a"b"')).toMatchObject({ records: [{ fields: ['1', 'a"b"'] }] });
  });

  it('keeps no more than a record between pieces: a quote never closed stops the file at the record limit', () => {
    const unclosed = `1,"${'x'.repeat(MAX)}`;
    expect(readCsvRecords(`0,ok\n${unclosed}`, { firstLine: 1, final: false, maxRecordLength: MAX })).toEqual({
      ok: false,
      line: 2,
      problem: 'the record on line 2 is longer than 4,096 characters (a quote never closed?): the rest of the file cannot be read',
    });
    expect(readAll(`0,${'y'.repeat(MAX + 1)}`)).toMatchObject({ ok: false, line: 1 });
    // A long but whole record within the limit is read.
    expect(readAll(`0,${'y'.repeat(MAX - 2)}\n`)).toMatchObject({ ok: true });
  });

  it('reads a million empty lines as none, in linear time', () => {
    const started = performance.now();
    const read = readAll(`id,name\r\n${'\r\n'.repeat(1_000_000)}1,a\r\n`);
    expect(read).toMatchObject({ ok: true, records: [{ line: 1 }, { line: 1_000_002, fields: ['1', 'a'] }] });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('takes off only the apostrophe the writer put on', () => {
    for (const text of ['=1+1', "'=1+1", "''@x", "'plain", 'plain', '-5', "'", '']) expect(readCsvText(csvText(text).replace(/^"|"$/g, '').replaceAll('""', '"'))).toBe(text);
  });
});
