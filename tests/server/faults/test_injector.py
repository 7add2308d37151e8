"""FaultInjector on real encoded and decoded requests: for every partitioned api and version, any
topics, partitions and faults, the answer names exactly the partitions the request named, the
faulted ones with their injected codes and the rest as the handler answered them; a whole-request
fault answers every partition without the handler; each stack is used once per request."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.network.request_channel import Request, SendResponse
from kafkalite.protocol import APIS_BY_KEY, ApiKey, decode_request, decode_response, encode_request
from kafkalite.protocol import error_codes as E
from kafkalite.server.faults.injector import (
    PARTITIONED,
    FaultError,
    FaultInjector,
    layout_for,
    names_topics_by_id,
)
from kafkalite.server.responses import respond

TOPIC_IDS = {name: uuid.UUID(int=i + 1) for i, name in enumerate(("a", "b", "c"))}
NAMES = {v: k for k, v in TOPIC_IDS.items()}
CODES = st.sampled_from([E.NOT_LEADER_OR_FOLLOWER, E.REQUEST_TIMED_OUT, E.UNKNOWN_TOPIC_OR_PARTITION,
                         E.BY_NAME["INVALID_RECORD"].code])


def _versions(key: int) -> list[int]:
    """The versions whose errors are per partition."""
    v = APIS_BY_KEY[key].versions
    return [n for n in range(v.low, v.high + 1) if layout_for(key, n) is not None]


cases = st.sampled_from(sorted(PARTITIONED)).flatmap(lambda key: st.tuples(
    st.just(key), st.sampled_from(_versions(key)),
    st.dictionaries(st.sampled_from(sorted(TOPIC_IDS)), st.sets(st.integers(0, 5), min_size=1, max_size=4),
                    min_size=1, max_size=3)))


def _name_field(key: int, version: int, name: str) -> str:
    return "topic_id" if names_topics_by_id(key, version) else name


def _request(key: int, version: int, topics: dict[str, set[int]]) -> Request:
    api, layout = APIS_BY_KEY[key], PARTITIONED[key]
    name = _name_field(key, version, layout.req_name)
    topic_struct = api.request[layout.req_topics]

    def partition(i: int):
        if layout.req_index is None:
            return i  # listed as bare indexes
        return topic_struct[layout.req_partitions](**{layout.req_index: i})

    body = api.request(**{layout.req_topics: [
        topic_struct(**{name: TOPIC_IDS[t] if name == "topic_id" else t,
                        layout.req_partitions: [partition(i) for i in sorted(ps)]})
        for t, ps in topics.items()]})
    frame = encode_request(key, version, 7, "tester", body)
    header, decoded = decode_request(memoryview(frame)[4:])
    return Request(processor=0, connection_id="c", listener="PLAINTEXT", security_protocol="PLAINTEXT",
                   header=header, body=decoded, size=len(frame), client_address="127.0.0.1",
                   client_software_name="", client_software_version="", privileged=False)


def _handler(handled: list):
    """Answers every partition left in the body with NONE, as a handler would."""
    def handle(request: Request) -> SendResponse:
        key, version = request.api_key, request.api_version
        api, layout = APIS_BY_KEY[key], PARTITIONED[key]
        req_name = _name_field(key, version, layout.req_name)
        resp_name = _name_field(key, version, layout.resp_name)
        topic_struct = api.response[layout.resp_topics]
        part_struct = topic_struct[layout.resp_partitions]
        topics = []
        for t in getattr(request.body, layout.req_topics):
            parts = [part_struct(**{layout.resp_index: layout.index(p), layout.resp_error: 0})
                     for p in getattr(t, layout.req_partitions)]
            handled.extend((getattr(t, req_name), layout.index(p))
                           for p in getattr(t, layout.req_partitions))
            topics.append(topic_struct(**{resp_name: getattr(t, req_name), layout.resp_partitions: parts}))
        return respond(request, api.response(**{layout.resp_topics: topics}))
    return handle


def _answered(response: SendResponse, key: int, version: int) -> dict[tuple[str, int], int]:
    _, body = decode_response(memoryview(response.payload)[4:], key, version)
    layout = PARTITIONED[key]
    name = _name_field(key, version, layout.resp_name)
    out = {}
    for t in getattr(body, layout.resp_topics):
        topic = getattr(t, name)
        topic = NAMES.get(topic, topic)
        for p in getattr(t, layout.resp_partitions):
            assert (topic, getattr(p, layout.resp_index)) not in out  # each partition once
            out[(topic, getattr(p, layout.resp_index))] = getattr(p, layout.resp_error)
    return out


def _injector() -> FaultInjector:
    return FaultInjector(1, NAMES.get, lambda response: None)


@settings(max_examples=300, deadline=None)
@given(cases, st.data())
def test_partition_faults_answer_their_partitions_and_the_rest_is_handled(case, data):
    key, version, topics = case
    every = sorted((t, p) for t, ps in topics.items() for p in ps)
    faulted = data.draw(st.dictionaries(st.sampled_from(every), CODES, max_size=len(every)))
    faults = _injector()
    for (t, p), code in faulted.items():
        faults.push_errors(key, [code], t, p)
    request = _request(key, version, topics)
    handled: list = []
    response = faults.before(request) or _handler(handled)(request)
    answered = _answered(response, key, version)
    assert answered == {tp: faulted.get(tp, E.NONE) for tp in every}
    assert sorted((NAMES.get(t, t), p) for t, p in handled) == sorted(set(every) - set(faulted))
    assert faults.pending_errors() == []  # each used once


@settings(max_examples=150, deadline=None)
@given(cases, CODES)
def test_a_whole_request_fault_answers_every_partition_without_the_handler(case, code):
    key, version, topics = case
    faults = _injector()
    faults.push_errors(key, [code, code])
    request = _request(key, version, topics)
    response = faults.before(request)
    assert response is not None
    assert set(_answered(response, key, version).values()) == {code}
    assert faults.pending_errors()[0]["errors"] == [code]  # one of the two used


def test_describe_transactions_fault_answers_every_transactional_id():
    faults = _injector()
    faults.push_errors(ApiKey.DESCRIBE_TRANSACTIONS, [E.COORDINATOR_LOAD_IN_PROGRESS])
    key = ApiKey.DESCRIBE_TRANSACTIONS
    frame = encode_request(key, 0, 1, "app", APIS_BY_KEY[key].request(transactional_ids=["t1", "t2"]))
    header, body = decode_request(memoryview(frame)[4:])
    request = Request(0, "c", "PLAINTEXT", "PLAINTEXT", header, body, len(frame), "127.0.0.1", "", "", False)
    _, answer = decode_response(memoryview(faults.before(request).payload)[4:], key, 0)
    assert [(s.transactional_id, s.error_code) for s in answer.transaction_states] == [
        ("t1", E.COORDINATOR_LOAD_IN_PROGRESS), ("t2", E.COORDINATOR_LOAD_IN_PROGRESS)]
    assert faults.pending_errors() == []


def test_top_level_errors_capture_and_refusals():
    faults = _injector()
    faults.push_errors(ApiKey.FIND_COORDINATOR, [E.COORDINATOR_NOT_AVAILABLE])
    faults.start_capture()
    api = APIS_BY_KEY[ApiKey.FIND_COORDINATOR]
    for version in (3, 4):
        frame = encode_request(ApiKey.FIND_COORDINATOR, version, 1, "app",
                               api.request(key="g", coordinator_keys=["g"]))
        header, body = decode_request(memoryview(frame)[4:])
        request = Request(0, "c", "PLAINTEXT", "PLAINTEXT", header, body, len(frame), "127.0.0.1", "", "",
                          False)
        faults.push_errors(ApiKey.FIND_COORDINATOR, [E.COORDINATOR_NOT_AVAILABLE])
        _, answer = decode_response(memoryview(faults.before(request).payload)[4:],
                                    ApiKey.FIND_COORDINATOR, version)
        codes = [answer.error_code] if version < 4 else [c.error_code for c in answer.coordinators]
        assert codes == [E.COORDINATOR_NOT_AVAILABLE]
    captured = faults.stop_capture()
    assert [(c.api_name, c.api_version, c.client_id) for c in captured] == [
        ("FindCoordinator", 3, "app"), ("FindCoordinator", 4, "app")]
    for bad in (lambda: faults.push_errors(ApiKey.METADATA, [3], "t", 0),
                lambda: faults.push_errors(ApiKey.PRODUCE, [99999]),
                lambda: faults.set_rtt(-1)):
        try:
            bad()
        except FaultError:
            continue
        raise AssertionError("accepted")
