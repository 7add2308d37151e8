"""An independent oracle: kio (PyPI ``kio``, generated from Kafka's own JSON specs).

For every version both kafkalite and kio declare, for ApiVersions, Metadata, CreateTopics,
DeleteTopics, BrokerRegistration and BrokerHeartbeat, request and response bodies (for the data
path apis, Produce, Fetch, ListOffsets, InitProducerId and OffsetForLeaderEpoch, and those of
groups, offsets, coordinators and transactions, chosen versions (DATA_PATH_VERSIONS): an old one
and the newest, which holds every tagged field):

(a) bytes kafkalite writes decode with kio to the same values;
(b) bytes kio writes decode with kafkalite to the same values;

and both write the same bytes (the canonical encoding: tagged fields at their default left out).

Also checks that each version has the same fields on both sides, so a field declared in the
wrong versions is caught even when the encodings happen to agree.
"""

from __future__ import annotations

import pytest

pytest.importorskip("kio")

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import BY_KEY
from kafkalite.protocol.schema import Array, Struct

from .kio_bridge import (
    kafkalite_to_dict,
    kio_compatible_value,
    kio_decode,
    kio_encode,
    kio_entity,
    kio_fields,
    kio_to_dict,
    oracle_cases,
    to_kio,
)

# ApiVersions, Metadata, CreateTopics, DeleteTopics, BrokerRegistration, BrokerHeartbeat
APIS = [BY_KEY[k] for k in (18, 3, 19, 20, 62, 63)]
# The data path's apis have many versions: values are compared on the oldest kio has (Produce 3,
# Fetch 4, ListOffsets 1, OffsetForLeaderEpoch 2) and the newest, which holds every field and tag;
# the fields are compared on every version. Older versions: test_golden_data_path.py.
DATA_PATH_VERSIONS = {
    ApiKey.PRODUCE: (3, 11),
    ApiKey.FETCH: (4, 17),
    ApiKey.LIST_OFFSETS: (1, 9),
    ApiKey.INIT_PRODUCER_ID: (0, 5),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (2, 4),
    ApiKey.DELETE_RECORDS: (0, 2),
    ApiKey.DESCRIBE_CONFIGS: (1, 4),  # kio has no v0 (tests/protocol/test_describe_configs_v0.py checks it)
    ApiKey.CREATE_PARTITIONS: (0, 3),
    ApiKey.ALLOCATE_PRODUCER_IDS: (0, 0),
    ApiKey.ALTER_PARTITION: (2, 3),  # kio has Kafka 4.0's versions only
    # Group membership: kio still has every version from v0 (also test_golden_membership.py)
    ApiKey.JOIN_GROUP: (0, 9),
    ApiKey.HEARTBEAT: (0, 4),
    ApiKey.LEAVE_GROUP: (0, 5),
    ApiKey.SYNC_GROUP: (0, 5),
    ApiKey.DESCRIBE_GROUPS: (0, 5),  # kio also has Kafka 4.0's v6, not declared here
    ApiKey.DELETE_GROUPS: (0, 2),
    # Offsets and coordinators: kio has Kafka 4.0's versions, without OffsetCommit 0-1 and
    # OffsetFetch 0 (test_golden_groups.py has them), and their v10, not declared here. OffsetCommit
    # values from v5: kio reads v2-4's retention_time_ms as a timedelta, which cannot hold every int64
    ApiKey.OFFSET_COMMIT: (5, 9),
    ApiKey.OFFSET_FETCH: (1, 9),
    ApiKey.FIND_COORDINATOR: (0, 6),
    ApiKey.LIST_GROUPS: (0, 5),
    ApiKey.OFFSET_DELETE: (0, 0),  # one version, not flexible
    # Transactions: kio has Kafka 4.0's versions (WriteTxnMarkers from v1, and its v2, not declared
    # here; ListTransactions' v2 of Kafka 4.1). AddPartitionsToTxn: the producer's single
    # transaction (v0 and flexible v3) and the brokers' batch (v5).
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 3, 5),
    ApiKey.ADD_OFFSETS_TO_TXN: (0, 4),
    ApiKey.END_TXN: (0, 5),
    ApiKey.WRITE_TXN_MARKERS: (1, 1),  # kio has no v0: test_golden_transactions.py checks it
    ApiKey.TXN_OFFSET_COMMIT: (0, 5),
    ApiKey.DESCRIBE_PRODUCERS: (0, 0),  # one version, flexible
    ApiKey.DESCRIBE_TRANSACTIONS: (0, 0),
    ApiKey.LIST_TRANSACTIONS: (0, 2),
    # The admin apis: every version kio has (hand-built bytes in their test_golden_*.py files).
    ApiKey.DESCRIBE_CLUSTER: (0, 1, 2),
    ApiKey.DESCRIBE_LOG_DIRS: (1, 2, 3, 4),  # kio has no v0: test_golden_describe_log_dirs.py checks it is v1
    ApiKey.ALTER_REPLICA_LOG_DIRS: (1, 2),
    ApiKey.ELECT_LEADERS: (0, 1, 2),
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: (0,),
    ApiKey.DESCRIBE_ACLS: (1, 2, 3),
    ApiKey.CREATE_ACLS: (1, 2, 3),
    ApiKey.DELETE_ACLS: (1, 2, 3),
    ApiKey.ALTER_CONFIGS: (0, 1, 2),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 1),
    ApiKey.LIST_CONFIG_RESOURCES: (0, 1),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: (0, 1),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: (0,),
    ApiKey.DESCRIBE_CLIENT_QUOTAS: (0, 1),
    ApiKey.ALTER_CLIENT_QUOTAS: (0, 1),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0,),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0,),
    # KRaft's quorum apis (Kafka 4.1.1's versions, which kio has): every version.
    ApiKey.VOTE: (0, 1, 2),
    ApiKey.BEGIN_QUORUM_EPOCH: (0, 1),
    ApiKey.END_QUORUM_EPOCH: (0, 1),
    ApiKey.DESCRIBE_QUORUM: (0, 1, 2),
    ApiKey.FETCH_SNAPSHOT: (0, 1),
}
DATA_PATH_APIS = [BY_KEY[k] for k in DATA_PATH_VERSIONS]
# Apis whose non-flexible versions kio no longer has: hand-built bytes check those
# (test_golden_transactions.py).
NON_FLEXIBLE_BY_GOLDEN_BYTES = {ApiKey.WRITE_TXN_MARKERS}


