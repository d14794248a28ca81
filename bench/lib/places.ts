/**
 * Where code lives, as the bench reports it: a package under node_modules, a folder under src/, Node's own
 * modules. The servers run as bundles, so a (script, line, column) is mapped through the bundle's source
 * map first. The heap summary (heap.ts) and the CPU profile summary (profile.ts) both place code this way.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { projectRoot } from './paths';

/** `pkg:<name>` for node_modules, the first two folders under src/, `node:<module>` for Node's own code. */
export function placeOfFile(file: string): string {
  if (file.startsWith('node:')) return `node:${file.slice(5).split('/').slice(0, file.startsWith('node:internal/') ? 2 : 1).join('/')}`;
  const modules = file.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const parts = file.slice(modules + '/node_modules/'.length).split('/');
    return `pkg:${parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  const relative = path.relative(projectRoot, file);
  if (!relative.startsWith('..')) {
    const parts = relative.split(path.sep);
    if (parts[0] === 'src') return parts.length > 3 ? parts.slice(0, 3).join('/') : parts.slice(0, -1).join('/') || relative;
    return relative;
  }
  return file;
}

/** Maps (script, line, column) of the bundle's code to a place, through `<script>.map`. */
export class Places {
  private maps = new Map<string, SourceMap | null>();
  private declarations = new Map<string, Map<string, string>>();

  private fileOf(url: string): string | null {
    if (url.startsWith('file://')) {
      try {
        return fileURLToPath(url);
      } catch {
        return null;
      }
    }
    return url.startsWith('/') ? url : null;
  }

  private mapOf(file: string): SourceMap | null {
    if (!this.maps.has(file)) {
      const mapFile = `${file}.map`;
      this.maps.set(file, existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : null);
    }
    return this.maps.get(file)!;
  }

  at(url: string, line: number, column: number): string {
    return this.locate(url, line, column).place;
  }

  /** The place, and the original file and line (1-based) where the source map knows them. */
  locate(url: string, line: number, column: number): { place: string; file: string | null; line: number } {
    if (!url) return { place: '(code made by eval or new Function)', file: null, line: line + 1 };
    if (url.startsWith('node:')) return { place: placeOfFile(url), file: url, line: line + 1 };
    const file = this.fileOf(url);
    if (!file) return { place: url.startsWith('wasm') ? 'wasm' : url, file: null, line: line + 1 };
    const map = this.mapOf(file);
    if (!map) return { place: placeOfFile(file), file, line: line + 1 };
    const entry = map.findEntry(line, column) as { originalSource?: string; originalLine?: number };
    if (!entry.originalSource) return { place: `${placeOfFile(file)} (unmapped)`, file, line: line + 1 };
    const source = entry.originalSource.startsWith('file://') ? fileURLToPath(entry.originalSource) : path.resolve(path.dirname(file), entry.originalSource);
    return { place: placeOfFile(source), file: source, line: (entry.originalLine ?? line) + 1 };
  }

  /** Where a top-level `var|let|const|function|class NAME` of this script is declared (esbuild writes them unindented). */
  declaration(url: string, name: string): string | undefined {
    let names = this.declarations.get(url);
    if (!names) {
      names = new Map();
      this.declarations.set(url, names);
      const file = this.fileOf(url);
      if (file && existsSync(file)) {
        const lines = readFileSync(file, 'utf8').split('\n');
        const pattern = /^(?:export )?(?:var|let|const|async function\*?|function\*?|class) ([A-Za-z_$][\w$]*)/;
        lines.forEach((text, line) => {
          const match = pattern.exec(text);
          if (match) names!.set(match[1]!, this.at(url, line, text.indexOf(match[1]!, match[0].length - match[1]!.length)));
          // `var a = …, b = …` on one line: the rest of the names on it, declared at the same place.
          if (match && text.startsWith('var ')) for (const more of text.matchAll(/, ([A-Za-z_$][\w$]*) =/g)) names!.set(more[1]!, names!.get(match[1]!)!);
          // `var { a, b: c } = …`: each name bound, declared where the line is.
          const destructured = /^(?:export )?(?:var|let|const) \{([^}]*)\}/.exec(text);
          if (destructured) {
            const place = this.at(url, line, 0);
            for (const part of destructured[1]!.split(',')) {
              const bound = /(?<![\w$])([A-Za-z_$][\w$]*)$/.exec(part.split('=')[0]!.trim());
              if (bound) names!.set(bound[1]!, place);
            }
          }
        });
      }
    }
    return names.get(name);
  }
}
