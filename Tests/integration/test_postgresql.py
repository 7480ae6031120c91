"""Gatehouse on PostgreSQL (docs/scaling.md): two instances on one database, each behind its own
nginx, sharing everything a sign-in needs; an instance killed in the middle of load; the database
restarted in the middle of load. The cluster is the run's (scripts/test.sh exports
GATEHOUSE_TEST_POSTGRES_URL) or one this module starts; each test gets a database of its own."""
import json
import os
import secrets
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import requests

from conftest import ROOT, TEST_STORE, Gatehouse, binary
from phone_helpers import FakeGateway, TEST_NUMBERS, code_in

# These tests make their own databases; in the suite's PostgreSQL pass they would only repeat.
pytestmark = pytest.mark.skipif(TEST_STORE != "sqlite", reason="runs in the suite's first pass")

SECRET = "webhook-secret-0123456789abcdef"
ITK = "/identitytoolkit.googleapis.com/v1/accounts:"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(admin URL, folder or None): the run's cluster, or a throw-away one for this module."""
    url = os.environ.get("GATEHOUSE_TEST_POSTGRES_URL")
    if url:
        yield url, None
        return
    folder = Path("/tmp") / f"gatehouse-pg-{secrets.token_hex(4)}"
    url = subprocess.run([str(ROOT / "scripts" / "pg-cluster.sh"), "start", str(folder)], capture_output=True, text=True,
                         check=True).stdout.strip()
    yield url, folder
    subprocess.run([str(ROOT / "scripts" / "pg-cluster.sh"), "stop", str(folder)], check=False)


