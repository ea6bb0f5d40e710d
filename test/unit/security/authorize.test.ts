import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { classOf } from '../../../src/security/access.js';
import {
  authorize,
  authorizeHttp,
  bearer,
  hashToken,
  type AuthRules,
  type Caller,
} from '../../../src/security/authorize.js';

const TOKEN = 'a-long-enough-admin-token-0123456789';
const tlsOn: AuthRules = { tls: true, clientAuth: 'none', readAuth: 'none', adminTokenHash: undefined };
const tlsCert: AuthRules = { ...tlsOn, clientAuth: 'cert' };
const plain: AuthRules = { tls: false, clientAuth: 'none', readAuth: 'none', adminTokenHash: undefined };
const plainToken: AuthRules = { ...plain, adminTokenHash: hashToken(TOKEN) };

const anon: Caller = { roles: undefined, token: undefined };
const as = (...roles: Caller['roles'] & string[]): Caller => ({ roles, token: undefined });
const withToken = (token: string): Caller => ({ roles: undefined, token });

const INTERNAL = '/ringkv.internal.v1.Replica/Stream';
const ADMIN = '/ringkv.v1.Admin/Decommission';
const STATUS = '/ringkv.v1.Admin/Status';
const PUT = '/ringkv.v1.KeyValue/Put';
const HEALTH = '/grpc.health.v1.Health/Check';
const CONTROL = '/ringkv.internal.v1.Control/Admit';

describe('classOf', () => {
  it('sorts every service of the node', () => {
    expect(classOf(INTERNAL)).toBe('internal');
    expect(classOf('/ringkv.internal.v1.Gossip/Exchange')).toBe('internal');
    expect(classOf(ADMIN)).toBe('admin');
    for (const m of ['Status', 'Ring', 'Endpoints', 'Transfers', 'RepairStatus'])
      expect(classOf(`/ringkv.v1.Admin/${m}`)).toBe('read');
    for (const m of [
      'Decommission',
      'RemoveNode',
      'Cleanup',
      'Plan',
      'Commit',
      'Clear',
      'Admit',
      'Repair',
      'SetClockOffset',
    ])
      expect(classOf(`/ringkv.v1.Admin/${m}`)).toBe('admin');
    expect(classOf(PUT)).toBe('kv');
    expect(classOf('/ringkv.v1.KeyValue/Stream')).toBe('kv');
    expect(classOf(HEALTH)).toBe('open');
    expect(classOf('/grpc.reflection.v1.ServerReflection/ServerReflectionInfo')).toBe('open');
    expect(classOf('/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo')).toBe('open');
    for (const m of ['Admit', 'Decommission', 'Transfers'])
      expect(classOf(`/ringkv.internal.v1.Control/${m}`)).toBe('control');
    expect(classOf('/ringkv.internal.v1.Unknown/Call')).toBeUndefined();
  });
});

const code = (path: string, c: Caller, r: AuthRules) => authorize(path, c, r)?.code;

