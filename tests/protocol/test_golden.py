"""Golden bytes for the inter-broker control apis, written by hand from Kafka's message specs.

Each expected body is spelled out field by field (big-endian ``struct.pack`` pieces and literal
length bytes with comments), so these tests do not depend on kafkalite's codec: ``encode_body``
must produce exactly these bytes and ``decode_body`` must give back the value.

Wire reminders: non-flexible strings are int16 length + bytes, arrays int32 count + items, a null
string has length -1. Flexible (compact) strings and arrays carry uvarint(length + 1) (0 = null),
and every flexible struct ends with its tagged-field section (0x00 when empty).
"""

from __future__ import annotations

import uuid

import pytest

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.messages import leader_and_isr as lai
from kafkalite.protocol.messages import stop_replica as sr
from kafkalite.protocol.messages import update_metadata as um

from .golden_bytes import FALSE, NO_TAGS, TRUE, i8, i16, i32, i64

TOPIC_ID = uuid.UUID("0123456789abcdef0123456789abcdef")
TOPIC_ID_BYTES = bytes.fromhex("0123456789abcdef0123456789abcdef")

LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA = 4, 5, 6

CASES = []


def case(name, api_key, version, response, value, expected):
    CASES.append(pytest.param(api_key, version, response, value, expected, id=name))


# --- LeaderAndIsr request ----------------------------------------------------------------------

# v0: partition states at the top level, each naming its topic; no broker epoch; no is_new.
case(
    "LeaderAndIsr-v0-request", LEADER_AND_ISR, 0, False,
    lai.REQUEST(
        controller_id=1,
        controller_epoch=2,
        ungrouped_partition_states=[
            lai.LEADER_AND_ISR_PARTITION_STATE(
                topic_name="t", partition_index=0, controller_epoch=2, leader=1,
                leader_epoch=5, isr=[1, 2], partition_epoch=7, replicas=[1, 2],
            ),
        ],
        live_leaders=[lai.LEADER_AND_ISR_LIVE_LEADER(broker_id=1, host_name="h", port=9092)],
    ),
    i32(1)  # controller_id
    + i32(2)  # controller_epoch
    + i32(1)  # ungrouped_partition_states: 1 item
    + i16(1) + b"t"  # . topic_name
    + i32(0)  # . partition_index
    + i32(2)  # . controller_epoch
    + i32(1)  # . leader
    + i32(5)  # . leader_epoch
    + i32(2) + i32(1) + i32(2)  # . isr [1, 2]
    + i32(7)  # . partition_epoch (ZkVersion)
    + i32(2) + i32(1) + i32(2)  # . replicas [1, 2]
    + i32(1)  # live_leaders: 1 item
    + i32(1) + i16(1) + b"h" + i32(9092),  # . broker_id, host_name, port
)

# v4: first flexible version; partitions grouped by topic; adding/removing replicas, is_new.
case(
    "LeaderAndIsr-v4-request", LEADER_AND_ISR, 4, False,
    lai.REQUEST(
        controller_id=1,
        controller_epoch=2,
        broker_epoch=100,
        topic_states=[
            lai.LEADER_AND_ISR_TOPIC_STATE(
                topic_name="t",
                partition_states=[
                    lai.LEADER_AND_ISR_PARTITION_STATE(
                        partition_index=0, controller_epoch=2, leader=1, leader_epoch=5,
                        isr=[1], partition_epoch=7, replicas=[1], adding_replicas=[],
                        removing_replicas=[2], is_new=True,
                    ),
                ],
            ),
        ],
        live_leaders=[],
    ),
    i32(1)  # controller_id
    + i32(2)  # controller_epoch
    + i64(100)  # broker_epoch
    + b"\x02"  # topic_states: compact array of 1
    + b"\x02" + b"t"  # . topic_name (compact, len+1 = 2)
    + b"\x02"  # . partition_states: 1 item
    + i32(0) + i32(2) + i32(1) + i32(5)  # .. partition_index, controller_epoch, leader, leader_epoch
    + b"\x02" + i32(1)  # .. isr [1]
    + i32(7)  # .. partition_epoch
    + b"\x02" + i32(1)  # .. replicas [1]
    + b"\x01"  # .. adding_replicas [] (empty compact array)
    + b"\x02" + i32(2)  # .. removing_replicas [2]
    + TRUE  # .. is_new
    + NO_TAGS  # .. partition state tags
    + NO_TAGS  # . topic state tags
    + b"\x01"  # live_leaders: empty
    + NO_TAGS,
)

