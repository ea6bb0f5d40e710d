/**
 * Who may call what: a pure function of the method's access class (access.ts), the
 * caller's verified certificate roles and bearer token, and the node's rules; and the
 * grpc-js server interceptor that applies it to every call before its handler runs
 * (docs/security.md). A method without a class is refused to every caller.
 *
 * With TLS off there is no certificate: internal and kv calls are open (a trusted
 * network), admin and control calls need the token when one is configured. A credential never takes
 * a right away: a call that passes without one passes with any.
 *
 * Owns: the rules. Must not: log secrets (a token is never echoed, only its absence),
 * or class methods (access.ts does).
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { classOf } from './access.js';
import { rolesOf, type Role } from './roles.js';

export interface AuthRules {
  /** TLS on the port: certificates are verified and carry roles. */
  readonly tls: boolean;
  /** KeyValue calls need a verified certificate (or the admin token). */
  readonly clientAuth: 'none' | 'cert';
  /** The calls that read the cluster's state need a verified certificate or the admin token. */
  readonly readAuth: 'none' | 'credential';
  /** SHA-256 of the admin bearer token, when one is configured. */
  readonly adminTokenHash: Buffer | undefined;
}

export interface Caller {
  /** Roles of the verified client certificate; undefined: none presented (or not verified). */
  readonly roles: readonly Role[] | undefined;
  /** The bearer token sent in `authorization`, if any. */
  readonly token: string | undefined;
}

/** A caller with no certificate and no token. */
export const ANONYMOUS: Caller = { roles: undefined, token: undefined };

export interface Refusal {
  readonly code: grpc.status;
  readonly details: string;
}

export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

function tokenMatches(rules: AuthRules, token: string | undefined): boolean {
  return (
    token !== undefined && rules.adminTokenHash !== undefined && timingSafeEqual(hashToken(token), rules.adminTokenHash)
  );
}

/** Undefined when the call may go on; else the status to refuse it with. */
export function authorize(path: string, caller: Caller, rules: AuthRules): Refusal | undefined {
  const cls = classOf(path);
  const has = (...roles: Role[]): boolean => caller.roles !== undefined && roles.some((r) => caller.roles!.includes(r));
  switch (cls) {
    case undefined:
      return {
        code: grpc.status.PERMISSION_DENIED,
        details: `${path} has no access class on this node (src/security/access.ts), so every caller is refused it`,
      };
    case 'open':
      return undefined;
    case 'read':
      if (rules.readAuth === 'none' || caller.roles !== undefined || tokenMatches(rules, caller.token))
        return undefined;
      if (caller.token !== undefined)
        return {
          code: grpc.status.UNAUTHENTICATED,
          details: `${path} reads the cluster's state: the bearer token sent is not the admin token`,
        };
      return {
        code: grpc.status.UNAUTHENTICATED,
        details: `${path} reads the cluster's state, which this node shows only to callers with a credential (--read-auth credential): present ${credentials(rules)}`,
      };
    case 'control':
      // With TLS off no certificate names a node, and these calls change the cluster: the token guards them as it guards admin calls.
      if (rules.tls) return asNode(path, caller);
      if (rules.adminTokenHash === undefined || tokenMatches(rules, caller.token)) return undefined;
      return {
        code: grpc.status.UNAUTHENTICATED,
        details: `${path} is a node-to-node call that changes the cluster: with TLS off a node presents the admin token (the same --admin-token-file on every node)`,
      };
    case 'internal':
      return rules.tls ? asNode(path, caller) : undefined;
    case 'admin': {
      if (has('admin', 'node')) return undefined;
      const tokenOk = tokenMatches(rules, caller.token); // hashed once, and only where a token counts
      if (tokenOk) return undefined;
      if (!rules.tls && rules.adminTokenHash === undefined) return undefined; // no credentials configured: a trusted network (the node warned at start)
      if (caller.token !== undefined)
        return {
          code: grpc.status.UNAUTHENTICATED,
          details: `${path} changes the cluster: the bearer token sent is not the admin token`,
        };
      if (caller.roles !== undefined)
        return {
          code: grpc.status.PERMISSION_DENIED,
          details: `${path} changes the cluster: the certificate presented has role(s) ${caller.roles.join(', ') || 'none'}; it needs role admin (subject OU=admin)`,
        };
      return {
        code: grpc.status.UNAUTHENTICATED,
        details: `${path} changes the cluster: present ${rules.tls ? 'a certificate with role admin (subject OU=admin)' : ''}${rules.tls && rules.adminTokenHash ? ' or ' : ''}${rules.adminTokenHash ? 'the admin token (--admin-token-file)' : ''}`,
      };
    }
    case 'kv':
      if (rules.clientAuth === 'none' || !rules.tls || caller.roles !== undefined) return undefined;
      if (tokenMatches(rules, caller.token)) return undefined;
      if (caller.token !== undefined)
        return { code: grpc.status.UNAUTHENTICATED, details: `${path}: the bearer token sent is not accepted` };
      return {
        code: grpc.status.UNAUTHENTICATED,
        details: `${path}: this node requires a client certificate issued by the cluster's CA (--tls-cert and --tls-key on the client)`,
      };
  }
}

