#!/usr/bin/env python3
"""Sensor descriptions travel with the binary (issue 28, item 5): `vigil gen --lang c`
embeds the .vgl files in the program (ELF notes), and without --sensors
  - `vigil relations PROGRAM` lists the relations it declares: those a recording of the
    mailbox example has, with the same kinds and attributes; imports come along
    (tests/lang/good/imports.vgl, nested and relative, compiled into a small program);
  - `vigil watch -f q.tq -- ./app` (a copy of mailbox under another name, and found in
    PATH by a bare name) answers the same tuples as with --sensors mailbox.vgl and as
    `vigil query` on a recording;
  - `vigil ui --watch -f q.tq -- ./app` shows those tuples (its /api/live);
while --sensors still wins (a missing file given is an error even though the program
carries a description), a program with none and a damaged note get one clear error."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = os.path.abspath(os.environ["VIGIL_BIN"])
SRC = os.path.abspath(os.environ["VIGIL_SRC"])
VIGIL = os.path.join(BIN, "vigil")
VGL = os.path.join(SRC, "examples/mailbox/mailbox.vgl")
Q = """range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W
"""


class Failure(Exception):
    pass


def run(argv, cwd, env=None, ok=True):
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=180, env=env)
    if ok and p.returncode:
        raise Failure(f"{' '.join(argv)} exited {p.returncode}: {p.stderr[-1200:]}")
    return p


def values(out):
    return sorted(json.dumps(json.loads(l)["values"], sort_keys=True)
                  for l in out.splitlines() if l.startswith("{"))


def declared(work, program):
    return {r["name"]: r for r in map(json.loads, run([VIGIL, "relations", "--json", program],
                                                      work).stdout.splitlines())}


def check_relations(work):
    decl = declared(work, os.path.join(BIN, "mailbox"))
    run([VIGIL, "record", "-q", "-o", "rec", "--", os.path.join(BIN, "mailbox"), "--seed", "2"],
        work)
    rec = {r["name"]: r for r in map(json.loads, run([VIGIL, "relations", "--json", "rec"],
                                                     work).stdout.splitlines())}
    for want in ("SendMessage", "Waiting", "RunningOn", "ProcessState", "Process", "Mailbox"):
        if want not in decl:
            raise Failure(f"vigil relations mailbox lists no {want}: {sorted(decl)}")
    for name, r in decl.items():
        got = rec.get(name)
        if not got or (got["kind"], got["attributes"]) != (r["kind"], r["attributes"]):
            raise Failure(f"{name}: declared {r['kind']} {r['attributes']}, recorded "
                          f"{got and (got['kind'], got['attributes'])}")
        if r["tuples"] != 0:
            raise Failure(f"a program's relation {name} has {r['tuples']} tuples")
    return len(decl)


def check_imports(work):
    gen = os.path.join(work, "gen")
    run([VIGIL, "gen", os.path.join(SRC, "tests/lang/good/imports.vgl"), "--lang", "c",
         "-o", gen], work)
    with open(os.path.join(work, "prog.c"), "w") as f:
        f.write('#include "server_net_sensors.h"\n'
                "int main(void) { server_net_sensors_register(); return 0; }\n")
    run(["cc", "-o", "prog", "prog.c", os.path.join(gen, "server_net_sensors.c"), "-I", gen,
         "-I", os.path.join(SRC, "include"), "-L", BIN, "-lvigil", "-Wl,-rpath," + BIN], work)
    decl = declared(work, "./prog")
    accept = decl.get("Accept")
    if not accept or "Heartbeat" not in decl:  # Heartbeat is declared in inc/common.vgl
        raise Failure(f"the program with imports declares {sorted(decl)}")
    attrs = [a["name"] for a in accept["attributes"]]
    for a in ("thread", "port", "user", "conn", "tls", "took"):  # from Base, Login, Accepted
        if a not in attrs:
            raise Failure(f"Accept lacks {a} (imported record fields): {attrs}")


def check_watch(work):
    app = os.path.join(work, "app")
    shutil.copy(os.path.join(BIN, "mailbox"), app)
    with open(os.path.join(work, "q.tq"), "w") as f:
        f.write(Q)
    want = values(run([VIGIL, "query", "rec", "-f", "q.tq", "--format", "json"], work).stdout)
    if len(want) < 3:
        raise Failure(f"the recording answers {len(want)} tuples: the example changed?")
    given = values(run([VIGIL, "watch", "--sensors", VGL, "-f", "q.tq", "--format", "json",
                        "--", "./app", "--seed", "2"], work).stdout)
    own = values(run([VIGIL, "watch", "-f", "q.tq", "--format", "json", "--", "./app",
                      "--seed", "2"], work).stdout)
    env = dict(os.environ, PATH=work + ":" + os.environ.get("PATH", ""))
    by_name = values(run([VIGIL, "watch", "-f", "q.tq", "--format", "json", "--", "app",
                          "--seed", "2"], work, env).stdout)
    if not (own == given == want == by_name):
        raise Failure(f"watch without --sensors: {own}; with: {given}; by name in PATH: "
                      f"{by_name}; recorded: {want}")
    # --sensors wins: the file given is read, even though ./app carries a description.
    p = run([VIGIL, "watch", "--sensors", "missing.vgl", "-f", "q.tq", "--", "./app"], work,
            ok=False)
    if p.returncode != 2 or "missing.vgl" not in p.stderr:
        raise Failure(f"--sensors missing.vgl: exit {p.returncode}, {p.stderr!r}")
    return want


def check_errors(work):
    p = run([VIGIL, "relations", "/bin/true"], work, ok=False)
    if p.returncode != 2 or len(p.stderr.splitlines()) != 1 or "no embedded" not in p.stderr:
        raise Failure(f"vigil relations /bin/true: exit {p.returncode}, {p.stderr!r}")
    p = run([VIGIL, "watch", "-f", "q.tq", "--", "/bin/true"], work, ok=False)
    if p.returncode != 2 or "--sensors" not in p.stderr:
        raise Failure(f"vigil watch -- /bin/true: exit {p.returncode}, {p.stderr!r}")
    # A damaged description: the package line of the note's text made invalid.
    data = open(os.path.join(BIN, "mailbox"), "rb").read()
    if data.count(b"package mailbox;") != 1:
        raise Failure("the mailbox binary does not carry its .vgl text once")
    with open(os.path.join(work, "damaged"), "wb") as f:
        f.write(data.replace(b"package mailbox;", b"package 9ailbox;"))
    os.chmod(os.path.join(work, "damaged"), 0o755)
    p = run([VIGIL, "relations", "./damaged"], work, ok=False)
    if p.returncode != 2 or not re.search(r"^vigil relations: \./damaged: mailbox\.vgl:\d+:\d+: "
                                          r"error", p.stderr, re.M):
        raise Failure(f"a damaged description: exit {p.returncode}, {p.stderr!r}")


def check_ui(work, want):
    ui = subprocess.Popen([VIGIL, "ui", "--watch", "-f", "q.tq", "--port", "0", "--",
                           "./app", "--seed", "2"], cwd=work, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    try:
        url, err = None, ""
        deadline = time.monotonic() + 120
        while url is None and time.monotonic() < deadline:
            line = ui.stderr.readline()
            if not line:
                break
            err += line
            m = re.search(r"serving (http://\S+/)", line)
            url = m and m.group(1)
        if not url:
            raise Failure(f"vigil ui --watch printed no URL: {err}")
        while time.monotonic() < deadline:
            live = json.load(urllib.request.urlopen(url + "api/live?from=0", timeout=30))
            if not live["running"]:
                break
            time.sleep(0.2)  # polling the page's own endpoint, bounded by the deadline
        else:
            raise Failure("vigil ui --watch: the subject did not end in 120 s")
        got = sorted(json.dumps(t["values"], sort_keys=True) for t in live["tuples"])
        if got != want or live.get("exit") != 0:
            raise Failure(f"vigil ui --watch without --sensors: {got} (exit "
                          f"{live.get('exit')}), recorded {want}")
    finally:
        ui.send_signal(signal.SIGINT)
        try:
            ui.wait(timeout=60)
        except subprocess.TimeoutExpired:
            ui.kill()
            ui.wait()


def main():
    work = tempfile.mkdtemp(prefix="vigil-embedded-")
    ok = False
    try:
        n = check_relations(work)
        check_imports(work)
        want = check_watch(work)
        check_errors(work)
        check_ui(work, want)
        print(f"ok: mailbox carries its {n} relations; watch, ui --watch and relations use "
              f"them without --sensors ({len(want)} tuples as recorded); imports embedded")
        ok = True
    except Failure as e:
        print(f"FAIL: {e}")
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")
    sys.exit(0 if ok else 1)


main()