describe('authorize', () => {
  it('with TLS, node-to-node calls need role node: none is UNAUTHENTICATED, another role PERMISSION_DENIED', () => {
    expect(code(INTERNAL, as('node'), tlsOn)).toBeUndefined();
    expect(code(INTERNAL, anon, tlsOn)).toBe(grpc.status.UNAUTHENTICATED);
    expect(authorize(INTERNAL, anon, tlsOn)!.details).toMatch(/present a certificate with role node/);
    expect(code(INTERNAL, as('admin'), tlsOn)).toBe(grpc.status.PERMISSION_DENIED);
    expect(code(INTERNAL, as('client'), tlsOn)).toBe(grpc.status.PERMISSION_DENIED);
    expect(code(INTERNAL, as(), tlsOn)).toBe(grpc.status.PERMISSION_DENIED); // a CA certificate with no role
  });

  it('with TLS, calls that change the cluster need role admin or node (or the token); reads are open', () => {
    expect(code(ADMIN, as('admin'), tlsOn)).toBeUndefined();
    expect(code(ADMIN, as('node'), tlsOn)).toBeUndefined(); // a node drives a peer's movement
    expect(code(ADMIN, as('client'), tlsOn)).toBe(grpc.status.PERMISSION_DENIED);
    expect(authorize(ADMIN, as('client'), tlsOn)!.details).toMatch(/has role\(s\) client; it needs role admin/);
    expect(code(ADMIN, anon, tlsOn)).toBe(grpc.status.UNAUTHENTICATED);
    expect(code(STATUS, anon, tlsOn)).toBeUndefined();
    expect(code(HEALTH, anon, tlsCert)).toBeUndefined();
    expect(code(ADMIN, withToken(TOKEN), { ...tlsOn, adminTokenHash: hashToken(TOKEN) })).toBeUndefined();
  });

  it('key/value calls: open by default; with client auth cert, any certificate from the CA', () => {
    expect(code(PUT, anon, tlsOn)).toBeUndefined();
    expect(code(PUT, anon, tlsCert)).toBe(grpc.status.UNAUTHENTICATED);
    expect(authorize(PUT, anon, tlsCert)!.details).toMatch(/requires a client certificate/);
    for (const r of ['client', 'admin', 'node'] as const) expect(code(PUT, as(r), tlsCert)).toBeUndefined();
  });

  it('without TLS: no credentials configured lets everything through (the node warns); a token guards admin calls', () => {
    for (const p of [INTERNAL, ADMIN, PUT]) expect(code(p, anon, plain)).toBeUndefined();
    expect(code(ADMIN, anon, plainToken)).toBe(grpc.status.UNAUTHENTICATED);
    expect(authorize(ADMIN, anon, plainToken)!.details).toMatch(/present the admin token/);
    expect(code(ADMIN, withToken('wrong-token-wrong-token'), plainToken)).toBe(grpc.status.UNAUTHENTICATED);
    expect(authorize(ADMIN, withToken('wrong-token-wrong-token'), plainToken)!.details).not.toMatch(/wrong-token/); // never echoed
    expect(code(ADMIN, withToken(TOKEN), plainToken)).toBeUndefined();
    expect(code(STATUS, anon, plainToken)).toBeUndefined();
  });

  it("node-to-node control (a staged commit's admits): role node with TLS, the admin token without, never an operator's certificate", () => {
    expect(code(CONTROL, as('node'), tlsOn)).toBeUndefined();
    expect(code(CONTROL, as('admin'), tlsOn)).toBe(grpc.status.PERMISSION_DENIED);
    expect(code(CONTROL, withToken(TOKEN), { ...tlsOn, adminTokenHash: hashToken(TOKEN) })).toBe(
      grpc.status.UNAUTHENTICATED,
    );
    expect(code(CONTROL, anon, plain)).toBeUndefined();
    expect(code(CONTROL, anon, plainToken)).toBe(grpc.status.UNAUTHENTICATED);
    expect(authorize(CONTROL, anon, plainToken)!.details).toMatch(/with TLS off a node presents the admin token/);
    expect(code(CONTROL, withToken('wrong-token-wrong-token'), plainToken)).toBe(grpc.status.UNAUTHENTICATED);
    expect(code(CONTROL, withToken(TOKEN), plainToken)).toBeUndefined();
  });
});

describe('denied by default', () => {
  const UNKNOWN = ['/ringkv.internal.v1.Unknown/Call', '/ringkv.v1.Admin/Unknown', '/some.Other/Method', 'not a path'];
  const allRules = [
    plain,
    plainToken,
    tlsOn,
    tlsCert,
    { ...tlsCert, readAuth: 'credential', adminTokenHash: hashToken(TOKEN) } as AuthRules,
  ];
  const callers = [anon, as('node'), as('admin'), as('client'), as('node', 'admin', 'client'), withToken(TOKEN)];

  it('refuses a method without an access class to every caller under every rules, PERMISSION_DENIED, naming the table', () => {
    for (const p of UNKNOWN)
      for (const r of allRules)
        for (const c of callers)
          expect(authorize(p, c, r), `${p} ${JSON.stringify(c)}`).toEqual({
            code: grpc.status.PERMISSION_DENIED,
            details: expect.stringMatching(/has no access class on this node \(src\/security\/access\.ts\)/),
          });
  });

  it('a credential never takes a right away: what passes without one passes with any (so the interceptor skips such calls)', () => {
    const paths = [INTERNAL, ADMIN, STATUS, PUT, HEALTH, '/ringkv.v1.Admin/RepairStatus', '/ringkv.v1.KeyValue/Stream'];
    let checked = 0;
    for (const p of paths)
      for (const r of allRules) {
        if (authorize(p, anon, r) !== undefined) continue;
        for (const c of [...callers, withToken('wrong-token-wrong-token')])
          expect(authorize(p, c, r), `${p} ${JSON.stringify(c)}`).toBeUndefined();
        checked++;
      }
    expect(checked).toBeGreaterThan(10);
  });
});

