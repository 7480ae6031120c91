"""Smoke: the harness starts nginx + responder and serves health and keys."""
from conftest import chromium_driver


def test_health_through_nginx(gatehouse):
    r = gatehouse.get("/__/auth/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["mode"] == "dev"
    assert body["database"]["status"] == "ok"


def test_browser_can_open_a_page(gatehouse, output_dir):
    d = chromium_driver()
    try:
        d.get(gatehouse.url("/__/auth/health"))
        assert "ok" in d.page_source
        d.save_screenshot(str(output_dir / "health.png"))
    finally:
        d.quit()
