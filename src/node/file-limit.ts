/**
 * Whether the process may open enough files for what the node is configured to hold:
 * LevelDB's table files, every connection the node accepts, its peer channels and logs.
 * A node that runs out (EMFILE) fails reads and writes in its store, not only new
 * connections, so it says so at start rather than under a flood.
 *
 * Owns: the estimate and reading the limit (Linux: /proc/self/limits). Must not: change the limit.
 */
import { readFileSync } from 'node:fs';

/** LevelDB's table files open at once (classic-level's default max_open_files). */
export const STORE_OPEN_FILES = 1000;
/** Peer channels, the HTTP port, logs and the rest, with room to spare. */
const OTHER_FILES = 256;

/** Files the node may hold open at once with `maxConnections` connections. */
export function filesNeeded(maxConnections: number): number {
  return STORE_OPEN_FILES + maxConnections + OTHER_FILES;
}

/** The soft "Max open files" limit in /proc/self/limits text; undefined when unlimited or absent. */
export function openFilesLimit(procLimits: string): number | undefined {
  const m = /^Max open files\s+(\S+)/m.exec(procLimits);
  if (m === null || m[1] === 'unlimited') return undefined;
  const n = Number(m[1]);
  return Number.isFinite(n) ? n : undefined;
}

/** The advice to log when the open-files limit is below what the node needs, or undefined. */
export function fileLimitAdvice(
  maxConnections: number,
  read: () => string = () => readFileSync('/proc/self/limits', 'utf8'),
): string | undefined {
  let limit: number | undefined;
  try {
    limit = openFilesLimit(read());
  } catch {
    return undefined; // not Linux: nothing to read
  }
  const needed = filesNeeded(maxConnections);
  if (limit === undefined || limit >= needed) return undefined;
  return `the open-files limit is ${limit}, below the ${needed} this node may need (${STORE_OPEN_FILES} for the store, ${maxConnections} connections, ${OTHER_FILES} more): raise it (ulimit -n, systemd LimitNOFILE, docker --ulimit nofile) or lower --max-connections`;
}
