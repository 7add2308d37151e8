"""The consumer rebalance protocol's groups (KIP-848): the server-side assignors, the member's
reconciliation table, the group and member model and the manager that serves
ConsumerGroupHeartbeat (Kafka's group-coordinator modern/consumer package and
GroupMetadataManager's consumer-group half)."""
