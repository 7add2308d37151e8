"""Every api kafkalite declares, by key. Add a module here to add an api (docs/protocol.md)."""

from __future__ import annotations

from ..schema import Api
from .add_offsets_to_txn import ADD_OFFSETS_TO_TXN
from .add_partitions_to_txn import ADD_PARTITIONS_TO_TXN
from .allocate_producer_ids import ALLOCATE_PRODUCER_IDS
from .alter_client_quotas import ALTER_CLIENT_QUOTAS
from .alter_configs import ALTER_CONFIGS
from .alter_partition import ALTER_PARTITION
from .alter_partition_reassignments import ALTER_PARTITION_REASSIGNMENTS
from .alter_replica_log_dirs import ALTER_REPLICA_LOG_DIRS
from .alter_share_group_offsets import ALTER_SHARE_GROUP_OFFSETS
from .alter_user_scram_credentials import ALTER_USER_SCRAM_CREDENTIALS
from .api_versions import API_VERSIONS
from .begin_quorum_epoch import BEGIN_QUORUM_EPOCH
from .broker_heartbeat import BROKER_HEARTBEAT
from .broker_registration import BROKER_REGISTRATION
from .consumer_group_describe import CONSUMER_GROUP_DESCRIBE
from .consumer_group_heartbeat import CONSUMER_GROUP_HEARTBEAT
from .create_acls import CREATE_ACLS
from .create_partitions import CREATE_PARTITIONS
from .create_topics import CREATE_TOPICS
from .delete_acls import DELETE_ACLS
from .delete_groups import DELETE_GROUPS
from .delete_records import DELETE_RECORDS
from .delete_share_group_offsets import DELETE_SHARE_GROUP_OFFSETS
from .delete_share_group_state import DELETE_SHARE_GROUP_STATE
from .delete_topics import DELETE_TOPICS
from .describe_acls import DESCRIBE_ACLS
from .describe_client_quotas import DESCRIBE_CLIENT_QUOTAS
from .describe_cluster import DESCRIBE_CLUSTER
from .describe_configs import DESCRIBE_CONFIGS
from .describe_groups import DESCRIBE_GROUPS
from .describe_log_dirs import DESCRIBE_LOG_DIRS
from .describe_producers import DESCRIBE_PRODUCERS
from .describe_quorum import DESCRIBE_QUORUM
from .describe_share_group_offsets import DESCRIBE_SHARE_GROUP_OFFSETS
from .describe_topic_partitions import DESCRIBE_TOPIC_PARTITIONS
from .describe_transactions import DESCRIBE_TRANSACTIONS
from .describe_user_scram_credentials import DESCRIBE_USER_SCRAM_CREDENTIALS
from .elect_leaders import ELECT_LEADERS
from .end_quorum_epoch import END_QUORUM_EPOCH
from .end_txn import END_TXN
from .fetch import FETCH
from .fetch_snapshot import FETCH_SNAPSHOT
from .find_coordinator import FIND_COORDINATOR
from .heartbeat import HEARTBEAT
from .incremental_alter_configs import INCREMENTAL_ALTER_CONFIGS
from .init_producer_id import INIT_PRODUCER_ID
from .initialize_share_group_state import INITIALIZE_SHARE_GROUP_STATE
from .join_group import JOIN_GROUP
from .leader_and_isr import LEADER_AND_ISR
from .leave_group import LEAVE_GROUP
from .list_config_resources import LIST_CONFIG_RESOURCES
from .list_groups import LIST_GROUPS
from .list_offsets import LIST_OFFSETS
from .list_partition_reassignments import LIST_PARTITION_REASSIGNMENTS
from .list_transactions import LIST_TRANSACTIONS
from .metadata import METADATA
from .offset_commit import OFFSET_COMMIT
from .offset_delete import OFFSET_DELETE
from .offset_fetch import OFFSET_FETCH
from .offset_for_leader_epoch import OFFSET_FOR_LEADER_EPOCH
from .produce import PRODUCE
from .read_share_group_state import READ_SHARE_GROUP_STATE
from .read_share_group_state_summary import READ_SHARE_GROUP_STATE_SUMMARY
from .sasl_authenticate import SASL_AUTHENTICATE
from .sasl_handshake import SASL_HANDSHAKE
from .share_acknowledge import SHARE_ACKNOWLEDGE
from .share_fetch import SHARE_FETCH
from .share_group_describe import SHARE_GROUP_DESCRIBE
from .share_group_heartbeat import SHARE_GROUP_HEARTBEAT
from .stop_replica import STOP_REPLICA
from .sync_group import SYNC_GROUP
from .txn_offset_commit import TXN_OFFSET_COMMIT
from .update_metadata import UPDATE_METADATA
from .vote import VOTE
from .write_share_group_state import WRITE_SHARE_GROUP_STATE
from .write_txn_markers import WRITE_TXN_MARKERS

