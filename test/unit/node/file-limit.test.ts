import { describe, expect, it } from 'vitest';
import { fileLimitAdvice, filesNeeded, openFilesLimit } from '../../../src/node/file-limit.js';

const limits = (soft: string): string =>
  `Limit                     Soft Limit           Hard Limit           Units\nMax cpu time              unlimited            unlimited            seconds\nMax open files            ${soft}                 1048576              files\n`;

describe('the open-files check at start', () => {
  it('reads the soft limit', () => {
    expect(openFilesLimit(limits('1024'))).toBe(1024);
    expect(openFilesLimit(limits('unlimited'))).toBeUndefined();
    expect(openFilesLimit('nothing here')).toBeUndefined();
  });

  it('advises raising the limit only when it is below what the node may need', () => {
    expect(fileLimitAdvice(1024, () => limits('1024'))).toMatch(
      /open-files limit is 1024, below the 2280 .*ulimit -n.*--max-connections/,
    );
    expect(fileLimitAdvice(1024, () => limits(String(filesNeeded(1024))))).toBeUndefined();
    expect(fileLimitAdvice(1024, () => limits('unlimited'))).toBeUndefined();
    expect(
      fileLimitAdvice(1024, () => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
  });
});
