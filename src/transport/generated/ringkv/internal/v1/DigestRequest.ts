// Original file: proto/ringkv/internal/v1/replica.proto


/**
 * A digest of this node's versions of the key: a read asks it of the replicas it needs
 * no data from, and compares.
 */
export interface DigestRequest {
  'key'?: (Buffer | Uint8Array | string);
}

/**
 * A digest of this node's versions of the key: a read asks it of the replicas it needs
 * no data from, and compares.
 */
export interface DigestRequest__Output {
  'key': (Buffer);
}
