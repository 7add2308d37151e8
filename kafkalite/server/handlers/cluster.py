"""DescribeCluster: the cluster id, the controller and the brokers, from this broker's
MetadataCache snapshot, as a broker answers it (Kafka's KafkaApis.handleDescribeCluster and
AuthHelper.computeDescribeClusterResponse).

The brokers are the registered ones with an endpoint on the listener the request came in on, as
Metadata answers them; the controller is the broker that runs it (-1 if it is not among those
brokers, as Kafka answers a controller it cannot give an endpoint for). This broker describes
brokers only: endpoint type CONTROLLERS is MISMATCHED_ENDPOINT_TYPE, an unknown one
UNSUPPORTED_ENDPOINT_TYPE (INVALID_REQUEST in v0, which cannot ask either). The brokers listed
are the live ones, none fenced, so IncludeFencedBrokers adds none.
"""

from __future__ import annotations

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import AUTHORIZED_OPERATIONS_OMITTED
from kafkalite.protocol.messages import describe_cluster
from kafkalite.protocol.messages.describe_cluster import ENDPOINT_BROKERS, ENDPOINT_CONTROLLERS

from ..metadata_cache import MetadataCache
from ..responses import respond

_ENDPOINT_NAMES = {ENDPOINT_BROKERS: "BROKER", ENDPOINT_CONTROLLERS: "CONTROLLER"}  # EndpointType.toString


class ClusterApis:
    def __init__(self, metadata_cache: MetadataCache) -> None:
        self.metadata_cache = metadata_cache

    def describe_cluster(self, request: Request) -> Response:
        R = describe_cluster.RESPONSE
        req = request.body
        if req.endpoint_type not in _ENDPOINT_NAMES:
            return _refused(request, E.UNSUPPORTED_ENDPOINT_TYPE,
                            f"Unsupported endpoint type {req.endpoint_type}")
        if req.endpoint_type != ENDPOINT_BROKERS:
            return _refused(request, E.MISMATCHED_ENDPOINT_TYPE,
                            "The request was sent to an endpoint of type BROKER, but we wanted an "
                            f"endpoint of type {_ENDPOINT_NAMES[req.endpoint_type]}")
        snap = self.metadata_cache.snapshot
        B = R["brokers"]
        brokers = []
        for b in sorted(snap.brokers.values(), key=lambda b: b.id):
            e = b.endpoint(request.listener)
            if e is not None:
                brokers.append(B(broker_id=b.id, host=e.host, port=e.port, rack=b.rack, is_fenced=False))
        listed = {b.broker_id for b in brokers}
        # Asked for, the authorized operations are filled in by the checks (server/checks.py:
        # what the authorizer allows on the cluster, 0 without DESCRIBE on it).
        operations = AUTHORIZED_OPERATIONS_OMITTED
        return respond(request, R(
            throttle_time_ms=0, error_code=E.NONE, error_message=None, endpoint_type=ENDPOINT_BROKERS,
            cluster_id=snap.cluster_id or "",
            controller_id=snap.controller_id if snap.controller_id in listed else -1,
            brokers=brokers, cluster_authorized_operations=operations))


def _refused(request: Request, error: int, message: str) -> Response:
    """An endpoint type this broker does not describe; INVALID_REQUEST in v0, whose requests
    cannot name one (Kafka's answer all the same)."""
    code = E.INVALID_REQUEST if request.api_version == 0 else error
    return respond(request, describe_cluster.RESPONSE(
        throttle_time_ms=0, error_code=code, error_message=message, cluster_id="", brokers=[]))
