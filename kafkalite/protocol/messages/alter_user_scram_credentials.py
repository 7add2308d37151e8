"""AlterUserScramCredentials (key 51): upsert and delete users' SCRAM credentials (KIP-554).

Declared from Kafka's AlterUserScramCredentialsRequest.json / ...Response.json, version 0,
flexible from 0. A client's upsertion carries the salt and the SaltedPassword (Hi(password, salt,
iterations)); the controller keeps only the StoredKey and ServerKey derived from it. The
controller's pushes to brokers use the same api (server/handlers/scram.py): there
``salted_password`` carries StoredKey followed by ServerKey, and a deletion with an empty name and
mechanism 0 first clears every credential (a full-state push).
"""

from ..api_keys import ApiKey
from ..schema import BYTES, INT8, INT16, INT32, STRING, Array, F, Struct, api

DELETION = Struct(
    "ScramCredentialDeletion",
    F("name", STRING),
    F("mechanism", INT8),
)

UPSERTION = Struct(
    "ScramCredentialUpsertion",
    F("name", STRING),
    F("mechanism", INT8),
    F("iterations", INT32),
    F("salt", BYTES),
    F("salted_password", BYTES),
)

REQUEST = Struct(
    "AlterUserScramCredentialsRequest",
    F("deletions", Array(DELETION)),
    F("upsertions", Array(UPSERTION)),
)

RESULT = Struct(
    "AlterUserScramCredentialsResult",
    F("user", STRING),
    F("error_code", INT16),
    F("error_message", STRING, nullable="0+", default=None),
)

RESPONSE = Struct(
    "AlterUserScramCredentialsResponse",
    F("throttle_time_ms", INT32),
    F("results", Array(RESULT)),
)

ALTER_USER_SCRAM_CREDENTIALS = api(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, "0", "0+", REQUEST, RESPONSE)
