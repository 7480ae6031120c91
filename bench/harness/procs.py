"""Every process the benchmark starts, and how it is stopped again.

Each child runs in its own session (process group), is recorded here, and is stopped by
`stop_all()`, which the harness calls on every exit path (normal end, exception, SIGINT,
SIGTERM, SIGHUP). Nothing is ever stopped by name, only by the pid we started.
"""
import os
import re
import signal
import subprocess
import time

_children = []          # (name, Popen)
_cleanups = []          # callables run by stop_all after the children (e.g. a database cluster's stop)


def at_exit(cleanup):
    """Runs `cleanup` when stop_all runs (every exit path), after the children are stopped."""
    _cleanups.append(cleanup)


def start(name, argv, env=None, log_path=None, cwd=None):
    """Starts argv in a new session; stdout/stderr go to log_path (or /dev/null)."""
    out = open(log_path, "ab") if log_path else subprocess.DEVNULL
    try:
        p = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                             start_new_session=True)
    finally:
        if log_path:
            out.close()
    _children.append((name, p))
    return p


def stop(p, sig=signal.SIGTERM, timeout=10.0):
    """Stops one child (and its process group): sig, then SIGKILL after timeout."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(timeout=5)
    for i, (_, q) in enumerate(_children):
        if q is p:
            del _children[i]
            break


def stop_all():
    """Stops every child still recorded, newest first."""
    while _children:
        name, p = _children[-1]
        # nginx finishes gracefully on SIGQUIT; everything else stops on SIGTERM.
        stop(p, signal.SIGQUIT if name.startswith("nginx") else signal.SIGTERM)
    while _cleanups:
        try:
            _cleanups.pop()()
        except Exception:
            pass


def install_signal_handlers():
    """SIGINT/SIGTERM/SIGHUP end the run through the normal cleanup path."""
    def handler(signum, _frame):
        raise SystemExit(128 + signum)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, handler)


def run(argv, timeout, env=None, cwd=None, check=True):
    """Runs a bounded foreground command and returns its CompletedProcess (text)."""
    r = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    if check and r.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({r.returncode}): {(r.stderr or r.stdout)[-2000:]}")
    return r


# --- /proc readings -------------------------------------------------------------------------

def openssl_speed(seconds):
    """RS256 (RSA-2048) signatures and verifications per second on one core: `openssl speed`."""
    r = run(["openssl", "speed", "-seconds", str(seconds), "rsa2048"], timeout=seconds * 4 + 60)
    for line in r.stdout.splitlines():
        m = re.match(r"\s*rsa\s+2048 bits\s+([\d.]+)s\s+([\d.]+)s\s+([\d.]+)\s+([\d.]+)", line)
        if m:
            return {"sign_per_s": float(m.group(3)), "verify_per_s": float(m.group(4))}
    raise RuntimeError("openssl speed: no rsa 2048 line in:\n" + r.stdout[-800:])


def status_kb(pid, field):
    """A kB field of /proc/PID/status (VmRSS, VmHWM), or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak(pid):
    """Resets VmHWM to the current RSS (writing 5 to clear_refs); False if not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User + system CPU seconds used so far by the process (all threads)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return None


def tree_cpu_seconds(pids):
    """User + system CPU seconds of these processes (those still alive), summed."""
    return sum(cpu_seconds(p) or 0 for p in pids)


def descendants(root):
    """root and every process below it (e.g. `gatehouse dev`, its responder, nginx and its worker)."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out, frontier = [root], [root]
    while frontier:
        frontier = [p for p, pp in parent.items() if pp in frontier]
        out += frontier
    return out


def sign_rate_if_alone(server_us_per_flow, signs_per_s, cores=None):
    """What the server's CPU per flow allows on the whole machine, as a ratio to one core's RS256
    sign rate: the flows/s a driver that cost nothing would see, against the sign/s."""
    cores = cores or os.cpu_count() or 1
    return (cores * 1e6 / server_us_per_flow) / signs_per_s if server_us_per_flow and signs_per_s else float("nan")


def machine_busy_seconds():
    """CPU seconds the whole machine has been busy (all cores, not idle or iowait), or None."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        return (sum(fields[:8]) - fields[3] - fields[4]) / _TICK
    except (OSError, ValueError, IndexError):
        return None


def wait_for(predicate, timeout, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False
