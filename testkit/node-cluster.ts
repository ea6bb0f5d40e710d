/**
 * Real `ringkv node` processes on 127.0.0.1 for tests and benches: each on a free port
 * with its own data dir, its JSON log lines parsed as they come, its admin client, and
 * every process stopped by its PID at the end (TestCluster.destroy).
 *
 * Owns: the node processes it spawns and the cluster's temporary root folder. Must not:
 * signal a process it did not start, or decide what a test checks (it reports views and
 * log lines; the test judges them).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { AdminClient, type StatusReply } from '../src/client/admin.js';
import type { ClientSecurity } from '../src/security/credentials.js';
import { freePort } from './ports.js';
import { waitFor } from './wait.js';

const MAIN = join(import.meta.dirname, '../src/cli/main.ts');

export interface LogLine {
  readonly msg: string;
  readonly [k: string]: unknown;
}

export class NodeProcess {
  child: ChildProcess | undefined;
  readonly lines: LogLine[] = [];
  stderr = '';
  exit: Promise<number | null> = Promise.resolve(null);
  /** What admin() connects with (TLS clusters: the CA and an admin certificate). */
  security: ClientSecurity = {};
  #admin: AdminClient | undefined;

  constructor(
    readonly id: string,
    readonly address: string,
    readonly dataDir: string,
    readonly args: string[],
  ) {}

  start(): void {
    // A new process on the same address: a fresh channel, not one backing off from the old one.
    this.#admin?.close();
    this.#admin = undefined;
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'node', ...this.args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, RINGKV_LOG_LEVEL: 'info' },
    });
    this.child = child;
    createInterface({ input: child.stdout! }).on('line', (l) => {
      try {
        this.lines.push(JSON.parse(l) as LogLine);
      } catch {
        this.lines.push({ msg: l });
      }
    });
    child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  get pid(): number {
    return this.child!.pid!;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  signal(sig: NodeJS.Signals): void {
    if (this.running) process.kill(this.pid, sig);
  }

  admin(): AdminClient {
    this.#admin ??= new AdminClient(this.address, 2000, this.security);
    return this.#admin;
  }

  async status(): Promise<StatusReply | undefined> {
    try {
      return await this.admin().status(3);
    } catch {
      return undefined;
    }
  }

  close(): void {
    this.#admin?.close();
    this.#admin = undefined;
    if (this.child && this.running) {
      this.child.kill('SIGCONT');
      this.child.kill('SIGKILL');
    }
  }
}

export class TestCluster {
  readonly nodes: NodeProcess[] = [];
  readonly root = mkdtempSync(join(tmpdir(), 'ringkv-cluster-'));

  /** Create `count` nodes n1..n{count} on free ports; seeds are the first `seeds` of them; `perNode` adds flags by id. */
  static async create(
    count: number,
    seeds: number,
    extra: readonly string[] = [],
    perNode: (id: string) => readonly string[] = () => [],
  ): Promise<TestCluster> {
    const c = new TestCluster();
    const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
    const addrs = ports.map((p) => `127.0.0.1:${p}`);
    for (let i = 0; i < count; i++) {
      const id = `n${i + 1}`;
      const dataDir = join(c.root, id);
      const args = [
        '--id',
        id,
        '--listen',
        addrs[i]!,
        '--data-dir',
        dataDir,
        '--seeds',
        addrs.slice(0, seeds).join(','),
        ...extra,
        ...perNode(id),
      ];
      c.nodes.push(new NodeProcess(id, addrs[i]!, dataDir, args));
    }
    return c;
  }

  node(id: string): NodeProcess {
    return this.nodes.find((n) => n.id === id)!;
  }

  /** Every node's view, or undefined for a node that does not answer. */
  views(): Promise<(StatusReply | undefined)[]> {
    return Promise.all(this.nodes.map((n) => (n.running ? n.status() : Promise.resolve(undefined))));
  }

  /** Wait until every node's view has every node of the cluster normal and up. */
  async formed(timeoutMs = 90_000): Promise<void> {
    const n = this.nodes.length;
    await waitFor(
      `all ${n} normal and up on every node`,
      timeoutMs,
      async () => {
        const views = await this.views();
        return views.every((v) => v?.members.length === n && v.members.every((m) => m.status === 'normal' && m.up));
      },
      250,
    );
  }

  destroy(): void {
    for (const n of this.nodes) n.close();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** The HTTP address a node logged at start (--http 127.0.0.1:0 picks a free port). */
export function httpOf(n: NodeProcess): Promise<string> {
  return waitFor(
    `${n.id}'s HTTP address`,
    30_000,
    () => n.lines.find((l) => l.msg === 'node started')?.http as string | undefined,
  );
}
