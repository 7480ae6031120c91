"""`bench/profile wal` and `bench/profile syscalls`: what the phone flow writes and which system
calls it makes.

wal: runs a few flows one after another through nginx while the responder serves, copies the
database and its WAL, and reads the WAL's frames: one frame per page a write transaction dirtied
(SQLite writes each frame with two `pwrite`s, header and page, and a checkpoint later copies the
page into the database file). Each page is attributed to the table or index that owns it
(SQLite's `dbstat`), so the report lists, per kind of transaction, the pages it wrote.

syscalls: `strace -f -c` of the responder under a short wrk run of the scenario; counts per
request.
"""
import json
import shutil
import sqlite3
import struct
import time
from collections import Counter, defaultdict
from pathlib import Path

from harness import procs, stack, wrk

WAL_HEADER = 32
FRAME_HEADER = 24


def wal_frames(path):
    """The valid frames of a WAL file: (page number, db size after commit or 0)."""
    data = Path(path).read_bytes()
    if len(data) < WAL_HEADER:
        return [], 0
    magic, _, page_size, _, salt1, salt2, _, _ = struct.unpack(">IIIIIIII", data[:WAL_HEADER])
    if magic not in (0x377F0682, 0x377F0683):
        return [], 0
    frames = []
    off = WAL_HEADER
    while off + FRAME_HEADER + page_size <= len(data):
        pgno, commit, s1, s2 = struct.unpack(">IIII", data[off:off + 16])
        if (s1, s2) != (salt1, salt2):
            break
        frames.append((pgno, commit))
        off += FRAME_HEADER + page_size
    return frames, page_size


def transactions(frames):
    """Frames grouped by commit: [(pages, db size after)]."""
    out, cur = [], []
    for pgno, commit in frames:
        cur.append(pgno)
        if commit:
            out.append((cur, commit))
            cur = []
    return out


def page_owners(db, wal, tmp):
    """Page number → the name of the b-tree that owns it, from a copy of the database and WAL."""
    copy = Path(tmp) / "walcopy"
    copy.mkdir(exist_ok=True)
    shutil.copy(db, copy / "db")
    shutil.copy(wal, copy / "db-wal")
    con = sqlite3.connect(str(copy / "db"))
    owners = {pgno: name for name, pgno in con.execute("SELECT name, pageno FROM dbstat")}
    con.close()
    return owners


def flow(base, key, number, code, seq):
    itk = base + "/identitytoolkit.googleapis.com/v1/accounts:"
    hdr = {"X-Bench-Client": f"10.9.{seq // 256 % 256}.{seq % 256}"}
    status, _, body = stack.http("POST", itk + f"sendVerificationCode?key={key}", hdr, {"phoneNumber": number})
    assert status == 200, body
    session = json.loads(body)["sessionInfo"]
    status, _, body = stack.http("POST", itk + f"signInWithPhoneNumber?key={key}", hdr, {"sessionInfo": session, "code": code})
    assert status == 200 and b'"idToken"' in body, body


def wal_report(gh, call, base, tmp, flows):
    db = next(p for p in Path(gh.data).rglob("*.db") if Path(str(p) + "-wal").exists())
    wal = Path(str(db) + "-wal")
    key = call.lua_env["BENCH_API_KEY"]
    numbers = [n.split(":") for n in call.lua_env["BENCH_NUMBERS"].split(",")]
    for i in range(1):  # warm-up: the first sign-in of each number creates its account
        for number, code in numbers:
            flow(base, key, number, code, 1000 + i)
    time.sleep(0.2)
    before, _ = wal_frames(wal)
    for i in range(flows):
        number, code = numbers[i % len(numbers)]
        flow(base, key, number, code, i)
    time.sleep(0.2)
    after, page_size = wal_frames(wal)
    if len(after) < len(before) or after[:len(before)] != before:
        raise SystemExit("the WAL was restarted during the flows (a checkpoint ran); use fewer --flows")
    owners = page_owners(db, wal, tmp)
    txs = transactions(after[len(before):])
    kinds = defaultdict(list)
    prev_size = transactions(before)[-1][1] if before else 0
    for pages, size in txs:
        names = [owners.get(p, "(free)") if p != 1 else "page 1 (header)" for p in pages]
        trees = frozenset(n for n in names if n != "page 1 (header)")
        kind = "sign-in" if any(n.startswith("refresh_tokens") for n in trees) else "send" if any(
            n.startswith("phone_verifications") for n in trees) else "other"
        kinds[kind].append((names, size > prev_size))
        prev_size = size
    total = sum(len(p) for p, _ in txs)
    print(f"# WAL frames of {flows} flows ({len(txs)} write transactions, {total} frames of {page_size} bytes: "
          f"{total / flows:.2f} per flow; each frame is two pwrite calls)\n")
    for kind, rows in sorted(kinds.items()):
        n = len(rows)
        per = Counter()
        for names, _ in rows:
            per.update(names)
        frames = sum(len(names) for names, _ in rows)
        grew = sum(1 for _, g in rows if g)
        print(f"## {kind}: {n} transactions, {frames / n:.2f} frames each (the file grew in {grew})")
        for name, c in per.most_common():
            print(f"  {c / n:6.2f}  {name}")
        print()


def syscalls(gh, call, base, seconds, tmp):
    out = Path(tmp) / "strace.txt"
    env = call.run_env(base, call.threads or 1)  # before tracing: a flow's set-up requests are not counted
    tracer = procs.start("strace", ["strace", "-f", "-c", "-o", str(out), "-p", str(gh.pid)], log_path=Path(tmp) / "strace.log")
    time.sleep(0.5)
    res = wrk.run(base + ("/" if call.flow else call.path), seconds, call.connections or 8, threads=call.threads or 1,
                  script=call.script, headers=call.headers, env=env)
    procs.stop(tracer)
    n = res["requests"]
    flows = res.get("flows")
    print(f"# system calls of the responder: {n} requests" + (f", {flows} flows" if flows else "") + f" in {seconds} s\n")
    print(f"{'per request':>12} {'per flow':>9}  call")
    for line in out.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
            calls = int(parts[3])
            print(f"{calls / n:12.2f} {calls / flows if flows else 0:9.2f}  {parts[-1]}")
