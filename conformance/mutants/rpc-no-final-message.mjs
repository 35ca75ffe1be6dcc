#!/usr/bin/env node
// Mutant: a JSON-lines RPC process that loses the turn's complete message: the streamed chunks
// (`message` with done false) arrive, the final `message` with done true never does
// (specs/asyncapi/rpc.asyncapi.yaml MessageEvent). Usage: rpc-no-final-message.mjs <rpc command…>
import { parse, stdioProxy } from './proxy.mjs'

stdioProxy(process.argv.slice(2), {
  toParent: (line) => {
    const m = parse(line)
    return m?.type === 'message' && m.done === true ? null : line
  },
})
