/**
 * The slow nemesis's link delay on real namespaces (as root; skipped elsewhere): with
 * Network.delay on n3, round trips to and from n3 grow by the delay both ways — from its
 * peers, from the bridge (where the harness's clients are) and from n3 to its peers —
 * while n1↔n2 stays fast; the NAT rules are where they should be; connections open before
 * are reset onto the proxy; undelay removes the rules and lifts the delay at once, also on
 * the connections the proxy still carries (which must survive the heal: once the last NAT
 * rule goes, a namespace without another conntrack user would stop tracking and reset
 * them); a partition still cuts those; destroy leaves nothing behind. Tiny echo servers stand in for ringkv nodes on each node's port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { capabilities, leftovers, Network } from '../../testkit/jepsen/net.js';

const root = capabilities().namespaces === true;
let network: Network | undefined;
const children: ChildProcess[] = [];

const ECHO = `require('node:net').createServer((s) => { s.setNoDelay(true); s.on('data', (d) => s.write(d)); s.on('error', () => {}); }).listen(7000, process.argv[1]);`;
/** A pinger on one connection: "ping" on stdin → the round trip in ms, "timeout" or "closed" on stdout. */
const PINGER = `
const s = require('node:net').connect(7000, process.argv[1]); s.setNoDelay(true);
let t = 0, timer; const out = (x) => process.stdout.write(x + '\\n');
s.on('data', () => { clearTimeout(timer); out((performance.now() - t).toFixed(1)); });
s.on('error', (e) => out('error ' + e.code)); s.on('close', () => out('closed'));
require('node:readline').createInterface({ input: process.stdin }).on('line', () => { t = performance.now(); s.write('x'); timer = setTimeout(() => out('timeout'), 2000); });`;

class Pinger {
  readonly #lines: string[] = [];
  readonly #waiters: ((l: string) => void)[] = [];
  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const w = this.#waiters.shift();
      if (w) w(l);
      else this.#lines.push(l);
    });
  }
  next(): Promise<string> {
    const l = this.#lines.shift();
    return l !== undefined ? Promise.resolve(l) : new Promise((r) => this.#waiters.push(r));
  }
  async ping(): Promise<string> {
    this.child.stdin!.write('ping\n');
    return this.next();
  }
  /** The median of `n` round trips, ms (NaN if any failed). */
  async rtt(n = 5): Promise<number> {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) xs.push(Number(await this.ping()));
    return xs.sort((a, b) => a - b)[Math.floor(n / 2)]!;
  }
}

