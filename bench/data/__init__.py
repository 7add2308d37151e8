"""The data-path benchmarks, ``kafkalite bench produce`` and ``kafkalite bench fetch``: kafkalite
against librdkafka's mock cluster in the same run, with the same client code, after the same
clients were measured against a bare server (servers.py) that only answers, to show they are not
the bottleneck. Raw pipelined Produce and Fetch on kafkalite's own codec (wire.py), the
confluent-kafka clients (clients.py), the loopback ceiling (loopback.py), and the runs with their
tables and goals (run.py)."""
