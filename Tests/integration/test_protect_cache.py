"""The nginx micro-cache of /__/auth/verify (nginx/verify-cache.conf, one http-level include):
a second nginx, started here on a free 127.0.0.1 port, serves protected locations with the
shipped nginx/ files in front of the `gatehouse dev` responder. Its access log records every
verify subrequest with its cache status and upstream address, so the verifies that reached
Gatehouse can be counted."""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.parse

import pytest
import requests

from conftest import ROOT, free_port
from session_support import COOKIE, session_cookie, sign_out, sign_up

CACHE_SECONDS = 5          # fastcgi_cache_valid 200 5s (gatehouse-locations.conf)
# nginx counts whole seconds: an entry stored at any moment of second t is used through t + 5.
LAG_BOUND = CACHE_SECONDS + 1
NGINX = "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else "nginx"


def render(dir, socket, port, cache):
    include = "include gatehouse/verify-cache.conf;" if cache else "# (no micro-cache)"
    user = "user root root;\n" if os.geteuid() == 0 else ""
    return f"""# Written by test_protect_cache.py.
{user}worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 256; }}
http {{
    {include}
    client_body_temp_path {dir}/tmp/client_body;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    proxy_temp_path {dir}/tmp/proxy;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
    # One line per verify subrequest: the cache status, and the upstream ("-" when none was asked).
    log_subrequest on;
    log_format verify '$uri $status cache=$upstream_cache_status upstream=$upstream_addr';
    upstream gatehouse {{ server unix:{socket}; keepalive 4; }}

    server {{
        listen 127.0.0.1:{port};
        server_name 127.0.0.1;
        fastcgi_keep_conn on;
        set $gatehouse_public {ROOT}/public;
        access_log {dir}/verify.log verify;
        include gatehouse/gatehouse-locations.conf;

        location /p/ {{
            include gatehouse/protect.conf;
            include {dir}/test-headers.conf;
            proxy_pass http://unix:{dir}/echo.sock:/;
        }}
        location /admin/ {{
            set $gatehouse_require_claim "role=admin";
            include gatehouse/protect.conf;
            include {dir}/test-headers.conf;
            proxy_pass http://unix:{dir}/echo.sock:/;
        }}
        location /mfa/ {{
            include gatehouse/protect-mfa.conf;
            include {dir}/test-headers.conf;
            proxy_pass http://unix:{dir}/echo.sock:/;
        }}
        # A location that opts out of the micro-cache.
        location /nocache/ {{
            set $gatehouse_verify_cache off;
            include gatehouse/protect.conf;
            include {dir}/test-headers.conf;
            proxy_pass http://unix:{dir}/echo.sock:/;
        }}
    }}

    # The protected upstream: shows the identity it received.
    server {{
        listen unix:{dir}/echo.sock;
        access_log off;
        location / {{
            default_type text/plain;
            return 200 "X-Auth-User-Id: $http_x_auth_user_id\\nX-Auth-Email: $http_x_auth_email\\n";
        }}
    }}
}}
"""


TEST_HEADERS = """# Test only: what the verify subrequest answered, as response headers.
auth_request_set $verify_cache_status $upstream_cache_status;
auth_request_set $verify_cache_control $upstream_http_cache_control;
add_header X-Verify-Cache $verify_cache_status always;
add_header X-Verify-Cache-Control $verify_cache_control always;
"""


