"""CreateAcls (key 30): add ACL bindings to the authorizer's (the controller's) set.

Declared from Kafka's CreateAclsRequest.json / CreateAclsResponse.json at 4.1.1, versions 1-3
(flexible 2+; v0 removed by KIP-896). One result per creation, in order. The codes are
protocol/acl.py's.
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, STRING, Array, F, Struct, api

ACL_CREATION = Struct(
    "AclCreation",
    F("resource_type", INT8),
    F("resource_name", STRING),
    F("resource_pattern_type", INT8, "1+", default=3),
    F("principal", STRING),
    F("host", STRING),
    F("operation", INT8),
    F("permission_type", INT8),
)

REQUEST = Struct(
    "CreateAclsRequest",
    F("creations", Array(ACL_CREATION)),
)

ACL_CREATION_RESULT = Struct(
    "AclCreationResult",
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
)

RESPONSE = Struct(
    "CreateAclsResponse",
    F("throttle_time_ms", INT32),
    F("results", Array(ACL_CREATION_RESULT)),
)

CREATE_ACLS = api(ApiKey.CREATE_ACLS, "1-3", "2+", REQUEST, RESPONSE)
