/**
 * Hostile input against a real `ringkv node` (issue 16): each attack of
 * testkit/hostile/attacks.ts runs against a 1-node cluster while a victim client, in a
 * process of its own, keeps doing small puts and gets; per attack, what the attacker got,
 * how the victim fared (and whether a brand-new connection could still get a put in), the
 * node's RSS before, at its peak (VmHWM, reset before each attack, and /proc sampled every
 * 50 ms) and after, and whether the node is still alive and answering.
 *
 *   node --import tsx bench/hostile.ts [--quick]
 *
 * --quick: smaller sizes and counts (about two minutes). Every process it starts is killed
 * by its PID at the end, on error too.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '../src/client/index.js';
import { TestCluster, type NodeProcess } from '../testkit/node-cluster.js';
import { waitFor } from '../testkit/wait.js';
import * as A from '../testkit/hostile/attacks.js';
import { fdCount, memOf, resetPeak } from '../testkit/hostile/proc.js';

const SELF = fileURLToPath(import.meta.url);
const MiB = 1 << 20;

// ---------------------------------------------------------------------------------------
// The victim: a child process commanded over IPC.

interface VictimStats {
  ok: number;
  fail: number;
  failures: Record<string, number>;
  p50: number;
  p99: number;
  max: number;
  freshOk: number;
  freshFail: number;
  freshFailures: Record<string, number>;
}

type VictimCommand = { cmd: 'start' } | { cmd: 'stop' } | { cmd: 'exit' };
type VictimReply = { kind: 'started'; warm: string } | { kind: 'stats'; stats: VictimStats };

let RUN = 0;

/** Per attack: a long-lived client (2 lanes of put + get, 5 ms apart), and a brand-new client's put every second. */
async function victimMain(address: string): Promise<void> {
  const send = (m: VictimReply): void => void process.send?.(m);
  const code = (e: unknown): string => {
    const x = e as { code?: number; details?: string; message?: string };
    return A.shape(
      `${x.code !== undefined ? A.grpcCodeName(x.code) : 'error'}: ${(x.details ?? x.message ?? '').slice(0, 90)}`,
    );
  };
  let running: { stop: () => Promise<VictimStats> } | undefined;
  const start = async (): Promise<string> => {
    const client = new Client({ nodes: [address], deadlineMs: 2000, tokenAware: false });
    let warm = 'ok';
    try {
      await client.put('victim-warm', 'x');
    } catch (e) {
      warm = code(e);
    }
    let stopped = false;
    const lat: number[] = [];
    const failures: string[] = [];
    const freshFailures: string[] = [];
    let freshOk = 0;
    const value = Buffer.alloc(100, 0x76);
    const run = RUN++;
    // A get, then a put with its context (no siblings pile up), on keys of this lane.
    const lane = async (l: number): Promise<void> => {
      for (let i = 0; !stopped && i < 500_000; i++) {
        const key = `victim-${l}-${i % 1000}`;
        let context: Buffer | undefined;
        const ops = [
          async () => void (context = (await client.get(key)).context),
          async () => void (await client.put(key, value, context ? { context } : {})),
        ];
        for (const op of ops) {
          const t = performance.now();
          try {
            await op();
            lat.push(performance.now() - t);
          } catch (e) {
            failures.push(code(e));
          }
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    // A brand-new TCP connection each time (grpc-js would share one subchannel between clients).
    const fresh = async (): Promise<void> => {
      for (let i = 0; !stopped && i < 100_000; i++) {
        const t = performance.now();
        const conn = await A.h2connect(address, {}, 2000);
        try {
          const body = A.grpcMessage(A.putRequest(Buffer.from(`victim-fresh-${process.pid}-${run}-${i}`), value));
          const r = await A.grpcCall(conn, {
            path: '/ringkv.v1.KeyValue/Put',
            headers: { 'grpc-timeout': '2000m' },
            timeoutMs: Math.max(100, 2000 - (performance.now() - t)),
            send: async (w) => w.end(body),
          });
          if (r.grpcStatus === 0) freshOk++;
          else freshFailures.push(A.shape(A.describeCall(r).slice(0, 100)));
        } finally {
          await conn.close();
        }
        for (let w = 0; w < 10 && !stopped; w++) await new Promise((r) => setTimeout(r, 100));
      }
    };
    const loops = Promise.all([lane(0), lane(1), fresh()]);
    running = {
      stop: async () => {
        stopped = true;
        await loops;
        client.close();
        lat.sort((a, b) => a - b);
        const q = (p: number): number => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
        return {
          ok: lat.length,
          fail: failures.length,
          failures: A.tally(failures),
          p50: q(0.5),
          p99: q(0.99),
          max: lat[lat.length - 1] ?? NaN,
          freshOk,
          freshFail: freshFailures.length,
          freshFailures: A.tally(freshFailures),
        };
      },
    };
    return warm;
  };
  process.on('message', (m: VictimCommand) => {
    void (async () => {
      if (m.cmd === 'start') send({ kind: 'started', warm: await start() });
      else if (m.cmd === 'stop' && running !== undefined) {
        const r = running;
        running = undefined;
        send({ kind: 'stats', stats: await r.stop() });
      } else if (m.cmd === 'exit') process.exit(0);
    })();
  });
  process.on('disconnect', () => process.exit(0));
}

class Victim {
  readonly child: ChildProcess;
  #waiting: ((m: VictimReply) => void) | undefined;

  constructor(address: string) {
    this.child = spawn(process.execPath, ['--import', 'tsx', SELF, '--victim', address], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (m: VictimReply) => {
      const w = this.#waiting;
      this.#waiting = undefined;
      w?.(m);
    });
  }

  #ask(cmd: VictimCommand, timeoutMs: number): Promise<VictimReply | undefined> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.#waiting = undefined;
        resolve(undefined);
      }, timeoutMs);
      this.#waiting = (m) => {
        clearTimeout(t);
        resolve(m);
      };
      this.child.send(cmd);
    });
  }

  async start(): Promise<string> {
    const r = await this.#ask({ cmd: 'start' }, 15_000);
    return r?.kind === 'started' ? r.warm : 'victim did not start';
  }

  async stop(): Promise<VictimStats | undefined> {
    const r = await this.#ask({ cmd: 'stop' }, 30_000);
    return r?.kind === 'stats' ? r.stats : undefined;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null && this.child.pid !== undefined)
      process.kill(this.child.pid, 'SIGKILL');
  }
}

