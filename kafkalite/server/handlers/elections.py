"""ElectLeaders: an admin's preferred or unclean leader election, passed to the controller (Kafka's
KafkaApis.handleElectLeaders with the ZooKeeper-era controller's processReplicaLeaderElection).

A broker without the controller role answers NOT_CONTROLLER for each partition asked (for a
request of every partition, each partition its metadata shows), as Kafka's inactive controller
does; clients send ElectLeaders to the controller named in Metadata. On the controller's node the
request is answered once the controller's event thread has applied the elections (a callback
answers it: no handler thread waits), each partition with its own error: NONE when it got a new
leader, ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE,
UNKNOWN_TOPIC_OR_PARTITION. A request of every partition (null TopicPartitions) lists only the
partitions that did not answer ELECTION_NOT_NEEDED, as Kafka does.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import elect_leaders

from ..controller_node import active
from ..forwarding import forward, forwarded, forwards
from ..metadata_cache import MetadataCache
from ..responses import respond

Results = dict[tuple[str, int], tuple[int, str | None]]
LANE = "partitions"  # the ControllerLink lane forwarded elections and reassignments take
FORWARDED = forwarded(LANE)


class ElectionApis:
    def __init__(self, controller: Any, metadata_cache: MetadataCache,
                 send_response: Callable[[Response], None], link: Any = None,
                 node_listeners: frozenset[str] = frozenset()) -> None:
        self.controller = controller  # None on a broker without the controller role
        self.cache = metadata_cache
        self.send_response = send_response
        self.link = link  # the ControllerLink to the active controller (None: never forwards)
        self.node_listeners = node_listeners  # controller.listener.names: where forwarded ones come

    def elect_leaders(self, request: Request) -> Response | None:
        req = request.body
        unclean = request.api_version >= 1 and req.election_type == elect_leaders.UNCLEAN
        if request.api_version >= 1 and req.election_type not in (elect_leaders.PREFERRED,
                                                                   elect_leaders.UNCLEAN):
            return respond(request, _response({}, E.INVALID_REQUEST))
        asked = (None if req.topic_partitions is None
                 else [(t.topic, p) for t in req.topic_partitions for p in t.partitions])
        controller = active(self.controller)
        if forwards(request, controller, self.link, FORWARDED, self.node_listeners):
            def failed(why: str) -> None:
                tps = asked if asked is not None else []
                error = E.REQUEST_TIMED_OUT if asked is None else E.NONE
                self.send_response(respond(request, _response({tp: (E.REQUEST_TIMED_OUT, why) for tp in tps},
                                                              error)))
            forward(self.link, LANE, ApiKey.ELECT_LEADERS, request.api_version, req, "ElectLeaders",
                    lambda body: self.send_response(respond(request, body)), failed)
            return None
        if controller is None:
            if asked is None:
                asked = [(t.name, p) for t in self.cache.snapshot.topics.values() for p in t.partitions]
            message = E.BY_CODE[E.NOT_CONTROLLER].message
            return respond(request, _response({tp: (E.NOT_CONTROLLER, message) for tp in asked}))

        def answer(future: concurrent.futures.Future) -> None:
            try:
                results: Results = future.result()
            except Exception:  # logged by the controller
                message = "The controller failed to run the election."
                body = _response({tp: (E.UNKNOWN_SERVER_ERROR, message) for tp in asked or []})
            else:
                if asked is None:
                    results = {tp: r for tp, r in results.items() if r[0] != E.ELECTION_NOT_NEEDED}
                body = _response(results)
            self.send_response(respond(request, body))

        controller.elect_leaders(unclean, asked).add_done_callback(answer)
        return None


def _response(results: Results, error_code: int = E.NONE) -> Any:
    """The response body: the partitions by topic, in the order met."""
    R = elect_leaders
    by_topic: dict[str, list[Any]] = {}
    for (topic, partition), (code, message) in results.items():
        by_topic.setdefault(topic, []).append(
            R.PARTITION_RESULT(partition_id=partition, error_code=code, error_message=message))
    return R.RESPONSE(throttle_time_ms=0, error_code=error_code, replica_election_results=[
        R.REPLICA_ELECTION_RESULT(topic=topic, partition_result=parts) for topic, parts in by_topic.items()])
