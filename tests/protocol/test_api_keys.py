"""ApiKey is the one place an api's number and name live; the declared messages take theirs from it."""

from __future__ import annotations

from kafkalite.protocol import ALL_APIS, ApiKey, api_name


def test_every_declared_message_is_named_by_its_key():
    for api in ALL_APIS:
        assert isinstance(api.key, ApiKey) and api.name == api.key.api_name


def test_names_are_kafkas():
    assert ApiKey(18).api_name == "ApiVersions"
    assert ApiKey.OFFSET_FOR_LEADER_EPOCH.api_name == "OffsetForLeaderEpoch"
    assert ApiKey.INIT_PRODUCER_ID == 22 and ApiKey.DESCRIBE_CLUSTER == 60
    assert [k.value for k in ApiKey] == list(range(len(ApiKey)))  # Kafka's keys have no gaps
    assert api_name(9999) == "9999"
