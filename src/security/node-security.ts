/**
 * A node's transport security, from its configuration: the TLS files (server and peer
 * credentials, reloaded on SIGHUP and when the files change), the admin token, and the
 * interceptor that checks every call against them (authorize.ts).
 *
 * Owns: loading and reloading the credentials, and logging refusals (never a secret:
 * a refused token is said to be wrong, not shown). Must not: decide the rules (authorize.ts).
 */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { authInterceptor, authorizeHttp, hashToken, type AuthRules } from './authorize.js';
import { readAdminToken } from './admin-token.js';
import { TlsError, TlsFiles, type TlsReload } from './tls.js';

/** The files security reads, as paths (each undefined when not configured). */
type SecurityFiles = { readonly [f in 'tlsCert' | 'tlsKey' | 'tlsCa' | 'adminTokenFile']: string | undefined };

/** The settings security reads: node/config.ts checks them, and its NodeConfig has them all. */
export type SecuritySettings = SecurityFiles &
  Readonly<{ listen: string; clientAuth: 'none' | 'cert'; readAuth: 'none' | 'credential' }>;

/** How often the TLS files' modification times are checked, ms. */
const WATCH_MS = 2000;
/** A certificate expiring sooner than this is warned about, ms (30 days). */
const EXPIRY_WARN_MS = 30 * 86_400_000;
/** A refusal is logged at most this often per caller host, method and status, ms. */
const REFUSAL_LOG_EVERY_MS = 60_000;

export class SecurityError extends Error {
  override readonly name = 'SecurityError';
}

function readToken(path: string): string {
  try {
    return readAdminToken(path);
  } catch (e) {
    throw new SecurityError((e as Error).message);
  }
}

/** At most one log line per key per `everyMs`; remembers at most `maxKeys` keys (then starts afresh). */
export class LogThrottle {
  readonly #last = new Map<string, { at: number; since: number }>();

