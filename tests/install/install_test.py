#!/usr/bin/env python3
"""`cmake --install` into a DESTDIR (issue 28, item 4): every file is there (libvigil.so.0
with its SONAME, headers, vigil.pc, a man page for every command `vigil --help` lists,
bash completion that completes commands and options, vigild.service naming the installed
vigild); the mailbox example is built against the installed tree with pkg-config alone
(its own jansson too, nothing from the source tree's include/ or the build), run, and
recorded by the installed vigil; the installed Python module answers as the installed CLI."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.abspath(os.environ["VIGIL_BIN"])
SRC = os.path.abspath(os.environ["VIGIL_SRC"])
BUILD = os.path.dirname(BIN)


class Failure(Exception):
    pass


def run(argv, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)
    if p.returncode:
        raise Failure(f"{' '.join(map(str, argv))} exited {p.returncode}: {p.stderr[-1500:]}")
    return p.stdout


def check_files(root, prefix):
    p = root + prefix
    libs = glob.glob(p + "/lib*/**/libvigil.so.0.*", recursive=True)
    if len(libs) != 1:
        raise Failure(f"libvigil.so.0.* installed {len(libs)} times: {libs}")
    libdir = os.path.dirname(libs[0])
    if not re.search(r"SONAME.*\[libvigil\.so\.0\]", run(["readelf", "-d", libs[0]])):
        raise Failure("libvigil's SONAME is not libvigil.so.0")
    for name in ("libvigil.so.0", "libvigil.so"):
        if os.path.realpath(os.path.join(libdir, name)) != os.path.realpath(libs[0]):
            raise Failure(f"{name} does not lead to {libs[0]}")
    for f in ("bin/vigil", "bin/vigil-full", "bin/vigild", "include/vigil/vigil.h", "include/vigil/log.h",
              "share/bash-completion/completions/vigil", "lib/systemd/system/vigild.service"):
        if not os.path.exists(os.path.join(p, f)):
            raise Failure(f"{f} is not installed")
    # A man page for vigil, vigild and every command.
    helptext = run([p + "/bin/vigil", "--help"])
    cmds = re.findall(r"^  ([a-z]+) ", helptext.split("commands:")[1].split("\n\n")[0], re.M)
    if len(cmds) < 10:
        raise Failure(f"vigil --help lists {len(cmds)} commands?")
    for page in ["vigil", "vigild"] + [f"vigil-{c}" for c in cmds]:
        f = f"{p}/share/man/man1/{page}.1"
        if not os.path.exists(f):
            raise Failure(f"no man page {page}(1)")
        out = run(["man", "-l", "-P", "cat", f], env=dict(os.environ, MANWIDTH="80"))
        if not re.search(rf"^NAME\s*\n\s*{re.escape(page)}\s+-\s+\S", out, re.M):
            raise Failure(f"{page}(1) has no NAME line: {out[:300]!r}")
    # Completion: commands, then a command's options (from its --help).
    script = (f"PATH={p}/bin:$PATH; source {p}/share/bash-completion/completions/vigil; "
              "COMP_WORDS=(vigil rel); COMP_CWORD=1; _vigil; echo \"${COMPREPLY[*]}\"; "
              "COMP_WORDS=(vigil relations --js); COMP_CWORD=2; _vigil; echo \"${COMPREPLY[*]}\"")
    lines = run(["bash", "-c", script]).splitlines()
    if lines != ["relations", "--json"]:
        raise Failure(f"bash completion offered {lines}, expected relations, --json")
    unit = open(p + "/lib/systemd/system/vigild.service").read()
    if f"ExecStart={prefix}/bin/vigild " not in unit:
        raise Failure(f"vigild.service does not start {prefix}/bin/vigild")
    if not os.access(root + prefix + "/bin/vigild", os.X_OK):
        raise Failure("the unit's vigild is not installed")
    return libdir, cmds


def build_mailbox(work, root, prefix, libdir):
    """The example built from its sources with the installed vigil gen and pkg-config."""
    pc = glob.glob(root + prefix + "/lib*/**/pkgconfig/vigil.pc", recursive=True)
    if len(pc) != 1:
        raise Failure(f"vigil.pc installed {len(pc)} times")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pc[0]))
    flags = run(["pkg-config", "--cflags", "--libs", "vigil"], env=env).split()
    if not any(f.startswith("-I") and os.path.realpath(f[2:]) == os.path.realpath(
            root + prefix + "/include") for f in flags):
        raise Failure(f"pkg-config --cflags vigil names no installed include folder: {flags}")
    gen = os.path.join(work, "gen")
    run([root + prefix + "/bin/vigil", "gen", SRC + "/examples/mailbox/mailbox.vgl",
         "--lang", "c", "-o", gen])
    srcs = [f for f in sorted(glob.glob(SRC + "/examples/mailbox/*.c"))]
    jansson = run(["pkg-config", "--cflags", "--libs", "jansson"]).split()
    exe = os.path.join(work, "mailbox")
    run(["cc", "-O2", "-pthread", "-I" + gen, "-o", exe, *srcs, gen + "/mailbox_sensors.c",
         *flags, *jansson], env=env)
    return exe


def main():
    work = tempfile.mkdtemp(prefix="vigil-install-")
    ok = False
    try:
        root = os.path.join(work, "root")
        out = run(["cmake", "--install", BUILD], env=dict(os.environ, DESTDIR=root))
        m = re.search(r"Installing: " + re.escape(root) + r"(/\S*?)/bin/vigil$", out, re.M)
        if not m:
            raise Failure(f"cmake --install installed no bin/vigil under {root}: {out[:500]}")
        prefix = m.group(1)
        libdir, cmds = check_files(root, prefix)
        exe = build_mailbox(work, root, prefix, libdir)
        # Run directly (the installed libvigil found by LD_LIBRARY_PATH), then recorded by
        # the installed vigil, which finds the installed libvigil itself.
        env = dict(os.environ, LD_LIBRARY_PATH=libdir)
        env.pop("VIGIL_LIB", None)
        run([exe, "--seed", "2"], env=env)
        vigil = root + prefix + "/bin/vigil"
        trace = os.path.join(work, "run1")
        said = run([vigil, "record", "-o", trace, "--", exe, "--seed", "2", "--truth",
                    work + "/truth.json"], env=env)
        with open(work + "/truth.json") as f:
            counts = json.load(f)["counts"]
        rels = {r["name"]: r for r in map(json.loads, run([vigil, "relations", "--json",
                                                            trace]).splitlines())}
        if rels.get("SendMessage", {}).get("tuples") != counts["mailbox.SendMessage"]:
            raise Failure(f"recorded {rels.get('SendMessage')} SendMessage tuples, the "
                          f"program sent {counts['mailbox.SendMessage']} ({said})")
        # The installed Python module against the installed CLI.
        site = glob.glob(root + prefix + "/lib/python3*/dist-packages")
        if len(site) != 1:
            raise Failure(f"the Python module is installed in {site}")
        q = "range of W is Waiting retrieve (W.process, W.mailbox)"
        code = ("import json, sys, vigil; rows = vigil.query(sys.argv[1], sys.argv[2]); "
                "print(json.dumps([[r.relation, r.valid_from, r.valid_to, r.values] "
                "for r in rows]))")
        pyenv = dict(os.environ, PYTHONPATH=site[0])
        for k in ("VIGIL_BIN", "VIGIL_QUERY_LIB"):
            pyenv.pop(k, None)
        got = json.loads(run(["/usr/bin/python3", "-c", code, trace, q], env=pyenv))
        want = [[o["relation"], o["from"], o["to"], o["values"]] for o in map(
            json.loads, run([vigil, "query", trace, "-e", q, "--format", "json"]).splitlines())]
        if got != want or not want:
            raise Failure(f"installed module: {len(got)} tuples, the CLI {len(want)}")
        print(f"ok: installed under DESTDIR{prefix}: {len(cmds) + 2} man pages; mailbox built "
              f"with pkg-config and recorded ({counts['mailbox.SendMessage']} SendMessage); "
              f"the installed Python module answers {len(want)} tuples as the CLI")
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
