"""Transactions in kafkalite.testing and the pytest plugin with no extra setting (issue 27): the
clusters' defaults (Kafka's: __transaction_state with 50 partitions, replication factor 3 capped
by the brokers there are) serve a confluent-kafka transactional producer, and a read_committed
consumer skips what was aborted, on one broker and on three, in memory and on files."""

from __future__ import annotations

import pytest

from kafkalite.testing import Cluster
from tests.support.transactions import committed_values, confluent_transactions, read_values, txns

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def commit_abort_commit(bootstrap: str, topic: str) -> None:
    transactions = txns(topic, [(5, True), (5, False), (3, True)])
    confluent_transactions(bootstrap, topic, f"plugin-{topic}", transactions)
    got = read_values("confluent-kafka", bootstrap, topic, [0], "read_committed", transactions[-1].values)
    assert got == committed_values(transactions)


@pytest.mark.kafkalite(1, topics=["one-broker"])
def test_the_plugins_one_broker_cluster_serves_transactions(kafkalite_bootstrap_servers):
    commit_abort_commit(kafkalite_bootstrap_servers, "one-broker")


@pytest.mark.kafkalite(3, topics=["three-brokers"])
def test_the_plugins_three_broker_cluster_serves_transactions(kafkalite_bootstrap_servers):
    commit_abort_commit(kafkalite_bootstrap_servers, "three-brokers")


def test_a_cluster_on_files_serves_transactions():
    with Cluster(1, topics=["on-files"], storage="files") as cluster:
        commit_abort_commit(cluster.bootstrap_servers, "on-files")


def test_transaction_apis_take_injected_errors_and_the_producer_retries_through_them():
    """Error stacks for the transaction apis as for the others: InitProducerId, AddPartitionsToTxn
    (a producer's v0-3, every partition answered), EndTxn and TxnOffsetCommit each answer their
    next request with a retriable error; confluent-kafka retries through them and the transaction
    commits, its offsets too. The capture shows each api was asked again."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    with Cluster(1, topics=["faulted"]) as cluster:
        for api in ("InitProducerId", "AddPartitionsToTxn", "EndTxn"):
            cluster.push_errors(api, "COORDINATOR_LOAD_IN_PROGRESS")
        cluster.push_errors("TxnOffsetCommit", "COORDINATOR_LOAD_IN_PROGRESS", topic="faulted", partition=0)
        bootstrap = cluster.bootstrap_servers
        producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "faulted-1"})
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "faulted-group"})
        try:
            with cluster.capture() as captured:
                producer.init_transactions(30)
                producer.begin_transaction()
                producer.produce("faulted", b"v", partition=0)
                producer.send_offsets_to_transaction([TopicPartition("faulted", 0, 7)],
                                                     consumer.consumer_group_metadata(), 30)
                producer.commit_transaction(30)
            assert cluster.pending_errors() == {1: []}  # every one answered once
            asked = [r.api_name for r in captured]
            for api in ("InitProducerId", "AddPartitionsToTxn", "EndTxn", "TxnOffsetCommit"):
                assert asked.count(api) >= 2, (api, asked)
            committed = consumer.committed([TopicPartition("faulted", 0)], timeout=30)
            assert committed[0].offset == 7
        finally:
            producer.flush(10)
            consumer.close()
