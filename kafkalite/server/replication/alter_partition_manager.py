"""A leader's ISR changes go to the controller: Kafka's AlterPartitionManager (KIP-497).

Partitions propose a new ISR (``submit``); a thread sends every proposal waiting, batched in one
AlterPartition (v2: topic ids) to the controller's privileged listener with this broker's epoch,
and hands each partition the controller's answer (its state as the controller now holds it, or an
error), which the partition applies under its own lock. Until then the partition counts the
proposal in its maximal ISR. A proposal the controller could not be asked about (no connection, a
broker epoch not yet known, a top-level error) is sent again after a backoff; one per partition
at a time, as Partition allows.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any

from kafkalite.clients.security import PLAINTEXT, ClientSecurity
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import alter_partition as ap

from ..controller_node import ControllerClient, ControllerNodeProvider, as_provider
from .partition import Partition

log = logging.getLogger("kafkalite.server.replication.alter_partition_manager")

ALTER_PARTITION_VERSION = 2
RETRY_BACKOFF = 0.1  # seconds before a failed send is tried again (Kafka's retry backoff)


class AlterPartitionManager(threading.Thread):
    def __init__(self, node_id: int, controller: ControllerNodeProvider | tuple[str, int],
                 broker_epoch: Callable[[], int],
                 on_answer: Callable[[Partition, bool], None], timeout: float = 5.0,
                 security: ClientSecurity = PLAINTEXT) -> None:
        super().__init__(name=f"broker-{node_id}-alter-partition-channel", daemon=True)
        self.node_id = node_id
        self.provider = as_provider(controller)
        self.broker_epoch = broker_epoch
        self.on_answer = on_answer  # (partition, whether its high watermark moved)
        self.timeout = timeout
        self.security = security  # the controller's listener's
        self._client = ControllerClient(self.provider, f"broker-{node_id}-alter-partition", timeout,
                                        security=security)
        self._pending: dict[tuple[uuid.UUID, int], tuple[Partition, tuple[int, ...]]] = {}
        self._cond = threading.Condition()
        self._running = True
        self.sent = 0  # AlterPartition requests answered, for tests

    def submit(self, partition: Partition, new_isr: tuple[int, ...]) -> None:
        """Queue ``partition``'s proposal (Partition.alter_isr)."""
        with self._cond:
            self._pending[(partition.topic_id, partition.index)] = (partition, new_isr)
            self._cond.notify()

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._running = False
            self._cond.notify()
        self._client.close()
        if self.is_alive():
            self.join(timeout)

    def run(self) -> None:
        try:
            while True:
                with self._cond:
                    while self._running and not self._pending:
                        self._cond.wait()
                    if not self._running:
                        return
                    batch, self._pending = self._pending, {}
                if not self._send(batch):
                    with self._cond:
                        for key, item in batch.items():
                            self._pending.setdefault(key, item)  # a newer proposal wins
                        self._cond.wait(RETRY_BACKOFF)
        finally:
            self._client.close()

    def _send(self, batch: dict[tuple[uuid.UUID, int], tuple[Partition, tuple[int, ...]]]) -> bool:
        epoch = self.broker_epoch()
        if epoch < 0:
            return False  # not registered yet
        client = self._client
        R = ap.REQUEST
        topics: dict[uuid.UUID, list[Any]] = {}
        for (topic_id, index), (partition, new_isr) in batch.items():
            topics.setdefault(topic_id, []).append(R["topics"]["partitions"](
                partition_index=index, leader_epoch=partition.leader_epoch, new_isr=list(new_isr),
                partition_epoch=partition.state.partition_epoch))
        request = R(broker_id=self.node_id, broker_epoch=epoch,
                    topics=[R["topics"](topic_id=t, partitions=ps) for t, ps in topics.items()])
        try:
            response = client.send_and_receive(ApiKey.ALTER_PARTITION, ALTER_PARTITION_VERSION, request)
        except Exception as e:
            log.debug("Broker %d: AlterPartition to the controller failed: %s", self.node_id, e)
            return False
        self.sent += 1
        if response.error_code != E.NONE:
            log.info("Broker %d: AlterPartition refused: %s; retrying", self.node_id,
                     E.for_code(response.error_code).name)
            return False
        answered = set()
        for topic in response.topics:
            for p in topic.partitions:
                item = batch.get((topic.topic_id, p.partition_index))
                if item is None:
                    continue
                answered.add((topic.topic_id, p.partition_index))
                partition = item[0]
                if p.error_code != E.NONE:
                    log.info("Broker %d: ISR change of %s-%d to %s refused: %s", self.node_id,
                             partition.topic, partition.index, list(item[1]), E.for_code(p.error_code).name)
                else:
                    log.info("Broker %d: ISR of %s-%d is now %s (partition epoch %d)", self.node_id,
                             partition.topic, partition.index, list(p.isr), p.partition_epoch)
                moved = partition.on_alter_partition_answer(p.error_code, p.leader_epoch, tuple(p.isr),
                                                            p.partition_epoch)
                self.on_answer(partition, moved)
        for key, (partition, _) in batch.items():
            if key not in answered:  # not in the answer: the proposal is dropped, proposed again later
                partition.on_alter_partition_answer(E.UNKNOWN_SERVER_ERROR, -1, (), -1)
        return True
