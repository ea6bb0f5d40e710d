/**
 * Node's warnings, less one that is noise to a ringkv user: DEP0123, "Setting the TLS
 * ServerName to an IP address is not permitted by RFC 6066". grpc-js gives TLS the
 * target's host as the ServerName, and ringkv's addresses are IP addresses; Node then
 * sends no SNI, warns, and verifies the certificate against the IP all the same (what
 * `ringkv certs` issues certificates for). Every other warning is printed as Node prints
 * it.
 *
 * Owns: that filter, for the `ringkv` process (the CLI and `ringkv node`). Must not: drop
 * any other warning.
 */
export function dropIpServernameWarning(): void {
  const printers = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (w: Error & { code?: string }) => {
    if (w.code === 'DEP0123') return;
    for (const print of printers) print(w);
  });
}
