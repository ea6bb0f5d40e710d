/**
 * Reading the admin token file, shared by the node (which checks calls against it) and
 * the CLI (which sends it). Apart from authorize.ts so that the CLI reads it
 * without loading gRPC.
 */
import { readFileSync } from 'node:fs';

/**
 * The admin token in `path`: one word of at least 16 characters (trimmed). What a node
 * checks calls against and what the CLI sends; throws an Error saying what is wrong.
 */
export function readAdminToken(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(
      `cannot read the admin token file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const token = text.trim();
  if (token.length < 16 || /\s/.test(token))
    throw new Error(
      `the admin token in ${path} must be one word of at least 16 characters (e.g. openssl rand -hex 32 > ${path})`,
    );
  return token;
}
