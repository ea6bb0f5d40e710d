/**
 * `ringkv certs`: a development CA and certificates for nodes, an operator and a client,
 * written as PEM files into a directory, so that TLS can be turned on in minutes
 * (docs/security.md). An existing CA in the directory is reused, so that running it
 * again adds certificates the cluster already trusts; existing certificates are kept
 * unless --force. Keys are written readable by their owner only.
 *
 * Owns: the files. Must not: run in a node (dev-ca.ts is loaded on demand).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Role } from '../security/roles.js';

export interface CertsOptions {
  readonly dir: string;
  /** Node ids: one certificate each, role node. */
  readonly nodes: readonly string[];
  /** Host names and addresses every node certificate names (subjectAltName). */
  readonly hosts: readonly string[];
  /** Operator certificates, role admin. */
  readonly admins: readonly string[];
  /** Application certificates, role client. */
  readonly clients: readonly string[];
  readonly days: number;
  readonly force: boolean;
}

export interface Written {
  readonly name: string;
  readonly role: Role | 'ca';
  readonly cert: string;
  readonly key: string;
  /** False: the files were there already and kept. */
  readonly made: boolean;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Make what is missing; returns every file pair, made or kept. */
export async function makeCerts(o: CertsOptions): Promise<Written[]> {
  for (const n of [...o.nodes, ...o.admins, ...o.clients]) {
    if (!NAME.test(n)) throw new Error(`"${n}" cannot name a certificate: use 1-64 letters, digits, ".", "_" or "-"`);
  }
  const all = [...o.nodes, ...o.admins, ...o.clients];
  const dup = all.find((n, i) => all.indexOf(n) !== i || n === 'ca');
  if (dup !== undefined)
    throw new Error(
      `"${dup}" is named twice (or is "ca"): every certificate needs its own name, its files are NAME.pem and NAME-key.pem`,
    );
  const { newCa, issue } = await import('./dev-ca.js');
  mkdirSync(o.dir, { recursive: true });
  const out: Written[] = [];
  const paths = (name: string) => ({ cert: join(o.dir, `${name}.pem`), key: join(o.dir, `${name}-key.pem`) });
  const ca = paths('ca');
  let caPem: { cert: string; key: string };
  if (existsSync(ca.cert) && existsSync(ca.key)) {
    caPem = { cert: readFileSync(ca.cert, 'utf8'), key: readFileSync(ca.key, 'utf8') };
    out.push({ name: 'ca', role: 'ca', ...ca, made: false });
  } else {
    if (existsSync(ca.cert) || existsSync(ca.key))
      throw new Error(
        `${o.dir} holds only one of ca.pem and ca-key.pem: restore the other, or remove both to make a new CA (every certificate must then be made again)`,
      );
    caPem = await newCa();
    write(ca, caPem);
    out.push({ name: 'ca', role: 'ca', ...ca, made: true });
  }
  const notAfter = new Date(Date.now() + o.days * 24 * 60 * 60 * 1000);
  const wanted: { name: string; role: Role; hosts: readonly string[] }[] = [
    ...o.nodes.map((name) => ({ name, role: 'node' as const, hosts: o.hosts })),
    ...o.admins.map((name) => ({ name, role: 'admin' as const, hosts: [] })),
    ...o.clients.map((name) => ({ name, role: 'client' as const, hosts: [] })),
  ];
  for (const w of wanted) {
    const p = paths(w.name);
    if (!o.force && existsSync(p.cert) && existsSync(p.key)) {
      out.push({ name: w.name, role: w.role, ...p, made: false });
      continue;
    }
    write(p, await issue(caPem, { name: w.name, role: w.role, hosts: w.hosts, notAfter }));
    out.push({ name: w.name, role: w.role, ...p, made: true });
  }
  return out;
}

function write(p: { cert: string; key: string }, pem: { cert: string; key: string }): void {
  writeFileSync(p.key, pem.key, { mode: 0o600 });
  chmodSync(p.key, 0o600); // also when --force overwrote a key file made with looser modes
  writeFileSync(p.cert, pem.cert, { mode: 0o644 });
}
