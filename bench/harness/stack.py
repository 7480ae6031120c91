"""The system under test: nginx (one worker, loopback only) in front of Gatehouse and the
fcgi-baseline responder, each on its own unix socket, all in one temporary folder.

nginx serves three servers, each on a free 127.0.0.1 port:
  plain      FastCGI connection per request (fastcgi_pass to a plain upstream)
  keepalive  fastcgi_keep_conn on + upstream keepalive pool
  growth     plain, to a Gatehouse instance holding the large account store
  growth1k   plain, to a fresh Gatehouse instance with 1,000 accounts (the growth comparison's
             other side: same history as the large one, no earlier load)
In each, /page, /page-large and /verify go to the baseline, /ceiling is nginx's own `return 200`, and
every other path goes to Gatehouse. The plain and keepalive ports also answer for the host name
ALL_REGIONS_HOST, whose requests go to a second Gatehouse instance (when one is started) whose
project allows every SMS region: its phone page lists every country (the indicative page_all row).
"""
import json
import os
import re
import secrets
import signal
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

from . import procs

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "gatehouse-bench"
API_KEY = "bench-api-key"
COOKIE = "__Host-gatehouse"
KEEPALIVE_POOL = 8
# Ten fictional numbers (555-01xx is reserved for fiction; the most a project may list).
TEST_NUMBERS = {f"+1650555010{i}": f"{(i * 111111 + 123456) % 1000000:06d}" for i in range(10)}
# Requests with this Host go to the instance whose project allows every region (nginx server_name).
ALL_REGIONS_HOST = "all-regions.bench.invalid"


def every_region():
    """Every region the phone page knows (the build's regions/calling-codes.txt): listing them all
    in `sms_regions` is how a production project allows every region."""
    path = ROOT / "Sources/AuthWeb/Resources/regions/calling-codes.txt"
    return [l.split("\t")[0] for l in path.read_text().splitlines() if l.strip() and not l.startswith("#")]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, headers=None, body=None, timeout=10.0):
    """(status, headers, body bytes) without raising on 4xx/5xx; status 0 if unreachable."""
    assert url.startswith("http://127.0.0.1:"), url
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    req = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if isinstance(body, (dict, list)):
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
    except (urllib.error.URLError, OSError) as e:
        return 0, {}, str(e).encode()


# --- Gatehouse ------------------------------------------------------------------------------

def project_settings(all_regions=False):
    return {
        "id": PROJECT,
        "api_keys": [API_KEY],
        "authorized_domains": ["127.0.0.1", "localhost"],
        "test_phone_numbers": TEST_NUMBERS,
        "sms_regions": every_region() if all_regions else ["US"],
        # The MFA scenario's users have test numbers as second factors (phone-flow users, who
        # have them as first factors, have none).
        "mfa": "ENABLED",
        # Each flow presents its own client address, so these are never the bottleneck; they are
        # raised to the configurable maximum so that a reused address cannot throttle a round.
        "phone": {"verify_attempts_per_ip_per_5min": 10000, "sends_per_ip_per_hour": 10000},
    }


def production_config(data_dir, workers, admin_token, all_regions=False):
    return {
        "$comment": "written by bench/run",
        "mode": "production",
        "data_dir": str(data_dir),
        "public_origin": "https://auth.bench.invalid",
        "admin_token": admin_token,
        "listen": {"socket_mode": "0666", "workers": workers},
        "projects": [project_settings(all_regions)],
        # Test numbers never send an SMS, and no email is sent; the programs only have to exist.
        "sms": {"provider": "command", "command": "/bin/true"},
        "email": {"transport": "sendmail", "from": "bench@bench.invalid", "command": ["/bin/true"]},
    }


def dev_config(data_dir, workers, admin_token, all_regions=False):
    return {
        "$comment": "written by bench/run (production mode was refused; see the report)",
        "mode": "dev",
        "data_dir": str(data_dir),
        "public_origin": "https://auth.bench.invalid",
        "admin_token": admin_token,
        "listen": {"socket_mode": "0666", "workers": workers},
        "projects": [project_settings(all_regions)],
    }


class Responder:
    """A FastCGI responder process that is ready once its socket exists."""
    proc = None

    def launch(self, name, argv, timeout, env=None, cwd=None):
        self.proc = procs.start(name, argv, env=env, log_path=self.log, cwd=cwd)
        if not procs.wait_for(lambda: os.path.exists(self.socket) or self.proc.poll() is not None, timeout):
            raise RuntimeError(f"{name}: no socket after {timeout} s; see {self.log}")
        if self.proc.poll() is not None:
            raise RuntimeError(f"{name}: exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")

    def stop(self):
        if self.proc:
            procs.stop(self.proc)
            self.proc = None

    @property
    def pid(self):
        return self.proc.pid if self.proc else None


