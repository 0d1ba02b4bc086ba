"""A TCP proxy in front of a real ZooKeeper that answers multiRead (opcode 22) as a server
before 3.6 does: ZooKeeper 3.4 and 3.5 hand an unknown opcode to
``UnimplementedRequestProcessor``, which answers the request's xid with UNIMPLEMENTED (-6) and
closes the connection (the session lives on; the client reconnects). Every other request goes
to the real server, so sessions, chroots and data are real.

``mode="close"`` only closes the connection, for a server (or a middlebox) that drops it without
an answer. ``passes`` multiRead requests go through before the first is refused (a session that
moves from a 3.6+ server to an older one of a mixed ensemble).

``mode="stall"`` forwards every request, multiRead too, but only the first ``passes`` requests of
each connection: then it stops forwarding anything the client sends (pings included) and keeps
the connection open, for a server that stalls every new connection after a few requests. The
client gives the connection up at its read timeout and reconnects, to the same fate.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from dataclasses import dataclass, field

UNIMPLEMENTED = -6
MULTI_READ = 22


def _read_exactly(sock: socket.socket, length: int) -> bytes | None:
    chunks = []
    while length:
        try:
            chunk = sock.recv(length)
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        length -= len(chunk)
    return b"".join(chunks)


def _read_frame(sock: socket.socket) -> bytes | None:
    """One length-prefixed frame, its length included."""
    head = _read_exactly(sock, 4)
    if head is None:
        return None
    body = _read_exactly(sock, struct.unpack("!i", head)[0])
    return None if body is None else head + body


@dataclass
class _Connection:
    client: socket.socket
    server: socket.socket
    lock: threading.Lock = field(default_factory=threading.Lock)
    outstanding: list[int] = field(default_factory=list)
    """xids sent to the server and not yet answered, in order."""
    refused: int | None = None
    """xid of the multiRead being refused, answered once the earlier ones are."""

    def close(self) -> None:
        for sock in (self.client, self.server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


class OldServerProxy:
    """Listens on 127.0.0.1; ``connect_string`` replaces the real server's host:port."""

    def __init__(self, upstream: str, mode: str = "unimplemented", passes: int = 0) -> None:
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.mode = mode
        self.passes = passes
        self.refused = 0
        """multiRead requests refused so far."""
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._connections: list[_Connection] = []
        self._stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True, name="old-zk-proxy").start()

    @property
    def connect_string(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self._stopped.set()
        self._listener.close()
        for connection in self._connections:
            connection.close()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            connection = _Connection(client, server)
            self._connections.append(connection)
            threading.Thread(target=self._from_client, args=(connection,), daemon=True).start()
            threading.Thread(target=self._from_server, args=(connection,), daemon=True).start()

    def _from_client(self, c: _Connection) -> None:
        first = _read_frame(c.client)  # ConnectRequest: no request header
        if first is None:
            return c.close()
        c.server.sendall(first)
        forwarded = 0
        while (frame := _read_frame(c.client)) is not None:
            xid, opcode = struct.unpack_from("!ii", frame, 4)
            if self.mode == "stall":
                if forwarded >= self.passes:
                    self.refused += xid > 0
                    continue  # held, unanswered, as the connection stays open
                forwarded += xid > 0
                c.server.sendall(frame)
                continue
            with c.lock:
                if opcode == MULTI_READ and self.passes > 0:
                    self.passes -= 1
                elif opcode == MULTI_READ:
                    self.refused += 1
                    if self.mode == "close":
                        return c.close()
                    c.refused = xid
                    if not c.outstanding:
                        return self._refuse(c)
                    return  # answered by _from_server once the earlier requests are
                if xid > 0:
                    c.outstanding.append(xid)
                c.server.sendall(frame)
        c.close()

    def _from_server(self, c: _Connection) -> None:
        first = _read_frame(c.server)  # ConnectResponse
        if first is None:
            return c.close()
        c.client.sendall(first)
        while (frame := _read_frame(c.server)) is not None:
            (xid,) = struct.unpack_from("!i", frame, 4)
            with c.lock:
                if xid in c.outstanding:
                    c.outstanding.remove(xid)
                try:
                    c.client.sendall(frame)
                except OSError:
                    return c.close()
                if c.refused is not None and not c.outstanding:
                    return self._refuse(c)
        c.close()

    @staticmethod
    def _refuse(c: _Connection) -> None:
        """The 3.5 answer: reply header (xid, zxid, err) alone, then the connection closed."""
        assert c.refused is not None
        with contextlib.suppress(OSError):
            c.client.sendall(struct.pack("!iiqi", 16, c.refused, 0, UNIMPLEMENTED))
        c.close()
