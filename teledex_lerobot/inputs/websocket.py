"""A minimal WebSocket (RFC 6455) endpoint on the standard library: enough to receive JSON messages from a headset
browser (WebXR) or any client, and a matching client for tests and replays. No extensions, no TLS (put a TLS proxy
in front for wss:// pages).
"""

import base64
import hashlib
import os
import socket
import struct
import threading

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_TEXT, _BINARY, _CLOSE, _PING, _PONG, _CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0
MAX_MESSAGE_BYTES = 1 << 20


class _Closed(Exception):
    pass


def _read_exact(connection: socket.socket, count: int, stop: threading.Event) -> bytes:
    chunks, remaining = [], count
    while remaining:
        try:
            chunk = connection.recv(remaining)
        except TimeoutError:
            if stop.is_set():
                raise _Closed from None
            continue
        if not chunk:
            raise _Closed
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _handshake(connection: socket.socket, stop: threading.Event) -> None:
    request = b""
    while b"\r\n\r\n" not in request:
        request += _read_exact(connection, 1, stop)
        if len(request) > 16384:
            raise _Closed
    headers = {}
    for line in request.decode("latin-1").split("\r\n")[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    key = headers.get("sec-websocket-key")
    if key is None:
        connection.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        raise _Closed
    accept = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
    connection.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Accept: {accept}\r\n\r\n").encode())


def _read_frame(connection: socket.socket, stop: threading.Event) -> tuple[bool, int, bytes]:
    first, second = _read_exact(connection, 2, stop)
    length = second & 0x7F
    if length == 126:
        length = struct.unpack("!H", _read_exact(connection, 2, stop))[0]
    elif length == 127:
        length = struct.unpack("!Q", _read_exact(connection, 8, stop))[0]
    if length > MAX_MESSAGE_BYTES:
        raise _Closed
    mask = _read_exact(connection, 4, stop) if second & 0x80 else b"\0\0\0\0"
    payload = bytearray(_read_exact(connection, length, stop))
    for i in range(length):
        payload[i] ^= mask[i % 4]
    return bool(first & 0x80), first & 0x0F, bytes(payload)


def _frame(opcode: int, payload: bytes, masked: bool) -> bytes:
    header = bytes([0x80 | opcode])
    mask_bit = 0x80 if masked else 0
    if len(payload) < 126:
        header += bytes([mask_bit | len(payload)])
    elif len(payload) < 65536:
        header += bytes([mask_bit | 126]) + struct.pack("!H", len(payload))
    else:
        header += bytes([mask_bit | 127]) + struct.pack("!Q", len(payload))
    if not masked:
        return header + payload
    mask = os.urandom(4)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def serve_websocket_client(connection: socket.socket, on_message, stop: threading.Event) -> None:
    """Handshake, then call on_message(bytes) for every complete text/binary message until the client closes, the
    stream breaks, or `stop` is set. Protocol errors end the connection (the client may reconnect)."""
    connection.settimeout(0.05)
    try:
        _handshake(connection, stop)
        message = b""
        while not stop.is_set():
            final, opcode, payload = _read_frame(connection, stop)
            if opcode == _CLOSE:
                connection.sendall(_frame(_CLOSE, b"", masked=False))
                return
            if opcode == _PING:
                connection.sendall(_frame(_PONG, payload, masked=False))
            elif opcode in (_TEXT, _BINARY, _CONTINUATION):
                message += payload
                if len(message) > MAX_MESSAGE_BYTES:
                    return
                if final:
                    on_message(message)
                    message = b""
    except (_Closed, OSError):
        return


class WebSocketClient:
    """Sends messages to a WebSocket server (tests, replays, a simulated headset)."""

    def __init__(self, host: str, port: int, timeout_s: float = 2.0):
        self.socket = socket.create_connection((host, port), timeout=timeout_s)
        key = base64.b64encode(os.urandom(16)).decode()
        self.socket.sendall((f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.socket.recv(1024)
            if not chunk:
                raise ConnectionError("WebSocket server closed during the handshake")
            response += chunk
        if b" 101 " not in response.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"WebSocket handshake refused: {response.splitlines()[0]!r}")

    def send(self, message: bytes | str) -> None:
        is_text = isinstance(message, str)
        payload = message.encode() if is_text else message
        self.socket.sendall(_frame(_TEXT if is_text else _BINARY, payload, masked=True))

    def close(self) -> None:
        try:
            self.socket.sendall(_frame(_CLOSE, b"", masked=True))
        except OSError:
            pass
        self.socket.close()
