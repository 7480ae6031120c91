"""The real Firebase JS SDK in headless Chromium against Gatehouse (test_js_sdk.py).

The SDK's files come from scripts/firebase-js-sdk.py (scripts/install-deps.sh test runs it) in
.build-sdk/firebase/. A site folder holds the test page (fixtures/js-sdk/) with the SDK's import map
written in, and the SDK folder beside it. It is served twice:
  - from Gatehouse's own origin: `gatehouse dev` serves /__/auth/static/ from $GATEHOUSE_HOME/public,
    so the Gatehouse of these tests runs with a GATEHOUSE_HOME whose public/ holds the project's
    own assets plus js-sdk/ (and whose nginx/ is the project's);
  - from another origin: `python3 -m http.server` on 127.0.0.1 at another free port (or on
    127.0.0.2, an origin production does not allow).
The page takes the Gatehouse, the API key, the project and the mode from its query (page_url).
"""
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT, DEFAULT_API_KEY, Gatehouse, chromium_driver, free_port

SDK_DIR = ROOT / ".build-sdk" / "firebase"
PAGE_DIR = Path(__file__).resolve().parent / "fixtures" / "js-sdk"
PROJECT = "demo-gatehouse"
SAME_ORIGIN_PATH = "/__/auth/static/js-sdk/index.html"
OTHER_ORIGIN_PATH = "/js-sdk/index.html"


def sdk_missing() -> str | None:
    """Why the SDK cannot be used, or None."""
    names = ["importmap.json", "@firebase/auth/dist/esm2017/index.js", "firebase/app/dist/esm/index.esm.js"]
    absent = [n for n in names if not (SDK_DIR / n).is_file()]
    if absent:
        return f"Firebase JS SDK not laid out in {SDK_DIR} (run scripts/firebase-js-sdk.py): {absent[0]} is absent"
    return None


def make_site(base: Path) -> Path:
    """`base`/site/js-sdk/: index.html with the import map, page.js, and firebase/ (the SDK)."""
    page = base / "site" / "js-sdk"
    page.mkdir(parents=True)
    imports = json.loads((SDK_DIR / "importmap.json").read_text())["imports"]
    import_map = {"imports": {name: "./firebase/" + path.removeprefix("./") for name, path in imports.items()}}
    html = (PAGE_DIR / "index.html").read_text()
    assert "/*IMPORT_MAP*/" in html
    (page / "index.html").write_text(html.replace("/*IMPORT_MAP*/", json.dumps(import_map, indent=2)))
    (page / "page.js").write_text((PAGE_DIR / "page.js").read_text())
    (page / "firebase").symlink_to(SDK_DIR, target_is_directory=True)
    return base / "site"


def make_home(base: Path, site: Path) -> Path:
    """A GATEHOUSE_HOME: the project's nginx/ and Sources/ (templates), and a public/ with the
    project's assets plus the site's js-sdk/."""
    home = base / "home"
    (home / "public").mkdir(parents=True)
    for name in ("nginx", "Sources"):
        (home / name).symlink_to(ROOT / name, target_is_directory=True)
    for asset in (ROOT / "public").iterdir():
        (home / "public" / asset.name).symlink_to(asset)
    (home / "public" / "js-sdk").symlink_to(site / "js-sdk", target_is_directory=True)
    return home


def start_gatehouse(data: Path, home: Path, config: dict) -> Gatehouse:
    return Gatehouse(data, config=config, env={"GATEHOUSE_HOME": str(home)}).start()


class StaticServer:
    """`python3 -m http.server` serving `root` on `host` (127.0.0.1 unless told) at a free port:
    another origin than Gatehouse's."""

    def __init__(self, root: Path, host: str = "127.0.0.1"):
        self.root = root
        self.host = host
        self.port = free_port()
        self.base = f"http://{host}:{self.port}"
        self.proc = None

    def start(self, timeout: float = 10.0):
        self.log = open(self.root.parent / "static-server.log", "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", self.host, "--directory", str(self.root),
                                      str(self.port)], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"http.server exited with {self.proc.returncode}")
            with socket.socket() as s:
                if s.connect_ex((self.host, self.port)) == 0:
                    return self
            time.sleep(0.05)
        raise RuntimeError(f"http.server did not listen on {self.port}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


class SdkError(Exception):
    """A rejection inside the page: `code` is the SDK's error code (auth/…) when it has one."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Page:
    """The test page in one Chromium: load, run async JS against `window.gh`, screenshot."""

    def __init__(self, url: str):
        self.url = url
        self.driver = chromium_driver(width=520, height=900, logging_prefs={"browser": "ALL"})
        self.driver.set_script_timeout(45)

    def load(self, timeout: float = 20.0):
        self.driver.get(self.url)
        deadline = time.time() + timeout
        while time.time() < deadline:
            state = self.driver.execute_script("return window.ghError || (window.gh ? 'loaded' : null)")
            if state == "loaded":
                break
            if state:
                raise AssertionError(f"{state}; console: {self.console()}")
            time.sleep(0.1)
        else:
            raise AssertionError(f"the page did not load the SDK in {timeout} s; console: {self.console()}")
        self.run("await gh.ready;")
        return self

    def run(self, body: str, *args, expect_error: bool = False):
        """Runs `body` as the body of an async function (its `args` are the arguments; `gh`,
        `sdk` and `auth` are in scope); returns what it returns, or raises SdkError. The page
        lists an error in red, or, with `expect_error`, as an expected refusal."""
        kind = "expected" if expect_error else "error"
        label = "refused as expected" if expect_error else "error"
        script = ("const done = arguments[arguments.length - 1];"
                  "const args = Array.from(arguments).slice(0, -1);"
                  "const gh = window.gh, sdk = gh.sdk, auth = gh.auth;"
                  "(async () => {" + body + "})().then("
                  "  v => done({ok: v === undefined ? null : v}),"
                  f"  e => {{ gh.log(`{label}: ${{e && e.code || e}}`, '{kind}');"
                  "         done({error: {code: (e && e.code) || null, message: String((e && e.message) || e)}}); });")
        out = self.driver.execute_async_script(script, *args)
        if "error" in out:
            raise SdkError(out["error"]["code"], out["error"]["message"])
        return out["ok"]

    def fails(self, body: str, *args) -> SdkError:
        """Runs `body`, which must reject: returns the error."""
        try:
            result = self.run(body, *args, expect_error=True)
        except SdkError as e:
            return e
        raise AssertionError(f"expected a rejection, got {result!r}")

    def console(self) -> list:
        try:
            return [f"{e['level']} {e['message']}" for e in self.driver.get_log("browser")]
        except Exception:  # noqa: BLE001 - the log is a diagnostic only
            return []

    def screenshot(self, path: Path):
        """The whole page: the window grows to the page's height first."""
        self.run("gh.render();")
        height = self.driver.execute_script("return document.documentElement.scrollHeight;")
        size = self.driver.get_window_size()
        inner = self.driver.execute_script("return window.innerHeight;")
        if height > inner:
            self.driver.set_window_size(size["width"], size["height"] + height - inner + 16)
        self.driver.save_screenshot(str(path))

    def quit(self):
        self.driver.quit()


def jwt_claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def page_url(base: str, path: str, gh: Gatehouse, api_key: str = DEFAULT_API_KEY, project: str = PROJECT) -> str:
    return f"{base}{path}?gatehouse={gh.base}&apiKey={api_key}&project={project}"
