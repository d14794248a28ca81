/**
 * The fuzz run's generators: JSON text built piece by piece, so numbers, escapes and bytes are exactly what
 * is sent; headers, paths and queries. Each case carries what the oracle (oracle.ts) expects of it.
 */
import fc from 'fast-check';

import { BODY_LIMIT, combine, type Expectation, INT64_MAX, INT64_MIN, isUtf8, type TextField, textRule } from './oracle';

export type Value = { text: string; validJson: boolean; asId: Expectation; id?: bigint; asText: (max: number) => Expectation; string?: string };

export const notText = () => 'refused' as Expectation;

export const TEXT_PIECES = [
  'a', 'Z', '7', ' ', 'é', 'e\u0301', '日本', 'ß', '🌵', '👩‍👩‍👧', '🏳️‍🌈', '\u202e', '\u200f', '\u200b', '\u2060', '\ufeff', '\u00a0', '\u3000', '\u2028',
  '\u180e', '\ufffd', '\uffff', '"', '\\', '/', '<script>', "'; DROP TABLE Plant; --", '%00', '${x}', '{{x}}', '\ud83c\udf35',
  '\u0000', '\u0007', '\n', '\t', '\r', '\u001b', '\u007f', '\u0085', '\u009f',
  '\ud800', '\udfff', '\udbff', '\udc00',
];

/** A JS string as JSON text: escapes chosen per character; lone surrogates always as \\uXXXX escapes. */
export function jsonString(value: string, escapeAll: boolean, rawControls: boolean): { text: string; validJson: boolean } {
  let out = '"';
  let validJson = true;
  for (const unit of value.split('')) {
    const code = unit.charCodeAt(0);
    const escaped = `\\u${code.toString(16).padStart(4, '0')}`;
    if (unit === '"') out += '\\"';
    else if (unit === '\\') out += '\\\\';
    else if (code < 0x20) {
      if (rawControls) {
        out += unit;
        validJson = false;
      } else out += code === 10 ? '\\n' : code === 9 ? '\\t' : escaped;
    } else if (code >= 0xd800 && code <= 0xdfff) out += escaped;
    else if (escapeAll && code > 0x7e) out += escaped;
    else out += unit;
  }
  return { text: `${out}"`, validJson };
}

// Recombine surrogate pairs that were split by split(''): a pair escaped as two \\u escapes is one code point.
export const textArbitrary = (lengths: number[]) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.array(fc.constantFrom(...TEXT_PIECES), { minLength: 0, maxLength: 8 }).map((pieces) => pieces.join('')) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom('a', '🌵', 'é', '\u200b', ' ', '\ud800', '\u0301'), fc.constantFrom(...lengths)).map(([piece, count]) => piece.repeat(count)) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', '🌵'), fc.constantFrom(...lengths), fc.constantFrom('\ud800', '\udc00', '\u0000', ' ', '🌵')).map(([piece, count, last]) => piece.repeat(count - 1) + last) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  );

export const stringValue = (lengths: number[]): fc.Arbitrary<Value> =>
  fc.tuple(textArbitrary(lengths), fc.boolean(), fc.nat(20)).map(([value, escapeAll, roll]) => {
    const rawControls = roll === 0;
    const { text, validJson } = jsonString(value, escapeAll, rawControls);
    return {
      text,
      validJson,
      asId: 'refused' as Expectation,
      asText: (max: number) => textRule(value, max),
      string: value,
    };
  });

export const ID_EDGES = [0n, 1n, -1n, INT64_MAX, INT64_MIN, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, 9007199254740993n];
/** A few ids reused on purpose, so creates meet taken ids. */
export const REUSED_IDS = [4_242n, 4_243n, 4_244n];

export const idValue: fc.Arbitrary<Value> = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(fc.bigInt(INT64_MIN, INT64_MAX), fc.constantFrom(...ID_EDGES, ...REUSED_IDS)).map((id) => ({ text: String(id), validJson: true, asId: 'ok' as Expectation, id, asText: notText })) },
  { weight: 1, arbitrary: fc.constant({ text: '-0', validJson: true, asId: 'ok' as Expectation, id: 0n, asText: notText }) },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(
        '9223372036854775808', '-9223372036854775809', '18446744073709551616', `1${'0'.repeat(400)}`, `-${'9'.repeat(30)}`,
        '1e400', '1E2', '1e0', '1.0', '1.5', '-0.0', '0.1e1', '-1.5e3', '5e-324', '1e-400', '9007199254740993.0', '1e19',
        '"7"', '"9223372036854775807"', 'true', 'false', 'null', '[]', '[7]', '{}', '{"$numberLong": "7"}', '""',
      )
      .map((text) => ({ text, validJson: true, asId: 'refused' as Expectation, asText: notText })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('NaN', 'Infinity', '-Infinity', '0x10', '+1', '01', '-01', '.5', '1.', '--1', '1e', '1_000', '7n', "'7'", 'undefined')
      .map((text) => ({ text, validJson: false, asId: 'refused' as Expectation, asText: notText })),
  },
);

