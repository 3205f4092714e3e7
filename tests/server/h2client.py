"""A raw HTTP/2 client (the `h2` package) for hostile tests: it can open many streams and
never grant the server a byte of flow-control window, which no well-behaved client does."""

import socket
import struct
import threading

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings


def grpc_frame(message: bytes) -> bytes:
    """A gRPC length-prefixed message, uncompressed."""
    return b"\x00" + struct.pack(">I", len(message)) + message


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


class H2Client:
    """One HTTP/2 connection; a thread reads the server's frames (answering pings and
    settings, as any client must), records each stream's response headers and data, and only
    grants window when `window` is not 0."""

    def __init__(self, port, window=65535):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.conn = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.window = window
        self.lock = threading.Lock()
        self.settled = threading.Event()
        self.changed = threading.Condition(self.lock)
        self.headers = {}
        self.data = {}
        self.ended = set()
        self.reset = {}
        self.goaway = None
        self.closed = False
        with self.lock:
            self.conn.initiate_connection()
            if window != 65535:
                self.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window})
            self._flush()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        # The server's SETTINGS (its stream limit) before any request.
        self.settled.wait(10)

    def _flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def _read(self):
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                with self.lock:
                    for event in self.conn.receive_data(chunk):
                        self._on(event)
                    self._flush()
                    self.changed.notify_all()
        except (OSError, h2.exceptions.ProtocolError):
            pass
        with self.lock:
            self.closed = True
            self.changed.notify_all()

    def _on(self, event):
        if isinstance(event, h2.events.RemoteSettingsChanged):
            self.settled.set()
        elif isinstance(event, h2.events.ResponseReceived):
            self.headers[event.stream_id] = dict(event.headers)
        elif isinstance(event, h2.events.TrailersReceived):
            self.headers[event.stream_id].update(dict(event.headers))
        elif isinstance(event, h2.events.DataReceived):
            self.data.setdefault(event.stream_id, bytearray()).extend(event.data)
            if self.window:
                self.conn.acknowledge_received_data(
                    event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self.ended.add(event.stream_id)
        elif isinstance(event, h2.events.StreamReset):
            self.reset[event.stream_id] = event.error_code
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = event.error_code

    def open(self, headers, body=None):
        """Opens a stream; None when the server's stream limit is reached."""
        with self.lock:
            sid = self.conn.get_next_available_stream_id()
            try:
                self.conn.send_headers(sid, headers, end_stream=body is None)
            except h2.exceptions.TooManyStreamsError:
                return None
            if body is not None:
                self.conn.send_data(sid, body, end_stream=True)
            self._flush()
            return sid

    def get(self, path, extra=()):
        return self.open([(":method", "GET"), (":path", path), (":scheme", "http"),
                          (":authority", "127.0.0.1"), *extra])

    def grpc(self, method, message):
        return self.open([(":method", "POST"), (":path", method), (":scheme", "http"),
                          (":authority", "127.0.0.1"), ("content-type", "application/grpc"),
                          ("te", "trailers")], grpc_frame(message))

    def wait(self, predicate, timeout=60):
        """Waits until `predicate()` holds (under the lock) or the connection closes."""
        with self.lock:
            self.changed.wait_for(lambda: predicate() or self.closed, timeout)
            return predicate()

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.reader.join(10)
