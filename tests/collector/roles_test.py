"""Credentials bound to one subject (docs/security.md): vigild --subject-tokens FILE
("HOST TOKEN" lines) lets a subject's token open sessions of its own host only; control
peers then need a control token of their own. Peers speak frames by hand (Python), so
the sanitizer build runs this too.
usage: roles_test.py subject_tokens"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vgd import *  # noqa: E402,F401,F403

BIN = bindir()


def refused(port, **kw):
    p = Peer(port)
    p.send(hello(**kw))
    try:
        t, _ = p.read_frame()
    except ConnectionResetError:
        t = None
    return t is None


def case_subject_tokens(work):
    with open(work + "/tokens", "w") as f:
        f.write("# host token\nalpha a-secret-1\n\nbeta b-secret-2\n")
    with open(work + "/control", "w") as f:
        f.write("c-secret-3\n")
    c = Collector(work + "/out", ["--subject-tokens", work + "/tokens"]).start()
    # A subject with its host's token is in; alpha's token does not open beta's sessions,
    # a host not listed is refused, and so is a control peer (no control token given).
    p = Peer(c.port)
    p.send(hello(host="alpha", pid=10, token="a-secret-1"))
    p.welcome()
    check(refused(c.port, host="beta", pid=11, token="a-secret-1"), "beta with alpha's token")
    check(refused(c.port, host="gamma", pid=12, token="a-secret-1"), "gamma, not listed")
    check(refused(c.port, host="x", pid=13, kind=3, token="a-secret-1"), "a control peer")
    p2 = Peer(c.port)
    p2.send(hello(host="beta", pid=11, token="b-secret-2"))
    p2.welcome()
    log = c.logtext()
    check(log.count("wrong token; refused") == 1 and
          "a host without a token in --subject-tokens" in log and
          "a control peer, and no --control-token-file" in log, log)
    check(c.stop() == 0, "vigild exit status")
    # With a control token, vigil probes --collector gets in with it, and only with it.
    c = Collector(work + "/out2", ["--subject-tokens", work + "/tokens",
                                   "--control-token-file", work + "/control"]).start()
    r = run([os.path.join(BIN, "vigil"), "probes", "--collector", c.addr(), "list"],
            env=dict(os.environ, VIGIL_TO_TOKEN="c-secret-3"))
    check(r.returncode == 0, "probes with the control token: %r" % r.stderr)
    r = run([os.path.join(BIN, "vigil"), "probes", "--collector", c.addr(), "list"],
            env=dict(os.environ, VIGIL_TO_TOKEN="a-secret-1"))
    check(r.returncode != 0, "probes with a subject's token: %r" % r.stdout)
    check(c.stop() == 0, "vigild exit status")
    for bad in ("alpha\n", "../x tok\n", ""):
        with open(work + "/bad", "w") as f:
            f.write(bad)
        r = run([os.path.join(BIN, "vigild"), "-o", work + "/x", "--subject-tokens",
                 work + "/bad"])
        check(r.returncode == 2 and r.stderr.count("\n") == 1, "bad file %r: %r" % (bad, r.stderr))


if __name__ == "__main__":
    run_cases("roles_test", globals())
