/** A kit input file (a target profile, an expected-failures list): JSON or YAML, checked by a schema. */
import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import type { z } from 'zod'
import { formatIssues } from '../../client/wire/issues.ts'

/** Parse `file` (YAML when it ends in .yml/.yaml) and validate it; errors name the file and `what` it should be. */
export function loadDataFile<S extends z.ZodType>(file: string, schema: S, what: string): z.output<S> {
  const text = readFileSync(file, 'utf8')
  let raw: unknown
  try {
    raw = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text)
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`)
  }
  const r = schema.safeParse(raw)
  if (!r.success) throw new Error(`${file}: not ${what}: ${formatIssues(r.error)}`)
  return r.data
}
