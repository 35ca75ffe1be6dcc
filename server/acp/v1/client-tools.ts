/**
 * The tools of an ACP client that offers them (`clientCapabilities.fs`, `terminal`): the
 * editor-backed ports (editor-ports.ts) plugged into the tools built over ports. Write and Edit
 * write through the editor, reads are pinned to the verified local open
 * (server/tools/pinned-files.ts, docs/decisions/0220-acp-client-reads-pinned.md); Bash runs
 * in the editor's terminal only under `--sandbox danger-full-access`, and locally, inside
 * bubblewrap, in the confined modes (docs/decisions/0070).
 */
import { acpV1Methods } from '../../../generated/acp/v1-methods.gen.ts'
import type { Connection } from '../../../client/wire/jsonrpc/connection.ts'
import { typedPeer } from '../../jsonrpc/peer.ts'
import { bashVia, localProcesses } from '../../tools/bash.ts'
import { editVia } from '../../tools/edit.ts'
import { unconfinedOnly } from '../../tools/ports.ts'
import { readVia } from '../../tools/read.ts'
import type { Tool } from '../../tools/types.ts'
import { writeVia } from '../../tools/write.ts'
import { editorFiles, editorTerminal, type Editor } from './editor-ports.ts'

export interface ClientFs {
  readTextFile?: boolean
  writeTextFile?: boolean
}

/** The tool substitutes for a client with these capabilities (empty when it offers none). */
export function clientTools(
  connection: Connection,
  sessionId: string,
  fs: ClientFs | undefined,
  terminal = false,
): Map<string, Tool> {
  const conn: Editor = typedPeer(connection, acpV1Methods)
  const files = editorFiles(conn, sessionId)
  const tools = new Map<string, Tool>()
  if (terminal) tools.set('Bash', bashVia(unconfinedOnly(editorTerminal(conn, sessionId), localProcesses)))
  if (fs?.readTextFile) tools.set('Read', readVia(files))
  if (fs?.writeTextFile) tools.set('Write', writeVia(files))
  if (fs?.readTextFile && fs.writeTextFile) tools.set('Edit', editVia(files))
  return tools
}
