"""CGI mode behind real web servers, with the example configurations of deploy/cgi/ (docs/cgi.md):
nginx → fcgiwrap → one gatehouse process per request, and lighttpd's mod_cgi. The phone and
email-link flows run end to end; the delivery process the guide prescribes sends what the CGI
requests queued; `gatehouse housekeeping` runs as cron would run it."""
import email
import email.policy
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import requests

from conftest import ROOT, Gatehouse, binary, sqlite_only
from email_support import config as email_config, jwks_verify, latest_link, link_from_mail
from phone_helpers import TEST_NUMBERS, code_in, dev_config, outbox

DEPLOY = ROOT / "deploy" / "cgi"
# The paths the examples name, replaced by the test's own.
EXAMPLE_BINARY = "/usr/local/bin/gatehouse"
EXAMPLE_CONFIG = "/etc/gatehouse/gatehouse.json"
EXAMPLE_SOCKET = "/run/gatehouse/cgi.sock"
EXAMPLE_PUBLIC = "/usr/share/gatehouse/public"

def program(name):
    return shutil.which(name) or f"/usr/sbin/{name}"


def children(pid):
    """Process ids whose parent is `pid` (fcgiwrap -c N forks its workers)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


def running(pid):
    """True while `pid` exists and is not a zombie waiting for its (new) parent to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stop(proc, sig=signal.SIGTERM):
    """Stops a process started by the test and the workers it forked, each by its pid."""
    if proc is None:
        return
    pids = [proc.pid] + children(proc.pid) if proc.poll() is None else []
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    deadline = time.time() + 5
    for pid in pids[1:]:
        while running(pid) and time.time() < deadline:
            time.sleep(0.05)
        if running(pid):
            os.kill(pid, signal.SIGKILL)


def clean_env(**extra):
    """The environment a service manager gives a daemon: no GATEHOUSE_* from the test run."""
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
    env.update(extra)
    return env


def install_example(text, site):
    """An example configuration with the test's paths in place of the documented ones."""
    return (text.replace(EXAMPLE_BINARY, str(binary())).replace(EXAMPLE_CONFIG, str(site.config_path))
            .replace(EXAMPLE_SOCKET, str(site.socket)).replace(EXAMPLE_PUBLIC, str(ROOT / "public")))


