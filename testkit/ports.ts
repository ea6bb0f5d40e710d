/**
 * Free TCP ports on 127.0.0.1, for whatever a test or bench starts that must listen
 * somewhere (node processes, containers' mapped ports, competitors in bench:vs).
 *
 * Owns: the probe socket it opens and closes. Must not: hold a port (the port is only free
 * when asked; the caller binds it) or listen anywhere but 127.0.0.1.
 */
import { createServer } from 'node:net';

/** A port nothing listens on right now (bind 0, read it back, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