def psql(url, sql):
    return subprocess.run(["psql", url, "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def database(cluster):
    """A fresh database on the cluster; its URL."""
    admin, _ = cluster
    name = "gh_" + secrets.token_hex(6)
    psql(admin, f"CREATE DATABASE {name}")
    yield admin.rsplit("/", 1)[0] + "/" + name
    psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def dev_config(gateway_url):
    return {"mode": "dev", "log_level": "warning",
            "sms": {"provider": "webhook", "url": gateway_url + "/sms", "secret": SECRET},
            "projects": [{"id": "demo-gatehouse", "test_phone_numbers": TEST_NUMBERS,
                          "phone": {"verify_attempts_per_ip_per_5min": 10000, "sends_per_ip_per_hour": 10000},
                          "email_link": {"sends_per_ip_per_hour": 10000}}]}


@pytest.fixture
def pair(tmp_path_factory, database):
    """Two instances (each `gatehouse dev`: nginx + responder + outbox) on one database, SMS to
    one fake gateway."""
    gw = FakeGateway(statuses=(200,)).start()
    started = []

    def make():
        g = Gatehouse(tmp_path_factory.mktemp("gh"), config=dev_config(gw.url), env={"GATEHOUSE_STORE_URL": database})
        started.append(g)
        return g.start()

    a, b = make(), make()
    yield a, b, gw, database
    for g in started:
        g.stop()
    gw.stop()


def send(g, number):
    r = g.api("sendVerificationCode", {"phoneNumber": number})
    assert r.status_code == 200, r.text
    return r.json()["sessionInfo"]


def sms_code(gw, number, count):
    """The code of the newest SMS to `number` once `count` SMS arrived."""
    bodies = [json.loads(r["body"]) for r in gw.wait_for(count, timeout=15)]
    return code_in([b for b in bodies if b["to"] == number][-1]["body"])


def test_sign_ins_cross_instances_and_limits_are_shared(pair):
    a, b, gw, url = pair
    # A phone sign-in started on one instance finishes on the other.
    session = send(a, "+33612345678")
    r = b.api("signInWithPhoneNumber", {"sessionInfo": session, "code": sms_code(gw, "+33612345678", 1)})
    assert r.status_code == 200, r.text
    local_id = r.json()["localId"]
    assert psql(url, f"SELECT phone_number FROM accounts WHERE local_id = '{local_id}'").strip() == "+33612345678"
    # Its refresh token works on the first instance; the rotated one is refused on the second.
    refreshed = a.post("/securetoken.googleapis.com/v1/token", params={"key": "k"},
                       json={"grant_type": "refresh_token", "refresh_token": r.json()["refreshToken"]})
    assert refreshed.status_code == 200, refreshed.text
    # An email link sent by one is consumed by the other, once.
    assert a.api("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": "ada@example.com", "continueUrl": "http://localhost/done"}).status_code == 200
    codes = b.get("/emulator/v1/projects/demo-gatehouse/oobCodes").json()["oobCodes"]
    code = [c for c in codes if c["email"] == "ada@example.com"][-1]["oobCode"]
    assert b.api("signInWithEmailLink", {"email": "ada@example.com", "oobCode": code}).status_code == 200
    assert a.api("signInWithEmailLink", {"email": "ada@example.com", "oobCode": code}).status_code == 400
    # Wrong codes are counted in the database: 5 per code, whichever instance takes them.
    session = send(b, "+33612345679")
    for i in range(5):
        r = (a if i % 2 else b).api("signInWithPhoneNumber", {"sessionInfo": session, "code": "000000"})
        assert r.status_code == 400 and "INVALID_CODE" in r.text, r.text
    r = a.api("signInWithPhoneNumber", {"sessionInfo": session, "code": sms_code(gw, "+33612345679", 2)})
    assert r.status_code == 400 and "SESSION_EXPIRED" in r.text, r.text


def test_a_key_rotated_by_one_is_published_by_both(pair):
    a, b, _, url = pair
    before = {k["kid"] for k in a.get("/.well-known/jwks.json").json()["keys"]}
    assert before == {k["kid"] for k in b.get("/.well-known/jwks.json").json()["keys"]}
    out = subprocess.run([str(binary()), "keys", "rotate", "--data", str(a.data)], capture_output=True, text=True,
                         env=dict(os.environ, GATEHOUSE_STORE_URL=url), check=True)
    assert out.returncode == 0, out.stderr
    deadline = time.time() + 15
    while time.time() < deadline:
        ka = {k["kid"] for k in a.get("/.well-known/jwks.json").json()["keys"]}
        kb = {k["kid"] for k in b.get("/.well-known/jwks.json").json()["keys"]}
        if ka == kb and len(ka) == len(before) + 1:
            break
        time.sleep(0.5)
    assert ka == kb and before < ka
    # A token signed by either verifies against the other's keys.
    r = a.api("signUp", {})
    assert r.status_code == 200
    assert b.api("lookup", {"idToken": r.json()["idToken"]}).status_code == 200


def load(g, stop, results, numbers):
    """Phone sign-ins with test numbers until `stop`; each acknowledged one recorded."""
    s = requests.Session()
    while not stop.is_set():
        number = numbers[len(results) % len(numbers)]
        try:
            r = s.post(g.url(ITK + "sendVerificationCode"), params={"key": "k"}, json={"phoneNumber": number}, timeout=5)
            if r.status_code != 200:
                results.append(("send", r.status_code))
                continue
            r = s.post(g.url(ITK + "signInWithPhoneNumber"), params={"key": "k"},
                       json={"sessionInfo": r.json()["sessionInfo"], "code": TEST_NUMBERS[number]}, timeout=5)
            results.append(("ok", r.json()["localId"]) if r.status_code == 200 else ("sign-in", r.status_code))
        except requests.RequestException as e:
            results.append(("error", type(e).__name__))


def test_kill_one_instance_under_load(pair):
    a, b, gw, url = pair
    numbers = list(TEST_NUMBERS)
    stop = threading.Event()
    on_a, on_b = [], []
    threads = [threading.Thread(target=load, args=(a, stop, on_a, numbers)), threading.Thread(target=load, args=(b, stop, on_b, numbers))]
    for t in threads:
        t.start()
    # Messages committed on both while the load runs: each must be delivered once.
    sent = [send(a if i % 2 else b, f"+3361234560{i}") for i in range(6)]
    time.sleep(1.5)
    a.kill()  # SIGKILL: no drain
    time.sleep(1.5)
    stop.set()
    for t in threads:
        t.join()
    acknowledged = {v for kind, v in on_a + on_b if kind == "ok"}
    assert acknowledged and any(kind == "ok" for kind, _ in on_b)
    in_db = set(psql(url, "SELECT local_id FROM accounts").split())
    assert acknowledged <= in_db
    # The survivor keeps serving; every committed SMS arrives exactly once.
    assert b.api("signUp", {}).status_code == 200
    got = gw.wait_for(len(sent), timeout=60)
    time.sleep(1.0)
    recipients = sorted(json.loads(r["body"])["to"] for r in gw.requests)
    assert recipients == sorted(f"+3361234560{i}" for i in range(6)), recipients
    assert len(got) == len(sent)


def test_database_restart_under_load_answers_503_then_recovers(cluster, pair):
    admin, folder = cluster
    a, b, gw, url = pair
    if folder is None:
        folder = Path(subprocess.run(["psql", admin, "-qAt", "-c", "SHOW data_directory"], capture_output=True, text=True,
                                     check=True).stdout.strip()).parent
    data = folder / "data"
    numbers = list(TEST_NUMBERS)
    stop = threading.Event()
    results = []
    t = threading.Thread(target=load, args=(a, stop, results, numbers))
    t.start()
    time.sleep(1.0)
    ctl = [str(next(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))), "-D", str(data), "-w", "-t", "30"]
    as_owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run(as_owner + ctl + ["-m", "fast", "stop"], check=True, capture_output=True)
    try:
        time.sleep(1.0)
        during = a.api("signUp", {})
        assert during.status_code == 503, during.text
        assert during.headers.get("Retry-After") and "UNAVAILABLE" in during.json()["error"]["message"]
        health = a.get("/__/auth/health")
        assert health.status_code == 503, health.text
    finally:
        port = (folder / "port").read_text().strip()
        subprocess.run(as_owner + ctl + ["-l", str(folder / "server.log"), "-o",
                                         f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off",
                                         "start"], check=True, capture_output=True)
    time.sleep(2.0)
    stop.set()
    t.join()
    after = a.api("signUp", {})
    assert after.status_code == 200, after.text
    # Nothing acknowledged was lost; failures were 503s, not 500s.
    acknowledged = {v for kind, v in results if kind == "ok"}
    assert acknowledged <= set(psql(url, "SELECT local_id FROM accounts").split())
    assert all(code in (503, 502) for kind, code in results if kind in ("send", "sign-in")), results[-20:]


