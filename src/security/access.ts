/**
 * Every gRPC method a node serves and who may call it: its access class, declared once,
 * here. A method with no class is refused to every caller (authorize.ts), so a service
 * added without an entry is closed, never open; test/unit/security/access.test.ts checks
 * this table against every service the node loads (proto/, health, reflection) both
 * ways: no method without a class, no class for a method that does not exist.
 *
 * Classes (docs/security.md, "Who may call what"; authorize.ts applies them):
 *   internal  node-to-node services: role node.
 *   control   node-to-node calls that change the cluster (a staged commit's admits and
 *             decommissions): role node; with TLS off, the admin token when the node has one.
 *   admin     Admin calls that change the cluster: role admin or node, or the admin token.
 *   read      Admin calls that read the cluster's state: open to every caller the port
 *             lets in; with read auth on, any role or the admin token.
 *   kv        KeyValue: with client auth on, any role (or the admin token).
 *   open      health and reflection, so that probes and tools find the node.
 *
 * A service whose methods are all alike by nature (node-to-node, probes) has one class
 * for all of them: a new internal service is one line, `'ringkv.internal.v1.X': 'internal'`.
 * The public services, whose methods differ, name each method, so that a new one is
 * refused until it is classed here.
 *
 * Owns: the table. Must not: decide a call (authorize.ts) or know the proto files.
 */

export type CallClass = 'internal' | 'control' | 'admin' | 'read' | 'kv' | 'open';

/** One class for every method of a service, or one per method, by name. */
export type ServiceAccess = CallClass | Readonly<Record<string, CallClass>>;

/** By full service name ('package.Service'). */
export const ACCESS: Readonly<Record<string, ServiceAccess>> = {
  'ringkv.v1.KeyValue': {
    Put: 'kv',
    Get: 'kv',
    Delete: 'kv',
    Stream: 'kv',
    GetMany: 'kv',
    PutMany: 'kv',
    CounterUpdate: 'kv',
    CounterGet: 'kv',
    CounterReset: 'kv',
    SetUpdate: 'kv',
    SetRead: 'kv',
    SetContains: 'kv',
    MapUpdate: 'kv',
    MapRead: 'kv',
    PutIf: 'kv',
    DeleteIf: 'kv',
  },
  'ringkv.v1.Admin': {
    Status: 'read',
    Ring: 'read',
    Endpoints: 'read',
    Transfers: 'read',
    RepairStatus: 'read',
    GetBucket: 'read',
    ListBuckets: 'read',
    GetBucketDeletion: 'read',
    Decommission: 'admin',
    RemoveNode: 'admin',
    Cleanup: 'admin',
    Plan: 'admin',
    Commit: 'admin',
    Clear: 'admin',
    Admit: 'admin',
    Repair: 'admin',
    SetClockOffset: 'admin',
    CreateBucket: 'admin',
    SetBucket: 'admin',
    DeleteBucket: 'admin',
  },
  'ringkv.internal.v1.Gossip': 'internal',
  'ringkv.internal.v1.Replica': 'internal',
  'ringkv.internal.v1.Handoff': 'internal',
  'ringkv.internal.v1.Repair': 'internal',
  'ringkv.internal.v1.Control': 'control',
  'grpc.health.v1.Health': 'open',
  'grpc.reflection.v1.ServerReflection': 'open',
  'grpc.reflection.v1alpha.ServerReflection': 'open',
};

const own = <T>(o: Readonly<Record<string, T>>, k: string): T | undefined => (Object.hasOwn(o, k) ? o[k] : undefined);

/** The class of a method path such as '/ringkv.v1.KeyValue/Put'; undefined when none is declared (refused). */
export function classOf(path: string): CallClass | undefined {
  const m = /^\/([^/]+)\/([^/]+)$/.exec(path);
  if (m === null) return undefined;
  const access = own(ACCESS, m[1]!);
  return typeof access === 'object' ? own(access, m[2]!) : access;
}
