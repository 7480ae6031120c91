"""A fake APNs provider gateway for the silent-push tests: HTTP/2 over TLS on 127.0.0.1 (the `h2`
package on plain sockets, one thread per connection), a throw-away certificate authority, an
ES256 auth key in the format of Apple's `.p8` files, and per request the checks Apple's gateway
makes, so a test can assert that Gatehouse's pushes would be accepted by the real one.

    key_path, public_key = make_apns_key(tmp)
    gw = FakeAPNs(KEY_ID, TEAM_ID, public_key, tmp).start()
    gw.script((410, "Unregistered"))   # answers the next push; later ones get 200 again
    req = gw.wait_for(1)[0]            # method, path, headers, payload, jwt_claims, problems, …

Only the provider token decides a default answer other than 200 (403 `MissingProviderToken` or
`InvalidProviderToken`); every other deviation is recorded in `problems` and still answered 200,
so that a test sees the request rather than a retry loop. Tests assert `problems == []`.
"""
import datetime
import ipaddress
import json
import re
import socket
import ssl
import threading
import time
import uuid
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from conftest import free_port

KEY_ID = "KEYID12345"
TEAM_ID = "TEAMID1234"
DEVICE_PATH = re.compile(r"/3/device/([0-9A-Fa-f]{64,200})")
# Apple refuses provider tokens issued more than an hour ago; a token from the future is as wrong.
TOKEN_WINDOW = 3600
# Apple's limit for the JSON payload of a push other than VoIP.
MAX_PAYLOAD = 4096
# Keys Apple shows to the user: a silent push must carry none of them.
VISIBLE_APS_KEYS = ("alert", "sound", "badge")


# --- Keys and certificates ----------------------------------------------------------------------

def _write_private_key(path: Path, key) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


def make_tls(directory):
    """A throw-away certificate authority and a server certificate for 127.0.0.1 and localhost
    signed by it, written as ca.pem, server.pem and server.key in `directory`. Returns the three
    paths (str), in that order."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    # Valid since yesterday, so a client whose clock is a little behind still accepts it.
    not_before, not_after = now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Gatehouse test APNs CA")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (x509.CertificateBuilder()
          .subject_name(ca_name)
          .issuer_name(ca_name)
          .public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number())
          .not_valid_before(not_before)
          .not_valid_after(not_after)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(ca_ski, critical=False)
          .sign(ca_key, hashes.SHA256()))

    server_key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    server = (x509.CertificateBuilder()
              .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
              .issuer_name(ca_name)
              .public_key(server_key.public_key())
              .serial_number(x509.random_serial_number())
              .not_valid_before(not_before)
              .not_valid_after(not_after)
              .add_extension(x509.SubjectAlternativeName(names), critical=False)
              .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
              .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                           data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                           crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
              .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
              .add_extension(x509.SubjectKeyIdentifier.from_public_key(server_key.public_key()), critical=False)
              .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
              .sign(ca_key, hashes.SHA256()))

    ca_path, cert_path, key_path = d / "ca.pem", d / "server.pem", d / "server.key"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(server.public_bytes(serialization.Encoding.PEM))
    _write_private_key(key_path, server_key)
    return str(ca_path), str(cert_path), str(key_path)


def tls_files(directory):
    """The paths make_tls writes, made only when they are missing, so gateways sharing a folder
    share one authority (one `ca_file` trusts them all)."""
    d = Path(directory)
    paths = (d / "ca.pem", d / "server.pem", d / "server.key")
    if all(p.exists() for p in paths):
        return tuple(str(p) for p in paths)
    return make_tls(d)


def make_apns_key(directory, name="AuthKey_TEST.p8"):
    """An APNs auth key as Apple issues it: EC on P-256, an unencrypted PKCS#8 PEM. Returns the
    file's path (str) and the public key that checks its signatures."""
    key = ec.generate_private_key(ec.SECP256R1())
    path = Path(directory) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_private_key(path, key)
    return str(path), key.public_key()


def make_wrong_curve_key(directory, name="AuthKey_P384.p8"):
    """A PKCS#8 PEM EC key on P-384: well-formed, but no ES256 key (for `config check`)."""
    path = Path(directory) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_private_key(path, ec.generate_private_key(ec.SECP384R1()))
    return str(path)


# --- The gateway --------------------------------------------------------------------------------

