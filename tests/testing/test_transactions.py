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
