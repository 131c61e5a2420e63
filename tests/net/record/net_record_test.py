"""The recording side of interaction networks (docs/net.md): exact vg.net.* event streams
of net_subject (unmodified, through `vigil record`'s preload) and api_subject (linked
with libvigil), the three-tier example in both forms. Run: net_record_test.py NAME."""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))
from vigil_testlib import (VIGIL, Failure, check, dump_json, main, redis_script,  # noqa: E402
                           run, tmpdir)

BIN = os.environ.get("VIGIL_BIN", "build/bin")
NET_SUBJECT = os.path.join(BIN, "net_subject")
API_SUBJECT = os.path.join(BIN, "net_api_subject")


def record(cmd, env=None, stdin=None):
    """Records cmd with vigil record; (stdout, net events, all events)."""
    trace = tmpdir("net")
    shutil.rmtree(trace)
    kw = {"stdin": stdin} if stdin is not None else {}
    p = run([VIGIL, "record", "-o", trace, "--", *cmd], env=env, check_rc=0, **kw)
    events, d = dump_json(trace)
    check(d.returncode == 0, f"vigil dump failed: {d.stderr}")
    shutil.rmtree(trace, ignore_errors=True)
    return p.stdout, [e for e in events if e["name"].startswith("vg.net.")], events


def token(e, names):
    """An event, shortly, with descriptors named by the subject's own names."""
    f = e["fields"]
    fd = names.get(f["fd"], f["fd"])
    short = e["name"][len("vg.net."):]
    if short == "conn":
        return f"conn {fd} c{f['conn']} {f['kind']} {f['role']}"
    if short in ("send", "recv"):
        return f"{short} {fd} c{f['conn']} [{f['off']},{f['off'] + f['len']})"
    if short == "close":
        return f"close {fd} c{f['conn']}"
    return short


def stream(scenario, extra=None, subject=None):
    """The subject's vg.net events, without those of its report on stdout (a pipe to
    the test: followed, since stdio is)."""
    out, net, _ = record(subject or [NET_SUBJECT, scenario])
    fds = json.loads(out.strip().splitlines()[-1])
    names = {v: k for k, v in fds.items() if isinstance(v, int)}
    names.update(extra or {})
    net = [e for e in net if e["fields"].get("fd") != 1]
    return fds, net, [token(e, names) for e in net]


def expect(got, want, what):
    check(got == want, f"{what}:\n  got  {got}\n  want {want}")


def test_pipe():
    fds, net, got = stream("pipe")
    expect(got, ["conn r c1 pipe pipe", "conn w c2 pipe pipe", "send w c2 [0,5)",
                 "recv r c1 [0,5)", "send w c2 [5,8)", "recv r c1 [5,8)", "close w c2",
                 "close r c1"], "pipe")
    ends = {(e["fields"]["local"], e["fields"]["remote"]) for e in net if e["name"] == "vg.net.conn"}
    check(len(ends) == 1 and next(iter(ends))[0].startswith("pipe:"), f"pipe names: {ends}")


def test_socketpair():
    fds, net, got = stream("socketpair")
    expect(got, ["conn a c1 unix pipe", "conn b c2 unix pipe", "send a c1 [0,4)",
                 "recv b c2 [0,4)", "send b c2 [0,2)", "recv a c1 [0,2)", "close a c1",
                 "close b c2"], "socketpair (the peeked bytes are received once)")
    conns = [e["fields"] for e in net if e["name"] == "vg.net.conn"]
    check(conns[0]["local"] == conns[1]["remote"] and conns[0]["remote"] == conns[1]["local"]
          and conns[0]["local"] != conns[0]["remote"], f"socketpair ends: {conns}")


def test_exit_race():
    """A send recorded after its call returns, by a thread preempted at that return while
    another thread ends the process (tests/net/record/exit_race_subject.c makes it
    certain): the process's end waits for it, so every byte received is covered by a send
    (docs/net.md "At the end of a process"). The flake of three_tier_instrumented: a
    server stopped once its client had its last reply lost that reply's send."""
    subject = os.path.join(BIN, "net_exit_race_subject")
    for i in range(10):
        out, net, _ = record([subject])
        r = json.loads(out.strip().splitlines()[-1])
        check(r == {"sent": 100, "received": 100}, f"run {i}: subject said {r}")
        net = [e for e in net if e["fields"].get("fd") != 1]  # its report on stdout
        got = sorted((e["name"][len("vg.net."):], e["fields"]["len"]) for e in net
                     if e["name"] in ("vg.net.send", "vg.net.recv"))
        check(sum(n for k, n in got if k == "send") == 100 and
              sum(n for k, n in got if k == "recv") == 100,
              f"run {i}: sends and receives of the socketpair: {got}")
        check_bytes_matched(net, kinds=("unix",))


def test_dup():
    fds, net, got = stream("dup", {40: "40"})
    # fd w was closed before dup() may reuse its number as d: one connection, shared offsets.
    w, d = ("d", "d") if fds["w"] == fds["d"] else ("w", "d")
    expect(got, ["conn r c1 pipe pipe", f"conn {w} c2 pipe pipe", "send 40 c2 [0,3)",
                 f"send {d} c2 [3,5)", "recv r c1 [0,5)", f"close {d} c2", "close r c1"],
           "dup2/dup share the connection; it closes with its last descriptor")


def test_file():
    _, net, got = stream("file")
    expect(got, [], "a regular file and /dev/null are not followed")


