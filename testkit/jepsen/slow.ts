/**
 * The slow nemesis's process faults — gray failures, where a node is up but slow — as
 * primitives a benchmark can use outside a Jepsen run (bench/gray.ts does):
 * - throttleCpu(pid, share): the process held to `share` of one core by a CPU cgroup,
 *   cgroup v1 (cpu.cfs_quota_us / cpu.cfs_period_us) or v2 (cpu.max), whichever holds
 *   the cpu controller here. The group is named rkj<harness pid>-<name>, like the
 *   harness's namespaces, so sweep() (net.ts) finds what a harness killed with -9 left.
 *   Heal moves the process back to the group it came from and removes the child group.
 * - strobe(pid, stoppedMs, runningMs): SIGSTOP and SIGCONT in turn, on a fixed beat (no
 *   drift); heal always ends with SIGCONT.
 * (The third slow shape, link delay, is network: Network.delay in net.ts.)
 *
 * Every heal is synchronous and safe to call twice, so it also works in signal and exit
 * handlers; whatever is still active when this process exits is healed then.
 *
 * Owns: the rkj* cpu cgroups and the strobe timers. Must not: signal or move a process it
 * was not given, or touch a cgroup it did not name.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PREFIX = 'rkj';

/** The slow shapes' settings in the Jepsen run and bench:gray. */
export const SLOW_DEFAULTS = { cpuShare: 0.1, stoppedMs: 100, runningMs: 100, delayMs: 200, jitterMs: 50 } as const;

export interface Healable {
  heal(): void;
}

interface CpuCgroupFs {
  readonly version: 1 | 2;
  /** Where the hierarchy with the cpu controller is mounted. */
  readonly root: string;
}

let fsCache: CpuCgroupFs | string | undefined;

/** The cgroup hierarchy holding the cpu controller, or why there is none. */
export function cpuCgroupFs(): CpuCgroupFs | string {
  if (fsCache !== undefined) return fsCache;
  if (process.platform !== 'linux') return (fsCache = 'not Linux');
  let mounts: string[][];
  try {
    mounts = readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' '));
  } catch {
    return (fsCache = 'no /proc/mounts');
  }
  for (const [, dir, type, opts] of mounts)
    if (type === 'cgroup' && dir !== undefined && (opts ?? '').split(',').includes('cpu'))
      return (fsCache = { version: 1, root: dir });
  for (const [, dir, type] of mounts) {
    if (type !== 'cgroup2' || dir === undefined) continue;
    try {
      if (readFileSync(join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('cpu'))
        return (fsCache = { version: 2, root: dir });
    } catch {
      // not readable: the next
    }
  }
  return (fsCache =
    'no cgroup hierarchy has the cpu controller (cgroup v1 cpu or cgroup v2 with cpu in cgroup.controllers)');
}

/** Whether throttleCpu can work here: root, the cpu controller, and a child group can be made. Else why not. */
export function cpuThrottleSupport(): true | string {
  if (process.getuid?.() !== 0) return 'not root: cgroups need root';
  const fs = cpuCgroupFs();
  if (typeof fs === 'string') return fs;
  const probe = join(fs.root, `${PREFIX}${process.pid}-probe`);
  try {
    mkdirSync(probe);
    const file = fs.version === 1 ? 'cpu.cfs_quota_us' : 'cpu.max';
    if (fs.version === 2) enableCpuV2(fs.root);
    if (!existsSync(join(probe, file))) return `a new cgroup under ${fs.root} has no ${file}`;
    return true;
  } catch (e) {
    return `cannot make a cgroup under ${fs.root}: ${(e as Error).message}`;
  } finally {
    try {
      rmdirSync(probe);
    } catch {
      // not made
    }
  }
}

/** cgroup v2: the cpu controller must be enabled for the root's children. */
function enableCpuV2(root: string): void {
  const control = join(root, 'cgroup.subtree_control');
  if (!readFileSync(control, 'utf8').split(/\s+/).includes('cpu')) writeFileSync(control, '+cpu');
}

/** The cgroup (a directory under the hierarchy's mount) that `pid` is in now, for the cpu controller. */
function groupOf(pid: number, fs: CpuCgroupFs): string {
  try {
    for (const line of readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')) {
      const [, controllers, path] = line.split(':');
      if (path === undefined) continue;
      const mine = fs.version === 1 ? controllers!.split(',').includes('cpu') : controllers === '';
      const dir = join(fs.root, path);
      if (mine && existsSync(join(dir, 'cgroup.procs'))) return dir;
    }
  } catch {
    // gone: the root
  }
  return fs.root;
}

const pause = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function move(pid: number, to: string): void {
  try {
    writeFileSync(join(to, 'cgroup.procs'), String(pid));
  } catch {
    // exited, or a zombie: it leaves the group when reaped
  }
}

