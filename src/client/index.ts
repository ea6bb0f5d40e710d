export {
  Client,
  casNotApplied,
  MAX_BATCH_KEYS,
  MAX_BATCH_VALUE_BYTES,
  MAX_SET_OPS,
  MAX_SET_PAGE,
  pushbackMs,
} from './kv.js';
export type {
  ClientOptions,
  ClientStats,
  CallOptions,
  PutOptions,
  GetOptions,
  GetResult,
  HedgeOptions,
  BudgetOptions,
  KeyResult,
  PutItem,
  PutManyOptions,
  CounterUpdateOptions,
  CounterResetOptions,
  DropOptions,
  SetUpdateOptions,
  SetOp,
  SetElement,
  SetReadOptions,
  SetPage,
  PutIfOptions,
  PutIfResult,
} from './kv.js';
export { MAX_MAP_OPS } from './maps.js';
export type { MapField, MapFieldType, MapOp, MapEntry, MapPage, MapPath, MapValue } from './maps.js';
export type { ClientSecurity, TlsClientOptions } from '../security/credentials.js';
export { AdminClient } from './admin.js';
export type {
  MemberStatus,
  StatusReply,
  RingReply,
  Endpoint,
  EndpointsReply,
  BucketInfo,
  BucketChangeReply,
  BucketDeletionInfo,
  BucketSettings,
} from './admin.js';
export type { BucketProps } from '../buckets/index.js';
