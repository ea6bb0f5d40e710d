/**
 * The harness's ringkv nodes: real `ringkv node` processes, each in its own network
 * namespace (net.ts) or, without one, on 127.0.0.1. Each logs to a file in the run's
 * results folder; every process is stopped by its PID.
 *
 * Owns: the node processes it spawns and their log files. Must not: build the network or
 * apply faults (net.ts and slow.ts do; it only asks the network to wrap its command), or
 * decide when a node goes (the run does).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { AdminClient, type StatusReply } from '../../src/client/admin.js';
import { freePort } from '../ports.js';
import type { Network } from './net.js';
import { mountSmallDisk, unmountSmallDisk } from './disk.js';

const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');

export class JepsenNode {
  #child: ChildProcess | undefined;
  #admin: AdminClient | undefined;
  exit: Promise<void> = Promise.resolve();
  /** Stopped by SIGSTOP and not yet continued. */
  paused = false;
  /** Asked to decommission: it exits by itself when done. */
  leaving = false;
  /** Decommissioned or removed: never restarted. */
  gone = false;

  constructor(
    readonly id: string,
    readonly zone: string,
    readonly address: string,
    readonly dataDir: string,
    readonly args: readonly string[],
    readonly logFile: string,
    readonly net: Network | undefined,
  ) {}

  /** Start the process; `clockOffsetMs` starts it with its wall clock skewed (generations are wall-clock seconds). */
  start(clockOffsetMs = 0): void {
    this.#admin?.close();
    this.#admin = undefined;
    const argv = [
      process.execPath,
      '--import',
      'tsx',
      MAIN,
      'node',
      ...this.args,
      `--clock-offset-ms=${clockOffsetMs}`,
    ];
    const [cmd, ...rest] = this.net ? this.net.wrap(this.id, argv) : argv;
    const fd = openSync(this.logFile, 'a');
    const child = spawn(cmd!, rest, { stdio: ['ignore', fd, fd], env: { ...process.env, RINGKV_LOG_LEVEL: 'info' } });
    closeSync(fd);
    this.#child = child;
    this.paused = false;
    this.exit = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  get running(): boolean {
    const c = this.#child;
    return c !== undefined && c.exitCode === null && c.signalCode === null;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  signal(sig: NodeJS.Signals): void {
    if (this.running) process.kill(this.#child!.pid!, sig);
    if (sig === 'SIGSTOP') this.paused = true;
    if (sig === 'SIGCONT' || sig === 'SIGKILL') this.paused = false;
  }

  async kill(): Promise<void> {
    if (!this.running) return;
    this.signal('SIGCONT');
    this.signal('SIGKILL');
    await this.exit;
  }

  admin(): AdminClient {
    this.#admin ??= new AdminClient(this.address, 2000);
    return this.#admin;
  }

  async status(): Promise<StatusReply | undefined> {
    if (!this.running || this.paused) return undefined;
    try {
      return await this.admin().status(3);
    } catch {
      return undefined;
    }
  }

  close(): void {
    this.#admin?.close();
    this.#admin = undefined;
    if (this.running) {
      process.kill(this.#child!.pid!, 'SIGCONT');
      process.kill(this.#child!.pid!, 'SIGKILL');
    }
  }
}

export interface ClusterOptions {
  readonly root: string;
  readonly zones: number;
  readonly seeds: number;
  readonly net: Network | undefined;
  /** Extra `ringkv node` flags for every node. */
  readonly flags: readonly string[];
  /** Give each node a disk of its own of this many bytes (a tmpfs on its data directory; root): the disk-full nemesis fills it. */
  readonly diskBytes?: number;
}

export class JepsenCluster {
  readonly nodes: JepsenNode[] = [];
  #seeds: string[] = [];
  /** The data directories with a small disk mounted on them. */
  #mounted: string[] = [];

  constructor(readonly o: ClusterOptions) {
    mkdirSync(join(o.root, 'nodes'), { recursive: true });
  }

  /** A new node n<k> (its namespace too), not yet started. The first `seeds` nodes are the seeds. */
  async add(): Promise<JepsenNode> {
    const index = this.nodes.length + 1;
    const id = `n${index}`;
    const zone = `z${((index - 1) % this.o.zones) + 1}`;
    const listen = this.o.net ? this.o.net.addHost(id, index).address : `127.0.0.1:${await freePort()}`;
    if (this.#seeds.length < this.o.seeds) this.#seeds.push(listen);
    const dataDir = join(this.o.root, 'nodes', id);
    if (this.o.diskBytes !== undefined) {
      mkdirSync(dataDir, { recursive: true });
      mountSmallDisk(dataDir, this.o.diskBytes, id);
      this.#mounted.push(dataDir);
    }
    const args = [
      '--id',
      id,
      '--listen',
      listen,
      '--data-dir',
      dataDir,
      '--seeds',
      this.#seeds.join(','),
      '--zone',
      zone,
      '--fault-injection',
      'on',
      ...this.o.flags,
    ];
    const node = new JepsenNode(id, zone, listen, dataDir, args, join(this.o.root, 'nodes', `${id}.log`), this.o.net);
    this.nodes.push(node);
    return node;
  }

  node(id: string): JepsenNode {
    return this.nodes.find((n) => n.id === id)!;
  }

  /** Members that should be in the cluster: started once and not gone. */
  get members(): JepsenNode[] {
    return this.nodes.filter((n) => !n.gone && n.pid !== undefined);
  }

  /** Every member's view of the cluster, or undefined where a member does not answer. */
  views(): Promise<(StatusReply | undefined)[]> {
    return Promise.all(this.members.map((n) => n.status()));
  }

  /** Stop every node, then unmount their small disks. */
  close(): void {
    for (const n of this.nodes) n.close();
    for (const dir of this.#mounted.splice(0)) unmountSmallDisk(dir);
  }
}
