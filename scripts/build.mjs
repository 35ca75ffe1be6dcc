// The checkout's build. Into dist/ at the root (what bin/chimera.mjs, bin/chimera-conformance.mjs
// and the tests run): the CLI, the conformance kit on its own (dist/chimera-conformance.mjs), the
// client SDK's entries (dist/client/) and the web console (dist/ui/). Then the packages' own
// dist/ folders (scripts/build-package.mjs, without the client's declarations, which `npm pack`
// makes), so the workspace bins (`npx chimera`, `npm install -g ./server`) run this build too.
import { join } from 'node:path'
import { CLI_ENTRY, KIT_ENTRY, buildClient, buildNode, buildUi, clean, root } from './bundles.mjs'
import { buildPackage } from './build-package.mjs'

const dist = join(root, 'dist')
clean(dist)
await buildNode({ ...CLI_ENTRY, ...KIT_ENTRY }, dist)
await buildClient(join(dist, 'client'))
await buildUi(join(dist, 'ui'))
for (const name of ['server', 'conformance', 'client']) await buildPackage(name, { types: false })
