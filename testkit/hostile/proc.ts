/**
 * A process's memory and file descriptors from /proc (Linux), for the hostile-input test
 * and bench: what a node holds before, during and after an attack.
 *
 * Owns: reading /proc/<pid>/status and fd, and resetting a process's peak RSS. Must not:
 * signal or otherwise change the process; where /proc cannot tell, it says so (undefined,
 * NaN, false) rather than throw.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';

/** Resident memory now and its peak since start or the last resetPeak, bytes; undefined when /proc cannot tell. */
export function memOf(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(s)?.[1] ?? NaN);
    return { rss: kb('VmRSS') * 1024, hwm: kb('VmHWM') * 1024 };
  } catch {
    return undefined;
  }
}

/** Open file descriptors of `pid`; NaN when /proc cannot tell. */
export function fdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** Reset VmHWM to the current RSS (clear_refs 5), so that it reads as the next attack's peak; false where that is not allowed. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
