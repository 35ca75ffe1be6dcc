// Planted mistake: `undefined` for an optional option not declared to take it (exactOptionalPropertyTypes).
import { createChimeraClient } from '@chimera-agent/client'

export const planted = () => createChimeraClient({ baseUrl: 'http://x' }).sessions.events('s', { reconnect: undefined })
