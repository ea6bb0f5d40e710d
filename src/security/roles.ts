/**
 * Roles: what a certificate's holder may do, named in its subject's OU (docs/security.md):
 * `node` (a cluster member), `admin` (an operator), `client` (key/value calls).
 *
 * Owns: the role names and reading them from a subject. Must not: decide who may call
 * what (authorize.ts) or read certificates (tls.ts).
 */

export const ROLES = ['node', 'admin', 'client'] as const;
export type Role = (typeof ROLES)[number];

/** The roles a certificate's subject OU fields grant (unknown OUs are ignored; case does not matter). */
export function rolesOf(ou: string | readonly string[] | undefined): Role[] {
  const values = ou === undefined ? [] : typeof ou === 'string' ? ou.split('\n') : ou;
  return ROLES.filter((r) => values.some((v) => v.trim().toLowerCase() === r));
}
