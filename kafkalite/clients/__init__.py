"""Kafka clients on kafkalite's own codec and framing, shared by everything that talks to another
broker: the controller's send threads, the brokers' lifecycle thread, the cluster command (and the
replica fetchers to come). In Kafka, the controller and the replica fetchers share one client
framing (NetworkClient)."""

from .blocking import BlockingClient
from .security import AuthenticationError, ClientSecurity

__all__ = ["AuthenticationError", "BlockingClient", "ClientSecurity"]
