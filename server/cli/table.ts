/**
 * Plain-text tables for the CLI's human output. Cells are single-line and free of control
 * characters (session content may hold terminal escape sequences), cut to a column's width.
 */

/** One terminal-safe line: control characters and whitespace runs become one space. */
export function cell(v: unknown, max = 80): string {
  const s = (v === null || v === undefined ? '-' : String(v))
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  return s.length > max ? `${s.slice(0, max - 1)}…` : s
}

/** Rows under a header, columns padded to the widest cell. */
export function table(
  headers: readonly string[],
  rows: readonly (readonly unknown[])[],
  widths: readonly number[] = [],
): string {
  const cells = rows.map((r) => r.map((v, i) => cell(v, widths[i] ?? 80)))
  const w = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)))
  const line = (r: readonly string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(w[i]!))).join('  ')
  return [line(headers), ...cells.map(line)].join('\n')
}
