// Planted mistake: a Node-only export taken from the browser entry (it is in `/node`).
import { spawnRpcClient } from '@chimera-agent/client'

export const planted = spawnRpcClient