class CGISite(Gatehouse):
    """nginx on 127.0.0.1:<port> → fcgiwrap on a unix socket → `gatehouse` in CGI mode, with
    deploy/cgi/gatehouse-cgi*.conf as shipped (paths replaced). Reuses Gatehouse's HTTP helpers
    and store access; the configuration names the store (the file in `data`, or the run's
    PostgreSQL database) since the CGI processes see no GATEHOUSE_STORE_URL of the test run."""

    def __init__(self, data: Path, config: dict):
        super().__init__(data)
        self.config_path = data / "gatehouse.json"
        config = dict(config, data_dir=str(data))
        if self.store_url:
            config["store"] = {"url": self.store_url}
        self.config_path.write_text(json.dumps(config, indent=2))
        self.socket = data / "fcgiwrap.sock"
        self.nginx_dir = data / "nginx"
        self.fcgiwrap = self.nginx = self.delivery = None

    def write_nginx(self):
        conf_dir = self.nginx_dir / "gatehouse"
        conf_dir.mkdir(parents=True, exist_ok=True)
        for f in (ROOT / "nginx").glob("*.conf"):
            shutil.copy(f, conf_dir / f.name)
        for f in DEPLOY.glob("*.conf"):
            (conf_dir / f.name).write_text(install_example(f.read_text(), self))
        for t in ("client_body", "fastcgi", "proxy", "uwsgi", "scgi"):
            (self.nginx_dir / "tmp" / t).mkdir(parents=True, exist_ok=True)
        user = "user root root;\n" if os.geteuid() == 0 else ""
        d = self.nginx_dir
        (d / "nginx.conf").write_text(f"""{user}worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 256; }}
http {{
    include gatehouse/gatehouse-mime.conf;
    access_log {d}/access.log;
    client_body_temp_path {d}/tmp/client_body;
    fastcgi_temp_path {d}/tmp/fastcgi;
    proxy_temp_path {d}/tmp/proxy;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    client_max_body_size 1m;
    server {{
        listen 127.0.0.1:{self.port};
        server_name localhost 127.0.0.1;
        set $gatehouse_public {ROOT / "public"};
        include gatehouse/gatehouse-cgi-locations.conf;
        # Dev mode: the emulator helpers, as `gatehouse dev` serves them.
        location ^~ /emulator/ {{
            include gatehouse/gatehouse-fastcgi.conf;
            include gatehouse/gatehouse-cgi.conf;
        }}
        location / {{
            return 404;
        }}
    }}
}}
""")

    def start(self, timeout: float = 30.0):
        self.data.mkdir(parents=True, exist_ok=True)
        self.write_nginx()
        self.log = open(self.log_path, "ab")
        # As gatehouse-cgi.service runs it: -f (the program's stderr to nginx's error log),
        # -c workers, UMask=0077 (the data folder and database readable by its user only).
        self.fcgiwrap = subprocess.Popen([program("fcgiwrap"), "-f", "-c", "3", "-s", f"unix:{self.socket}"],
                                         env=clean_env(), stdout=self.log, stderr=self.log, preexec_fn=lambda: os.umask(0o077))
        deadline = time.time() + timeout
        while not self.socket.exists():
            if self.fcgiwrap.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"fcgiwrap did not start; log:\n{self.log_path.read_text()[-2000:]}")
            time.sleep(0.05)
        self.nginx = subprocess.Popen([program("nginx"), "-p", f"{self.nginx_dir}/", "-c", str(self.nginx_dir / "nginx.conf"),
                                       "-e", str(self.nginx_dir / "error.log")], stdout=self.log, stderr=self.log)
        while time.time() < deadline:
            if self.nginx.poll() is not None:
                break
            try:
                if requests.get(self.url("/__/auth/health"), timeout=5).status_code == 200:
                    return self
            except requests.ConnectionError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"nginx → fcgiwrap → gatehouse did not answer; nginx log:\n{self.error_log()[-3000:]}")

    def start_delivery(self):
        """The delivery process of docs/cgi.md (deploy/cgi/gatehouse-delivery.service): `gatehouse
        serve` on a socket nobody connects to, for its outbox workers and housekeeping."""
        self.delivery = subprocess.Popen([str(binary()), "serve", "--socket", str(self.data / "unused.sock"), "--workers", "1"],
                                         env=clean_env(GATEHOUSE_CONFIG=str(self.config_path)), stdout=self.log, stderr=self.log)
        return self.delivery

    def error_log(self):
        p = self.nginx_dir / "error.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def stop(self, sig=signal.SIGTERM, timeout: float = 15.0) -> int:
        stop(self.delivery)
        stop(self.nginx, signal.SIGQUIT)
        stop(self.fcgiwrap)
        if getattr(self, "log", None):
            self.log.close()
        return 0


def site_config():
    """Dev mode (the emulator lists what the outbox holds), test numbers, the email project."""
    cfg = email_config()
    cfg["projects"][0]["test_phone_numbers"] = TEST_NUMBERS
    cfg["projects"][0]["phone"] = dev_config()["projects"][0]["phone"]
    return cfg


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if not (shutil.which("fcgiwrap") or os.path.exists("/usr/sbin/fcgiwrap")):
        pytest.skip("fcgiwrap is not installed (Debian package fcgiwrap; scripts/install-deps.sh test)")
    s = CGISite(tmp_path_factory.mktemp("cgi-fcgiwrap"), site_config())
    try:
        s.start()
        yield s
    finally:
        s.stop()


def send_code(site, number):
    r = site.api("sendVerificationCode", {"phoneNumber": number})
    assert r.status_code == 200, r.text
    return r.json()["sessionInfo"]


def sign_in_phone(site, session, code):
    r = site.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code})
    assert r.status_code == 200, r.text
    return r.json()