class CachingNginx:
    """nginx with the shipped nginx/ files (copied into <dir>/gatehouse/; only the cache folder of
    verify-cache.conf is moved into <dir>), in front of a running Gatehouse's responder."""

    def __init__(self, dir, gatehouse, cache=True):
        self.dir = dir
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        conf_dir = dir / "gatehouse"
        conf_dir.mkdir(parents=True, exist_ok=True)
        for f in (ROOT / "nginx").glob("*.conf"):
            shutil.copy(f, conf_dir / f.name)
        vc = conf_dir / "verify-cache.conf"
        text = vc.read_text()
        assert "/var/lib/nginx/gatehouse-verify " in text
        vc.write_text(text.replace("/var/lib/nginx/gatehouse-verify ", f"{dir}/cache "))
        for t in ("client_body", "fastcgi", "proxy", "uwsgi", "scgi"):
            (dir / "tmp" / t).mkdir(parents=True, exist_ok=True)
        (dir / "test-headers.conf").write_text(TEST_HEADERS)
        self.conf = dir / "nginx.conf"
        self.conf.write_text(render(dir, gatehouse.data / "gatehouse.sock", self.port, cache))
        self.log = dir / "verify.log"
        self.proc = None

    def argv(self, *extra):
        return [NGINX, "-p", f"{self.dir}/", "-c", str(self.conf), "-e", str(self.dir / "error.log"), *extra]

    def check(self):
        return subprocess.run(self.argv("-t"), capture_output=True, text=True, timeout=30)

    def start(self):
        t = self.check()
        assert t.returncode == 0, t.stderr
        self.proc = subprocess.Popen(self.argv("-g", "daemon off;"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                requests.get(self.base + "/__/auth/health", timeout=1)
                return self
            except requests.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"nginx did not start; {(self.dir / 'error.log').read_text()[-2000:]}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def get(self, path, cookie=None, cookie_header=None):
        headers = {}
        if cookie is not None:
            headers["Cookie"] = f"{COOKIE}={cookie}"
        if cookie_header is not None:
            headers["Cookie"] = cookie_header
        return requests.get(self.base + path, headers=headers, timeout=10, allow_redirects=False)

    def verify_lines(self):
        """The access log's verify subrequests: [(status, cache status, upstream)]."""
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text().splitlines():
            m = re.match(r"/__/auth/verify (\d+) cache=(\S*) upstream=(\S*)$", line)
            if m:
                out.append((int(m.group(1)), m.group(2), m.group(3)))
        return out

    def upstream_verifies(self):
        """How many verify subrequests reached Gatehouse so far."""
        return sum(1 for _, _, up in self.verify_lines() if up != "-")


@pytest.fixture(scope="module")
def site(gatehouse, tmp_path_factory):
    n = CachingNginx(tmp_path_factory.mktemp("nginx-cache"), gatehouse).start()
    yield n
    n.stop()


def new_user(g):
    s = sign_up(g)
    return s, session_cookie(g, s["idToken"])


def uid_seen(r):
    m = re.search(r"X-Auth-User-Id: (\S*)\n", r.text)
    return m.group(1) if m else None


def assert_to_signin(site, r, path):
    assert r.status_code == 302, (r.status_code, r.text[:200])
    loc = urllib.parse.urlsplit(r.headers["Location"])
    assert loc.path == "/__/auth/signin"
    assert urllib.parse.parse_qs(loc.query)["continueUrl"] == [site.base + path]


def wait_for_a_fresh_second():
    """Starts a step just after a second boundary (nginx's cache clock has whole seconds), so a
    few requests made at once fall within one entry's lifetime."""
    time.sleep(1.02 - (time.time() % 1.0))


# --- 5. nginx -t, with and without the include ------------------------------------------------

def test_nginx_accepts_the_configuration_with_and_without_the_include(gatehouse, tmp_path):
    for cache in (True, False):
        n = CachingNginx(tmp_path / ("on" if cache else "off"), gatehouse, cache=cache)
        t = n.check()
        assert t.returncode == 0, t.stderr
        assert "test is successful" in t.stderr


def test_the_verify_answer_says_no_store_which_the_cache_ignores(gatehouse, site):
    """Gatehouse's 200 carries Cache-Control: no-store (hence fastcgi_ignore_headers Cache-Control)."""
    _, cookie = new_user(gatehouse)
    r = site.get("/p/", cookie)
    assert r.status_code == 200
    assert r.headers["X-Verify-Cache-Control"] == "no-store"
    assert r.headers["X-Verify-Cache"] == "MISS"
    assert site.get("/p/", cookie).headers["X-Verify-Cache"] == "HIT"


def test_without_the_include_nothing_is_cached(gatehouse, tmp_path):
    n = CachingNginx(tmp_path / "off", gatehouse, cache=False).start()
    try:
        s, cookie = new_user(gatehouse)
        for _ in range(5):
            r = n.get("/p/", cookie)
            assert r.status_code == 200 and uid_seen(r) == s["localId"]
            assert r.headers.get("X-Verify-Cache", "") == ""
        assert n.upstream_verifies() == 5
        assert_to_signin(n, n.get("/p/x"), "/p/x")
    finally:
        n.stop()


# --- 1. one user's identity never reaches another cookie --------------------------------------

def test_the_cache_never_serves_one_users_identity_to_another_cookie(gatehouse, site):
    users = [new_user(gatehouse) for _ in range(2)]
    seen = {"HIT": 0, "MISS": 0}
    order = [0, 1] * 60
    random.Random(7).shuffle(order)
    for i in order:
        s, cookie = users[i]
        r = site.get(f"/p/page{random.randrange(3)}", cookie)
        assert r.status_code == 200
        assert uid_seen(r) == s["localId"]
        seen[r.headers["X-Verify-Cache"]] = seen.get(r.headers["X-Verify-Cache"], 0) + 1
    assert seen["HIT"] >= 100, seen

    # The same, from several threads at once (both users, both cookie header shapes).
    errors = []

    def client(k):
        s, cookie = users[k % 2]
        header = f"{COOKIE}={cookie}" if k < 2 else f"theme=dark; {COOKIE}={cookie}; lang=en"
        for _ in range(40):
            r = site.get("/p/", cookie_header=header)
            if r.status_code != 200 or uid_seen(r) != s["localId"]:
                errors.append((k, r.status_code, uid_seen(r), s["localId"]))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_location_rule_and_the_step_up_are_part_of_the_key(gatehouse, site):
    s, cookie = new_user(gatehouse)
    assert site.get("/p/", cookie).status_code == 200
    assert site.get("/p/", cookie).headers["X-Verify-Cache"] == "HIT"
    # The cached 200 of /p/ is not the answer for a location with a rule, nor for the step-up.
    assert site.get("/admin/", cookie).status_code == 403
    r = site.get("/mfa/", cookie)
    assert r.status_code == 302 and "/__/auth/account" in r.headers["Location"]
    # Once the claim is granted, /admin/ has its own entry.
    upd = gatehouse.admin("/accounts:update", {"localId": s["localId"], "customAttributes": json.dumps({"role": "admin"})})
    assert upd.status_code == 200, upd.text
    r = site.get("/admin/", cookie)
    assert r.status_code == 200 and uid_seen(r) == s["localId"] and r.headers["X-Verify-Cache"] == "MISS"


def test_a_location_can_opt_out(gatehouse, site):
    _, cookie = new_user(gatehouse)
    before = site.upstream_verifies()
    for _ in range(4):
        r = site.get("/nocache/", cookie)
        assert r.status_code == 200 and r.headers.get("X-Verify-Cache", "") == ""
    assert site.upstream_verifies() - before == 4


# --- 2. a revoked session stops within the cache time -----------------------------------------

def revoked_within_the_cache_time(gatehouse, site, revoke):
    s, cookie = new_user(gatehouse)
    wait_for_a_fresh_second()
    r = site.get("/p/", cookie)
    cached_at = time.time()
    assert r.status_code == 200 and r.headers["X-Verify-Cache"] == "MISS"
    revoke(s, cookie)
    # Gatehouse refuses at once, but this nginx may still pass the session: it is in the cache.
    r = site.get("/p/", cookie)
    if time.time() - cached_at < CACHE_SECONDS - 1:
        assert r.status_code == 200 and r.headers["X-Verify-Cache"] == "HIT" and uid_seen(r) == s["localId"]
    # It stops once the entry expires: never later than the cache time (+ nginx's whole second).
    while True:
        r = site.get("/p/", cookie)
        if r.status_code != 200:
            stopped = time.time() - cached_at
            break
        assert time.time() - cached_at < LAG_BOUND + 0.5, "still passing after the cache time"
        time.sleep(0.1)
    assert_to_signin(site, r, "/p/")
    assert CACHE_SECONDS - 1 <= stopped <= LAG_BOUND + 0.5, stopped
    print(f"refused {stopped:.2f} s after the entry was stored")
    # ...and stays stopped: a 401 is never cached, so the next one asks Gatehouse again.
    time.sleep(0.3)
    assert_to_signin(site, site.get("/p/", cookie), "/p/")
    return stopped


def test_revoke_refresh_tokens_stops_the_session_within_the_cache_time(gatehouse, site):
    def revoke(s, _cookie):
        r = gatehouse.admin("/accounts:update", {"localId": s["localId"], "validSince": int(time.time())})
        assert r.status_code == 200, r.text
    revoked_within_the_cache_time(gatehouse, site, revoke)


def test_disabling_the_user_stops_the_session_within_the_cache_time(gatehouse, site):
    def disable(s, _cookie):
        r = gatehouse.admin("/accounts:update", {"localId": s["localId"], "disableUser": True})
        assert r.status_code == 200, r.text
    revoked_within_the_cache_time(gatehouse, site, disable)


def test_signing_out_stops_the_same_browser_at_once_and_a_copied_cookie_within_the_cache_time(gatehouse, site):
    def out(_s, cookie):
        r = sign_out(gatehouse, cookie)
        assert r.status_code == 303
        assert f"{COOKIE}=;" in r.headers["Set-Cookie"] and "Max-Age=0" in r.headers["Set-Cookie"]
        # The browser that signed out no longer sends the cookie: stopped at once, from the cache
        # or not (with only its other cookies left, or none).
        assert_to_signin(site, site.get("/p/"), "/p/")
        assert_to_signin(site, site.get("/p/", cookie_header="__Host-gh_csrf=abc; theme=dark"), "/p/")
    # A copy of the old cookie (another browser, a thief) is what the cache time applies to.
    revoked_within_the_cache_time(gatehouse, site, out)


# --- 3. no cookie / a bad cookie / a 401: never from the cache ---------------------------------

def test_requests_without_a_session_cookie_are_never_answered_from_the_cache(gatehouse, site):
    # Looked up (no map skips them: it cost every hit more than the lookup costs these), never
    # found: their 401 is never stored.
    before = len(site.verify_lines())
    for path in ("/p/a", "/p/b", "/p/a"):
        r = site.get(path)
        assert_to_signin(site, r, path)
        r = site.get(path, cookie_header="theme=dark")
        assert_to_signin(site, r, path)
    lines = site.verify_lines()[before:]
    assert len(lines) == 6
    assert all(status == 401 and cache == "MISS" and up != "-" for status, cache, up in lines), lines


def test_a_bad_cookie_and_its_401_are_never_cached(gatehouse, site):
    _, good = new_user(gatehouse)
    h, p, sig = good.split(".")
    bad = f"{h}.{p}.{sig[:-4]}AAAA"
    before = len(site.verify_lines())
    for path in ("/p/one?x=1", "/p/two", "/p/one?x=1", "/p/two", "/p/three"):
        # The Location stays the one for this URL: each 401 comes from Gatehouse.
        assert_to_signin(site, site.get(path, bad), path)
        assert_to_signin(site, site.get(path, "not-a-jwt"), path)
    lines = site.verify_lines()[before:]
    assert len(lines) == 10
    assert all(status == 401 and cache == "MISS" and up != "-" for status, cache, up in lines), lines


# --- 4. the cache hits --------------------------------------------------------------------------

def test_page_views_within_the_cache_time_cost_one_verify(gatehouse, site):
    s, cookie = new_user(gatehouse)
    wait_for_a_fresh_second()
    started = time.time()
    before = site.upstream_verifies()
    statuses = []
    for i in range(20):
        r = site.get(f"/p/asset{i}.css", cookie)
        assert r.status_code == 200 and uid_seen(r) == s["localId"]
        statuses.append(r.headers["X-Verify-Cache"])
    assert time.time() - started < CACHE_SECONDS - 1
    assert statuses == ["MISS"] + ["HIT"] * 19
    assert site.upstream_verifies() - before == 1
    # After the cache time, the next view asks Gatehouse again (once).
    time.sleep(LAG_BOUND - (time.time() - started) + 0.2)
    for _ in range(5):
        assert site.get("/p/", cookie).status_code == 200
    assert site.upstream_verifies() - before == 2


def test_an_expired_entry_is_replaced_by_the_current_answer(gatehouse, site):
    """After the cache time the next view carries what Gatehouse answers now (here a new email),
    and the hits after it serve the new entry, not the file of the old one."""
    s, cookie = new_user(gatehouse)
    wait_for_a_fresh_second()
    started = time.time()
    r = site.get("/p/", cookie)
    assert r.status_code == 200 and "X-Auth-Email: \n" in r.text
    email = f"cache-{s['localId'][:8].lower()}@example.com"
    upd = gatehouse.admin("/accounts:update", {"localId": s["localId"], "email": email})
    assert upd.status_code == 200, upd.text
    time.sleep(LAG_BOUND - (time.time() - started) + 0.2)
    for expected in (("EXPIRED", "MISS"), ("HIT",), ("HIT",)):
        r = site.get("/p/", cookie)
        assert r.status_code == 200 and r.headers["X-Verify-Cache"] in expected
        assert f"X-Auth-Email: {email}\n" in r.text


def test_a_long_cookie_header_is_cached_too(gatehouse, site):
    """The key holds the whole Cookie header; fastcgi_buffer_size 8k fits one of ~7 KB."""
    s, cookie = new_user(gatehouse)
    header = f"{COOKIE}={cookie}; prefs={'x' * 6000}"
    statuses = []
    for _ in range(3):
        r = site.get("/p/", cookie_header=header)
        assert r.status_code == 200 and uid_seen(r) == s["localId"]
        statuses.append(r.headers["X-Verify-Cache"])
    assert statuses[1:] == ["HIT", "HIT"], statuses
    assert "not enough for cache key" not in (site.dir / "error.log").read_text()
