"""DescribeCluster (key 60): the cluster id, the controller and the brokers, as AdminClient's
describeCluster asks them (KIP-700).

Declared from Kafka's DescribeClusterRequest.json / DescribeClusterResponse.json, versions 0-2,
all flexible. v1 adds the endpoint type asked and described (KIP-919: 1 = brokers, 2 =
controllers; MISMATCHED_ENDPOINT_TYPE and UNSUPPORTED_ENDPOINT_TYPE become valid top-level
errors); v2 adds IncludeFencedBrokers and each broker's IsFenced (KIP-1073).
"""

from ..acl import AUTHORIZED_OPERATIONS_OMITTED
from ..api_keys import ApiKey
from ..schema import BOOL, INT8, INT16, INT32, STRING, Array, F, Struct, api

ENDPOINT_BROKERS = 1
ENDPOINT_CONTROLLERS = 2

REQUEST = Struct(
    "DescribeClusterRequest",
    F("include_cluster_authorized_operations", BOOL),
    F("endpoint_type", INT8, "1+", default=ENDPOINT_BROKERS),
    F("include_fenced_brokers", BOOL, "2+", default=False),
)

DESCRIBE_CLUSTER_BROKER = Struct(
    "DescribeClusterBroker",
    F("broker_id", INT32),
    F("host", STRING),
    F("port", INT32),
    F("rack", STRING, nullable="0+", default=None),
    F("is_fenced", BOOL, "2+", default=False),
)

RESPONSE = Struct(
    "DescribeClusterResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("endpoint_type", INT8, "1+", default=ENDPOINT_BROKERS),
    F("cluster_id", STRING),
    F("controller_id", INT32, default=-1),
    F("brokers", Array(DESCRIBE_CLUSTER_BROKER)),
    F("cluster_authorized_operations", INT32, default=AUTHORIZED_OPERATIONS_OMITTED),
)

DESCRIBE_CLUSTER = api(ApiKey.DESCRIBE_CLUSTER, "0-2", "0+", REQUEST, RESPONSE)
