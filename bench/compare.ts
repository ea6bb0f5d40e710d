/**
 * npm run bench:compare — one bench run against two builds of ringkv side by side: an
 * older commit's (`--base REV`, default the last commit before issue 27's restructuring
 * started: b02e25f) and this tree's. The bench's own code (its load, its offline writes)
 * is this tree's for both; only the `ringkv node` processes differ (RINGKV_DIST, read by
 * bench/processes.ts). Rounds alternate, the order rotating (base, head; head, base; ...),
 * so drift on this shared machine hits both alike; each figure is the median over rounds,
 * and the table prints head ÷ base.
 *
 * The base is built once into a git worktree under the system temp dir (kept between runs,
 * keyed by commit, with this tree's node_modules linked in), from `git` of this checkout.
 *
 *   npm run bench:compare -- [--base REV] [--rounds 3] vs|handoff|types|batch [bench args...]
 *   e.g. npm run bench:compare -- vs --quick --systems ringkv
 *        npm run bench:compare -- handoff --quick
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { table } from './lib.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const argv = process.argv.slice(2);
const take = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const [, v] = argv.splice(i, 2);
  return v;
};
const BASE = take('--base') ?? 'b02e25f';
const ROUNDS = Number(take('--rounds') ?? 3);
const BENCH = argv.shift();
const BENCHES = ['vs', 'handoff', 'types', 'batch'];
if (BENCH === undefined || !BENCHES.includes(BENCH))
  throw new Error(`usage: npm run bench:compare -- [--base REV] [--rounds N] ${BENCHES.join('|')} [bench args...]`);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > 20) throw new Error(`--rounds is 1 to 20, got ${ROUNDS}`);

const git = (...args: string[]): string => execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' }).trim();

/** The base commit's dist/, built once in a worktree of its own. */
function baseDist(): { commit: string; dist: string } {
  const commit = git('rev-parse', '--verify', `${BASE}^{commit}`);
  const tree = join(tmpdir(), `ringkv-base-${commit.slice(0, 12)}`);
  const dist = join(tree, 'dist');
  if (!existsSync(join(dist, 'cli', 'main.js'))) {
    if (!existsSync(tree)) git('worktree', 'add', '--detach', tree, commit);
    if (!existsSync(join(tree, 'node_modules'))) symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
    console.log(`building ${commit.slice(0, 12)} in ${tree}`);
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      { cwd: tree, stdio: 'inherit' },
    );
  }
  return { commit, dist };
}

/** One run of the bench with the nodes from `dist`; its figures, flattened to name → number. */
async function run(dist: string, label: string): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ringkv-compare-'));
  const out = join(dir, 'figures.json');
  try {
    const code = await new Promise<number | null>((res) => {
      const child = spawn(
        process.execPath,
        ['--expose-gc', '--import', 'tsx', join(ROOT, 'bench', `${BENCH}.ts`), ...argv, '--json', out],
        {
          cwd: ROOT,
          env: { ...process.env, RINGKV_DIST: dist },
          stdio: ['ignore', 'inherit', 'inherit'],
        },
      );
      child.on('exit', res);
      // Stopped (Ctrl-C, kill): the bench stops first, so that it stops its nodes and servers by their PIDs.
      const forward = (signal: NodeJS.Signals): void => {
        child.kill(signal);
        child.once('exit', () => process.exit(130));
      };
      process.once('SIGINT', forward).once('SIGTERM', forward);
      child.on('exit', () => process.off('SIGINT', forward).off('SIGTERM', forward));
    });
    if (code !== 0) throw new Error(`bench:${BENCH} on ${label} exited ${code}`);
    return figuresOf(JSON.parse(readFileSync(out, 'utf8')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every number under `v`, by its path (`a.b.0.c`). */
function numbers(v: unknown, path: string, out: Record<string, number>): Record<string, number> {
  if (typeof v === 'number') out[path] = v;
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) numbers(x, path === '' ? k : `${path}.${k}`, out);
  return out;
}

/**
 * bench:vs: ringkv's ops/s and p99 per workload and level; bench:handoff: its figures as
 * they are; bench:types and bench:batch: every number of their results (their settings,
 * the top level's plain numbers, left out).
 */
function figuresOf(json: Record<string, unknown>): Record<string, number> {
  if (BENCH === 'handoff') return json.figures as Record<string, number>;
  if (BENCH === 'types' || BENCH === 'batch') {
    const f: Record<string, number> = {};
    for (const [k, v] of Object.entries(json)) if (typeof v === 'object') numbers(v, k, f);
    return f;
  }
  const f: Record<string, number> = {};
  const phases = json.phases as { label: string; cells: Record<string, { opsPerSec: number; p99: number }> }[];
  for (const [cell, s] of Object.entries(phases[0]!.cells)) {
    const [workload, inflight, system] = cell.split('|');
    if (system !== 'ringkv') continue;
    f[`${workload} ${inflight} ops/s`] = s.opsPerSec;
    f[`${workload} ${inflight} p99 ms`] = s.p99;
  }
  return f;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const base = baseDist();
  const head = { commit: git('rev-parse', 'HEAD'), dist: join(ROOT, 'dist') };
  if (!existsSync(join(head.dist, 'cli', 'main.js'))) throw new Error('build this tree first: npm run build');
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  const sides = [
    { name: `base ${base.commit.slice(0, 12)}`, dist: base.dist, runs: [] as Record<string, number>[] },
    {
      name: `head ${head.commit.slice(0, 12)}${dirty ? ' + changes' : ''}`,
      dist: head.dist,
      runs: [] as Record<string, number>[],
    },
  ];
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      console.log(`\n── round ${round + 1}/${ROUNDS}: bench:${BENCH} ${argv.join(' ')} on ${side.name}`);
      side.runs.push(await run(side.dist, side.name));
    }
  }
  const names = Object.keys(sides[0]!.runs[0]!);
  const rows = names.map((n) => {
    const [b, h] = sides.map((s) => median(s.runs.map((r) => r[n] ?? NaN)));
    return [n, b!.toFixed(2), h!.toFixed(2), (h! / b!).toFixed(3)];
  });
  console.log(
    `\nbench:compare — bench:${BENCH} ${argv.join(' ')}: medians of ${ROUNDS} round(s) each, rounds alternating`,
  );
  console.log(table([['figure', sides[0]!.name, sides[1]!.name, 'head ÷ base'], ...rows]));
}

await main();