export const otherValue: fc.Arbitrary<Value> = fc
  .constantFrom('null', 'true', '0', '3.5', '[]', '["x"]', '{}', '{"x": 1}', `[${'['.repeat(50)}${']'.repeat(50)}]`)
  .map((text) => ({ text, validJson: true, asId: 'refused' as Expectation, asText: notText }));

/** A text field's value: text around its length limit (and well past it), or not text at all. */
const fieldValue = (maxLength: number) =>
  fc.oneof({ weight: 5, arbitrary: stringValue([1, maxLength - 1, maxLength, maxLength + 1, Math.ceil(maxLength * 1.25)]) }, { weight: 1, arbitrary: otherValue });

/** Ways to write a key: the plain name, or escapes that mean the same key. */
export const keyText = (key: string, variant: number): string => {
  if (variant === 1 && key.length > 1) return `"${key[0]}\\u${key.charCodeAt(1).toString(16).padStart(4, '0')}${key.slice(2)}"`;
  if (variant === 2) return `"${key.split('').map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;
  return JSON.stringify(key);
};

/** Keys that are no field: an owner's, the prototype's, and near misses of the fields' names. */
export const UNKNOWN_KEYS = ['ownerId', 'owner', 'createdAt', 'userId', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'ID', 'Name', 'name ', ' id', '', 'tag\u0000', 'n\u0430me', 'nam\u0065\u0301', 'id\ud800'];

/** A plant as a create sends it: the id and the fields' texts. */
export type SentPlant = { id: bigint } & Record<string, string | bigint>;
export type BodyCase = { bytes: Buffer; expectation: Expectation; intended?: SentPlant; note: string };

export const whiteSpace = fc.constantFrom('', '', ' ', '\n', '\t', '\r\n', '  ');

/** Create bodies for a NewPlant of these fields (oracle.ts, textFieldsOf): each field present or not, valid or not. */
export const bodyCase = (fields: readonly TextField[]): fc.Arbitrary<BodyCase> => {
  const keys = ['id', ...fields.map((field) => field.name)];
  const unknownKeys = UNKNOWN_KEYS.filter((key) => !keys.includes(key));
  return fc
    .record({
      id: fc.option(idValue, { freq: 8 }),
      values: fc.tuple(...fields.map((field) => fc.option(fieldValue(field.maxLength), { freq: field.optional ? 2 : 8 }))),
      unknown: fc.array(fc.tuple(fc.constantFrom(...unknownKeys), fc.oneof(otherValue, stringValue([1]))), { maxLength: 2 }),
      duplicate: fc.option(fc.constantFrom(...keys), { freq: 10 }),
      keyVariants: fc.array(fc.nat(6), { minLength: keys.length, maxLength: keys.length }),
      order: fc.nat(5),
      spaces: fc.array(whiteSpace, { minLength: 8, maxLength: 8 }),
      shape: fc.oneof(
        { weight: 14, arbitrary: fc.constant('object' as const) },
        { weight: 1, arbitrary: fc.constantFrom('array', 'string', 'number', 'null', 'empty', 'truncated', 'trailing', 'two values', 'deep') },
        { weight: 1, arbitrary: fc.constantFrom('bom', 'invalid utf-8', 'utf-16', 'oversize', 'nul byte', 'latin-1') },
      ),
      badBytes: fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80]),
    })
    .map((spec): BodyCase => {
      const entries: { key: string; text: string; value?: Value }[] = [];
      const given: [string, Value | null][] = [['id', spec.id], ...fields.map((field, index): [string, Value | null] => [field.name, spec.values[index] ?? null])];
      given.forEach(([key, value], index) => {
        if (value) entries.push({ key, text: keyText(key, spec.keyVariants[index]!), value });
      });
      for (const [key, value] of spec.unknown) entries.push({ key, text: JSON.stringify(key), value });
      if (spec.duplicate) {
        const existing = entries.find((entry) => entry.key === spec.duplicate);
        if (existing) entries.push({ ...existing });
      }
      // A few orders: as built, reversed, rotated.
      if (spec.order === 1) entries.reverse();
      if (spec.order === 2 && entries.length > 1) entries.push(entries.shift()!);
      const s = spec.spaces;
      const members = entries.map((entry, index) => `${s[index % 8]}${entry.text}${s[(index + 1) % 8]}:${s[(index + 2) % 8]}${entry.value!.text}`);
      const objectText = `${s[0]}{${members.join(',')}${s[3]}}${s[4]}`;

      const sentKeys = entries.map((entry) => entry.key);
      const validJson = entries.every((entry) => entry.value!.validJson);
      const parts: Expectation[] = [validJson ? 'ok' : 'refused'];
      if (new Set(sentKeys).size !== sentKeys.length) parts.push('refused');
      if (sentKeys.some((key) => !keys.includes(key))) parts.push('refused');
      parts.push(spec.id ? spec.id.asId : 'refused');
      fields.forEach((field, index) => {
        const value = spec.values[index];
        if (value) parts.push(value.asText(field.maxLength));
        else if (!field.optional) parts.push('refused');
      });
      let expectation = combine(parts);
      const complete = spec.id?.id !== undefined && fields.every((field, index) => field.optional || spec.values[index]?.string !== undefined);
      const intended: SentPlant | undefined = complete
        ? {
            id: spec.id!.id!,
            ...Object.fromEntries(fields.flatMap((field, index) => (spec.values[index]?.string !== undefined ? [[field.name, spec.values[index].string]] : []))),
          }
        : undefined;

      let bytes = Buffer.from(objectText, 'utf8');
      switch (spec.shape) {
        case 'object':
          break;
        case 'array':
          bytes = Buffer.from(`[${objectText}]`);
          expectation = 'refused';
          break;
        case 'string':
          bytes = Buffer.from(JSON.stringify(objectText));
          expectation = 'refused';
          break;
        case 'number':
          bytes = Buffer.from('9223372036854775807');
          expectation = 'refused';
          break;
        case 'null':
          bytes = Buffer.from('null');
          expectation = 'refused';
          break;
        case 'empty':
          bytes = Buffer.alloc(0);
          expectation = 'refused';
          break;
        case 'truncated':
          bytes = Buffer.from(objectText.trimEnd().slice(0, -1));
          expectation = 'refused';
          break;
        case 'trailing':
          bytes = Buffer.from(`${objectText}}`);
          expectation = 'refused';
          break;
        case 'two values':
          bytes = Buffer.from(`${objectText} {}`);
          expectation = 'refused';
          break;
        case 'deep':
          bytes = Buffer.from(`{"id": 1, "name": ${'['.repeat(20_000)}${']'.repeat(20_000)}}`);
          expectation = 'refused';
          break;
        case 'bom':
          // RFC 8259 lets a parser ignore a BOM: accepting or refusing are both fine, storing garbage is not.
          bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
          if (expectation === 'ok') expectation = 'either';
          break;
        case 'invalid utf-8': {
          // Inside the name's string when there is one, else anywhere.
          const at = bytes.indexOf('"', Math.max(0, bytes.indexOf('name') + 6));
          const position = at > 0 ? at + 1 : Math.floor(bytes.length / 2);
          bytes = Buffer.concat([bytes.subarray(0, position), Buffer.from(spec.badBytes), bytes.subarray(position)]);
          expectation = 'refused';
          break;
        }
        case 'utf-16':
          bytes = Buffer.from(objectText, 'utf16le');
          expectation = 'refused';
          break;
        case 'oversize':
          bytes = Buffer.from(`${objectText}${' '.repeat(BODY_LIMIT + 1 - bytes.length)}`);
          expectation = 'refused';
          break;
        case 'nul byte':
          bytes = Buffer.concat([bytes, Buffer.from([0])]);
          expectation = 'refused';
          break;
        case 'latin-1': {
          const latin = Buffer.from(objectText, 'latin1');
          // Identical bytes when the text is ASCII; otherwise not UTF-8 any more.
          if (!latin.equals(bytes)) expectation = 'refused';
          bytes = latin;
          break;
        }
      }
      if (bytes.length > BODY_LIMIT) expectation = 'refused';
      // Bytes that are not UTF-8 are refused; a mutation meant to break UTF-8 that happens not to is left open.
      if (!isUtf8(bytes)) expectation = 'refused';
      else if (spec.shape === 'invalid utf-8') expectation = 'either';
      else if (spec.shape === 'latin-1' && !bytes.equals(Buffer.from(objectText, 'utf8'))) expectation = 'either';
      return { bytes, expectation, intended: expectation === 'refused' ? undefined : intended, note: spec.shape };
    });
};

// ---------------------------------------------------------------------------------------------------------
// Headers

export const CONTENT_TYPES: [string | null, Expectation][] = [
  ['application/json', 'ok'],
  ['application/json; charset=utf-8', 'ok'],
  ['application/json;charset=UTF-8', 'ok'],
  ['Application/JSON', 'ok'],
  ['application/json; charset="utf-8"', 'ok'],
  ['application/json ; charset=utf8', 'ok'],
  ['application/json; foo=bar', 'ok'],
  ['application/json; CHARSET=UTF-8', 'ok'],
  ['application/json; charset=', 'either'],
  ['application/json; charset=latin1', 'refused'],
  ['application/json; charset=utf-16', 'refused'],
  ['application/json, text/plain', 'refused'],
  ['application/jsonx', 'refused'],
  ['text/json', 'either'],
  ['application/problem+json', 'either'],
  ['application/merge-patch+json', 'either'],
  ['text/plain', 'refused'],
  ['application/x-www-form-urlencoded', 'refused'],
  ['multipart/form-data; boundary=x', 'refused'],
  ['*/*', 'refused'],
  ['', 'refused'],
  [null, 'refused'],
  [`application/json; x=${'y'.repeat(3_000)}`, 'ok'],
];

export type AuthCase = { headers: [string, string][]; expectation: Expectation; token: 'admin' | 'member' | 'none' };

/** Authorization headers, right and wrong, for the tokens of the run. */
export const authCase = (tokens: { admin: string; member: string }): fc.Arbitrary<AuthCase> =>
  fc.constantFrom<() => AuthCase>(
    () => ({ headers: [['Authorization', `Bearer ${tokens.admin}`]], expectation: 'ok', token: 'admin' }),
    () => ({ headers: [['Authorization', `Bearer ${tokens.member}`]], expectation: 'ok', token: 'member' }),
    () => ({ headers: [['authorization', `bearer ${tokens.member}`]], expectation: 'ok', token: 'member' }),
    () => ({ headers: [['AUTHORIZATION', `BEARER   ${tokens.admin}`]], expectation: 'ok', token: 'admin' }),
    () => ({ headers: [], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', '']], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', 'Bearer']], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', 'Bearer ']], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', `Bearer ${tokens.admin} extra`]], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', `Bearer ${tokens.admin}x`]], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', `Bearer ${tokens.admin.toUpperCase()}`]], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', `Basic ${Buffer.from(`admin:${tokens.admin}`).toString('base64')}`]], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', tokens.admin]], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', `Bearer ${'a'.repeat(5_000)}`]], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', `Bearer pst_${'\u00e9'.repeat(43)}`]], expectation: 'refused', token: 'none' }),
    // Two Authorization fields: with two different tokens neither may win.
    () => ({ headers: [['Authorization', `Bearer ${tokens.admin}`], ['Authorization', `Bearer ${tokens.member}`]], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', `Bearer ${tokens.member}`], ['Authorization', 'Bearer pst_invalid']], expectation: 'refused', token: 'none' }),
    () => ({ headers: [['Authorization', `Bearer ${tokens.member}`], ['Authorization', `Bearer ${tokens.member}`]], expectation: 'either', token: 'member' }),
  ).map((make) => make());

export const EXTRA_HEADERS: [string, string][] = [
  // One long header at a time stays under Node's 16 KiB header limit (that limit has its own test below).
  ['X-Filler', 'x'.repeat(5_000)],
  ['X-Forwarded-For', '1.2.3.4, <script>, ::1'],
  ['Origin', 'http://evil.example'],
  ['Accept', 'text/html'],
  ['Accept', 'application/xml;q=1, */*;q=0'],
  ['Accept-Encoding', 'gzip, br'],
  ['Accept-Charset', 'latin1'],
  ['Cookie', 'token=pst_x; session=1'],
  ['X-HTTP-Method-Override', 'DELETE'],
  ['X-Original-URL', '/api/plants/1'],
  ['X-Rewrite-URL', '/api/health'],
  ['Forwarded', 'for=1.2.3.4;host=evil.example;proto=https'],
  ['X-Forwarded-Host', 'evil.example'],
  ['Range', 'bytes=0-1'],
  ['If-None-Match', '*'],
  ['Content-Encoding', 'gzip'],
  ['Connection', 'close'],
  ['TE', 'trailers'],
  ['X-Latin-1', 'caf\u00e9 \u00ff'],
];

/** Host header values: the ordinary ones must work; odd ones must not fail the server nor change the route. */
export const hostValue = (port: number) =>
  fc.constantFrom<[() => string, Expectation]>(
    [() => `127.0.0.1:${port}`, 'ok'],
    [() => `localhost:${port}`, 'ok'],
    [() => 'LOCALHOST', 'ok'],
    [() => 'plants.example:443', 'ok'],
    [() => '[::1]:80', 'ok'],
    [() => 'a@b', 'either'],
    [() => 'user:pw@127.0.0.1', 'either'],
    [() => '127.0.0.1:99999', 'either'],
    [() => '[::1', 'either'],
    [() => 'x y', 'either'],
    [() => '', 'either'],
    [() => 'x/y', 'either'],
    [() => 'x?y', 'either'],
    [() => 'x#y', 'either'],
    [() => '%41', 'either'],
    [() => 'a\\b', 'either'],
  );

// ---------------------------------------------------------------------------------------------------------
// Paths and queries

export const ID_SPELLINGS = fc.oneof(
  { weight: 3, arbitrary: fc.oneof(fc.bigInt(INT64_MIN, INT64_MAX), fc.constantFrom(...ID_EDGES, ...REUSED_IDS)).map(String) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '%2F', '..', '.', '%2e%2e', '%2E', '%00', '%', '%zz', '%C0%AF', '%ED%A0%80', '%E2%80%AE1', '%EF%BC%91', '%D9%A1', '%F0%9F%8C%B5',
      '%31', '%2D1', '%2B1', '+1', '-0', '00001', '1e3', '1.0', '0x10', '%201', '1%20', '1;x', '1,2', '1%2C2', '[1]', '{1}', 'null', 'true',
      '9223372036854775808', '-9223372036854775809', '9'.repeat(21), '1'.repeat(2_000), '9'.repeat(8_000), '',
      '1/', '1//', '1/..', '1/../2', '..%2F..%2Fhealth', '%2e%2e%2fhealth', '1%2F2', '1?x=1', '1#frag', '1%23', '1%3F', '%7B1%7D', '~1',
    ),
  },
);

export const PATHS = (id: string): string[] => [
  '/api/plants',
  `/api/plants/${id}`,
  `/api/plants/${id}/`,
  `/api//plants/${id}`,
  `/api/plants//${id}`,
  `/api/plants/${id}/x`,
  '/api/plants/',
  '//api/plants',
  '/api/health',
  '/api/health/',
  '/api/openapi.json',
  '/api/openapi.json/..',
  '/api',
  '/api/',
  '/api/nope',
  '/api/plants/../health',
  '/api/plants/../../api/plants',
  '/api/docs/../plants',
  '/api/trpc/../plants',
  '/api/%70lants',
  '/api/plants%2F1',
  '/api/plants;x=1',
  '/api/PLANTS',
  // Long, but with the id under Node's 16 KiB header limit (which has its own test).
  `/api/plants/${id}?${'a'.repeat(4_000)}=1`,
];

