/**
 * The short Jepsen pass that CI runs: 5 real nodes, each in its own network namespace,
 * the set, register, counter, orset, map and cas workloads, and every nemesis kind, partition shape and slow shape at least once in
 * 80 s (a fault every 4 s, the workload running on until the last has been applied, up to 160 s, when a slow
 * machine applies them late; about 110 s with forming and settling here), a full disk and damaged files among them; then no
 * acknowledged write lost, no increment lost or counted twice, no removed element back, no map update applied in part,
 * every compare-and-set key's history linearizable (linearizability.ts's search),
 * nothing unexpected, every replica identical, and throughput and
 * p99 per kind in the report. And the harness leaves nothing behind — no namespace, link,
 * rule, cpu cgroup, delay proxy or node process — not when a run fails, not when
 * interrupted, not when killed -9 (the next run, or --sweep, removes what it left).
 *
 * As root (CI) the network nemeses and the slow ones must run; elsewhere they report "not
 * run" and the rest still runs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { capabilities, leftovers, sweep } from '../../testkit/jepsen/net.js';
import { NEMESES, PARTITION_SHAPES, schedule, SLOW_SHAPES } from './nemesis.js';
import { runJepsen } from './run.js';
import { cgroupProcs } from '../../testkit/jepsen/slow.js';

const RESULTS = join(import.meta.dirname, '../../results/jepsen');
const caps = capabilities();
const root = caps.namespaces === true;
const NOTHING = { namespaces: [], links: [], cgroups: [], proxies: [], disks: [] };
if (process.env['CI'] === 'true' && process.getuid?.() === 0 && !root)
  throw new Error(`CI runs as root, so the network nemeses must run: ${caps.namespaces}`);

it('loses nothing acknowledged and converges under every nemesis (5 nodes, set, register, counter, orset and map), and compare-and-set stays linearizable', async () => {
  const lines: string[] = [];
  const r = await runJepsen({
    timeS: 80,
    nodes: 5,
    nemeses: [...NEMESES],
    workloads: ['set', 'register', 'counter', 'orset', 'map', 'cas'],
    seed: 20261201,
    // 16 kinds (6 partition shapes, 3 slow shapes, 7 more) fit in 80 s at one every 4 s whatever the seed (nemesis.test.ts).
    everyMs: 4000,
    workers: 10,
    resultsDir: RESULTS,
    requireAll: process.env['CI'] === 'true',
    log: (l) => lines.push(l),
  });
  // The first few keys that did not converge, each replica's record of what differs: what a convergence violation needs to be read.
  const summary = `${lines.join('\n')}\n${JSON.stringify({ faults: r.faults, violations: r.violations, divergent: r.convergence.divergent.slice(0, 3), notRun: r.notRun }, null, 1)}`;
  expect(r.violations, summary).toEqual([]);
  expect(r.set!.lost).toEqual([]);
  expect(r.set!.unexpected).toEqual([]);
  expect(r.register!.lost).toEqual([]);
  expect(r.register!.unexpected).toEqual([]);
  expect(r.convergence.converged, r.convergence.divergent.slice(0, 3).join('\n')).toBe(true);
  expect([r.counter!.lost, r.counter!.doubled, r.counter!.badReads]).toEqual([[], [], []]);
  expect([r.orset!.lost, r.orset!.resurrected, r.orset!.unexpected]).toEqual([[], [], []]);
  expect([r.map!.lost, r.map!.torn, r.map!.unexpected]).toEqual([[], [], []]);
  expect(r.set!.acknowledged).toBeGreaterThan(500);
  expect(r.register!.acknowledged).toBeGreaterThan(500);
  expect(r.counter!.acknowledged).toBeGreaterThan(200);
  expect(r.counter!.reads).toBeGreaterThan(50);
  expect(r.orset!.acknowledged).toBeGreaterThan(200);
  expect(r.orset!.removed).toBeGreaterThan(20);
  expect(r.map!.acknowledged).toBeGreaterThan(200);
  // Compare-and-set: the checker found an order for every key's history (violations hold it otherwise), over real
  // contention: many writes applied, and many refused because another client's landed first. (One worker runs the
  // workload, so the counts follow the machine's speed.)
  expect(r.cas!.verdict.linearizable, summary).toBe(true);
  expect(r.cas!.applied, summary).toBeGreaterThan(50);
  expect(r.cas!.beaten, summary).toBeGreaterThan(50);
  expect(r.cas!.verdict.keys.flatMap((k) => k.ops)).toHaveLength(3);
  const applied = r.faults.filter((f) => f.skipped === undefined);
  const kinds = new Set(applied.map((f) => f.kind));
  for (const k of NEMESES)
    if (root || (k !== 'partition' && k !== 'packet' && k !== 'disk-full'))
      expect(kinds.has(k), `${k} applied\n${summary}`).toBe(true);
  // The damage was done: bytes flipped, a table removed, the log cut (what a node's files held by then).
  expect(applied.find((f) => f.kind === 'corrupt')!.label, summary).toMatch(
    /table \d+\.ldb \(\d+ bytes\) removed, \d+ bytes flipped in table \d+\.ldb .*log \d+\.log cut/,
  );
  if (root)
    for (const s of PARTITION_SHAPES)
      expect(
        applied.some((f) => f.label.startsWith(`${s}:`)),
        `partition ${s}\n${summary}`,
      ).toBe(true);
  const slowRuns = root ? SLOW_SHAPES : (['strobe'] as const);
  for (const s of slowRuns)
    expect(
      applied.some((f) => f.kind === 'slow' && f.shape === s && f.label.startsWith(`${s}:`)),
      `slow ${s}\n${summary}`,
    ).toBe(true);
  // Throughput and p99 during each kind and shape ÷ quiet, and failures, in the report.
  expect(r.impact.quiet.okPerSec).toBeGreaterThan(0);
  for (const k of ['slow', ...slowRuns.map((s) => `slow:${s}`), ...(root ? ['partition:isolate'] : [])]) {
    expect(r.impact.byKind[k], k).toMatchObject({
      throughput: expect.any(Number),
      p99: expect.any(Number),
      failed: expect.any(Number),
    });
  }
  expect(readFileSync(join(r.folder, 'summary.txt'), 'utf8')).toMatch(
    /throughput and p99 during faults ÷ quiet[\s\S]*slow:strobe/,
  );
  // Nothing of this run is left: no cgroup, proxy, namespace or link.
  expect(leftovers(process.pid)).toEqual(NOTHING);
  for (const f of ['report.json', 'summary.txt', 'history.jsonl']) expect(existsSync(join(r.folder, f)), f).toBe(true);
  expect(readFileSync(join(r.folder, 'timeline.svg'), 'utf8')).toMatch(/^<svg[\s\S]*partition: halves[\s\S]*<\/svg>$/);
  const membership = applied.find((f) => f.kind === 'membership')!;
  expect(membership.label, summary).toMatch(/^n6 joins, n\d (decommissioned|killed and removed)$/);
}, 420_000);

describe.skipIf(!root)('the harness cleans up after itself', () => {
  /**
   * A seed whose schedule for `--nemesis partition,slow` applies a partition, then a link
   * delay, then a CPU throttle, the throttle as early as can be: two harnesses on it are
   * stopped, one while the delay is in force (NAT rules, a proxy), one while the throttle is
   * (a cpu cgroup holding a node, and the proxy the delay before it left running).
   */
  const SEED = (() => {
    let best = { seed: 1, at: Infinity };
    for (let seed = 1; seed <= 500; seed++) {
      const first = schedule({ seed, nemeses: ['partition', 'slow'], timeMs: 300_000, everyMs: 2000 }).slice(
        0,
        PARTITION_SHAPES.length + SLOW_SHAPES.length,
      );
      const p = first.findIndex((f) => f.kind === 'partition'),
        d = first.findIndex((f) => f.shape === 'delay'),
        c = first.findIndex((f) => f.shape === 'cpu');
      if (p < d && d < c && c < best.at) best = { seed, at: c };
    }
    return best.seed;
  })();

  type Harness = { pid: number; exit: Promise<number | null>; out: string[]; victim: string };
  /** Start `npm run jepsen` as a child; resolves with it once its cluster is up and a fault matching `ready` is in force (its victim too). */
  function startHarness(ready: RegExp): Promise<Harness> {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, 'main.ts'),
        '--time',
        '300',
        '--nodes',
        '4',
        '--nemesis',
        'partition,slow',
        '--seed',
        String(SEED),
        '--every-ms',
        '4000',
        '--results',
        RESULTS,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const out: string[] = [];
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGINT');
        reject(new Error(`the harness did not form its cluster and reach ${ready} in 270 s:\n${out.join('\n')}`));
      }, 270_000);
      createInterface({ input: child.stdout! }).on('line', (l) => {
        out.push(l);
        // Up, a partition applied before (rules made and removed), and the fault asked for in force.
        const m = ready.exec(l);
        if (m && out.some((x) => /nemesis partition: /.test(x)))
          (clearTimeout(timer), resolve({ pid: child.pid!, exit, out, victim: m[1]! }));
      });
      child.stderr!.on('data', (d: Buffer) => out.push(d.toString()));
    });
  }
  const DELAY = /nemesis slow: delay: (n\d) links/;
  const CPU = /nemesis slow: cpu: (n\d) throttled/;

  /** The delay's NAT rules in the victim's namespace. */
  const natRules = (h: Harness): string =>
    spawnSync('ip', ['netns', 'exec', `rkj${h.pid}-${h.victim}`, 'nft', 'list', 'table', 'ip', 'jepsen_nat'], {
      encoding: 'utf8',
    }).stdout;
  /** What a harness has in force (checked just before it is stopped, while the fault lasts): a delay's NAT rules and proxy, or a throttle's cgroup and the proxy the delay before it left. */
  function expectSlowFault(h: Harness, ready: RegExp): void {
    if (ready === DELAY) expect(natRules(h), h.out.join('\n')).toMatch(/dnat to/);
    else {
      const groups = leftovers(h.pid).cgroups;
      expect(groups, h.out.join('\n')).toHaveLength(1);
      expect(cgroupProcs(groups[0]!)).toHaveLength(1);
    }
    expect(leftovers(h.pid).proxies.length).toBeGreaterThan(0);
  }
  /** Two harnesses side by side, each stopped with `sig` as soon as its fault is in force: one a link delay, one a CPU throttle. */
  async function stopBoth(
    sig: NodeJS.Signals,
  ): Promise<{ delayed: Harness; throttled: Harness; nodes: number[]; proxies: number[]; groups: string[] }> {
    const nodes: number[] = [],
      proxies: number[] = [],
      groups: string[] = [];
    const one = async (ready: RegExp): Promise<Harness> => {
      const h = await startHarness(ready);
      expectSlowFault(h, ready);
      nodes.push(...nodePids(h.pid));
      proxies.push(...leftovers(h.pid).proxies);
      groups.push(...leftovers(h.pid).cgroups);
      process.kill(h.pid, sig);
      return h;
    };
    const [delayed, throttled] = await Promise.all([one(DELAY), one(CPU)]);
    return { delayed, throttled, nodes, proxies, groups };
  }
  const rootRules = (): string => spawnSync('nft', ['list', 'ruleset'], { encoding: 'utf8' }).stdout;

  /** The PIDs of the ringkv nodes in the harness's namespaces (not the nft commands it runs there now and then). */
  const nodePids = (pid: number): number[] =>
    leftovers(pid)
      .namespaces.flatMap((ns) =>
        spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split(/\s+/).filter(Boolean).map(Number),
      )
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
  const described = (pids: number[]): string =>
    spawnSync('ps', ['-o', 'pid,ppid,stat,cmd', '-p', pids.join(',')], { encoding: 'utf8' }).stdout;

  it('removes every namespace, link and node process when the run fails midway', async () => {
    let pids: number[] = [];
    const run = runJepsen({
      timeS: 60,
      nodes: 4,
      nemeses: ['partition'],
      workloads: ['set'],
      seed: 1,
      everyMs: 5000,
      workers: 2,
      resultsDir: RESULTS,
      requireAll: false,
      log: () => undefined,
      onReady: (info) => {
        pids = info.pids;
        expect(leftovers(process.pid).namespaces).toHaveLength(4);
        throw new Error('the run fails here');
      },
    });
    await expect(run).rejects.toThrow('the run fails here');
    expect(pids).toHaveLength(4);
    expect(leftovers(process.pid)).toEqual(NOTHING);
    for (const p of pids) expect(alive(p)).toBe(false);
  }, 300_000);

  it('removes every namespace, link, rule, cpu cgroup, delay proxy and node process when interrupted (SIGINT)', async () => {
    const { delayed, throttled, nodes, proxies } = await stopBoth('SIGINT');
    expect(nodes.length, described(nodes)).toBe(8);
    const pids = [...nodes, ...proxies];
    for (const h of [delayed, throttled]) expect(await h.exit, h.out.join('\n')).toBe(130);
    for (const h of [delayed, throttled]) expect(leftovers(h.pid)).toEqual(NOTHING);
    for (const p of pids) expect(alive(p)).toBe(false);
    // The root namespace never held a rule of theirs.
    for (const h of [delayed, throttled]) expect(rootRules()).not.toContain(`rkj${h.pid}`);
  }, 360_000);

  it('leaves its namespaces and cgroup behind when killed -9, and the sweep of the next run removes them with their processes', async () => {
    const { delayed, throttled, nodes: pids, proxies, groups } = await stopBoth('SIGKILL');
    for (const h of [delayed, throttled]) await h.exit;
    const left = [delayed, throttled].flatMap((h) => leftovers(h.pid).namespaces);
    expect(left).toHaveLength(8);
    // The throttled node is still in the dead harness's cgroup.
    expect(groups).toHaveLength(1);
    expect(leftovers(throttled.pid).cgroups).toEqual(groups);
    expect(cgroupProcs(groups[0]!).every((p) => pids.includes(p))).toBe(true);
    for (const p of pids) expect(alive(p)).toBe(true);
    expect(sweep()).toEqual(expect.arrayContaining([...left, ...groups]));
    for (const h of [delayed, throttled]) expect(leftovers(h.pid)).toEqual(NOTHING);
    // Every node process is gone, and every proxy (each ends by itself once its harness's pipe closes, else the sweep kills it).
    for (const p of [...pids, ...proxies]) expect(alive(p)).toBe(false);
  }, 360_000);
});
