#!/usr/bin/env node
// Mutant: an ACP agent that drops `id: null` from the error answering a parse error or an
// invalid request (JSON-RPC 2.0 §5: the id is required, null when it could not be read).
// Usage: acp-parse-error-no-id.mjs <acp command…>
import { parse, stdioProxy } from './proxy.mjs'

stdioProxy(process.argv.slice(2), {
  toParent: (line) => {
    const m = parse(line)
    if (!m || m.id !== null || !m.error) return line
    const { id: _dropped, ...rest } = m
    return JSON.stringify(rest)
  },
})
