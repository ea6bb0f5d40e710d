import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { KvError } from '../../../src/storage/index.js';
import { ReplicationError } from '../../../src/replication/replication-errors.js';
import { RETRY_PUSHBACK_MS, toStatus } from '../../../src/transport/status.js';
import { RingError } from '../../../src/ring/ring-errors.js';
import { DataTypeError } from '../../../src/buckets/index.js';

describe('toStatus: the one mapping to gRPC statuses', () => {
  it.each([
    [new ReplicationError('RK_BAD_ARGUMENT', 'm'), grpc.status.INVALID_ARGUMENT],
    [new ReplicationError('RK_UNAVAILABLE', 'm'), grpc.status.UNAVAILABLE],
    [new ReplicationError('RK_NOT_READY', 'm'), grpc.status.UNAVAILABLE],
    [new ReplicationError('RK_TIMEOUT', 'm'), grpc.status.DEADLINE_EXCEEDED],
    [new ReplicationError('RK_OVERLOADED', 'm'), grpc.status.RESOURCE_EXHAUSTED],
    [new KvError('KV_BAD_CONTEXT', 'm'), grpc.status.INVALID_ARGUMENT],
    [new KvError('KV_BAD_AMOUNT', 'm'), grpc.status.INVALID_ARGUMENT],
    [new KvError('KV_COUNTER_OVERFLOW', 'm'), grpc.status.OUT_OF_RANGE],
    [new KvError('KV_WRONG_TYPE', 'm'), grpc.status.FAILED_PRECONDITION],
    [new KvError('KV_COUNTER_GAP', 'm'), grpc.status.FAILED_PRECONDITION],
    [new KvError('KV_TOO_MANY_SIBLINGS', 'm'), grpc.status.FAILED_PRECONDITION],
    [new KvError('KV_HINTS_FULL', 'm'), grpc.status.RESOURCE_EXHAUSTED],
    [new KvError('KV_CORRUPT_RECORD', 'm'), grpc.status.DATA_LOSS],
    [new KvError('KV_CLOSED', 'm'), grpc.status.UNAVAILABLE],
    [new KvError('KV_IO', 'm'), grpc.status.INTERNAL],
    [new RingError('RING_BAD_REPLICAS', 'm'), grpc.status.INVALID_ARGUMENT],
    [new RingError('RING_UNKNOWN_MEMBER', 'm'), grpc.status.NOT_FOUND],
    [new RingError('RING_EMPTY', 'm'), grpc.status.FAILED_PRECONDITION],
    [new DataTypeError('DT_BAD_PATH', 'm'), grpc.status.INVALID_ARGUMENT],
    [new DataTypeError('DT_ELEMENT_TOO_LARGE', 'm'), grpc.status.INVALID_ARGUMENT],
    [new DataTypeError('DT_NO_CONTEXT', 'm'), grpc.status.INVALID_ARGUMENT],
    [new DataTypeError('DT_BAD_OP', 'm'), grpc.status.INVALID_ARGUMENT],
  ])('%s → %i, with its message (and retry advice when RESOURCE_EXHAUSTED)', (e, code) => {
    const { metadata, ...status } = toStatus(e);
    expect(status).toEqual({ code, details: 'm' });
    expect(metadata?.get('grpc-retry-pushback-ms')).toEqual(
      code === grpc.status.RESOURCE_EXHAUSTED ? [String(RETRY_PUSHBACK_MS)] : undefined,
    );
  });

  it("passes a replica's status through, and anything else is INTERNAL", () => {
    expect(toStatus({ code: grpc.status.INVALID_ARGUMENT, details: 'bad context' })).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'bad context',
    });
    expect(toStatus(new TypeError('boom'))).toEqual({ code: grpc.status.INTERNAL, details: 'internal error: boom' });
  });
});
