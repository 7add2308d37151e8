"""The reconciliation table (Kafka's CurrentAssignmentBuilderTest, its cases)."""

from __future__ import annotations

import uuid

import pytest

from kafkalite.server.coordinator.consumer_group.reconciliation import MemberState, Reconciled, reconcile

T = uuid.UUID(int=1)


def a(*ps: int) -> dict[uuid.UUID, frozenset[int]]:
    return {T: frozenset(ps)} if ps else {}


def free(t: uuid.UUID, p: int) -> bool:
    return False


def test_stable_at_the_target_epoch_stays():
    m = Reconciled(MemberState.STABLE, 10, 9, a(1, 2))
    assert reconcile(m, 10, a(1, 2, 3), a(1, 2), free) is m


def test_partitions_to_revoke_keep_the_epoch_until_revoked():
    m = Reconciled(MemberState.STABLE, 10, 9, a(1, 2))
    step = reconcile(m, 11, a(2, 3), a(1, 2), free)
    assert step == Reconciled(MemberState.UNREVOKED_PARTITIONS, 10, 9, a(2), a(1))
    # Still owned: no change. Revoked: the new epoch and the new partition.
    assert reconcile(step, 11, a(2, 3), a(1, 2), free) is step
    done = reconcile(step, 11, a(2, 3), a(2), free)
    assert done == Reconciled(MemberState.STABLE, 11, 10, a(2, 3), {})


def test_a_partition_held_by_another_member_is_unreleased():
    m = Reconciled(MemberState.STABLE, 10, 9, a(1))
    step = reconcile(m, 11, a(1, 2), a(1), lambda t, p: p == 2)
    assert step == Reconciled(MemberState.UNRELEASED_PARTITIONS, 11, 10, a(1), {})
    assert reconcile(step, 11, a(1, 2), a(1), free) == Reconciled(MemberState.STABLE, 11, 10, a(1, 2), {})


def test_owned_not_reported_counts_as_still_owned():
    m = Reconciled(MemberState.UNREVOKED_PARTITIONS, 10, 9, a(2), a(1))
    assert reconcile(m, 11, a(2), None, free) is m


def test_unknown_state_is_refused():
    with pytest.raises(ValueError):
        reconcile(Reconciled(MemberState.UNKNOWN, 1, 0), 2, a(), a(), free)
