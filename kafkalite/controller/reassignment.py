"""Partition reassignment (KIP-455): AlterPartitionReassignments and ListPartitionReassignments as
Kafka's controller does them, on the controller's event thread.

A reassignment of a partition from its current replicas to a target (Kafka's
PartitionReassignmentReplicas):

- ``removing`` = current - target, ``adding`` = target - current, and while it runs the partition's
  replicas are target + removing (what Metadata and DescribeTopicPartitions show, as Kafka does);
- the partition's replicas get a LeaderAndIsr with the new set (leader epoch + 1): the adding
  replicas create their log and fetch from the leader like any follower, and its leader takes
  each into the ISR (AlterPartition) once caught up;
- when the ISR without the removing replicas is not empty and holds every target replica, it
  completes: replicas = target, the ISR trimmed to it, leadership moved to the first live target
  replica in the ISR if the leader is being removed (leader epoch + 1), LeaderAndIsr to the target
  replicas, StopReplica with delete to the removed ones (their log directories go), UpdateMetadata
  to every broker. A target that only reorders or drops replicas already in the ISR completes at
  once;
- a cancel (null replicas) reverts: replicas = current - adding, the ISR without the adding
  replicas (when that leaves it empty, the first original replica alone, which is an unclean
  election: refused unless the topic allows one), and the adding replicas get StopReplica with
  delete;
- a new target for a partition already being reassigned starts from its transitional replicas,
  as Kafka's changePartitionReassignment does.

Each step is written to the metadata log (the partition's transitional replicas with its adding
and removing replicas, in PartitionChangeRecords as Kafka's) before the brokers hear of it, so a
new active controller knows the reassignments in progress and completes them as ISR changes come.

A removed (or, on cancel, an added) replica whose broker is down when the move ends gets its
StopReplica with delete when that broker registers again (remembered in memory only: after a
controller restart such a replica's files stay).

Refusals, with Kafka's codes and words (ReplicationControlManager): UNKNOWN_TOPIC_OR_PARTITION,
INVALID_REPLICA_ASSIGNMENT (empty, duplicate or unregistered brokers; a revert that needs an
unclean election), INVALID_REPLICATION_FACTOR (v1's AllowReplicationFactorChange false and another
size), NO_REASSIGNMENT_IN_PROGRESS (a cancel with nothing to cancel), REQUEST_TIMED_OUT (the
request's timeout passed before the event thread took it).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kafkalite.common.errors import ApiError
from kafkalite.common.leader_and_isr import NO_LEADER
from kafkalite.protocol import error_codes as E

from .context import LeaderIsrAndControllerEpoch, TopicPartition

if TYPE_CHECKING:
    from .controller import KafkaController

log = logging.getLogger("kafkalite.controller.reassignment")

# {(topic, partition): (error code, message)} of an AlterPartitionReassignments request.
AlterResults = dict[tuple[str, int], tuple[int, "str | None"]]
# {topic: {partition: (replicas, adding, removing)}} of a ListPartitionReassignments request.
Ongoing = dict[str, dict[int, tuple[list[int], list[int], list[int]]]]


@dataclasses.dataclass(frozen=True)
class PartitionReassignment:
    """Kafka's PartitionReassignmentReplicas: the transitional replicas (target then removing) and
    the replicas being added and removed."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]

    @classmethod
    def of(cls, current: Iterable[int], target: Iterable[int]) -> PartitionReassignment:
        current, target = tuple(current), tuple(target)
        removing = tuple(r for r in current if r not in target)
        adding = tuple(r for r in target if r not in current)
        return cls(target + removing, adding, removing)

    @property
    def in_progress(self) -> bool:
        return bool(self.adding or self.removing)

    @property
    def target(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.removing)

    @property
    def original(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.adding)

    def completed(self, isr: Iterable[int]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """Kafka's maybeCompleteReassignment: (replicas, ISR) once ``isr`` without the removing
        replicas is non-empty and holds every target replica, else None."""
        new_isr = tuple(r for r in isr if r not in self.removing)
        target = self.target
        if not new_isr or not set(target) <= set(new_isr):
            return None
        return target, new_isr


# A partition's next state: leadership, replicas, the reassignment left in progress (None: none),
# the replicas to stop and delete.
Plan = tuple[LeaderIsrAndControllerEpoch, tuple[int, ...], PartitionReassignment | None, tuple[int, ...]]


class Reassignments:
    """The reassignments in progress (``ongoing``) and the steps that move them, run by the
    controller's event thread only."""

    def __init__(self, controller: KafkaController) -> None:
        self.controller = controller
        self.ongoing: dict[TopicPartition, PartitionReassignment] = {}
        # Broker -> replicas removed from it while it was down: deleted when it registers again.
        self.orphans: dict[int, set[TopicPartition]] = {}

    def load(self, stored: dict[tuple[str, int], tuple[tuple[int, ...], tuple[int, ...]]]) -> None:
        """The reassignments a new active controller resumes (the image's)."""
        ctx = self.controller.context
        for (topic, index), (adding, removing) in stored.items():
            tp = TopicPartition(topic, index)
            replicas = tuple(ctx.partition_replica_assignment(tp))
            if replicas:
                self.ongoing[tp] = PartitionReassignment(replicas, adding, removing)
        if self.ongoing:
            log.info("Resuming %d partition reassignments: %s", len(self.ongoing),
                     ", ".join(str(tp) for tp in sorted(self.ongoing)))

    # --- AlterPartitionReassignments ----------------------------------------------------------

    def alter(self, partitions: list[tuple[str, int, list[int] | None]], allow_rf_change: bool,
              deadline: float) -> AlterResults:
        """Start, change or cancel (replicas None) the reassignment of each partition; every
        change is stored and sent once all are checked. ``deadline``: time.monotonic() after which
        the request is answered REQUEST_TIMED_OUT untouched."""
        if time.monotonic() > deadline:
            raise ApiError(E.REQUEST_TIMED_OUT, E.BY_CODE[E.REQUEST_TIMED_OUT].message)
        results: AlterResults = {}
        plans: dict[TopicPartition, Plan] = {}
        for topic, index, target in partitions:
            tp = TopicPartition(topic, index)
            try:
                plan = self._plan(tp, target, allow_rf_change)
            except ApiError as e:
                log.info("Unable to alter partition reassignment for %s:%d because of an %s error: %s",
                         topic, index, E.for_code(e.code).name, e.message)
                results[(topic, index)] = (e.code, e.message)
                continue
            results[(topic, index)] = (E.NONE, None)
            if plan is not None:
                plans[tp] = plan
        if plans:
            self._apply(plans)
        log.info("Successfully altered %d out of %d partition reassignment(s).",
                 sum(1 for code, _ in results.values() if code == E.NONE), len(results))
        return results

    def _plan(self, tp: TopicPartition, target: list[int] | None, allow_rf_change: bool) -> Plan | None:
        """(new leadership, new replicas, the reassignment left in progress, the replicas to stop
        and delete), or None when nothing changes; ApiError when refused."""
        c = self.controller
        ctx = c.context
        if tp.topic not in ctx.topic_ids or c.is_deleting(tp.topic):
            raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {tp.topic}.")
        current = tuple(ctx.partition_replica_assignment(tp))
        lead = ctx.partition_leadership.get(tp)
        if not current or lead is None:
            raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION,
                           f"Unable to find partition {tp.topic}:{tp.partition}.")
        ongoing = self.ongoing.get(tp)
        if target is None:
            return self._plan_cancel(tp, lead, ongoing)
        self._validate(target)
        if not allow_rf_change:
            now = len(current) - (len(ongoing.removing) if ongoing is not None else 0)
            if now != len(target):
                raise ApiError(E.INVALID_REPLICATION_FACTOR,
                               f"The replication factor is changed from {now} to {len(target)}")
        reassignment = PartitionReassignment.of(current, target)
        if reassignment.replicas == current and ongoing is None and not reassignment.in_progress:
            return None  # already there
        state = reassignment if reassignment.in_progress else None
        lead = LeaderIsrAndControllerEpoch(lead.leader, lead.leader_epoch + 1, lead.isr,
                                           lead.partition_epoch + 1, ctx.epoch)
        replicas = reassignment.replicas
        removed: tuple[int, ...] = ()
        if state is not None:
            done = self._completion(lead, state)
            if done is not None:
                lead, replicas, removed = done
                state = None
        return lead, replicas, state, removed

    def _validate(self, target: list[int]) -> None:
        """Kafka's validateManualPartitionAssignment."""
        if not target:
            raise ApiError(E.INVALID_REPLICA_ASSIGNMENT,
                           "The manual partition assignment includes an empty replica list.")
        registered = self.controller.context.live_or_shutting_down_broker_ids
        previous = None
        for broker in sorted(target):
            if broker not in registered:
                raise ApiError(E.INVALID_REPLICA_ASSIGNMENT,
                               f"The manual partition assignment includes broker {broker}, but no such "
                               "broker is registered.")
            if broker == previous:
                raise ApiError(E.INVALID_REPLICA_ASSIGNMENT,
                               f"The manual partition assignment includes the broker {broker} more than "
                               "once.")
            previous = broker

    def _plan_cancel(self, tp: TopicPartition, lead: LeaderIsrAndControllerEpoch,
                     ongoing: PartitionReassignment | None
                     ) -> tuple[LeaderIsrAndControllerEpoch, tuple[int, ...], None, tuple[int, ...]]:
        """Kafka's PartitionReassignmentRevert."""
        if ongoing is None:
            raise ApiError(E.NO_REASSIGNMENT_IN_PROGRESS, E.BY_CODE[E.NO_REASSIGNMENT_IN_PROGRESS].message)
        c = self.controller
        original = ongoing.original
        isr = tuple(r for r in lead.isr if r not in ongoing.adding)
        if not isr:
            if not c.unclean_allowed(tp.topic):
                raise ApiError(E.INVALID_REPLICA_ASSIGNMENT,
                               f"Unable to revert partition assignment for {tp.topic}:{tp.partition} "
                               "because it would require an unclean leader election.")
            isr = original[:1]
        leader = self._leader(lead.leader, original, isr)
        new = LeaderIsrAndControllerEpoch(leader, lead.leader_epoch + 1, isr, lead.partition_epoch + 1,
                                          c.context.epoch)
        return new, original, None, ongoing.adding

    def _leader(self, leader: int, replicas: tuple[int, ...], isr: tuple[int, ...]) -> int:
        """The current leader if it stays a live ISR member, else the first live replica in the ISR
        (Kafka's PartitionChangeBuilder election), else none."""
        live = self.controller.context.live_broker_ids
        if leader in isr and leader in live:
            return leader
        return next((r for r in replicas if r in isr and r in live), NO_LEADER)

    def _completion(self, lead: LeaderIsrAndControllerEpoch, reassignment: PartitionReassignment
                    ) -> tuple[LeaderIsrAndControllerEpoch, tuple[int, ...], tuple[int, ...]] | None:
        """(leadership, replicas, removed replicas) if the reassignment can complete now."""
        done = reassignment.completed(lead.isr)
        if done is None:
            return None
        replicas, isr = done
        leader = self._leader(lead.leader, replicas, isr)
        if leader == NO_LEADER:
            return None  # no live target replica in the ISR to lead it yet
        # A new leader epoch whatever changed: brokers take a LeaderAndIsr only with a newer one.
        new = LeaderIsrAndControllerEpoch(leader, lead.leader_epoch + 1, isr, lead.partition_epoch + 1,
                                          self.controller.context.epoch)
        return new, replicas, reassignment.removing

    # --- progress -------------------------------------------------------------------------------

    def maybe_complete(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """Complete the reassignments of ``partitions`` (None: every one in progress) whose ISR
        now allows it: after an ISR change, a broker's registration, a restart."""
        ctx = self.controller.context
        plans: dict[TopicPartition, Plan] = {}
        for tp in sorted(self.ongoing if partitions is None else set(partitions) & set(self.ongoing)):
            lead = ctx.partition_leadership.get(tp)
            if lead is None:
                continue
            done = self._completion(lead, self.ongoing[tp])
            if done is not None:
                new, replicas, removed = done
                plans[tp] = (new, replicas, None, removed)
        if plans:
            self._apply(plans)

    def _apply(self, plans: dict[TopicPartition, Plan]) -> None:
        """Put the new states in the context, store them, then tell the brokers: LeaderAndIsr to
        the live replicas (new ones marked new), StopReplica with delete to the removed ones,
        UpdateMetadata to every broker."""
        c = self.controller
        ctx = c.context
        started: dict[tuple[str, int], tuple[tuple[int, ...], tuple[int, ...]]] = {}
        ended: list[tuple[str, int]] = []
        for tp, (lead, replicas, state, removed) in plans.items():
            before = ctx.partition_replica_assignment(tp)
            ctx.update_partition_replica_assignment(tp, list(replicas))
            ctx.partition_leadership[tp] = lead
            if state is not None:
                self.ongoing[tp] = state
                started[(tp.topic, tp.partition)] = (state.adding, state.removing)
                log.info("Reassigning %s: replicas %s (adding %s, removing %s), leader %d, ISR %s", tp,
                         list(state.replicas), list(state.adding), list(state.removing), lead.leader,
                         list(lead.isr))
            else:
                if self.ongoing.pop(tp, None) is not None:
                    ended.append((tp.topic, tp.partition))
                log.info("Reassignment of %s done: replicas %s (was %s), leader %d, ISR %s%s", tp,
                         list(replicas), before, lead.leader, list(lead.isr),
                         f", deleting the replicas on {list(removed)}" if removed else "")
        stored = c.stored_partitions(plans)
        c.store.update_reassignments(stored, started, ended)
        batch = c.batch
        batch.new_batch()
        live = ctx.live_or_shutting_down_broker_ids
        for tp, (lead, replicas, state, removed) in plans.items():
            adding = state.adding if state is not None else ()
            removing = state.removing if state is not None else ()
            for broker in replicas:
                if broker in live:
                    batch.add_leader_and_isr_request_for_brokers(
                        [broker], tp, lead, list(replicas), broker in adding,
                        adding_replicas=adding, removing_replicas=removing)
            gone = [r for r in removed if r in live]
            if gone:
                batch.add_stop_replica_request_for_brokers(gone, tp, True)
            for broker in removed:
                if broker not in live:
                    self.orphans.setdefault(broker, set()).add(tp)
            for broker in replicas:
                self.orphans.get(broker, set()).discard(tp)
        batch.add_update_metadata_request_for_brokers(sorted(live), list(plans))
        batch.send_requests_to_brokers(ctx.epoch)

    def topic_deleted(self, topic: str) -> None:
        """A deleted topic's reassignments end with it (its partitions go with it from the log)."""
        for tp in [tp for tp in self.ongoing if tp.topic == topic]:
            del self.ongoing[tp]
        for orphans in self.orphans.values():
            orphans.difference_update({tp for tp in orphans if tp.topic == topic})

    def brokers_started(self, broker_ids: Iterable[int]) -> None:
        """Delete the replicas moved off these brokers while they were down (Kafka's controller
        retries such a StopReplica when the broker is back)."""
        c = self.controller
        batch = c.batch
        batch.new_batch()
        sent = False
        for broker in broker_ids:
            for tp in sorted(self.orphans.pop(broker, ())):
                if broker not in c.context.partition_replica_assignment(tp):
                    log.info("Deleting %s on broker %d, removed from it by a reassignment while it was "
                             "down", tp, broker)
                    batch.add_stop_replica_request_for_brokers([broker], tp, True)
                    sent = True
        if sent:
            batch.send_requests_to_brokers(c.context.epoch)

    # --- ListPartitionReassignments -----------------------------------------------------------

    def list(self, topics: list[tuple[str, list[int]]] | None) -> Ongoing:
        """Kafka's listPartitionReassignments: every partition being reassigned (``topics`` None),
        or those of the named ones that are; unknown topics and partitions are left out."""
        if topics is None:
            wanted = sorted(self.ongoing)
        else:
            wanted = [TopicPartition(t, p) for t, ps in topics for p in ps]
        out: Ongoing = {}
        for tp in wanted:
            r = self.ongoing.get(tp)
            if r is not None:
                out.setdefault(tp.topic, {})[tp.partition] = (list(r.replicas), list(r.adding),
                                                              list(r.removing))
        return out
