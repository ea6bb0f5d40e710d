/**
 * npm run bench:gray [-- --phase-s 10] [-- --quick]
 *
 * Gray failures against the client: 5 `ringkv node` processes (zones a, b, c, a, b), each
 * in its own network namespace as in the Jepsen harness (testkit/jepsen/net.ts), 64 requests
 * in flight through `ringkv/client`'s Client (src/client/index.ts) with default options —
 * half gets of preloaded keys, half puts of new keys, 100-byte values, the client's 5 s
 * deadline — through phases of `--phase-s` seconds: quiet, one node paused (SIGSTOP),
 * quiet, strobed (100 ms stopped / 100 ms running), quiet, CPU-throttled to 10% of a core,
 * quiet, its links delayed 200 ± 50 ms each way, quiet, isolated by a partition, quiet.
 * The victim is always n4: not a seed, and not the node the client was given first. A
 * quiet phase starts at the heal and lasts until the victim is normal and up everywhere,
 * at least the phase's length.
 *
 * Pass 1 runs every phase with the client's defaults; pass 2 with what a generic unary
 * gRPC client does (no token awareness, no streaming, no hedging, no adaptive choice: what
 * the nodes alone achieve). Before pass 1, a quiet A/B of the defaults against hedging and
 * adaptive choice off, in alternating slices (drift on this shared machine hits both).
 * Per fault phase: ops/s, p50 / p99 / p99.9 (every request, failed ones included: what the
 * caller waited) and the worst second's ops, each ÷ the quiet phase before it; failed
 * requests and their codes; extra calls (hedges, re-sends) ÷ calls where the client counts
 * them (`stats()`). Then the targets, PASS or MISS. Results also go to results/gray/.
 *
 * Needs root (namespaces, nftables, a cpu cgroup). Every process it starts it stops by
 * PID; its namespaces, rules, proxy and cgroup are removed at exit and on SIGINT.
 *
 * Owns: its cluster, faults and load. Must not: leave anything running, or restart a node
 * between passes (only heal).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as hdr from 'hdr-histogram-js';
import { Client, type ClientOptions, type ClientStats } from '../src/client/index.js';
import { JepsenNode } from '../testkit/jepsen/cluster.js';
import { capabilities, Network, sweep } from '../testkit/jepsen/net.js';
import {
  cpuThrottleSupport,
  healAllSlow,
  SLOW_DEFAULTS,
  strobe,
  throttleCpu,
  type Healable,
} from '../testkit/jepsen/slow.js';
import { table } from './lib.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const phaseArg = argv.indexOf('--phase-s');
const PHASE_S = phaseArg >= 0 ? Number(argv[phaseArg + 1]) : quick ? 3 : 10;
if (!(PHASE_S >= 1 && PHASE_S <= 600)) throw new Error(`--phase-s must be 1..600, got ${argv[phaseArg + 1]}`);
const AB_SLICES = quick ? 2 : 4;
const AB_SLICE_S = quick ? 2 : 5;
const KEYS = quick ? 2_000 : 10_000;
const IN_FLIGHT = 64;
const VALUE = Buffer.alloc(100, 0x61);
/** Bounds on every loop, whatever the speed. */
const MAX_OPS = 20_000_000;
const RECOVER_MS = 120_000;
const VICTIM = 'n4';
const ZONES = ['a', 'b', 'c', 'a', 'b'];