ALL: tuple[Api, ...] = (
    PRODUCE,
    FETCH,
    LIST_OFFSETS,
    METADATA,
    LEADER_AND_ISR,
    STOP_REPLICA,
    UPDATE_METADATA,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    FIND_COORDINATOR,
    JOIN_GROUP,
    HEARTBEAT,
    LEAVE_GROUP,
    SYNC_GROUP,
    DESCRIBE_GROUPS,
    LIST_GROUPS,
    SASL_HANDSHAKE,
    API_VERSIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    DELETE_RECORDS,
    INIT_PRODUCER_ID,
    OFFSET_FOR_LEADER_EPOCH,
    ADD_PARTITIONS_TO_TXN,
    ADD_OFFSETS_TO_TXN,
    END_TXN,
    WRITE_TXN_MARKERS,
    TXN_OFFSET_COMMIT,
    DESCRIBE_ACLS,
    CREATE_ACLS,
    DELETE_ACLS,
    DESCRIBE_CONFIGS,
    ALTER_CONFIGS,
    ALTER_REPLICA_LOG_DIRS,
    DESCRIBE_LOG_DIRS,
    SASL_AUTHENTICATE,
    CREATE_PARTITIONS,
    DELETE_GROUPS,
    ELECT_LEADERS,
    INCREMENTAL_ALTER_CONFIGS,
    ALTER_PARTITION_REASSIGNMENTS,
    LIST_PARTITION_REASSIGNMENTS,
    OFFSET_DELETE,
    DESCRIBE_CLIENT_QUOTAS,
    ALTER_CLIENT_QUOTAS,
    VOTE,
    BEGIN_QUORUM_EPOCH,
    END_QUORUM_EPOCH,
    DESCRIBE_QUORUM,
    ALTER_PARTITION,
    FETCH_SNAPSHOT,
    DESCRIBE_CLUSTER,
    DESCRIBE_PRODUCERS,
    BROKER_REGISTRATION,
    BROKER_HEARTBEAT,
    DESCRIBE_TRANSACTIONS,
    LIST_TRANSACTIONS,
    DESCRIBE_USER_SCRAM_CREDENTIALS,
    ALTER_USER_SCRAM_CREDENTIALS,
    ALLOCATE_PRODUCER_IDS,
    CONSUMER_GROUP_HEARTBEAT,
    CONSUMER_GROUP_DESCRIBE,
    LIST_CONFIG_RESOURCES,
    DESCRIBE_TOPIC_PARTITIONS,
    INITIALIZE_SHARE_GROUP_STATE,
    READ_SHARE_GROUP_STATE,
    WRITE_SHARE_GROUP_STATE,
    DELETE_SHARE_GROUP_STATE,
    READ_SHARE_GROUP_STATE_SUMMARY,
    DESCRIBE_SHARE_GROUP_OFFSETS,
    ALTER_SHARE_GROUP_OFFSETS,
    DELETE_SHARE_GROUP_OFFSETS,
    SHARE_GROUP_HEARTBEAT,
    SHARE_GROUP_DESCRIBE,
    SHARE_FETCH,
    SHARE_ACKNOWLEDGE,
)

BY_KEY: dict[int, Api] = {a.key: a for a in ALL}
BY_NAME: dict[str, Api] = {a.name: a for a in ALL}
