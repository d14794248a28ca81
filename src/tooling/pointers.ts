/**
 * Every pointer the repository's prose makes must lead somewhere (`npm run lint` runs this after ESLint).
 *
 * Prose is the docs and the comments: all of a Markdown file, and only the comments of code (a string in code
 * may name a path of another checkout or one about to be written; the compiler checks imports). In prose:
 *   - a path with a directory and a file name (`src/server/db/client.ts`, `db/client.ts`, `../../test-support/postgres.ts`,
 *     a Markdown link's target) must name a file: relative to the file that cites it, to the repository's root,
 *     or, for a short form such as `db/client.ts` or `rest/chain.ts`, the end of some file's path;
 *   - a bare file name (`scope.test.ts`) must be some file's name;
 *   - a directory under a top-level folder (`src/server/http/rest/`, `e2e/api`) must exist;
 *   - a link's anchor (`api.md#rate-limits`, `#webhooks`) must be a heading of the file it leads to, as GitHub
 *     writes heading anchors;
 *   - a section quoted after a Markdown file (`docs/api.md, "Rate limits"`) must be text of that file.
 * Left out: what the build, the bench or the app write (dist/, .bench-build/, bench/results/, data/, …), the
 * committed migrations (their bytes are checksummed by every database that applied them), URLs, absolute paths,
 * patterns (`*`, `{…}`, `<…>`, `…`), a value after `=` and a path of another commit (`130f597:src/cli/start.ts`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import ts from 'typescript';

export interface BrokenPointer {
  file: string;
  line: number;
  pointer: string;
  reason: string;
}

/** What the build, the tools and the running app write: named in prose, absent from a clean checkout. */
const WRITTEN_BY_TOOLS = [
  'dist/',
  '.bench-build/',
  '.test-build/',
  '.next/',
  'node_modules/',
  'src/generated/',
  'bench/results/',
  'data/',
  'test-results/',
  'playwright-report/',
  'scratch/',
  'reports/',
];