// ---------------------------------------------------------------------------------------
// The node's memory (testkit/hostile/proc.ts) and sockets.

/** The node's server-side TCP sockets by state (ESTABLISHED, CLOSE_WAIT, ...), from /proc/net/tcp. */
function serverSockets(port: number): Record<string, number> {
  const names: Record<string, string> = {
    '01': 'ESTABLISHED',
    '06': 'TIME_WAIT',
    '07': 'CLOSE',
    '08': 'CLOSE_WAIT',
    '09': 'LAST_ACK',
    '0B': 'CLOSING',
    '04': 'FIN_WAIT1',
    '05': 'FIN_WAIT2',
  };
  const out: Record<string, number> = {};
  try {
    for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 4 || parseInt(f[1]!.split(':')[1] ?? '', 16) !== port) continue;
      const st = names[f[3]!];
      if (st !== undefined) out[st] = (out[st] ?? 0) + 1;
    }
  } catch {
    // not Linux
  }
  return out;
}

class Sampler {
  peak = 0;
  peakFds = 0;
  readonly #timer: NodeJS.Timeout;
  constructor(readonly pid: number) {
    this.#timer = setInterval(() => {
      const s = memOf(pid);
      if (s !== undefined && s.rss > this.peak) this.peak = s.rss;
      const f = fdCount(pid);
      if (f > this.peakFds) this.peakFds = f;
    }, 50);
  }
  stop(): void {
    clearInterval(this.#timer);
  }
}

// ---------------------------------------------------------------------------------------
// The run.

interface Attack {
  readonly name: string;
  readonly run: (address: string, node: NodeProcess) => Promise<A.Observed | A.Observed[]>;
  /** Runs after every other attack (it may take the node down). */
  readonly last?: boolean;
}

interface Row {
  readonly name: string;
  readonly observed: A.Observed[];
  readonly victim: VictimStats | undefined;
  readonly warm: string;
  readonly rssBefore: number;
  readonly rssPeakSampled: number;
  readonly hwm: number;
  readonly rssAfter: number;
  readonly fds: readonly [number, number, number];
  /** Server-side sockets once the attack is over. */
  readonly socketsAfter: Record<string, number>;
  /** The node was restarted before this attack (to measure it from a fresh heap). */
  readonly restarted: string;
  readonly afterNote: string;
  readonly alive: boolean;
  readonly answering: boolean;
  readonly exit: string;
  readonly logs: string[];
  readonly ms: number;
}

