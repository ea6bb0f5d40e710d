/**
 * How a client (the library, the CLI, a node calling a peer's Admin service) proves
 * itself: TLS options (the cluster's CA to verify nodes, and a certificate and key to
 * present when the cluster asks for one) and an optional bearer token (the admin token,
 * docs/security.md). Files are read once, when the client is made.
 *
 * Owns: turning those options into grpc-js credentials and metadata. Must not: hold
 * any rule about who may call what (the node decides).
 */
import * as grpc from '@grpc/grpc-js';
import { readPem } from './tls.js';

export interface TlsClientOptions {
  /** The cluster's CA bundle: a PEM file path, or the PEM itself as a Buffer. */
  readonly ca: string | Buffer;
  /** A certificate to present (role client or admin), with its key: path or PEM Buffer. */
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
}

export interface ClientSecurity {
  /** Speak TLS to the nodes (a cluster with TLS on refuses plaintext). */
  readonly tls?: TlsClientOptions;
  /** Bearer token sent with every call (the admin token). Over plaintext only on a network you trust. */
  readonly token?: string;
  /** Ready-made channel credentials, instead of `tls` (a node dials peers' Admin with its own). */
  readonly credentials?: grpc.ChannelCredentials;
}

const pem = (v: string | Buffer, what: string): Buffer => (Buffer.isBuffer(v) ? v : readPem(v, what));

export function channelCredentials(s: ClientSecurity = {}): grpc.ChannelCredentials {
  if (s.credentials !== undefined) return s.credentials;
  if (s.tls === undefined) return grpc.credentials.createInsecure();
  const { ca, cert, key } = s.tls;
  if ((cert === undefined) !== (key === undefined))
    throw new Error('TLS: give both a certificate and its key, or neither');
  return grpc.credentials.createSsl(
    pem(ca, 'CA'),
    key === undefined ? null : pem(key, 'private key'),
    cert === undefined ? null : pem(cert, 'certificate'),
  );
}

/** The metadata every call carries: the bearer token, if any. */
export function callMetadata(s: ClientSecurity = {}): grpc.Metadata | undefined {
  if (s.token === undefined) return undefined;
  if (!/^\S+$/.test(s.token)) throw new Error('the token must be one word, without spaces or line breaks');
  const m = new grpc.Metadata();
  m.set('authorization', `Bearer ${s.token}`);
  return m;
}
