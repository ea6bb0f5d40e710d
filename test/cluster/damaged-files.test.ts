/**
 * Damaged table files on a real node: three nodes take 3,000 puts of 4 KiB (so that they
 * reach LevelDB's table files), n3 is stopped, and a byte is flipped in the values of two
 * keys inside its table files. Started again with a short verification interval, n3
 * serves, no read returns a wrong value, and its verification pass finds both records
 * (which no read reached) and restores them from n1 and n2: with n3 stopped again, its
 * store holds both, whole, and no record of it is corrupt.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { Store } from '../../src/storage/index.js';
import { TestCluster } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';
import { stopAll } from './topology-check.js';

let cluster: TestCluster | undefined;
afterAll(() => cluster?.destroy());

/** Flip one byte of `marker` wherever it sits in a table file of `dir`; true if it was found. */
function flipIn(dir: string, marker: Buffer): boolean {
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.ldb'))) {
    const path = join(dir, f);
    const bytes = readFileSync(path);
    const at = bytes.indexOf(marker);
    if (at < 0) continue;
    bytes[at + 8]! ^= 0xff;
    writeFileSync(path, bytes);
    return true;
  }
  return false;
}

describe('damaged table files', () => {
  it("a node's verification pass finds records damaged on disk that no read reaches, and restores them from the other replicas", async () => {
    cluster = await TestCluster.create(3, 3, ['--request-timeout-ms', '3000'], (id) =>
      id === 'n3' ? ['--verify-interval-ms', '3000'] : [],
    );
    for (const n of cluster.nodes) n.start();
    await cluster.formed();
    const client = new Client({ nodes: cluster.nodes.map((n) => n.address), deadlineMs: 5000 });
    const values = new Map<string, Buffer>();
    try {
      for (let i = 0; i < 3000; i++) {
        const v = randomBytes(4096);
        values.set(`k${i}`, v);
        await client.put(`k${i}`, v, { w: 3 });
      }
    } finally {
      client.close();
    }
    const n3 = cluster.node('n3');
    n3.signal('SIGTERM');
    await n3.exit;
    // Two keys whose values sit in n3's table files (not only in its log).
    const data = join(n3.dataDir, 'data');
    const damaged: string[] = [];
    for (const [k, v] of values) {
      if (damaged.length === 2) break;
      if (flipIn(data, v.subarray(100, 132))) damaged.push(k);
    }
    expect(damaged).toHaveLength(2);
    n3.start();
    await waitFor(
      'n3 has restored both records',
      60_000,
      () => n3.lines.filter((l) => l.msg === 'a record corrupt on disk was restored from its replicas').length >= 2,
      250,
    );
    // No read returns a wrong value, through n3 at R=1 either.
    const reader = new Client({ nodes: [n3.address], tokenAware: false, hedge: false, deadlineMs: 5000 });
    try {
      for (const k of damaged)
        expect(Buffer.from((await reader.get(k, { r: 1 })).values[0]!).equals(values.get(k)!), k).toBe(true);
    } finally {
      reader.close();
    }
    await stopAll(cluster.nodes);
    const store = await Store.open({ path: data });
    try {
      for (const k of damaged)
        expect(Buffer.from((await store.get(Buffer.from(k))).values[0]!).equals(values.get(k)!), k).toBe(true);
      let corrupt = 0;
      for await (const b of store.ranges.scan({ start: 0n, end: 0n })) corrupt += b.corrupt.length;
      expect(corrupt).toBe(0);
    } finally {
      await store.close();
    }
  }, 300_000);
});
