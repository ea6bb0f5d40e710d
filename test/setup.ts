/**
 * Test setup: fast-check seeds. Under CI the property tests run on one fixed seed, so
 * that a run is reproducible and a landing never hinges on luck; everywhere else each
 * run explores new inputs. A failure prints its seed either way: FC_SEED=<seed> npm test
 * replays it.
 */
import fc from 'fast-check';

const fixed = process.env.FC_SEED ?? (process.env.CI ? '20261130' : undefined);
if (fixed !== undefined) fc.configureGlobal({ seed: Number(fixed) });
