// Planted mistake: a create request whose prompt is not text.
import { createChimeraClient } from '@chimera-agent/client'

export const planted = () => createChimeraClient({ baseUrl: 'http://x' }).sessions.create({ prompt: 42 })
