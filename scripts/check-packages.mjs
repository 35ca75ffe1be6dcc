// The three npm packages, checked as their users get them (`make check-packages`, part of
// `make test`): each is packed from a copy of this checkout (nothing is written into it), the
// tarballs are installed into fresh temporary projects from the npm cache (--prefer-offline), and
//   client  a strict TypeScript project (strict, exactOptionalPropertyTypes; moduleResolution
//           bundler and nodenext) typechecks docs/client.md's whole flow with no cast and no `any`
//           (scripts/package-check/client/flow.ts) while each planted mistake there fails, and
//           the `/node` and `/msw` examples typecheck with the optional peers installed; an
//           esbuild browser bundle of the entry imports no Node module and is at most 10 KB gzipped;
//   cli     `npm install -g --prefix <tmp>` puts `chimera` on PATH, and from another directory
//           `chimera --version`, `chimera ferret serve` (answers initialize) and
//           `chimera otter serve` (answers /health, serves /ui and /docs) work;
//   kit     `npx chimera-conformance --acp "chimera ferret serve" --only 'core.prompt.*'` passes.
// Prints each package's tarball size and file count, installed dependencies and size, the bundle
// size and the time of the global install. Exit 1 on any failure.
import { spawn, spawnSync } from 'node:child_process'
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { gzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'

const checkout = fileURLToPath(new URL('..', import.meta.url))
const tmp = mkdtempSync(join(tmpdir(), 'chimera-packages-'))
const failures = []
const say = (line) => process.stdout.write(`${line}\n`)
const check = (ok, what) => {
  say(`${ok ? 'ok  ' : 'FAIL'} ${what}`)
  if (!ok) failures.push(what)
}
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`
const sizeOf = (dir) => {
  let total = 0
  for (const name of readdirSync(dir, { recursive: true })) {
    const s = statSync(join(dir, name), { throwIfNoEntry: false })
    if (s?.isFile()) total += s.size
  }
  return total
}
const npmEnv = {
  ...process.env,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
}
function run(cmd, args, cwd, env = npmEnv) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 300_000 })
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}: ${r.stderr}${r.stdout}`.slice(0, 4000))
  return r.stdout
}
const npm = (args, cwd) => run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], cwd)
function project(name, extra = {}) {
  const dir = join(tmp, name)
  mkdirSync(dir)
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: `check-${name}`, private: true, type: 'module', ...extra }, null, 2),
  )
  return dir
}
/** The packages under `nodeModules` (nested ones too), other than ours. */
function installedDeps(nodeModules) {
  const out = []
  const walk = (dir) => {
    for (const name of readdirSync(dir, { withFileTypes: true })) {
      if (!name.isDirectory() || name.name.startsWith('.')) continue
      const full = join(dir, name.name)
      if (name.name.startsWith('@')) {
        for (const sub of readdirSync(full)) visit(join(full, sub), `${name.name}/${sub}`)
      } else visit(full, name.name)
    }
  }
  const visit = (dir, name) => {
    if (!name.startsWith('@chimera-agent/')) out.push(name)
    const nested = join(dir, 'node_modules')
    if (statSync(nested, { throwIfNoEntry: false })?.isDirectory()) walk(nested)
  }
  walk(nodeModules)
  return out
}

