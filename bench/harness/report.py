"""Markdown for BENCHMARKS.md: run facts, the targets (met / missed / not available), then
the tables. Only the part between the results markers is ever replaced."""
import os
import re

import scenarios

BEGIN = "<!-- bench:results:begin -->"
END = "<!-- bench:results:end -->"
MODE_TITLES = {"plain": "Plain FastCGI (one upstream connection per request)",
               "keepalive": "Kept FastCGI connections (`fastcgi_keep_conn on`, upstream `keepalive`)"}



# What a CGI request may cost against the C CGI program (a new process each).
CGI_LIMIT = 1.3

def n(x, digits=0):
    return "—" if x is None else f"{x:,.{digits}f}"


def ms(us):
    return "—" if us is None else f"{us / 1000:.2f}"


def mib(kb):
    return "—" if kb is None else f"{kb / 1024:.1f}"


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def paired(res, metric, num, den):
    """The median of per-round ratios num/den for metric when measured, else the ratio of medians."""
    r = (res or {}).get("ratios", {})
    if metric in r:
        return r[metric] if r.get("of") == num else 1 / r[metric]
    return ratio(res.get(num, {}).get(metric), res.get(den, {}).get(metric))


def check(value, op, limit):
    if value is None:
        return "not available"
    ok = value >= limit if op == ">=" else value <= limit
    return "met" if ok else "missed"


def side(res, key, name):
    return (res or {}).get(key, {}).get(name, {})


def cell(d, metric, fmt=n):
    if not d:
        return "—"
    if "unavailable" in d:
        return "n/a"
    return fmt(d.get(metric))


def flow_vs_sign(res, start_sign):
    """The phone flow's target figure: the median over rounds of flows/s over the RS256 sign/s
    measured in the same round (`SignRate`), and its text; the start-of-run rate if no rounds
    measured it. The text also gives the ratio to the start-of-run rate, for comparison."""
    g, b = res.get("gatehouse", {}), res.get("baseline", {})
    paired_v = res.get("ratios", {}).get("flows_vs_sign")
    start_v = ratio(g.get("flows_per_s"), start_sign)
    if paired_v is None:
        return start_v, "—" if start_v is None else f"{start_v:.2f} ({n(g.get('flows_per_s'))} flows/s vs {n(start_sign)} sign/s)"
    extra = "" if start_v is None else f"; {start_v:.2f} against the {n(start_sign)} sign/s measured at the start"
    return paired_v, (f"{paired_v:.2f} ({n(g.get('flows_per_s'))} flows/s vs {n(b.get('sign_per_s'))} sign/s, "
                      f"medians; the ratio is the median of the rounds' ratios{extra})")


