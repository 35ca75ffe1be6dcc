/** `GET /info`, `GET /providers`, `GET /tools`: the server's self-description. */
import { toolSpecs, type ToolName } from '../../../generated/tools/tools.gen.ts'
import { describeModel, providersResponse } from '../../providers/registry.ts'
import type { OperationHandlers } from '../app.ts'
import type { HttpDeps } from '../deps.ts'
import { jsonResponse } from '../errors.ts'

/** The tools new sessions get: the registry's built-ins, cut to `--allowed-tools` when given. */
export function serverTools(
  deps: HttpDeps,
): { name: string; description: string; input_schema: Record<string, unknown> }[] {
  const allowed = deps.manager.opts.allowedTools
  return [...deps.manager.tools.keys()]
    .filter((n) => Object.hasOwn(toolSpecs, n) && (!allowed || allowed.includes(n)))
    .map((name) => {
      const s = toolSpecs[name as ToolName]
      return { name, description: s.description, input_schema: s.inputSchema as Record<string, unknown> }
    })
}

export function infoHandlers(deps: HttpDeps): Pick<OperationHandlers, 'info.get' | 'providers.list' | 'tools.list'> {
  return {
    'info.get': () =>
      jsonResponse(200, {
        version: deps.version,
        ...describeModel(deps.manager.models, deps.manager.defaultModel),
        tools: serverTools(deps).map((t) => t.name),
        cwd: deps.manager.opts.cwd,
      }),
    'providers.list': () => jsonResponse(200, providersResponse(deps.manager.models)),
    'tools.list': () => jsonResponse(200, { tools: serverTools(deps) }),
  }
}
