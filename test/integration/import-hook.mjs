// node --import ./import-hook.mjs …: appends every module URL the process loads to the
// file $RINGKV_IMPORT_LOG, one per line (test/integration/cli-imports.test.ts).
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (process.env.RINGKV_IMPORT_LOG) appendFileSync(process.env.RINGKV_IMPORT_LOG, url + '\\n');
  return next(url, context);
}`),
);