const CONFIGS: Record<'default' | 'off' | 'plain', Omit<ClientOptions, 'nodes'>> = {
  default: {},
  off: { hedge: false, adaptive: false },
  plain: { tokenAware: false, streaming: false, hedge: false, adaptive: false },
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const key = (prefix: string, i: number): Buffer => Buffer.from(`${prefix}${String(i).padStart(15, '0')}`.slice(-16));

interface Sample {
  readonly start: number;
  readonly end: number;
  readonly ok: boolean;
  readonly code?: string;
  /** A failure's operation and message, for the JSON results. */
  readonly details?: string;
}

function clientStats(c: Client): ClientStats {
  return c.stats();
}

/** A closed loop of IN_FLIGHT workers on one client until stopped: half gets of preloaded keys, half puts of new keys. */
class Load {
  readonly samples: Sample[] = [];
  #stopping = false;
  readonly #workers: Promise<void>[];
  static #fresh = 0;

  constructor(
    readonly client: Client,
    maxMs: number,
  ) {
    const end = performance.now() + maxMs;
    let i = 0;
    this.#workers = Array.from({ length: IN_FLIGHT }, async () => {
      while (!this.#stopping && performance.now() < end && i < MAX_OPS) {
        const n = i++;
        const start = performance.now();
        try {
          if (n % 2 === 0) await client.get(key('k', (n * 7919) % KEYS));
          else await client.put(key('w', Load.#fresh++), VALUE);
          this.samples.push({ start, end: performance.now(), ok: true });
        } catch (e) {
          const code = (e as { code?: unknown }).code;
          this.samples.push({
            start,
            end: performance.now(),
            ok: false,
            code: typeof code === 'number' ? (grpc.status[code] ?? String(code)) : 'ERROR',
            details: `${n % 2 === 0 ? 'get' : 'put'}: ${(e as Error).message}`,
          });
        }
      }
    });
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#workers);
  }
}

interface Figures {
  readonly seconds: number;
  readonly ok: number;
  readonly opsPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  /** The fewest ok operations started in one whole second of the phase. */
  readonly worstSecond: number;
  readonly failed: number;
  readonly codes: Record<string, number>;
  /** The first few failures: when in the phase (s), the operation, the message. */
  readonly firstFailures: string[];
  readonly calls: number | undefined;
  readonly extraCalls: number | undefined;
}

function figures(
  samples: readonly Sample[],
  from: number,
  to: number,
  s0: ClientStats | undefined,
  s1: ClientStats | undefined,
): Figures {
  const h = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 120_000_000,
    numberOfSignificantValueDigits: 3,
  });
  const whole = Math.max(1, Math.floor((to - from) / 1000));
  const perSecond = new Array<number>(whole).fill(0);
  let ok = 0,
    failed = 0;
  const codes: Record<string, number> = {};
  const firstFailures: string[] = [];
  for (const s of samples) {
    if (s.start < from || s.start >= to) continue;
    h.recordValue(Math.max(1, Math.round((s.end - s.start) * 1000)));
    if (s.ok) {
      ok++;
      const b = Math.floor((s.start - from) / 1000);
      if (b < whole) perSecond[b]!++;
    } else {
      failed++;
      codes[s.code!] = (codes[s.code!] ?? 0) + 1;
      if (firstFailures.length < 5)
        firstFailures.push(
          `+${((s.start - from) / 1000).toFixed(1)} s, ${Math.round(s.end - s.start)} ms, ${s.details}`,
        );
    }
  }
  const seconds = (to - from) / 1000;
  const r: Figures = {
    seconds,
    ok,
    opsPerSec: ok / seconds,
    p50: h.getValueAtPercentile(50) / 1000,
    p99: h.getValueAtPercentile(99) / 1000,
    p999: h.getValueAtPercentile(99.9) / 1000,
    worstSecond: Math.min(...perSecond),
    failed,
    codes,
    firstFailures,
    calls: s0 && s1 ? s1.calls - s0.calls : undefined,
    extraCalls: s0 && s1 ? s1.extraCalls - s0.extraCalls : undefined,
  };
  h.destroy();
  return r;
}

type FaultName = 'pause' | 'strobe' | 'cpu' | 'delay' | 'isolate';
const PHASES: readonly ('quiet' | FaultName)[] = [
  'quiet',
  'pause',
  'quiet',
  'strobe',
  'quiet',
  'cpu',
  'quiet',
  'delay',
  'quiet',
  'isolate',
  'quiet',
];
const d = SLOW_DEFAULTS;
const DESCRIBE: Record<FaultName, string> = {
  pause: `${VICTIM} paused (SIGSTOP)`,
  strobe: `${VICTIM} strobed ${d.stoppedMs} ms stopped / ${d.runningMs} ms running`,
  cpu: `${VICTIM} throttled to ${Math.round(d.cpuShare * 100)}% of a core`,
  delay: `${VICTIM} links ${d.delayMs}±${d.jitterMs} ms`,
  isolate: `${VICTIM} isolated (partition)`,
};

