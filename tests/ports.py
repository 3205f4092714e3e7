"""A port for a test's server to listen on, picked below the kernel's ephemeral range.

A port bound to :0 and closed comes from the ephemeral range, the same range every outgoing
connection's local port is taken from: in the moment between the pick and the server's own
bind (seconds, for a JVM), any connection of a test running beside it may take that port, and
the server then fails to start. No connection takes a port below the range, so there only
another test's pick can collide, and the pick is random over thousands of ports.

    python3 tests/ports.py    # prints one
"""

from __future__ import annotations

import random
import socket

LOWEST = 10000


def ephemeral_range() -> tuple[int, int]:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = f.read().split()
            return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def listen_port(host: str = "127.0.0.1") -> int:
    """A TCP port on `host` that was free a moment ago and that no outgoing connection takes."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    low, _ = ephemeral_range()
    for _ in range(100 if low - LOWEST >= 1000 else 0):
        port = random.randrange(LOWEST, low)
        with socket.socket(family, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return port
    # The range starts too low to leave room below it: the kernel's pick, as before.
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    print(listen_port())