function attacks(quick: boolean): Attack[] {
  const q = <T>(full: T, small: T): T => (quick ? small : full);
  const list: Attack[] = [
    {
      name: 'baseline (no attack)',
      run: async () => (await A.sleep(q(10_000, 2000)), { attack: 'baseline', result: '-', ms: 0 }),
    },
    { name: 'raw TCP garbage / HTTP/1.1', run: (a) => A.tcpGarbage(a) },
    { name: 'bad HTTP/2 preface', run: (a) => A.badPreface(a, { timeoutMs: q(10_000, 2000) }) },
    { name: 'preface + SETTINGS, then garbage', run: (a) => A.prefaceThenGarbage(a) },
    { name: 'invalid frame types/lengths', run: (a) => A.invalidFrames(a, { lingerMs: q(1500, 400) }) },
    {
      name: 'CONTINUATION flood',
      run: async (a) => [
        await A.continuationFlood(a, { frames: 100_000, frameBytes: 0 }),
        await A.continuationFlood(a, { frames: 10_000, frameBytes: 1000 }),
      ],
    },
    { name: 'huge header block (1 MiB, raw)', run: (a) => A.hugeHeaders(a, { bytes: MiB }) },
    {
      name: 'control-frame floods',
      run: async (a) => [
        await A.controlFlood(a, { kind: 'ping', count: q(200_000, 50_000) }),
        await A.controlFlood(a, { kind: 'ping', count: q(200_000, 50_000), pauseReading: true }),
        await A.controlFlood(a, { kind: 'settings', count: q(200_000, 50_000) }),
        await A.controlFlood(a, { kind: 'empty-data', count: q(200_000, 50_000) }),
        await A.controlFlood(a, { kind: 'window-update', count: q(200_000, 50_000) }),
      ],
    },
    { name: 'gRPC-level malformed', run: (a) => A.grpcMalformed(a, { bombBytes: 200 * MiB, metadataBytes: MiB }) },
    { name: 'rapid reset', run: (a) => A.rapidReset(a, { streams: q(50_000, 10_000) }) },
    { name: 'in-flight floods', run: (a) => A.inFlightFlood(a, { unary: q(3000, 1500), streamCalls: q(5000, 2000) }) },
    {
      name: `oversized: ${q(100, 5)} × 100 MiB Put, sequential`,
      run: (a) => A.oversizedPuts(a, { count: q(100, 5), bytes: 100 * MiB, parallel: 1 }),
    },
    {
      name: `oversized: ${q(100, 10)} × 100 MiB Put, 10 at a time`,
      run: (a) => A.oversizedPuts(a, { count: q(100, 10), bytes: 100 * MiB, parallel: 10 }),
    },
    {
      name: `near the limit: ${q(100, 20)} × 8 MiB Put, 10 at a time`,
      run: (a) => A.oversizedPuts(a, { count: q(100, 20), bytes: 8 * MiB, parallel: 10 }),
    },
    {
      name: `stalled Puts: ${q(50, 10)} × 8 MiB − 1 byte`,
      run: (a) =>
        A.stalledPuts(a, {
          streams: q(50, 10),
          connections: 10,
          messageBytes: 8 * MiB,
          fraction: 0.9999,
          holdMs: q(15_000, 2000),
        }),
    },
    {
      name: `stalled Puts: ${q(200, 30)} × 8 MiB − 1 byte`,
      run: (a) =>
        A.stalledPuts(a, {
          streams: q(200, 30),
          connections: 20,
          messageBytes: 8 * MiB,
          fraction: 0.9999,
          holdMs: q(15_000, 2000),
        }),
    },
    {
      name: 'stalled Puts: half of 1 MiB, grpc-timeout 2S',
      run: (a) =>
        A.stalledPuts(a, {
          streams: 20,
          connections: 2,
          messageBytes: MiB,
          fraction: 0.5,
          holdMs: q(8000, 3000),
          grpcTimeout: '2S',
        }),
    },
    {
      name: 'slow client (a): preface at 1 B/s, 1 connection',
      run: (a) => A.slowPreface(a, { connections: 1, maxMs: q(40_000, 3000) }),
    },
    {
      name: `slow client (a): preface at 1 B/s, ${q(500, 100)} connections`,
      run: (a) => A.slowPreface(a, { connections: q(500, 100), maxMs: q(20_000, 3000) }),
    },
    {
      name: `slow client (b): Stream, ${q(1000, 300)} Gets of 1 MiB never read`,
      run: (a) =>
        A.streamNoRead(a, { valueBytes: MiB, gets: q(1000, 300), batch: 100, holdMs: q(20_000, 5000), windowBytes: 0 }),
    },
    {
      name: `slow client (b): Stream, ${q(20_000, 5000)} Gets of 100 B never read`,
      run: (a) =>
        A.streamNoRead(a, {
          valueBytes: 100,
          gets: q(20_000, 5000),
          batch: 1000,
          holdMs: q(15_000, 4000),
          windowBytes: 0,
        }),
    },
    {
      name: 'slow client (c): Put, half of 64 KiB, stall',
      run: (a) => A.stalledPuts(a, { streams: 1, messageBytes: 64 * 1024, fraction: 0.5, holdMs: q(20_000, 3000) }),
    },
    {
      name: `GOAWAY zombies (${q(500, 100)})`,
      run: (a) => A.goawayZombies(a, { connections: q(500, 100), holdMs: q(20_000, 3000) }),
    },
    {
      name: `connection flood: ${q(3000, 1200)} TCP + ${q(500, 200)} HTTP/2`,
      run: (a) => A.connectionFlood(a, { tcp: q(3000, 1200), h2: q(500, 200), holdMs: q(20_000, 3000) }),
    },
    {
      name: `connection flood, each with a call open: ${q(1100, 1100)} connections`,
      run: (a) =>
        A.stalledPuts(a, {
          streams: 1100,
          connections: 1100,
          messageBytes: 100,
          fraction: 0.5,
          holdMs: q(15_000, 3000),
        }),
    },
    {
      name: 'fd limit: node RLIMIT_NOFILE lowered to 600 (prlimit, below --max-connections 1024), 1000 TCP connections',
      last: true,
      run: async (a, node) => {
        const p = spawnSync('prlimit', ['--pid', String(node.pid), '--nofile=600:600']);
        if (p.status !== 0)
          return {
            attack: 'fd limit',
            result: `prlimit failed: ${p.stderr?.toString().trim() || p.error?.message}`,
            ms: 0,
          };
        const r = await A.connectionFlood(a, { tcp: 1000, h2: 0, holdMs: q(10_000, 4000), batch: 100 });
        return { ...r, attack: `fd limit 600: ${r.attack}` };
      },
    },
  ];
  return list.sort((x, y) => Number(x.last ?? false) - Number(y.last ?? false));
}

