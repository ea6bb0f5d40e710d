// Original file: proto/ringkv/v1/admin.proto


export interface DeleteBucketRequest {
  'name'?: (string);
  /**
   * Delete the bucket even if it holds keys: they are deleted on every member.
   */
  'purge'?: (boolean);
}

export interface DeleteBucketRequest__Output {
  'name': (string);
  /**
   * Delete the bucket even if it holds keys: they are deleted on every member.
   */
  'purge': (boolean);
}
