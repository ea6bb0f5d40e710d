/**
 * What the `ringkv local` tests share: runs of free ports (the launcher takes consecutive
 * ones), starting a launcher and waiting for its cluster, and stopping every process they
 * started by its PID.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../testkit/wait.js';

export interface Launcher {
  /** Everything it printed so far. */
  out(): string;
  /** Ctrl-C; resolves with its exit code. */
  stop(): Promise<number | null>;
  readonly nodePids: number[];
}

/** The CLI from source: `node` and these arguments run `ringkv` from any directory. */
export const CLI_ARGS: readonly string[] = [
  '--import',
  fileURLToPath(import.meta.resolve('tsx')),
  join(import.meta.dirname, '../../src/cli/main.ts'),
];

/** `ringkv local ARGS` (in `cwd`, default this process's), until it prints "cluster ready"; its PID and its nodes' go into `pids`. */
export async function startLocal(args: readonly string[], pids: number[], cwd?: string): Promise<Launcher> {
  const child = spawn(process.execPath, [...CLI_ARGS, 'local', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  pids.push(child.pid!);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await waitFor('cluster ready', 120_000, () => out.includes('cluster ready'), 200); // as long as ringkv local waits: a loaded machine forms it slowly
  const nodePids = [...out.matchAll(/n\d=(\d+)/g)].map((m) => Number(m[1]));
  pids.push(...nodePids);
  return {
    out: () => out,
    stop: () => {
      child.kill('SIGINT');
      return exited;
    },
    nodePids,
  };
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A base port with `count` free ports from it, and from base + each of `offsets` (e.g. 1000 for the HTTP ports). */
export async function freeRun(count: number, offsets: readonly number[] = []): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 40_000);
    const free = await Promise.all(
      Array.from({ length: count }, (_, i) => [0, ...offsets].map((o) => portFree(base + o + i))).flat(),
    );
    if (free.every(Boolean)) return base;
  }
}

/** SIGKILL every PID (those already gone are skipped). */
export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