def test_store_copy_moves_a_deployment_to_postgresql_and_back(tmp_path_factory, database, make_gatehouse):
    g = make_gatehouse(config=dev_config("http://127.0.0.1:9"))
    session = send(g, "+15555550100")
    signed = g.api("signInWithPhoneNumber", {"sessionInfo": session, "code": TEST_NUMBERS["+15555550100"]}).json()
    g.stop()
    sqlite_url = f"sqlite://{g.data / 'gatehouse.db'}"
    tool = [str(binary()), "store", "copy"]
    out = subprocess.run(tool + ["--from", sqlite_url, "--to", database], capture_output=True, text=True)
    assert out.returncode == 0 and "every table's count matches" in out.stdout, out.stdout + out.stderr
    assert "accounts: 1 rows" in out.stdout
    # A non-empty target is refused without --force.
    again = subprocess.run(tool + ["--from", sqlite_url, "--to", database], capture_output=True, text=True)
    assert again.returncode != 0 and "--force" in again.stdout + again.stderr
    # The same data folder, now on PostgreSQL: the user, the keys and the refresh token carry over.
    h = Gatehouse(g.data, config=dev_config("http://127.0.0.1:9"), env={"GATEHOUSE_STORE_URL": database}).start()
    try:
        assert h.api("lookup", {"idToken": signed["idToken"]}).json()["users"][0]["localId"] == signed["localId"]
        r = h.post("/securetoken.googleapis.com/v1/token", params={"key": "k"},
                   json={"grant_type": "refresh_token", "refresh_token": signed["refreshToken"]})
        assert r.status_code == 200, r.text
        assert h.api("signUp", {}).status_code == 200
    finally:
        h.stop()
    back = tmp_path_factory.mktemp("back") / "back.db"
    out = subprocess.run(tool + ["--from", database, "--to", f"sqlite://{back}"], capture_output=True, text=True)
    assert out.returncode == 0 and "accounts: 2 rows" in out.stdout, out.stdout + out.stderr