class Gatehouse(Responder):
    """One Gatehouse instance: its data folder, config per worker count, socket and process."""

    def __init__(self, name, binary, root, config_kind, admin_token, all_regions=False):
        self.name = name
        self.all_regions = all_regions  # its project allows every SMS region
        self.binary = str(binary)
        self.dir = Path(root) / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.data = self.dir / "data"
        self.socket = str(self.dir / "gatehouse.sock")
        self.kind = config_kind
        self.admin_token = admin_token
        self.proc = None
        self.log = self.dir / "gatehouse.log"
        # A PostgreSQL database for this instance (`bench/run --store postgresql`); None: SQLite.
        self.store_url = None

    def config_path(self, workers, store=True):
        path = self.dir / f"config-{workers}{'' if store else '-sqlite'}.json"
        make = production_config if self.kind == "production" else dev_config
        config = make(self.data, workers, self.admin_token, self.all_regions)
        if store and self.store_url:
            config["store"] = {"url": self.store_url}
        path.write_text(json.dumps(config, indent=2))
        return str(path)

    def seed(self, count, timeout=1800):
        """`gatehouse seed` fills the SQLite file; on PostgreSQL the file is then copied over
        (`gatehouse store copy`). Returns seed's summary line."""
        line = procs.run([self.binary, "seed", "--count", str(count), "--config", self.config_path(4, store=False)],
                         timeout=timeout, cwd=self.dir).stdout.strip()
        if self.store_url:
            procs.run([self.binary, "store", "copy", "--from", f"sqlite://{self.data / 'gatehouse.db'}", "--to", self.store_url,
                       "--force"], timeout=timeout, cwd=self.dir)
            line += " (copied to PostgreSQL)"
        return line

    def tool(self, *args, timeout=600):
        return procs.run([self.binary, *args, "--config", self.config_path(4)], timeout=timeout, cwd=self.dir)

    def start(self, workers, prefix=(), binary=None, timeout=30):
        """Starts `gatehouse serve`; prefix runs it under another program (valgrind, for profiling)."""
        cfg = self.config_path(workers)
        argv = [*prefix, binary or self.binary, "serve", "--config", cfg, "--socket", self.socket]
        self.launch(f"gatehouse-{self.name}", argv, timeout, cwd=self.dir)


def choose_config_kind(binary, root):
    """Production mode if this build accepts a production config, else dev (with the reasons)."""
    probe = Path(root) / "config-probe.json"
    probe.write_text(json.dumps(production_config(Path(root) / "probe-data", 4, "x" * 40)))
    r = procs.run([str(binary), "config", "check", "--config", str(probe)], timeout=60, check=False)
    if r.returncode == 0:
        return "production", None
    problems = [l.strip(" -") for l in r.stdout.splitlines()[1:] if l.strip()]
    return "dev", problems or [r.stdout.strip() or r.stderr.strip()]


# --- fcgi-baseline -------------------------------------------------------------------------

class Baseline(Responder):
    def __init__(self, root):
        self.dir = Path(root) / "baseline"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.binary = str(ROOT / "bench/baseline/fcgi-baseline")
        self.keys = self.dir / "keys"
        self.socket = str(self.dir / "baseline.sock")
        self.proc = None
        self.log = self.dir / "baseline.log"
        self.large_page_bytes = None  # body size of /page-large (None: the baseline's default)

    def make_cookie(self, ttl=86400):
        """An RS256 JWT signed with the baseline's own RSA-2048 key (mkjwt.py)."""
        r = procs.run(["python3", str(ROOT / "bench/baseline/mkjwt.py"), str(self.keys), "--sub", "bench-user", "--ttl", str(ttl)],
                      timeout=60)
        return r.stdout.strip()

    def env(self):
        extra = {"BASELINE_LARGE_PAGE_BYTES": str(self.large_page_bytes)} if self.large_page_bytes else {}
        return dict(os.environ, BASELINE_PUBKEY=str(self.keys / "public.pem"), BASELINE_COOKIE=COOKIE, **extra)

    def start(self, threads):
        self.launch("baseline", [self.binary, self.socket, str(threads)], 10, env=self.env())


# --- nginx ---------------------------------------------------------------------------------

def fastcgi_params():
    """Gatehouse's own parameter list, as a TLS-terminating production nginx sends it
    (HTTPS on), with the client address taken from X-Bench-Client when a script sets it."""
    text = (ROOT / "nginx/gatehouse-fastcgi.conf").read_text()
    text = re.sub(r"(?m)^fastcgi_param\s+HTTPS\s.*$", "fastcgi_param  HTTPS              on;", text)
    text = re.sub(r"(?m)^fastcgi_param\s+REMOTE_ADDR\s.*$", "fastcgi_param  REMOTE_ADDR        $bench_remote_addr;", text)
    return text


