"""A fatal error in the responder ends its process; `gatehouse dev` reports it and starts it again."""
import os
import signal
import time

from conftest import binary


def responder_pid(gh) -> int:
    """The responder: the child of `gatehouse dev` that runs the gatehouse binary (the other is nginx)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            exe = os.readlink(f"/proc/{entry}/exe")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == gh.proc.pid and os.path.samefile(exe, binary()):
            return int(entry)
    raise AssertionError("no responder process under gatehouse dev")


def wait_healthy(gh, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if gh.get("/__/auth/health").status_code == 200:
                return True
        except Exception:
            pass
        time.sleep(0.1)
    return False


def test_a_trapped_responder_is_reported_and_started_again(make_gatehouse):
    gh = make_gatehouse()
    for sig in (signal.SIGILL, signal.SIGSEGV):
        old = responder_pid(gh)
        os.kill(old, sig)
        # A development build's runtime prints a backtrace before the process ends.
        deadline = time.time() + 30
        while time.time() < deadline and alive(old):
            time.sleep(0.05)
        assert not alive(old), "the signalled responder did not end"
        assert wait_healthy(gh), "the responder did not come back"
        assert responder_pid(gh) != old
    log = gh.log_path.read_text()
    assert f"fatal signal {int(signal.SIGILL)}" in log and f"fatal signal {int(signal.SIGSEGV)}" in log
    assert "(a trap); starting it again" in log
    assert gh.api("sendVerificationCode", {"phoneNumber": "+15555550100"}).status_code in (200, 400)


def test_a_killed_dev_takes_its_responder_with_it(make_gatehouse):
    gh = make_gatehouse()
    pid = responder_pid(gh)
    gh.kill()
    deadline = time.time() + 10
    while time.time() < deadline and alive(pid):
        time.sleep(0.1)
    assert not alive(pid), "the responder outlived gatehouse dev"


def alive(pid: int) -> bool:
    """Running (a zombie left for a parent that does not reap it counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
