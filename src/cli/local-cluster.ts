/**
 * `ringkv local`: a cluster of N nodes on 127.0.0.1 for trying ringkv out (what
 * `npm start` runs). Each node is its own `ringkv node` process with its own data dir
 * and log file; Ctrl-C stops them all cleanly. While it runs, `ringkv local add` starts
 * one more node (it joins and streams its ranges) and `ringkv local remove ID`
 * decommissions one, through a control socket in the data dir (local.sock).
 *
 * Owns: starting, watching and stopping the child processes. Must not: do what a node
 * does (it only runs `ringkv node`; joins and leaves are the nodes' business).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { AdminClient, type MemberStatus, type StatusReply } from '../client/admin.js';
import { formatStatus } from './format.js';
import { makeCerts } from './dev-certs.js';

export interface LocalOptions {
  readonly nodes: number;
  readonly basePort: number;
  /** HTTP port (metrics, status page) of the first node, the others following; 0: none. */
  readonly httpBasePort: number;
  readonly dataDir: string;
  /** ms to wait for the cluster to form. */
  readonly timeoutMs: number;
  /** TLS everywhere, with a development CA and certificates made in <dataDir>/certs (dev-certs.ts). */
  readonly tls?: boolean;
}

/** The files a TLS local cluster's operator side uses: the CA and the admin certificate. */
export interface LocalTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

interface Child {
  readonly id: string;
  readonly address: string;
  readonly log: string;
  readonly proc: ChildProcess;
  readonly exited: Promise<number | null>;
  /** Being decommissioned: its exit is the end of that, not a crash. */
  leaving: boolean;
  /** Stopped by `ringkv local stop`: its exit is asked for, not a crash. */
  stopped: boolean;
}

/** The control socket of the launcher whose data dir is `root`. */
export function controlSocket(root: string): string {
  return join(resolve(root), 'local.sock');
}

/** Indices (0-based) of node dirs n1, n2, ... in `root` that did not leave: a restart brings back nodes added since. */
function existingNodes(root: string): number[] {
  if (!existsSync(root)) return [];
  const out: number[] = [];
  for (const d of readdirSync(root)) {
    if (!/^n\d+$/.test(d)) continue;
    try {
      const j = JSON.parse(readFileSync(join(root, d, 'node.json'), 'utf8')) as { status?: string };
      if (j.status !== 'left') out.push(Number(d.slice(1)) - 1);
    } catch {
      /* not a node dir */
    }
  }
  return out;
}

/**
 * The index (0-based) the next added node takes: past every node dir in `root`, those
 * that left too, since a node that left cannot come back under its id.
 */
export function nextNodeIndex(root: string, running: readonly number[]): number {
  const dirs = existsSync(root)
    ? readdirSync(root)
        .filter((d) => /^n\d+$/.test(d))
        .map((d) => Number(d.slice(1)) - 1)
    : [];
  return Math.max(-1, ...dirs, ...running) + 1;
}

/** `ringkv local`: start the nodes, open the control socket, wait for the cluster to form and say how to use it. */
export async function runLocal(o: LocalOptions): Promise<void> {
  const root = resolve(o.dataDir);
  mkdirSync(root, { recursive: true });
  const indices = [...new Set([...Array.from({ length: o.nodes }, (_, i) => i), ...existingNodes(root)])].sort(
    (a, b) => a - b,
  );
  const cluster = new LocalCluster(o, root, indices);
  process.on('SIGINT', () => void cluster.stopAll(0));
  process.on('SIGTERM', () => void cluster.stopAll(0));
  await cluster.certsFor(indices.map((i) => `n${i + 1}`));
  for (const i of indices) cluster.start(i);
  const children = cluster.children;
  console.log(
    `ringkv local: ${indices.length} nodes on ${children.map((c) => c.address).join(', ')}, data and logs in ${root}`,
  );
  console.log(`pids: ${children.map((c) => `${c.id}=${c.proc.pid}`).join(' ')}`);
  await cluster.openControl();
  return cluster.awaitReady();
}

/** Whether the node's process has neither exited nor been killed. */
const isRunning = (c: Child): boolean => c.proc.exitCode === null && c.proc.signalCode === null;

/** The members a status counts as in the cluster: those that neither left nor were removed. */
const currentMembers = (s: StatusReply): MemberStatus[] =>
  s.members.filter((m) => m.status !== 'left' && m.status !== 'removed');