function inNs(id: string, code: string, arg: string): ChildProcess {
  const [cmd, ...args] = network!.wrap(id, [process.execPath, '-e', code, arg]);
  const c = spawn(cmd!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(c);
  return c;
}

/** A pinger from node `from`'s namespace (or from the bridge: undefined) to node `to`. */
async function pinger(from: string | undefined, to: string): Promise<Pinger> {
  const ip = network!.host(to).ip;
  let child: ChildProcess;
  if (from === undefined) {
    const [cmd, ...args] = [process.execPath, '-e', PINGER, ip];
    child = spawn(cmd!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(child);
  } else child = inNs(from, PINGER, ip);
  const p = new Pinger(child);
  // Connected and answering (the echo servers may still be starting).
  for (let i = 0; i < 50; i++) {
    const r = await p.ping();
    if (!Number.isNaN(Number(r))) return p;
    if (r === 'closed' || r.startsWith('error')) return pinger(from, to);
  }
  throw new Error(`no echo from ${to}`);
}

beforeAll(async () => {
  if (!root) return;
  network = Network.create();
  for (const [i, id] of ['n1', 'n2', 'n3'].entries()) {
    network.addHost(id, i + 1);
    inNs(id, ECHO, network.host(id).ip);
  }
  // Echo servers listening.
  for (const id of ['n1', 'n2', 'n3']) {
    for (let i = 0; ; i++) {
      const ok = await new Promise<boolean>((r) => {
        const s = net.connect(7000, network!.host(id).ip, () => (s.destroy(), r(true)));
        s.on('error', () => r(false));
      });
      if (ok) break;
      if (i > 100) throw new Error(`echo server on ${id} did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}, 60_000);

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) process.kill(c.pid!, 'SIGKILL');
  network?.destroy();
});

it.skipIf(!root)(
  'delays every link of one node both ways, in NAT rules its namespace holds, and heals at once',
  async () => {
    const n = network!;
    const early = await pinger('n1', 'n3'); // opened before the delay: reset onto the proxy
    const fast = {
      bridge: await (await pinger(undefined, 'n3')).rtt(),
      peer: await early.rtt(),
      out: await (await pinger('n3', 'n1')).rtt(),
    };
    for (const v of Object.values(fast)) expect(v).toBeLessThan(50);

    await n.delay('n3', { delayMs: 100, jitterMs: 20 });
    const rules = n.ruleset('n3');
    expect(rules).toMatch(
      new RegExp(`chain prerouting[^}]*ip daddr ${n.host('n3').ip} tcp dport 7000 dnat to ${n.host('n3').ip}:62000`),
    );
    for (const p of ['n1', 'n2'])
      expect(rules).toMatch(
        new RegExp(
          `ip daddr ${n.host(p).ip} tcp dport 7000 tcp sport != 61000-61999 dnat to ${n.host('n3').ip}:${62000 + n.host(p).index}`,
        ),
      );
    // The peers' namespaces and the root namespace hold no rules for it.
    expect(n.ruleset('n1')).not.toMatch(/dnat/);
    expect(await early.next()).toMatch(/^(closed|error ECONNRESET)$/);

    // Each way 80–120 ms: a round trip of at least 160 ms from the bridge, from a peer, and from n3 out.
    const slow = {
      bridge: await (await pinger(undefined, 'n3')).rtt(),
      peer: await (await pinger('n1', 'n3')).rtt(),
      out: await (await pinger('n3', 'n2')).rtt(),
    };
    for (const [k, v] of Object.entries(slow)) expect(v, k).toBeGreaterThanOrEqual(160);
    expect(await (await pinger('n1', 'n2')).rtt(), 'n1 to n2, not n3').toBeLessThan(50);
    const carried = await pinger('n1', 'n3'); // through the proxy: it stays there after the heal
    expect(await carried.rtt(3)).toBeGreaterThanOrEqual(160);
    const stats = (await n.proxy('n3')!.request({ op: 'stats' })).stats!;
    expect(stats.connections).toBeGreaterThanOrEqual(4);

    n.undelay();
    expect(n.ruleset('n3')).not.toMatch(/dnat/);
    expect(n.delayed).toEqual([]);
    await new Promise((r) => setTimeout(r, 50));
    // New connections go direct; the carried one is forwarded at once.
    expect(await (await pinger(undefined, 'n3')).rtt()).toBeLessThan(50);
    expect(await (await pinger('n3', 'n1')).rtt()).toBeLessThan(50);
    expect(await carried.rtt()).toBeLessThan(50);
    // On the wire the carried connection is still n1 ↔ n3: a partition cuts it.
    n.partition([
      { from: 'n1', to: 'n3', initiatedOnly: false },
      { from: 'n3', to: 'n1', initiatedOnly: false },
    ]);
    expect(await carried.ping()).toBe('timeout');
    n.healPartition();

    const pids = n.proxyPids;
    expect(pids).toHaveLength(1);
    n.destroy();
    await new Promise((r) => setTimeout(r, 200));
    for (const p of pids) expect(() => process.kill(p, 0)).toThrow();
    expect(leftovers(process.pid)).toEqual({ namespaces: [], links: [], cgroups: [], proxies: [], disks: [] });
  },
  120_000,
);
