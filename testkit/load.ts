/**
 * Closed-loop client load for the tests that change a cluster under traffic (a paused
 * node, a rolling restart, an upgrade): `inFlight` workers, each sending its next request
 * as soon as its last one is answered. Even requests get a key written before the load
 * began and check its value; odd ones put a new key and, once acknowledged, remember it,
 * so that the test can read every acknowledged write back afterwards. Bounded in count
 * (`maxRequests`) as well as by stop().
 *
 * Owns: the workers and the record of what they saw (ok, failed, acknowledged). Must not:
 * start, stop or fault the cluster, or judge the outcome (the test asserts on it).
 */
import type { Client } from '../src/client/index.js';

export interface LoadOptions {
  inFlight: number;
  /** The keys the gets read: `${warmPrefix}-${i}` for i < warmKeys, written by Load.warm(). */
  warmKeys: number;
  warmPrefix?: string;
  /** The prefix of the keys the puts write; `${prefix}-${n}` gets the value `v${n}`. */
  prefix?: string;
  maxRequests?: number;
}

export interface Acked {
  readonly key: string;
  readonly value: string;
  /** Date.now() when the put was acknowledged. */
  readonly at: number;
}

export class Load {
  /** Requests answered as they should be. */
  ok = 0;
  /** One line per failed request (its gRPC code and message) or wrong read. */
  readonly failed: string[] = [];
  readonly acked: Acked[] = [];
  #stop = false;
  readonly #done: Promise<void>;

  private constructor(
    private readonly client: Client,
    private readonly o: Required<LoadOptions>,
  ) {
    let i = 0;
    this.#done = Promise.all(
      Array.from({ length: o.inFlight }, async () => {
        while (!this.#stop && i < o.maxRequests) {
          const n = i++;
          try {
            if (n % 2 === 0) {
              const key = `${o.warmPrefix}-${n % o.warmKeys}`;
              const r = await client.get(key);
              const got = r.values.map(String).join('|');
              if (got !== warmValue(n % o.warmKeys)) this.failed.push(`${key} read ${got || 'nothing'}`);
              else this.ok++;
            } else {
              const key = `${o.prefix}-${n}`;
              await client.put(key, `v${n}`);
              this.acked.push({ key, value: `v${n}`, at: Date.now() });
              this.ok++;
            }
          } catch (e) {
            this.failed.push(`${(e as { code?: number }).code}: ${(e as Error).message}`);
          }
        }
      }),
    ).then(() => undefined);
  }

  /** Write the keys the gets will read, at W = `w` (all three copies by default). */
  static async warm(client: Client, warmKeys: number, { warmPrefix = 'warm', w = 3 } = {}): Promise<void> {
    for (let i = 0; i < warmKeys; i++) await client.put(`${warmPrefix}-${i}`, warmValue(i), { w });
  }

  /** Start the workers (the warm keys written already). */
  static start(client: Client, options: LoadOptions): Load {
    return new Load(client, { warmPrefix: 'warm', prefix: 'new', maxRequests: 200_000, ...options });
  }

  /** Stop sending and wait for the requests in flight. */
  async stop(): Promise<this> {
    this.#stop = true;
    await this.#done;
    return this;
  }

  /** Of the writes acknowledged (warm keys included), those that do not read back as written through `client`. */
  async lost(client: Client = this.client): Promise<string[]> {
    const lost: string[] = [];
    const check = async (key: string, value: string): Promise<void> => {
      const got = (await client.get(key)).values.map(String).join('|');
      if (got !== value) lost.push(`${key}: ${got || 'not found'}`);
    };
    for (let i = 0; i < this.o.warmKeys; i++) await check(`${this.o.warmPrefix}-${i}`, warmValue(i));
    for (const a of this.acked) await check(a.key, a.value);
    return lost;
  }

  /** A one-line account for a failed assertion's message. */
  summary(extra: Record<string, unknown> = {}): string {
    return JSON.stringify({
      ok: this.ok,
      acked: this.acked.length,
      failed: this.failed.length,
      firstFailed: this.failed.slice(0, 5),
      ...extra,
      stats: this.client.stats(),
    });
  }
}

function warmValue(i: number): string {
  return `w${i}`;
}
