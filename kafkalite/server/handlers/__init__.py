"""Request handlers by area of Kafka's apis (Kafka's KafkaApis, split): each module holds one
class whose methods answer the apis of its area. Which method answers which api, in which
versions and on which listeners, is the served-apis table (``kafkalite/server/apis.py``);
``KafkaApis`` (``kafka_apis.py``) dispatches from it.

- ``api_versions``: ApiVersions, and SASL requests that come after authentication
- ``metadata``: Metadata
- ``topics``: CreateTopics, DeleteTopics (passed to the controller)
- ``control``: LeaderAndIsr, StopReplica, UpdateMetadata (from the controller)
- ``registration``: BrokerRegistration, BrokerHeartbeat (served by the controller)
"""
