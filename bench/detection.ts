/**
 * npm run bench:detection — how fast the gossip failure detector sees a node go and come
 * back, on 5 real `ringkv node` processes on 127.0.0.1 at the default 1 s gossip interval.
 * Per round (`--rounds`, 5), on n5:
 *
 * - kill -9 → every other node's Status shows it down;
 * - restart on the same data dir → seen up everywhere, from its 'node started' log line;
 * - SIGSTOP → seen down everywhere; SIGCONT → seen up everywhere again.
 *
 * Polled every 100 ms; the median and the worst of the rounds are printed. What the
 * cluster tests assert about detection is only the outcome (test/cluster/membership.test.ts):
 * this is the figure. Requests do not wait for it (docs/node.md#failure-detection).
 *
 *   npm run bench:detection [-- --rounds 5]
 */
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../testkit/ports.js';
import { table } from './lib.js';
import { Proc, benchRoot, formed, sleep, statuses, stopAll } from './processes.js';

const args = process.argv.slice(2);
const ROUNDS = Math.min(20, Number(args[args.indexOf('--rounds') + 1] ?? NaN) || 5);
const LIMIT_MS = 60_000;
const root = benchRoot('detection');

/** ms until every node of `others` shows `id` as `up` (polled every 100 ms, at most LIMIT_MS). */
async function until(others: readonly Proc[], id: string, up: boolean, from: number): Promise<number> {
  for (;;) {
    const views = await statuses(others);
    if (views.every((v) => v?.members.find((m) => m.id === id)?.up === up)) return performance.now() - from;
    if (performance.now() - from > LIMIT_MS)
      throw new Error(`${id} not seen ${up ? 'up' : 'down'} everywhere within ${LIMIT_MS} ms`);
    await sleep(100);
  }
}

/** When (performance.now) `p` logged 'node started' after its first `skip` lines. */
async function startedAt(p: Proc, skip: number): Promise<number> {
  const end = performance.now() + LIMIT_MS;
  for (;;) {
    const line = p.lines.slice(skip).find((x) => x.line.msg === 'node started');
    if (line !== undefined) return line.at;
    if (performance.now() > end) throw new Error(`${p.id} did not start within ${LIMIT_MS} ms`);
    await sleep(20);
  }
}

function summary(ms: readonly number[]): string[] {
  const sorted = [...ms].sort((a, b) => a - b);
  return [
    `${(sorted[Math.floor(sorted.length / 2)]! / 1000).toFixed(2)} s`,
    `${(sorted[sorted.length - 1]! / 1000).toFixed(2)} s`,
  ];
}

async function main(): Promise<void> {
  console.log(`npm run bench:detection -- --rounds ${ROUNDS}`);
  console.log(
    `machine: ${availableParallelism()} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const ports = await Promise.all([1, 2, 3, 4, 5].map(() => freePort()));
  const nodes = ports.map((p, i) => new Proc(`n${i + 1}`, `127.0.0.1:${p}`, join(root, `n${i + 1}`)));
  const seeds = nodes.slice(0, 3).map((n) => n.address);
  const extra = ['--log-level', 'info'];
  for (const n of nodes) n.start(seeds, extra);
  try {
    await formed(nodes, 90_000);
    const victim = nodes[4]!;
    const others = nodes.slice(0, 4);
    const kill: number[] = [],
      restart: number[] = [],
      pause: number[] = [],
      resume: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      await sleep(3000); // heartbeats settle between rounds
      let t = performance.now();
      process.kill(victim.child!.pid!, 'SIGKILL');
      await victim.exit;
      kill.push(await until(others, victim.id, false, t));
      const lines = victim.lines.length;
      victim.start(seeds, extra);
      const started = await startedAt(victim, lines);
      restart.push(await until(others, victim.id, true, started));
      await sleep(3000);
      t = performance.now();
      process.kill(victim.child!.pid!, 'SIGSTOP');
      pause.push(await until(others, victim.id, false, t));
      t = performance.now();
      process.kill(victim.child!.pid!, 'SIGCONT');
      resume.push(await until(others, victim.id, true, t));
      console.log(
        `round ${r + 1}: kill ${kill[r]!.toFixed(0)} ms, restart ${restart[r]!.toFixed(0)} ms, pause ${pause[r]!.toFixed(0)} ms, resume ${resume[r]!.toFixed(0)} ms`,
      );
    }
    console.log(`\nseen everywhere (${ROUNDS} rounds, 4 observers, 1 s gossip):`);
    console.log(
      table([
        ['event', 'median', 'worst'],
        ['kill -9 → down', ...summary(kill)],
        ['restart → up (from its start)', ...summary(restart)],
        ['SIGSTOP → down', ...summary(pause)],
        ['SIGCONT → up', ...summary(resume)],
      ]),
    );
  } finally {
    await stopAll(nodes);
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
