"""DeleteAcls (key 31): remove the ACL bindings matching each filter, and say which.

Declared from Kafka's DeleteAclsRequest.json / DeleteAclsResponse.json at 4.1.1, versions 1-3
(flexible 2+; v0 removed by KIP-896). One filter result per filter, in order, listing the
bindings it removed.
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, STRING, Array, F, Struct, api

DELETE_ACLS_FILTER = Struct(
    "DeleteAclsFilter",
    F("resource_type_filter", INT8),
    F("resource_name_filter", STRING, nullable="0+", default=None),
    F("pattern_type_filter", INT8, "1+", default=3),
    F("principal_filter", STRING, nullable="0+", default=None),
    F("host_filter", STRING, nullable="0+", default=None),
    F("operation", INT8),
    F("permission_type", INT8),
)

REQUEST = Struct(
    "DeleteAclsRequest",
    F("filters", Array(DELETE_ACLS_FILTER)),
)

DELETE_ACLS_MATCHING_ACL = Struct(
    "DeleteAclsMatchingAcl",
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("resource_type", INT8),
    F("resource_name", STRING),
    F("pattern_type", INT8, "1+", default=3),
    F("principal", STRING),
    F("host", STRING),
    F("operation", INT8),
    F("permission_type", INT8),
)

DELETE_ACLS_FILTER_RESULT = Struct(
    "DeleteAclsFilterResult",
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("matching_acls", Array(DELETE_ACLS_MATCHING_ACL)),
)

RESPONSE = Struct(
    "DeleteAclsResponse",
    F("throttle_time_ms", INT32),
    F("filter_results", Array(DELETE_ACLS_FILTER_RESULT)),
)

DELETE_ACLS = api(ApiKey.DELETE_ACLS, "1-3", "2+", REQUEST, RESPONSE)
