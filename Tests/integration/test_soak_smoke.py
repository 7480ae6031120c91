"""A 30-second run of bench/soak.py (RELIABILITY.md "Soak"): the mixed workload at saturation
with housekeeping every 10 s answers no 5xx and the responder does not restart. Growth of RSS
and descriptors is checked only by the long run (30 s is too short for its medians)."""
import subprocess
import sys

from conftest import ROOT, binary, free_port


def test_a_short_soak_answers_no_5xx(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "bench/soak.py"), "--minutes", "0.5", "--threads", "8",
                          "--housekeeping-seconds", "10", "--no-growth-check", "--bin", str(binary()), "--out", str(tmp_path),
                          "--port", str(free_port())],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert (tmp_path / "soak.csv").read_text().count("\n") >= 3
