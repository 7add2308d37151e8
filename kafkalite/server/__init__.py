"""The broker: configuration, listeners, and (later) the socket server and request handling."""