/** How long after an attack its "after" figures are read, ms. */
const SETTLE_MS = (quick: boolean): number => (quick ? 750 : 1500);

const mb = (n: number): string => (Number.isFinite(n) ? (n / MiB).toFixed(0) : '-');
const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(n < 10 ? 1 : 0) : '-');
const cell = (s: string, max = 400): string =>
  (s.length > max ? `${s.slice(0, max)}…` : s).replace(/\|/g, '\\|').replace(/\n/g, ' ');

function observedText(os: A.Observed[]): string {
  if (os.length === 1) return os[0]!.result;
  return os.map((o) => `${o.attack.replace(/^[^:]*: /, '')} → ${o.result}`).join(' ◆ ');
}

async function ready(node: NodeProcess, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    `${node.id} normal and up`,
    timeoutMs,
    async () => {
      const v = await node.status();
      return v !== undefined && v.members.length > 0 && v.members.every((m) => m.status === 'normal' && m.up);
    },
    200,
  );
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const cluster = await TestCluster.create(1, 1, ['--replicas', '1']);
  const node = cluster.nodes[0]!;
  let victim: Victim | undefined;
  const cleanup = (): void => {
    victim?.kill();
    cluster.destroy();
  };
  const onSignal = (): void => {
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const rows: Row[] = [];
  const began = Date.now();
  try {
    node.start();
    await ready(node);
    victim = new Victim(node.address);
    console.error(
      `node ${node.id} at ${node.address}, pid ${node.pid}; victim pid ${victim.child.pid}; ${quick ? 'quick' : 'full'} run`,
    );
    const port = Number(node.address.slice(node.address.lastIndexOf(':') + 1));
    let baseRss = NaN;
    for (const attack of attacks(quick)) {
      let restarted = '';
      const rssNow = memOf(node.pid)?.rss ?? NaN;
      if (!node.running) restarted = 'the node had died';
      else if (rssNow > baseRss + 64 * MiB) restarted = `RSS was ${mb(rssNow)} MiB`;
      if (restarted !== '') {
        // A fresh process, so that this attack's RSS is not hidden in heap an earlier one grew.
        console.error(`restarting the node before "${attack.name}" (${restarted})`);
        if (node.running) {
          node.signal('SIGKILL');
          await node.exit;
        }
        node.start();
        await ready(node);
        await A.sleep(1000);
      }
      await A.sleep(quick ? 200 : 500);
      const pid = node.pid;
      const fdsBefore = fdCount(pid);
      const logFrom = node.lines.length;
      const stderrFrom = node.stderr.length;
      const before = memOf(pid)?.rss ?? NaN;
      const resetOk = resetPeak(pid);
      const sampler = new Sampler(pid);
      const warm = await victim.start();
      const started = Date.now();
      process.stderr.write(`${attack.name} ... `);
      let observed: A.Observed[];
      try {
        const r = await attack.run(node.address, node);
        observed = Array.isArray(r) ? r : [r];
      } catch (e) {
        observed = [
          {
            attack: attack.name,
            result: `attack threw: ${(e as Error).stack?.split('\n').slice(0, 2).join(' ') ?? e}`,
            ms: Date.now() - started,
          },
        ];
      }
      const took = Date.now() - started;
      const stats = await victim.stop();
      const peakStatus = memOf(pid);
      sampler.stop();
      await A.sleep(SETTLE_MS(quick));
      const alive = node.running;
      const answering = alive && (await node.status()) !== undefined;
      let after = memOf(pid)?.rss ?? NaN;
      let afterNote = '';
      if (alive && Math.max(sampler.peak, peakStatus?.rss ?? 0) > before + 100 * MiB) {
        // Grew a lot: give the heap time to be collected, then look again.
        await A.sleep(quick ? 3000 : 8000);
        after = memOf(pid)?.rss ?? NaN;
        afterNote = ` (after: ${((SETTLE_MS(quick) + (quick ? 3000 : 8000)) / 1000).toFixed(1)} s after the attack)`;
      }
      if (!Number.isFinite(baseRss)) baseRss = after;
      const fdsAfter = fdCount(pid);
      const socketsAfter = serverSockets(port);
      const logs = node.lines
        .slice(logFrom)
        .filter((l) => typeof l['level'] === 'number' && (l['level'] as number) >= 40)
        .map((l) =>
          A.shape(
            `${l['level'] === 40 ? 'warn' : l['level'] === 50 ? 'error' : 'fatal'}: ${l.msg}${l['err'] ? ` (${JSON.stringify(l['err']).slice(0, 160)})` : ''}`,
          ),
        );
      const stderr = node.stderr.slice(stderrFrom).trim();
      if (stderr) logs.push(`stderr: ${stderr.split('\n').slice(0, 6).join(' | ').slice(0, 600)}`);
      const exit = alive ? '' : `exit ${node.child?.exitCode ?? ''}${node.child?.signalCode ?? ''}`;
      rows.push({
        name: attack.name,
        observed,
        victim: stats,
        warm,
        rssBefore: before,
        rssPeakSampled: Math.max(sampler.peak, peakStatus?.rss ?? 0),
        hwm: resetOk ? (peakStatus?.hwm ?? NaN) : NaN,
        rssAfter: after,
        fds: [fdsBefore, Math.max(sampler.peakFds, fdsAfter), fdsAfter],
        socketsAfter,
        restarted,
        afterNote,
        alive,
        answering,
        exit,
        logs,
        ms: took,
      });
      process.stderr.write(
        `${(took / 1000).toFixed(1)} s, peak ${mb(peakStatus?.hwm ?? NaN)} MiB, ${alive ? 'alive' : 'DEAD'}\n`,
      );
    }
  } finally {
    victim?.kill();
    cluster.destroy();
  }
  print(rows, quick, Date.now() - began);
}

