"""Issue "Foundation": the real responder behind the real nginx — health, keys, tokens verified by a
third-party JWT library, malformed input, key rotation, SIGTERM, config check, CGI mode."""
import json
import os
import signal
import socket
import subprocess
import time

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import Gatehouse, assert_envelope, binary

ITK = "/identitytoolkit.googleapis.com/v1"


def test_health_reports_version_mode_and_database(gatehouse):
    r = gatehouse.get("/__/auth/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok"
    assert body["mode"] == "dev"
    assert body["version"]
    assert body["database"] == {"status": "ok", "schemaVersion": body["database"]["schemaVersion"]}
    assert r.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("path", [
    "/.well-known/jwks.json",
    "/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com",
    f"{ITK}/sessionCookiePublicKeys",
])
def test_jwks_endpoints_publish_rs256_keys_with_caching(gatehouse, path):
    r = gatehouse.get(path)
    assert r.status_code == 200
    assert r.headers["Cache-Control"] == "public, max-age=3600"
    keys = r.json()["keys"]
    assert keys and all(k["kty"] == "RSA" and k["alg"] == "RS256" and k["use"] == "sig" and k["kid"] and k["e"] == "AQAB" for k in keys)


def test_x509_endpoint_maps_kid_to_certificate(gatehouse):
    r = gatehouse.get("/www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com")
    assert r.status_code == 200 and r.headers["Cache-Control"] == "public, max-age=3600"
    kids = {k["kid"] for k in gatehouse.get("/.well-known/jwks.json").json()["keys"]}
    certs = r.json()
    assert set(certs) == kids
    from cryptography import x509
    for pem in certs.values():
        cert = x509.load_pem_x509_certificate(pem.encode())
        assert cert.public_key().key_size == 2048


def test_openid_configuration(gatehouse):
    body = gatehouse.get("/.well-known/openid-configuration").json()
    assert body["issuer"] == "https://securetoken.google.com/demo-gatehouse"
    assert body["jwks_uri"].endswith("/.well-known/jwks.json")
    assert body["id_token_signing_alg_values_supported"] == ["RS256"]


def mint(g: Gatehouse, uid: str) -> str:
    return g.tool("tokens", "mint", "--uid", uid, "--create").stdout.strip()


def verify_with_jwks(g: Gatehouse, token: str):
    keys = KeySet.import_key_set(g.get("/.well-known/jwks.json").json())
    decoded = jwt.decode(token, keys, algorithms=["RS256"])
    return decoded


def test_token_signed_by_server_verifies_against_published_jwks(gatehouse):
    token = mint(gatehouse, "user-jwks-1")
    decoded = verify_with_jwks(gatehouse, token)
    assert decoded.header["alg"] == "RS256" and decoded.header["kid"]
    c = decoded.claims
    assert c["iss"] == "https://securetoken.google.com/demo-gatehouse"
    assert c["aud"] == "demo-gatehouse"
    assert c["sub"] == c["user_id"] == "user-jwks-1"
    assert c["exp"] - c["iat"] == 3600
    assert c["firebase"]["sign_in_provider"] == "custom"
    # The same check with a second, independent library.
    import jwt as pyjwt
    jwk = next(k for k in gatehouse.get("/.well-known/jwks.json").json()["keys"] if k["kid"] == decoded.header["kid"])
    key = pyjwt.PyJWK(jwk).key
    pyjwt.decode(token, key, algorithms=["RS256"], audience="demo-gatehouse", issuer="https://securetoken.google.com/demo-gatehouse")


def test_tampered_token_fails_third_party_verification(gatehouse):
    token = mint(gatehouse, "user-jwks-2")
    head, payload, sig = token.split(".")
    forged = head + "." + payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1] + "." + sig
    with pytest.raises(Exception):
        verify_with_jwks(gatehouse, forged)


def test_malformed_json_is_an_invalid_argument_parse_error(gatehouse):
    r = gatehouse.post(f"{ITK}/accounts:lookup", params={"key": "k"}, data=b'{"idToken": ', headers={"Content-Type": "application/json"})
    err = assert_envelope(r, 400, "Invalid JSON payload received.")
    assert err["status"] == "INVALID_ARGUMENT" and err["errors"][0]["reason"] == "parseError"


def test_json_nested_too_deep_is_refused(gatehouse):
    body = "[" * 100 + "]" * 100
    r = gatehouse.post(f"{ITK}/accounts:lookup", params={"key": "k"}, data=body, headers={"Content-Type": "application/json"})
    assert_envelope(r, 400, "Invalid JSON payload received.")


def test_oversized_body_is_413_in_the_envelope(gatehouse):
    r = gatehouse.post(f"{ITK}/accounts:lookup", params={"key": "k"}, data=b"{" + b" " * (70 * 1024) + b"}",
                       headers={"Content-Type": "application/json"})
    err = assert_envelope(r, 413, "PAYLOAD_TOO_LARGE")
    assert err["status"] == "INVALID_ARGUMENT"


def test_unknown_route_is_404_not_found(gatehouse):
    err = assert_envelope(gatehouse.get(f"{ITK}/accounts:nothingHere"), 404, "Not Found")
    assert err["status"] == "NOT_FOUND" and err["errors"][0]["reason"] == "notFound"


def test_wrong_method_is_405_with_allow(gatehouse):
    r = gatehouse.post("/.well-known/jwks.json")
    assert_envelope(r, 405, "Method POST not allowed")
    assert r.headers["Allow"] == "GET"


def test_missing_api_key_is_403_permission_denied(gatehouse):
    r = gatehouse.post(f"{ITK}/accounts:lookup", json={"idToken": "x"})
    err = assert_envelope(r, 403, "The request is missing a valid API key.")
    assert err["status"] == "PERMISSION_DENIED" and err["errors"][0]["reason"] == "forbidden"


