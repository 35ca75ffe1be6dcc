/**
 * Nesting limits for JSON that comes from a model: deeply nested values make recursive code
 * (JSON.stringify, validators, structured clones) overflow the stack, so they are refused up
 * front. Both checks are iterative.
 */
export const MAX_JSON_DEPTH = 64

/** The nesting depth of JSON text (brackets outside strings), without parsing it. */
export function jsonTextDepth(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) max = Math.max(max, ++depth)
    else if (c === 125 || c === 93) depth--
  }
  return max
}

/** The nesting depth of a value (objects and arrays), stopping once it passes `limit`. */
export function valueDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let max = 0
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length) {
    const [v, d] = stack.pop()!
    if (typeof v !== 'object' || v === null) continue
    const depth = d + 1
    if (depth > max) max = depth
    if (max > limit) return max
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth])
  }
  return max
}
