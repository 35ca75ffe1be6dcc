// Planted mistake: a permission decision the server does not know.
import { answerPermission, createChimeraClient } from '@chimera-agent/client'

export const planted = (): Promise<void> =>
  answerPermission(createChimeraClient({ baseUrl: 'http://x' }), 's', 'perm-1', 'maybe')