# v7: is_kraft_controller (a regular field, right after controller_id), type, topic ids,
# leader_recovery_state.
case(
    "LeaderAndIsr-v7-request", LEADER_AND_ISR, 7, False,
    lai.REQUEST(
        controller_id=3000,
        is_kraft_controller=True,
        controller_epoch=5,
        broker_epoch=42,
        type=2,
        topic_states=[
            lai.LEADER_AND_ISR_TOPIC_STATE(
                topic_name="foo",
                topic_id=TOPIC_ID,
                partition_states=[
                    lai.LEADER_AND_ISR_PARTITION_STATE(
                        partition_index=1, controller_epoch=5, leader=1, leader_epoch=9,
                        isr=[1, 2], partition_epoch=11, replicas=[1, 2], leader_recovery_state=1,
                    ),
                ],
            ),
        ],
        live_leaders=[lai.LEADER_AND_ISR_LIVE_LEADER(broker_id=1, host_name="localhost", port=9092)],
    ),
    i32(3000)  # controller_id
    + TRUE  # is_kraft_controller
    + i32(5)  # controller_epoch
    + i64(42)  # broker_epoch
    + i8(2)  # type
    + b"\x02"  # topic_states: 1 item
    + b"\x04" + b"foo"  # . topic_name
    + TOPIC_ID_BYTES  # . topic_id
    + b"\x02"  # . partition_states: 1 item
    + i32(1) + i32(5) + i32(1) + i32(9)  # .. partition_index, controller_epoch, leader, leader_epoch
    + b"\x03" + i32(1) + i32(2)  # .. isr [1, 2]
    + i32(11)  # .. partition_epoch
    + b"\x03" + i32(1) + i32(2)  # .. replicas [1, 2]
    + b"\x01"  # .. adding_replicas []
    + b"\x01"  # .. removing_replicas []
    + FALSE  # .. is_new
    + i8(1)  # .. leader_recovery_state
    + NO_TAGS
    + NO_TAGS
    + b"\x02"  # live_leaders: 1 item
    + i32(1) + b"\x0a" + b"localhost" + i32(9092) + NO_TAGS  # . broker_id, host_name, port
    + NO_TAGS,
)

# --- LeaderAndIsr response ---------------------------------------------------------------------

case(
    "LeaderAndIsr-v0-response", LEADER_AND_ISR, 0, True,
    lai.RESPONSE(
        error_code=0,
        partition_errors=[
            lai.LEADER_AND_ISR_PARTITION_ERROR(topic_name="t", partition_index=0, error_code=0),
            lai.LEADER_AND_ISR_PARTITION_ERROR(topic_name="t", partition_index=1, error_code=6),
        ],
    ),
    i16(0)  # error_code
    + i32(2)  # partition_errors: 2 items
    + i16(1) + b"t" + i32(0) + i16(0)  # . topic_name, partition_index, error_code
    + i16(1) + b"t" + i32(1) + i16(6),  # . NOT_LEADER_OR_FOLLOWER
)

# v4: flexible, still per partition with topic names.
case(
    "LeaderAndIsr-v4-response", LEADER_AND_ISR, 4, True,
    lai.RESPONSE(
        error_code=0,
        partition_errors=[
            lai.LEADER_AND_ISR_PARTITION_ERROR(topic_name="t", partition_index=0, error_code=0),
        ],
    ),
    i16(0)  # error_code
    + b"\x02"  # partition_errors: 1 item
    + b"\x02" + b"t" + i32(0) + i16(0) + NO_TAGS
    + NO_TAGS,
)

# v5: grouped by topic id; partition errors no longer carry a topic name.
case(
    "LeaderAndIsr-v5-response", LEADER_AND_ISR, 5, True,
    lai.RESPONSE(
        error_code=0,
        topics=[
            lai.LEADER_AND_ISR_TOPIC_ERROR(
                topic_id=TOPIC_ID,
                partition_errors=[
                    lai.LEADER_AND_ISR_PARTITION_ERROR(partition_index=0, error_code=0),
                    lai.LEADER_AND_ISR_PARTITION_ERROR(partition_index=1, error_code=75),
                ],
            ),
        ],
    ),
    i16(0)  # error_code
    + b"\x02"  # topics: 1 item
    + TOPIC_ID_BYTES  # . topic_id
    + b"\x03"  # . partition_errors: 2 items
    + i32(0) + i16(0) + NO_TAGS  # .. partition_index, error_code
    + i32(1) + i16(75) + NO_TAGS  # .. UNKNOWN_LEADER_EPOCH
    + NO_TAGS
    + NO_TAGS,
)