interface Phase extends Figures {
  readonly phase: string;
  readonly label: string;
  /** For a quiet phase: ms from the heal until the victim was normal and up everywhere. */
  readonly recoveredMs?: number;
}

// ---- the cluster ------------------------------------------------------------------------

const caps = capabilities();
const cpuOk = cpuThrottleSupport();
if (caps.namespaces !== true || cpuOk !== true) {
  console.error(
    `bench:gray needs root with network namespaces, nftables and a cpu cgroup: ${caps.namespaces !== true ? caps.namespaces : cpuOk}`,
  );
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'ringkv-bench-gray-'));
let net: Network | undefined;
const nodes: JepsenNode[] = [];
const clients: Client[] = [];
let active: Healable | undefined;
let cleaned = false;
function cleanup(): void {
  if (cleaned) return;
  cleaned = true;
  active?.heal();
  healAllSlow();
  for (const c of clients) c.close();
  for (const n of nodes) n.close();
  net?.destroy();
  rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => (console.error(`\n${sig}: healing and stopping everything`), cleanup(), process.exit(130)));

async function views(): Promise<Awaited<ReturnType<JepsenNode['status']>>[]> {
  return Promise.all(nodes.map((n) => n.status()));
}

/** Every node sees every node normal and up; resolves with the ms it took (bounded). */
async function allUp(maxMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const vs = await views();
    if (
      vs.every(
        (v) =>
          v !== undefined && nodes.every((n) => v.members.some((m) => m.id === n.id && m.status === 'normal' && m.up)),
      )
    )
      return performance.now() - t0;
    if (performance.now() - t0 > maxMs)
      throw new Error(
        `not every node normal and up everywhere after ${maxMs} ms: ${JSON.stringify(vs.map((v) => v?.members.map((m) => `${m.id}:${m.status}:${m.up}`)))}`,
      );
    await sleep(250);
  }
}

function makeClient(config: keyof typeof CONFIGS): Client {
  const c = new Client({ nodes: nodes.map((n) => n.address), ...CONFIGS[config] });
  clients.push(c);
  return c;
}

// ---- faults ------------------------------------------------------------------------------

async function apply(f: FaultName): Promise<Healable> {
  const v = nodes.find((n) => n.id === VICTIM)!;
  switch (f) {
    case 'pause':
      v.signal('SIGSTOP');
      return { heal: () => v.signal('SIGCONT') };
    case 'strobe':
      return strobe(v.pid!, d.stoppedMs, d.runningMs);
    case 'cpu':
      return throttleCpu(v.pid!, d.cpuShare, VICTIM);
    case 'delay': {
      await net!.delay(VICTIM, { delayMs: d.delayMs, jitterMs: d.jitterMs });
      return { heal: () => net!.undelay() };
    }
    case 'isolate': {
      const others = nodes.filter((n) => n.id !== VICTIM).map((n) => n.id);
      net!.partition(
        others.flatMap((o) => [
          { from: VICTIM, to: o, initiatedOnly: false },
          { from: o, to: VICTIM, initiatedOnly: false },
        ]),
      );
      return { heal: () => net!.healPartition() };
    }
  }
}

/**
 * Every phase with one client, its load running throughout. A phase's figures are taken
 * once the load has stopped, so that a request started in it and answered after it (a
 * paused node's, released by the heal, or one that waited out its deadline) counts, in
 * the phase it started in.
 */
