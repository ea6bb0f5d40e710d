/**
 * The harness's own network: one network namespace per node, each joined to a bridge by a
 * veth pair, on a private /24 that nothing else on the machine routes. Partitions are
 * nftables rules inside the receiving node's namespace; packet faults are nftables random
 * drops and tc qdiscs on the node's interface (netem where the kernel has it, a tbf slow
 * link otherwise). Link delay (the slow nemesis's `delay`) is a delaying TCP proxy
 * (delay-proxy.ts) run inside the slowed node's namespace, which nftables NAT rules in
 * that namespace steer every connection of the node into, both ways. Nothing leaves the
 * machine.
 *
 * Every name carries the harness's pid (rkj<pid>…), so `sweep()` can find and remove what
 * a harness that died (kill -9) left behind: namespaces with their processes (the proxies
 * among them), links, and the slow nemesis's cpu cgroups (slow.ts). Commands run
 * synchronously, so `destroy()` also works from a signal handler.
 *
 * Owns: the bridge, the namespaces, the rules in them and the proxy processes. Must not:
 * touch anything outside 10.213.X.0/24 and names without its prefix.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { ProxyProcess, type LinkDelay } from './delay-proxy.js';
import { cgroupLeftovers, removeCgroup } from './slow.js';
import { diskLeftovers, unmountSmallDisk } from './disk.js';

export type { LinkDelay } from './delay-proxy.js';

/**
 * Packets from `from` are dropped where they arrive, at `to`. With `initiatedOnly`, only
 * packets of connections `from` opened: `to` can still call `from` (one-way partitions).
 */
export interface Grudge {
  readonly from: string;
  readonly to: string;
  readonly initiatedOnly: boolean;
}

const PREFIX = 'rkj';
const PORT = 7000;
/** In a delayed node's namespace, the proxy listens on PROXY_PORT (connections to the node) and PROXY_PORT + k (to node index k). */
const PROXY_PORT = 62000;
/**
 * The proxy opens its upstream connections from these local ports, which the NAT rules
 * leave alone; each namespace's ephemeral range (ip_local_port_range) stops below them.
 */
const PROXY_LOCAL_PORTS = [61000, 61999] as const;
const EPHEMERAL = '32768 60999';

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

/**
 * Why the harness's bridge would not forward between its namespaces, from `iptables -S
 * FORWARD` and /proc/sys/net/bridge/bridge-nf-call-iptables (absent: br_netfilter is not
 * loaded), or undefined when it would. dockerd started with its defaults sets the FORWARD
 * policy to DROP and loads br_netfilter, and both outlive it.
 */
export function forwardProblem(forwardRules: string, bridgeNfCallIptables: string | undefined): string | undefined {
  if (bridgeNfCallIptables?.trim() !== '1') return undefined;
  if (!/^-P FORWARD DROP\b/m.test(forwardRules)) return undefined;
  return (
    "the iptables FORWARD policy is DROP and bridged traffic passes through iptables (br_netfilter), so the harness's " +
    'namespaces cannot reach each other: a dockerd started with its defaults does this, and it stays after dockerd stops. ' +
    'Run `iptables -P FORWARD ACCEPT` (or `sysctl net.bridge.bridge-nf-call-iptables=0`), and start dockerd with --iptables=false (scripts/docker-engine.sh does)'
  );
}