# --- StopReplica request -----------------------------------------------------------------------

# v0: (topic, partition) pairs and one delete flag.
case(
    "StopReplica-v0-request", STOP_REPLICA, 0, False,
    sr.REQUEST(
        controller_id=1,
        controller_epoch=2,
        delete_partitions=True,
        ungrouped_partitions=[
            sr.STOP_REPLICA_PARTITION_V0(topic_name="t", partition_index=0),
            sr.STOP_REPLICA_PARTITION_V0(topic_name="t", partition_index=1),
        ],
    ),
    i32(1)  # controller_id
    + i32(2)  # controller_epoch
    + TRUE  # delete_partitions
    + i32(2)  # ungrouped_partitions: 2 items
    + i16(1) + b"t" + i32(0)
    + i16(1) + b"t" + i32(1),
)

# v1: broker epoch; partition indexes grouped by topic.
case(
    "StopReplica-v1-request", STOP_REPLICA, 1, False,
    sr.REQUEST(
        controller_id=1,
        controller_epoch=2,
        broker_epoch=10,
        delete_partitions=False,
        topics=[sr.STOP_REPLICA_TOPIC_V1(name="t", partition_indexes=[0, 1])],
    ),
    i32(1)  # controller_id
    + i32(2)  # controller_epoch
    + i64(10)  # broker_epoch
    + FALSE  # delete_partitions
    + i32(1)  # topics: 1 item
    + i16(1) + b"t"  # . name
    + i32(2) + i32(0) + i32(1),  # . partition_indexes [0, 1]
)

# v2: first flexible version, same fields as v1.
case(
    "StopReplica-v2-request", STOP_REPLICA, 2, False,
    sr.REQUEST(
        controller_id=1,
        controller_epoch=2,
        broker_epoch=10,
        delete_partitions=True,
        topics=[sr.STOP_REPLICA_TOPIC_V1(name="t", partition_indexes=[0, 1])],
    ),
    i32(1) + i32(2) + i64(10)  # controller_id, controller_epoch, broker_epoch
    + TRUE  # delete_partitions
    + b"\x02"  # topics: 1 item
    + b"\x02" + b"t"  # . name
    + b"\x03" + i32(0) + i32(1)  # . partition_indexes [0, 1]
    + NO_TAGS
    + NO_TAGS,
)

# v3: per-partition leader epoch and delete flag; delete_partitions is gone.
case(
    "StopReplica-v3-request", STOP_REPLICA, 3, False,
    sr.REQUEST(
        controller_id=1,
        controller_epoch=2,
        broker_epoch=10,
        topic_states=[
            sr.STOP_REPLICA_TOPIC_STATE(
                topic_name="t",
                partition_states=[
                    sr.STOP_REPLICA_PARTITION_STATE(
                        partition_index=0, leader_epoch=4, delete_partition=True
                    ),
                    sr.STOP_REPLICA_PARTITION_STATE(partition_index=1),  # leader_epoch -1
                ],
            ),
        ],
    ),
    i32(1) + i32(2) + i64(10)  # controller_id, controller_epoch, broker_epoch
    + b"\x02"  # topic_states: 1 item
    + b"\x02" + b"t"  # . topic_name
    + b"\x03"  # . partition_states: 2 items
    + i32(0) + i32(4) + TRUE + NO_TAGS  # .. partition_index, leader_epoch, delete_partition
    + i32(1) + i32(-1) + FALSE + NO_TAGS  # .. leader_epoch defaults to -1
    + NO_TAGS
    + NO_TAGS,
)

# v4: is_kraft_controller right after controller_id.
case(
    "StopReplica-v4-request", STOP_REPLICA, 4, False,
    sr.REQUEST(
        controller_id=1, is_kraft_controller=True, controller_epoch=2, broker_epoch=10,
        topic_states=[],
    ),
    i32(1)  # controller_id
    + TRUE  # is_kraft_controller
    + i32(2)  # controller_epoch
    + i64(10)  # broker_epoch
    + b"\x01"  # topic_states: empty
    + NO_TAGS,
)

# --- StopReplica response ----------------------------------------------------------------------

