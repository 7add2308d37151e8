"""The broker: its components (replication, coordinators, handlers by area, the served-apis
table) wired together by ``broker.py`` around the network layer's SocketServer."""
