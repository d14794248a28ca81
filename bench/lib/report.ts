/** Markdown tables and number formats for the printed report. */

export function table(header: string[], rows: (string | number)[][], align: ('l' | 'r')[] = []): string {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(3, ...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) =>
    `| ${row.map((cell, column) => (align[column] === 'r' ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (align[column] === 'r' ? `${'-'.repeat(width + 1)}:` : `${'-'.repeat(width + 2)}`)).join('|')}|`;
  return [line(cells[0]!), rule, ...cells.slice(1).map(line)].join('\n');
}

export const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
export const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
export const int = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–');
export const mean = (values: number[]) => values.reduce((total, value) => total + value, 0) / (values.length || 1);
export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