def nginx_head(d):
    """The start of every benchmark's nginx.conf, up to inside `http {`: one worker, no access
    log, temporary folders under d (the caller makes d/tmp/*)."""
    user = "user root root;\n" if os.geteuid() == 0 else ""
    return f"""{user}worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {d}/tmp/client_body;
    fastcgi_temp_path {d}/tmp/fastcgi;
    proxy_temp_path {d}/tmp/proxy;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    server_tokens off;
    keepalive_requests 1000000;
"""


class Nginx:
    def __init__(self, root, gatehouse_socket, baseline_socket, growth_socket, growth1k_socket, all_regions_socket=None):
        self.dir = Path(root) / "nginx"
        for t in ("client_body", "fastcgi", "proxy", "uwsgi", "scgi"):
            (self.dir / "tmp" / t).mkdir(parents=True, exist_ok=True)
        self.ports = {"plain": free_port(), "keepalive": free_port(), "growth": free_port(), "growth1k": free_port()}
        self.proc = None
        (self.dir / "bench-fastcgi.conf").write_text(fastcgi_params())
        self.conf = self.dir / "nginx.conf"
        self.conf.write_text(self.render(gatehouse_socket, baseline_socket, growth_socket, growth1k_socket, all_regions_socket))

    def base(self, server):
        return f"http://127.0.0.1:{self.ports[server]}"

    def render(self, gh, bl, growth, growth1k, all_regions=None):
        d = self.dir

        def server(port, gh_up, bl_up, keep):
            keep_line = "        fastcgi_keep_conn on;\n" if keep else ""
            return f"""
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        server_name 127.0.0.1;
{keep_line}        location = /ceiling {{ return 200 "ok\\n"; }}
        location = /page {{ include {d}/bench-fastcgi.conf; fastcgi_pass {bl_up}; }}
        location = /page-large {{ include {d}/bench-fastcgi.conf; fastcgi_pass {bl_up}; }}
        location = /verify {{ include {d}/bench-fastcgi.conf; fastcgi_pass {bl_up}; }}
        location / {{ include {d}/bench-fastcgi.conf; fastcgi_pass {gh_up}; }}
    }}"""

        def all_regions_server(port, up, keep):
            # Same port, matched by Host: the instance whose project allows every region.
            keep_line = "        fastcgi_keep_conn on;\n" if keep else ""
            return f"""
    server {{
        listen 127.0.0.1:{port};
        server_name {ALL_REGIONS_HOST};
{keep_line}        location / {{ include {d}/bench-fastcgi.conf; fastcgi_pass {up}; }}
    }}"""

        extra = ""
        if all_regions:
            extra = f"""
    upstream gh_all_plain {{ server unix:{all_regions}; }}
    upstream gh_all_keep {{ server unix:{all_regions}; keepalive {KEEPALIVE_POOL}; }}
{all_regions_server(self.ports["plain"], "gh_all_plain", False)}
{all_regions_server(self.ports["keepalive"], "gh_all_keep", True)}"""

        return f"""# Written by bench/run for one benchmark run; loopback only.
{nginx_head(d)}
    map $http_x_bench_client $bench_remote_addr {{
        ""      $remote_addr;
        default $http_x_bench_client;
    }}

    upstream gh_plain {{ server unix:{gh}; }}
    upstream bl_plain {{ server unix:{bl}; }}
    upstream gh_keep {{ server unix:{gh}; keepalive {KEEPALIVE_POOL}; }}
    upstream bl_keep {{ server unix:{bl}; keepalive {KEEPALIVE_POOL}; }}
    upstream gh_growth {{ server unix:{growth}; }}
    upstream gh_growth1k {{ server unix:{growth1k}; }}
{server(self.ports["plain"], "gh_plain", "bl_plain", False)}
{server(self.ports["keepalive"], "gh_keep", "bl_keep", True)}
{server(self.ports["growth"], "gh_growth", "bl_plain", False)}
{server(self.ports["growth1k"], "gh_growth1k", "bl_plain", False)}{extra}
}}
"""

    def start(self):
        nginx = "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else "nginx"
        procs.run([nginx, "-t", "-p", str(self.dir) + "/", "-c", str(self.conf), "-e", str(self.dir / "error.log")], timeout=30)
        self.proc = procs.start("nginx", [nginx, "-p", str(self.dir) + "/", "-c", str(self.conf), "-e", str(self.dir / "error.log")],
                                log_path=self.dir / "stdout.log")
        if not procs.wait_for(lambda: http("GET", self.base("plain") + "/ceiling", timeout=1)[0] == 200, 10):
            raise RuntimeError(f"nginx did not come up; see {self.dir}/error.log")

    def release_upstreams(self):
        """Reloads nginx: the old worker closes its kept upstream connections, so responders
        whose threads wait on a kept connection can stop at once."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGHUP)
            time.sleep(1.0)

    def stop(self):
        if self.proc:
            procs.stop(self.proc, signal.SIGQUIT)
            self.proc = None


def admin_token():
    return secrets.token_urlsafe(32)
