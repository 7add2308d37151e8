"""SaslHandshake (key 17): the client names its SASL mechanism.

Declared from Kafka's SaslHandshakeRequest.json / SaslHandshakeResponse.json, versions 0-1, none
flexible. v0: the SASL tokens that follow travel as bare size-prefixed frames; v1: inside
SaslAuthenticate requests. The response lists the mechanisms the listener has enabled.
"""

from ..api_keys import ApiKey
from ..schema import INT16, STRING, Array, F, Struct, api

REQUEST = Struct(
    "SaslHandshakeRequest",
    F("mechanism", STRING),
)

RESPONSE = Struct(
    "SaslHandshakeResponse",
    F("error_code", INT16),
    F("mechanisms", Array(STRING)),
)

SASL_HANDSHAKE = api(ApiKey.SASL_HANDSHAKE, "0-1", "none", REQUEST, RESPONSE)
