"""SaslAuthenticate (key 36): one SASL token each way, after a v1 SaslHandshake.

Declared from Kafka's SaslAuthenticateRequest.json / SaslAuthenticateResponse.json, versions 0-2
(flexible 2+). Response: v1+ the session lifetime (0: no re-authentication required).
"""

from ..api_keys import ApiKey
from ..schema import BYTES, INT16, INT64, STRING, F, Struct, api

REQUEST = Struct(
    "SaslAuthenticateRequest",
    F("auth_bytes", BYTES),
)

RESPONSE = Struct(
    "SaslAuthenticateResponse",
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("auth_bytes", BYTES),
    F("session_lifetime_ms", INT64, "1+", default=0),
)

SASL_AUTHENTICATE = api(ApiKey.SASL_AUTHENTICATE, "0-2", "2+", REQUEST, RESPONSE)
