/**
 * Test helpers for reads and writes on real processes: the gRPC status a call fails with,
 * and one node's own copy of a key read through the internal Replica service (not a
 * quorum read), to check where data really is.
 *
 * Owns: the short-lived channel each call opens and closes. Must not: write to a node or
 * coordinate (it reads one replica, as the test asks).
 */
import { resolveReplies } from '../src/storage/index.js';
import * as grpc from '@grpc/grpc-js';
import { GrpcReplicas } from '../src/transport/replica-wire.js';

/** The values node `address` itself holds for `key` (its hint for `hintFor` when given). */
export async function localValues(address: string, key: string, hintFor = ''): Promise<string[]> {
  const c = new GrpcReplicas(() => address, grpc.credentials.createInsecure());
  try {
    const record = await c.read('node', Buffer.from(key), hintFor === '' ? undefined : hintFor, Date.now() + 2000);
    return record !== undefined ? resolveReplies(key, [record]).values.map(String).sort() : [];
  } finally {
    c.close();
  }
}

/** Of `keys`, those node `address` itself does not hold (one channel for all of them). */
export async function missingLocally(address: string, keys: readonly string[]): Promise<string[]> {
  const c = new GrpcReplicas(() => address, grpc.credentials.createInsecure());
  try {
    const missing: string[] = [];
    for (const key of keys) if ((await c.read('node', Buffer.from(key), undefined, Date.now() + 2000)) === undefined) missing.push(key);
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