export function capabilities(): NetCapabilities {
  if (process.platform !== 'linux') return { namespaces: 'not Linux', netem: 'not Linux' };
  if (process.getuid?.() !== 0) return { namespaces: 'not root: network namespaces need root', netem: 'not root' };
  for (const [tool, pkg] of [
    ['ip', 'iproute2'],
    ['nft', 'nftables'],
    ['tc', 'iproute2'],
  ] as const) {
    if (!tryRun(tool, ['-V']).ok)
      return { namespaces: `${tool} not found (apt-get install -y ${pkg})`, netem: `${tool} not found` };
  }
  const rules = tryRun('iptables', ['-S', 'FORWARD']);
  let bridgeNf: string | undefined;
  try {
    bridgeNf = readFileSync('/proc/sys/net/bridge/bridge-nf-call-iptables', 'utf8');
  } catch {
    bridgeNf = undefined; // br_netfilter not loaded: bridged frames skip iptables
  }
  const forward = rules.ok ? forwardProblem(rules.out, bridgeNf) : undefined;
  if (forward !== undefined) return { namespaces: forward, netem: 'no namespaces' };
  const probe = `${PREFIX}${process.pid}-probe`;
  const made = tryRun('ip', ['netns', 'add', probe]);
  if (!made.ok) return { namespaces: `ip netns add failed: ${made.out}`, netem: 'no namespaces' };
  try {
    tryRun('ip', ['-n', probe, 'link', 'set', 'lo', 'up']);
    const nft = tryRun('ip', ['netns', 'exec', probe, 'nft', 'add table inet probe']);
    const netem = tryRun('ip', [
      'netns',
      'exec',
      probe,
      'tc',
      'qdisc',
      'add',
      'dev',
      'lo',
      'root',
      'netem',
      'delay',
      '1ms',
    ]);
    return {
      namespaces: nft.ok ? true : `nftables does not work in a namespace: ${nft.out}`,
      netem: netem.ok
        ? true
        : `tc netem is not available (${netem.out || 'failed'}): this kernel lacks sch_netem (CONFIG_NET_SCH_NETEM)`,
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

/** Delay proxies (delay-proxy.ts) started for harness `pid` (or any harness), by their `--tag rkj<pid>-…`: [pid, tag]. */
function proxyProcesses(pid?: number): [number, string][] {
  const out: [number, string][] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return out;
  }
  for (const e of entries) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const i = argv.indexOf('--tag');
    if (i < 0 || !argv.some((a) => a.endsWith('delay-proxy.ts'))) continue;
    const m = new RegExp(`^${PREFIX}(\\d+)-`).exec(argv[i + 1] ?? '');
    if (m !== null && (pid === undefined || Number(m[1]) === pid)) out.push([Number(e), argv[i + 1]!]);
  }
  return out;
}

export interface Leftovers {
  namespaces: string[];
  links: string[];
  /** The slow nemesis's cpu cgroups (paths). */
  cgroups: string[];
  /** PIDs of delay proxies still running. */
  proxies: number[];
  /** The disk nemesis's small disks still mounted (mount points). */
  disks: string[];
}

/** Namespaces, bridges, cpu cgroups, delay proxies and small disks named by the harness (optionally only those of `pid`). */
export function leftovers(pid?: number): Leftovers {
  const mine = (name: string): boolean => {
    const m = new RegExp(`^${PREFIX}(\\d+)`).exec(name);
    return m !== null && (pid === undefined || Number(m[1]) === pid);
  };
  const namespaces = tryRun('ip', ['netns', 'list'])
    .out.split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter((n) => n !== '' && mine(n));
  const links = tryRun('ip', ['-o', 'link', 'show'])
    .out.split('\n')
    .map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1] ?? '')
    .filter((n) => n !== '' && mine(n));
  return {
    namespaces,
    links,
    cgroups: cgroupLeftovers(pid),
    proxies: proxyProcesses(pid).map(([p]) => p),
    disks: diskLeftovers(pid).map(([, dir]) => dir),
  };
}

/**
 * Remove what harnesses that are no longer running left behind: cpu cgroups first (their
 * tasks moved out), then delay proxies (by PID), namespaces with their processes, bridges
 * and veths.
 */
export function sweep(): string[] {
  const removed: string[] = [];
  const { namespaces, links, cgroups } = leftovers();
  const owner = (name: string): number => Number(new RegExp(`${PREFIX}(\\d+)`).exec(name)![1]);
  const dead = (name: string): boolean => !alive(owner(name));
  for (const g of cgroups.filter(dead)) if (removeCgroup(g)) removed.push(g);
  for (const [p, tag] of proxyProcesses().filter(([, tag]) => dead(tag))) {
    try {
      process.kill(p, 'SIGKILL');
      removed.push(`delay proxy ${p} (${tag})`);
    } catch {
      // gone already
    }
  }
  for (const ns of namespaces.filter(dead)) (removeNamespace(ns), removed.push(ns));
  for (const link of links.filter(dead)) (tryRun('ip', ['link', 'del', link]), removed.push(link));
  // After the namespaces: their node processes, which held files on these disks, are gone.
  for (const [source, dir] of diskLeftovers().filter(([source]) => dead(source)))
    (unmountSmallDisk(dir), removed.push(`${source} on ${dir}`));
  return removed;
}

