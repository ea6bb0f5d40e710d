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
import { AdminClient } from '../client/admin.js';
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

export async function runLocal(o: LocalOptions): Promise<void> {
  const root = resolve(o.dataDir);
  mkdirSync(root, { recursive: true });
  const indices = [...new Set([...Array.from({ length: o.nodes }, (_, i) => i), ...existingNodes(root)])].sort(
    (a, b) => a - b,
  );
  const count = indices.length;
  const children: Child[] = [];
  let stopping = false;
  let control: Server | undefined;
  let ready = false;

  const stopAll = async (code: number): Promise<never> => {
    stopping = true;
    control?.close();
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGTERM');
    await Promise.all(children.map((c) => c.exited));
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  const isRunning = (c: Child): boolean => c.proc.exitCode === null && c.proc.signalCode === null;
  const running = (id: string): Child => {
    const c = children.find((x) => x.id === id && isRunning(x));
    if (c === undefined)
      throw new Error(
        `no running node ${id} in this local cluster (running: ${children
          .filter(isRunning)
          .map((x) => x.id)
          .join(', ')})`,
      );
    return c;
  };
  const certDir = join(root, 'certs');
  const certsFor = async (ids: string[]): Promise<void> => {
    if (o.tls)
      await makeCerts({
        dir: certDir,
        nodes: ids,
        hosts: ['127.0.0.1', 'localhost'],
        admins: ['admin'],
        clients: ['client'],
        days: 365,
        force: false,
      });
  };
  const tls: LocalTls | undefined = o.tls
    ? { ca: join(certDir, 'ca.pem'), cert: join(certDir, 'admin.pem'), key: join(certDir, 'admin-key.pem') }
    : undefined;
  await certsFor(indices.map((i) => `n${i + 1}`));
  const addressOf = (i: number): string => `127.0.0.1:${o.basePort + i}`;
  const seeds = Array.from({ length: o.nodes }, (_, i) => addressOf(i)).join(',');
  const start = (i: number): Child => {
    const id = `n${i + 1}`;
    const address = addressOf(i);
    const dir = join(root, id);
    mkdirSync(dir, { recursive: true });
    const log = join(dir, 'node.log');
    const out = createWriteStream(log, { flags: 'a' });
    // The same entry point and loader this process runs under (dist, or src through tsx).
    // Zones a, b, c, ...: each key's three replicas land in three zones, as in production.
    const zone = String.fromCharCode(97 + (i % 26));
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
        seeds,
        '--zone',
        zone,
        '--replicas',
        String(Math.min(3, o.nodes)),
        ...(o.httpBasePort > 0 ? ['--http', `127.0.0.1:${o.httpBasePort + i}`] : []),
        ...(tls
          ? ['--tls-cert', join(certDir, `${id}.pem`), '--tls-key', join(certDir, `${id}-key.pem`), '--tls-ca', tls.ca]
          : []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout!.pipe(out);
    proc.stderr!.pipe(out);
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    const child: Child = { id, address, log, proc, exited, leaving: false, stopped: false };
    // A node started again (ringkv local start) takes its old entry's place.
    const old = children.findIndex((c) => c.id === id);
    if (old >= 0) children.splice(old, 1);
    children.push(child);
    void exited.then((code) => {
      if (stopping) return;
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
      if (!ready) {
        // It will not form without it: say so now rather than wait out the timeout.
        console.error(`ringkv local: ${id} exited before the cluster formed; stopping the others (see ${log})`);
        void stopAll(1);
      } else if (
        children.every((c) => c.proc.exitCode !== null || c.proc.signalCode !== null) &&
        !children.some((c) => c.stopped)
      )
        void stopAll(1);
    });
    return child;
  };

  for (const i of indices) start(i);
  let next = 0;
  console.log(`ringkv local: ${count} nodes on ${children.map((c) => c.address).join(', ')}, data and logs in ${root}`);
  console.log(`pids: ${children.map((c) => `${c.id}=${c.proc.pid}`).join(' ')}`);
  control = await serveControl(root, {
    add: async () => {
      // Taken before the first await: two adds at once get two ids.
      const i = (next = Math.max(next, nextNodeIndex(root, indices)) + 1) - 1;
      await certsFor([`n${i + 1}`]);
      const c = start(i);
      return { id: c.id, address: c.address, pid: c.proc.pid, tls };
    },
    remove: (id) => {
      const c = running(id);
      c.leaving = true;
      return { id: c.id, address: c.address, pid: c.proc.pid, tls };
    },
    stop: async (id) => {
      const c = running(id);
      c.stopped = true;
      c.proc.kill('SIGTERM');
      await c.exited;
      return { id: c.id, address: c.address, pid: c.proc.pid, tls };
    },
    start: (id) => {
      const c = children.find((x) => x.id === id);
      if (c === undefined)
        throw new Error(`no node ${id} in this local cluster (${children.map((x) => x.id).join(', ')})`);
      if (isRunning(c)) throw new Error(`${id} is running (pid ${c.proc.pid}); ringkv local stop ${id} first`);
      if (c.leaving)
        throw new Error(
          `${id} left the cluster: it cannot start again under its id; ringkv local add starts a new node`,
        );
      const again = start(Number(id.slice(1)) - 1);
      return { id: again.id, address: again.address, pid: again.proc.pid, tls };
    },
  });

  const security = tls ? { tls: { ca: tls.ca, cert: tls.cert, key: tls.key } } : {};
  const admins = children.map((c) => new AdminClient(c.address, 1000, security));
  const deadline = Date.now() + o.timeoutMs;
  let lastWait = '';
  for (;;) {
    // Ready when every node sees every node normal, up and done streaming (its last join
    // progress gossiped away): any of them can then coordinate.
    const views = await Promise.all(admins.map((a) => a.status().catch(() => undefined)));
    const current = (s: NonNullable<(typeof views)[number]>) =>
      s.members.filter((m) => m.status !== 'left' && m.status !== 'removed');
    if (
      views.every(
        (s) =>
          s &&
          current(s).length === count &&
          current(s).every((m) => m.status === 'normal' && m.up && m.progress === ''),
      )
    ) {
      ready = true;
      const cli = `npx ringkv`;
      // With TLS, the commands below need the CA and a certificate: the client's for keys, the admin's for the rest.
      const kv = tls
        ? ` --tls-ca ${tls.ca} --tls-cert ${join(certDir, 'client.pem')} --tls-key ${join(certDir, 'client-key.pem')}`
        : '';
      const op = tls ? ` --tls-ca ${tls.ca} --tls-cert ${tls.cert} --tls-key ${tls.key}` : '';
      console.log(`\n${formatStatus(views[0]!)}\n`);
      console.log(
        `cluster ready: ${children.map((c) => c.address).join(', ')} (zones ${[...new Set(current(views[0]!).map((m) => m.zone))].sort().join(', ')})`,
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
      break;
    }
    if (Date.now() > deadline) {
      console.error(`ringkv local: the cluster did not form within ${o.timeoutMs} ms; see the logs in ${root}`);
      for (const a of admins) a.close();
      return stopAll(1);
    }
    // Joins stream data one at a time: say who is up and who is still joining, so a long
    // wait is not a silent one. Each node's own word for itself, so the list only grows.
    const normal = children
      .filter((c, i) => views[i]?.members.find((m) => m.id === c.id)?.status === 'normal')
      .map((c) => c.id);
    const pending = children.map((c) => c.id).filter((id) => !normal.includes(id));
    const wait =
      pending.length > 0
        ? `${normal.length > 0 ? `${normal.join(', ')} up; ` : ''}waiting for ${pending.join(', ')} to join`
        : '';
    if (wait !== lastWait && wait !== '') console.log(`ringkv local: ${wait}`);
    lastWait = wait;
    await new Promise((r) => setTimeout(r, 250));
  }
  for (const a of admins) a.close();
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
