/**
 * A Jepsen-style set check on real `ringkv node` processes: workers write unique values
 * with blind puts (which never supersede one another) at W=2 through the typed client,
 * while a nemesis kills (-9) and restarts nodes and pauses them (SIGSTOP/SIGCONT). Then
 * every node is brought back, hints are delivered, and every key is read at R=N twice
 * (the first read repairs).
 *
 * Outcomes, as Jepsen's set checker counts them: attempted; acknowledged; lost
 * (acknowledged, missing at the end); unexpected (present, never attempted); recovered
 * (the put failed or timed out — an unknown outcome — yet the value is there).
 */
import { Client } from '../../src/client/index.js';
import { TestCluster, waitFor, type NodeProcess } from './harness.js';

export interface SetCheckOptions {
  readonly nodes: number;
  readonly keys: number;
  readonly workers: number;
  /** Bounds on the workload: whichever comes first. */
  readonly maxOps: number;
  readonly seconds: number;
  /** ms between nemesis actions, and how long a node stays killed or paused. */
  readonly faultEveryMs: number;
  readonly faultForMs: number;
  readonly random?: () => number;
  readonly log?: (line: string) => void;
}

export interface SetCheckResult {
  attempted: number;
  acknowledged: number;
  lost: string[];
  unexpected: string[];
  recovered: number;
  faults: string[];
  /** Puts refused or timed out, by gRPC code. */
  failures: Record<string, number>;
}

export async function runSetCheck(o: SetCheckOptions): Promise<SetCheckResult> {
  const random = o.random ?? Math.random;
  const log = o.log ?? (() => undefined);
  const cluster = await TestCluster.create(o.nodes, Math.min(3, o.nodes));
  try {
    for (const n of cluster.nodes) n.start();
    await allNormal(cluster, 90_000);
    const client = new Client({ nodes: cluster.nodes.map((n) => n.address), deadlineMs: 3000 });
    const attempted = new Map<string, string>(); // value → key
    const acked = new Set<string>();
    const failures: Record<string, number> = {};
    const faults: string[] = [];
    const end = Date.now() + o.seconds * 1000;
    let next = 0;
    let running = true;

    const workers = Array.from({ length: o.workers }, async () => {
      while (running && Date.now() < end && next < o.maxOps) {
        const i = next++;
        const key = `set:${i % o.keys}`, value = `v${i}`;
        attempted.set(value, key);
        try {
          await client.put(key, value, { w: 2 });
          acked.add(value);
        } catch (e) {
          const code = String((e as { code?: unknown }).code ?? 'other');
          failures[code] = (failures[code] ?? 0) + 1;
        }
      }
    });

    const nemesis = (async () => {
      while (Date.now() < end && next < o.maxOps) {
        await sleep(o.faultEveryMs * (0.5 + random()));
        if (Date.now() >= end) break;
        const victim = cluster.nodes[Math.floor(random() * cluster.nodes.length)]!;
        if (!victim.running) continue;
        if (random() < 0.5) {
          faults.push(`kill -9 ${victim.id}`);
          log(`nemesis: kill -9 ${victim.id}`);
          victim.signal('SIGKILL');
          await victim.exit;
          await sleep(o.faultForMs);
          victim.start();
        } else {
          faults.push(`pause ${victim.id}`);
          log(`nemesis: SIGSTOP ${victim.id}`);
          victim.signal('SIGSTOP');
          await sleep(o.faultForMs);
          victim.signal('SIGCONT');
        }
      }
    })();

    await Promise.all([...workers, nemesis]);
    running = false;
    log(`workload done: ${attempted.size} attempted, ${acked.size} acknowledged`);

    // Heal: every node up and seen up everywhere, hints handed over.
    for (const n of cluster.nodes) if (!n.running) n.start();
    await allNormal(cluster, 90_000);
    await waitFor('no hints held anywhere', 60_000, async () => {
      const views = await cluster.views();
      return views.every((v) => v !== undefined && v.members.every((m) => m.hints === 0) && (v.counters.hintsHeld ?? 0) === 0);
    }, 500);

    const final = new Map<string, string[]>();
    for (let k = 0; k < o.keys; k++) await client.get(`set:${k}`, { r: 3 }); // repairs
    for (let k = 0; k < o.keys; k++) final.set(`set:${k}`, (await client.get(`set:${k}`, { r: 3 })).values.map(String));
    client.close();

    const present = new Set<string>();
    const unexpected: string[] = [];
    for (const [key, values] of final) {
      for (const v of values) {
        if (attempted.get(v) === key) present.add(v);
        else unexpected.push(`${key}=${v}`);
      }
    }
    const lost = [...acked].filter((v) => !present.has(v));
    const recovered = [...present].filter((v) => !acked.has(v)).length;
    return { attempted: attempted.size, acknowledged: acked.size, lost, unexpected, recovered, faults, failures };
  } finally {
    cluster.destroy();
  }
}

async function allNormal(cluster: TestCluster, ms: number): Promise<void> {
  const n = cluster.nodes.length;
  await waitFor(`all ${n} normal and up on every node`, ms, async () => {
    const views = await cluster.views();
    return views.every((v) => v?.members.length === n && v.members.every((m) => m.status === 'normal' && m.up));
  }, 250);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export type { NodeProcess };
