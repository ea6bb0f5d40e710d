/**
 * The CLI's credentials, for every command that calls a node: `--tls-ca`, `--tls-cert`,
 * `--tls-key` and `--admin-token-file`, or their environment variables (the same names
 * a node reads, so a shell set up for a node works for the CLI too). Set once per run,
 * before the command's action, by the hook in main.ts.
 *
 * Owns: turning the flags into ClientSecurity. Must not: call a node.
 */
import type { Command } from 'commander';
import type { ClientSecurity } from '../security/credentials.js';
import { CliError } from './exit.js';
import { readAdminToken } from '../security/admin-token.js';

let current: ClientSecurity = {};

/** What the client commands connect with. */
export function cliSecurity(): ClientSecurity {
  return current;
}

/** Add the credential flags to a command that calls a node. */
export function withCredentials(cmd: Command): Command {
  return cmd
    .option('--tls-ca <file>', 'PEM CA bundle of the cluster: speak TLS and verify the nodes with it (RINGKV_TLS_CA)')
    .option('--tls-cert <file>', 'PEM certificate to present, role client or admin (RINGKV_TLS_CERT)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert (RINGKV_TLS_KEY)')
    .option(
      '--admin-token-file <file>',
      'file holding the admin token, for calls that change the cluster, and reads on nodes with --read-auth credential (RINGKV_ADMIN_TOKEN_FILE)',
    );
}

interface Flags {
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  adminTokenFile?: string;
}

/** Resolve the flags (over the environment) of the command about to run. */
export function setCredentials(flags: Flags, env: NodeJS.ProcessEnv = process.env): void {
  const pick = (flag: string | undefined, name: string): string | undefined =>
    flag ?? (env[name] ? env[name] : undefined);
  const ca = pick(flags.tlsCa, 'RINGKV_TLS_CA');
  const cert = pick(flags.tlsCert, 'RINGKV_TLS_CERT');
  const key = pick(flags.tlsKey, 'RINGKV_TLS_KEY');
  const tokenFile = pick(flags.adminTokenFile, 'RINGKV_ADMIN_TOKEN_FILE');
  if ((cert === undefined) !== (key === undefined))
    throw new CliError('give both --tls-cert and --tls-key (a certificate and its key), or neither');
  if (cert !== undefined && ca === undefined)
    throw new CliError("--tls-cert needs --tls-ca: the CA that issued the nodes' certificates");
  let token: string | undefined;
  if (tokenFile !== undefined) {
    try {
      token = readAdminToken(tokenFile);
    } catch (e) {
      throw new CliError((e as Error).message);
    }
  }
  current = {
    ...(ca !== undefined ? { tls: { ca, ...(cert !== undefined ? { cert, key } : {}) } } : {}),
    ...(token !== undefined ? { token } : {}),
  };
}