export const queryValue = fc.oneof(
  fc.integer({ min: -5, max: 1_005 }).map(String),
  fc.bigInt(INT64_MIN - 5n, INT64_MAX + 5n).map(String),
  fc.constantFrom('', 'abc', '1.5', '1e2', '%31', '+1', '%2B1', ' 1', '1 ', '0x10', '１', '%EF%BC%91', '1%00', 'null', '[]', '-0', '00100', '9'.repeat(40), '%', '%zz', '100;1'),
);

export const queryArbitrary = fc
  .record({
    limit: fc.option(queryValue, { freq: 2 }),
    after: fc.option(queryValue, { freq: 2 }),
    repeat: fc.option(fc.constantFrom('limit', 'after'), { freq: 6 }),
    extra: fc.option(fc.constantFrom('x=1', 'limit[]=1', 'after[]=2', 'LIMIT=5', '__proto__=1', 'constructor=1', 'a=%ZZ', '&&&', '=', 'limit', 'after'), { freq: 3 }),
  })
  .map(({ limit, after, repeat, extra }) => {
    const parts: string[] = [];
    if (limit !== null) parts.push(`limit=${limit}`);
    if (after !== null) parts.push(`after=${after}`);
    if (repeat === 'limit') parts.push('limit=2');
    if (repeat === 'after') parts.push('after=1');
    if (extra !== null) parts.push(extra);
    return parts.join('&');
  });
