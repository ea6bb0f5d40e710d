/**
 * Values in and out of `ringkv put` and `ringkv get` as bytes: from a file or stdin and
 * to a file or stdout exactly as stored. Nothing on these paths goes through a string,
 * so a value that is not UTF-8 (an image, a protobuf) comes back byte for byte.
 *
 * Owns: reading and writing the bytes, and the refusals about them. Must not: talk to a node.
 */

import { existsSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { MAX_REQUEST_BYTES, requestTooLarge } from '../client/kv.js';
import { CliError, EXIT } from './exit.js';

export interface ValueSource {
  /** VALUE as typed on the command line, if given. */
  readonly arg?: string;
  /** --file PATH, '-' for stdin. */
  readonly file?: string;
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
}

/** The value `ringkv put` stores, with a note for stderr when a VALUE looks like it meant a file. */
export async function readValue(src: ValueSource): Promise<{ value: Buffer; note?: string }> {
  if (src.arg !== undefined && src.file !== undefined)
    throw new CliError('give the value either as VALUE or with --file, not both');
  if (src.arg !== undefined) {
    // curl's @file convention is not ringkv's: the text is stored, but say so when a file was likely meant.
    const named = src.arg.startsWith('@') ? src.arg.slice(1) : '';
    const note =
      named !== '' && existsSync(named)
        ? `ringkv: stored the text "${src.arg}" itself; to store the file's bytes, use --file ${named}`
        : undefined;
    return note === undefined ? { value: Buffer.from(src.arg, 'utf8') } : { value: Buffer.from(src.arg, 'utf8'), note };
  }
  if (src.file !== undefined && src.file !== '-') return { value: await readValueFile(src.file) };
  if (src.file === undefined && src.stdin.isTTY) {
    throw new CliError('no value: give VALUE, --file PATH, or pipe the value in (ringkv put KEY < FILE)');
  }
  const value = await readStdin(src.stdin);
  if (value.length === 0)
    throw new CliError(
      'no value: stdin was empty; give VALUE, --file PATH, or pipe the value in (ringkv put KEY < FILE)',
    );
  return { value };
}

async function readValueFile(path: string): Promise<Buffer> {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new CliError(`--file ${path} is not a file`);
    size = st.size;
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(
      `cannot read --file ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
  }
  // Refused before reading: a value no request can carry would be refused anyway, after a read of all of it.
  if (size > MAX_REQUEST_BYTES) throw requestTooLarge(size, `the value in ${path}, ${size} bytes,`);
  return readFile(path);
}

/** All of stdin, stopping as soon as it is more than one request may carry. */
async function readStdin(stdin: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    chunks.push(b);
    size += b.length;
    if (size > MAX_REQUEST_BYTES) throw requestTooLarge(size, 'the value on stdin');
  }
  return Buffer.concat(chunks, size);
}

export interface GetReply {
  readonly values: readonly Buffer[];
  readonly context: Buffer;
  readonly found: boolean;
}

/**
 * The one value `get --out` writes: the only one, or sibling `sibling` (1-based, as
 * `ringkv get` numbers them). Several siblings and no choice: refused, since writing one
 * of them silently would lose the others.
 */
export function chooseValue(key: string, r: GetReply, sibling: number | undefined): Buffer {
  const n = r.values.length;
  if (sibling !== undefined) {
    if (sibling > n) throw new CliError(`--sibling ${sibling}: ${key} has ${n} ${n === 1 ? 'value' : 'siblings'}`);
    return r.values[sibling - 1]!;
  }
  if (n > 1) {
    throw new CliError(
      `${key} has ${n} siblings (concurrent writes); --out writes one value: choose it with --sibling 1..${n} (ringkv get ${key} lists them), or resolve them with ringkv put ${key} --context C; nothing written`,
      EXIT.siblings,
    );
  }
  return r.values[0]!;
}

/** Write `value` to `out` ('-': stdout) as raw bytes. */
export function writeValue(out: string, value: Buffer): void {
  if (out === '-') {
    process.stdout.write(value);
    return;
  }
  try {
    writeFileSync(out, value);
  } catch (e) {
    throw new CliError(`cannot write --out ${out}: ${(e as Error).message}`);
  }
}
