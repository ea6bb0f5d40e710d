/**
 * What the `ringkv local` tests share: runs of free ports (the launcher takes consecutive
 * ones) and stopping every process they started by its PID.
 */
import { createServer } from 'node:net';

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
    const free = await Promise.all(Array.from({ length: count }, (_, i) => [0, ...offsets].map((o) => portFree(base + o + i))).flat());
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