describe('read auth', () => {
  const tlsReads: AuthRules = { ...tlsOn, readAuth: 'credential' };
  const tokenReads: AuthRules = { ...plainToken, readAuth: 'credential' };
  const bothReads: AuthRules = { ...tlsReads, adminTokenHash: hashToken(TOKEN) };
  const READS = ['Status', 'Ring', 'Endpoints', 'Transfers', 'RepairStatus'].map((m) => `/ringkv.v1.Admin/${m}`);

  it('off (none), anyone reads; on (credential), any certificate from the CA or the admin token, else UNAUTHENTICATED saying which', () => {
    for (const p of READS) {
      expect(code(p, anon, tlsOn)).toBeUndefined();
      expect(code(p, anon, plainToken)).toBeUndefined();
      for (const r of ['client', 'admin', 'node'] as const) expect(code(p, as(r), tlsReads)).toBeUndefined();
      expect(code(p, withToken(TOKEN), tokenReads)).toBeUndefined();
      expect(code(p, withToken(TOKEN), bothReads)).toBeUndefined();
      expect(code(p, anon, tlsReads)).toBe(grpc.status.UNAUTHENTICATED);
      expect(code(p, anon, tokenReads)).toBe(grpc.status.UNAUTHENTICATED);
    }
    expect(authorize(READS[0]!, anon, tlsReads)!.details).toMatch(
      /--read-auth credential\): present a certificate issued by the cluster's CA$/,
    );
    expect(authorize(READS[0]!, anon, tokenReads)!.details).toMatch(/present the admin token \(--admin-token-file\)$/);
    expect(authorize(READS[0]!, anon, bothReads)!.details).toMatch(
      /present a certificate issued by the cluster's CA or the admin token/,
    );
    const wrong = authorize(READS[0]!, withToken('wrong-token-wrong-token'), tokenReads)!;
    expect(wrong).toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
      details: expect.stringMatching(/not the admin token/),
    });
    expect(wrong.details).not.toMatch(/wrong-token/);
    // Health and reflection stay open: probes and tools find the node.
    expect(code(HEALTH, anon, bothReads)).toBeUndefined();
  });

  it('on the HTTP port, only the admin token counts', () => {
    expect(authorizeHttp(undefined, { ...plainToken, readAuth: 'none' })).toBeUndefined();
    expect(authorizeHttp(`Bearer ${TOKEN}`, tokenReads)).toBeUndefined();
    expect(authorizeHttp(undefined, tokenReads)).toMatch(/send the admin token as "Authorization: Bearer <token>"/);
    expect(authorizeHttp(`Basic ${TOKEN}`, tokenReads)).toMatch(/send the admin token/);
    expect(authorizeHttp('Bearer wrong-token-wrong-token', tokenReads)).toBe(
      'the bearer token sent is not the admin token',
    );
  });
});

describe('bearer', () => {
  it('reads "authorization: Bearer <token>" and nothing else', () => {
    const md = (v?: string) => {
      const m = new grpc.Metadata();
      if (v !== undefined) m.set('authorization', v);
      return m;
    };
    expect(bearer(md(`Bearer ${TOKEN}`))).toBe(TOKEN);
    expect(bearer(md(`bearer   ${TOKEN} `))).toBe(TOKEN);
    expect(bearer(md(`Basic ${TOKEN}`))).toBeUndefined();
    expect(bearer(md('Bearer two words'))).toBeUndefined();
    expect(bearer(md())).toBeUndefined();
  });
});
