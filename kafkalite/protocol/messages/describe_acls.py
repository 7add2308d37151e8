"""DescribeAcls (key 29): the ACL bindings matching one filter, grouped by resource pattern.

Declared from Kafka's DescribeAclsRequest.json / DescribeAclsResponse.json at 4.1.1, versions 1-3
(flexible 2+; v0 removed by KIP-896). A null name, principal or host filter matches any; the
pattern type filter may be ANY or MATCH (protocol/acl.py).
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, STRING, Array, F, Struct, api

REQUEST = Struct(
    "DescribeAclsRequest",
    F("resource_type_filter", INT8),
    F("resource_name_filter", STRING, nullable="0+", default=None),
    F("pattern_type_filter", INT8, "1+", default=3),
    F("principal_filter", STRING, nullable="0+", default=None),
    F("host_filter", STRING, nullable="0+", default=None),
    F("operation", INT8),
    F("permission_type", INT8),
)

ACL_DESCRIPTION = Struct(
    "AclDescription",
    F("principal", STRING),
    F("host", STRING),
    F("operation", INT8),
    F("permission_type", INT8),
)

DESCRIBE_ACLS_RESOURCE = Struct(
    "DescribeAclsResource",
    F("resource_type", INT8),
    F("resource_name", STRING),
    F("pattern_type", INT8, "1+", default=3),
    F("acls", Array(ACL_DESCRIPTION)),
)

RESPONSE = Struct(
    "DescribeAclsResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("resources", Array(DESCRIBE_ACLS_RESOURCE)),
)

DESCRIBE_ACLS = api(ApiKey.DESCRIBE_ACLS, "1-3", "2+", REQUEST, RESPONSE)
