"""Helpers shared by the test directories, one job per module:

- ``wait``: ``wait_for``, the bounded poll tests use instead of sleeps;
- ``wire_client``: ``Client``, a minimal blocking client sending the protocol's own frames;
- ``channel``: a RequestChannel's Requests and Processors without sockets;
- ``brokers``: brokers in the test's process (``running_broker``, ``two_brokers``);
- ``broker_process``: ``kafkalite broker`` as a subprocess (``BrokerProcess``);
- ``raw_requests``: CreateTopics, Produce, Fetch, ListOffsets built by hand, and a log read back;
- ``real_clients``: producing and consuming with kcat, confluent-kafka, kafka-python, aiokafka;
- ``batches``: record batches built by kafka-python (an independent writer of Kafka's format);
- ``small_disk``: a small tmpfs to fill up.
"""