/** A node-to-node call with TLS on: role node. */
function asNode(path: string, caller: Caller): Refusal | undefined {
  if (caller.roles?.includes('node')) return undefined;
  return caller.roles === undefined
    ? {
        code: grpc.status.UNAUTHENTICATED,
        details: `${path} is a node-to-node call: present a certificate with role node (subject OU=node) issued by the cluster's CA`,
      }
    : {
        code: grpc.status.PERMISSION_DENIED,
        details: `${path} is a node-to-node call: the certificate presented has role(s) ${caller.roles.join(', ') || 'none'}, not node`,
      };
}

/** The credentials a read may present on a node with `rules`. */
function credentials(rules: AuthRules): string {
  const cert = rules.tls ? "a certificate issued by the cluster's CA" : '';
  const token = rules.adminTokenHash !== undefined ? 'the admin token (--admin-token-file)' : '';
  return [cert, token].filter((x) => x !== '').join(' or ');
}

/**
 * Why an HTTP request with this `authorization` header may not read the cluster's state
 * (/metrics, /api/*), or undefined when it may. Only the admin token counts there: the
 * port is plain HTTP, without certificates.
 */
export function authorizeHttp(header: string | undefined, rules: AuthRules): string | undefined {
  if (rules.readAuth === 'none') return undefined;
  const token = bearerToken(header);
  if (token === undefined)
    return 'this node shows its state only to callers with a credential (--read-auth credential): send the admin token as "Authorization: Bearer <token>"';
  return tokenMatches(rules, token) ? undefined : 'the bearer token sent is not the admin token';
}

/** The bearer token of `authorization: Bearer <token>` metadata. */
export function bearer(metadata: grpc.Metadata): string | undefined {
  return bearerToken(metadata.get('authorization')[0]);
}

function bearerToken(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(value.trim());
  return m ? m[1] : undefined;
}

/**
 * A server interceptor applying `authorize` (rules read per call, so a reload applies at
 * once). A refused call ends with its status before its handler sees it; `onRefuse` logs.
 * A call that would pass without any credential is not wrapped at all (with nothing
 * configured, every classed call): the check costs such a call one table lookup.
 */
export function authInterceptor(
  rules: () => AuthRules,
  onRefuse: (r: Refusal & { path: string; peer: string; roles: readonly Role[] | undefined }) => void,
): grpc.ServerInterceptor {
  return (method, call) => {
    const now = rules();
    // grpc-js chains interceptors as a reduce over the call interface (server-interceptors.js,
    // getServerInterceptingCall); its type asks for the class, but an interceptor may hand
    // the call it got to the next one unchanged.
    if (authorize(method.path, ANONYMOUS, now) === undefined) return call as grpc.ServerInterceptingCall;
    const listener = new grpc.ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        const auth = call.getAuthContext();
        const cert = auth?.sslPeerCertificate;
        const roles = cert === undefined ? undefined : rolesOf(cert.subject?.OU);
        const refusal = authorize(method.path, { roles, token: bearer(metadata) }, now);
        if (refusal === undefined) return next(metadata);
        onRefuse({ ...refusal, path: method.path, peer: call.getPeer(), roles });
        call.sendStatus({ code: refusal.code, details: refusal.details, metadata: new grpc.Metadata() });
      })
      .build();
    return new grpc.ServerInterceptingCall(
      call,
      new grpc.ResponderBuilder().withStart((next) => next(listener)).build(),
    );
  };
}