/** Files whose bytes may not change once committed, and files that are data rather than prose. */
const NOT_PROSE = [/^prisma\/(?:postgresql\/)?migrations\//, /^src\/generated\//, /\.(?:json|png|svg|lock)$/];

const FILE_EXTENSIONS = 'ts|tsx|mts|cts|mjs|cjs|js|md|json|sql|prisma|ya?ml|css|sh|toml|png|svg|html';
const FILE_NAME = new RegExp(`\\.(?:${FILE_EXTENSIONS})$`);
/** Names that end like a file and are not one (products, not paths). */
const NOT_FILES = /^(?:next|node|vue|chart|three|express|deno|bun)\.js$/i;

const CODE = /\.[cm]?[jt]sx?$/;
const CODE_COMMENT = /\/\/[^\n]*|\/\*[\s\S]*?\*\//g;

/** A path-like run of characters; what comes before it must not continue a word, a path or a URL. */
const PATH_TOKEN = /(?<![\w./@:=~$*[-])(?:\.{1,2}\/)*[\w@.-][\w@.[\]-]*(?:\/[\w@.[\]-]+)*\/?(?![\w*{<…$])/g;

/** What follows a cited Markdown file when it names a section: `, "Rate limits"` (an anchor or link end between). */
const QUOTED_SECTION = /(?:#[\w-]+)?\)?`?,?\s(?:section\s|under\s)?["“]([^"”]{1,120})["”]/y;

/** Bare names checked in comments: source files (build outputs such as server.mjs are named bare too). */
const SOURCE_NAME = /\.(?:ts|tsx|mts|cts|md|sql|prisma)$/;
/** Names of files the tools write, cited bare. */
const WRITTEN_NAMES = new Set(['next-env.d.ts']);

/** The prose of a file, the rest blanked to spaces so offsets and line numbers stay those of the file. */
export function proseOf(file: string, text: string): string {
  if (file.endsWith('.md')) return text;
  if (CODE.test(file)) return commentsOfCode(file, text);
  if (file.endsWith('.sql')) return keepMatches(text, /--[^\n]*/g);
  if (file.endsWith('.prisma')) return keepMatches(text, /\/\/[^\n]*/g);
  if (file.endsWith('.css')) return keepMatches(text, /\/\*[\s\S]*?\*\//g);
  // Shell scripts, YAML, TOML, .gitignore: their # comments.
  return keepMatches(text, /(?:^|(?<=\s))#(?!!)[^\n]*/gm);
}

function blank(text: string): string {
  return text.replace(/[^\n]/g, ' ');
}

function keepMatches(text: string, pattern: RegExp): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    out += blank(text.slice(last, match.index)) + match[0];
    last = match.index + match[0].length;
  }
  return out + blank(text.slice(last));
}

/** The comments of a TypeScript or JavaScript file: its literals blanked first, so a `//` inside one is not a comment. */
function commentsOfCode(file: string, text: string): string {
  const kind = file.endsWith('x') ? ts.ScriptKind.TSX : file.match(/\.[cm]?js$/) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const literals: Array<[number, number]> = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteralLike(node) ||
      ts.isTemplateLiteralToken(node) ||
      ts.isRegularExpressionLiteral(node) ||
      ts.isJsxText(node) ||
      node.kind === ts.SyntaxKind.NumericLiteral
    ) {
      literals.push([node.getStart(source), node.end]);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  let code = '';
  let last = 0;
  for (const [start, end] of literals) {
    code += text.slice(last, start) + blank(text.slice(start, end));
    last = end;
  }
  code += text.slice(last);
  return keepMatches(code, CODE_COMMENT);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
export function headingAnchor(heading: string): string {
  return heading
    .replace(/!?\[([^[\]]*)\]\([^()]*\)/g, '$1')
    .replace(/<[^<>]+>/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown file offers: its headings' (numbered as GitHub numbers repeats) and explicit ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(?:```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const heading = /^#{1,6}[ \t](.*)$/.exec(line);
    if (heading) {
      const base = headingAnchor(withoutClosingHashes(heading[1]!));
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count ? `${base}-${count}` : base);
    }
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id[1]!);
  }
  return anchors;
}

/** A heading's text without its optional closing run of `#` (`## Title ##`). */
function withoutClosingHashes(heading: string): string {
  const text = heading.trim();
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end--;
  return end < text.length && (end === 0 || text[end - 1] === ' ' || text[end - 1] === '\t') ? text.slice(0, end).trim() : text;
}

function trimEnd(text: string, characters: string): string {
  let end = text.length;
  while (end > 0 && characters.includes(text[end - 1]!)) end--;
  return text.slice(0, end);
}

/** Text as a reader sees it, for finding a quoted section: no emphasis, code marks or links' targets. */
function plainText(markdown: string): string {
  return markdown
    .replace(/\]\([^)]*\)/g, ']')
    .replace(/[*_`[\]]/g, '')
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

export class Repository {
  readonly files: Set<string>;
  private readonly directories = new Set<string>();
  private readonly topLevel = new Set<string>();
  private readonly texts = new Map<string, string>();

  constructor(
    readonly root: string,
    files: Iterable<string>,
  ) {
    this.files = new Set(files);
    for (const file of this.files) {
      const parts = file.split('/');
      this.topLevel.add(parts[0]!);
      for (let i = 1; i < parts.length; i++) this.directories.add(parts.slice(0, i).join('/'));
    }
  }

  text(file: string): string {
    let text = this.texts.get(file);
    if (text === undefined) {
      text = readFileSync(path.join(this.root, file), 'utf8');
      this.texts.set(file, text);
    }
    return text;
  }

  private exists(relative: string): boolean {
    const clean = relative.replace(/\/$/, '');
    if (this.files.has(clean) || this.directories.has(clean)) return true;
    // Ignored by git but there (a generated file named by a relative link): the file system decides.
    const absolute = path.join(this.root, clean);
    return !clean.startsWith('..') && existsSync(absolute) && (relative.endsWith('/') ? statSync(absolute).isDirectory() : true);
  }

  private writtenByTools(relative: string): boolean {
    const segments = `/${relative.replace(/\/$/, '')}/`;
    return WRITTEN_BY_TOOLS.some((prefix) => segments.includes(`/${prefix}`));
  }

  /** The repository path a pointer cited in `from` leads to, or null when it leads nowhere. */
  resolve(from: string, pointer: string): string | null {
    const clean = pointer.replace(/\/$/, '');
    const relative = /^\.{1,2}\//.test(pointer);
    const candidates = [path.posix.normalize(path.posix.join(path.posix.dirname(from), clean))];
    if (!relative) candidates.push(path.posix.normalize(clean));
    for (const candidate of candidates) if (this.exists(candidate)) return candidate;
    if (relative || this.topLevel.has(clean.split('/')[0]!)) return null;
    // A short form: the end of some file's (or folder's) path.
    const suffix = `/${clean}`;
    for (const file of this.files) if (file.endsWith(suffix)) return file;
    if (pointer.endsWith('/') || !FILE_NAME.test(clean)) for (const dir of this.directories) if (dir.endsWith(suffix)) return dir;
    return null;
  }

  /** Every broken pointer in the prose of `file`. */
  check(file: string): BrokenPointer[] {
    const text = this.text(file);
    const prose = proseOf(file, text).replace(/\b[a-z][a-z+.-]*:\/\/[^\s)>\]'"`]*/gi, (url) => blank(url));
    const lineStarts = [0];
    for (let i = 0; i < prose.length; i++) if (prose[i] === '\n') lineStarts.push(i + 1);
    const lineOf = (offset: number): number => {
      let low = 0;
      let high = lineStarts.length - 1;
      while (low < high) {
        const middle = (low + high + 1) >> 1;
        if (lineStarts[middle]! <= offset) low = middle;
        else high = middle - 1;
      }
      return low + 1;
    };
    const broken = new Map<string, BrokenPointer>();
    const report = (offset: number, pointer: string, reason: string): void => {
      const line = lineOf(offset);
      broken.set(`${line}\0${pointer}`, { file, line, pointer, reason });
    };

    const markdown = file.endsWith('.md');
    const fences = markdown ? fencedRanges(prose) : [];
    for (const match of prose.matchAll(PATH_TOKEN)) {
      const pointer = trimEnd(match[0], '.-');
      // In Markdown a bare name, or a relative path inside a code block, is a file of the reader's own project.
      const inFence = fences.some(([start, end]) => match.index >= start && match.index < end);
      const reason = this.checkPath(file, pointer, { bareNames: !markdown, relativePaths: !inFence });
      if (reason) report(match.index, pointer, reason);
    }
    if (file.endsWith('.md')) {
      for (const match of linkTargets(prose)) {
        const reason = this.checkLink(file, match.target);
        if (reason) report(match.offset, match.target, reason);
      }
    }
    for (const match of prose.matchAll(PATH_TOKEN)) {
      const cited = trimEnd(match[0], '.-');
      if (!cited.endsWith('.md')) continue;
      QUOTED_SECTION.lastIndex = match.index + cited.length;
      const quote = QUOTED_SECTION.exec(prose);
      const target = quote && this.resolve(file, cited);
      if (!quote || !target || this.writtenByTools(target) || !target.endsWith('.md')) continue;
      const quoted = trimEnd(plainText(quote[1]!), '.,;:');
      if (!plainText(this.text(target)).includes(quoted)) report(match.index, `${cited}, "${quote[1]!.replace(/\s+/g, ' ')}"`, `no such text in ${target}`);
    }
    return [...broken.values()].sort((a, b) => a.line - b.line);
  }

  private checkPath(file: string, pointer: string, scope: { bareNames: boolean; relativePaths: boolean }): string | null {
    if (!pointer || pointer.startsWith('@')) return null;
    const relative = /^\.{1,2}\//.test(pointer);
    if (relative && !scope.relativePaths) return null;
    const clean = path.posix.normalize(pointer.replace(/\/$/, ''));
    const firstSegment = clean.split('/')[0]!;
    // `.meta(`, `...rest`, `.wasm`: a dot that begins no path of this repository (`.ci/run` does).
    if (pointer.startsWith('.') && !relative && !this.topLevel.has(firstSegment)) return null;
    if (this.writtenByTools(clean) || WRITTEN_NAMES.has(path.posix.basename(clean))) return null;
    const isFile = FILE_NAME.test(pointer);
    if (!relative && !clean.includes('/') && !this.topLevel.has(clean)) {
      // A bare name: a source file's name somewhere (a product name such as Node.js is not one).
      if (!scope.bareNames || !SOURCE_NAME.test(pointer) || NOT_FILES.test(pointer)) return null;
      return this.resolve(file, pointer) ? null : 'no file of that name';
    }
    const rooted = relative || this.topLevel.has(firstSegment);
    // A slash between words (read/write, application/json) is not a path; a path has a file name or a known root.
    if (!isFile && !rooted) return null;
    if (!isFile && !pointer.endsWith('/') && !pointer.startsWith('.') && clean.split('/').length < 2) return null;
    return this.resolve(file, pointer) ? null : isFile ? 'no such file' : 'no such folder';
  }

  private checkLink(file: string, target: string): string | null {
    const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
    let linked = file;
    if (pathPart) {
      const decoded = decodeURI(pathPart);
      const resolved = this.resolve(file, decoded.startsWith('.') ? decoded : `./${decoded}`);
      if (!resolved) return 'the link leads to no file';
      linked = resolved;
    }
    if (anchor === undefined || !linked.endsWith('.md') || this.writtenByTools(linked)) return null;
    return anchorsOf(this.text(linked)).has(anchor) ? null : `no heading with the anchor #${anchor} in ${linked}`;
  }
}