async function pass(name: string, client: Client): Promise<Phase[]> {
  console.log(`\n${name}: ${PHASES.length} phases of ≥ ${PHASE_S} s, ${VICTIM} the victim`);
  const load = new Load(client, (PHASES.length * (PHASE_S + RECOVER_MS / 1000) + 120) * 1000);
  await sleep(3000); // warm: channels, JIT, the ring
  const spans: {
    phase: (typeof PHASES)[number];
    from: number;
    to: number;
    s0: ClientStats | undefined;
    s1: ClientStats | undefined;
    recoveredMs?: number;
  }[] = [];
  const t0 = performance.now();
  try {
    for (const phase of PHASES) {
      const s0 = clientStats(client);
      let from: number, to: number, recoveredMs: number | undefined;
      if (phase === 'quiet') {
        from = performance.now();
        // Not back within RECOVER_MS: the phase ends there, and says so (NaN).
        const [, up] = await Promise.all([sleep(PHASE_S * 1000), allUp(RECOVER_MS).catch(() => NaN)]);
        recoveredMs = up;
        to = performance.now();
      } else {
        active = await apply(phase);
        from = performance.now();
        await sleep(PHASE_S * 1000);
        to = performance.now();
        active.heal();
        active = undefined;
      }
      spans.push({
        phase,
        from,
        to,
        s0,
        s1: clientStats(client),
        ...(recoveredMs !== undefined ? { recoveredMs } : {}),
      });
      const label = phase === 'quiet' ? 'quiet' : DESCRIBE[phase];
      const back =
        recoveredMs === undefined
          ? ''
          : Number.isNaN(recoveredMs)
            ? `; ${VICTIM} NOT normal and up everywhere ${RECOVER_MS / 1000} s after the heal`
            : `; ${VICTIM} normal and up everywhere ${(recoveredMs / 1000).toFixed(1)} s after the heal`;
      console.log(
        `  ${((from - t0) / 1000).toFixed(1).padStart(6)} s  ${label.padEnd(44)} ${((to - from) / 1000).toFixed(1).padStart(5)} s${back}`,
      );
    }
  } finally {
    active?.heal();
    active = undefined;
    await load.stop();
  }
  return spans.map((sp) => ({
    phase: sp.phase,
    label: sp.phase === 'quiet' ? 'quiet' : DESCRIBE[sp.phase],
    ...figures(load.samples, sp.from, sp.to, sp.s0, sp.s1),
    ...(sp.recoveredMs !== undefined ? { recoveredMs: sp.recoveredMs } : {}),
  }));
}

// ---- reporting -----------------------------------------------------------------------------

