/**
 * Test support for the workspace-boundary race test: a helper process that atomically swaps two
 * directory entries in a loop with `renameat2(RENAME_EXCHANGE)`, so one name flips between a
 * real directory and a symlink that leads outside. It is a tiny C program compiled with the
 * system `cc` when there is one, else a python3 ctypes script; with neither the race test is
 * skipped. The helper is bounded (a deadline) and dies with the test process (PR_SET_PDEATHSIG).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const C_SOURCE = `#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
int main(int argc, char **argv) {
  if (argc != 4) return 2;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  time_t deadline = time(NULL) + atoi(argv[3]);
  printf("ready\\n");
  fflush(stdout);
  for (unsigned long i = 0;; i++) {
    if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) != 0) { perror("renameat2"); return 1; }
    if ((i & 1023) == 0 && time(NULL) > deadline) return 0;
  }
}
`

const PY_SOURCE = `import ctypes, ctypes.util, os, signal, sys, time
libc = ctypes.CDLL(ctypes.util.find_library('c'), use_errno=True)
libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
a, b, limit = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2]), int(sys.argv[3])
SYS_renameat2 = {'x86_64': 316, 'aarch64': 276}[os.uname().machine]
deadline = time.time() + limit
print('ready', flush=True)
i = 0
while True:
    if libc.syscall(SYS_renameat2, -100, a, -100, b, 2) != 0:
        sys.exit('renameat2: ' + os.strerror(ctypes.get_errno()))
    i += 1
    if i % 1024 == 0 and time.time() > deadline:
        break
`

/** How the swap helper can run here, or why it cannot. */
export type SwapperKind = { ok: true; command: string[]; cleanup(): void } | { ok: false; reason: string }

function which(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0
}

/** Build the helper: compile the C version with `cc`, else fall back to python3. */
export function prepareSwapper(): SwapperKind {
  const dir = mkdtempSync(join(tmpdir(), 'chimera-swap-'))
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true })
  if (which('cc')) {
    const src = join(dir, 'swap.c')
    const bin = join(dir, 'swap')
    writeFileSync(src, C_SOURCE)
    const r = spawnSync('cc', ['-O2', '-o', bin, src], { encoding: 'utf8' })
    if (r.status === 0) return { ok: true, command: [bin], cleanup }
  }
  if ((process.arch === 'x64' || process.arch === 'arm64') && which('python3')) {
    const script = join(dir, 'swap.py')
    writeFileSync(script, PY_SOURCE)
    return { ok: true, command: ['python3', script], cleanup }
  }
  cleanup()
  return { ok: false, reason: 'neither a C compiler (cc) nor python3 is available to call renameat2(RENAME_EXCHANGE)' }
}

/** A running swap loop. */
export interface Swapper {
  child: ChildProcess
  stop(): Promise<void>
}

/** Start swapping `a` and `b` for at most `limitSeconds`; resolves once the loop runs. */
export async function startSwapper(
  kind: { command: string[] },
  a: string,
  b: string,
  limitSeconds: number,
): Promise<Swapper> {
  const [file, ...args] = kind.command
  const child = spawn(file as string, [...args, a, b, String(limitSeconds)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (c: Buffer) => void (stderr += c.toString()))
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve())
    child.once('exit', (code) => reject(new Error(`swap helper exited early (${code}): ${stderr}`)))
    child.once('error', reject)
  })
  const exited = new Promise<void>((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r()
    else child.once('exit', () => r())
  })
  return {
    child,
    async stop() {
      child.kill('SIGKILL')
      await exited
    },
  }
}
