"""SMS pumping through the real nginx and responder (a short run of bench/pumping.py): attacking
sends to premium-rate-like ranges from many client addresses get a bounded number of SMS out and
hold their prefixes and region; legitimate sends to other countries all go out; an operator lists
and releases the holds with `gatehouse sms holds`."""
import sys

from conftest import ROOT, binary

sys.path.insert(0, str(ROOT / "bench"))
import pumping  # noqa: E402


def test_pumping_attack_is_bounded_and_legitimate_traffic_is_not_held(tmp_path):
    # Smaller minimums than the defaults keep the run short; the budgets keep their defaults.
    phone = {"sms_hold_min_prefix_per_hour": 5, "sms_hold_min_region_per_hour": 25}
    run = pumping.simulate(binary(), attack=300, legit=24, addresses=120, threads=4, data=tmp_path / "gh", phone=phone,
                           keep=True, log=lambda _: None)
    try:
        s, rows = run.summary, run.summary["by_kind"]
        assert s["bad_signatures"] == 0
        for kind in ["fr", "de", "us", "gb-mobile"]:
            r = rows[kind]
            assert r["accepted"] == r["attempted"] == r["queued"] == r["delivered"], (kind, r)
        gb, lv = rows["gb-premium"], rows["lv-spread"]
        # Two premium blocks: 5 SMS each before the hold. Latvia: its region is held at 25.
        # (A number drawn twice while its code is pending is answered without a second SMS.)
        assert gb["queued"] == gb["delivered"] == 10 and gb["accepted"] + gb["refused"] == gb["attempted"], gb
        assert lv["queued"] == lv["delivered"] == 25 and lv["accepted"] + lv["refused"] == lv["attempted"], lv
        held = {" ".join(line.split()[1:3]) for line in s["holds"]}
        assert held == {"prefix +44909876", "prefix +44909877", "region LV"}, s["holds"]
        # The warning names the prefix, never a number.
        assert any("prefix +44909876 of project pump-sim held" in line for line in s["hold_log_lines"]), s["hold_log_lines"]
        assert not s["full_number_in_hold_lines"]

        # The operator releases one prefix; the next send to it goes out, the other stays held.
        out = run.stack.tool("sms", "holds", "release", "+44909876")
        assert out.returncode == 0 and "released +44909876 in project pump-sim" in out.stdout, out
        token = pumping.mint_tokens(run.folder / "gatehouse.db", 2)
        assert pumping.send(run.stack.port, "127.9.0.1", "+449098761234", token[0]) == "sent"
        assert pumping.send(run.stack.port, "127.9.0.2", "+449098771234", token[1]) == "TOO_MANY_ATTEMPTS_TRY_LATER"
        listed = run.stack.tool("sms", "holds", "list").stdout
        assert "+44909876" not in listed and "+44909877" in listed and "region  LV" in listed, listed
        again = run.stack.tool("sms", "holds", "release", "+44909876")
        assert again.returncode == 1 and "no hold of +44909876" in again.stdout, again
    finally:
        run.close()


def test_sms_holds_commands_on_an_empty_store(tmp_path):
    import subprocess
    data = ["--data", str(tmp_path)]
    listed = subprocess.run([str(binary()), "sms", "holds", "list", *data], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and "no SMS destination is held" in listed.stdout, listed
    missing = subprocess.run([str(binary()), "sms", "holds", "release", *data], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 64 and "Missing expected argument '<prefix>'" in missing.stderr, missing
