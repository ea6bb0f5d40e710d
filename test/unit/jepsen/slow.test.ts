/**
 * The slow nemesis's process primitives (testkit/jepsen/slow.ts) on a busy child process:
 * the cpu cgroup holds it to its share and heal puts it back and removes the group (as
 * root, where a cpu cgroup can be made; skipped elsewhere), and the strobe stops and
 * continues it in turn and always leaves it running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cgroupLeftovers,
  cgroupProcs,
  cpuCgroupFs,
  cpuThrottleSupport,
  healAllSlow,
  removeCgroup,
  strobe,
  throttleCpu,
} from '../../../testkit/jepsen/slow.js';

const children: ChildProcess[] = [];
afterEach(() => {
  healAllSlow();
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) process.kill(c.pid!, 'SIGKILL');
});

function busy(): number {
  const c = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  children.push(c);
  return c.pid!;
}

/** CPU seconds (user + system) of a process. */
function cpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** The process's state letter (R, S, T for stopped, ...). */
const state = (pid: number): string => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0]!;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const support = process.platform === 'linux' ? cpuThrottleSupport() : 'not Linux';

describe.skipIf(support !== true)('throttleCpu', () => {
  it('holds a busy process to its share of a core in a rkj<pid>-<name> cgroup; heal puts it back and removes the group', async () => {
    const pid = busy();
    await sleep(200);
    const fs = cpuCgroupFs();
    if (typeof fs === 'string') throw new Error(fs);
    const before = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
    const t = throttleCpu(pid, 0.1, 'unit');
    expect(t.group).toBe(join(fs.root, `rkj${process.pid}-unit`));
    expect(cgroupProcs(t.group)).toEqual([pid]);
    expect(cgroupLeftovers(process.pid)).toEqual([t.group]);
    if (fs.version === 1) expect(readFileSync(join(t.group, 'cpu.cfs_quota_us'), 'utf8').trim()).toBe('10000');
    else expect(readFileSync(join(t.group, 'cpu.max'), 'utf8').trim()).toBe('10000 100000');
    const c0 = cpu(pid),
      w0 = performance.now();
    await sleep(1500);
    const share = (cpu(pid) - c0) / ((performance.now() - w0) / 1000);
    // 10% of a core, with a period and a clock tick of slack: well under what a free busy loop takes.
    expect(share).toBeLessThan(0.25);
    t.heal();
    t.heal(); // twice is fine
    expect(existsSync(t.group)).toBe(false);
    expect(readFileSync(`/proc/${pid}/cgroup`, 'utf8')).toBe(before);
    expect(cgroupLeftovers(process.pid)).toEqual([]);
  });

  it("removeCgroup moves the tasks out first (what sweep does to a dead harness's group)", async () => {
    const pid = busy();
    const t = throttleCpu(pid, 0.5, 'sweep');
    expect(removeCgroup(t.group)).toBe(true);
    expect(existsSync(t.group)).toBe(false);
    expect(state(pid)).not.toBe('Z');
    t.heal(); // the group is gone already: nothing to do
  });

  it('refuses a share that is not a fraction of some cores, and a name that is not a plain word', () => {
    expect(() => throttleCpu(process.pid, 0, 'x')).toThrow(/share/);
    expect(() => throttleCpu(process.pid, 0.1, '../x')).toThrow(/name/);
  });
});

describe.skipIf(process.platform !== 'linux')('strobe', () => {
  it('stops and continues the process in turn, and heal always leaves it running', async () => {
    const pid = busy();
    await sleep(100);
    const s = strobe(pid, 50, 50);
    const seen = new Set<string>();
    for (let i = 0; i < 60; i++) (seen.add(state(pid)), await sleep(7));
    expect(seen.has('T')).toBe(true);
    expect([...seen].some((x) => x !== 'T')).toBe(true);
    expect(s.cycles()).toBeGreaterThanOrEqual(3);
    // Heal while it is stopped: it must be continued.
    for (let i = 0; i < 50 && state(pid) !== 'T'; i++) await sleep(2);
    s.heal();
    await sleep(20);
    expect(state(pid)).not.toBe('T');
    for (let i = 0; i < 10; i++) (expect(state(pid)).not.toBe('T'), await sleep(20));
  });

  it('heals itself when the process is gone', async () => {
    const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 100)'], { stdio: 'ignore' });
    const s = strobe(c.pid!, 10, 10);
    process.kill(c.pid!, 'SIGKILL');
    await new Promise((r) => c.once('exit', r));
    await sleep(50);
    expect(() => s.heal()).not.toThrow();
  });
});
