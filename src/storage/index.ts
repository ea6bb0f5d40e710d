export { Store } from './store.js';
export { PRESENT, MAX_SUB_OPS, MAX_RANGE_KEYS, MAX_RANGE_BYTES, MAX_WRITE_MANY_BYTES, checkSubOp } from './sub-ops.js';
export { MAX_REQUEST_ID_BYTES, checkRequestId } from './request-checks.js';
export { checkValueSize } from '../kinds/kv-errors.js';
export type { StoreOptions, ReadResult, WriteResult, MergeResult, CounterUpdateResult } from './store.js';
export type { SubOp, SubWrite, WriteManyResult } from './sub-ops.js';
export type { Logger } from './store-options.js';
export type { Ranges, ScanEntry, ScanBatch, KeyFilter, RangeRead } from './ranges.js';
export type { Hint, HintStats, HintStore } from './hints.js';
export { KvError } from '../kinds/kv-errors.js';
export { checkAmount } from '../kinds/counter/counter.js';
export type { DiskState } from './disk.js';
export { RangeHash } from './range-hash.js';
export { RangeTree, differingLeaves, depthFor, FANOUT, MAX_DEPTH } from './range-tree.js';
export { KeptTrees, DEFAULT_TREE_DEPTH, MIN_KEPT_DEPTH } from './kept-trees.js';
export type { KeptUnit, KeptTreesOptions } from './kept-trees.js';
export type { KvErrorCode } from '../kinds/kv-errors.js';
export type { Engine, EngineIterator, WriteOp } from './engine.js';
export { LevelEngine } from './level-engine.js';
export { MemoryEngine } from './memory-engine.js';
export type { Key, TokenRange } from './keys.js';
export { userKey } from './keys.js';
export type { BatchLimits } from './scan.js';
export type { Durability, StoreLimits, HintLimits } from './store-options.js';
export { DEFAULT_TOMBSTONE_GRACE_MS } from './store-options.js';
export { merge, update, liveValues, isDeleted, EMPTY_VERSIONS } from '../kinds/versions/versions.js';
export type { Versions, Sibling, Clock } from '../kinds/versions/versions.js';
export type { Actor } from '../kinds/dots.js';
export {
  counterContext,
  counterReset,
  recordDigest,
  resolveReplies,
  resolveCounterReplies,
  resolvePage,
} from './replies.js';
export type {
  ResolveOptions,
  ResolvedRead,
  ResolvedCounter,
  PageReply,
  ResolvedPage,
  ResolvedSubKey,
} from './replies.js';
