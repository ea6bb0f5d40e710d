import type * as grpc from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { describe, expect, it } from 'vitest';
import { ACCESS, classOf } from '../../../src/security/access.js';
import { protos } from '../../../src/transport/protos.js';

/** Every method path of every service a node serves, by service: proto/ (with health) as protos.ts loads it, and what health and reflection add to a server. */
function servedMethods(): Map<string, string[]> {
  const byService = new Map<string, string[]>();
  const add = (def: Record<string, unknown>): void => {
    for (const m of Object.values(def)) {
      const path = (m as { path?: unknown }).path;
      if (typeof path !== 'string') continue; // a message or enum type, not a service method
      const service = path.slice(1, path.lastIndexOf('/'));
      byService.set(service, [...new Set([...(byService.get(service) ?? []), path])]);
    }
  };
  for (const def of Object.values(protos().definition)) add(def as Record<string, unknown>);
  const server = { addService: (def: grpc.ServiceDefinition) => add(def) } as unknown as grpc.Server;
  new ReflectionService(protos().definition).addToServer(server);
  new HealthImplementation({}).addToServer(server);
  return byService;
}

describe('the access table, checked against every service a node serves', () => {
  const served = servedMethods();

  it('sees the services (a loader that found nothing would pass every check below)', () => {
    expect([...served.keys()].sort()).toEqual(
      expect.arrayContaining([
        'ringkv.v1.KeyValue',
        'ringkv.v1.Admin',
        'ringkv.internal.v1.Gossip',
        'ringkv.internal.v1.Replica',
        'grpc.health.v1.Health',
        'grpc.reflection.v1.ServerReflection',
        'grpc.reflection.v1alpha.ServerReflection',
      ]),
    );
    expect(served.get('ringkv.v1.Admin')!.length).toBeGreaterThanOrEqual(14);
  });

  it('classes every method (a method without a class is refused to every caller)', () => {
    const unclassed = [...served.values()].flat().filter((p) => classOf(p) === undefined);
    expect(unclassed, 'methods with no access class: add them to src/security/access.ts').toEqual([]);
  });

  it('classes nothing that does not exist: every service and every named method is served', () => {
    const stale: string[] = [];
    for (const [service, access] of Object.entries(ACCESS)) {
      const paths = served.get(service);
      if (paths === undefined) stale.push(service);
      else if (typeof access === 'object')
        for (const m of Object.keys(access)) if (!paths.includes(`/${service}/${m}`)) stale.push(`${service}/${m}`);
    }
    expect(stale, 'entries of src/security/access.ts with nothing served behind them').toEqual([]);
  });

  it('names each method of the public services (ringkv.v1.*): a new one stays refused until it is classed', () => {
    for (const [service, access] of Object.entries(ACCESS))
      if (service.startsWith('ringkv.v1.')) expect(typeof access, service).toBe('object');
  });

  it("keeps docs/security.md's table: internal, control, admin, read, kv and open calls", () => {
    const classes = Object.fromEntries([...served.values()].flat().map((p) => [p, classOf(p)]));
    const READ = [
      'Status',
      'Ring',
      'Endpoints',
      'Transfers',
      'RepairStatus',
      'GetBucket',
      'ListBuckets',
      'GetBucketDeletion',
    ];
    for (const [p, c] of Object.entries(classes)) {
      const [service, method] = p.slice(1).split('/') as [string, string];
      const want =
        service === 'ringkv.internal.v1.Control'
          ? 'control'
          : service.startsWith('ringkv.internal.')
            ? 'internal'
            : service === 'ringkv.v1.Admin'
              ? READ.includes(method)
                ? 'read'
                : 'admin'
              : service === 'ringkv.v1.KeyValue'
                ? 'kv'
                : 'open';
      expect(c, p).toBe(want);
    }
    expect(Object.values(classes).filter((c) => c === 'open').length).toBe(
      Object.keys(classes).filter((p) => /^\/grpc\.(health|reflection)\./.test(p)).length,
    );
  });

  it('refuses what it does not know: another service, another method, a path that is not one', () => {
    for (const p of [
      '/ringkv.internal.v1.Nothing/Admit',
      '/ringkv.v1.Admin/DropEverything',
      '/ringkv.v1.KeyValue/Scan',
      '/x',
      '',
      '/ringkv.v1.Admin/Status/x',
      '/toString/x',
      '/ringkv.v1.Admin/constructor',
      '/ringkv.v1.Admin/hasOwnProperty',
    ]) {
      expect(classOf(p), p).toBeUndefined();
    }
  });
});