def test_tcp():
    fds, net, got = stream("tcp")
    expect(got, ["conn c c1 tcp connect", "conn s c2 tcp accept", "send c c1 [0,60)",
                 "send c c1 [60,100)", "recv s c2 [0,100)", "send s c2 [0,5)",
                 "recv c c1 [0,5)", "close c c1", "close s c2"], "tcp")
    conns = [e["fields"] for e in net if e["name"] == "vg.net.conn"]
    port = f"127.0.0.1:{fds['port']}"
    check(conns[0]["remote"] == port and conns[1]["local"] == port
          and conns[0]["local"] == conns[1]["remote"], f"tcp endpoints: {conns}")


def test_unix():
    fds, net, got = stream("unix")
    expect(got, ["conn c c1 unix connect", "conn s c2 unix accept", "send c c1 [0,4)",
                 "recv s c2 [0,4)", "close c c1", "close s c2"], "unix")
    c, s = [e["fields"] for e in net if e["name"] == "vg.net.conn"]
    # The accepting end names the connecting end's inode; the connecting end cannot know
    # the accepting end's (the kernel gives it one at accept) and names the path.
    check(c["local"].startswith("unix:") and c["local"][5:].isdigit(), f"client end: {c}")
    check(c["remote"].startswith("unix:@vg-net-test-"), f"client's peer: {c}")
    check(s["remote"] == c["local"] or s["remote"].startswith("unix:@"), f"server end: {s}")


def test_scm():
    """An accepted Unix connection passed over SCM_RIGHTS to a child forked before it
    existed, into an fd number whose pipe was closed behind the hooks' back: the child
    judges it afresh (inherited, named by the kernel: its own inode and its peer's), and
    `vigil net split` matches both directions with the parent's connecting end."""
    trace = tmpdir("scm")
    shutil.rmtree(trace)
    p = run([VIGIL, "record", "-o", trace, "--", NET_SUBJECT, "scm"], check_rc=0)
    fds = json.loads(p.stdout.strip().splitlines()[-1])
    events, _ = dump_json(trace)
    net = [e for e in events if e["name"].startswith("vg.net.") and e["fields"].get("fd") != 1]
    parent = min(e["pid"] for e in net)
    kid = [e for e in net if e["pid"] != parent]
    conns = [e["fields"] for e in kid if e["name"] == "vg.net.conn"]
    passed = [c for c in conns if c["kind"] == "unix" and c["role"] == "inherited"]
    check(len(passed) == 1, f"the child's connections: {conns}")
    c = next(e["fields"] for e in net if e["pid"] == parent and e["name"] == "vg.net.conn"
             and e["fields"]["fd"] == fds["c"])
    check(passed[0]["remote"] == c["local"], f"passed end {passed[0]}, connecting end {c}")
    got = [token(e, {passed[0]["fd"]: "s"}) for e in kid
           if e["fields"].get("conn") == passed[0]["conn"]]
    expect(got, [f"conn s c{passed[0]['conn']} unix inherited",
                 f"recv s c{passed[0]['conn']} [0,4)", f"send s c{passed[0]['conn']} [0,2)"],
           "the passed end, its offsets from 0")
    out = tmpdir("scm-nets")
    run([VIGIL, "net", "split", trace, "-o", out], check_rc=0)
    with open(os.path.join(out, "index.json")) as f:
        index = json.load(f)
    left = [(u["pid"], u["kind"], u["local"]) for u in index["unmatched"]
            if u.get("conn_kind") == "unix"]
    check(left == [], f"unix bytes unmatched: {left}")
    shutil.rmtree(trace)


def test_fork():
    fds, net, got = stream("fork")
    parent = net[0]["pid"]
    by = {}
    for e, t in zip(net, got):
        by.setdefault("parent" if e["pid"] == parent else "child", []).append(t)
    expect(by.get("parent"), ["conn r c1 pipe pipe", "conn w c2 pipe pipe", "send w c2 [0,3)",
                              "recv r c1 [0,6)"], "parent")
    expect(by.get("child"), ["conn w c2 pipe pipe", "send w c2 [3,6)"],
           "the child keeps the connection, its offset and its role, and introduces it")


def test_stdin():
    path = os.path.join(tmpdir("stdin"), "input")
    with open(path, "w") as f:
        f.write("typed\n")
    with open(path) as f:
        out, net, got = record([NET_SUBJECT, "stdin"], stdin=f)
    expect([token(e, {0: "in"}) for e in net if e["fields"]["fd"] != 1],
           ["conn in c1 stdin inherited", "recv in c1 [0,6)"], "stdin from a file")


def record_on_tty(name, command):
    """Records the shell command run by script(1) on a pty, "typed" and a newline on its
    stdin: the finished vigil record and every event."""
    script = shutil.which("script")
    check(script, "script (bsdutils) is not installed")
    trace = tmpdir(name)
    shutil.rmtree(trace)
    p = run([VIGIL, "record", "-o", trace, "--", script, "-qec", command, "/dev/null"],
            input="typed\n", timeout=60)
    events, _ = dump_json(trace)
    shutil.rmtree(trace, ignore_errors=True)
    return p, events


def test_tty():
    """stdin is a terminal (script(1) gives the subject a pty): kind tty."""
    p, events = record_on_tty("net-tty", f"{NET_SUBJECT} stdin")
    check(p.returncode == 0, f"script: {p.stderr}")
    net = [e for e in events if e["name"].startswith("vg.net.") and e["proc"] == "net_subject"]
    expect([token(e, {0: "in"}) for e in net if e["fields"]["fd"] != 1],
           ["conn in c1 tty inherited", "recv in c1 [0,6)"], "a terminal on stdin")
    check(net[0]["fields"]["local"].startswith("tty:/dev/pts/"), f"tty name: {net[0]}")


