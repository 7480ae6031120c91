"""CGI start-up without the command-line parser, and start-up validation of templates."""
import json
import os
import shutil
import subprocess
from pathlib import Path

from conftest import binary

RESOURCES = Path(__file__).resolve().parents[2] / "Sources" / "AuthWeb" / "Resources"


def cgi(argv, tmp_path, path, accept_language="fr-CH"):
    env = {"PATH": os.environ["PATH"], "GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "GET", "PATH_INFO": path,
           "QUERY_STRING": "", "SERVER_NAME": "localhost", "REMOTE_ADDR": "127.0.0.1", "HTTP_ACCEPT_LANGUAGE": accept_language}
    return subprocess.run([str(binary()), *argv], env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)


def test_cgi_serve_with_config_and_data_renders_the_phone_page(tmp_path):
    cfg = tmp_path / "gatehouse.json"
    cfg.write_text(json.dumps({"data_dir": str(tmp_path / "unused")}))
    for argv in (["serve", "--config", str(cfg), "--data", str(tmp_path / "a")], ["-c", str(cfg), f"--data={tmp_path / 'b'}"]):
        r = cgi(argv, tmp_path, "/__/auth/phone")
        assert r.returncode == 0, r.stderr
        head, _, body = r.stdout.partition(b"\r\n\r\n")
        assert head.startswith(b"Status: 200"), head
        page = body.decode()
        assert page.count("<option ") > 200
        assert '<option value="CH" selected>Suisse (+41)</option>' in page
        assert page.rstrip().endswith("</html>")
    assert (tmp_path / "a").is_dir() and (tmp_path / "b").is_dir() and not (tmp_path / "unused").exists()


def test_cgi_with_a_bad_configuration_reports_it_as_before(tmp_path):
    cfg = tmp_path / "bad.json"
    cfg.write_text('{"colour": "blue"}')
    r = cgi(["serve", "--config", str(cfg)], tmp_path, "/__/auth/health")
    assert r.returncode != 0
    assert b"unknown key 'colour'" in r.stderr


def test_a_broken_template_fails_config_check_and_serve_at_start(tmp_path):
    res = tmp_path / "res"
    shutil.copytree(RESOURCES, res)
    (res / "templates" / "pages" / "signin.mustache").write_text("{{#open}} never closed")
    cfg = tmp_path / "gatehouse.json"
    cfg.write_text(json.dumps({"templates_dir": str(res), "data_dir": str(tmp_path / "data")}))
    r = subprocess.run([str(binary()), "config", "check", "--config", str(cfg)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "pages/signin.mustache" in r.stdout
    r = subprocess.run([str(binary()), "serve", "--config", str(cfg), "--socket", str(tmp_path / "s.sock")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "pages/signin.mustache" in r.stderr


def test_cgi_leaves_an_empty_wal_so_the_next_request_checkpoints_nothing(tmp_path):
    # The first page writes (the CSRF key is created); its process is the file's last closer, so it
    # checkpoints and empties the kept -wal. Later read-only requests then find no frames to copy
    # again: the database file is not rewritten (nor synced) by a page view.
    cfg = tmp_path / "gatehouse.json"
    cfg.write_text(json.dumps({"data_dir": str(tmp_path / "data")}))
    argv = ["serve", "--config", str(cfg)]
    first = cgi(argv, tmp_path, "/__/auth/phone")
    assert first.returncode == 0, first.stderr
    db, wal = tmp_path / "data" / "gatehouse.db", tmp_path / "data" / "gatehouse.db-wal"
    assert wal.exists() and wal.stat().st_size == 0, "the WAL kept its frames after its last connection"
    before = db.stat()
    for _ in range(3):
        r = cgi(argv, tmp_path, "/__/auth/phone")
        assert r.returncode == 0 and r.stdout.startswith(b"Status: 200"), r.stderr
    after = db.stat()
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size), "a page view rewrote the database"
    assert wal.stat().st_size == 0