case(
    "StopReplica-v0-response", STOP_REPLICA, 0, True,
    sr.RESPONSE(
        error_code=0,
        partition_errors=[
            sr.STOP_REPLICA_PARTITION_ERROR(topic_name="t", partition_index=0, error_code=0),
        ],
    ),
    i16(0)  # error_code
    + i32(1)  # partition_errors: 1 item
    + i16(1) + b"t" + i32(0) + i16(0),
)

case(
    "StopReplica-v2-response", STOP_REPLICA, 2, True,
    sr.RESPONSE(
        error_code=11,
        partition_errors=[
            sr.STOP_REPLICA_PARTITION_ERROR(topic_name="t", partition_index=0, error_code=3),
        ],
    ),
    i16(11)  # error_code STALE_CONTROLLER_EPOCH
    + b"\x02"  # partition_errors: 1 item
    + b"\x02" + b"t" + i32(0) + i16(3) + NO_TAGS  # . UNKNOWN_TOPIC_OR_PARTITION
    + NO_TAGS,
)

# --- UpdateMetadata request --------------------------------------------------------------------

# v0: ungrouped partition states; each live broker has exactly one (plaintext) host and port,
# no endpoints array and no rack.
case(
    "UpdateMetadata-v0-request", UPDATE_METADATA, 0, False,
    um.REQUEST(
        controller_id=1,
        controller_epoch=2,
        ungrouped_partition_states=[
            um.UPDATE_METADATA_PARTITION_STATE(
                topic_name="t", partition_index=0, controller_epoch=2, leader=1,
                leader_epoch=3, isr=[1], zk_version=4, replicas=[1],
            ),
        ],
        live_brokers=[
            um.UPDATE_METADATA_BROKER(id=1, v0_host="h", v0_port=9092),
            um.UPDATE_METADATA_BROKER(id=2, v0_host="h2", v0_port=9093),
        ],
    ),
    i32(1)  # controller_id
    + i32(2)  # controller_epoch
    + i32(1)  # ungrouped_partition_states: 1 item
    + i16(1) + b"t"  # . topic_name
    + i32(0) + i32(2) + i32(1) + i32(3)  # . partition_index, controller_epoch, leader, leader_epoch
    + i32(1) + i32(1)  # . isr [1]
    + i32(4)  # . zk_version
    + i32(1) + i32(1)  # . replicas [1]
    + i32(2)  # live_brokers: 2 items
    + i32(1) + i16(1) + b"h" + i32(9092)  # . id, v0_host, v0_port
    + i32(2) + i16(2) + b"h2" + i32(9093),
)

# v3: endpoints with listener names; nullable rack (here null: int16 -1).
case(
    "UpdateMetadata-v3-request", UPDATE_METADATA, 3, False,
    um.REQUEST(
        controller_id=1,
        controller_epoch=2,
        ungrouped_partition_states=[],
        live_brokers=[
            um.UPDATE_METADATA_BROKER(
                id=1,
                endpoints=[
                    um.UPDATE_METADATA_ENDPOINT(
                        port=9092, host="h", listener="PLAINTEXT", security_protocol=0
                    ),
                ],
                rack=None,
            ),
            um.UPDATE_METADATA_BROKER(id=2, endpoints=[], rack="r1"),
        ],
    ),
    i32(1)  # controller_id
    + i32(2)  # controller_epoch
    + i32(0)  # ungrouped_partition_states: empty
    + i32(2)  # live_brokers: 2 items
    + i32(1)  # . id
    + i32(1)  # . endpoints: 1 item
    + i32(9092) + i16(1) + b"h" + i16(9) + b"PLAINTEXT" + i16(0)  # .. port, host, listener, protocol
    + i16(-1)  # . rack: null
    + i32(2)  # . id
    + i32(0)  # . endpoints: empty
    + i16(2) + b"r1",  # . rack
)