def test_bad_bearer_token_is_401_unauthenticated(gatehouse):
    r = gatehouse.admin("/accounts:lookup", {"localId": ["x"]}, headers={"Authorization": "Bearer not-a-real-token"})
    assert r.status_code == 401
    err = r.json()["error"]
    assert err["status"] == "UNAUTHENTICATED" and err["errors"][0]["reason"] == "authError"


def test_head_request_has_headers_and_no_body(gatehouse):
    r = requests.head(gatehouse.url("/.well-known/jwks.json"), timeout=5)
    assert r.status_code == 200 and r.content == b""
    assert int(r.headers["Content-Length"]) > 100


def test_key_rotation_publishes_both_keys_and_old_tokens_stay_valid(make_gatehouse):
    g = make_gatehouse()
    old = mint(g, "rot-user")
    old_kid = verify_with_jwks(g, old).header["kid"]
    out = g.tool("keys", "rotate").stdout
    assert "new signing key" in out
    time.sleep(5.5)  # the key ring re-reads the store every 5 s
    kids = [k["kid"] for k in g.get("/.well-known/jwks.json").json()["keys"]]
    assert len(kids) == 2 and old_kid in kids
    new = mint(g, "rot-user")
    assert verify_with_jwks(g, new).header["kid"] != old_kid
    verify_with_jwks(g, old)
    listing = g.tool("keys", "list").stdout
    assert "signing" in listing and "published until" in listing


def test_sigterm_stops_nginx_and_responder_and_removes_the_socket(make_gatehouse):
    g = make_gatehouse()
    sock = g.data / "gatehouse.sock"
    assert sock.exists()
    nginx_pid = int((g.data / "nginx" / "nginx.pid").read_text())
    assert g.stop(signal.SIGTERM) == 0
    assert not sock.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(nginx_pid, 0)
    with pytest.raises(requests.ConnectionError):
        requests.get(g.url("/__/auth/health"), timeout=2)


def test_two_instances_run_side_by_side(make_gatehouse):
    a, b = make_gatehouse(), make_gatehouse()
    assert a.get("/__/auth/health").status_code == 200 and b.get("/__/auth/health").status_code == 200
    ka = a.get("/.well-known/jwks.json").json()["keys"][0]["kid"]
    kb = b.get("/.well-known/jwks.json").json()["keys"][0]["kid"]
    assert ka != kb


def test_dev_stops_with_its_message_when_a_silent_server_holds_its_port(tmp_path):
    # The server accepts connections and never answers: nginx cannot bind the port, and dev's
    # health probe, which reaches that server instead, gives up after a second each time rather
    # than waiting for an answer that never comes.
    g = Gatehouse(tmp_path / "gh")
    g.data.mkdir()
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", g.port))
        silent.listen(16)
        started = time.monotonic()
        r = subprocess.run(g.command(), env=g.env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert "nginx did not come up" in r.stderr and "ready" not in r.stdout
    assert time.monotonic() - started < 30


def test_config_check_reports_every_problem(tmp_path):
    cfg = tmp_path / "bad.json"
    cfg.write_text(json.dumps({"mode": "production", "listen": {"workers": 0}, "projects": [{"id": "x y"}], "oops": 1}))
    r = subprocess.run([str(binary()), "config", "check", "--config", str(cfg)], capture_output=True, text=True)
    assert r.returncode == 1
    for needle in ["listen.workers", "projects[0].id", "unknown key 'oops'", "admin_token", "api_keys"]:
        assert needle in r.stdout, r.stdout
    ok = subprocess.run([str(binary()), "config", "check"], capture_output=True, text=True)
    assert ok.returncode == 0 and "OK (dev mode" in ok.stdout


def test_production_mode_refuses_to_start_with_dev_settings(tmp_path):
    cfg = tmp_path / "prod.json"
    cfg.write_text(json.dumps({"mode": "production", "projects": [{"id": "shop", "api_keys": ["k"]}], "sms": {"provider": "dev"}}))
    r = subprocess.run([str(binary()), "serve", "--config", str(cfg), "--data", str(tmp_path), "--socket", str(tmp_path / "s.sock")],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode != 0
    assert "dev-only setting" in r.stderr and "admin_token" in r.stderr
    assert not (tmp_path / "s.sock").exists()


def test_cgi_mode_serves_one_request_from_the_environment(tmp_path):
    env = {"PATH": os.environ["PATH"], "GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "GET", "SCRIPT_NAME": "",
           "PATH_INFO": "/__/auth/health", "QUERY_STRING": "", "SERVER_NAME": "localhost", "REMOTE_ADDR": "127.0.0.1",
           "GATEHOUSE_DATA_DIR": str(tmp_path)}
    r = subprocess.run([str(binary())], env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr
    head, _, body = r.stdout.partition(b"\r\n\r\n")
    assert head.startswith(b"Status: 200 OK\r\n")
    assert b"Content-Type: application/json" in head
    assert json.loads(body)["database"]["status"] == "ok"


def test_cgi_mode_reads_a_post_body_from_stdin(tmp_path):
    body = b'{"idToken": "not-a-token"}'
    env = {"PATH": os.environ["PATH"], "GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "POST",
           "PATH_INFO": "/identitytoolkit.googleapis.com/v1/accounts:lookup", "QUERY_STRING": "key=k",
           "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)), "GATEHOUSE_DATA_DIR": str(tmp_path)}
    r = subprocess.run([str(binary())], env=env, input=body, capture_output=True, timeout=30)
    head, _, out = r.stdout.partition(b"\r\n\r\n")
    assert head.startswith(b"Status: 400")
    assert json.loads(out)["error"]["message"] == "INVALID_ID_TOKEN"
