/** The model double, started by the kit when a target profile asks for it (one per run). */
import { DOUBLE_MODEL, startModelDouble } from '../../model-double/server.ts'
import type { DoubleInfo } from './launch.ts'
import { freePort, type PortRange } from './ports.ts'

export interface RunningDouble extends DoubleInfo {
  close(): Promise<void>
}

export async function startDouble(apiKey = 'kit-double-key', ports?: PortRange): Promise<RunningDouble> {
  const d = await startModelDouble({ host: '127.0.0.1', port: ports ? await freePort(ports) : 0, apiKey })
  return { url: d.url, origin: d.origin, model: DOUBLE_MODEL, key: apiKey, close: () => d.close() }
}