def test_two_serve_processes_in_one_nginx_upstream(database, tmp_path_factory):
    """Two responders on one database behind one nginx `upstream`: requests alternate between
    them (nginx's log names the upstream), a sign-in started on one finishes on the other, and
    SIGKILL of one under load loses nothing acknowledged (nginx moves on to the other)."""
    gw = FakeGateway(statuses=(200,)).start()
    a = Gatehouse(tmp_path_factory.mktemp("gh"), config=dev_config(gw.url), env={"GATEHOUSE_STORE_URL": database}).start()
    b_dir = tmp_path_factory.mktemp("gh-b")
    b_sock = str(a.data / "b.sock")
    b = subprocess.Popen([str(binary()), "serve", "--config", str(a.config_path), "--data", str(b_dir), "--socket", b_sock],
                         env=dict(os.environ, GATEHOUSE_STORE_URL=database), stdout=subprocess.DEVNULL,
                         stderr=open(b_dir / "serve.log", "wb"))
    try:
        deadline = time.time() + 20
        while not os.path.exists(b_sock) and time.time() < deadline:
            time.sleep(0.05)
        assert os.path.exists(b_sock), (b_dir / "serve.log").read_text()
        conf = a.data / "nginx" / "nginx.conf"
        text = conf.read_text()
        a_line = next(l for l in text.splitlines() if l.strip().startswith("server unix:"))
        text = text.replace(a_line, a_line + f"\n        server unix:{b_sock};", 1)
        up_log = a.data / "nginx" / "upstream.log"
        text = text.replace("http {", "http {\n    log_format upstreams '$upstream_addr $status';\n"
                                      f"    access_log {up_log} upstreams;", 1)
        conf.write_text(text)
        os.kill(int((a.data / "nginx" / "nginx.pid").read_text().strip()), signal.SIGHUP)
        time.sleep(1.0)
        numbers = list(TEST_NUMBERS)
        for i in range(12):
            number = numbers[i % len(numbers)]
            session = send(a, number)
            r = a.api("signInWithPhoneNumber", {"sessionInfo": session, "code": TEST_NUMBERS[number]})
            assert r.status_code == 200, r.text
        used = up_log.read_text().split()
        a_sock = a_line.strip().split("unix:")[1].rstrip(";")
        assert any(a_sock in u for u in used) and any(b_sock in u for u in used), used[:20]
        # SIGKILL the second responder under load.
        stop = threading.Event()
        results = []
        t = threading.Thread(target=load, args=(a, stop, results, numbers))
        t.start()
        time.sleep(1.0)
        b.kill()
        time.sleep(1.5)
        stop.set()
        t.join()
        acknowledged = {v for kind, v in results if kind == "ok"}
        assert acknowledged <= set(psql(database, "SELECT local_id FROM accounts").split())
        assert a.api("signUp", {}).status_code == 200
        failures = [r for r in results if r[0] != "ok"]
        assert len(failures) <= 2, failures  # at most the requests in flight on the killed responder
    finally:
        if b.poll() is None:
            b.kill()
        b.wait()
        a.stop()
        gw.stop()