def test_errno():
    plain = run([NET_SUBJECT, "errno"], check_rc=0).stdout
    out, net, _ = record([NET_SUBJECT, "errno"])
    expect(json.loads(out), json.loads(plain), "return values and errno with the preload")
    got = [token(e, {}) for e in net if e["fields"]["fd"] != 1]  # not the report
    sends = [t for t in got if t.startswith(("send", "recv"))]
    check(len(sends) == 2, f"only the two successful calls move bytes: {got}")
    check(not any(" tcp " in t for t in got), f"failed and unconnected sockets: {got}")


def test_not_recording():
    """Preloaded but not recording (no VIGIL_OUT): everything passes straight through."""
    env = {"LD_PRELOAD": os.path.join(BIN, "libvigil.so"), "VIGIL_OUT": ""}
    for s in ("tcp", "dup", "socketpair"):
        with_preload = run([NET_SUBJECT, s], env=env, check_rc=0)
        check(with_preload.stdout.strip() != "" and with_preload.stderr == "",
              f"{s}: {with_preload.stdout!r} {with_preload.stderr!r}")
    plain = json.loads(run([NET_SUBJECT, "errno"], check_rc=0).stdout)
    preloaded = json.loads(run([NET_SUBJECT, "errno"], env=env, check_rc=0).stdout)
    expect(preloaded, plain, "return values and errno, preloaded without recording")