def send_link(site, address):
    r = site.api("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": address, "continueUrl": f"{site.base}/__/auth/health"})
    assert r.status_code == 200, r.text


# --- nginx → fcgiwrap → gatehouse -----------------------------------------------------------

def test_health_keys_pages_and_static_files(site):
    health = site.get("/__/auth/health").json()
    assert health["status"] == "ok" and health["mode"] == "dev" and health["database"]["status"] == "ok"
    assert site.get("/.well-known/jwks.json").json()["keys"]
    page = site.get("/__/auth/phone", headers={"Accept-Language": "fr-CH"})
    assert page.status_code == 200 and page.text.rstrip().endswith("</html>")
    static = site.get("/__/auth/static/gatehouse.css")
    assert static.status_code == 200 and static.content == (ROOT / "public" / "gatehouse.css").read_bytes()
    # No metrics endpoint in CGI mode (one request per process: nothing to scrape).
    assert site.get("/__/auth/metrics").status_code == 404


def test_phone_sign_in_through_fcgiwrap(site):
    session = send_code(site, "+33612345601")
    codes = site.get("/emulator/v1/projects/demo-gatehouse/verificationCodes").json()["verificationCodes"]
    code = next(c["code"] for c in codes if c["sessionInfo"] == session)
    body = sign_in_phone(site, session, code)
    assert body["isNewUser"] is True and body["phoneNumber"] == "+33612345601"
    claims = jwks_verify(site, body["idToken"])
    assert claims["sub"] == body["localId"] and claims["phone_number"] == "+33612345601"
    # The refresh token works on the next process, and so does a test number.
    r = site.post("/securetoken.googleapis.com/v1/token", params={"key": "test-api-key"},
                  json={"grantType": "refresh_token", "refreshToken": body["refreshToken"]})
    assert r.status_code == 200, r.text
    assert r.json()["user_id"] == body["localId"]
    number, fixed = next(iter(TEST_NUMBERS.items()))
    assert sign_in_phone(site, send_code(site, number), fixed)["phoneNumber"] == number


