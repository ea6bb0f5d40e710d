/**
 * TLS material from files: a certificate (chain), its private key and the CA bundle that
 * issued every certificate of the cluster. Checked when loaded (the key matches the
 * certificate, the CA issued it, it is valid now) and reloaded without a restart, on
 * SIGHUP or when the files change: a reload that fails keeps the material in use and says
 * why, so a half-copied file never takes a node off the network.
 *
 * `TlsFiles` is a grpc-js certificate provider: the server's and the channels' credentials
 * built on it pick up every reload for new connections (connections already open keep
 * the certificates they were made with, as in every TLS server).
 *
 * A certificate's roles are read from its subject OU (roles.ts).
 *
 * Owns: reading, checking and watching the files. Must not: decide who may call what
 * (authorize.ts).
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { rolesOf, type Role } from './roles.js';

export interface TlsPaths {
  /** PEM certificate, the leaf first (a chain may follow). */
  readonly cert: string;
  /** PEM private key of the certificate. */
  readonly key: string;
  /** PEM CA bundle: peers' certificates must chain to one of these. */
  readonly ca: string;
}

export class TlsError extends Error {
  override readonly name = 'TlsError';
}

/** What one load of the files gave, checked. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer;
  readonly subject: string;
  readonly roles: readonly Role[];
  readonly validTo: Date;
  /** SHA-256 fingerprint of the leaf certificate (logged: not a secret). */
  readonly fingerprint: string;
}

/** The OU values of an X509Certificate's subject ("OU=node\nCN=n1" style text). */
function subjectOus(subject: string): string[] {
  return subject
    .split('\n')
    .filter((line) => line.startsWith('OU='))
    .map((line) => line.slice(3));
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A file's bytes; TlsError naming the file and why when it cannot be read. */
export function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new TlsError(
      `cannot read the ${what} file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

function certificates(pem: Buffer, path: string, what: string): X509Certificate[] {
  const blocks = pem.toString('utf8').match(PEM_CERT) ?? [];
  if (blocks.length === 0)
    throw new TlsError(`the ${what} file ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b);
    } catch (e) {
      throw new TlsError(`certificate ${i + 1} in the ${what} file ${path} cannot be parsed: ${(e as Error).message}`);
    }
  });
}

/**
 * Read and check the three files. `now` is injected for tests. Throws TlsError with what
 * is wrong and what to do.
 */
export function loadTls(paths: TlsPaths, now: Date = new Date()): TlsMaterial {
  const cert = readPem(paths.cert, 'certificate');
  const key = readPem(paths.key, 'private key');
  const ca = readPem(paths.ca, 'CA');
  const [leaf] = certificates(cert, paths.cert, 'certificate');
  const cas = certificates(ca, paths.ca, 'CA');
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    throw new TlsError(
      `the private key file ${paths.key} cannot be parsed (${(e as Error).message}); give an unencrypted PEM key`,
    );
  }
  if (!leaf!.checkPrivateKey(privateKey))
    throw new TlsError(
      `the private key in ${paths.key} does not belong to the certificate in ${paths.cert}: give the key the certificate was issued for`,
    );
  const issuer = cas.find((c) => leaf!.checkIssued(c) && leaf!.verify(c.publicKey));
  if (issuer === undefined)
    throw new TlsError(
      `the certificate in ${paths.cert} (${oneLine(leaf!.subject)}) was not issued by a CA in ${paths.ca}: peers would refuse it; issue it from the cluster's CA`,
    );
  const validTo = new Date(leaf!.validTo);
  const validFrom = new Date(leaf!.validFrom);
  if (now < validFrom)
    throw new TlsError(
      `the certificate in ${paths.cert} is not valid before ${validFrom.toISOString()}: check this machine's clock or issue a new one`,
    );
  if (now > validTo)
    throw new TlsError(
      `the certificate in ${paths.cert} expired on ${validTo.toISOString()}: issue a new one (ringkv certs) and replace the file; the node reloads it`,
    );
  return {
    cert,
    key,
    ca,
    subject: oneLine(leaf!.subject),
    roles: rolesOf(subjectOus(leaf!.subject)),
    validTo,
    fingerprint: leaf!.fingerprint256,
  };
}