/** Where a Markdown file's fenced code blocks are, as offsets. */
function fencedRanges(markdown: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let start = -1;
  for (const line of markdown.matchAll(/^[ \t]*(?:```|~~~)[^\n]*$/gm)) {
    if (start < 0) start = line.index;
    else {
      ranges.push([start, line.index + line[0].length]);
      start = -1;
    }
  }
  return ranges;
}

function* linkTargets(markdown: string): Generator<{ target: string; offset: number }> {
  for (const match of markdown.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (/^[a-z][a-z+.-]*:/i.test(match[1]!)) continue;
    yield { target: match[1]!, offset: match.index };
  }
  for (const match of markdown.matchAll(/^[ \t]*\[[^\]\n]+\]:[ \t]*<?([^\s<>]+)/gm)) {
    if (/^[a-z][a-z+.-]*:/i.test(match[1]!)) continue;
    yield { target: match[1]!, offset: match.index };
  }
}

/** The files whose prose is checked: every file git tracks or would track, but data and migrations. */
export function proseFiles(files: Iterable<string>): string[] {
  return [...files].filter((file) => !NOT_PROSE.some((pattern) => pattern.test(file)));
}

export function checkRepository(root: string, files: string[]): BrokenPointer[] {
  const repository = new Repository(root, files);
  return proseFiles(files).flatMap((file) => repository.check(file));
}

function gitFiles(root: string): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file && existsSync(path.join(root, file)));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = path.resolve(import.meta.dirname, '../..');
  const broken = checkRepository(root, gitFiles(root));
  for (const { file, line, pointer, reason } of broken) console.error(`${file}:${line}: ${pointer}: ${reason}`);
  if (broken.length) {
    console.error(`\n${broken.length} pointer${broken.length === 1 ? '' : 's'} lead nowhere (src/tooling/pointers.ts says what is checked).`);
    process.exit(1);
  }
  console.log('pointers: every path, link, anchor and quoted section in the docs and comments leads somewhere');
}
