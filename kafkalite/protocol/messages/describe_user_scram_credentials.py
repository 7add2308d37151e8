"""DescribeUserScramCredentials (key 50): the SCRAM mechanisms and iterations of users (KIP-554).

Declared from Kafka's DescribeUserScramCredentialsRequest.json / ...Response.json, version 0,
flexible from 0. ``users`` null or empty: every user that has a credential.
"""

from ..api_keys import ApiKey
from ..schema import INT8, INT16, INT32, STRING, Array, F, Struct, api

USER_NAME = Struct("UserName", F("name", STRING))

REQUEST = Struct(
    "DescribeUserScramCredentialsRequest",
    F("users", Array(USER_NAME), nullable="0+", default=None),
)

CREDENTIAL_INFO = Struct(
    "CredentialInfo",
    F("mechanism", INT8),
    F("iterations", INT32),
)

RESULT = Struct(
    "DescribeUserScramCredentialsResult",
    F("user", STRING),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("credential_infos", Array(CREDENTIAL_INFO)),
)

RESPONSE = Struct(
    "DescribeUserScramCredentialsResponse",
    F("throttle_time_ms", INT32),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
    F("results", Array(RESULT)),
)

DESCRIBE_USER_SCRAM_CREDENTIALS = api(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, "0", "0+", REQUEST, RESPONSE)
