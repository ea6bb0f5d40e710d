/**
 * Helpers for topology-change tests on real processes: load keys, keep writing during a
 * change (bounded in count and time), and check where every acknowledged key really is
 * by reading each node's LevelDB directly once the nodes are stopped (not through quorum
 * reads, which would repair what they read).
 */
import { join } from 'node:path';
import { Client } from '../../src/client/index.js';
import { bucketName, storedKey } from '../../src/buckets/index.js';
import { tokenOf } from '../../src/ring/index.js';
import { Store } from '../../src/storage/index.js';
import type { RingReply } from '../../src/client/admin.js';
import type { NodeProcess, TestCluster } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';

/** Put `count` fresh keys `${prefix}${i}` at W=2 from `concurrency` workers; the keys acknowledged. */
export async function loadKeys(client: Client, prefix: string, count: number, concurrency = 64): Promise<string[]> {
  const acked: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const k = `${prefix}${next++}`;
        try {
          await client.put(k, `v-${k}`, { w: 2 });
          acked.push(k);
        } catch {
          // not acknowledged: may or may not be anywhere
        }
      }
    }),
  );
  return acked;
}

/**
 * Keep writing fresh keys until `stop()` says so (at most `maxOps` and `maxMs`), and at most
 * `perSecond` a second when given: where streams are throttled, what the join must move
 * then does not grow with how fast this machine writes.
 */
export function writeDuring(
  client: Client,
  prefix: string,
  o: { maxOps: number; maxMs: number; concurrency?: number; perSecond?: number },
): { stop(): Promise<{ acked: string[]; failed: number }> } {
  const acked: string[] = [];
  let failed = 0;
  let stopping = false;
  let next = 0;
  const start = Date.now();
  const end = start + o.maxMs;
  const workers = Array.from({ length: o.concurrency ?? 8 }, async () => {
    while (!stopping && next < o.maxOps && Date.now() < end) {
      if (o.perSecond !== undefined) {
        const due = start + (next * 1000) / o.perSecond;
        if (due > Date.now()) {
          await new Promise((r) => setTimeout(r, due - Date.now()));
          continue;
        }
      }
      const k = `${prefix}${next++}`;
      try {
        await client.put(k, `v-${k}`, { w: 2 });
        acked.push(k);
      } catch {
        failed++;
      }
    }
  });
  return {
    async stop() {
      stopping = true;
      await Promise.all(workers);
      return { acked, failed };
    },
  };
}

/** Every user key in a stopped node's store. */
export async function storedKeys(node: NodeProcess): Promise<Set<string>> {
  const store = await Store.open({ path: join(node.dataDir, 'data') });
  const keys = new Set<string>();
  try {
    for await (const batch of store.ranges.scan({ start: 0n, end: 0n }))
      for (const e of batch.entries) keys.add(e.key.toString());
  } finally {
    await store.close();
  }
  return keys;
}

/** A key's replicas in a ring as Admin Ring reports it. */
export function replicasOf(ring: RingReply, key: string): readonly string[] {
  return replicasOfToken(ring, tokenOf(key), key);
}

/** A key's replicas in `bucket` ('' : the default one), in a ring reported for that bucket's n (Admin Ring with it). */
export function bucketReplicasOf(ring: RingReply, key: string, bucket: string): readonly string[] {
  return replicasOfToken(ring, tokenOf(storedKey(bucketName(bucket), Buffer.from(key))), key);
}

function replicasOfToken(ring: RingReply, t: bigint, key: string): readonly string[] {
  const ranges = ring.ranges.map((r) => ({
    start: BigInt(`0x${r.start}`),
    end: BigInt(`0x${r.end}`),
    replicas: r.replicas,
  }));
  for (const r of ranges) {
    const inside = r.start < r.end ? t > r.start && t <= r.end : t > r.start || t <= r.end;
    if (inside) return r.replicas;
  }
  throw new Error(`no range holds key ${key}`);
}

/**
 * Where acknowledged keys are missing: for each key, the replicas (per `ring`) whose store
 * lacks it. Empty when every key is on all of its replicas.
 */
export function missingCopies(
  ring: RingReply,
  keys: Iterable<string>,
  stored: ReadonlyMap<string, ReadonlySet<string>>,
): string[] {
  const out: string[] = [];
  for (const k of keys) for (const r of replicasOf(ring, k)) if (!stored.get(r)?.has(k)) out.push(`${k}@${r}`);
  return out;
}

/** Copies beyond the replicas: keys a node stores although `ring` does not make it one of their replicas. */
export function extraCopies(ring: RingReply, stored: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const out: string[] = [];
  for (const [id, keys] of stored) for (const k of keys) if (!replicasOf(ring, k).includes(id)) out.push(`${k}@${id}`);
  return out;
}

/** Stop nodes with SIGTERM and wait for them to exit. */
export async function stopAll(nodes: readonly NodeProcess[]): Promise<void> {
  for (const n of nodes) n.signal('SIGTERM');
  await Promise.all(nodes.map((n) => n.exit));
}

/**
 * Where keys of a bucket are not on exactly their replicas: `held` maps each node to the
 * keys it holds, `ring` is the ring reported for the bucket's n. Each entry is
 * `key@node missing` or `key@node extra`; empty when every key is on exactly its replicas.
 */
export function placementErrors(
  ring: RingReply,
  bucket: string,
  keys: Iterable<string>,
  held: ReadonlyMap<string, ReadonlySet<string>>,
): string[] {
  const out: string[] = [];
  for (const k of keys) {
    const replicas = bucketReplicasOf(ring, k, bucket);
    for (const [node, has] of held) {
      const should = replicas.includes(node);
      if (should && !has.has(k)) out.push(`${k}@${node} missing`);
      if (!should && has.has(k)) out.push(`${k}@${node} extra`);
    }
  }
  return out;
}

/** Wait until every running node sees every node normal, and up or down as `up` says. */
export async function upEverywhere(cluster: TestCluster, up: (id: string) => boolean): Promise<void> {
  await waitFor(
    'every node normal, and up or down as expected',
    60_000,
    async () => {
      const views = await Promise.all(cluster.nodes.filter((n) => n.running).map((n) => n.status()));
      return views.every(
        (v) =>
          v !== undefined &&
          cluster.nodes.every((n) => {
            const m = v.members.find((x) => x.id === n.id);
            return m?.status === 'normal' && m.up === up(n.id);
          }),
      );
    },
    200,
  );
}

/** Every key of a stopped node's store with its versions' hash. */
export async function contents(node: NodeProcess): Promise<Map<string, string>> {
  const store = await Store.open({ path: join(node.dataDir, 'data') });
  const out = new Map<string, string>();
  try {
    for await (const batch of store.ranges.scan({ start: 0n, end: 0n }))
      for (const e of batch.entries) out.set(e.key.toString(), store.ranges.entryHash(e.key, e.record));
  } finally {
    await store.close();
  }
  return out;
}