def target_rows(r):
    rows = []
    sign = r.get("signing", {}).get("sign_per_s")
    by_key = {s.key: s for s in scenarios.ALL}

    def add(label, value_text, status, note=""):
        rows.append(f"| {label} | {value_text} | {status}{note} |")

    for mode, m in r.get("modes", {}).items():
        for key, res in m["scenarios"].items():
            sc = by_key[key]
            g, b = res.get("gatehouse", {}), res.get("baseline", {})
            for t in sc.targets:
                label = f"{t.label} ({mode})" + (" — indicative, stand-in baseline" if t.indicative else "")
                if "unavailable" in g:
                    add(label, f"Gatehouse: {g['unavailable']}", "not available")
                    continue
                if t.metric == "flows_vs_sign":
                    v, text = flow_vs_sign(res, sign)
                elif t.metric in ("rps_ratio", "p99_ratio"):
                    if "unavailable" in b or not b:
                        add(label, f"baseline: {b.get('unavailable', 'not measured')}", "not available")
                        continue
                    metric = "rps" if t.metric == "rps_ratio" else "p99_us"
                    v = paired(res, metric, "gatehouse", "baseline")
                    fmt = (lambda x: n(x) + " req/s") if metric == "rps" else (lambda x: ms(x) + " ms")
                    text = "—" if v is None else f"{v:.2f} ({fmt(g.get(metric))} vs {fmt(b.get(metric))})"
                else:
                    continue
                status = check(v, t.op, t.limit)
                if g.get("bad") or b.get("bad"):
                    status = "not valid (errors in the run)"
                add(label, text, status)

    # Memory, over every mode and scenario.
    peaks = [(mode, k, res["gatehouse"].get("peak_rss_kb")) for mode, m in r.get("modes", {}).items()
             for k, res in m["scenarios"].items() if "gatehouse" in res and res["gatehouse"].get("peak_rss_kb")]
    if peaks:
        mode, k, kb = max(peaks, key=lambda p: p[2])
        add("Gatehouse peak RSS under load ≤ 64 MiB", f"{mib(kb)} MiB (highest: {k}, {mode})", check(kb / 1024, "<=", 64))
    else:
        add("Gatehouse peak RSS under load ≤ 64 MiB", "—", "not available")
    idles = [(mode, m["idle_rss_kb"]["gatehouse"]) for mode, m in r.get("modes", {}).items() if m["idle_rss_kb"].get("gatehouse")]
    if idles:
        mode, kb = max(idles, key=lambda p: p[1])
        add("Gatehouse idle RSS ≤ 24 MiB", f"{mib(kb)} MiB (highest: {mode}, after start-up)", check(kb / 1024, "<=", 24))

    # CGI.
    for key, e in r.get("cgi", {}).items():
        sc = by_key[key]
        label = f"CGI {sc.title}: time per request ≤ {CGI_LIMIT} × baseline CGI" + (" — indicative, stand-in baseline" if sc.stand_in else "")
        g, b = e.get("gatehouse", {}), e.get("baseline", {})
        if "mean_ms" not in g or "mean_ms" not in b:
            add(label, "Gatehouse: " + g.get("unavailable", "not measured"), "not available")
            continue
        v = e.get("ratio") or g["mean_ms"] / b["mean_ms"]
        add(label, f"{v:.2f} ({g['mean_ms']:.2f} ms vs {b['mean_ms']:.2f} ms)", check(v, "<=", CGI_LIMIT))

    # Growth.
    gr = r.get("growth")
    if gr and r["meta"].get("store") == "compare":
        # Store A/B (bench/run --store compare): PostgreSQL against SQLite, same run, same accounts.
        for key, res in gr["scenarios"].items():
            metric = "flows_per_s" if key == "phone_flow" else "rps"
            limit = 0.7 if key == "phone_flow" else 0.9
            v = paired(res, metric, "big", "small")
            add(f"{by_key[key].title} on PostgreSQL ≥ {limit} × SQLite", "—" if v is None else
                f"{v:.2f} ({n(res.get('big', {}).get(metric))} vs {n(res.get('small', {}).get(metric))})", check(v, ">=", limit))
        return rows
    if gr:
        big = gr["accounts"]["big"]
        for key, res in gr["scenarios"].items():
            s, bg = res.get("small", {}), res.get("big", {})
            metric = "flows_per_s" if key == "phone_flow" else "rps"
            for what, m, op, lim in ((f"{by_key[key].title}: {metric.replace('_', ' ')} with {big:,} accounts ≥ 1k figure / 1.2", metric, ">=", 1 / 1.2),
                                     (f"{by_key[key].title}: p99 with {big:,} accounts ≤ 1.2 × 1k figure", "p99_us", "<=", 1.2)):
                if "unavailable" in s or "unavailable" in bg:
                    add(what, s.get("unavailable") or bg.get("unavailable"), "not available")
                    continue
                v = paired(res, m, "big", "small")
                fmt = ms if m == "p99_us" else n
                add(what, "—" if v is None else f"{v:.2f} ({fmt(bg.get(m))} vs {fmt(s.get(m))})", check(v, op, lim))
    return rows


def meta_cores():
    return os.cpu_count() or 1


def against_sign(sc):
    """A flow measured against the RS256 sign rate (phone flow, MFA flow, token refresh): its row
    gives flows/s and the ratio to the sign rate of the same rounds."""
    return any(t.metric == "flows_vs_sign" for t in sc.targets)