/** The node processes of one `ringkv local`, what the control socket does to them, and how they all stop. */
class LocalCluster {
  /** Every node started, each id once (a node started again takes its old entry's place). */
  readonly children: Child[] = [];
  readonly #certDir: string;
  /** The CA and admin certificate, with TLS. */
  readonly #tls: LocalTls | undefined;
  readonly #seeds: string;
  #stopping = false;
  #control: Server | undefined;
  /** The cluster formed: a node that exits since does not stop the others. */
  #ready = false;
  /** The index the last node added took, plus one (0: none added yet). */
  #next = 0;

  /** A cluster of nodes `indices` with data in `root`; nothing starts yet. */
  constructor(
    private readonly o: LocalOptions,
    /** The data dir, resolved. */
    private readonly root: string,
    /** The nodes this run started with (0-based). */
    private readonly indices: readonly number[],
  ) {
    this.#certDir = join(root, 'certs');
    this.#tls = o.tls
      ? {
          ca: join(this.#certDir, 'ca.pem'),
          cert: join(this.#certDir, 'admin.pem'),
          key: join(this.#certDir, 'admin-key.pem'),
        }
      : undefined;
    this.#seeds = Array.from({ length: o.nodes }, (_, i) => this.#addressOf(i)).join(',');
  }

  /** The address node `i` (0-based) listens on. */
  #addressOf(i: number): string {
    return `127.0.0.1:${this.o.basePort + i}`;
  }

  /** Stop every node (SIGTERM), wait for them to exit, and exit with `code`. */
  async stopAll(code: number): Promise<never> {
    this.#stopping = true;
    this.#control?.close();
    for (const c of this.children) if (c.proc.exitCode === null) c.proc.kill('SIGTERM');
    await Promise.all(this.children.map((c) => c.exited));
    process.exit(code);
  }

  /** The running node `id`; else an error that lists the running ones. */
  #running(id: string): Child {
    const c = this.children.find((x) => x.id === id && isRunning(x));
    if (c === undefined)
      throw new Error(
        `no running node ${id} in this local cluster (running: ${this.children
          .filter(isRunning)
          .map((x) => x.id)
          .join(', ')})`,
      );
    return c;
  }

  /** With TLS, make the certificates of nodes `ids` that are not made yet (and the CA, admin and client ones). */
  async certsFor(ids: string[]): Promise<void> {
    if (this.o.tls)
      await makeCerts({
        dir: this.#certDir,
        nodes: ids,
        hosts: ['127.0.0.1', 'localhost'],
        admins: ['admin'],
        clients: ['client'],
        days: 365,
        force: false,
      });
  }

  /** Start node `i` (0-based) as a `ringkv node` process logging to its dir, and watch it exit. */
  start(i: number): Child {
    const id = `n${i + 1}`;
    const address = this.#addressOf(i);
    const dir = join(this.root, id);
    mkdirSync(dir, { recursive: true });
    const log = join(dir, 'node.log');
    const out = createWriteStream(log, { flags: 'a' });
    // The same entry point and loader this process runs under (dist, or src through tsx).
    // Zones a, b, c, ...: each key's three replicas land in three zones, as in production.
    const zone = String.fromCharCode(97 + (i % 26));
    const tls = this.#tls;
    const proc = spawn(
      process.execPath,
      [
        ...process.execArgv,
        process.argv[1]!,
        'node',
        '--id',
        id,
        '--listen',
        address,
        '--data-dir',
        dir,
        '--seeds',
        this.#seeds,
        '--zone',
        zone,
        '--replicas',
        String(Math.min(3, this.o.nodes)),
        ...(this.o.httpBasePort > 0 ? ['--http', `127.0.0.1:${this.o.httpBasePort + i}`] : []),
        ...(tls
          ? [
              '--tls-cert',
              join(this.#certDir, `${id}.pem`),
              '--tls-key',
              join(this.#certDir, `${id}-key.pem`),
              '--tls-ca',
              tls.ca,
            ]
          : []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout!.pipe(out);
    proc.stderr!.pipe(out);
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    const child: Child = { id, address, log, proc, exited, leaving: false, stopped: false };
    // A node started again (ringkv local start) takes its old entry's place.
    const old = this.children.findIndex((c) => c.id === id);
    if (old >= 0) this.children.splice(old, 1);
    this.children.push(child);
    void exited.then((code) => this.#exited(child, code));
    return child;
  }

  /** A node exited: say why; before the cluster formed, or when every node is down, stop (exit 1). */
  #exited(child: Child, code: number | null): void {
    const { id, log, proc } = child;
    if (this.#stopping) return;
    if (child.leaving && code === 0) return void console.log(`ringkv local: node ${id} left the cluster and exited`);
    if (child.stopped)
      return void console.log(
        `ringkv local: node ${id} stopped (exit code ${code}); ringkv local start ${id} starts it again`,
      );
    // Killing a node to watch the others mark it down is a fair use: keep the rest up.
    console.error(
      `ringkv local: node ${id} (pid ${proc.pid}) exited (${code === null ? 'killed' : `code ${code}`}); last lines of ${log}:`,
    );
    console.error(tail(log, 3));
    if (!this.#ready) {
      // It will not form without it: say so now rather than wait out the timeout.
      console.error(`ringkv local: ${id} exited before the cluster formed; stopping the others (see ${log})`);
      void this.stopAll(1);
    } else if (
      this.children.every((c) => c.proc.exitCode !== null || c.proc.signalCode !== null) &&
      !this.children.some((c) => c.stopped)
    )
      void this.stopAll(1);
  }

  /** Open the control socket: `ringkv local add`, `remove`, `stop` and `start` act through it. */
  async openControl(): Promise<void> {
    const tls = this.#tls;
    this.#control = await serveControl(this.root, {
      add: async () => {
        // Taken before the first await: two adds at once get two ids.
        const i = (this.#next = Math.max(this.#next, nextNodeIndex(this.root, this.indices)) + 1) - 1;
        await this.certsFor([`n${i + 1}`]);
        const c = this.start(i);
        return { id: c.id, address: c.address, pid: c.proc.pid, tls };
      },
      remove: (id) => {
        const c = this.#running(id);
        c.leaving = true;
        return { id: c.id, address: c.address, pid: c.proc.pid, tls };
      },
      stop: async (id) => {
        const c = this.#running(id);
        c.stopped = true;
        c.proc.kill('SIGTERM');
        await c.exited;
        return { id: c.id, address: c.address, pid: c.proc.pid, tls };
      },
      start: (id) => {
        const c = this.children.find((x) => x.id === id);
        if (c === undefined)
          throw new Error(`no node ${id} in this local cluster (${this.children.map((x) => x.id).join(', ')})`);
        if (isRunning(c)) throw new Error(`${id} is running (pid ${c.proc.pid}); ringkv local stop ${id} first`);
        if (c.leaving)
          throw new Error(
            `${id} left the cluster: it cannot start again under its id; ringkv local add starts a new node`,
          );
        const again = this.start(Number(id.slice(1)) - 1);
        return { id: again.id, address: again.address, pid: again.proc.pid, tls };
      },
    });
  }

  /** Ask the nodes started so far for their status until the cluster formed (then say so), or stop at the timeout. */
  async awaitReady(): Promise<void> {
    const o = this.o;
    const count = this.indices.length;
    const tls = this.#tls;
    const security = tls ? { tls: { ca: tls.ca, cert: tls.cert, key: tls.key } } : {};
    const admins = this.children.map((c) => new AdminClient(c.address, 1000, security));
    const deadline = Date.now() + o.timeoutMs;
    let lastWait = '';
    for (;;) {
      // Ready when every node sees every node normal, up and done streaming (its last join
      // progress gossiped away): any of them can then coordinate.
      const views = await Promise.all(admins.map((a) => a.status().catch(() => undefined)));
      if (
        views.every(
          (s) =>
            s &&
            currentMembers(s).length === count &&
            currentMembers(s).every((m) => m.status === 'normal' && m.up && m.progress === ''),
        )
      ) {
        this.#ready = true;
        this.#printReady(views[0]!);
        break;
      }
      if (Date.now() > deadline) {
        console.error(`ringkv local: the cluster did not form within ${o.timeoutMs} ms; see the logs in ${this.root}`);
        for (const a of admins) a.close();
        return this.stopAll(1);
      }
      lastWait = this.#sayWaiting(views, lastWait);
      await new Promise((r) => setTimeout(r, 250));
    }
    for (const a of admins) a.close();
  }

  /** The cluster formed: print its status as `first` sees it, and commands to try. */
  #printReady(first: StatusReply): void {
    const o = this.o;
    const children = this.children;
    const count = this.indices.length;
    const tls = this.#tls;
    const cli = `npx ringkv`;
    // With TLS, the commands below need the CA and a certificate: the client's for keys, the admin's for the rest.
    const kv = tls
      ? ` --tls-ca ${tls.ca} --tls-cert ${join(this.#certDir, 'client.pem')} --tls-key ${join(this.#certDir, 'client-key.pem')}`
      : '';
    const op = tls ? ` --tls-ca ${tls.ca} --tls-cert ${tls.cert} --tls-key ${tls.key}` : '';
    console.log(`\n${formatStatus(first)}\n`);
    console.log(
      `cluster ready: ${children.map((c) => c.address).join(', ')} (zones ${[...new Set(currentMembers(first).map((m) => m.zone))].sort().join(', ')})`,
    );
    if (o.httpBasePort > 0)
      console.log(
        `status page: http://127.0.0.1:${o.httpBasePort}/ (metrics at /metrics; node N on port ${o.httpBasePort} + N - 1)`,
      );
    console.log('Try:');
    console.log(`  ${cli} put greeting hello --node ${children[0]!.address}${kv}`);
    console.log(`  ${cli} get greeting --node ${children[count - 1]!.address}${kv}`);
    console.log(`  ${cli} getendpoints greeting --node ${children[0]!.address}${op}`);
    console.log(`  ${cli} status --node ${children[0]!.address}${op}`);
    console.log(
      `  ${cli} local add --data-dir ${o.dataDir}            # one more node: it joins and streams its ranges`,
    );
    console.log(
      `  ${cli} local remove ${children[children.length - 1]!.id} --data-dir ${o.dataDir}      # decommission a node`,
    );
    const last = children[children.length - 1]!.id;
    console.log(
      `  ${cli} local stop ${last} --data-dir ${o.dataDir}; ${cli} local start ${last} --data-dir ${o.dataDir}   # take a node down and back`,
    );
    console.log('Ctrl-C stops every node; the data stays for the next start.');
  }

  /** While the cluster forms, say who is up and who is still joining when that changed; returns what it says. */
  #sayWaiting(views: readonly (StatusReply | undefined)[], lastWait: string): string {
    // Joins stream data one at a time: say who is up and who is still joining, so a long
    // wait is not a silent one. Each node's own word for itself, so the list only grows.
    const normal = this.children
      .filter((c, i) => views[i]?.members.find((m) => m.id === c.id)?.status === 'normal')
      .map((c) => c.id);
    const pending = this.children.map((c) => c.id).filter((id) => !normal.includes(id));
    const wait =
      pending.length > 0
        ? `${normal.length > 0 ? `${normal.join(', ')} up; ` : ''}waiting for ${pending.join(', ')} to join`
        : '';
    if (wait !== lastWait && wait !== '') console.log(`ringkv local: ${wait}`);
    return wait;
  }
}

type ControlReply = { id: string; address: string; pid: number | undefined; tls: LocalTls | undefined };

interface ControlHandlers {
  add(): Promise<ControlReply>;
  remove(id: string): ControlReply;
  /** SIGTERM the node and wait for it to exit; the launcher keeps its place. */
  stop(id: string): Promise<ControlReply>;
  /** Start a stopped node again, with the same id, port, zone and data dir. */
  start(id: string): ControlReply;
}

/** The control socket: one JSON request per connection ({"op":"add"}, or {"op":"remove"|"stop"|"start","id":"n4"}), one JSON reply. */
async function serveControl(root: string, h: ControlHandlers): Promise<Server> {
  const path = controlSocket(root);
  rmSync(path, { force: true }); // a launcher that was killed leaves its socket behind
  const server = createServer((sock) => {
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString();
      if (!buf.includes('\n')) return;
      void (async () => {
        const req = JSON.parse(buf) as { op?: string; id?: string };
        const id = String(req.id);
        switch (req.op) {
          case 'add':
            return h.add();
          case 'remove':
            return h.remove(id);
          case 'stop':
            return h.stop(id);
          case 'start':
            return h.start(id);
          default:
            return { error: `unknown op ${String(req.op)}` };
        }
      })()
        .catch((e: unknown) => ({ error: (e as Error).message }))
        .then((reply) => sock.end(`${JSON.stringify(reply)}\n`));
    });
    sock.on('error', () => undefined);
  });
  await new Promise<void>((r, j) => server.listen(path, r).once('error', j));
  return server;
}

/** Ask the launcher running on `root` to add a node, mark one leaving, or stop or start one. */
export async function askLauncher(
  root: string,
  req: { op: 'add' } | { op: 'remove' | 'stop' | 'start'; id: string },
): Promise<{ id: string; address: string; pid: number; tls?: LocalTls }> {
  const path = controlSocket(root);
  if (!existsSync(path))
    throw new Error(
      `no ringkv local runs with data dir ${resolve(root)} (no ${path}); start one with ringkv local (or npm start)`,
    );
  const text = await new Promise<string>((res, rej) => {
    const sock = createConnection(path);
    let out = '';
    sock.on('connect', () => sock.write(`${JSON.stringify(req)}\n`));
    sock.on('data', (d) => (out += d.toString()));
    sock.on('end', () => res(out));
    sock.on('error', (e) =>
      rej(new Error(`the ringkv local on ${resolve(root)} does not answer (${e.message}); is it still running?`)),
    );
  });
  const reply = JSON.parse(text) as { error?: string; id: string; address: string; pid: number; tls?: LocalTls };
  if (reply.error) throw new Error(reply.error);
  return reply;
}

function tail(path: string, lines: number): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
