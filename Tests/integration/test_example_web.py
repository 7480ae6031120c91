"""examples/web, the example Firebase web app, as a user drives it: its own page and script on
another origin than Gatehouse's, the real Firebase JS SDK (its import map pointed at the local
copy instead of Google's CDN), `make dev`'s Gatehouse; phone sign-in and an email link by
typing and clicking, codes and links from the dev outbox."""
import json
import re
import shutil
import time
from pathlib import Path

import pytest

import sdk_support
from conftest import ROOT, chromium_driver
from email_support import latest_link
from mfa_support import codes, config, number

missing = sdk_support.sdk_missing()
if missing:
    pytest.skip(missing, allow_module_level=True)

EXAMPLE = ROOT / "examples" / "web"


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = sdk_support.start_gatehouse(tmp_path_factory.mktemp("gh-example"), ROOT, config())
    yield g
    g.stop()


@pytest.fixture(scope="module")
def site(tmp_path_factory, gh):
    """The example as shipped, but for its import map (the local SDK) and its config (this Gatehouse)."""
    root = tmp_path_factory.mktemp("example-site") / "site"
    app = root / "example"
    shutil.copytree(EXAMPLE, app)
    imports = json.loads((sdk_support.SDK_DIR / "importmap.json").read_text())["imports"]
    local = {"imports": {name: "./firebase/" + path.removeprefix("./") for name, path in imports.items()}}
    html = (app / "index.html").read_text()
    html, n = re.subn(r'<script type="importmap">.*?</script>', '<script type="importmap">' + json.dumps(local) + "</script>",
                      html, flags=re.S)
    assert n == 1
    (app / "index.html").write_text(html)
    cfg = (app / "config.js").read_text().replace("http://127.0.0.1:8080", gh.base)
    (app / "config.js").write_text(cfg)
    (app / "firebase").symlink_to(sdk_support.SDK_DIR, target_is_directory=True)
    server = sdk_support.StaticServer(root).start()
    yield server.base + "/example/index.html"
    server.stop()


def wait_for(driver, element_id: str, pattern: str, timeout: float = 20.0) -> str:
    deadline = time.time() + timeout
    text = ""
    while time.time() < deadline:
        text = driver.find_element("id", element_id).text
        if re.search(pattern, text):
            return text
        time.sleep(0.1)
    raise AssertionError(f"#{element_id} never matched {pattern!r}: {text!r}; log: {driver.find_element('id', 'log').text!r}")


def test_phone_sign_in_and_an_email_link_by_hand(gh, site, output_dir):
    d = chromium_driver(width=520, height=900)
    try:
        d.get(site)
        wait_for(d, "who", "Signed out")
        phone = number()
        d.find_element("id", "phone-number").send_keys(phone)
        d.find_element("id", "phone-send").click()
        wait_for(d, "log", "Code sent")
        code = next(c["code"] for c in reversed(codes(gh)) if c["phoneNumber"] == phone)
        d.find_element("id", "phone-code").send_keys(code)
        d.find_element("id", "phone-verify").click()
        wait_for(d, "who", re.escape(f"Signed in as {phone}"))
        d.save_screenshot(str(output_dir / "example-phone.png"))

        d.find_element("id", "sign-out").click()
        wait_for(d, "who", "Signed out")
        email = f"example-{int(time.time() * 1000)}@example.com"
        d.find_element("id", "email-address").send_keys(email)
        d.find_element("id", "email-send").click()
        wait_for(d, "log", "Link sent")
        d.get(latest_link(gh, email)["oobLink"])
        wait_for(d, "who", re.escape(f"Signed in as {email}"))
        d.save_screenshot(str(output_dir / "example-email.png"))
    finally:
        d.quit()
