# ruff: noqa: E501
"""Kafka's protocol error codes, as one table.

Transcribed from ``org.apache.kafka.common.protocol.Errors`` (codes -1..133, as of Kafka 4.1).
``retriable`` is Kafka's own flag: true when the error's exception class extends
``RetriableException`` (the "Retriable" column of the protocol guide's error table).
Codes never change meaning; names occasionally have (e.g. 6 was NOT_LEADER_FOR_PARTITION).
"""

from __future__ import annotations

from typing import NamedTuple


class ErrorCode(NamedTuple):
    code: int
    name: str
    retriable: bool
    message: str


_E = ErrorCode

ERROR_CODES: tuple[ErrorCode, ...] = (
    _E(-1, "UNKNOWN_SERVER_ERROR", False, "The server experienced an unexpected error when processing the request."),
    _E(0, "NONE", False, ""),
    _E(1, "OFFSET_OUT_OF_RANGE", False, "The requested offset is not within the range of offsets maintained by the server."),
    _E(2, "CORRUPT_MESSAGE", True, "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt."),
    _E(3, "UNKNOWN_TOPIC_OR_PARTITION", True, "This server does not host this topic-partition."),
    _E(4, "INVALID_FETCH_SIZE", False, "The requested fetch size is invalid."),
    _E(5, "LEADER_NOT_AVAILABLE", True, "There is no leader for this topic-partition as we are in the middle of a leadership election."),
    _E(6, "NOT_LEADER_OR_FOLLOWER", True, "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition."),
    _E(7, "REQUEST_TIMED_OUT", True, "The request timed out."),
    _E(8, "BROKER_NOT_AVAILABLE", False, "The broker is not available."),
    _E(9, "REPLICA_NOT_AVAILABLE", True, "The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition."),
    _E(10, "MESSAGE_TOO_LARGE", False, "The request included a message larger than the max message size the server will accept."),
    _E(11, "STALE_CONTROLLER_EPOCH", False, "The controller moved to another broker."),
    _E(12, "OFFSET_METADATA_TOO_LARGE", False, "The metadata field of the offset request was too large."),
    _E(13, "NETWORK_EXCEPTION", True, "The server disconnected before a response was received."),
    _E(14, "COORDINATOR_LOAD_IN_PROGRESS", True, "The coordinator is loading and hence can't process requests."),
    _E(15, "COORDINATOR_NOT_AVAILABLE", True, "The coordinator is not available."),
    _E(16, "NOT_COORDINATOR", True, "This is not the correct coordinator."),
    _E(17, "INVALID_TOPIC_EXCEPTION", False, "The request attempted to perform an operation on an invalid topic."),
    _E(18, "RECORD_LIST_TOO_LARGE", False, "The request included message batch larger than the configured segment size on the server."),
    _E(19, "NOT_ENOUGH_REPLICAS", True, "Messages are rejected since there are fewer in-sync replicas than required."),
    _E(20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", True, "Messages are written to the log, but to fewer in-sync replicas than required."),
    _E(21, "INVALID_REQUIRED_ACKS", False, "Produce request specified an invalid value for required acks."),
    _E(22, "ILLEGAL_GENERATION", False, "Specified group generation id is not valid."),
    _E(23, "INCONSISTENT_GROUP_PROTOCOL", False, "The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list."),
    _E(24, "INVALID_GROUP_ID", False, "The group id is invalid."),
    _E(25, "UNKNOWN_MEMBER_ID", False, "The coordinator is not aware of this member."),
    _E(26, "INVALID_SESSION_TIMEOUT", False, "The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms)."),
    _E(27, "REBALANCE_IN_PROGRESS", False, "The group is rebalancing, so a rejoin is needed."),
    _E(28, "INVALID_COMMIT_OFFSET_SIZE", False, "The committing offset data size is not valid."),
    _E(29, "TOPIC_AUTHORIZATION_FAILED", False, "Topic authorization failed."),
    _E(30, "GROUP_AUTHORIZATION_FAILED", False, "Group authorization failed."),
    _E(31, "CLUSTER_AUTHORIZATION_FAILED", False, "Cluster authorization failed."),
    _E(32, "INVALID_TIMESTAMP", False, "The timestamp of the message is out of acceptable range."),
    _E(33, "UNSUPPORTED_SASL_MECHANISM", False, "The broker does not support the requested SASL mechanism."),
    _E(34, "ILLEGAL_SASL_STATE", False, "Request is not valid given the current SASL state."),
    _E(35, "UNSUPPORTED_VERSION", False, "The version of API is not supported."),
    _E(36, "TOPIC_ALREADY_EXISTS", False, "Topic with this name already exists."),
    _E(37, "INVALID_PARTITIONS", False, "Number of partitions is below 1."),
    _E(38, "INVALID_REPLICATION_FACTOR", False, "Replication factor is below 1 or larger than the number of available brokers."),
    _E(39, "INVALID_REPLICA_ASSIGNMENT", False, "Replica assignment is invalid."),
    _E(40, "INVALID_CONFIG", False, "Configuration is invalid."),
    _E(41, "NOT_CONTROLLER", True, "This is not the correct controller for this cluster."),
    _E(42, "INVALID_REQUEST", False, "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details."),
    _E(43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", False, "The message format version on the broker does not support the request."),
    _E(44, "POLICY_VIOLATION", False, "Request parameters do not satisfy the configured policy."),
    _E(45, "OUT_OF_ORDER_SEQUENCE_NUMBER", False, "The broker received an out of order sequence number."),
    _E(46, "DUPLICATE_SEQUENCE_NUMBER", False, "The broker received a duplicate sequence number."),
    _E(47, "INVALID_PRODUCER_EPOCH", False, "Producer attempted to produce with an old epoch."),
    _E(48, "INVALID_TXN_STATE", False, "The producer attempted a transactional operation in an invalid state."),
    _E(49, "INVALID_PRODUCER_ID_MAPPING", False, "The producer attempted to use a producer id which is not currently assigned to its transactional id."),
    _E(50, "INVALID_TRANSACTION_TIMEOUT", False, "The transaction timeout is larger than the maximum value allowed by the broker (as configured by transaction.max.timeout.ms)."),
    _E(51, "CONCURRENT_TRANSACTIONS", True, "The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing."),
    _E(52, "TRANSACTION_COORDINATOR_FENCED", False, "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer."),
    _E(53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", False, "Transactional Id authorization failed."),
    _E(54, "SECURITY_DISABLED", False, "Security features are disabled."),
    _E(55, "OPERATION_NOT_ATTEMPTED", False, "The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest."),
    _E(56, "KAFKA_STORAGE_ERROR", True, "Disk error when trying to access log file on the disk."),
    _E(57, "LOG_DIR_NOT_FOUND", False, "The user-specified log directory is not found in the broker config."),
    _E(58, "SASL_AUTHENTICATION_FAILED", False, "SASL Authentication failed."),
    _E(59, "UNKNOWN_PRODUCER_ID", False, "This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question. This could happen if, for instance, the producer's records were deleted because their retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is removed from the broker, and future appends by the producer will return this exception."),
    _E(60, "REASSIGNMENT_IN_PROGRESS", False, "A partition reassignment is in progress."),
    _E(61, "DELEGATION_TOKEN_AUTH_DISABLED", False, "Delegation Token feature is not enabled."),
    _E(62, "DELEGATION_TOKEN_NOT_FOUND", False, "Delegation Token is not found on server."),
    _E(63, "DELEGATION_TOKEN_OWNER_MISMATCH", False, "Specified Principal is not valid Owner/Renewer."),
    _E(64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", False, "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels."),
    _E(65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", False, "Delegation Token authorization failed."),
    _E(66, "DELEGATION_TOKEN_EXPIRED", False, "Delegation Token is expired."),
    _E(67, "INVALID_PRINCIPAL_TYPE", False, "Supplied principalType is not supported."),
    _E(68, "NON_EMPTY_GROUP", False, "The group is not empty."),
    _E(69, "GROUP_ID_NOT_FOUND", False, "The group id does not exist."),
    _E(70, "FETCH_SESSION_ID_NOT_FOUND", True, "The fetch session ID was not found."),
    _E(71, "INVALID_FETCH_SESSION_EPOCH", True, "The fetch session epoch is invalid."),
    _E(72, "LISTENER_NOT_FOUND", True, "There is no listener on the leader broker that matches the listener on which metadata request was processed."),
    _E(73, "TOPIC_DELETION_DISABLED", False, "Topic deletion is disabled."),
    _E(74, "FENCED_LEADER_EPOCH", True, "The leader epoch in the request is older than the epoch on the broker."),
    _E(75, "UNKNOWN_LEADER_EPOCH", True, "The leader epoch in the request is newer than the epoch on the broker."),
    _E(76, "UNSUPPORTED_COMPRESSION_TYPE", False, "The requesting client does not support the compression type of given partition."),
    _E(77, "STALE_BROKER_EPOCH", False, "Broker epoch has changed."),
    _E(78, "OFFSET_NOT_AVAILABLE", True, "The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing."),
    _E(79, "MEMBER_ID_REQUIRED", False, "The group member needs to have a valid member id before actually entering a consumer group."),
    _E(80, "PREFERRED_LEADER_NOT_AVAILABLE", True, "The preferred leader was not available."),
    _E(81, "GROUP_MAX_SIZE_REACHED", False, "The group has reached its maximum size."),
    _E(82, "FENCED_INSTANCE_ID", False, "The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id."),
    _E(83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", True, "Eligible topic partition leaders are not available."),
    _E(84, "ELECTION_NOT_NEEDED", True, "Leader election not needed for topic partition."),
    _E(85, "NO_REASSIGNMENT_IN_PROGRESS", False, "No partition reassignment is in progress."),
    _E(86, "GROUP_SUBSCRIBED_TO_TOPIC", False, "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."),
    _E(87, "INVALID_RECORD", False, "This record has failed the validation on broker and hence will be rejected."),
    _E(88, "UNSTABLE_OFFSET_COMMIT", True, "There are unstable offsets that need to be cleared."),
    _E(89, "THROTTLING_QUOTA_EXCEEDED", True, "The throttling quota has been exceeded."),
    _E(90, "PRODUCER_FENCED", False, "There is a newer producer with the same transactionalId which fences the current one."),
    _E(91, "RESOURCE_NOT_FOUND", False, "A request illegally referred to a resource that does not exist."),
    _E(92, "DUPLICATE_RESOURCE", False, "A request illegally referred to the same resource twice."),
    _E(93, "UNACCEPTABLE_CREDENTIAL", False, "Requested credential would not meet criteria for acceptability."),
    _E(94, "INCONSISTENT_VOTER_SET", False, "Indicates that the either the sender or recipient of a voter-only request is not one of the expected voters."),
    _E(95, "INVALID_UPDATE_VERSION", False, "The given update version was invalid."),
    _E(96, "FEATURE_UPDATE_FAILED", False, "Unable to update finalized features due to an unexpected server error."),
    _E(97, "PRINCIPAL_DESERIALIZATION_FAILURE", False, "Request principal deserialization failed during forwarding. This indicates an internal error on the broker cluster security setup."),
    _E(98, "SNAPSHOT_NOT_FOUND", False, "Requested snapshot was not found."),
    _E(99, "POSITION_OUT_OF_RANGE", False, "Requested position is not greater than or equal to zero, and less than the size of the snapshot."),
    _E(100, "UNKNOWN_TOPIC_ID", True, "This server does not host this topic ID."),
    _E(101, "DUPLICATE_BROKER_REGISTRATION", False, "This broker ID is already in use."),
    _E(102, "BROKER_ID_NOT_REGISTERED", False, "The given broker ID was not registered."),
    _E(103, "INCONSISTENT_TOPIC_ID", True, "The log's topic ID did not match the topic ID in the request."),
    _E(104, "INCONSISTENT_CLUSTER_ID", False, "The clusterId in the request does not match that found on the server."),
    _E(105, "TRANSACTIONAL_ID_NOT_FOUND", False, "The transactionalId could not be found."),
    _E(106, "FETCH_SESSION_TOPIC_ID_ERROR", True, "The fetch session encountered inconsistent topic ID usage."),
    _E(107, "INELIGIBLE_REPLICA", False, "The new ISR contains at least one ineligible replica."),
    _E(108, "NEW_LEADER_ELECTED", False, "The AlterPartition request successfully updated the partition state but the leader has changed."),
    _E(109, "OFFSET_MOVED_TO_TIERED_STORAGE", False, "The requested offset is moved to tiered storage."),
    _E(110, "FENCED_MEMBER_EPOCH", False, "The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin."),
    _E(111, "UNRELEASED_INSTANCE_ID", False, "The instance ID is still used by another member in the consumer group. That member must leave first."),
    _E(112, "UNSUPPORTED_ASSIGNOR", False, "The assignor or its version range is not supported by the consumer group."),
    _E(113, "STALE_MEMBER_EPOCH", False, "The member epoch is stale. The member must retry after receiving its updated member epoch via the ConsumerGroupHeartbeat API."),
    _E(114, "MISMATCHED_ENDPOINT_TYPE", False, "The request was sent to an endpoint of the wrong type."),
    _E(115, "UNSUPPORTED_ENDPOINT_TYPE", False, "This endpoint type is not supported yet."),
    _E(116, "UNKNOWN_CONTROLLER_ID", False, "This controller ID is not known."),
    _E(117, "UNKNOWN_SUBSCRIPTION_ID", False, "Client sent a push telemetry request with an invalid or outdated subscription ID."),
    _E(118, "TELEMETRY_TOO_LARGE", False, "Client sent a push telemetry request larger than the maximum size the broker will accept."),
    _E(119, "INVALID_REGISTRATION", False, "The controller has considered the broker registration to be invalid."),
    _E(120, "TRANSACTION_ABORTABLE", False, "The server encountered an error with the transaction. The client can abort the transaction to continue using this transactional ID."),
    _E(121, "INVALID_RECORD_STATE", False, "The record state is invalid. The acknowledgement of delivery could not be completed."),
    _E(122, "SHARE_SESSION_NOT_FOUND", True, "The share session was not found."),
    _E(123, "INVALID_SHARE_SESSION_EPOCH", True, "The share session epoch is invalid."),
    _E(124, "FENCED_STATE_EPOCH", False, "The share coordinator rejected the request because the share-group state epoch did not match."),
    _E(125, "INVALID_VOTER_KEY", False, "The voter key doesn't match the receiving replica's key."),
    _E(126, "DUPLICATE_VOTER", False, "The voter is already part of the set of voters."),
    _E(127, "VOTER_NOT_FOUND", False, "The voter is not part of the set of voters."),
    _E(128, "INVALID_REGULAR_EXPRESSION", False, "The regular expression is not valid."),
    _E(129, "REBOOTSTRAP_REQUIRED", False, "Client metadata is stale. The client should rebootstrap to obtain new metadata."),
    _E(130, "STREAMS_INVALID_TOPOLOGY", False, "The supplied topology is invalid."),
    _E(131, "STREAMS_INVALID_TOPOLOGY_EPOCH", False, "The supplied topology epoch is invalid."),
    _E(132, "STREAMS_TOPOLOGY_FENCED", False, "The supplied topology epoch is outdated."),
    _E(133, "SHARE_SESSION_LIMIT_REACHED", True, "The limit of share sessions has been reached."),
)

BY_CODE: dict[int, ErrorCode] = {e.code: e for e in ERROR_CODES}
BY_NAME: dict[str, ErrorCode] = {e.name: e for e in ERROR_CODES}


def for_code(code: int) -> ErrorCode:
    """The entry for ``code``; unknown codes read as UNKNOWN_SERVER_ERROR, as Kafka's clients do."""
    return BY_CODE.get(code, BY_CODE[-1])


# Int constants for the codes kafkalite uses, taken from the table (not restated).
NONE: int = BY_NAME["NONE"].code
UNKNOWN_SERVER_ERROR: int = BY_NAME["UNKNOWN_SERVER_ERROR"].code
UNKNOWN_TOPIC_OR_PARTITION: int = BY_NAME["UNKNOWN_TOPIC_OR_PARTITION"].code
LEADER_NOT_AVAILABLE: int = BY_NAME["LEADER_NOT_AVAILABLE"].code
NOT_LEADER_OR_FOLLOWER: int = BY_NAME["NOT_LEADER_OR_FOLLOWER"].code
REQUEST_TIMED_OUT: int = BY_NAME["REQUEST_TIMED_OUT"].code
BROKER_NOT_AVAILABLE: int = BY_NAME["BROKER_NOT_AVAILABLE"].code
STALE_CONTROLLER_EPOCH: int = BY_NAME["STALE_CONTROLLER_EPOCH"].code
INVALID_TOPIC_EXCEPTION: int = BY_NAME["INVALID_TOPIC_EXCEPTION"].code
TOPIC_AUTHORIZATION_FAILED: int = BY_NAME["TOPIC_AUTHORIZATION_FAILED"].code
CLUSTER_AUTHORIZATION_FAILED: int = BY_NAME["CLUSTER_AUTHORIZATION_FAILED"].code
SECURITY_DISABLED: int = BY_NAME["SECURITY_DISABLED"].code
UNSUPPORTED_VERSION: int = BY_NAME["UNSUPPORTED_VERSION"].code
TOPIC_ALREADY_EXISTS: int = BY_NAME["TOPIC_ALREADY_EXISTS"].code
INVALID_PARTITIONS: int = BY_NAME["INVALID_PARTITIONS"].code
INVALID_REPLICATION_FACTOR: int = BY_NAME["INVALID_REPLICATION_FACTOR"].code
INVALID_REPLICA_ASSIGNMENT: int = BY_NAME["INVALID_REPLICA_ASSIGNMENT"].code
INVALID_CONFIG: int = BY_NAME["INVALID_CONFIG"].code
NOT_CONTROLLER: int = BY_NAME["NOT_CONTROLLER"].code
INVALID_REQUEST: int = BY_NAME["INVALID_REQUEST"].code
POLICY_VIOLATION: int = BY_NAME["POLICY_VIOLATION"].code
KAFKA_STORAGE_ERROR: int = BY_NAME["KAFKA_STORAGE_ERROR"].code
FENCED_LEADER_EPOCH: int = BY_NAME["FENCED_LEADER_EPOCH"].code
UNKNOWN_LEADER_EPOCH: int = BY_NAME["UNKNOWN_LEADER_EPOCH"].code
STALE_BROKER_EPOCH: int = BY_NAME["STALE_BROKER_EPOCH"].code
BROKER_ID_NOT_REGISTERED: int = BY_NAME["BROKER_ID_NOT_REGISTERED"].code
INCONSISTENT_CLUSTER_ID: int = BY_NAME["INCONSISTENT_CLUSTER_ID"].code
DUPLICATE_BROKER_REGISTRATION: int = BY_NAME["DUPLICATE_BROKER_REGISTRATION"].code
THROTTLING_QUOTA_EXCEEDED: int = BY_NAME["THROTTLING_QUOTA_EXCEEDED"].code
UNKNOWN_TOPIC_ID: int = BY_NAME["UNKNOWN_TOPIC_ID"].code
INCONSISTENT_TOPIC_ID: int = BY_NAME["INCONSISTENT_TOPIC_ID"].code
UNSUPPORTED_SASL_MECHANISM: int = BY_NAME["UNSUPPORTED_SASL_MECHANISM"].code
ILLEGAL_SASL_STATE: int = BY_NAME["ILLEGAL_SASL_STATE"].code
SASL_AUTHENTICATION_FAILED: int = BY_NAME["SASL_AUTHENTICATION_FAILED"].code
# The SCRAM credential apis' (KIP-554).
RESOURCE_NOT_FOUND: int = BY_NAME["RESOURCE_NOT_FOUND"].code
DUPLICATE_RESOURCE: int = BY_NAME["DUPLICATE_RESOURCE"].code
UNACCEPTABLE_CREDENTIAL: int = BY_NAME["UNACCEPTABLE_CREDENTIAL"].code
# DescribeCluster's (KIP-919).
MISMATCHED_ENDPOINT_TYPE: int = BY_NAME["MISMATCHED_ENDPOINT_TYPE"].code
UNSUPPORTED_ENDPOINT_TYPE: int = BY_NAME["UNSUPPORTED_ENDPOINT_TYPE"].code
# The data path's.
OFFSET_OUT_OF_RANGE: int = BY_NAME["OFFSET_OUT_OF_RANGE"].code
CORRUPT_MESSAGE: int = BY_NAME["CORRUPT_MESSAGE"].code
MESSAGE_TOO_LARGE: int = BY_NAME["MESSAGE_TOO_LARGE"].code
INVALID_REQUIRED_ACKS: int = BY_NAME["INVALID_REQUIRED_ACKS"].code
INVALID_RECORD: int = BY_NAME["INVALID_RECORD"].code
INVALID_TXN_STATE: int = BY_NAME["INVALID_TXN_STATE"].code
UNSUPPORTED_COMPRESSION_TYPE: int = BY_NAME["UNSUPPORTED_COMPRESSION_TYPE"].code
FETCH_SESSION_ID_NOT_FOUND: int = BY_NAME["FETCH_SESSION_ID_NOT_FOUND"].code
INVALID_FETCH_SESSION_EPOCH: int = BY_NAME["INVALID_FETCH_SESSION_EPOCH"].code
RECORD_LIST_TOO_LARGE: int = BY_NAME["RECORD_LIST_TOO_LARGE"].code
INVALID_FETCH_SIZE: int = BY_NAME["INVALID_FETCH_SIZE"].code
# Replication's.
REPLICA_NOT_AVAILABLE: int = BY_NAME["REPLICA_NOT_AVAILABLE"].code
NOT_ENOUGH_REPLICAS: int = BY_NAME["NOT_ENOUGH_REPLICAS"].code
NOT_ENOUGH_REPLICAS_AFTER_APPEND: int = BY_NAME["NOT_ENOUGH_REPLICAS_AFTER_APPEND"].code
INVALID_UPDATE_VERSION: int = BY_NAME["INVALID_UPDATE_VERSION"].code
INELIGIBLE_REPLICA: int = BY_NAME["INELIGIBLE_REPLICA"].code
# ElectLeaders'.
PREFERRED_LEADER_NOT_AVAILABLE: int = BY_NAME["PREFERRED_LEADER_NOT_AVAILABLE"].code
ELIGIBLE_LEADERS_NOT_AVAILABLE: int = BY_NAME["ELIGIBLE_LEADERS_NOT_AVAILABLE"].code
ELECTION_NOT_NEEDED: int = BY_NAME["ELECTION_NOT_NEEDED"].code
NO_REASSIGNMENT_IN_PROGRESS: int = BY_NAME["NO_REASSIGNMENT_IN_PROGRESS"].code
# The group coordinator's.
COORDINATOR_LOAD_IN_PROGRESS: int = BY_NAME["COORDINATOR_LOAD_IN_PROGRESS"].code
COORDINATOR_NOT_AVAILABLE: int = BY_NAME["COORDINATOR_NOT_AVAILABLE"].code
NOT_COORDINATOR: int = BY_NAME["NOT_COORDINATOR"].code
ILLEGAL_GENERATION: int = BY_NAME["ILLEGAL_GENERATION"].code
INCONSISTENT_GROUP_PROTOCOL: int = BY_NAME["INCONSISTENT_GROUP_PROTOCOL"].code
INVALID_GROUP_ID: int = BY_NAME["INVALID_GROUP_ID"].code
UNKNOWN_MEMBER_ID: int = BY_NAME["UNKNOWN_MEMBER_ID"].code
INVALID_SESSION_TIMEOUT: int = BY_NAME["INVALID_SESSION_TIMEOUT"].code
REBALANCE_IN_PROGRESS: int = BY_NAME["REBALANCE_IN_PROGRESS"].code
INVALID_COMMIT_OFFSET_SIZE: int = BY_NAME["INVALID_COMMIT_OFFSET_SIZE"].code
GROUP_AUTHORIZATION_FAILED: int = BY_NAME["GROUP_AUTHORIZATION_FAILED"].code
GROUP_ID_NOT_FOUND: int = BY_NAME["GROUP_ID_NOT_FOUND"].code
NON_EMPTY_GROUP: int = BY_NAME["NON_EMPTY_GROUP"].code
GROUP_MAX_SIZE_REACHED: int = BY_NAME["GROUP_MAX_SIZE_REACHED"].code
FENCED_INSTANCE_ID: int = BY_NAME["FENCED_INSTANCE_ID"].code
MEMBER_ID_REQUIRED: int = BY_NAME["MEMBER_ID_REQUIRED"].code
GROUP_SUBSCRIBED_TO_TOPIC: int = BY_NAME["GROUP_SUBSCRIBED_TO_TOPIC"].code
UNSTABLE_OFFSET_COMMIT: int = BY_NAME["UNSTABLE_OFFSET_COMMIT"].code
# The transaction coordinator's.
CONCURRENT_TRANSACTIONS: int = BY_NAME["CONCURRENT_TRANSACTIONS"].code
PRODUCER_FENCED: int = BY_NAME["PRODUCER_FENCED"].code
INVALID_PRODUCER_EPOCH: int = BY_NAME["INVALID_PRODUCER_EPOCH"].code
INVALID_PRODUCER_ID_MAPPING: int = BY_NAME["INVALID_PRODUCER_ID_MAPPING"].code
INVALID_TRANSACTION_TIMEOUT: int = BY_NAME["INVALID_TRANSACTION_TIMEOUT"].code
TRANSACTION_ABORTABLE: int = BY_NAME["TRANSACTION_ABORTABLE"].code
TRANSACTIONAL_ID_NOT_FOUND: int = BY_NAME["TRANSACTIONAL_ID_NOT_FOUND"].code
INVALID_REGULAR_EXPRESSION: int = BY_NAME["INVALID_REGULAR_EXPRESSION"].code
NETWORK_EXCEPTION: int = BY_NAME["NETWORK_EXCEPTION"].code
TRANSACTION_COORDINATOR_FENCED: int = BY_NAME["TRANSACTION_COORDINATOR_FENCED"].code
UNSUPPORTED_FOR_MESSAGE_FORMAT: int = BY_NAME["UNSUPPORTED_FOR_MESSAGE_FORMAT"].code
OPERATION_NOT_ATTEMPTED: int = BY_NAME["OPERATION_NOT_ATTEMPTED"].code
TRANSACTIONAL_ID_AUTHORIZATION_FAILED: int = BY_NAME["TRANSACTIONAL_ID_AUTHORIZATION_FAILED"].code
FENCED_MEMBER_EPOCH: int = BY_NAME["FENCED_MEMBER_EPOCH"].code
UNRELEASED_INSTANCE_ID: int = BY_NAME["UNRELEASED_INSTANCE_ID"].code
UNSUPPORTED_ASSIGNOR: int = BY_NAME["UNSUPPORTED_ASSIGNOR"].code
STALE_MEMBER_EPOCH: int = BY_NAME["STALE_MEMBER_EPOCH"].code
INVALID_RECORD_STATE: int = BY_NAME["INVALID_RECORD_STATE"].code
SHARE_SESSION_NOT_FOUND: int = BY_NAME["SHARE_SESSION_NOT_FOUND"].code
INVALID_SHARE_SESSION_EPOCH: int = BY_NAME["INVALID_SHARE_SESSION_EPOCH"].code
FENCED_STATE_EPOCH: int = BY_NAME["FENCED_STATE_EPOCH"].code
SHARE_SESSION_LIMIT_REACHED: int = BY_NAME["SHARE_SESSION_LIMIT_REACHED"].code
