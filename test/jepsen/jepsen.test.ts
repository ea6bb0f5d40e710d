/**
 * The short Jepsen pass that CI runs: 5 real nodes, each in its own network namespace,
 * both workloads, and every nemesis kind and partition shape at least once in 70 s (about
 * two minutes with forming and settling); then no acknowledged write lost, nothing
 * unexpected, every replica identical. And the harness leaves nothing behind — not when
 * a run fails, not when interrupted, not when killed -9 (the next run, or --sweep,
 * removes what it left).
 *
 * As root (CI) the network nemeses must run; elsewhere they report "not run" and the rest
 * still runs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { capabilities, leftovers, sweep } from './net.js';
import { NEMESES, PARTITION_SHAPES } from './nemesis.js';
import { runJepsen } from './run.js';

const RESULTS = join(import.meta.dirname, '../../results/jepsen');
const caps = capabilities();
const root = caps.namespaces === true;
if (process.env['CI'] === 'true' && process.getuid?.() === 0 && !root) throw new Error(`CI runs as root, so the network nemeses must run: ${caps.namespaces}`);

it('loses nothing acknowledged and converges under every nemesis (5 nodes, set and register)', async () => {
  const lines: string[] = [];
  const r = await runJepsen({
    timeS: 70,
    nodes: 5,
    nemeses: [...NEMESES],
    workloads: ['set', 'register'],
    seed: 20261201,
    everyMs: 5000,
    workers: 8,
    resultsDir: RESULTS,
    requireAll: process.env['CI'] === 'true',
    log: (l) => lines.push(l),
  });
  const summary = `${lines.join('\n')}\n${JSON.stringify({ faults: r.faults, violations: r.violations, notRun: r.notRun }, null, 1)}`;
  expect(r.violations, summary).toEqual([]);
  expect(r.set!.lost).toEqual([]);
  expect(r.set!.unexpected).toEqual([]);
  expect(r.register!.lost).toEqual([]);
  expect(r.register!.unexpected).toEqual([]);
  expect(r.convergence.converged).toBe(true);
  expect(r.set!.acknowledged).toBeGreaterThan(500);
  expect(r.register!.acknowledged).toBeGreaterThan(500);
  const applied = r.faults.filter((f) => f.skipped === undefined);
  const kinds = new Set(applied.map((f) => f.kind));
  for (const k of NEMESES) if (root || (k !== 'partition' && k !== 'packet')) expect(kinds.has(k), `${k} applied\n${summary}`).toBe(true);
  if (root) for (const s of PARTITION_SHAPES) expect(applied.some((f) => f.label.startsWith(`${s}:`)), `partition ${s}\n${summary}`).toBe(true);
  for (const f of ['report.json', 'summary.txt', 'history.jsonl']) expect(existsSync(join(r.folder, f)), f).toBe(true);
  expect(readFileSync(join(r.folder, 'timeline.svg'), 'utf8')).toMatch(/^<svg[\s\S]*partition: halves[\s\S]*<\/svg>$/);
  const membership = applied.find((f) => f.kind === 'membership')!;
  expect(membership.label, summary).toMatch(/^n6 joins, n\d (decommissioned|killed and removed)$/);
}, 420_000);

describe.skipIf(!root)('the harness cleans up after itself', () => {
  /** Start `npm run jepsen` as a child; resolves with it once its cluster is up. */
  function startHarness(): Promise<{ pid: number; exit: Promise<number | null>; out: string[] }> {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'main.ts'), '--time', '300', '--nodes', '4', '--nemesis', 'partition', '--every-ms', '2000', '--results', RESULTS], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: string[] = [];
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the harness did not form its cluster in 120 s:\n${out.join('\n')}`)), 120_000);
      createInterface({ input: child.stdout! }).on('line', (l) => {
        out.push(l);
        // Up, and one partition applied: there are rules to remove too.
        if (/nemesis partition: /.test(l)) clearTimeout(timer), resolve({ pid: child.pid!, exit, out });
      });
      child.stderr!.on('data', (d: Buffer) => out.push(d.toString()));
    });
  }

  /** The PIDs of the ringkv nodes in the harness's namespaces (not the nft commands it runs there now and then). */
  const nodePids = (pid: number): number[] =>
    leftovers(pid)
      .namespaces.flatMap((ns) => spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split(/\s+/).filter(Boolean).map(Number))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('src/cli/main.ts');
        } catch {
          return false;
        }
      });
  /** Running: exists and is not a zombie (an orphan's parent here may never reap it). */
  const alive = (pid: number): boolean => {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };
  const described = (pids: number[]): string => spawnSync('ps', ['-o', 'pid,ppid,stat,cmd', '-p', pids.join(',')], { encoding: 'utf8' }).stdout;

  it('removes every namespace, link and node process when the run fails midway', async () => {
    let pids: number[] = [];
    const run = runJepsen({
      timeS: 60, nodes: 4, nemeses: ['partition'], workloads: ['set'], seed: 1, everyMs: 5000, workers: 2, resultsDir: RESULTS, requireAll: false, log: () => undefined,
      onReady: (info) => {
        pids = info.pids;
        expect(leftovers(process.pid).namespaces).toHaveLength(4);
        throw new Error('the run fails here');
      },
    });
    await expect(run).rejects.toThrow('the run fails here');
    expect(pids).toHaveLength(4);
    expect(leftovers(process.pid)).toEqual({ namespaces: [], links: [] });
    for (const p of pids) expect(alive(p)).toBe(false);
  }, 180_000);

  it('removes every namespace, link, rule and node process when interrupted (SIGINT)', async () => {
    const h = await startHarness();
    const pids = nodePids(h.pid);
    expect(pids.length, described(pids)).toBe(4);
    expect(leftovers(h.pid).links.length).toBeGreaterThan(0);
    process.kill(h.pid, 'SIGINT');
    expect(await h.exit).toBe(130);
    expect(leftovers(h.pid)).toEqual({ namespaces: [], links: [] });
    for (const p of pids) expect(alive(p)).toBe(false);
  }, 180_000);

  it('leaves its namespaces behind when killed -9, and the sweep of the next run removes them with their processes', async () => {
    const h = await startHarness();
    const pids = nodePids(h.pid);
    process.kill(h.pid, 'SIGKILL');
    await h.exit;
    const left = leftovers(h.pid).namespaces;
    expect(left).toHaveLength(4);
    for (const p of pids) expect(alive(p)).toBe(true);
    expect(sweep()).toEqual(expect.arrayContaining(left));
    expect(leftovers(h.pid)).toEqual({ namespaces: [], links: [] });
    for (const p of pids) expect(alive(p)).toBe(false);
  }, 180_000);
});