const x = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(2)}×` : 'n/a');
const codes = (c: Record<string, number>): string =>
  Object.entries(c)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
const extra = (p: Figures): string =>
  p.calls === undefined || p.extraCalls === undefined
    ? 'n/a'
    : p.calls === 0
      ? '0'
      : `${((100 * p.extraCalls) / p.calls).toFixed(1)}%`;

interface Row {
  readonly pass: string;
  readonly phase: Phase;
  readonly quiet: Phase;
  readonly throughput: number;
  readonly worst: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
}

function rows(passName: string, phases: readonly Phase[]): Row[] {
  const out: Row[] = [];
  for (let i = 1; i < phases.length; i++) {
    const p = phases[i]!,
      q = phases[i - 1]!;
    if (p.phase === 'quiet') continue;
    out.push({
      pass: passName,
      phase: p,
      quiet: q,
      throughput: p.opsPerSec / q.opsPerSec,
      worst: p.worstSecond / q.opsPerSec,
      p50: p.p50 / q.p50,
      p99: p.p99 / q.p99,
      p999: p.p999 / q.p999,
    });
  }
  return out;
}

function printPass(passName: string, phases: readonly Phase[]): void {
  const t: string[][] = [
    [
      'phase',
      'ops/s',
      '÷ quiet',
      'p50 ms',
      'p99 ms',
      'p99.9 ms',
      'p50 ÷q',
      'p99 ÷q',
      'p99.9 ÷q',
      'worst s ÷q',
      'failed (codes)',
      'extra ÷ calls',
    ],
  ];
  for (let i = 0; i < phases.length; i++) {
    const p = phases[i]!;
    const r = rows(passName, phases).find((row) => row.phase === p);
    t.push([
      p.label,
      p.opsPerSec.toFixed(0),
      r ? x(r.throughput) : '',
      p.p50.toFixed(1),
      p.p99.toFixed(1),
      p.p999.toFixed(1),
      r ? x(r.p50) : '',
      r ? x(r.p99) : '',
      r ? x(r.p999) : '',
      r ? x(r.worst) : `(${p.worstSecond})`,
      p.failed === 0 ? '0' : `${p.failed} (${codes(p.codes)})`,
      extra(p),
    ]);
  }
  console.log(`\n${passName} — each fault phase ÷ the quiet phase before it:`);
  console.log(table(t));
}

const pf = (ok: boolean): string => (ok ? 'PASS' : 'MISS');

async function main(): Promise<void> {
  const npmCmd =
    process.env['npm_lifecycle_event'] === 'bench:gray'
      ? `npm run bench:gray${argv.length ? ` -- ${argv.join(' ')}` : ''}`
      : undefined;
  const nodeCmd = `node --import tsx bench/gray.ts${argv.length ? ` ${argv.join(' ')}` : ''}`;
  const cpu = cpus();
  console.log(`bench:gray — command: ${npmCmd ? `${npmCmd}  (${nodeCmd})` : nodeCmd}`);
  console.log(
    `machine: ${cpu.length} cores (${cpu[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Linux ${release()}, Node ${process.version}; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `5 nodes (zones ${ZONES.join(', ')}), one namespace each; ${IN_FLIGHT} in flight, 50% gets of ${KEYS} preloaded keys / 50% puts of new keys, 100-byte values, the client's default options and 5 s deadline; phases ≥ ${PHASE_S} s`,
  );
  for (const left of sweep()) console.log(`removed a leftover of an earlier run: ${left}`);

  net = Network.create();
  const seeds: string[] = [];
  for (let i = 1; i <= 5; i++) {
    const id = `n${i}`;
    const host = net.addHost(id, i);
    if (i <= 3) seeds.push(host.address);
    const dataDir = join(dir, id);
    const args = [
      '--id',
      id,
      '--listen',
      host.address,
      '--data-dir',
      dataDir,
      '--seeds',
      seeds.join(','),
      '--zone',
      ZONES[i - 1]!,
    ];
    const n = new JepsenNode(id, ZONES[i - 1]!, host.address, dataDir, args, join(dir, `${id}.log`), net);
    nodes.push(n);
    n.start();
  }
  const formed = await allUp(180_000);
  console.log(
    `cluster formed in ${(formed / 1000).toFixed(1)} s on ${net.subnet}.0/24; client nodes ${nodes.map((n) => n.id).join(', ')} (first: ${nodes[0]!.id}); victim ${VICTIM}`,
  );

  const def = makeClient('default');
  process.stdout.write(`preloading ${KEYS} keys at W=3 ... `);
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < KEYS) await def.put(key('k', next++), VALUE, { w: 3 });
    }),
  );
  console.log('done');

  // Quiet A/B: defaults vs hedging and adaptive choice off, alternating slices.
  const off = makeClient('off');
  const ab = { default: { ok: 0, s: 0 }, off: { ok: 0, s: 0 } };
  for (const c of [def, off]) {
    const warm = new Load(c, 3000);
    await sleep(2000);
    await warm.stop();
  }
  for (let i = 0; i < AB_SLICES; i++) {
    for (const [name, c] of [
      ['default', def],
      ['off', off],
    ] as const) {
      const l = new Load(c, AB_SLICE_S * 1000 + 60_000);
      const t0 = performance.now();
      await sleep(AB_SLICE_S * 1000);
      const t1 = performance.now();
      await l.stop();
      const f = figures(l.samples, t0, t1, undefined, undefined);
      ab[name].ok += f.ok;
      ab[name].s += f.seconds;
    }
  }
  const abRatio = ab.default.ok / ab.default.s / (ab.off.ok / ab.off.s);
  console.log(
    `\nquiet A/B (${AB_SLICES} × ${AB_SLICE_S} s slices each, alternating): default ${(ab.default.ok / ab.default.s).toFixed(0)} ops/s, off ${(ab.off.ok / ab.off.s).toFixed(0)} ops/s; default ÷ off ${abRatio.toFixed(3)} (target ≥ 0.95: ${pf(abRatio >= 0.95)})`,
  );
  console.log(`client stats(): ${clientStats(def) === undefined ? 'not there (extra calls: n/a)' : 'present'}`);

  const pass1 = await pass('pass 1: default client {}', def);
  const plain = makeClient('plain');
  const pass2 = await pass(
    'pass 2: plain client { tokenAware: false, streaming: false, hedge: false, adaptive: false }',
    plain,
  );

  printPass('pass 1: default', pass1);
  printPass('pass 2: plain (what the nodes alone achieve)', pass2);

  const targets: string[][] = [['pass', 'phase', 'ops/s ≥ 0.8×', 'worst s ≥ 0.5×', 'p99 ≤ 3×', '0 failed', 'result']];
  let misses = 0;
  for (const [name, phases] of [
    ['default', pass1],
    ['plain', pass2],
  ] as const) {
    for (const r of rows(name, phases)) {
      const checks = [r.throughput >= 0.8, r.worst >= 0.5, r.p99 <= 3, r.phase.failed === 0];
      if (!checks.every(Boolean)) misses++;
      targets.push([
        name,
        r.phase.label,
        `${x(r.throughput)} ${pf(checks[0]!)}`,
        `${x(r.worst)} ${pf(checks[1]!)}`,
        `${x(r.p99)} ${pf(checks[2]!)}`,
        `${r.phase.failed} ${pf(checks[3]!)}`,
        pf(checks.every(Boolean)),
      ]);
    }
    const quiet = phases.filter((p) => p.phase === 'quiet');
    const calls = quiet.reduce((s, p) => s + (p.calls ?? NaN), 0),
      extraCalls = quiet.reduce((s, p) => s + (p.extraCalls ?? NaN), 0);
    const share = extraCalls / calls;
    targets.push([
      name,
      'quiet phases: extra calls ≤ 5%',
      '',
      '',
      '',
      '',
      Number.isFinite(share) ? `${(100 * share).toFixed(1)}% ${pf(share <= 0.05)}` : 'n/a (no stats())',
    ]);
  }
  targets.push(['default ÷ off', 'quiet A/B ≥ 0.95', '', '', '', '', `${abRatio.toFixed(3)} ${pf(abRatio >= 0.95)}`]);
  console.log('\ntargets:');
  console.log(table(targets));
  console.log(`${misses} fault phases missed a target`);

  const results = join(import.meta.dirname, '../results/gray');
  mkdirSync(results, { recursive: true });
  const file = join(results, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        command: npmCmd ?? nodeCmd,
        machine: {
          cores: cpu.length,
          model: cpu[0]?.model,
          kernel: release(),
          node: process.version,
          loadavg: loadavg(),
        },
        settings: {
          phaseS: PHASE_S,
          inFlight: IN_FLIGHT,
          keys: KEYS,
          victim: VICTIM,
          zones: ZONES,
          slow: SLOW_DEFAULTS,
          configs: CONFIGS,
        },
        ab: { ...ab, ratio: abRatio },
        pass1,
        pass2,
        ratios: [...rows('default', pass1), ...rows('plain', pass2)].map((r) => ({
          pass: r.pass,
          phase: r.phase.phase,
          throughput: r.throughput,
          worstSecond: r.worst,
          p50: r.p50,
          p99: r.p99,
          p999: r.p999,
          failed: r.phase.failed,
          codes: r.phase.codes,
        })),
      },
      null,
      2,
    ),
  );
  console.log(`\nresults: ${file}`);
}

main().then(
  () => (cleanup(), process.exit(0)),
  (e: unknown) => {
    console.error(e);
    cleanup();
    process.exit(1);
  },
);
