"""The `gatehouse` command line: help, version, and usage errors (exit 64 with the usage)."""
import subprocess

from conftest import binary


def run(*args, **kw):
    return subprocess.run([str(binary()), *args], capture_output=True, text=True, timeout=60, **kw)


def test_help_lists_the_commands_and_each_command_its_options():
    r = run("--help")
    assert r.returncode == 0
    for name in ["serve", "dev", "keys", "tokens", "users", "config", "seed", "sms"]:
        assert name in r.stdout, r.stdout
    sub = run("help", "tokens", "mint")
    assert sub.returncode == 0 and "--uid" in sub.stdout and "--create" in sub.stdout, sub.stdout
    assert run("tokens", "mint", "--help").stdout == sub.stdout


def test_version_is_printed():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip()


def test_command_line_mistakes_exit_64_with_the_usage():
    cases = [
        (("tokens", "mint", "--nope"), "Unknown option '--nope'"),
        (("tokens", "mint"), "Missing expected argument '--uid <uid>'"),
        (("seed", "--count", "many"), "The value 'many' is invalid for '--count <count>'"),
        (("frobnicate",), "Unexpected argument 'frobnicate'"),
    ]
    for args, message in cases:
        r = run(*args)
        assert r.returncode == 64, (args, r.returncode, r.stderr)
        assert message in r.stderr and "Usage:" in r.stderr, (args, r.stderr)


def test_a_project_the_configuration_does_not_have_is_refused_by_every_command(tmp_path):
    data = ["--data", str(tmp_path)]
    for args in [("tokens", "mint", "--uid", "u1", "--create", "--project", "nope"),
                 ("users", "list", "--project", "nope"),
                 ("seed", "--count", "1", "--project", "nope"),
                 ("appverify", "verify-payload", "eyJ9", "--project", "nope")]:
        r = run(*args, *data)
        assert r.returncode == 64, (args, r.returncode, r.stdout, r.stderr)
        assert "no project nope in embedded dev default" in r.stderr, (args, r.stderr)
