"""AlterPartitionReassignments and ListPartitionReassignments: an admin's partition moves, passed to
the controller (Kafka's KafkaApis.handleAlterPartitionReassignmentsRequest /
handleListPartitionReassignmentsRequest of the ZooKeeper-era controller; the moves themselves:
controller/reassignment.py).

A broker without the controller role answers NOT_CONTROLLER, at the top level and (Alter) for each
partition asked, as Kafka's getErrorResponse does; clients send these requests to the controller
named in Metadata. On the controller's node a request is answered once the controller's event
thread has handled it (a callback answers it: no handler thread waits): Alter once each
reassignment has started (or been cancelled, or refused: an error per partition), not when the
data has moved; List with what is in progress then. A request that waited beyond its timeout_ms
before the event thread took it: REQUEST_TIMED_OUT, nothing changed.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import alter_partition_reassignments as A
from kafkalite.protocol.messages import list_partition_reassignments as L

from ..controller_node import active
from ..forwarding import forward, forwarded, forwards
from ..responses import respond

SendResponse = Callable[[Response], None]
LANE = "partitions"  # the ControllerLink lane forwarded elections and reassignments take
FORWARDED = forwarded(LANE)


class ReassignmentApis:
    def __init__(self, controller: Any, send_response: SendResponse, link: Any = None,
                 node_listeners: frozenset[str] = frozenset()) -> None:
        self.controller = controller  # None on a broker without the controller role
        self.send_response = send_response
        self.link = link  # the ControllerLink to the active controller (None: never forwards)
        self.node_listeners = node_listeners  # controller.listener.names: where forwarded ones come

    def _forward(self, request: Request, failed: Callable[[str], Any]) -> None:
        """Pass the request to the active controller's node; the client gets its answer (Kafka 4's
        brokers forward both apis), or ``failed(why)``'s body."""
        forward(self.link, LANE, request.api_key, request.api_version, request.body,
                ApiKey(request.api_key).name, lambda body: self.send_response(respond(request, body)),
                lambda why: self.send_response(respond(request, failed(why))))

    def alter_partition_reassignments(self, request: Request) -> Response | None:
        req = request.body
        allow = req.allow_replication_factor_change if request.api_version >= 1 else True
        asked = [(t.name, p.partition_index, None if p.replicas is None else list(p.replicas))
                 for t in req.topics for p in t.partitions]
        controller = active(self.controller)
        if forwards(request, controller, self.link, FORWARDED, self.node_listeners):
            self._forward(request, lambda why: _alter_error(req, allow, E.REQUEST_TIMED_OUT, why))
            return None
        if controller is None:
            return respond(request, _alter_error(req, allow, E.NOT_CONTROLLER,
                                                 E.BY_CODE[E.NOT_CONTROLLER].message))

        def answer(future: concurrent.futures.Future) -> None:
            try:
                results = future.result()
            except ApiError as e:
                body = _alter_error(req, allow, e.code, e.message)
            except Exception:  # logged by the controller
                body = _alter_error(req, allow, E.UNKNOWN_SERVER_ERROR,
                                    "The controller failed to alter the partition reassignments.")
            else:
                body = _alter_response(req, allow, results)
            self.send_response(respond(request, body))

        controller.alter_partition_reassignments(asked, allow, req.timeout_ms).add_done_callback(answer)
        return None

    def list_partition_reassignments(self, request: Request) -> Response | None:
        req = request.body
        controller = active(self.controller)
        if forwards(request, controller, self.link, FORWARDED, self.node_listeners):
            self._forward(request, lambda why: L.RESPONSE(throttle_time_ms=0, error_code=E.REQUEST_TIMED_OUT,
                                                          error_message=why, topics=[]))
            return None
        if controller is None:
            return respond(request, L.RESPONSE(throttle_time_ms=0, error_code=E.NOT_CONTROLLER,
                                               error_message=E.BY_CODE[E.NOT_CONTROLLER].message,
                                               topics=[]))
        topics = (None if req.topics is None
                  else [(t.name, list(t.partition_indexes)) for t in req.topics])

        def answer(future: concurrent.futures.Future) -> None:
            try:
                ongoing = future.result()
            except Exception:  # logged by the controller
                body = L.RESPONSE(throttle_time_ms=0, error_code=E.UNKNOWN_SERVER_ERROR,
                                  error_message="The controller failed to list the partition "
                                                "reassignments.", topics=[])
            else:
                body = L.RESPONSE(throttle_time_ms=0, error_code=E.NONE, error_message=None, topics=[
                    L.ONGOING_TOPIC(name=name, partitions=[
                        L.ONGOING_PARTITION(partition_index=index, replicas=replicas,
                                            adding_replicas=adding, removing_replicas=removing)
                        for index, (replicas, adding, removing) in parts.items()])
                    for name, parts in ongoing.items()])
            self.send_response(respond(request, body))

        controller.list_partition_reassignments(topics).add_done_callback(answer)
        return None


def _alter_response(req: Any, allow: bool, results: dict[tuple[str, int], tuple[int, str | None]],
                    error_code: int = E.NONE, error_message: str | None = None) -> Any:
    return A.RESPONSE(
        throttle_time_ms=0, allow_replication_factor_change=allow, error_code=error_code,
        error_message=error_message,
        responses=[A.TOPIC_RESPONSE(name=t.name, partitions=[
            A.PARTITION_RESPONSE(partition_index=p.partition_index,
                                 error_code=results[(t.name, p.partition_index)][0],
                                 error_message=results[(t.name, p.partition_index)][1])
            for p in t.partitions]) for t in req.topics])


def _alter_error(req: Any, allow: bool, code: int, message: str | None) -> Any:
    """Kafka's AlterPartitionReassignmentsRequest.getErrorResponse: the error at the top level and
    for every partition asked."""
    return _alter_response(req, allow, {(t.name, p.partition_index): (code, message)
                                        for t in req.topics for p in t.partitions}, code, message)
