#!/usr/bin/env node
// Mutant: a JSON-lines RPC process that writes a log line to stdout (stdout is the wire:
// nothing but protocol messages may appear there). Usage: rpc-stdout-log.mjs <rpc command…>
import { stdioProxy } from './proxy.mjs'

stdioProxy(process.argv.slice(2), { onStart: (out) => out('[info] agent starting, model ready') })