/**
 * Move every task out of `dir` (to `to`, else the root) and remove it. Retries for a
 * moment while a task that was just killed is still exiting. True when it is gone.
 */
export function removeCgroup(dir: string, to?: string): boolean {
  const fs = cpuCgroupFs();
  const dest = to ?? (typeof fs === 'string' ? undefined : fs.root);
  for (let attempt = 0; attempt < 100; attempt++) {
    if (!existsSync(dir)) return true;
    try {
      const pids = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
      if (dest !== undefined) for (const p of pids) move(p, dest);
      rmdirSync(dir);
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return true;
      if (code !== 'EBUSY') return false;
      pause(10);
    }
  }
  return false;
}

/** The rkj* cpu cgroups (full paths), optionally only those of harness `pid`. */
export function cgroupLeftovers(pid?: number): string[] {
  const fs = cpuCgroupFs();
  if (typeof fs === 'string') return [];
  let names: string[];
  try {
    names = readdirSync(fs.root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
  return names
    .filter((n) => {
      const m = new RegExp(`^${PREFIX}(\\d+)-`).exec(n);
      return m !== null && (pid === undefined || Number(m[1]) === pid);
    })
    .map((n) => join(fs.root, n));
}

/** The processes in a cgroup (for tests and the report). */
export function cgroupProcs(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const active = new Set<Healable>();
let exitHook = false;
function track(h: Healable): void {
  active.add(h);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', healAllSlow);
  }
}

/** Heal every throttle and strobe still active in this process (cleanup, signal handlers). */
export function healAllSlow(): void {
  for (const h of [...active]) h.heal();
}

/**
 * Hold `pid` (all its threads) to `share` of one core: a child cgroup rkj<our pid>-<name>
 * with quota = share × period (period 100 ms). Throws where it cannot (see cpuThrottleSupport).
 */
export function throttleCpu(pid: number, share: number, name = String(pid)): Healable & { readonly group: string } {
  if (!(share > 0 && share <= 64)) throw new Error(`a CPU share must be in (0, 64] cores, got ${share}`);
  if (!/^[\w.-]+$/.test(name)) throw new Error(`bad cgroup name ${name}`);
  const fs = cpuCgroupFs();
  if (typeof fs === 'string') throw new Error(`cannot throttle the CPU: ${fs}`);
  const group = join(fs.root, `${PREFIX}${process.pid}-${name}`);
  const from = groupOf(pid, fs);
  const period = 100_000;
  const quota = Math.max(1000, Math.round(share * period));
  if (!existsSync(group)) mkdirSync(group);
  try {
    if (fs.version === 1) {
      writeFileSync(join(group, 'cpu.cfs_period_us'), String(period));
      writeFileSync(join(group, 'cpu.cfs_quota_us'), String(quota));
    } else {
      enableCpuV2(fs.root);
      writeFileSync(join(group, 'cpu.max'), `${quota} ${period}`);
    }
    writeFileSync(join(group, 'cgroup.procs'), String(pid));
  } catch (e) {
    removeCgroup(group, from);
    throw new Error(`cannot throttle ${pid} in ${group}: ${(e as Error).message}`);
  }
  let healed = false;
  const h = {
    group,
    heal(): void {
      if (healed) return;
      healed = true;
      active.delete(h);
      move(pid, existsSync(from) ? from : fs.root);
      removeCgroup(group, existsSync(from) ? from : fs.root);
    },
  };
  track(h);
  return h;
}

/**
 * SIGSTOP `pid` for `stoppedMs`, SIGCONT for `runningMs`, again and again, on a beat fixed
 * at the start (a late timer does not shift the next ones), until heal(), which sends a
 * last SIGCONT.
 */
export function strobe(
  pid: number,
  stoppedMs: number,
  runningMs: number,
): Healable & { readonly cycles: () => number } {
  if (!(stoppedMs > 0 && runningMs > 0)) throw new Error('strobe needs positive stopped and running times');
  const t0 = performance.now();
  const period = stoppedMs + runningMs;
  let timer: NodeJS.Timeout | undefined;
  let healed = false;
  let cycles = 0;
  const signal = (sig: NodeJS.Signals): boolean => {
    try {
      process.kill(pid, sig);
      return true;
    } catch {
      return false;
    }
  };
  const tick = (): void => {
    if (healed) return;
    const phase = (performance.now() - t0) % period;
    const stopping = phase < stoppedMs;
    if (!signal(stopping ? 'SIGSTOP' : 'SIGCONT')) return void h.heal();
    if (stopping) cycles++;
    timer = setTimeout(tick, Math.max(1, (stopping ? stoppedMs : period) - phase));
  };
  const h = {
    cycles: () => cycles,
    heal(): void {
      if (healed) return;
      healed = true;
      active.delete(h);
      clearTimeout(timer);
      signal('SIGCONT');
    },
  };
  track(h);
  tick();
  return h;
}