def _param(a, v, r):
    return pytest.param(a, v, r, id=f"{a.name}-v{v}-{'response' if r else 'request'}")


FIELD_CASES = [_param(a, v, r) for a, v, r in oracle_cases(APIS + DATA_PATH_APIS)]
CASES = [_param(a, v, r) for a, v, r in oracle_cases(APIS)] + [
    _param(a, v, r) for a, v, r in oracle_cases(DATA_PATH_APIS) if v in DATA_PATH_VERSIONS[a.key]
]

ORACLE = settings(max_examples=25, deadline=None)


def _struct(api, response):
    return api.response if response else api.request


def test_every_api_has_oracle_cases():
    names = {c.values[0].name for c in CASES}
    assert names == {a.name for a in APIS + DATA_PATH_APIS}
    for a in DATA_PATH_APIS:
        versions = {c.values[1] for c in CASES if c.values[0] is a}
        assert versions == set(DATA_PATH_VERSIONS[a.key])
        # Both encodings are compared, where the api has both (AllocateProducerIds is flexible only,
        # OffsetDelete never), unless kio lacks the old ones and golden bytes check them.
        every = range(a.versions.low, a.versions.high + 1)
        assert any(a.is_flexible(v) for v in versions) or not any(a.is_flexible(v) for v in every)
        assert (not all(a.is_flexible(v) for v in versions) or all(a.is_flexible(v) for v in every)
                or a.key in NON_FLEXIBLE_BY_GOLDEN_BYTES)


def _same_fields(s: Struct, entity_type: type, version: int, path: str) -> list[str]:
    ours = [f.name for f in s.fields if f.present_in(version) or f.tagged_in(version)]
    theirs = [name for _, name, _ in kio_fields(entity_type)]
    problems = [] if ours == theirs else [f"{path}: kafkalite {ours} != kio {theirs}"]
    tags = {f.name: f.tag for f in s.fields if f.tagged_in(version)}
    kio_tags = {name: f.metadata.get("tag") for f, name, _ in kio_fields(entity_type)
                if f.metadata.get("tag") is not None}
    if tags != kio_tags:
        problems.append(f"{path}: tags {tags} != kio {kio_tags}")
    for _, name, nested in kio_fields(entity_type):
        if nested is None or name not in ours:
            continue
        t = s.field(name).type
        t = t.item if isinstance(t, Array) else t
        problems += _same_fields(t, nested, version, f"{path}.{name}")
    return problems


@pytest.mark.parametrize(("api", "version", "response"), FIELD_CASES)
def test_same_fields_as_kio(api, version, response):
    entity = kio_entity(api.key, version, response)
    assert _same_fields(_struct(api, response), entity, version, entity.__name__) == []


@pytest.mark.slow
@pytest.mark.parametrize(("api", "version", "response"), CASES)
@ORACLE
@given(data=st.data())
def test_kio_decodes_kafkalite_bytes(api, version, response, data):
    entity_type = kio_entity(api.key, version, response)
    value = data.draw(kio_compatible_value(_struct(api, response), version, entity_type))
    encoded = encode_body(api.key, version, value, response=response)
    # kio's native reader sizes arrays from their length prefix before reading them, so bytes it
    # misparses can make it allocate gigabytes: compare with kio's own encoding first, so that a
    # disagreement fails here, cheaply, instead of inside kio.
    assert encoded == kio_encode(to_kio(value, entity_type))
    decoded = kio_decode(entity_type, encoded)
    assert kio_to_dict(decoded) == kafkalite_to_dict(value, version)


@pytest.mark.slow
@pytest.mark.parametrize(("api", "version", "response"), CASES)
@ORACLE
@given(data=st.data())
def test_kafkalite_decodes_kio_bytes(api, version, response, data):
    entity_type = kio_entity(api.key, version, response)
    value = data.draw(kio_compatible_value(_struct(api, response), version, entity_type))
    entity = to_kio(value, entity_type)
    expected = kio_to_dict(entity)
    assert expected == kafkalite_to_dict(value, version)  # the conversion itself is faithful
    kio_bytes = kio_encode(entity)
    decoded = decode_body(api.key, version, kio_bytes, response=response)
    assert kafkalite_to_dict(decoded, version) == expected
    # Both write the canonical encoding (tagged fields at their default are left out).
    assert encode_body(api.key, version, value, response=response) == kio_bytes