def test_api():
    out, net, events = record([API_SUBJECT])
    r = json.loads(out)
    check(r["roundtrip"] == 1 and r["malformed_rejected"] == 1 and r["future_version"] == 0,
          f"traceparent: {r}")
    expect(r["w3c"], [0, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"], "W3C example")
    check(r["format"] == "00-0123456789abcdeffedcba9876543210-1122334455667788-01",
          f"format: {r['format']}")
    check(r["malformed_counted"] == 3 and r["none_before"] == 1, f"malformed: {r}")
    check(r["send_without"] == "00-" + "0" * 32, f"no interaction: {r['send_without']}")
    iid = r["iid"]
    check(len(iid) == 32 and iid != "0" * 32, f"iid {iid}")
    expect([r["thread_iid"], r["fork_iid"], r["receiver_iid"]], [iid] * 3,
           "thread, forked child and message receiver carry the interaction")
    check(r["distinct"] == 1, "parent ids repeat")

    def ev_iid(e):
        return f"{int(e['fields']['iid_hi']):016x}{int(e['fields']['iid_lo']):016x}"

    inputs = [e for e in net if e["name"] == "vg.net.input"]
    check(len(inputs) == 1 and inputs[0]["fields"]["what"] == "request"
          and ev_iid(inputs[0]) == iid, f"input: {inputs}")
    msg = int(r["sent_parent"], 16)
    sends = [e for e in net if e["name"] == "vg.net.send" and int(e["fields"]["msg"]) == msg]
    recvs = [e for e in net if e["name"] == "vg.net.recv" and int(e["fields"]["msg"]) == msg]
    check(len(sends) == 1 and len(recvs) == 1, f"the message: {sends} {recvs}")
    s, v = sends[0], recvs[0]
    check(s["fields"]["fd"] == -1 and s["fields"]["conn"] == 0 and s["fields"]["len"] == 100
          and ev_iid(s) == iid, f"send: {s}")
    check(v["tid"] != s["tid"] and ev_iid(v) == iid and v["fields"]["len"] == 100
          and v["ts"] >= s["ts"], f"recv: {v}")
    # The pipe carrying it was followed too (the subject is preloaded as well as linked).
    check(any(e["name"] == "vg.net.send" and e["fields"]["fd"] >= 0 and ev_iid(e) == iid
              for e in net), "the pipe's bytes carry the interaction")
    no_iid = [e for e in net if e["name"] == "vg.net.send" and e["fields"]["msg"]
              and e["fields"]["len"] == 1]
    check(len(no_iid) == 1 and ev_iid(no_iid[0]) == "0" * 32, f"send without: {no_iid}")


def test_api_linked_only():
    """Linked with libvigil, recording without vigil record (VIGIL_OUT only)."""
    trace = tmpdir("net-api")
    shutil.rmtree(trace)
    p = run([API_SUBJECT], env={"VIGIL_OUT": trace}, check_rc=0)
    r = json.loads(p.stdout)
    events, d = dump_json(trace)
    shutil.rmtree(trace, ignore_errors=True)
    check(d.returncode == 0, d.stderr)
    expect([r["thread_iid"], r["fork_iid"], r["receiver_iid"]], [r["iid"]] * 3, "inheritance")
    check(sum(e["name"] == "vg.net.input" for e in events) == 1, "one input")


def test_api_not_recording():
    p = run([API_SUBJECT], env={"VIGIL_OUT": ""}, check_rc=0)
    r = json.loads(p.stdout)
    expect([r["thread_iid"], r["fork_iid"], r["receiver_iid"]], [r["iid"]] * 3,
           "the identity is carried without recording")


def test_host_and_skew():
    trace = tmpdir("net-host")
    shutil.rmtree(trace)
    env = {"VIGIL_HOST": "hostA", "VIGIL_CLOCK_SKEW_NS": "5000000000"}
    run([VIGIL, "record", "-o", trace, "--", "sh", "-c", "true | cat"], env=env, check_rc=0)
    base = tmpdir("net-host-base")
    shutil.rmtree(base)
    run([VIGIL, "record", "-o", base, "--", "true"], check_rc=0)
    metas = []
    for root in (trace, base):
        for d in sorted(os.listdir(root)):
            if os.path.isfile(os.path.join(root, d, "metadata")):
                with open(os.path.join(root, d, "metadata")) as f:
                    metas.append((root, f.read()))
    skewed = [m for r, m in metas if r == trace]
    plain = [m for r, m in metas if r == base]
    # one metadata per image, or one for all (the shared layout)
    check(skewed and all('host = "hostA";' in m for m in skewed), "host in env")

    def clock(m):
        import re
        uuid = re.search(r'clock \{[^}]*uuid = "([0-9a-f-]+)"', m).group(1)
        off = re.search(r"offset_s = (-?\d+);", m).group(1)
        return uuid, int(off)

    uuids = {clock(m)[0] for m in skewed}
    check(len(uuids) == 1, f"all images of the skewed tree share one clock: {uuids}")
    check(uuids != {clock(plain[0])[0]}, "a skewed clock has a uuid of its own")
    diff = clock(skewed[0])[1] - clock(plain[0])[1]
    check(4 <= diff <= 6, f"offset shifted by the skew: {diff} s")
    # Read together, the skewed trace still reads skewed.
    events, _ = dump_json(trace)
    ref, _ = dump_json(base)
    both, _ = dump_json(trace, base)
    check(both and min(e["ts"] for e in both if e["host"] == "hostA") - min(
        e["ts"] for e in events) == 0, "skewed times kept when read with another trace")
    check(min(e["ts"] for e in events) - max(e["ts"] for e in ref) > 4_000_000_000,
          "the skewed recording, made first, reads 5 s ahead")
    bad = run([VIGIL, "record", "-o", trace + "-bad", "--", "true"],
              env={"VIGIL_CLOCK_SKEW_NS": "soon"}, check_rc=0)
    check("VIGIL_CLOCK_SKEW_NS" in bad.stderr, f"bad skew is reported: {bad.stderr}")
    for t in (trace, base, trace + "-bad"):
        shutil.rmtree(t, ignore_errors=True)


def check_bytes_matched(net, kinds=("tcp",), exact=lambda d: True):
    """Every byte sent on a connection of `kinds` is received at the peer endpoint and
    every byte received was sent: send ranges on (L, R) and receive ranges on (R, L)
    cover each other exactly (where exact((L, R)) is false: every byte received was
    sent, a client that stopped reading). Returns the matched (send, recv) pairs of
    overlapping ranges."""
    conns = {}
    for e in net:
        if e["name"] == "vg.net.conn":
            f = e["fields"]
            conns[(e["pid"], f["conn"])] = (f["kind"], f["local"], f["remote"])
    out, inn = {}, {}
    for e in net:
        if e["name"] not in ("vg.net.send", "vg.net.recv") or e["fields"]["fd"] < 0:
            continue
        f = e["fields"]
        key = conns.get((e["pid"], f["conn"]))
        check(key is not None, f"an event on a connection never introduced: {e}")
        if key[0] not in kinds:
            continue
        if e["name"] == "vg.net.send":
            out.setdefault((key[1], key[2]), []).append(e)
        else:
            inn.setdefault((key[2], key[1]), []).append(e)

    def ranges(evs):
        return sorted((x["fields"]["off"], x["fields"]["off"] + x["fields"]["len"]) for x in evs)

    def union(rs):
        u = []
        for a, b in rs:
            if u and a <= u[-1][1]:
                u[-1][1] = max(u[-1][1], b)
            else:
                u.append([a, b])
        return u

    check(set(inn) <= set(out) and all(d in inn for d in out if exact(d)),
          f"directions sent {sorted(set(out) - set(inn))} received {sorted(set(inn) - set(out))}")
    pairs = []
    for d in out:
        su, ru = union(ranges(out[d])), union(ranges(inn.get(d, [])))
        if exact(d):
            check(su == ru, f"{d}: bytes sent {su} and received {ru} differ")
        else:
            check(all(any(a <= c and e <= b for a, b in su) for c, e in ru),
                  f"{d}: bytes received {ru} were not all sent {su}")
        # The overlapping (send, receive) pairs, by a sweep over both sorted by offset.
        ss = sorted(out[d], key=lambda x: x["fields"]["off"])
        rs = sorted(inn.get(d, []), key=lambda x: x["fields"]["off"])
        j = 0
        for s_ in ss:
            a, b = s_["fields"]["off"], s_["fields"]["off"] + s_["fields"]["len"]
            while j < len(rs) and rs[j]["fields"]["off"] + rs[j]["fields"]["len"] <= a:
                j += 1
            k = j
            while k < len(rs) and rs[k]["fields"]["off"] < b:
                if rs[k]["fields"]["off"] + rs[k]["fields"]["len"] > a:
                    pairs.append((s_, rs[k]))
                k += 1
    return pairs


def three_tier(instrumented, linked_only=False):
    cmd = [os.path.join(BIN, "three_tier"), "run", "--threads", "3", "--requests", "5",
           "--pool", "3", "--work-us", "100"]
    if instrumented:
        cmd.append("--instrumented")
    if linked_only:  # no vigil record: only the tiers linked with libvigil record
        trace = tmpdir("net-3t")
        shutil.rmtree(trace)
        out = run(cmd, env={"VIGIL_OUT": trace}, check_rc=0).stdout
        events, d = dump_json(trace)
        check(d.returncode == 0, d.stderr)
        shutil.rmtree(trace, ignore_errors=True)
        net = [e for e in events if e["name"].startswith("vg.net.")]
    else:
        out, net, events = record(cmd)
    r = json.loads(out.strip().splitlines()[-1])
    check(r["failed"] == 0 and r["requests"] == 15 and r["instrumented"] == instrumented,
          f"summary: {r}")
    pairs = check_bytes_matched(net)
    for s_, r_ in pairs:
        check(r_["ts"] >= s_["ts"], f"received before sent: {s_} {r_}")
    tcp_sends = [e for e in net if e["name"] == "vg.net.send" and e["fields"]["fd"] >= 0
                 and e["proc"].startswith("three_tier")]
    procs = {e["pid"]: e["proc"] for e in events}
    msgs = 2 * r["requests"] + 2 * r["backend_calls"]
    check(len([e for e in tcp_sends if e["fields"]["len"] > 0]) >= msgs,
          f"{len(tcp_sends)} sends for {msgs} messages")
    # Three tiers and the driver (recorded unless only the linked tiers record).
    check(len(set(procs)) >= (3 if linked_only else 4), f"processes: {procs}")
    return r, net


def test_three_tier_unmodified():
    r, net = three_tier(0)
    check(not any(e["name"] == "vg.net.input" or int(e["fields"].get("msg", 0)) for e in net),
          "the unmodified form makes no vigil call")


def test_three_tier_linked():
    """The instrumented tiers linked with libvigil, recording without vigil record (so
    under the sanitizers too)."""
    test_three_tier_instrumented(linked_only=True)


def test_three_tier_instrumented(linked_only=False):
    r, net = three_tier(1, linked_only)

    def iid(e):
        return (int(e["fields"]["iid_hi"]), int(e["fields"]["iid_lo"]))

    inputs = [e for e in net if e["name"] == "vg.net.input"]
    check(len(inputs) == r["requests"] and len({iid(e) for e in inputs}) == r["requests"],
          f"{len(inputs)} inputs for {r['requests']} requests")
    sends = [e for e in net if e["name"] == "vg.net.send" and e["fields"]["fd"] == -1]
    recvs = {}
    for e in net:
        if e["name"] == "vg.net.recv" and e["fields"]["fd"] == -1:
            recvs.setdefault(int(e["fields"]["msg"]), []).append(e)
    check(len(sends) == 2 * r["requests"] + 2 * r["backend_calls"], f"{len(sends)} messages")
    per = {}
    for s_ in sends:
        got = recvs.get(int(s_["fields"]["msg"]), [])
        check(len(got) == 1, f"message {s_['fields']['msg']} received {len(got)} times")
        check(iid(got[0]) == iid(s_) and iid(s_) != (0, 0), f"interaction lost: {s_} {got}")
        check(got[0]["ts"] >= s_["ts"], "received before sent")
        per[iid(s_)] = per.get(iid(s_), 0) + 1
    # Each request: to the front, 1 or 2 calls to the back end and back, the reply.
    check(set(per) == {iid(e) for e in inputs}, "every message belongs to an input")
    check(sorted(set(per.values())) == [4, 6], f"messages per request: {sorted(per.values())}")
    # The bytes on the sockets carry the interaction of the thread that moved them (not
    # the tiers' port lines on their stdout pipes, printed before any request).
    for e in net:
        if e["name"] in ("vg.net.send", "vg.net.recv") and e["fields"]["fd"] >= 0 and \
                e["proc"] == "three_tier_vg" and e["fields"]["len"] > 1 and \
                conn_kind(net, e) == "tcp":
            check(iid(e) != (0, 0) or e["name"] == "vg.net.recv", f"no interaction: {e}")


def test_runtime_io():
    """libvigil's own I/O is never followed: its control socket (a monitor that says go)
    and its warnings on a stderr that is a pipe."""
    import socket
    import subprocess
    import threading
    d = tmpdir("net-ctl")
    sock_path = os.path.join(d, "ctl")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock_path)
    srv.listen(1)
    srv.settimeout(30)
    said = []

    def monitor():
        c, _ = srv.accept()
        f = c.makefile("rw")
        said.append(f.readline())
        f.write("go\n")
        f.flush()
        said.append(f.readline())  # the answer to go
        c.recv(1)  # until the subject closes
        c.close()

    t = threading.Thread(target=monitor)
    t.start()
    trace = os.path.join(d, "trace")
    env = dict(os.environ, VIGIL_OUT=trace, VIGIL_CONTROL=sock_path, VIGIL_MAX_SIZE="bogus")
    p = subprocess.run([API_SUBJECT], env=env, capture_output=True, text=True, timeout=60)
    t.join(30)
    srv.close()
    check(p.returncode == 0, f"subject: {p.stderr}")
    check(said and said[0].startswith("hello"), f"no hello: {said}")
    check("VIGIL_MAX_SIZE" in p.stderr, f"no warning on stderr: {p.stderr!r}")
    events, _ = dump_json(trace)
    shutil.rmtree(d, ignore_errors=True)
    conns = [e["fields"] for e in events if e["name"] == "vg.net.conn"]
    check(all(c["kind"] == "pipe" for c in conns), f"runtime descriptors followed: {conns}")
    check(not any(e["name"] in ("vg.net.send", "vg.net.recv") and e["fields"]["fd"] == 2
                  for e in events), "the runtime's warning was recorded")


def test_redis():
    """A real server from Debian driven by its own client (unmodified, preloaded): every
    request's bytes reach the server and every reply's the client, none unmatched."""
    made = redis_script(400, 4, "set,get,lpush,lpop")
    check(made, "redis-server and redis-tools are not installed (scripts/install-deps.sh)")
    out, net, events = record(["sh", "-c", made[0]])
    procs = {e["pid"]: e["proc"] for e in events}
    pairs = check_bytes_matched(net)
    srv = {p for p, n in procs.items() if n.startswith("redis-server")}
    clients = {p for p, n in procs.items() if n.startswith("redis-benchmark")}
    check(len(srv) == 1 and clients, f"processes: {procs}")
    to_server = [(a, b) for a, b in pairs if a["pid"] in clients and b["pid"] in srv]
    to_client = [(a, b) for a, b in pairs if a["pid"] in srv and b["pid"] in clients]
    sent = lambda p, q: sum(e["fields"]["len"] for e in net if e["name"] == "vg.net.send"
                            and e["pid"] in p and e["fields"]["fd"] >= 0
                            and conn_kind(net, e) == "tcp" and peer_in(net, e, q))
    check(len(to_server) >= 4 * 400 // 16 and len(to_client) >= 4 * 400 // 16,
          f"{len(to_server)} request and {len(to_client)} reply transfers")
    check(sent(clients, srv) > 4 * 400 * 20, f"request bytes: {sent(clients, srv)}")
    for a, b in pairs:
        check(b["ts"] >= a["ts"], f"received before sent: {a} {b}")


def conn_kind(net, e):
    for c in net:
        if c["name"] == "vg.net.conn" and c["pid"] == e["pid"] and \
                c["fields"]["conn"] == e["fields"]["conn"]:
            return c["fields"]["kind"]
    return None


def peer_in(net, e, pids):
    """Is the peer endpoint of e's connection one of pids' connections?"""
    mine = [c["fields"] for c in net if c["name"] == "vg.net.conn" and c["pid"] == e["pid"]
            and c["fields"]["conn"] == e["fields"]["conn"]]
    if not mine:
        return False
    return any(c["name"] == "vg.net.conn" and c["pid"] in pids
               and c["fields"]["local"] == mine[0]["remote"]
               and c["fields"]["remote"] == mine[0]["local"] for c in net)


def test_stdio():
    """stdio on a pipe (fortified entry points, the inline putc_unlocked, a write larger
    than the buffer, fgets/getc/fread/getline, scanf, a flush at exit, dprintf): each
    flush is a send of exactly the bytes that reached the pipe, each refill a receive."""
    check_stdio(*stream(None, {}, [os.path.join(BIN, "net_stdio_subject")]))


def test_stdio_prompt():
    """On a terminal (script(1)'s pty): a prompt printed without a newline reaches the
    terminal when stdin is read (glibc flushes a line-buffered stdout first): a send on
    stdout before the receive on stdin, then the answer's line."""
    p, events = record_on_tty("net-prompt", f"{os.path.join(BIN, 'net_stdio_subject')} prompt")
    check(p.returncode == 0 and "hi typed" in p.stdout, f"script: {p.stdout!r} {p.stderr!r}")
    net = [e for e in events if e["name"] in ("vg.net.send", "vg.net.recv")
           and e["proc"] == "net_stdio_subje"]
    got = [token(e, {0: "in", 1: "out"}).split(" c")[0] + " " + token(e, {}).split(" ")[-1]
           for e in net]
    expect(got, ["send out [0,6)", "recv in [0,6)", "send out [6,15)"],
           "the prompt, the answer, the greeting")


def test_stdio_linked():
    """The same subject linked with libvigil and recording without vigil record (so
    under the sanitizers too: the streams flushed at exit, fclose's bookkeeping)."""
    trace = tmpdir("net-stdio")
    shutil.rmtree(trace)
    out = run([os.path.join(BIN, "net_stdio_linked")], env={"VIGIL_OUT": trace},
              check_rc=0).stdout
    events, d = dump_json(trace)
    check(d.returncode == 0, d.stderr)
    shutil.rmtree(trace, ignore_errors=True)
    fds = json.loads(out.strip().splitlines()[-1])
    names = {v: k for k, v in fds.items()}
    net = [e for e in events if e["name"].startswith("vg.net.") and e["fields"].get("fd") != 1]
    check_stdio(fds, net, [token(e, names) for e in net])


def check_stdio(fds, net, got):
    by_pid = {}
    for e, t in zip(net, got):
        by_pid.setdefault(e["pid"], []).append(t)
    parent, child = sorted(by_pid, key=lambda p: [e["pid"] for e in net].index(p))
    conns = [t for t in by_pid[parent] if t.startswith("conn")]
    expect(conns, ["conn r c1 pipe pipe", "conn w c2 pipe pipe", "conn q_r c3 pipe pipe",
                   "conn q_w c4 pipe pipe", "conn s_r c5 pipe pipe", "conn s_w c6 pipe pipe",
                   "conn t_r c7 pipe pipe", "conn t_w c8 pipe pipe"],
           "connections")
    rest = [t for t in by_pid[parent] if not t.startswith("conn")]
    # Writes: 16 bytes at the first fflush; 4096 by __overflow and 904 at the second;
    # the 10000-byte fwrite: 8192 straight to the pipe, 1808 flushed by fclose.
    sends = [t for t in rest if t.startswith("send w")]
    expect(sends, ["send w c2 [0,16)", "send w c2 [16,4112)", "send w c2 [4112,5016)",
                   "send w c2 [5016,13208)", "send w c2 [13208,15016)"], "stdio writes")
    recvs = [t for t in rest if t.startswith("recv r")]
    expect(recvs, ["recv r c1 [0,4096)", "recv r c1 [4096,8192)", "recv r c1 [8192,15016)"],
           "stdio reads (refills of the buffer)")
    expect([t for t in rest if " s_" in t or "unfollowed" in t],
           ["send s_w c6 [0,6)", "close s_w c6", "unfollowed", "close s_r c5"],
           "scanf's refill is unfollowed")
    unf = [e for e in net if e["name"] == "vg.net.unfollowed"]
    check(len(unf) == 1 and unf[0]["fields"]["call"] == "scanf", f"unfollowed: {unf}")
    expect([t for t in rest if " t_" in t], ["send t_w c8 [0,2)", "close t_w c8",
                                             "recv t_r c7 [0,2)", "close t_r c7"],
           "freopen flushes, then closes the pipe's end")
    expect([t for t in by_pid[child] if t.startswith("send")],
           ["send q_w c4 [0,2)", "send q_w c4 [2,5)"], "dprintf, then the flush at exit")
    expect([t for t in rest if t.startswith("recv q_r")], ["recv q_r c3 [0,5)"], "the reader")
    check("close w c2" in rest and "close r c1" in rest, f"fclose closes: {rest}")


def pipeline(script):
    """Records `sh -c script` (its output to a file): the pipes' events, checked matched."""
    d = tmpdir("net-pipe")
    out, net, events = record(["sh", "-c", script + f" > {d}/out"])
    with open(f"{d}/out") as f:
        text = f.read()
    shutil.rmtree(d, ignore_errors=True)
    mine = [e for e in net if e["fields"].get("fd") != 2]  # warnings: none expected
    check_bytes_matched(mine, kinds=("pipe",))
    sent = sum(e["fields"]["len"] for e in mine if e["name"] == "vg.net.send")
    return text, sent


def test_stdio_pipelines():
    text, sent = pipeline("/usr/bin/printf hi | cat")
    check(text == "hi" and sent == 2, f"printf | cat: {text!r}, {sent} bytes sent")
    text, sent = pipeline("seq 1000 | while read x; do echo $x; done")
    n = sum(len(f"{i}\n") for i in range(1, 1001))
    check(text.count("\n") == 1000 and sent == n, f"seq | while read: {sent} bytes, want {n}")
    text, sent = pipeline("/usr/bin/python3 -c 'import sys; sys.stdout.write(\"x\" * 100000)' | wc -c")
    check(text.strip() == "100000" and sent == 100000, f"python | wc: {text!r} {sent}")


def test_nginx():
    """Debian's nginx with Debian's configuration (workers as www-data, sendfile on),
    loaded by wrk for 2 s and asked for a 100 000-byte file by curl, all recorded: no
    event discarded; nginx's receives and sends on its connections add up to the bytes
    its access log counts for every request; curl's receives of the file match nginx's
    sends exactly (sendfile), and every byte wrk received was sent."""
    sys.path.insert(0, os.path.dirname(__file__))
    import nginx_server
    import subprocess
    wrk, curl = shutil.which("wrk"), shutil.which("curl")
    check(os.path.exists(nginx_server.NGINX) and wrk and curl,
          "nginx, wrk and curl are not installed (scripts/install-deps.sh)")
    d = tmpdir("net-nginx")
    body = bytes((i * 7 + i // 251) % 256 for i in range(100000))
    conf, port = nginx_server.make(d, {"index.html": b"<p>hello from nginx</p>\n", "f100k": body})
    with open(conf) as f:
        text = f.read()
    check("user www-data;" in text and "sendfile on;" in text, "not Debian's configuration")
    url = f"http://127.0.0.1:{port}"
    script = f"""
{' '.join(f"'{a}'" for a in nginx_server.command(conf, d))} &
ok=0
for i in $(seq 400); do
  [ -s {d}/nginx.pid ] && {curl} -s -o /dev/null {url}/index.html && ok=1 && break; sleep 0.05
done
[ $ok = 1 ] || {{ echo nginx did not answer >&2; kill $!; wait; exit 1; }}
rc=0
{curl} -s -o {d}/got {url}/f100k || rc=1
{wrk} -t1 -c4 -d2s {url}/index.html > {d}/wrk.out || rc=1
kill -QUIT $(cat {d}/nginx.pid)
wait
exit $rc
"""
    trace = os.path.join(d, "trace")
    p = subprocess.run([VIGIL, "record", "-o", trace, "--", "sh", "-c", script],
                       capture_output=True, text=True, timeout=100)
    check(p.returncode == 0, f"recording nginx failed ({d} kept): {p.stderr[-2000:]}")
    with open(f"{d}/got", "rb") as f:
        check(f.read() == body, "curl did not get the file")
    import pwd
    # The master makes the temporary directories for its workers' user.
    check(os.stat(f"{d}/client_body").st_uid == pwd.getpwnam("www-data").pw_uid,
          "nginx's workers did not run as www-data")
    stats = [json.loads(l) for l in run([VIGIL, "dump", "--stats", "--json", trace]).stdout.splitlines()]
    discarded = sum(x.get("discarded", 0) for x in stats if "stream" in x)
    check(discarded == 0, f"{discarded} events discarded ({d} kept)")
    dumped = run([VIGIL, "dump", "--json", trace], check_rc=0).stdout.splitlines()
    net = [json.loads(line) for line in dumped if '"vg.net.' in line]
    procs = {e["pid"]: e["proc"] for e in net}
    workers = {e["pid"] for e in net if procs.get(e["pid"]) == "nginx"
               and e["name"] == "vg.net.conn" and e["fields"]["role"] == "accept"}
    check(workers, f"no nginx connection recorded ({d} kept): {sorted(set(procs.values()))}")
    log = nginx_server.access_log(d)
    with open(f"{d}/wrk.out") as f:
        wrk_out = f.read()
    import re
    m = re.search(r"(\d+) requests in", wrk_out)
    check(m and len(log) >= int(m.group(1)) + 2, f"access log {len(log)} lines, wrk: {wrk_out}")
    tcp = {}
    for e in net:
        if e["name"] == "vg.net.conn" and e["fields"]["kind"] == "tcp":
            tcp[(e["pid"], e["fields"]["conn"])] = e["fields"]
    moved = {"vg.net.send": 0, "vg.net.recv": 0}
    for e in net:
        if e["pid"] in workers and e["name"] in moved and (e["pid"], e["fields"]["conn"]) in tcp:
            moved[e["name"]] += e["fields"]["len"]
    check(moved["vg.net.recv"] == sum(r for r, _, _ in log),
          f"nginx received {moved['vg.net.recv']} bytes, its log counts {sum(r for r, _, _ in log)}")
    check(moved["vg.net.send"] == sum(s for _, s, _ in log),
          f"nginx sent {moved['vg.net.send']} bytes, its log counts {sum(s for _, s, _ in log)}")
    check(sum(1 for _, s, _ in log if s > 100000) == 1, "the file's request is not in the log")
    # Clients' connections: curl's exactly matched, wrk's (stopped at its deadline) read
    # only what was sent.
    wrk_ends = {(c["local"], c["remote"]) for (pid, _), c in tcp.items() if procs[pid] == "wrk"}
    pairs = check_bytes_matched(net, exact=lambda dr: dr not in wrk_ends and
                                (dr[1], dr[0]) not in wrk_ends)
    body_pairs = [(a, b) for a, b in pairs if procs[b["pid"]] == "curl"
                  and a["pid"] in workers and a["fields"]["len"] == 100000]
    check(body_pairs, "curl's receives of the body are not matched by nginx's sendfile")
    for a, b in pairs:
        check(b["ts"] >= a["ts"], f"received before sent: {a} {b}")
    shutil.rmtree(d, ignore_errors=True)


def unfollowed_in_split(trace):
    """What `vigil net split` counts of vg.net.unfollowed (index.json, and said on stderr)."""
    out = tmpdir("net-split")
    p = run([VIGIL, "net", "split", trace, "-o", out])
    with open(os.path.join(out, "index.json")) as f:
        got = json.load(f)["unfollowed"]
    shutil.rmtree(out, ignore_errors=True)
    check(("not followed" in p.stderr) == any(got.values()), f"split's stderr: {p.stderr}")
    return got


def test_static_exec():
    """A statically linked program (Debian's ldconfig, a static-pie) is out of the
    preload's reach: vigil record says so when it is the command, and an exec of it
    inside the recorded tree is a warning and a vg.net.unfollowed (call exec-static)."""
    ldconfig = "/usr/sbin/ldconfig"
    check(os.path.exists(ldconfig), "no /usr/sbin/ldconfig (libc-bin)")
    trace = tmpdir("net-static")
    shutil.rmtree(trace)
    p = run([VIGIL, "record", "-o", trace, "--", ldconfig, "-p"])
    check("statically linked" in p.stderr, f"vigil record did not say so: {p.stderr!r}")
    shutil.rmtree(trace, ignore_errors=True)
    p = run([VIGIL, "record", "-o", trace, "--", "sh", "-c", f"{ldconfig} -p | wc -l"], check_rc=0)
    check(f"{ldconfig} is statically linked" in p.stderr, f"no warning: {p.stderr!r}")
    events, _ = dump_json(trace)
    unf = [e for e in events if e["name"] == "vg.net.unfollowed"]
    check(len(unf) == 1 and unf[0]["fields"]["call"] == "exec-static" and unf[0]["proc"] == "sh",
          f"unfollowed: {unf}")
    check(not any(e["proc"] == "ldconfig" for e in events), "ldconfig recorded?")
    check(unfollowed_in_split(trace) == {"scanf": 0, "io_uring": 0, "exec_static": 1},
          "vigil net split's count")
    shutil.rmtree(trace, ignore_errors=True)
    # A dynamic program is not flagged.
    p = run([VIGIL, "record", "-o", trace, "--", "sh", "-c", "ls / >/dev/null"], check_rc=0)
    events, _ = dump_json(trace)
    shutil.rmtree(trace, ignore_errors=True)
    check("statically" not in p.stderr and
          not any(e["name"] == "vg.net.unfollowed" for e in events), f"ls flagged: {p.stderr}")


def test_io_uring():
    """io_uring is not followed (liburing makes its own system calls): the pipe's
    receive stays unmatched, and the ring left open at exit is counted with its 4
    submissions."""
    subject = os.path.join(BIN, "net_uring_subject")
    check(os.path.exists(subject), "net_uring_subject not built (liburing-dev: "
          "scripts/install-deps.sh)")
    trace = tmpdir("net-uring")
    shutil.rmtree(trace)
    out = run([VIGIL, "record", "-o", trace, "--", subject], check_rc=0).stdout
    check(unfollowed_in_split(trace) == {"scanf": 0, "io_uring": 4, "exec_static": 0},
          "vigil net split's count")
    shutil.rmtree(trace, ignore_errors=True)
    fds, net, got = stream(None, {}, [subject])
    check(fds["read"] == 12 and json.loads(out)["read"] == 12, f"the subject read {fds['read']}")
    unf = [e["fields"] for e in net if e["name"] == "vg.net.unfollowed"]
    check(len(unf) == 1 and unf[0]["call"] == "io_uring" and unf[0]["count"] == 4
          and unf[0]["fd"] == fds["ring"], f"unfollowed: {unf}")
    expect([t for t in got if t.startswith(("send", "recv"))], ["recv r c1 [0,12)"],
           "only the read is seen")


TESTS = {n[5:]: f for n, f in dict(globals()).items() if n.startswith("test_")}

if __name__ == "__main__":
    main(TESTS)
