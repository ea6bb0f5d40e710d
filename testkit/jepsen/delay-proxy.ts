/**
 * A delaying TCP proxy, for the slow nemesis's `delay` shape: net.ts runs one inside a
 * node's network namespace and steers that node's connections into it with nftables NAT.
 * Each chunk read from one side is written to the other `delayMs ± jitterMs` later
 * (uniform, bounded), and never before a chunk that arrived earlier in the same direction:
 * per direction, delivery times never decrease, so the byte stream keeps its order and no
 * chunk is delivered early. A half-close (FIN) or a reset is passed on in the same order,
 * after the bytes before it. Setting no delay (heal) forwards at once, still in order.
 *
 * Run as its own process (`node --import tsx delay-proxy.ts --tag rkj<pid>-<node>`), so
 * the load generator's CPU does not distort its timers. It takes commands as JSON lines on
 * stdin and answers each with one JSON line on stdout; it exits when stdin closes (its
 * harness is gone) or on SIGTERM. `ProxyProcess` is the harness's side of that.
 *
 * Owns: its listening sockets, the connections they accept and the upstream connections
 * it opens. Must not: look into or change the bytes, or decide which traffic comes to it
 * (the NAT rules do); it never connects anywhere but a route's upstream.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface LinkDelay {
  /** Added to each chunk, each way, ms. */
  readonly delayMs: number;
  /** Uniform jitter around delayMs, ms (bounded: at most delayMs). */
  readonly jitterMs: number;
}

export interface Route {
  readonly listenHost: string;
  /** 0: any free port (the answer says which). */
  readonly listenPort: number;
  readonly upstreamHost: string;
  readonly upstreamPort: number;
  /** Open upstream connections from a local port in [min, max] (the NAT rules leave those alone). */
  readonly localPortMin?: number;
  readonly localPortMax?: number;
}

export interface ProxyStats {
  /** Connections open now (accepted and not yet closed on both sides). */
  readonly connections: number;
  /** Connections accepted since the start. */
  readonly accepted: number;
  readonly chunks: number;
  readonly bytes: number;
}

/** Above this many bytes waiting (queued or in the socket's buffer), the reading side is paused. */
const HIGH_WATER = 4 << 20;
const LOW_WATER = 1 << 20;

type Item = { readonly at: number; readonly data: Buffer } | { readonly at: number; readonly data: 'end' | 'destroy' };

/** One direction of one connection: chunks read from `from`, each written to `to` at its time. */
class Direction {
  readonly #queue: Item[] = [];
  #head = 0;
  #queued = 0;
  #last = 0;
  #timer: NodeJS.Timeout | undefined;
  #paused = false;
  #done = false;
  to: net.Socket | undefined;

  constructor(
    readonly from: net.Socket,
    readonly delay: () => number,
    readonly counted: (bytes: number) => void,
  ) {}