# v6: first flexible version; topic states (v5+), offline replicas (v4+), a null compact rack.
case(
    "UpdateMetadata-v6-request", UPDATE_METADATA, 6, False,
    um.REQUEST(
        controller_id=1,
        controller_epoch=2,
        broker_epoch=10,
        topic_states=[
            um.UPDATE_METADATA_TOPIC_STATE(
                topic_name="t",
                partition_states=[
                    um.UPDATE_METADATA_PARTITION_STATE(
                        partition_index=0, controller_epoch=2, leader=1, leader_epoch=3,
                        isr=[1, 2], zk_version=4, replicas=[1, 2], offline_replicas=[2],
                    ),
                ],
            ),
        ],
        live_brokers=[
            um.UPDATE_METADATA_BROKER(
                id=1,
                endpoints=[
                    um.UPDATE_METADATA_ENDPOINT(
                        port=9092, host="h", listener="PLAINTEXT", security_protocol=0
                    ),
                ],
                rack=None,
            ),
            um.UPDATE_METADATA_BROKER(id=2, endpoints=[], rack="r1"),
        ],
    ),
    i32(1)  # controller_id
    + i32(2)  # controller_epoch
    + i64(10)  # broker_epoch
    + b"\x02"  # topic_states: 1 item
    + b"\x02" + b"t"  # . topic_name
    + b"\x02"  # . partition_states: 1 item
    + i32(0) + i32(2) + i32(1) + i32(3)  # .. partition_index, controller_epoch, leader, leader_epoch
    + b"\x03" + i32(1) + i32(2)  # .. isr [1, 2]
    + i32(4)  # .. zk_version
    + b"\x03" + i32(1) + i32(2)  # .. replicas [1, 2]
    + b"\x02" + i32(2)  # .. offline_replicas [2]
    + NO_TAGS
    + NO_TAGS
    + b"\x03"  # live_brokers: 2 items
    + i32(1)  # . id
    + b"\x02"  # . endpoints: 1 item
    + i32(9092) + b"\x02" + b"h" + b"\x0a" + b"PLAINTEXT" + i16(0) + NO_TAGS
    + b"\x00"  # . rack: null (compact length 0)
    + NO_TAGS
    + i32(2)  # . id
    + b"\x01"  # . endpoints: empty
    + b"\x03" + b"r1"  # . rack
    + NO_TAGS
    + NO_TAGS,
)

# v8: is_kraft_controller (regular, after controller_id); type is tagged field 0, written only
# when not its default 0; topic ids (v7+).
case(
    "UpdateMetadata-v8-request", UPDATE_METADATA, 8, False,
    um.REQUEST(
        controller_id=1,
        is_kraft_controller=True,
        type=2,
        controller_epoch=2,
        broker_epoch=10,
        topic_states=[
            um.UPDATE_METADATA_TOPIC_STATE(topic_name="t", topic_id=TOPIC_ID, partition_states=[]),
        ],
        live_brokers=[],
    ),
    i32(1)  # controller_id
    + TRUE  # is_kraft_controller
    + i32(2)  # controller_epoch
    + i64(10)  # broker_epoch
    + b"\x02"  # topic_states: 1 item
    + b"\x02" + b"t"  # . topic_name
    + TOPIC_ID_BYTES  # . topic_id
    + b"\x01"  # . partition_states: empty
    + NO_TAGS
    + b"\x01"  # live_brokers: empty
    + b"\x01"  # tagged fields: 1
    + b"\x00" + b"\x01" + i8(2),  # . tag 0 (type), size 1, value 2 (full)
)

case(
    "UpdateMetadata-v8-request-default-type", UPDATE_METADATA, 8, False,
    um.REQUEST(controller_id=1, controller_epoch=2, broker_epoch=10, topic_states=[], live_brokers=[]),
    i32(1)  # controller_id
    + FALSE  # is_kraft_controller
    + i32(2)  # controller_epoch
    + i64(10)  # broker_epoch
    + b"\x01"  # topic_states: empty
    + b"\x01"  # live_brokers: empty
    + NO_TAGS,  # type 0 is the default: not written
)

# --- UpdateMetadata response -------------------------------------------------------------------

case("UpdateMetadata-v0-response", UPDATE_METADATA, 0, True, um.RESPONSE(error_code=0), i16(0))
case(
    "UpdateMetadata-v6-response", UPDATE_METADATA, 6, True,
    um.RESPONSE(error_code=11),
    i16(11) + NO_TAGS,  # STALE_CONTROLLER_EPOCH
)


@pytest.mark.parametrize(("api_key", "version", "response", "value", "expected"), CASES)
def test_encode_gives_golden_bytes(api_key, version, response, value, expected):
    assert encode_body(api_key, version, value, response=response) == expected


@pytest.mark.parametrize(("api_key", "version", "response", "value", "expected"), CASES)
def test_decode_gives_back_the_value(api_key, version, response, value, expected):
    assert decode_body(api_key, version, expected, response=response) == value
