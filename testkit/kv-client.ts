/**
 * Test helpers for reads and writes on real processes: the gRPC status a call fails with,
 * and one node's own copy of a key read through the internal Replica service (not a
 * quorum read), to check where data really is.
 *
 * Owns: the short-lived channel each call opens and closes. Must not: write to a node or
 * coordinate (it reads one replica, as the test asks).
 */
import { bucketName, storedKey } from '../src/buckets/index.js';
import { resolveReplies } from '../src/storage/index.js';
import * as grpc from '@grpc/grpc-js';
import { GrpcReplicas } from '../src/transport/replica-wire.js';

/** The bytes a node stores `key` of `bucket` under ('' : the default bucket). */
function stored(key: string, bucket: string): Buffer {
  return storedKey(bucketName(bucket), Buffer.from(key));
}

/** The values node `address` itself holds for `key` of `bucket` (its hint for `hintFor` when given). */
export async function localValues(address: string, key: string, hintFor = '', bucket = ''): Promise<string[]> {
  const c = new GrpcReplicas(() => address, grpc.credentials.createInsecure());
  try {
    const k = stored(key, bucket);
    const record = await c.call(
      'node',
      { op: 'read', key: k, ...(hintFor === '' ? {} : { hintFor }) },
      Date.now() + 2000,
    );
    return record !== undefined ? resolveReplies(k, [record]).values.map(String).sort() : [];
  } finally {
    c.close();
  }
}

/** Of `keys` (of `bucket`), those node `address` itself does not hold (one channel for all of them). */
export async function missingLocally(address: string, keys: readonly string[], bucket = ''): Promise<string[]> {
  const c = new GrpcReplicas(() => address, grpc.credentials.createInsecure());
  try {
    const missing: string[] = [];
    for (const key of keys)
      if ((await c.call('node', { op: 'read', key: stored(key, bucket) }, Date.now() + 2000)) === undefined)
        missing.push(key);
    return missing;
  } finally {
    c.close();
  }
}

/** The gRPC status code a promise rejects with (undefined if it resolves). */
export async function statusOf(p: Promise<unknown>): Promise<{ code: number; details: string } | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    const x = e as { code: number; details: string };
    return { code: x.code, details: x.details };
  }
}
