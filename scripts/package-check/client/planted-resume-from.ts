// Planted mistake: resuming from something that is neither a counter nor 'live'.
import { createChimeraClient } from '@chimera-agent/client'

export const planted = () => createChimeraClient({ baseUrl: 'http://x' }).sessions.events('s', { from: 'latest' })
