"""The controller's client quotas (controller/quotas.py): Kafka's checks, applied and written to the
metadata log, read back by a new controller, and the pushes' complete sets."""

from __future__ import annotations

from kafkalite.controller.quotas import ClientQuotaControl
from kafkalite.protocol import error_codes as E
from tests.support.fake_raft import MetadataLog

OK = (E.NONE, None)
ALICE = [("user", "alice")]
DEFAULT_CLIENT = [("client-id", None)]


def test_alter_stores_and_survives_a_restart():
    log = MetadataLog()
    control = ClientQuotaControl(log.store())
    results, changed = control.alter([(ALICE, [("producer_byte_rate", 100.0, False),
                                               ("request_percentage", 12.5, False)]),
                                      (DEFAULT_CLIENT, [("consumer_byte_rate", 10.0, False)])], False)
    assert results == [OK, OK]
    assert changed == {(("user", "alice"),): {"producer_byte_rate": 100.0, "request_percentage": 12.5},
                       (("client-id", None),): {"consumer_byte_rate": 10.0}}
    results, changed = control.alter([(ALICE, [("request_percentage", 0.0, True)])], False)
    assert results == [OK] and changed == {(("user", "alice"),): {"producer_byte_rate": 100.0}}
    again = ClientQuotaControl(log.store())
    again.load()
    assert again.entities == {(("user", "alice"),): {"producer_byte_rate": 100.0},
                              (("client-id", None),): {"consumer_byte_rate": 10.0}}


def test_validate_only_and_refusals_change_nothing():
    log = MetadataLog()
    control = ClientQuotaControl(log.store())
    assert control.alter([(ALICE, [("producer_byte_rate", 5.0, False)])], True) == ([OK], {})
    results, changed = control.alter([(ALICE, [("producer_byte_rate", 5.0, False),
                                               ("producer_byte_rate", 6.0, False)])], False)
    assert results[0][0] == E.INVALID_REQUEST and "Duplicate quota key producer_byte_rate" in results[0][1]
    assert changed == {} and control.entities == {} and log.entries == []


def test_push_body_sets_its_keys_and_removes_the_others():
    control = ClientQuotaControl(MetadataLog().store())
    body = control.push_body({(("user", "alice"),): {"producer_byte_rate": 7.0}})
    (entry,) = body.entries
    assert [(e.entity_type, e.entity_name) for e in entry.entity] == [("user", "alice")]
    ops = {o.key: (o.value, o.remove) for o in entry.ops}
    assert ops["producer_byte_rate"] == (7.0, False)
    assert ops["consumer_byte_rate"][1] and ops["controller_mutation_rate"][1]
