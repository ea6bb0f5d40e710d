/**
 * A development certificate authority: a CA and the certificates it issues to nodes,
 * operators and clients, as PEM (ECDSA P-256, SHA-256). What `ringkv certs` writes, and
 * what the tests make valid, expired, wrongly signed or wrongly roled certificates with.
 * Production clusters may use any CA; docs/security.md says what a certificate needs.
 *
 * Owns: making certificates. Must not: be loaded by a node (it pulls in an X.509 library
 * a running node never needs; the CLI imports it on demand).
 */
import 'reflect-metadata'; // @peculiar/x509's dependency injection needs it
import { webcrypto, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import type { Role } from '../security/roles.js';

x509.cryptoProvider.set(webcrypto as never);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface Pem {
  readonly cert: string;
  readonly key: string;
}

export interface Validity {
  /** Default: an hour ago (clocks differ a little). */
  readonly notBefore?: Date;
  /** Default: notBefore + 365 days. */
  readonly notAfter?: Date;
}

const serial = (): string => {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f; // positive
  return b.toString('hex');
};

function window(v: Validity): { notBefore: Date; notAfter: Date } {
  const notBefore = v.notBefore ?? new Date(Date.now() - 60 * 60 * 1000);
  return { notBefore, notAfter: v.notAfter ?? new Date(notBefore.getTime() + 365 * DAY_MS) };
}

async function keyPem(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** DN values may not carry the characters that separate them. */
function dnValue(s: string): string {
  if (!/^[A-Za-z0-9 ._@:-]{1,64}$/.test(s))
    throw new Error(`"${s}" cannot go in a certificate name: use letters, digits, spaces and . _ @ : - (at most 64)`);
  return s;
}

/** A new self-signed CA. */
export async function newCa(name = 'ringkv development CA', validity: Validity = {}): Promise<Pem> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${dnValue(name)}, O=ringkv`,
    ...window({
      notAfter: validity.notAfter ?? new Date(Date.now() + 10 * 365 * DAY_MS),
      notBefore: validity.notBefore,
    }),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await keyPem(keys.privateKey) };
}

export interface LeafOptions extends Validity {
  /** Subject CN: the node id, or the operator's or application's name. */
  readonly name: string;
  readonly role: Role;
  /** Host names and IP addresses the holder serves at (subjectAltName); nodes need theirs. */
  readonly hosts?: readonly string[];
}

/** A certificate issued by `ca` (its PEM cert and key), for server and client use. */
export async function issue(ca: Pem, options: LeafOptions): Promise<Pem> {
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(ca.key), ALG, false, ['sign']);
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const hosts = options.hosts ?? [];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${dnValue(options.name)}, OU=${options.role}, O=ringkv`,
    issuer: caCert.subject,
    ...window(options),
    signingKey: caKey as CryptoKey,
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      ...(hosts.length > 0
        ? [
            new x509.SubjectAlternativeNameExtension(
              hosts.map((h) => (isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h })),
            ),
          ]
        : []),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await keyPem(keys.privateKey) };
}
