/**
 * Deterministic ordering for generated output: by UTF-16 code unit (what `<` compares), never
 * by locale, so every machine renders the same bytes whatever its ICU data or `LANG`.
 */
export const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Sort `[key, value]` entries by key, code point order. */
export const byKey = <T>([a]: readonly [string, T], [b]: readonly [string, T]): number => byCodePoint(a, b)