const oneLine = (subject: string): string => subject.split('\n').join(', ');

type CaListener = grpc.experimental.CaCertificateUpdateListener;
type IdentityListener = grpc.experimental.IdentityCertificateUpdateListener;

/** What a reload gave: the material now in use, or the error that kept the old one. */
export type TlsReload = { ok: true; material: TlsMaterial } | { ok: false; error: TlsError };

export interface TlsFilesOptions {
  /** ms between checks of the files' modification times; 0: no watching (SIGHUP or reload() only). */
  readonly watchMs?: number;
  /** Told of every reload. */
  readonly onReload?: (result: TlsReload) => void;
}

/** The files, loaded and kept current; a grpc-js CertificateProvider for server and channel credentials. */
export class TlsFiles implements grpc.experimental.CertificateProvider {
  #material: TlsMaterial;
  readonly #ca = new Set<CaListener>();
  readonly #identity = new Set<IdentityListener>();
  readonly #watched: string[] = [];
  readonly #onChange = (cur: Stats, prev: Stats): void => {
    if (cur.mtimeMs !== prev.mtimeMs || cur.size !== prev.size || cur.ino !== prev.ino) this.reload();
  };

  /** Load now (throws TlsError when the files are unusable: a node must not start without them). */
  constructor(
    readonly paths: TlsPaths,
    private readonly options: TlsFilesOptions = {},
  ) {
    this.#material = loadTls(paths);
    const watchMs = options.watchMs ?? 0;
    if (watchMs > 0) {
      for (const p of new Set([paths.cert, paths.key, paths.ca])) {
        watchFile(p, { interval: watchMs, persistent: false }, this.#onChange);
        this.#watched.push(p);
      }
    }
  }

  get material(): TlsMaterial {
    return this.#material;
  }

  /** Read the files again; keep the old material when they are unusable. True when the new material is in use. */
  reload(): boolean {
    let next: TlsMaterial;
    try {
      next = loadTls(this.paths);
    } catch (e) {
      this.options.onReload?.({ ok: false, error: e instanceof TlsError ? e : new TlsError((e as Error).message) });
      return false;
    }
    const changed =
      !next.cert.equals(this.#material.cert) ||
      !next.key.equals(this.#material.key) ||
      !next.ca.equals(this.#material.ca);
    this.#material = next;
    if (changed) {
      for (const l of this.#ca) l({ caCertificate: next.ca });
      for (const l of this.#identity) l({ certificate: next.cert, privateKey: next.key });
    }
    this.options.onReload?.({ ok: true, material: next });
    return true;
  }

  close(): void {
    for (const p of this.#watched) unwatchFile(p, this.#onChange);
    this.#watched.length = 0;
  }

  // A new listener hears the current material on the next tick, not at once: grpc-js's
  // server registers the watcher that applies it only after it adds these listeners, so a
  // synchronous first update was lost and every connection dropped ("unloaded credentials").
  addCaCertificateListener(listener: CaListener): void {
    this.#ca.add(listener);
    process.nextTick(() => this.#ca.has(listener) && listener({ caCertificate: this.#material.ca }));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.#ca.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.#identity.add(listener);
    process.nextTick(
      () =>
        this.#identity.has(listener) && listener({ certificate: this.#material.cert, privateKey: this.#material.key }),
    );
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.#identity.delete(listener);
  }

  /**
   * Server credentials: TLS with this certificate; client certificates are asked for and
   * verified against the CA but not required at the handshake, so that one port can
   * serve both peers (who must present one) and, when allowed, clients without one. Who
   * may call what is decided per call (authorize.ts), from the verified
   * certificate grpc-js hands each call.
   */
  serverCredentials(): grpc.ServerCredentials {
    return grpc.experimental.createCertificateProviderServerCredentials(this, this, false);
  }

  /** Channel credentials: verify the server against the CA and present this certificate. */
  channelCredentials(): grpc.ChannelCredentials {
    return grpc.experimental.createCertificateProviderChannelCredentials(this, this);
  }
}
