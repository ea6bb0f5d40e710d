// Original file: proto/ringkv/internal/v1/gossip.proto


export interface GossipReceipt {
}

export interface GossipReceipt__Output {
}
