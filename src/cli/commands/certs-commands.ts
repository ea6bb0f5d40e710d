/**
 * `ringkv certs`: a development CA and certificates (dev-certs.ts makes them).
 *
 * Owns: the command's flags and what it prints. Must not: import at load what only the action needs.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { CliError } from '../exit.js';
import { positiveInt } from '../arguments.js';

const list = (v: string): string[] =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

export function certsCommand(program: Command): void {
  program
    .command('certs')
    .description(
      'make a development CA and certificates for nodes, an operator and a client (PEM files; see docs/security.md)',
    )
    .option(
      '--dir <dir>',
      'directory to write them into (an existing ca.pem and ca-key.pem there are reused)',
      './certs',
    )
    .option('--nodes <ids>', 'comma-separated node ids: a certificate each, role node', 'n1,n2,n3')
    .option(
      '--hosts <list>',
      'host names and IP addresses every node certificate names (clients and peers check the one they dial)',
      '127.0.0.1,localhost,::1',
    )
    .option('--admins <names>', 'comma-separated operator certificates, role admin', 'admin')
    .option('--clients <names>', 'comma-separated application certificates, role client', 'client')
    .option('--days <n>', 'days the new certificates are valid', positiveInt(36_500), 365)
    .option('--force', 'make certificates again even where the files exist (the CA is kept)')
    .action(
      async (o: {
        dir: string;
        nodes: string;
        hosts: string;
        admins: string;
        clients: string;
        days: number;
        force?: boolean;
      }) => {
        const { makeCerts } = await import('../dev-certs.js');
        let written;
        try {
          written = await makeCerts({
            dir: o.dir,
            nodes: list(o.nodes),
            hosts: list(o.hosts),
            admins: list(o.admins),
            clients: list(o.clients),
            days: o.days,
            force: o.force === true,
          });
        } catch (e) {
          throw new CliError((e as Error).message);
        }
        for (const w of written) console.log(`${w.made ? 'made' : 'kept'}  ${w.role.padEnd(6)} ${w.cert}  ${w.key}`);
        const n1 = written.find((w) => w.role === 'node');
        if (n1 !== undefined)
          console.log(
            `\nA node: ringkv node --tls-cert ${n1.cert} --tls-key ${n1.key} --tls-ca ${join(o.dir, 'ca.pem')} ...`,
          );
      },
    );
}