function print(rows: Row[], quick: boolean, totalMs: number): void {
  const out: string[] = [];
  out.push(
    `## ringkv node under hostile input (${quick ? '--quick' : 'full'} run, ${(totalMs / 60_000).toFixed(1)} min)`,
  );
  out.push('');
  out.push(
    'Victim (a process of its own): one ringkv Client (2 lanes of get then put with its context, 100 B values, 5 ms pause, deadline 2 s) for the whole attack, plus a brand-new HTTP/2 connection doing one unary Put every second ("fresh").',
  );
  out.push(
    'RSS in MiB and open file descriptors of the node: before the attack, peak during it (VmHWM reset before each attack; /proc sampled every 50 ms), and after it.',
  );
  out.push('');
  out.push(
    '| # | attack | what the attacker got | victim ok / fail | victim p99 ms | fresh ok / fail | RSS MiB before / peak / after | fds before / peak / after | node alive |',
  );
  out.push('|---|---|---|---|---|---|---|---|---|');
  rows.forEach((r, i) => {
    const v = r.victim;
    const victim = v ? `${v.ok} / ${v.fail}` : 'victim did not answer';
    const fresh = v ? `${v.freshOk} / ${v.freshFail}` : '-';
    const peak = Number.isFinite(r.hwm) ? Math.max(r.hwm, r.rssPeakSampled) : r.rssPeakSampled;
    const alive = r.alive ? (r.answering ? 'yes' : 'yes, not answering') : `**no** (${r.exit})`;
    out.push(
      `| ${i + 1} | ${cell(r.name)}${r.restarted ? ' ¹' : ''} | ${cell(observedText(r.observed), 700)} | ${victim} | ${v ? ms(v.p99) : '-'} | ${fresh} | ${mb(r.rssBefore)} / ${mb(peak)} / ${mb(r.rssAfter)}${r.afterNote ? '²' : ''} | ${r.fds.join(' / ')} | ${alive} |`,
    );
  });
  out.push('');
  out.push(
    `² RSS grew over 100 MiB: "after" is ${((SETTLE_MS(quick) + (quick ? 3000 : 8000)) / 1000).toFixed(1)} s after the attack ended (${SETTLE_MS(quick) / 1000} s otherwise).`,
  );
  out.push(
    '¹ the node was restarted before this attack (it had died, or its RSS had grown 64 MiB over the first baseline), so that each attack starts from a fresh heap.',
  );
  out.push('');
  const big = rows.find((r) => r.name.startsWith('oversized:') && r.name.includes('sequential'));
  if (big)
    out.push(
      `**Peak RSS (VmHWM) of the node while a client sent ${big.name.replace('oversized: ', '')}: ${mb(big.hwm)} MiB** (before: ${mb(big.rssBefore)} MiB).`,
    );
  const par = rows.find((r) => r.name.startsWith('oversized:') && r.name.includes('at a time'));
  if (par) out.push(`Peak RSS (VmHWM) for ${par.name.replace('oversized: ', '')}: ${mb(par.hwm)} MiB.`);
  out.push('');
  out.push('### Details');
  rows.forEach((r, i) => {
    out.push('');
    out.push(`**${i + 1}. ${r.name}** (${(r.ms / 1000).toFixed(1)} s)`);
    for (const o of r.observed) {
      out.push(`- ${o.attack}: ${o.result}${o.notes ? ` — ${JSON.stringify(o.notes)}` : ''}`);
    }
    const v = r.victim;
    if (v) {
      out.push(
        `- victim: ${v.ok} ok, ${v.fail} failed, p50 ${ms(v.p50)} ms, p99 ${ms(v.p99)} ms, max ${ms(v.max)} ms${v.fail ? `; failures: ${A.summarize(v.failures)}` : ''}; fresh connections: ${v.freshOk} ok, ${v.freshFail} failed${v.freshFail ? ` (${A.summarize(v.freshFailures)})` : ''}${r.warm !== 'ok' ? `; warm-up put: ${r.warm}` : ''}`,
      );
    }
    out.push(
      `- node: fds ${r.fds.join(' / ')}; its server-side TCP sockets after: ${JSON.stringify(r.socketsAfter)}${r.restarted ? `; restarted before (${r.restarted})` : ''}`,
    );
    if (r.logs.length > 0) out.push(`- node log (warn and above): ${A.summarize(A.tally(r.logs)).slice(0, 800)}`);
  });
  console.log(out.join('\n'));
}

if (process.argv[2] === '--victim') {
  void victimMain(process.argv[3]!);
} else {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
