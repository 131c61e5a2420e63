"""The collector over TLS against in clear, in the same run (issue 20; part of
collector_bench.py): records/s vigild stores from subjects run by `vigil record --to`
(whose relay carries them over TLS 1.3, docs/security.md) and the subject-side cost per
event, each with a plain vigild and a TLS vigild side by side. Certificates are made with
the openssl command in the benchmark's folder."""
import json
import os
import statistics
import subprocess
import time


def _openssl(d, *args):
    subprocess.run(["openssl"] + list(args), cwd=d, check=True, capture_output=True, timeout=60)


def pki(work):
    d = os.path.join(work, "pki")
    os.makedirs(d, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    _openssl(d, "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
             "-subj", "/CN=bench-ca")
    _openssl(d, "req", *ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=vigild")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    _openssl(d, "x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "srv.pem", "-days", "2", "-extfile", "san.ext")
    return d


def _record(bindir, build, addr, env, events, cpus):
    bench = os.path.join(build, "bench", "vigil-bench")
    return subprocess.Popen([os.path.join(bindir, "vigil"), "record", "--quiet", "--to", addr,
                             "--", bench, "--events", str(events), "--warmup", "0", "--cpus",
                             cpus], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def ingest(ctx, n, total, tls):
    """n subjects under `vigil record --to` at once; wall time until all exited (each
    once the collector acknowledged everything)."""
    _, addr, env = ctx["tls" if tls else "plain"]
    per = total // n
    t0 = time.monotonic()
    procs = [_record(ctx["bindir"], ctx["build"], addr, env, per, "none") for _ in range(n)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        if p.returncode:
            ctx["die"]("vigil record (tls=%s): %s" % (tls, err))
    wall = time.monotonic() - t0
    return wall, per * n


def cost(ctx, events, tls):
    _, addr, env = ctx["tls" if tls else "plain"]
    p = _record(ctx["bindir"], ctx["build"], addr, env, events, "0")
    outp, err = p.communicate(timeout=600)
    if p.returncode:
        ctx["die"]("vigil record (tls=%s): %s" % (tls, err))
    return json.loads(outp.strip().splitlines()[-1])["ns_per_event"]


def run(ctx, total, reps, cost_events):
    """ctx: bindir, build, die, stats (path -> (events, discarded)), start (out, extra
    args -> (process, addr)), stop, work. Both collectors run at once; runs alternate."""
    d = pki(ctx["work"])
    base = dict(os.environ, VIGIL_TO_LINGER="60000", VIGIL_TO_BUFFER="512M")
    base.pop("VIGIL_OUT", None)
    base.pop("VIGIL_TO", None)
    base.pop("VIGIL_TO_CA", None)
    procs = []
    for name in ("plain", "tls"):
        out = os.path.join(ctx["work"], "tls-bench-" + name)
        extra = ["--tls-cert", os.path.join(d, "srv.pem"), "--tls-key",
                 os.path.join(d, "srv.key")] if name == "tls" else []
        vd, addr = ctx["start"](out, extra)
        procs.append(vd)
        env = dict(base, VIGIL_TO_CA=os.path.join(d, "ca.pem")) if name == "tls" else base
        ctx[name] = (out, addr, env)
    rows = []
    try:
        for n in (1, 8):
            walls = {False: [], True: []}
            for i in range(reps):
                for tls in ((False, True) if i % 2 == 0 else (True, False)):
                    wall, sent = ingest(ctx, n, total, tls)
                    walls[tls].append((wall, sent))
            row = {"subjects": n}
            for tls in (False, True):
                wall, sent = sorted(walls[tls])[len(walls[tls]) // 2]
                row["tls" if tls else "plain"] = {"wall_s": wall, "events": sent,
                                                  "records_per_s": sent / wall}
            rows.append(row)
        costs = {False: [], True: []}
        for i in range(reps):
            for tls in ((False, True) if i % 2 == 0 else (True, False)):
                costs[tls].append(cost(ctx, cost_events, tls))
    finally:
        for vd in procs:
            ctx["stop"](vd)
    # Everything sent over either path is stored, none discarded: a wrong answer otherwise.
    want = sum(r["plain"]["events"] for r in rows) * reps + cost_events * reps
    for name in ("plain", "tls"):
        events, lost = ctx["stats"](ctx[name][0])
        if lost or events < want:  # the subjects' vg.* events come on top
            ctx["die"]("WRONG ANSWER: %s collector stored %d events, %d discarded, %d sent"
                       % (name, events, lost, want))
    return {"rows": rows, "ns_per_event_plain": statistics.median(costs[False]),
            "ns_per_event_tls": statistics.median(costs[True]), "plain_runs": costs[False],
            "tls_runs": costs[True]}


def table(res, cost_events, reps):
    print("\nThrough `vigil record --to` (its relay), in clear and over TLS 1.3, the same run:\n")
    print("| subjects | records/s in clear | records/s over TLS | TLS / clear |")
    print("|---:|---:|---:|---:|")
    for r in res["rows"]:
        a, b = r["plain"]["records_per_s"], r["tls"]["records_per_s"]
        print("| %d | %.0f | %.0f | %.2f |" % (r["subjects"], a, b, b / a))
    print("\nsubject-side cost per event under `vigil record --to` (vigil-bench, 1 thread, "
          "%d events, median of %d): in clear %.1f ns, over TLS %.1f ns\n"
          % (cost_events, reps, res["ns_per_event_plain"], res["ns_per_event_tls"]))