try {
  // 1. Pack from a copy (the packages' prepack builds write into their dist/ there).
  const src = join(tmp, 'src')
  cpSync(checkout, src, {
    recursive: true,
    filter: (from) => !/(^|\/)(node_modules|dist|\.git|\.tmp)$/.test(relative(checkout, from)),
  })
  symlinkSync(join(checkout, 'node_modules'), join(src, 'node_modules'), 'dir')
  const packs = join(tmp, 'packs')
  mkdirSync(packs)
  const packed = JSON.parse(
    run(
      'npm',
      ['pack', '--json', '--pack-destination', packs, '-w', 'client', '-w', 'conformance', '-w', 'server'],
      src,
    ),
  )
  const tgz = {}
  for (const p of packed) {
    tgz[p.name] = join(packs, p.filename)
    say(`${p.name}@${p.version}: tarball ${kb(p.size)}, ${p.entryCount} files, ${mb(p.unpackedSize)} unpacked`)
  }

  // 2. The client.
  const client = project('client')
  npm(['install', tgz['@chimera-agent/client']], client)
  const clientDeps = installedDeps(join(client, 'node_modules'))
  say(
    `@chimera-agent/client installed: ${clientDeps.length} dependencies (${clientDeps.join(', ')}), ${mb(sizeOf(join(client, 'node_modules')))}`,
  )
  check(clientDeps.length <= 5, 'the client installs at most 5 dependencies')
  const declarations = readdirSync(join(client, 'node_modules/@chimera-agent/client/dist')).filter((f) =>
    f.endsWith('.d.ts'),
  )
  const outside = declarations.flatMap((f) =>
    [
      ...readFileSync(join(client, 'node_modules/@chimera-agent/client/dist', f), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .matchAll(/from\s+'([^']+)'|import\s+'([^']+)'/g),
    ]
      .map((m) => m[1] ?? m[2])
      .filter((s) =>
        s.startsWith('.')
          ? s.includes('..')
          : // A subpath export of a peer (`@agentclientprotocol/sdk/experimental/http-client`) is that peer.
            !/^(openapi-fetch|zod|msw|@agentclientprotocol\/sdk(\/[\w/-]+)?|node:[a-z_]+)$/.test(s),
      ),
  )
  check(
    outside.length === 0,
    `the client's declarations point only inside the package or at its dependencies and peers${outside.length ? `: ${outside.join(', ')}` : ''}`,
  )
  const fixtures = join(checkout, 'scripts/package-check/client')
  const files = readdirSync(fixtures).filter((f) => f.endsWith('.ts'))
  cpSync(fixtures, client, { recursive: true })
  const flow = readFileSync(join(fixtures, 'flow.ts'), 'utf8').replace(/\/\/.*$/gm, '')
  check(
    !/\bany\b/.test(flow) && !/\bas\s+(?!const\b)[A-Za-z{[(]/.test(flow) && !/<[A-Z][\w.]*>\s*[a-z(]/.test(flow),
    'flow.ts has no `any` and no cast',
  )
  const tsc = join(checkout, 'node_modules/typescript/bin/tsc')
  for (const [module, moduleResolution] of [
    ['ESNext', 'bundler'],
    ['NodeNext', 'NodeNext'],
  ]) {
    const options = {
      strict: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      skipLibCheck: false,
      target: 'ES2022',
      module,
      moduleResolution,
      lib: ['ES2022', 'DOM', 'DOM.Iterable'],
      types: [],
    }
    writeFileSync(join(client, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files }, null, 2))
    const r = spawnSync(process.execPath, [tsc, '-p', client], { cwd: client, encoding: 'utf8' })
    const errors = `${r.stdout}${r.stderr}`.split('\n').filter((l) => /^[^\s(]+\(\d+,\d+\): error/.test(l))
    const inFile = (f) => errors.filter((l) => l.startsWith(`${f}(`))
    check(
      errors.every((l) => files.some((f) => l.startsWith(`${f}(`))),
      `[${moduleResolution}] errors only in the fixtures${errors.some((l) => !files.some((f) => l.startsWith(`${f}(`))) ? `:\n${errors.join('\n')}` : ''}`,
    )
    check(
      inFile('flow.ts').length === 0,
      `[${moduleResolution}] docs/client.md's flow typechecks${inFile('flow.ts').length ? `:\n${inFile('flow.ts').join('\n')}` : ''}`,
    )
    for (const f of files.filter((f) => f.startsWith('planted-')))
      check(
        inFile(f).length > 0,
        `[${moduleResolution}] ${f} fails to compile${
          inFile(f)[0]
            ? ` (${inFile(f)[0]
                .replace(/^[^:]+: /, '')
                .slice(0, 90)}…)`
            : ''
        }`,
      )
  }
  // The `/node` and `/msw` entries, with their optional peers and Node's types (versions of the lockfile).
  const lock = JSON.parse(readFileSync(join(checkout, 'package-lock.json'), 'utf8')).packages
  const peers = ['@agentclientprotocol/sdk', 'msw', '@types/node'].map(
    (n) => `${n}@${lock[`node_modules/${n}`].version}`,
  )
  const withPeers = project('client-peers')
  npm(['install', tgz['@chimera-agent/client'], ...peers], withPeers)
  cpSync(join(checkout, 'scripts/package-check/client-peers'), withPeers, { recursive: true })
  for (const [module, moduleResolution] of [
    ['ESNext', 'bundler'],
    ['NodeNext', 'NodeNext'],
  ]) {
    const options = {
      strict: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      skipLibCheck: true,
      target: 'ES2022',
      module,
      moduleResolution,
      lib: ['ES2022', 'DOM', 'DOM.Iterable'],
      types: ['node'],
    }
    writeFileSync(
      join(withPeers, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: options, files: ['entries.ts'] }, null, 2),
    )
    const r = spawnSync(process.execPath, [tsc, '-p', withPeers], { cwd: withPeers, encoding: 'utf8' })
    check(
      r.status === 0,
      `[${moduleResolution}] docs/client.md's /node and /msw examples typecheck with the peers installed${r.status ? `:\n${r.stdout}` : ''}`,
    )
  }

  const { build } = await import(join(checkout, 'node_modules/esbuild/lib/main.js'))
  writeFileSync(join(client, 'browser.js'), "export * from '@chimera-agent/client'\n")
  const b = await build({
    entryPoints: [join(client, 'browser.js')],
    absWorkingDir: client,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
  })
  const nodeImports = Object.values(b.metafile.inputs)
    .flatMap((i) => i.imports.map((x) => x.path))
    .filter((p) => p.startsWith('node:'))
  const bytes = b.outputFiles[0].contents
  const gz = gzipSync(bytes).length
  say(
    `@chimera-agent/client browser bundle (the whole entry, with its dependencies): ${kb(bytes.length)} minified, ${kb(gz)} gzipped`,
  )
  check(
    nodeImports.length === 0,
    `the browser bundle imports no node: module${nodeImports.length ? `: ${nodeImports.join(', ')}` : ''}`,
  )
  check(gz <= 10 * 1024, 'the browser bundle is at most 10 KB gzipped')

  // 3. The CLI, installed globally into a temporary prefix.
  const prefix = join(tmp, 'prefix')
  const t0 = performance.now()
  run(
    'npm',
    ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tgz['@chimera-agent/cli']],
    tmp,
  )
  const installMs = performance.now() - t0
  say(
    `@chimera-agent/cli: npm install -g took ${(installMs / 1000).toFixed(1)} s; installed ${mb(sizeOf(prefix))} (the root package's install was 97 MB); ${installedDeps(join(prefix, 'lib/node_modules')).length} dependencies`,
  )
  const elsewhere = project('elsewhere')
  const env = { ...process.env, PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, CHIMERA_HOME: join(tmp, 'home') }
  const version = run('chimera', ['--version'], elsewhere, env).trim()
  check(
    version === JSON.parse(readFileSync(join(checkout, 'server/package.json'), 'utf8')).version,
    `chimera --version from PATH prints ${version}`,
  )
  const acp = spawnSync('chimera', ['ferret', 'serve'], {
    cwd: elsewhere,
    env,
    encoding: 'utf8',
    timeout: 30_000,
    input: '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n',
  })
  const init = acp.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((m) => m.id === 0)
  check(init?.result?.protocolVersion === 1, 'chimera ferret serve answers initialize')
  const health = await new Promise((resolve) => {
    const child = spawn('chimera', ['otter', 'serve', '--port', '0'], {
      cwd: elsewhere,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let err = ''
    const timer = setTimeout(() => child.kill('SIGTERM'), 30_000)
    child.stderr.on('data', async (d) => {
      err += d
      const url = /listening on (http:\/\/\S+)/.exec(err)?.[1]
      if (!url || child.answered) return
      child.answered = true
      const r = await fetch(`${url}/health`).then(
        async (res) => ({ status: res.status, body: await res.json() }),
        (e) => ({ status: 0, body: String(e) }),
      )
      r.ui = await fetch(`${url}/ui/app.js`).then(
        (res) => res.status,
        () => 0,
      )
      r.docs = await fetch(`${url}/docs/http.html`).then(
        (res) => res.status,
        () => 0,
      )
      child.kill('SIGTERM')
      resolve(r)
    })
    child.on('exit', () => {
      clearTimeout(timer)
      resolve({ status: 0, body: err })
    })
  })
  check(
    health.status === 200 && health.body?.version === version,
    `chimera otter serve answers /health (${health.status})`,
  )
  check(health.ui === 200, `chimera otter serve serves the web console from the package (/ui/app.js: ${health.ui})`)
  check(
    health.docs === 200,
    `chimera otter serve serves the API reference from the package (/docs/http.html: ${health.docs})`,
  )

  // 4. The kit, run with npx from its project against the CLI on PATH.
  const kit = project('kit')
  npm(['install', tgz['@chimera-agent/conformance']], kit)
  say(
    `@chimera-agent/conformance installed: ${installedDeps(join(kit, 'node_modules')).length} dependencies, ${mb(sizeOf(join(kit, 'node_modules')))}`,
  )
  const k = spawnSync(
    'npx',
    ['--prefer-offline', 'chimera-conformance', '--acp', 'chimera ferret serve', '--only', 'core.prompt.*'],
    { cwd: kit, env, encoding: 'utf8', timeout: 300_000 },
  )
  const summary = k.stdout.trim().split('\n').pop()
  check(
    k.status === 0 && / 0 failed/.test(summary ?? ''),
    `npx chimera-conformance --acp "chimera ferret serve" --only 'core.prompt.*': ${summary}`,
  )
} catch (err) {
  failures.push(err instanceof Error ? err.message : String(err))
  say(`FAIL ${failures.at(-1)}`)
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
say(failures.length ? `${failures.length} package check(s) failed` : 'every package check passed')
process.exitCode = failures.length ? 1 : 0
