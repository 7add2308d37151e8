import socket


def port_free(port: int) -> bool:
    """Whether a listener could bind ``port`` on 127.0.0.1 again (as a restarted broker would)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True
