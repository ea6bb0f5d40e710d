/**
 * The harness's own network: one network namespace per node, each joined to a bridge by a
 * veth pair, on a private /24 that nothing else on the machine routes. Partitions are
 * nftables rules inside the receiving node's namespace; packet faults are nftables random
 * drops and tc qdiscs on the node's interface (netem where the kernel has it, a tbf slow
 * link otherwise). Nothing leaves the machine.
 *
 * Every name carries the harness's pid (rkj<pid>…), so `sweep()` can find and remove what
 * a harness that died (kill -9) left behind. Commands run synchronously, so `destroy()`
 * also works from a signal handler.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import type { Grudge } from './nemesis.js';

const PREFIX = 'rkj';
const PORT = 7000;

function run(cmd: string, args: readonly string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function tryRun(cmd: string, args: readonly string[]): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

/** What this machine lets the harness do; a reason for each missing piece. */
export interface NetCapabilities {
  /** Namespaces, veth, a bridge and nftables: partitions and packet loss. Else why not. */
  readonly namespaces: true | string;
  /** tc netem: delay with jitter and reordering. Else why not. */
  readonly netem: true | string;
}

export function capabilities(): NetCapabilities {
  if (process.platform !== 'linux') return { namespaces: 'not Linux', netem: 'not Linux' };
  if (process.getuid?.() !== 0) return { namespaces: 'not root: network namespaces need root', netem: 'not root' };
  for (const [tool, pkg] of [['ip', 'iproute2'], ['nft', 'nftables'], ['tc', 'iproute2']] as const) {
    if (!tryRun(tool, ['-V']).ok) return { namespaces: `${tool} not found (apt-get install -y ${pkg})`, netem: `${tool} not found` };
  }
  const probe = `${PREFIX}${process.pid}-probe`;
  const made = tryRun('ip', ['netns', 'add', probe]);
  if (!made.ok) return { namespaces: `ip netns add failed: ${made.out}`, netem: 'no namespaces' };
  try {
    tryRun('ip', ['-n', probe, 'link', 'set', 'lo', 'up']);
    const nft = tryRun('ip', ['netns', 'exec', probe, 'nft', 'add table inet probe']);
    const netem = tryRun('ip', ['netns', 'exec', probe, 'tc', 'qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '1ms']);
    return {
      namespaces: nft.ok ? true : `nftables does not work in a namespace: ${nft.out}`,
      netem: netem.ok ? true : `tc netem is not available (${netem.out || 'failed'}): this kernel lacks sch_netem (CONFIG_NET_SCH_NETEM)`,
    };
  } finally {
    tryRun('ip', ['netns', 'del', probe]);
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Kill every process inside a namespace (by PID), then delete it. */
function removeNamespace(ns: string): void {
  const pids = tryRun('ip', ['netns', 'pids', ns]).out.split(/\s+/).filter(Boolean).map(Number);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGCONT');
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  tryRun('ip', ['netns', 'del', ns]);
}

/** Namespaces and bridges named by the harness (optionally only those of `pid`). */
export function leftovers(pid?: number): { namespaces: string[]; links: string[] } {
  const mine = (name: string): boolean => {
    const m = new RegExp(`^${PREFIX}(\\d+)`).exec(name);
    return m !== null && (pid === undefined || Number(m[1]) === pid);
  };
  const namespaces = tryRun('ip', ['netns', 'list']).out.split('\n').map((l) => l.split(' ')[0]!).filter((n) => n !== '' && mine(n));
  const links = tryRun('ip', ['-o', 'link', 'show']).out.split('\n').map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1] ?? '').filter((n) => n !== '' && mine(n));
  return { namespaces, links };
}

/** Remove what harnesses that are no longer running left behind (namespaces with their processes, bridges, veths). */
export function sweep(): string[] {
  const removed: string[] = [];
  const { namespaces, links } = leftovers();
  const dead = (name: string): boolean => !alive(Number(new RegExp(`^${PREFIX}(\\d+)`).exec(name)![1]));
  for (const ns of namespaces.filter(dead)) removeNamespace(ns), removed.push(ns);
  for (const link of links.filter(dead)) tryRun('ip', ['link', 'del', link]), removed.push(link);
  return removed;
}

export interface Host {
  readonly id: string;
  readonly ns: string;
  readonly ip: string;
  readonly address: string;
}

export interface PacketFault {
  /** Percent of packets arriving at the node that are dropped. */
  readonly lossPercent: number;
  /** With netem: added delay and its jitter, ms, and percent of packets reordered. */
  readonly delayMs?: number;
  readonly jitterMs?: number;
  readonly reorderPercent?: number;
  /** Without netem: the node's outgoing link slowed to this many kbit/s (a tbf qdisc), which queues and delays. */
  readonly slowKbit?: number;
}

export class Network {
  readonly bridge: string;
  readonly subnet: string;
  readonly hostIp: string;
  readonly #hosts = new Map<string, Host>();
  #destroyed = false;

  private constructor(readonly pid: number, third: number) {
    this.bridge = `${PREFIX}${pid}`;
    this.subnet = `10.213.${third}`;
    this.hostIp = `${this.subnet}.254`;
  }

  /** A bridge on a free 10.213.X.0/24, with the host at .254 to reach the nodes. */
  static create(): Network {
    const routes = run('ip', ['-4', 'route', 'show']);
    const used = new Set([...routes.matchAll(/10\.213\.(\d+)\./g)].map((m) => Number(m[1])));
    const start = process.pid % 250;
    let third = -1;
    for (let i = 0; i < 250; i++) if (!used.has((start + i) % 250)) ((third = (start + i) % 250), (i = 250));
    if (third < 0) throw new Error('no free 10.213.X.0/24 for the harness network');
    const net = new Network(process.pid, third);
    run('ip', ['link', 'add', net.bridge, 'type', 'bridge']);
    run('ip', ['addr', 'add', `${net.hostIp}/24`, 'dev', net.bridge]);
    run('ip', ['link', 'set', net.bridge, 'up']);
    return net;
  }

  get hosts(): Host[] {
    return [...this.#hosts.values()];
  }

  host(id: string): Host {
    const h = this.#hosts.get(id);
    if (h === undefined) throw new Error(`no host ${id}`);
    return h;
  }

  /** A namespace for node `id`, index 1..250, wired to the bridge, with an empty nftables table. */
  addHost(id: string, index: number): Host {
    const ns = `${this.bridge}-${id}`;
    const outside = `${this.bridge}h${index}`, inside = `${this.bridge}i${index}`;
    const ip = `${this.subnet}.${index}`;
    run('ip', ['netns', 'add', ns]);
    run('ip', ['link', 'add', outside, 'type', 'veth', 'peer', 'name', inside]);
    run('ip', ['link', 'set', inside, 'netns', ns]);
    run('ip', ['link', 'set', outside, 'master', this.bridge]);
    run('ip', ['link', 'set', outside, 'up']);
    run('ip', ['-n', ns, 'link', 'set', inside, 'name', 'eth0']);
    run('ip', ['-n', ns, 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
    run('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
    run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    this.#nft(ns, 'add table inet jepsen');
    this.#nft(ns, 'add chain inet jepsen input { type filter hook input priority 0; policy accept; }');
    const host = { id, ns, ip, address: `${ip}:${PORT}` };
    this.#hosts.set(id, host);
    return host;
  }

  /** The command line that runs `argv` inside the node's namespace (ip netns exec execs it: same PID). */
  wrap(id: string, argv: readonly string[]): string[] {
    return ['ip', 'netns', 'exec', this.host(id).ns, ...argv];
  }

  #nft(ns: string, rule: string): void {
    run('ip', ['netns', 'exec', ns, 'nft', rule]);
  }

  /** Apply a partition: each grudge a drop rule at its receiver. Replaces any partition before it. */
  partition(grudges: readonly Grudge[]): void {
    this.healPartition();
    for (const g of grudges) {
      const to = this.host(g.to), from = this.host(g.from);
      this.#nft(to.ns, `add rule inet jepsen input ip saddr ${from.ip} ${g.initiatedOnly ? 'ct direction original ' : ''}drop comment "partition"`);
    }
  }

  /** Drop every rule, partitions and packet loss alike, in every namespace. */
  healPartition(): void {
    for (const h of this.#hosts.values()) this.#nft(h.ns, 'flush chain inet jepsen input');
  }

  /** Packet faults on the traffic a node receives (loss) and sends (delay, reordering, slow link). */
  degrade(id: string, f: PacketFault): void {
    const h = this.host(id);
    if (f.lossPercent > 0) this.#nft(h.ns, `add rule inet jepsen input ip saddr ${this.subnet}.0/24 numgen random mod 100 < ${Math.round(f.lossPercent)} drop comment "loss"`);
    if (f.delayMs !== undefined) {
      const args = ['qdisc', 'replace', 'dev', 'eth0', 'root', 'netem', 'delay', `${f.delayMs}ms`, `${f.jitterMs ?? 0}ms`];
      if ((f.reorderPercent ?? 0) > 0) args.push('reorder', `${f.reorderPercent}%`, '50%');
      run('ip', ['netns', 'exec', h.ns, 'tc', ...args]);
    } else if (f.slowKbit !== undefined) {
      run('ip', ['netns', 'exec', h.ns, 'tc', 'qdisc', 'replace', 'dev', 'eth0', 'root', 'tbf', 'rate', `${f.slowKbit}kbit`, 'burst', '16kbit', 'latency', '400ms']);
    }
  }

  /** Remove packet faults and partitions everywhere. */
  heal(): void {
    this.healPartition();
    for (const h of this.#hosts.values()) tryRun('ip', ['netns', 'exec', h.ns, 'tc', 'qdisc', 'del', 'dev', 'eth0', 'root']);
  }

  /** The rules in force at a node, as nft lists them (for tests and the report). */
  rules(id: string): string {
    return run('ip', ['netns', 'exec', this.host(id).ns, 'nft', 'list', 'chain', 'inet', 'jepsen', 'input']);
  }

  /** Remove every namespace (and the processes in it), veth and the bridge. Safe to call twice. */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    for (const h of this.#hosts.values()) removeNamespace(h.ns);
    const { links } = leftovers(this.pid);
    for (const l of links) tryRun('ip', ['link', 'del', l]);
  }
}
