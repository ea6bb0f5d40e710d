/**
 * `ringkv local`: a cluster of N nodes on 127.0.0.1 for trying ringkv out (what
 * `npm start` runs). Each node is its own `ringkv node` process with its own data dir
 * and log file; Ctrl-C stops them all cleanly.
 *
 * Owns: starting, watching and stopping the child processes. Must not: do what a node
 * does (it only runs `ringkv node`).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AdminClient } from '../client/admin.js';
import { formatStatus } from './format.js';

export interface LocalOptions {
  readonly nodes: number;
  readonly basePort: number;
  readonly dataDir: string;
  /** ms to wait for the cluster to form. */
  readonly timeoutMs: number;
}

interface Child {
  readonly id: string;
  readonly address: string;
  readonly log: string;
  readonly proc: ChildProcess;
  readonly exited: Promise<number | null>;
}

export async function runLocal(o: LocalOptions): Promise<void> {
  const root = resolve(o.dataDir);
  const addresses = Array.from({ length: o.nodes }, (_, i) => `127.0.0.1:${o.basePort + i}`);
  const children: Child[] = [];
  let stopping = false;

  const stopAll = async (code: number): Promise<never> => {
    stopping = true;
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGTERM');
    await Promise.all(children.map((c) => c.exited));
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  for (const [i, address] of addresses.entries()) {
    const id = `n${i + 1}`;
    const dir = join(root, id);
    mkdirSync(dir, { recursive: true });
    const log = join(dir, 'node.log');
    const out = createWriteStream(log, { flags: 'a' });
    // The same entry point and loader this process runs under (dist, or src through tsx).
    // Zones a, b, c, ...: each key's three replicas land in three zones, as in production.
    const zone = String.fromCharCode(97 + (i % 26));
    const proc = spawn(
      process.execPath,
      [...process.execArgv, process.argv[1]!, 'node', '--id', id, '--listen', address, '--data-dir', dir, '--seeds', addresses.join(','), '--zone', zone, '--replicas', String(Math.min(3, o.nodes))],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout!.pipe(out);
    proc.stderr!.pipe(out);
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    children.push({ id, address, log, proc, exited });
    void exited.then((code) => {
      if (stopping) return;
      // Killing a node to watch the others mark it down is a fair use: keep the rest up.
      console.error(`ringkv local: node ${id} (pid ${proc.pid}) exited (${code === null ? 'killed' : `code ${code}`}); last lines of ${log}:`);
      console.error(tail(log, 3));
      if (children.every((c) => c.proc.exitCode !== null || c.proc.signalCode !== null)) void stopAll(1);
    });
  }
  console.log(`ringkv local: ${o.nodes} nodes on ${addresses[0]}..${o.basePort + o.nodes - 1}, data and logs in ${root}`);
  console.log(`pids: ${children.map((c) => `${c.id}=${c.proc.pid}`).join(' ')}`);

  const admins = addresses.map((a) => new AdminClient(a, 1000));
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    // Ready when every node sees every node normal and up: any of them can then coordinate.
    const views = await Promise.all(admins.map((a) => a.status().catch(() => undefined)));
    if (views.every((s) => s && s.members.length === o.nodes && s.members.every((m) => m.status === 'normal' && m.up))) {
      const cli = `npx ringkv`;
      console.log(`\n${formatStatus(views[0]!)}\n`);
      console.log(`cluster ready: ${addresses.join(', ')} (zones ${[...new Set(views[0]!.members.map((m) => m.zone))].sort().join(', ')})`);
      console.log('Try:');
      console.log(`  ${cli} put greeting hello --node ${addresses[0]}`);
      console.log(`  ${cli} get greeting --node ${addresses[o.nodes - 1]}`);
      console.log(`  ${cli} getendpoints greeting --node ${addresses[0]}`);
      console.log(`  ${cli} status --node ${addresses[0]}`);
      console.log('Ctrl-C stops every node; the data stays for the next start.');
      break;
    }
    if (Date.now() > deadline) {
      console.error(`ringkv local: the cluster did not form within ${o.timeoutMs} ms; see the logs in ${root}`);
      for (const a of admins) a.close();
      return stopAll(1);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  for (const a of admins) a.close();
}

function tail(path: string, lines: number): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