export interface Host {
  readonly id: string;
  /** 1..250: the last byte of its address. */
  readonly index: number;
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
  /** Each delayed node's proxy, by node id (kept after heal: it forwards what it carries until that closes). */
  readonly #proxies = new Map<string, ProxyProcess>();
  /** Nodes whose connections the NAT rules steer into their proxy now. */
  readonly #delayed = new Set<string>();
  #destroyed = false;

  private constructor(
    readonly pid: number,
    third: number,
  ) {
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
    const outside = `${this.bridge}h${index}`,
      inside = `${this.bridge}i${index}`;
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
    // Link delay: connections to the node (prerouting) and from it (output) steered into its proxy.
    this.#nft(ns, 'add table ip jepsen_nat');
    this.#nft(ns, 'add chain ip jepsen_nat prerouting { type nat hook prerouting priority -100; policy accept; }');
    this.#nft(ns, 'add chain ip jepsen_nat output { type nat hook output priority -100; policy accept; }');
    // Conntrack stays on in the namespace whatever the rules: without a rule that uses it,
    // removing the last NAT rule turns connection tracking off, and the connections the
    // NAT had steered into the proxy lose their translation and are reset.
    this.#nft(ns, 'add table ip jepsen_ct');
    this.#nft(ns, 'add chain ip jepsen_ct keep { type filter hook prerouting priority -200; policy accept; }');
    this.#nft(ns, 'add rule ip jepsen_ct keep ct state invalid counter comment "keeps conntrack on"');
    // Ephemeral ports stop below the proxy's own local ports (the default range; set, not assumed).
    tryRun('ip', ['netns', 'exec', ns, 'sysctl', '-qw', `net.ipv4.ip_local_port_range=${EPHEMERAL}`]);
    const host = { id, index, ns, ip, address: `${ip}:${PORT}` };
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
      const to = this.host(g.to),
        from = this.host(g.from);
      this.#nft(
        to.ns,
        `add rule inet jepsen input ip saddr ${from.ip} ${g.initiatedOnly ? 'ct direction original ' : ''}drop comment "partition"`,
      );
    }
  }

  /** Drop every rule, partitions and packet loss alike, in every namespace. */
  healPartition(): void {
    for (const h of this.#hosts.values()) this.#nft(h.ns, 'flush chain inet jepsen input');
  }

  /** Packet faults on the traffic a node receives (loss) and sends (delay, reordering, slow link). */
  degrade(id: string, f: PacketFault): void {
    const h = this.host(id);
    // Packets from the network only (eth0): not the node's own traffic on lo (its delay proxy's).
    if (f.lossPercent > 0)
      this.#nft(
        h.ns,
        `add rule inet jepsen input iifname "eth0" ip saddr ${this.subnet}.0/24 numgen random mod 100 < ${Math.round(f.lossPercent)} drop comment "loss"`,
      );
    if (f.delayMs !== undefined) {
      const args = [
        'qdisc',
        'replace',
        'dev',
        'eth0',
        'root',
        'netem',
        'delay',
        `${f.delayMs}ms`,
        `${f.jitterMs ?? 0}ms`,
      ];
      if ((f.reorderPercent ?? 0) > 0) args.push('reorder', `${f.reorderPercent}%`, '50%');
      run('ip', ['netns', 'exec', h.ns, 'tc', ...args]);
    } else if (f.slowKbit !== undefined) {
      run('ip', [
        'netns',
        'exec',
        h.ns,
        'tc',
        'qdisc',
        'replace',
        'dev',
        'eth0',
        'root',
        'tbf',
        'rate',
        `${f.slowKbit}kbit`,
        'burst',
        '16kbit',
        'latency',
        '400ms',
      ]);
    }
  }

  /**
   * Delay every TCP connection of node `id`, both ways, by `delayMs ± jitterMs` (each way),
   * in order: a proxy in its namespace (started on first use) carries them. NAT rules there
   * steer what arrives for the node (prerouting: from its peers and from the harness on the
   * bridge) and what it opens to each peer (output: one proxy port per peer, so the proxy
   * knows where to go) into the proxy; the proxy's own upstream connections leave from
   * local ports the output rule exempts. Connections open before are reset (ss -K) so that
   * they come back through the proxy. On the wire every packet keeps the node's and its
   * peers' addresses, so partitions still cut proxied connections.
   */
  async delay(id: string, d: LinkDelay): Promise<void> {
    const h = this.host(id);
    const peers = this.hosts.filter((p) => p.id !== id);
    let proxy = this.#proxies.get(id);
    if (proxy === undefined || !proxy.running) {
      proxy = await ProxyProcess.start(['ip', 'netns', 'exec', h.ns], `${this.bridge}-${id}`);
      this.#proxies.set(id, proxy);
    }
    const [min, max] = PROXY_LOCAL_PORTS;
    await proxy.request({
      op: 'listen',
      routes: [
        { listenHost: h.ip, listenPort: PROXY_PORT, upstreamHost: h.ip, upstreamPort: PORT },
        ...peers.map((p) => ({
          listenHost: h.ip,
          listenPort: PROXY_PORT + p.index,
          upstreamHost: p.ip,
          upstreamPort: PORT,
          localPortMin: min,
          localPortMax: max,
        })),
      ],
    });
    await proxy.request({ op: 'delay', delay: { delayMs: d.delayMs, jitterMs: d.jitterMs } });
    this.#flushNat(h.ns);
    this.#nft(
      h.ns,
      `add rule ip jepsen_nat prerouting ip daddr ${h.ip} tcp dport ${PORT} dnat to ${h.ip}:${PROXY_PORT} comment "delay: to ${id}"`,
    );
    for (const p of peers)
      this.#nft(
        h.ns,
        `add rule ip jepsen_nat output ip daddr ${p.ip} tcp dport ${PORT} tcp sport != ${min}-${max} dnat to ${h.ip}:${PROXY_PORT + p.index} comment "delay: ${id} to ${p.id}"`,
      );
    this.#delayed.add(id);
    // NAT applies to new connections: reset the node's open ones (not its own to itself, nor the proxy's listeners), and they reconnect through the proxy.
    tryRun('ip', [
      'netns',
      'exec',
      h.ns,
      'ss',
      '-K',
      '-t',
      '(',
      'sport',
      '=',
      `:${PORT}`,
      'or',
      'dport',
      '=',
      `:${PORT}`,
      ')',
      'and',
      'not',
      'dst',
      h.ip,
    ]);
  }

  /**
   * Remove every delay's NAT rules, and set the proxies' delay to none. Connections the
   * proxies carry now stay on them, forwarded at once and in order, until they close:
   * resetting them would fail the calls in flight on them, which a heal should not do.
   */
  undelay(): void {
    for (const id of this.#delayed) this.#flushNat(this.host(id).ns);
    this.#delayed.clear();
    for (const p of this.#proxies.values()) p.send({ op: 'delay' });
  }

  /**
   * Remove the delay rules, chain by chain. (`flush table` would do more: it drops the NAT
   * bindings of the connections open through the proxy, and the kernel resets them.)
   */
  #flushNat(ns: string): void {
    for (const chain of ['prerouting', 'output'])
      tryRun('ip', ['netns', 'exec', ns, 'nft', `flush chain ip jepsen_nat ${chain}`]);
  }

  /** Nodes delayed now. */
  get delayed(): string[] {
    return [...this.#delayed];
  }

  /** PIDs of the delay proxies running. */
  get proxyPids(): number[] {
    return [...this.#proxies.values()].filter((p) => p.running).map((p) => p.pid);
  }

  /** A node's proxy, if one was started (for tests: its stats). */
  proxy(id: string): ProxyProcess | undefined {
    return this.#proxies.get(id);
  }

  /** Remove packet faults, partitions and link delays everywhere. */
  heal(): void {
    this.healPartition();
    this.undelay();
    for (const h of this.#hosts.values())
      tryRun('ip', ['netns', 'exec', h.ns, 'tc', 'qdisc', 'del', 'dev', 'eth0', 'root']);
  }

  /** The rules in force at a node, as nft lists them (for tests and the report). */
  rules(id: string): string {
    return run('ip', ['netns', 'exec', this.host(id).ns, 'nft', 'list', 'chain', 'inet', 'jepsen', 'input']);
  }

  /** Every nftables rule in a node's namespace (`nft list ruleset` there). */
  ruleset(id: string): string {
    return run('ip', ['netns', 'exec', this.host(id).ns, 'nft', 'list', 'ruleset']);
  }

  /** Remove every namespace (and the processes in it, proxies too), veth and the bridge. Safe to call twice. */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    for (const p of this.#proxies.values()) p.kill();
    for (const h of this.#hosts.values()) removeNamespace(h.ns);
    const { links } = leftovers(this.pid);
    for (const l of links) tryRun('ip', ['link', 'del', l]);
  }
}