  constructor(
    private readonly everyMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  /** Undefined: do not log. A number: log, with how many were held back since the last line. */
  note(key: string, now: number): number | undefined {
    const last = this.#last.get(key);
    if (last !== undefined && now - last.at < this.everyMs) {
      last.since++;
      return undefined;
    }
    if (last === undefined && this.#last.size >= this.maxKeys) this.#last.clear();
    this.#last.set(key, { at: now, since: 0 });
    return last?.since ?? 0;
  }
}

export class NodeSecurity {
  readonly tls: TlsFiles | undefined;
  /** What this node dials its peers with: its certificate when TLS is on. */
  readonly peerCredentials: grpc.ChannelCredentials;
  #rules: AuthRules;
  /** The admin token, which this node presents to its peers' calls that change the cluster (a commit's admits and decommissions). */
  #adminToken: string | undefined;

  constructor(
    private readonly config: SecuritySettings,
    private readonly log: Logger,
  ) {
    const { tlsCert, tlsKey, tlsCa } = config;
    this.#adminToken = config.adminTokenFile === undefined ? undefined : readToken(config.adminTokenFile); // before the files are watched
    try {
      this.tls =
        tlsCert !== undefined && tlsKey !== undefined && tlsCa !== undefined
          ? new TlsFiles(
              { cert: tlsCert, key: tlsKey, ca: tlsCa },
              { watchMs: WATCH_MS, onReload: (r) => this.#reloaded(r) },
            )
          : undefined;
    } catch (e) {
      if (e instanceof TlsError) throw new SecurityError(`TLS: ${e.message}`);
      throw e;
    }
    this.peerCredentials = this.tls?.channelCredentials() ?? grpc.credentials.createInsecure();
    this.#rules = {
      tls: this.tls !== undefined,
      clientAuth: config.clientAuth,
      readAuth: config.readAuth,
      adminTokenHash: this.#adminToken === undefined ? undefined : hashToken(this.#adminToken),
    };
    const m = this.tls?.material;
    if (m !== undefined) {
      if (!m.roles.includes('node'))
        log.warn(
          { subject: m.subject },
          "this node's certificate has no role node (subject OU=node): its peers will refuse its calls",
        );
      log.info(
        {
          subject: m.subject,
          fingerprint: m.fingerprint,
          validTo: m.validTo.toISOString(),
          clientAuth: config.clientAuth,
        },
        'TLS on',
      );
      this.#warnIfExpiring(m.validTo);
    } else {
      log.warn(
        { listen: config.listen, adminToken: this.#rules.adminTokenHash !== undefined },
        'TLS off: traffic is plaintext and any process that reaches this port can act as a peer' +
          (this.#rules.adminTokenHash === undefined ? ' or an operator' : '') +
          '; see docs/security.md to turn it on',
      );
    }
  }

  get rules(): AuthRules {
    return this.#rules;
  }

  /** Why an HTTP request with this Authorization header may not read the node's state, or undefined when it may. */
  httpRefusal(authorization: string | undefined): string | undefined {
    return authorizeHttp(authorization, this.#rules);
  }

  /**
   * The token this node presents with its calls to a peer's Control service (besides its
   * certificate, `peerCredentials`): with TLS off it is the only credential, and the same
   * file is on every node. Read per call, so a reload applies.
   */
  peerToken(): string | undefined {
    return this.#adminToken;
  }

  serverCredentials(): grpc.ServerCredentials {
    return this.tls?.serverCredentials() ?? grpc.ServerCredentials.createInsecure();
  }

  /**
   * The interceptors the server runs: the one that checks every call, also when nothing is
   * configured (TLS off, no token: every classed call passes unwrapped, and the node said
   * so at start), because a method without an access class is refused whatever the rules.
   */
  interceptors(): grpc.ServerInterceptor[] {
    return [
      authInterceptor(
        () => this.#rules,
        (r) => this.refused(r),
      ),
    ];
  }

  /**
   * Log a refusal, at most once a minute per caller host, method and status (a rogue peer gossips
   * every second; a flood of calls must not become a flood of log lines), with how many
   * were refused since the last line.
   */
  refused(r: {
    path: string;
    peer: string;
    code: grpc.status;
    details: string;
    roles?: readonly string[] | undefined;
  }): void {
    const host = r.peer.slice(0, r.peer.lastIndexOf(':'));
    const since = this.#refusals.note(`${host} ${r.path} ${r.code}`, Date.now());
    if (since !== undefined)
      this.log.warn(
        { method: r.path, peer: r.peer, roles: r.roles, code: grpc.status[r.code], refusedSinceLastLine: since },
        `call refused: ${r.details}`,
      );
  }

  readonly #refusals = new LogThrottle(REFUSAL_LOG_EVERY_MS);

  /** Read the TLS files and the admin token again (SIGHUP). What fails to load is kept as it was, and logged. */
  reload(): void {
    this.tls?.reload();
    if (this.config.adminTokenFile !== undefined) {
      try {
        const token = readToken(this.config.adminTokenFile);
        this.#adminToken = token;
        this.#rules = { ...this.#rules, adminTokenHash: hashToken(token) };
        this.log.info('admin token reloaded');
      } catch (e) {
        this.log.error({ err: (e as Error).message }, 'admin token not reloaded: keeping the one in use');
      }
    }
  }

  /** A certificate that expires within EXPIRY_WARN_MS: say so at start and at each reload. */
  #warnIfExpiring(validTo: Date): void {
    const left = validTo.getTime() - Date.now();
    if (left < EXPIRY_WARN_MS)
      this.log.warn(
        { validTo: validTo.toISOString(), daysLeft: Math.floor(left / 86_400_000) },
        'TLS certificate expires soon: issue a new one and replace the files (the node reloads them)',
      );
  }

  #reloaded(r: TlsReload): void {
    if (r.ok) {
      this.log.info(
        { subject: r.material.subject, fingerprint: r.material.fingerprint, validTo: r.material.validTo.toISOString() },
        'TLS files reloaded',
      );
      this.#warnIfExpiring(r.material.validTo);
    } else this.log.error({ err: r.error.message }, 'TLS files not reloaded: keeping the certificates in use');
  }

  close(): void {
    this.tls?.close();
  }
}