def mode_table(r, mode, m):
    sign = r.get("signing", {}).get("sign_per_s")
    by_key = {s.key: s for s in scenarios.ALL}
    lines = [f"#### {MODE_TITLES[mode]} — {m['workers']} responder threads each"
             + (f", keepalive {r['settings']['keepalive_pool']}" if mode == "keepalive" else ""), "",
             "| Scenario | Gatehouse req/s | p50 ms | p99 ms | Compared with | its req/s | p50 ms | p99 ms | req/s ratio | p99 ratio "
             "| Gatehouse peak RSS MiB | its peak RSS MiB | Gatehouse CPU µs/req | its CPU µs/req |",
             "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    notes = []
    for key, res in m["scenarios"].items():
        sc = by_key[key]
        g, b = res.get("gatehouse", {}), res.get("baseline", {})
        if against_sign(sc):
            g_rps = "n/a" if "unavailable" in g else f"{n(g.get('flows_per_s'))} {sc.unit} ({n(g.get('rps'))} req/s)"
            rr, _ = flow_vs_sign(res, sign)
            its = b.get("sign_per_s") or sign
            lines.append(f"| {sc.title} | {g_rps} | {cell(g, 'p50_us', ms)} | {cell(g, 'p99_us', ms)} | RS256 sign/s (openssl, same rounds) | {n(its)} | | "
                         f"| {'—' if rr is None else f'{rr:.2f}'} | | {cell(g, 'peak_rss_kb', mib)} | | {cell(g, 'cpu_us_per_req', n)} /flow | |")
        elif sc.gatehouse is None:
            lines.append(f"| {sc.title} | | | | {sc.baseline_label} | {cell(b, 'rps')} | {cell(b, 'p50_us', ms)} | {cell(b, 'p99_us', ms)} | | | | | | |")
        else:
            rr = paired(res, "rps", "gatehouse", "baseline")
            pr = paired(res, "p99_us", "gatehouse", "baseline")
            lines.append(f"| {sc.title} | {cell(g, 'rps')} | {cell(g, 'p50_us', ms)} | {cell(g, 'p99_us', ms)} | {sc.baseline_label} "
                         f"| {cell(b, 'rps')} | {cell(b, 'p50_us', ms)} | {cell(b, 'p99_us', ms)} "
                         f"| {'—' if rr is None else f'{rr:.2f}'} | {'—' if pr is None else f'{pr:.2f}'} "
                         f"| {cell(g, 'peak_rss_kb', mib)} | {cell(b, 'peak_rss_kb', mib)} | {cell(g, 'cpu_us_per_req', n)} | {cell(b, 'cpu_us_per_req', n)} |")
        split = g.get("cpu_split") or {}
        if against_sign(sc) and len(split) == 3:
            total = sum(split.values())
            notes.append(f"- {sc.title}, CPU of the machine per flow (median round): Gatehouse {split['responder']:,.0f} µs, "
                         f"wrk {split['loadgen']:,.0f} µs, the rest (nginx, kernel, other tenants) {split['rest']:,.0f} µs; "
                         f"{total:,.0f} µs in all, so {meta_cores()} cores allow ~{meta_cores() * 1e6 / total:,.0f} flows/s "
                         f"and Gatehouse alone ~{meta_cores() * 1e6 / split['responder']:,.0f}.")
        for name, d in (("Gatehouse", g), ("baseline", b)):
            if "unavailable" in d:
                notes.append(f"- {sc.title}: {name} not available — {d['unavailable']}.")
            elif d.get("bad"):
                notes.append(f"- {sc.title}: {name} had {d['errors']:,} errors/non-2xx of {d['requests']:,} requests"
                             + (f", {d.get('flow_failures', 0):,} failed flows" if "flows" in d else "") + "; not a valid figure.")
    idle = m["idle_rss_kb"]
    after = m.get("after_rss_kb", {})
    lines += ["", f"Idle RSS after start-up: Gatehouse {mib(idle.get('gatehouse'))} MiB, baseline {mib(idle.get('baseline'))} MiB; "
                  f"after the load: Gatehouse {mib(after.get('gatehouse'))} MiB, baseline {mib(after.get('baseline'))} MiB."]
    if notes:
        lines += [""] + notes
    return lines


def render(r):
    meta, st = r["meta"], r["settings"]
    cfg = r.get("config", {})
    out = [f"_Last run: {meta['date']}, commit {meta['commit']}{' — QUICK smoke run, 1 round' if st['quick'] else ''}._", "",
           *([f"**Gatehouse binary: `{meta['binary']}`**, not this checkout's release build"
              + (f": {meta['binary_note']}" if meta.get("binary_note") else "") + ".", ""] if meta.get("binary") else []),
           f"Machine: {meta['cpu']} ({meta['cores']} cores), Linux {meta['kernel']}; {meta['nginx']}; {meta['wrk']}; {meta['openssl']}; {meta['hyperfine']}.",
           f"Each figure is the median of {st['rounds']} round(s) of {st['duration_s']:g} s per side (sides alternating round by round; "
           f"a ratio is the median of the per-round ratios), "
           f"{st['connections']} connections (the flows and token refresh: 8 connections, one per wrk thread), after a warm-up. "
           f"Whole run: {r.get('elapsed_s', 0):.0f} s. Load average (1/5/15 min) before: {' '.join(r.get('loadavg', {}).get('before', []))}, "
           f"after: {' '.join(r.get('loadavg', {}).get('after', []))} (the machine is shared; ratios from alternating rounds are the figures to read).",
           f"Gatehouse ran in **{cfg.get('kind', '?')} mode**" + (
               f" (this build refuses a production configuration: {'; '.join(cfg['production_problems'])})." if cfg.get("production_problems") else "."),
           f"RS256 with RSA-2048 on one core (`openssl speed -seconds 3 rsa2048`): **{n(r['signing']['sign_per_s'])} sign/s**, "
           f"{n(r['signing']['verify_per_s'])} verify/s.", "",
           "#### Targets", "", "| Target | Measured (ratio, then the figures) | Status |", "|---|---|---|"]
    out += target_rows(r)
    for mode, m in r.get("modes", {}).items():
        out += [""] + mode_table(r, mode, m)
    gr = r.get("growth")
    if gr:
        big = gr["accounts"]["big"]
        title = (f"#### Store: SQLite (left) vs PostgreSQL (right), {big:,} accounts each (plain FastCGI, alternating rounds)"
                 if r["meta"].get("store") == "compare" else f"#### Growth: {gr['accounts']['small']:,} vs {big:,} accounts (plain FastCGI)")
        out += ["", title, "",
                f"| Scenario | 1k: req/s | p50 ms | p99 ms | {big:,}: req/s | p50 ms | p99 ms | throughput ratio | p99 ratio | peak RSS MiB (1k / {big:,}) |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        by_key = {s.key: s for s in scenarios.ALL}
        for key, res in gr["scenarios"].items():
            s, b = res.get("small", {}), res.get("big", {})
            metric = "flows_per_s" if key == "phone_flow" else "rps"
            unit = " flows/s" if key == "phone_flow" else ""
            rr, pr = paired(res, metric, "big", "small"), paired(res, "p99_us", "big", "small")
            out.append(f"| {by_key[key].title} | {cell(s, metric)}{unit if 'unavailable' not in s else ''} | {cell(s, 'p50_us', ms)} | {cell(s, 'p99_us', ms)} "
                       f"| {cell(b, metric)}{unit if 'unavailable' not in b else ''} | {cell(b, 'p50_us', ms)} | {cell(b, 'p99_us', ms)} "
                       f"| {'—' if rr is None else f'{rr:.2f}'} | {'—' if pr is None else f'{pr:.2f}'} "
                       f"| {cell(s, 'peak_rss_kb', mib)} / {cell(b, 'peak_rss_kb', mib)} |")
            for name, d in (("1k", s), (f"{big:,}", b)):
                if "unavailable" in d:
                    out.append(f"<!-- {key} {name}: {d['unavailable']} -->")
        seed = r.get("seed", {})
        if seed.get("big_seconds"):
            out += ["", f"Seeding {big:,} accounts with `gatehouse seed`: {seed['big_seconds']:.1f} s."]
    if r.get("cgi"):
        by_key = {s.key: s for s in scenarios.ALL}
        out += ["", "#### CGI mode (a new process per request; hyperfine; sides alternating in rounds of 15 processes, mean of all runs; the ratio is the median of the per-round ratios)", "",
                "| Scenario | Gatehouse ms/request | Baseline | its ms/request | ratio |", "|---|---:|---|---:|---:|"]
        for key, e in r["cgi"].items():
            g, b = e.get("gatehouse", {}), e.get("baseline", {})
            gv = f"{g['mean_ms']:.2f} ± {g['stddev_ms']:.2f}" if "mean_ms" in g else "n/a"
            bv = f"{b['mean_ms']:.2f} ± {b['stddev_ms']:.2f}" if "mean_ms" in b else "n/a"
            rv = f"{e.get('ratio') or g['mean_ms'] / b['mean_ms']:.2f}" if "mean_ms" in g and "mean_ms" in b else "—"
            out.append(f"| {by_key[key].title} | {gv} | {by_key[key].baseline_label} | {bv} | {rv} |")
        out.append("")
        for key, e in r["cgi"].items():
            for name in ("gatehouse", "baseline"):
                if "unavailable" in e.get(name, {}):
                    out.append(f"- CGI {by_key[key].title}: {name} not available — {e[name]['unavailable']}.")
    return "\n".join(out) + "\n"


def update_doc(path, md):
    text = path.read_text() if path.exists() else ""
    block = f"{BEGIN}\n{md}{END}"
    if BEGIN in text and END in text:
        text = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n## Results\n\n" + block + "\n"
    path.write_text(text)