class FakeAPNs:
    """An APNs provider API on https://127.0.0.1:<port>. Records every request with what Apple
    would object to (`problems`) and answers with the next scripted `(status, reason)` from
    `answers`, else 200. Can be created (its port chosen) without listening, to play a gateway
    that is down, and started later on the same port; `stop()` drops every connection."""

    def __init__(self, key_id, team_id, public_key, ca_dir, port=None):
        self.key_id = key_id
        self.team_id = team_id
        self.public_key = public_key
        self.key_path = None  # the private key's file, when whoever made the key says so
        self.ca_file, cert_file, key_file = tls_files(ca_dir)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self.context.load_cert_chain(cert_file, key_file)
        # Apple's gateway speaks HTTP/2 only.
        self.context.set_alpn_protocols(["h2"])
        self.port = port or free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.answers = []
        self.connections = 0
        # Connection-level failures (handshake, ALPN, HTTP/2 framing), for the failure messages.
        self.errors = []
        self.lock = threading.Lock()
        self._requests = []
        self._listener = None
        self._sockets = set()
        self._threads = []
        # Signature checks by token: a sender reuses one token for many pushes.
        self._token_checks = {}

    def __repr__(self):
        return f"<FakeAPNs {self.url} {len(self._requests)} request(s)>"

    # --- Life cycle ---------------------------------------------------------------------------

    def start(self):
        with self.lock:
            if self._listener is not None:
                return self
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        # A timeout lets the accept loop notice stop() even where closing does not wake accept().
        listener.settimeout(0.5)
        with self.lock:
            self._listener = listener
        thread = threading.Thread(target=self._accept, args=(listener,), name=f"fake-apns-{self.port}", daemon=True)
        thread.start()
        with self.lock:
            self._threads.append(thread)
        return self

    def stop(self):
        """Closes the listener and every open connection; the port is free when this returns."""
        with self.lock:
            listener, self._listener = self._listener, None
            sockets = list(self._sockets)
            threads, self._threads = self._threads, []
        if listener is not None:
            for close in (lambda: listener.shutdown(socket.SHUT_RDWR), listener.close):
                try:
                    close()
                except OSError:
                    pass
        for s in sockets:
            # The plain socket's shutdown (not SSLSocket's, which drops its TLS state under the
            # thread reading it): the reader sees end of stream and closes the connection itself.
            try:
                socket.socket.shutdown(s, socket.SHUT_RDWR)
            except OSError:
                pass
        for t in threads:
            t.join(timeout=2)

    def script(self, *answers):
        """Queues `(status, reason)` answers, one per request to come."""
        with self.lock:
            self.answers.extend((int(status), reason) for status, reason in answers)
        return self

    # --- What arrived -------------------------------------------------------------------------

    @property
    def requests(self):
        with self.lock:
            return list(self._requests)

    def valid_requests(self):
        return [r for r in self.requests if not r["problems"]]

    def describe(self):
        """One line per request, and the connection errors: what a failing test should show."""
        with self.lock:
            lines = [f"{len(self._requests)} request(s) on {self.connections} connection(s)"]
            for r in self._requests:
                lines.append(f"  #{r['connection']} {r['method']} {r['path'][:40]} -> {r['status']} {r['reason'] or ''}"
                             f" problems={r['problems']}")
            lines += [f"  error: {e}" for e in self.errors]
        return "\n".join(lines)

    def wait_for(self, count, timeout=10.0):
        """The recorded requests once at least `count` arrived."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                if len(self._requests) >= count:
                    return list(self._requests)
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        raise AssertionError(f"expected {count} request(s) at the fake APNs gateway within {timeout} s; got "
                             + self.describe())

    # --- Serving ------------------------------------------------------------------------------

    def _accept(self, listener):
        while True:
            try:
                sock, _ = listener.accept()
            except socket.timeout:
                with self.lock:
                    if self._listener is not listener:
                        return
                continue
            except OSError:
                return  # stop() closed the listener
            with self.lock:
                if self._listener is not listener:
                    sock.close()
                    return
                self.connections += 1
                number = self.connections
                self._sockets.add(sock)
                thread = threading.Thread(target=self._serve, args=(sock, number),
                                          name=f"fake-apns-{self.port}-{number}", daemon=True)
                self._threads.append(thread)
            thread.start()

    def _error(self, connection, text):
        with self.lock:
            self.errors.append(f"connection {connection}: {text}")

    def _serve(self, sock, connection):
        conn = sock
        try:
            sock.settimeout(None)
            conn = self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            with self.lock:
                self._sockets.discard(sock)
                self._sockets.add(conn)
            try:
                conn.settimeout(10)  # a client that never finishes its handshake does not hold the thread
                conn.do_handshake()
                conn.settimeout(None)
            except (OSError, ValueError) as e:
                self._error(connection, f"TLS handshake failed: {e}")
                return
            if conn.selected_alpn_protocol() != "h2":
                self._error(connection, f"ALPN chose {conn.selected_alpn_protocol()!r}, not h2")
                return
            self._speak_h2(conn, connection)
        except (OSError, ValueError):
            # The client went away, or stop() shut the socket: either ends this connection quietly.
            pass
        finally:
            with self.lock:
                self._sockets.discard(sock)
                self._sockets.discard(conn)
            try:
                conn.close()
            except OSError:
                pass

    def _speak_h2(self, conn, connection):
        h2conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        # The server's preface: its SETTINGS frame.
        h2conn.initiate_connection()
        conn.sendall(h2conn.data_to_send())
        streams = {}   # stream id → (headers, body so far)
        unsent = {}    # stream id → response body waiting for flow-control window
        while True:
            data = conn.recv(65536)
            if not data:
                return
            try:
                events = h2conn.receive_data(data)
            except h2.exceptions.ProtocolError as e:
                self._error(connection, f"HTTP/2 protocol error: {e!r}")
                conn.sendall(h2conn.data_to_send())  # the GOAWAY h2 prepared
                return
            ended = False
            for event in events:
                if isinstance(event, h2.events.RequestReceived):
                    streams[event.stream_id] = (event.headers, bytearray())
                elif isinstance(event, h2.events.DataReceived):
                    if event.stream_id in streams:
                        streams[event.stream_id][1].extend(event.data)
                    # Handing the window back at once: a client never stalls on flow control.
                    h2conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    stream = streams.pop(event.stream_id, None)
                    if stream is not None:
                        body = self._respond(h2conn, event.stream_id, stream[0], bytes(stream[1]), connection)
                        if body:
                            unsent[event.stream_id] = body
                elif isinstance(event, h2.events.StreamReset):
                    streams.pop(event.stream_id, None)
                    unsent.pop(event.stream_id, None)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    ended = True
            self._send_bodies(h2conn, unsent)
            out = h2conn.data_to_send()
            if out:
                conn.sendall(out)
            if ended:
                return

    @staticmethod
    def _send_bodies(h2conn, unsent):
        """Sends the response bodies the peer's flow-control windows have room for."""
        for stream_id, body in list(unsent.items()):
            try:
                if h2conn.local_flow_control_window(stream_id) < len(body):
                    continue  # sent once a WINDOW_UPDATE makes room
                h2conn.send_data(stream_id, body, end_stream=True)
            except h2.exceptions.ProtocolError:
                pass  # the client reset or closed the stream: nobody wants this answer any more
            del unsent[stream_id]

    def _respond(self, h2conn, stream_id, headers, body, connection):
        """Records the request, sends the answer's headers; returns the answer's body to send."""
        received_at = time.monotonic()
        record = self._inspect(headers, body)
        refusal = record.pop("refusal")
        record.update(connection=connection, stream_id=stream_id, received_at=received_at)
        apns_id = record["headers"].get("apns-id") or str(uuid.uuid4()).upper()
        with self.lock:
            if self.answers:
                status, reason = self.answers.pop(0)
            elif refusal:
                status, reason = 403, refusal
            else:
                status, reason = 200, None
            record.update(status=status, reason=reason, apns_id=apns_id)
            # Recorded before the answer leaves, so whoever reads the answer finds the record.
            self._requests.append(record)
        response = [(":status", str(status)), ("apns-id", apns_id)]
        data = b""
        if status != 200:
            answer = {"reason": reason}
            if status == 410:
                # Apple adds when it learnt that the token is no longer valid (ms since 1970).
                answer["timestamp"] = int(time.time() * 1000)
            data = json.dumps(answer).encode()
            response += [("content-type", "application/json"), ("content-length", str(len(data)))]
        try:
            h2conn.send_headers(stream_id, response, end_stream=not data)
        except h2.exceptions.ProtocolError:
            return b""  # the client reset the stream meanwhile
        return data

    # --- Apple's checks -----------------------------------------------------------------------

    def _inspect(self, headers, body):
        pseudo = {name: value for name, value in headers if name.startswith(":")}
        fields = {name.lower(): value for name, value in headers if not name.startswith(":")}
        problems = []
        method, path = pseudo.get(":method", ""), pseudo.get(":path", "")
        if method != "POST":
            problems.append(f"method {method}, expected POST")
        if not DEVICE_PATH.fullmatch(path):
            problems.append(f"path {path!r} is not /3/device/<device token, 64 to 200 hex digits>")

        token, jwt_header, jwt_claims, token_problems, refusal = self._provider_token(fields.get("authorization"))
        problems += token_problems

        if not fields.get("apns-topic"):
            problems.append("apns-topic missing or empty")
        if fields.get("apns-push-type") != "background":
            problems.append(f"apns-push-type {fields.get('apns-push-type')!r}, expected 'background'")
        # Apple refuses priority 10 for a background push.
        if fields.get("apns-priority") != "5":
            problems.append(f"apns-priority {fields.get('apns-priority')!r}, expected '5'")
        expiration = fields.get("apns-expiration")
        if expiration is None or not re.fullmatch(r"[0-9]+", expiration):
            problems.append(f"apns-expiration {expiration!r} is not a decimal integer")

        payload, payload_problems = self._payload(body)
        problems += payload_problems
        return {"method": method, "path": path, "headers": fields, "body": body, "payload": payload,
                "jwt": token, "jwt_header": jwt_header, "jwt_claims": jwt_claims, "problems": problems,
                "refusal": refusal}

    def _provider_token(self, authorization):
        """(token, header, claims, problems, refusal): refusal is the reason of the 403 Apple
        would answer, or None."""
        if not authorization:
            return None, None, None, ["authorization missing"], "MissingProviderToken"
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None, None, None, [f"authorization is not 'bearer <JWT>': {authorization[:40]!r}"], "MissingProviderToken"
        with self.lock:
            checked = self._token_checks.get(token)
        if checked is None:
            checked = self._check_token(token)
            with self.lock:
                if len(self._token_checks) > 1000:
                    self._token_checks.clear()
                self._token_checks[token] = checked
        header, claims, problems = checked
        problems = list(problems)
        # The time window is checked on every request: a token that was fine may have aged.
        if isinstance(claims, dict):
            iat = claims.get("iat")
            if type(iat) is not int:
                problems.append(f"provider token iat {iat!r} is not an integer")
            elif abs(time.time() - iat) > TOKEN_WINDOW:
                problems.append(f"provider token iat {iat} is more than {TOKEN_WINDOW} s from now")
        return token, header, claims, problems, ("InvalidProviderToken" if problems else None)

    def _check_token(self, token):
        """What does not change for a given token: its header, claims and signature."""
        try:
            header = jwt.get_unverified_header(token)
            claims = jwt.decode(token, options={"verify_signature": False})
        except jwt.InvalidTokenError as e:
            return None, None, [f"provider token is not a JWT: {e}"]
        problems = []
        if header.get("alg") != "ES256":
            problems.append(f"provider token alg {header.get('alg')!r}, expected 'ES256'")
        if header.get("kid") != self.key_id:
            problems.append(f"provider token kid {header.get('kid')!r}, expected {self.key_id!r}")
        if claims.get("iss") != self.team_id:
            problems.append(f"provider token iss {claims.get('iss')!r}, expected {self.team_id!r}")
        try:
            # The claims' values are checked above; here the signature and that both claims exist.
            jwt.decode(token, self.public_key, algorithms=["ES256"],
                       options={"verify_aud": False, "verify_iat": False, "verify_exp": False, "verify_nbf": False,
                                "require": ["iat", "iss"]})
        except jwt.InvalidSignatureError:
            problems.append("provider token signature does not verify with the auth key")
        except jwt.InvalidTokenError as e:
            problems.append(f"provider token refused: {e}")
        return header, claims, problems

    @staticmethod
    def _payload(body):
        problems = []
        if len(body) > MAX_PAYLOAD:
            problems.append(f"payload of {len(body)} bytes, Apple's limit is {MAX_PAYLOAD}")
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return None, problems + ["body is not JSON"]
        if not isinstance(payload, dict):
            return payload, problems + ["payload is not a JSON object"]
        aps = payload.get("aps")
        if not isinstance(aps, dict):
            problems.append("aps missing")
        else:
            available = aps.get("content-available")
            if type(available) is not int or available != 1:
                problems.append(f"aps.content-available {available!r}, expected 1")
            problems += [f"aps.{key} in a silent push" for key in VISIBLE_APS_KEYS if key in aps]
        auth = payload.get("com.google.firebase.auth")
        if not isinstance(auth, dict):
            problems.append("com.google.firebase.auth missing")
        else:
            for key in ("receipt", "secret"):
                if not isinstance(auth.get(key), str) or not auth[key]:
                    problems.append(f"com.google.firebase.auth.{key} missing or not a string")
        return payload, problems


@pytest.fixture
def fake_apns(tmp_path_factory):
    """Factory for fake APNs gateways sharing one auth key and one certificate authority (in a
    folder of the test's own); every gateway has `key_path`, `key_id`, `team_id`, and all are
    stopped at test end. `make(start=False)` gives one that is down until `.start()`."""
    shared = tmp_path_factory.mktemp("apns")
    key_path, public_key = make_apns_key(shared)
    tls_files(shared)
    made = []

    def make(start=True, answers=()):
        gw = FakeAPNs(KEY_ID, TEAM_ID, public_key, shared)
        gw.key_path = key_path
        gw.script(*answers)
        made.append(gw)
        return gw.start() if start else gw

    yield make
    for gw in made:
        gw.stop()