  push(data: Item['data']): void {
    if (this.#done) return;
    if (data === 'end' || data === 'destroy') this.#done = true;
    // Never before the chunk ahead of it: the stream keeps its order, and none is early.
    const at = Math.max(performance.now() + this.delay(), this.#last);
    this.#last = at;
    this.#queue.push({ at, data } as Item);
    if (typeof data !== 'string') this.#queued += data.length;
    this.pump();
  }

  /** Deliver what is due; wake up again for the next. Until `to` is connected, hold everything. */
  pump(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const to = this.to;
    if (to === undefined) return;
    const now = performance.now();
    while (this.#head < this.#queue.length && this.#queue[this.#head]!.at <= now) {
      const item = this.#queue[this.#head++]!;
      if (item.data === 'end') {
        if (!to.destroyed) to.end();
      } else if (item.data === 'destroy') {
        to.destroy();
      } else {
        this.#queued -= item.data.length;
        if (!to.destroyed && to.writable) to.write(item.data);
        this.counted(item.data.length);
      }
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) (this.#queue.splice(0, this.#head), (this.#head = 0));
    if (this.#head < this.#queue.length) {
      // A timer can fire a little early by the event loop's cached clock: pump checks the time again.
      this.#timer = setTimeout(() => this.pump(), Math.max(1, Math.ceil(this.#queue[this.#head]!.at - now)));
    }
    this.backpressure();
  }

  backpressure(): void {
    const waiting = this.#queued + (this.to?.writableLength ?? 0);
    if (!this.#paused && waiting > HIGH_WATER) ((this.#paused = true), this.from.pause());
    else if (this.#paused && waiting < LOW_WATER) ((this.#paused = false), this.from.resume());
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#queue.length = 0;
    this.#head = 0;
  }
}

export class DelayProxy {
  #delay: LinkDelay | undefined;
  readonly #servers = new Map<string, { server: net.Server; route: Route; port: number }>();
  readonly #sockets = new Set<net.Socket>();
  readonly #directions = new Set<Direction>();
  #nextLocal = 0;
  #accepted = 0;
  #open = 0;
  #chunks = 0;
  #bytes = 0;
  #closed = false;

  constructor(readonly random: () => number = Math.random) {}

  /** The delay each chunk gets now, ms: uniform in [delay − jitter, delay + jitter], jitter at most delay. */
  sample(): number {
    const d = this.#delay;
    if (d === undefined || d.delayMs <= 0) return 0;
    const j = Math.max(0, Math.min(d.jitterMs, d.delayMs));
    return d.delayMs - j + 2 * j * this.random();
  }

  /** Delay every connection from now on (queued chunks keep their times); undefined: none. */
  setDelay(d: LinkDelay | undefined): void {
    if (
      d !== undefined &&
      !(Number.isFinite(d.delayMs) && d.delayMs >= 0 && Number.isFinite(d.jitterMs) && d.jitterMs >= 0)
    )
      throw new Error(`bad delay ${JSON.stringify(d)}`);
    this.#delay = d;
  }

  get delay(): LinkDelay | undefined {
    return this.#delay;
  }

  stats(): ProxyStats {
    return { connections: this.#open, accepted: this.#accepted, chunks: this.#chunks, bytes: this.#bytes };
  }

  /** Listen for each route (a route already listening is kept); the ports listened on, in order. */
  async listen(routes: readonly Route[]): Promise<number[]> {
    if (this.#closed) throw new Error('the proxy is closed');
    const out: number[] = [];
    for (const route of routes) {
      const name = `${route.listenHost}:${route.listenPort}`;
      const have = route.listenPort === 0 ? undefined : this.#servers.get(name);
      if (have !== undefined) {
        if (have.route.upstreamHost !== route.upstreamHost || have.route.upstreamPort !== route.upstreamPort)
          throw new Error(`${name} already forwards to ${have.route.upstreamHost}:${have.route.upstreamPort}`);
        out.push(have.port);
        continue;
      }
      const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: false }, (client) =>
        this.#accept(client, route),
      );
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(route.listenPort, route.listenHost, () => (server.off('error', reject), resolve()));
      });
      const port = (server.address() as net.AddressInfo).port;
      this.#servers.set(`${route.listenHost}:${port}`, { server, route, port });
      out.push(port);
    }
    return out;
  }

  #accept(client: net.Socket, route: Route): void {
    if (this.#closed) return void client.destroy();
    this.#accepted++;
    this.#open++;
    client.setNoDelay(true);
    this.#sockets.add(client);
    const counted = (n: number): void => void ((this.#chunks += 1), (this.#bytes += n));
    const up = new Direction(client, () => this.sample(), counted);
    let back: Direction | undefined;
    this.#directions.add(up);
    let closed = 0;
    const onClosed = (): void => {
      if (++closed === 2) {
        this.#open--;
        up.stop();
        back?.stop();
        this.#directions.delete(up);
        if (back) this.#directions.delete(back);
      }
    };
    const wire = (socket: net.Socket, dir: Direction): void => {
      socket.on('data', (d: Buffer) => dir.push(d));
      socket.on('end', () => dir.push('end'));
      // A reset (or an error) is passed on, after the bytes before it.
      socket.on('error', () => undefined);
      socket.on('close', (hadError) => {
        this.#sockets.delete(socket);
        if (hadError || !socket.readableEnded) dir.push('destroy');
        onClosed();
      });
    };
    wire(client, up);

    const connect = (attempt: number): void => {
      const o: net.NetConnectOpts = { host: route.upstreamHost, port: route.upstreamPort, allowHalfOpen: true };
      const { localPortMin: min, localPortMax: max } = route;
      if (min !== undefined && max !== undefined) o.localPort = min + (this.#nextLocal++ % (max - min + 1));
      const s = net.connect(o);
      let connected = false;
      s.once('connect', () => {
        connected = true;
        if (this.#closed || client.destroyed) return void (s.destroy(), onClosed());
        s.setNoDelay(true);
        back = new Direction(s, () => this.sample(), counted);
        this.#directions.add(back);
        back.to = client;
        up.to = s;
        s.on('drain', () => up.backpressure());
        client.on('drain', () => back?.backpressure());
        wire(s, back);
        up.pump();
      });
      s.once('error', (e: NodeJS.ErrnoException) => {
        if (connected) return;
        s.destroy();
        // The local port was taken: the next one.
        if ((e.code === 'EADDRINUSE' || e.code === 'EADDRNOTAVAIL') && attempt < 50 && !this.#closed)
          return connect(attempt + 1);
        client.destroy();
        onClosed(); // the upstream side never opened
      });
    };
    connect(0);
  }

  /** Stop listening and drop every connection. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const d of this.#directions) d.stop();
    for (const s of this.#sockets) s.destroy();
    await Promise.all(
      [...this.#servers.values()].map(({ server }) => new Promise<void>((r) => server.close(() => r()))),
    );
    this.#servers.clear();
  }
}

/** A command to the proxy process, and its answer. */
export type Command = { op: 'listen'; routes: Route[] } | { op: 'delay'; delay?: LinkDelay } | { op: 'stats' };
export type Answer = { ok: true; ports?: number[]; stats?: ProxyStats } | { ok: false; error: string };

const SCRIPT = fileURLToPath(import.meta.url);

/** The harness's side of a proxy process: started by `argvPrefix` (e.g. `ip netns exec <ns>`), stopped by its PID. */
export class ProxyProcess {
  readonly #pending: ((a: Answer) => void)[] = [];
  readonly #stderr: string[] = [];

  private constructor(
    readonly child: ChildProcess,
    readonly tag: string,
  ) {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      let a: Answer;
      try {
        a = JSON.parse(l) as Answer;
      } catch {
        return;
      }
      this.#pending.shift()?.(a);
    });
    child.stderr!.on(
      'data',
      (d: Buffer) => (this.#stderr.push(d.toString()), this.#stderr.length > 20 && this.#stderr.shift()),
    );
    child.once('exit', () => {
      for (const p of this.#pending.splice(0))
        p({ ok: false, error: `the proxy exited: ${this.#stderr.join('').trim().slice(-500)}` });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Start one and wait until it answers; `tag` (rkj<pid>-…) names it for sweep(). */
  static async start(argvPrefix: readonly string[], tag: string, timeoutMs = 30_000): Promise<ProxyProcess> {
    const argv = [...argvPrefix, process.execPath, '--import', 'tsx', SCRIPT, '--tag', tag];
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    const p = new ProxyProcess(child, tag);
    const timer = setTimeout(() => p.kill(), timeoutMs);
    try {
      await p.request({ op: 'stats' });
    } catch (e) {
      p.kill();
      throw e;
    } finally {
      clearTimeout(timer);
    }
    return p;
  }

  /** Send a command; resolves with its answer (rejects on an error or if the proxy exits). */
  async request(c: Command): Promise<Answer & { ok: true }> {
    if (!this.running) throw new Error('the proxy is not running');
    const answer = new Promise<Answer>((resolve) => this.#pending.push(resolve));
    this.child.stdin!.write(`${JSON.stringify(c)}\n`);
    const a = await answer;
    if (!a.ok) throw new Error(`delay proxy: ${a.error}`);
    return a;
  }

  /** Send a command without waiting (from synchronous code: heal). */
  send(c: Command): void {
    if (!this.running) return;
    this.#pending.push(() => undefined);
    this.child.stdin!.write(`${JSON.stringify(c)}\n`);
  }

  /** SIGKILL by PID. Synchronous: works from signal and exit handlers. */
  kill(): void {
    if (this.running) {
      try {
        process.kill(this.child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.kill();
    await exited;
  }
}

/** The proxy process: commands on stdin, answers on stdout. */
async function main(): Promise<void> {
  const proxy = new DelayProxy();
  const stop = (): void => void proxy.close().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  const lines = createInterface({ input: process.stdin });
  lines.on('close', stop);
  const answer = (a: Answer): void => void process.stdout.write(`${JSON.stringify(a)}\n`);
  // One command at a time, in order.
  let chain = Promise.resolve();
  lines.on('line', (l) => {
    chain = chain.then(async () => {
      try {
        const c = JSON.parse(l) as Command;
        if (c.op === 'listen') answer({ ok: true, ports: await proxy.listen(c.routes) });
        else if (c.op === 'delay') (proxy.setDelay(c.delay), answer({ ok: true }));
        else if (c.op === 'stats') answer({ ok: true, stats: proxy.stats() });
        else answer({ ok: false, error: `unknown command ${l.slice(0, 80)}` });
      } catch (e) {
        answer({ ok: false, error: (e as Error).message });
      }
    });
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
