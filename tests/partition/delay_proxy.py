#!/usr/bin/env python3
"""A TCP proxy that delays every chunk, each way, by the milliseconds written in a file.

The kernel of these machines has no netem qdisc, so the partition test delays A's link here:
A connects to this proxy (in ZooKeeper's namespace), which forwards to the server. The delay
file holds a number of ms (0 when missing); data keeps its order.

    delay_proxy.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_FILE
"""

import asyncio
import sys
import time


def delay_s(path: str) -> float:
    try:
        with open(path) as f:
            return int(f.read().strip() or 0) / 1000
    except (OSError, ValueError):
        return 0.0


async def pipe(reader, writer, path):
    queue: asyncio.Queue = asyncio.Queue()

    async def send():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.ensure_future(send())
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            await queue.put((time.monotonic() + delay_s(path), data))
    except (ConnectionError, OSError):
        pass
    await queue.put((0, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def main():
    host, port, target_host, target_port, path = sys.argv[1:6]

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(target_host, int(target_port))
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(
            pipe(client_reader, server_writer, path),
            pipe(server_reader, client_writer, path),
            return_exceptions=True,
        )

    server = await asyncio.start_server(handle, host, int(port))
    async with server:
        await server.serve_forever()


asyncio.run(main())
