/**
 * N in-process replicas (MemoryEngine stores) on the in-memory replica network, with a
 * coordinator per node: the coordinator's logic without processes or sockets.
 *
 * The ring holds the first `members` nodes (all by default); the others are spares a
 * test may join. `ring` and `target` are plain fields: a test drives a topology change by
 * setting `target` (pending ranges), then `ring = target` and `target = undefined`.
 */
import { type Ring, claimRing } from '../../../src/ring/index.js';
import { MemoryEngine, Store, type StoreOptions } from '../../../src/storage/index.js';
import { Coordinator, type CoordinatorOptions } from '../../../src/replication/coordinator.js';
import { LocalReplica, withLocal } from '../../../src/replication/local-replica.js';
import { MemoryReplicaNetwork } from '../../../src/transport/memory-replicas.js';
import { dataKey, tokenHalves } from '../../../src/storage/keys.js';

const quiet = { debug() {}, info() {}, warn() {} };

export class FakeCluster {
  readonly net = new MemoryReplicaNetwork();
  readonly stores = new Map<string, Store>();
  /** Each store's engine, for tests that damage what it holds. */
  readonly engines = new Map<string, MemoryEngine>();
  readonly coordinators = new Map<string, Coordinator>();
  /** Nodes every coordinator's detector thinks down. */
  readonly down = new Set<string>();
  /** How long each coordinator has thought a node down, ms (absent: 0). */
  readonly downFor = new Map<string, number>();
  notServing: string | undefined;
  /** The coordinators' wall clock, ms (absent: Date.now). */
  now: (() => number) | undefined;
  /** Where keys live now; a test may replace it (a topology change completing). */
  ring: Ring;
  /** The ring after a topology change in progress (pending ranges), if any. */
  target: Ring | undefined;

  private constructor(ids: readonly string[]) {
    this.ring = claimRing(
      ids.map((id) => ({ id, zone: FakeCluster.zoneOf(id) })),
      3,
      { tokensPerNode: 16, seed: 'fake' },
    );
  }

  /** Node `n<i>`'s zone: z0, z1, z2 in turn. */
  static zoneOf(id: string): string {
    return `z${(Number(id.slice(1)) - 1) % 3}`;
  }

  /**
   * `count` nodes n1..n<count>, of which the first `members` (default: all) own tokens;
   * the rest are spares, with a store and a coordinator, outside the ring.
   */
  static async create(
    count: number,
    options: Partial<CoordinatorOptions> = {},
    members = count,
    storeOptions: Omit<StoreOptions, 'engine' | 'path'> | ((id: string) => Omit<StoreOptions, 'engine' | 'path'>) = {},
  ): Promise<FakeCluster> {
    const ids = Array.from({ length: count }, (_, i) => `n${i + 1}`);
    const c = new FakeCluster(ids.slice(0, Math.max(1, Math.min(members, count))));
    for (const id of ids) {
      const engine = new MemoryEngine();
      c.engines.set(id, engine);
      const store = await Store.open({
        ...(typeof storeOptions === 'function' ? storeOptions(id) : storeOptions),
        engine,
      });
      c.stores.set(id, store);
      const local = new LocalReplica(store);
      c.net.add(id, local);
      c.coordinators.set(
        id,
        new Coordinator(
          {
            self: id,
            replicas: 3,
            timeoutMs: 2000,
            maxInFlight: 1000,
            maxKeyBytes: 4096,
            maxValueBytes: 1 << 20,
            ...options,
          },
          {
            placement: () => ({ ring: c.ring, target: c.target ?? c.ring }),
            isUp: (x) => !c.down.has(x),
            downForMs: (x) => c.downFor.get(x) ?? 0,
            notServing: () => c.notServing,
            now: () => c.now?.() ?? Date.now(),
            replicas: withLocal(id, local, c.net.from(id)),
            log: quiet,
          },
        ),
      );
    }
    return c;
  }

  coordinator(id: string): Coordinator {
    return this.coordinators.get(id)!;
  }

  /** Flip a byte of `key`'s record in `id`'s engine: its checksum then fails (KV_CORRUPT_RECORD). */
  async damage(id: string, key: Buffer): Promise<void> {
    const [hi, lo] = tokenHalves(key);
    const dk = dataKey(hi, lo, key);
    const engine = this.engines.get(id)!;
    const bytes = (await engine.get(dk))!;
    bytes[bytes.length - 6]! ^= 0xff;
    await engine.write([{ type: 'put', key: dk, value: bytes }], false);
  }

  store(id: string): Store {
    return this.stores.get(id)!;
  }

  /** The key's replicas, primary first. */
  owners(key: string): string[] {
    return this.ring.preferenceList(key, 3);
  }

  /** A node that is not a replica of `key`. */
  outsider(key: string): string {
    return [...this.stores.keys()].find((id) => !this.owners(key).includes(id))!;
  }

  async values(id: string, key: string): Promise<string[]> {
    return (await this.store(id).get(key)).values.map(String).sort();
  }

  async close(): Promise<void> {
    await Promise.all([...this.stores.values()].map((s) => s.close()));
  }
}

/** Wait until `check` holds (background writes and repairs), at most `ms`. */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The code of the error `p` rejects with (a test fails when it resolves). */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (e === undefined) throw new Error('expected a rejection');
  return (e as { code: string }).code;
}