def test_email_link_sign_in_through_fcgiwrap(site):
    address = "cgi-user@example.com"
    send_link(site, address)
    link = latest_link(site, address)
    r = site.api("signInWithEmailLink", {"email": address, "oobCode": link["oobCode"]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["email"] == address and body["isNewUser"] is True
    assert jwks_verify(site, body["idToken"])["email"] == address
    # A link is single use across processes.
    r = site.api("signInWithEmailLink", {"email": address, "oobCode": link["oobCode"]})
    assert r.status_code == 400


@sqlite_only("the permissions of the database file and its folder")
def test_the_database_belongs_to_the_cgi_user_only(site):
    site.get("/__/auth/health")
    db = site.data / "gatehouse.db"
    assert db.exists()
    assert db.stat().st_mode & 0o077 == 0, oct(db.stat().st_mode)


def test_delivery_process_sends_what_cgi_requests_queued(tmp_path_factory):
    if not (shutil.which("fcgiwrap") or os.path.exists("/usr/sbin/fcgiwrap")):
        pytest.skip("fcgiwrap is not installed")
    data = tmp_path_factory.mktemp("cgi-delivery")
    sent = data / "sent"
    sent.mkdir()
    sms = data / "send-sms"
    sms.write_text(f'#!/bin/sh\ncat > "{sent}/sms-$GATEHOUSE_MESSAGE_ID.txt"\n')
    mail = data / "sendmail"
    mail.write_text(f'#!/bin/sh\ncat > "{sent}/mail.tmp" && mv "{sent}/mail.tmp" "{sent}/mail-$$.eml"\n')
    for f in (sms, mail):
        f.chmod(0o755)
    cfg = site_config()
    cfg["sms"] = {"provider": "command", "command": str(sms), "timeout_seconds": 10}
    cfg["email"] = {"transport": "sendmail", "from": "signin@gatehouse.test", "command": [str(mail), "-t", "-i"]}
    s = CGISite(data, cfg)
    try:
        s.start()
        session = send_code(s, "+33612345602")
        send_link(s, "delivered@example.com")
        # A CGI request only queues: nothing is sent until the delivery process runs.
        time.sleep(1.0)
        assert not list(sent.iterdir())
        assert {r["status"] for r in outbox(s)} == {"pending"}
        s.start_delivery()
        deadline = time.time() + 15
        while time.time() < deadline and not (list(sent.glob("sms-*.txt")) and list(sent.glob("mail-*.eml"))):
            time.sleep(0.1)
        texts, mails = list(sent.glob("sms-*.txt")), list(sent.glob("mail-*.eml"))
        assert len(texts) == 1 and len(mails) == 1, s.log_path.read_text()[-2000:]
        body = sign_in_phone(s, session, code_in(texts[0].read_text()))
        assert body["phoneNumber"] == "+33612345602"
        msg = email.message_from_bytes(mails[0].read_bytes(), policy=email.policy.default)
        code = re.search(r"oobCode=([\w-]+)", link_from_mail(msg)).group(1)
        r = s.api("signInWithEmailLink", {"email": "delivered@example.com", "oobCode": code})
        assert r.status_code == 200, r.text
        deadline = time.time() + 10
        while time.time() < deadline and {r["status"] for r in outbox(s)} != {"sent"}:
            time.sleep(0.1)
        assert {r["status"] for r in outbox(s)} == {"sent"}
        # Housekeeping as deploy/cgi/gatehouse.cron runs it.
        r = subprocess.run([str(binary()), "housekeeping"], env=clean_env(GATEHOUSE_CONFIG=str(s.config_path)),
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert "outbox\t" in r.stdout
    finally:
        s.stop()


def test_outbox_deliver_from_cron_sends_what_cgi_requests_queued(tmp_path_factory):
    """Where no process may run between requests: `gatehouse outbox deliver` (deploy/cgi/gatehouse.cron)."""
    if not (shutil.which("fcgiwrap") or os.path.exists("/usr/sbin/fcgiwrap")):
        pytest.skip("fcgiwrap is not installed")
    data = tmp_path_factory.mktemp("cgi-cron")
    sent = data / "sent"
    sent.mkdir()
    sms = data / "send-sms"
    sms.write_text(f'#!/bin/sh\ncat > "{sent}/sms-$GATEHOUSE_MESSAGE_ID.txt"\n')
    sms.chmod(0o755)
    cfg = site_config()
    cfg["sms"] = {"provider": "command", "command": str(sms), "timeout_seconds": 10}
    s = CGISite(data, cfg)
    try:
        s.start()
        session = send_code(s, "+33612345603")
        assert not list(sent.iterdir())
        r = subprocess.run([str(binary()), "outbox", "deliver"], env=clean_env(GATEHOUSE_CONFIG=str(s.config_path)),
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert "messages\t1" in r.stdout
        texts = list(sent.glob("sms-*.txt"))
        assert len(texts) == 1
        assert sign_in_phone(s, session, code_in(texts[0].read_text()))["phoneNumber"] == "+33612345603"
        assert {r["status"] for r in outbox(s)} == {"sent"}
        # Nothing left: a second run sends nothing.
        again = subprocess.run([str(binary()), "outbox", "deliver"], env=clean_env(GATEHOUSE_CONFIG=str(s.config_path)),
                               capture_output=True, text=True, timeout=60)
        assert "messages\t0" in again.stdout
    finally:
        s.stop()


# --- The examples themselves ----------------------------------------------------------------

def locations(text):
    return [line.strip() for line in text.splitlines() if line.startswith("location")]


def test_the_cgi_locations_are_the_shipped_locations():
    shipped = locations((ROOT / "nginx" / "gatehouse-locations.conf").read_text())
    cgi = locations((DEPLOY / "gatehouse-cgi-locations.conf").read_text())
    assert cgi == shipped


def test_the_nginx_server_example_passes_nginx_t(tmp_path):
    site = CGISite.__new__(CGISite)
    site.config_path, site.socket = tmp_path / "gatehouse.json", tmp_path / "cgi.sock"
    conf_dir = tmp_path / "gatehouse"
    conf_dir.mkdir()
    for f in (ROOT / "nginx").glob("*.conf"):
        shutil.copy(f, conf_dir / f.name)
    for f in DEPLOY.glob("*.conf"):
        (conf_dir / f.name).write_text(install_example(f.read_text(), site))
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=auth.example.com", "-days", "1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    server = ((conf_dir / "nginx-fcgiwrap.conf").read_text()
              .replace("/etc/ssl/certs/auth.example.com.pem", str(cert)).replace("/etc/ssl/private/auth.example.com.key", str(key)))
    (conf_dir / "nginx-fcgiwrap.conf").write_text(server)
    (tmp_path / "nginx.conf").write_text(f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
                                         f"http {{ include gatehouse/gatehouse-mime.conf; include gatehouse/nginx-fcgiwrap.conf; }}\n")
    r = subprocess.run([program("nginx"), "-t", "-p", f"{tmp_path}/", "-c", str(tmp_path / "nginx.conf"), "-e", str(tmp_path / "error.log")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# --- lighttpd mod_cgi ----------------------------------------------------------------------

@pytest.fixture
def lighttpd_site(tmp_path):
    lighttpd = shutil.which("lighttpd") or ("/usr/sbin/lighttpd" if os.path.exists("/usr/sbin/lighttpd") else None)
    if not lighttpd:
        pytest.skip("lighttpd is not installed (Debian package lighttpd; scripts/install-deps.sh test)")
    if binary().name != "gatehouse":
        pytest.skip("the lighttpd example maps the program by its name, gatehouse")
    s = CGISite(tmp_path, site_config())
    s.data.mkdir(exist_ok=True)
    s.log = open(s.log_path, "ab")
    (tmp_path / "www").mkdir()
    example = install_example((DEPLOY / "lighttpd.conf").read_text(), s)
    example = example.replace("/var/log/lighttpd/gatehouse.log", str(tmp_path / "gatehouse-stderr.log"))
    conf = tmp_path / "lighttpd.conf"
    conf.write_text(f'server.document-root = "{tmp_path}/www"\nserver.bind = "127.0.0.1"\nserver.port = {s.port}\n'
                    f'server.errorlog = "{tmp_path}/lighttpd-error.log"\n' + example)
    check = subprocess.run([lighttpd, "-tt", "-f", str(conf)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    s.nginx = subprocess.Popen([lighttpd, "-D", "-f", str(conf)], env=clean_env(), stdout=s.log, stderr=s.log)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if requests.get(s.url("/__/auth/health"), timeout=5).status_code == 200:
                break
        except requests.ConnectionError:
            time.sleep(0.1)
    try:
        yield s
    finally:
        stop(s.nginx)
        s.log.close()


def test_lighttpd_mod_cgi_serves_health_and_a_phone_send(lighttpd_site):
    s = lighttpd_site
    health = s.get("/__/auth/health")
    assert health.status_code == 200 and health.json()["database"]["status"] == "ok"
    assert s.get("/.well-known/jwks.json").json()["keys"]
    assert s.get("/__/auth/static/gatehouse.css").content == (ROOT / "public" / "gatehouse.css").read_bytes()
    session = send_code(s, "+33612345603")
    codes = s.get("/emulator/v1/projects/demo-gatehouse/verificationCodes")
    assert codes.status_code == 404  # the example does not map the emulator helpers
    assert [r["status"] for r in outbox(s)] == ["pending"]
    number, fixed = next(iter(TEST_NUMBERS.items()))
    assert sign_in_phone(s, send_code(s, number), fixed)["phoneNumber"] == number
    assert session.startswith("ghs1.")
    # Admin APIs: from this host only (the example's mod_access rule), here allowed.
    r = s.admin("/accounts:lookup", {"localId": ["nobody"]})
    assert r.status_code == 200, r.text
