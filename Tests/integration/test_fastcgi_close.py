"""How the responder ends a FastCGI connection that is not kept, spoken to directly over TCP
(where input left unread at close would turn into a reset that destroys the response).

- Input read to its end: the answer arrives whole and the responder closes at once, without
  libfcgi's lingering close (which would hold the worker reading until the client closes).
- Input left unread (a body over the size limit): the 413 still arrives whole, because that
  connection keeps the lingering close and drains what the client sends.
"""
import socket
import struct
import subprocess
import time

import pytest

from conftest import binary, free_port

BEGIN, END, PARAMS, STDIN, STDOUT = 1, 3, 4, 5, 6
ITK = "/identitytoolkit.googleapis.com/v1"


def record(kind, content=b"", request_id=1):
    return struct.pack(">BBHHBx", 1, kind, request_id, len(content), 0) + content


def pair(name: bytes, value: bytes) -> bytes:
    def size(n):
        return bytes([n]) if n < 128 else struct.pack(">I", n | 0x80000000)
    return size(len(name)) + size(len(value)) + name + value


def stream(kind, data: bytes):
    out = b"".join(record(kind, data[i:i + 65535]) for i in range(0, len(data), 65535))
    return out + record(kind)


def request_bytes(method, path, query="", body=b"", declared=None, end_input=True):
    params = {b"REQUEST_METHOD": method.encode(), b"DOCUMENT_URI": path.encode(), b"REQUEST_URI": path.encode(),
              b"QUERY_STRING": query.encode(), b"REMOTE_ADDR": b"127.0.0.1", b"SERVER_NAME": b"localhost",
              b"HTTP_HOST": b"localhost", b"CONTENT_TYPE": b"application/json",
              b"CONTENT_LENGTH": str(len(body) if declared is None else declared).encode()}
    out = record(BEGIN, struct.pack(">HB5x", 1, 0))  # responder role, flags 0: the connection is not kept
    out += stream(PARAMS, b"".join(pair(k, v) for k, v in params.items()))
    if end_input:
        out += stream(STDIN, body)
    else:
        out += b"".join(record(STDIN, body[i:i + 65535]) for i in range(0, len(body), 65535))
    return out


def read_answer(sock):
    """Reads records until END_REQUEST; returns (stdout bytes, bytes after END_REQUEST before EOF)."""
    buf, out = b"", b""
    while True:
        while len(buf) < 8:
            chunk = sock.recv(65536)
            assert chunk, "connection closed before END_REQUEST"
            buf += chunk
        _, kind, _, length, padding = struct.unpack(">BBHHBx", buf[:8])
        while len(buf) < 8 + length + padding:
            chunk = sock.recv(65536)
            assert chunk, "connection closed inside a record"
            buf += chunk
        content, buf = buf[8:8 + length], buf[8 + length + padding:]
        if kind == STDOUT:
            out += content
        if kind == END:
            return out, buf


def status_of(answer: bytes) -> int:
    head = answer.split(b"\r\n\r\n", 1)[0]
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"status:"):
            return int(line.split()[1])
    return 200


@pytest.fixture(scope="module")
def responder(tmp_path_factory):
    data = tmp_path_factory.mktemp("fcgi")
    port = free_port()
    env = {"PATH": "/usr/bin:/bin", "GATEHOUSE_LISTEN": f"127.0.0.1:{port}", "GATEHOUSE_WORKERS": "2"}
    proc = subprocess.Popen([str(binary()), "serve", "--data", str(data)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.1)
    yield port
    proc.terminate()
    proc.wait(timeout=15)


def exchange(port, payload):
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(payload)
    answer, rest = read_answer(sock)
    return sock, answer, rest


def peer_has_closed(sock) -> bool:
    """True once the responder's socket is gone: bytes sent to it are answered with a reset."""
    assert sock.recv(1) == b""  # its FIN
    return peer_resets_within(sock, 20)


def peer_resets_within(sock, sends: int) -> bool:
    """True if bytes sent to the responder are answered with a reset within `sends` sends."""
    try:
        for _ in range(sends):
            sock.sendall(b"\0" * 8)
            time.sleep(0.05)
    except (BrokenPipeError, ConnectionResetError):
        return True
    return False


@pytest.mark.parametrize("method,path,query,body", [
    ("GET", "/__/auth/health", "", b""),
    ("POST", f"{ITK}/accounts:lookup", "key=k", b'{"idToken": "not-a-token"}'),
])
def test_input_read_to_its_end_is_answered_whole_and_closed_at_once(responder, method, path, query, body):
    sock, answer, rest = exchange(responder, request_bytes(method, path, query, body))
    with sock:
        assert status_of(answer) in (200, 400) and answer.split(b"\r\n\r\n", 1)[1].startswith(b"{")
        assert rest == b""
        assert peer_has_closed(sock), "the responder kept reading after the answer (lingering close)"


def test_oversized_body_left_unread_still_gets_its_413_whole(responder):
    body = b"{" + b" " * (70 * 1024) + b"}"
    sock, answer, _ = exchange(responder, request_bytes("POST", f"{ITK}/accounts:lookup", "key=k", body))
    with sock:
        assert status_of(answer) == 413 and b"PAYLOAD_TOO_LARGE" in answer
        # The responder drains instead of resetting: more input is taken without error.
        assert sock.recv(1) == b""
        assert not peer_resets_within(sock, 5)


def test_body_shorter_than_declared_is_refused_and_answered(responder):
    # CONTENT_LENGTH says 100, the input ends after 10: the body cannot be read, the answer is a 502.
    sock, answer, rest = exchange(responder, request_bytes("POST", f"{ITK}/accounts:lookup", "key=k", b"0123456789", declared=100))
    with sock:
        assert status_of(answer) == 502 and rest == b""
