"""Kafka's SocketServer: Acceptors, Processors and the RequestChannel (docs/architecture.md)."""
