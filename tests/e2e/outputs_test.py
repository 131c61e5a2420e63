#!/usr/bin/env python3
"""Every file a command writes, written without harming what it replaces
(src/common/out_file.h): a device node or a FIFO named as the output is written in
place and stays what it was; a regular file is replaced whole; a symbolic link stays a
link and its target is replaced; a directory or, for a database, anything but a regular
file is refused with one line and a non-zero exit. No temporary file is left behind.

The device is a null device made with mknod inside the test's own folder (root only),
never /dev/null itself: were the bug back, the test would replace its own node, not the
host's."""
import os
import shutil
import stat
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vigil_testlib import VIGIL, BIN, Failure, check, main, run, tmpdir  # noqa: E402

SRC = os.environ.get("VIGIL_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))


class Fixture:
    """A folder with a mailbox recording, a three-tier recording split into networks,
    and the targets: a null device, a FIFO, a regular file, a link to one, a folder."""

    def __init__(self, name):
        self.dir = tmpdir(f"out-{name}")
        self.t = os.path.join(self.dir, "t")
        run([VIGIL, "record", "-o", self.t, "--", os.path.join(BIN, "mailbox"), "--seed", "7"],
            check_rc=0)
        self.model = os.path.join(self.dir, "m.vgm")
        run([VIGIL, "model", self.t, "-o", self.model], check_rc=0)
        tt = os.path.join(self.dir, "tt")
        run([VIGIL, "record", "-o", tt, "--", os.path.join(BIN, "three_tier"), "run",
             "--threads", "2", "--requests", "2", "--pool", "2", "--work-us", "10"], check_rc=0)
        self.nets = os.path.join(self.dir, "nets")
        run([VIGIL, "net", "split", "-o", self.nets, tt], check_rc=0)
        self.net = os.path.join(self.nets, "net-00001.json")
        check(os.path.exists(self.net), "the three-tier run split into no network")

    def device(self, name="null"):
        path = os.path.join(self.dir, name)
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return path

    def close(self, ok):
        if ok:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            print(f"kept {self.dir}")

    def leftovers(self, folder):
        return [f for f in os.listdir(folder) if ".tmp" in f]


def writers(fx):
    """Each writing command as a function of its output path: (name, argv)."""
    vgl = os.path.join(SRC, "examples", "mailbox", "mailbox.vgl")
    return [
        ("model", lambda out: [VIGIL, "model", fx.t, "-o", out]),
        ("net render svg", lambda out: [VIGIL, "net", "render", fx.net, "--svg", out]),
        ("net render dot", lambda out: [VIGIL, "net", "render", fx.net, "--format", "dot",
                                        "-o", out]),
        ("cdf svg", lambda out: [VIGIL, "cdf", fx.model, "--from", "mailbox.Waiting.begin",
                                 "--to", "mailbox.Waiting.end", "--walks", "200", "--svg",
                                 out]),
        ("gen c", None),  # a folder output: its files are the targets (test_gen)
    ] if os.path.exists(vgl) else []


def expected_bytes(fx, argv_of):
    """What the command writes, read from a regular file it wrote."""
    ref = os.path.join(fx.dir, "ref.out")
    run(argv_of(ref), check_rc=0)
    with open(ref, "rb") as f:
        data = f.read()
    os.unlink(ref)
    check(len(data) > 0, f"{argv_of(ref)} wrote nothing")
    return data


def read_fifo(path, into):
    with open(path, "rb") as f:
        into.append(f.read())


def test_files():
    """Single-file outputs: device, FIFO, regular file, link, folder."""
    fx = Fixture("files")
    ok = False
    try:
        for name, argv_of in writers(fx):
            if argv_of is None:
                continue
            data = expected_bytes(fx, argv_of)
            if os.geteuid() == 0:  # a device node needs root
                dev = fx.device()
                p = run(argv_of(dev))
                check(p.returncode == 0, f"{name} -o DEVICE exited {p.returncode}: {p.stderr}")
                st = os.lstat(dev)
                check(stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3),
                      f"{name}: the device node was replaced by a {stat.filemode(st.st_mode)}")
                os.unlink(dev)
            fifo = os.path.join(fx.dir, "fifo")
            os.mkfifo(fifo)
            got = []
            reader = threading.Thread(target=read_fifo, args=(fifo, got))
            reader.start()
            p = run(argv_of(fifo), timeout=60)
            reader.join(30)
            check(p.returncode == 0, f"{name} -o FIFO exited {p.returncode}: {p.stderr}")
            check(stat.S_ISFIFO(os.lstat(fifo).st_mode), f"{name}: the FIFO was replaced")
            check(got and got[0] == data,
                  f"{name}: the FIFO's reader got {len(got[0]) if got else 0} bytes, the "
                  f"regular file {len(data)}")
            os.unlink(fifo)
            # A regular file is replaced whole, keeping its mode.
            reg = os.path.join(fx.dir, "reg")
            with open(reg, "wb") as f:
                f.write(b"old" * 100000)
            os.chmod(reg, 0o640)
            run(argv_of(reg), check_rc=0)
            with open(reg, "rb") as f:
                check(f.read() == data, f"{name}: the regular file does not hold the output")
            check(stat.S_IMODE(os.stat(reg).st_mode) == 0o640, f"{name}: the mode changed")
            # A link stays a link; its target gets the output.
            link = os.path.join(fx.dir, "link")
            os.symlink("reg", link)
            with open(reg, "wb") as f:
                f.write(b"old")
            run(argv_of(link), check_rc=0)
            check(os.path.islink(link), f"{name}: the symbolic link was replaced")
            with open(reg, "rb") as f:
                check(f.read() == data, f"{name}: the link's target does not hold the output")
            os.unlink(link)
            os.unlink(reg)
            # A folder is refused, in one line, and stays.
            folder = os.path.join(fx.dir, "folder")
            os.mkdir(folder)
            p = run(argv_of(folder))
            check(p.returncode != 0, f"{name} -o FOLDER exited 0")
            lines = p.stderr.strip().splitlines()
            check(len(lines) == 1 and "folder" in lines[0] and "directory" in lines[0],
                  f"{name} -o FOLDER: expected one line naming it, got {p.stderr!r}")
            check(os.path.isdir(folder), f"{name}: the folder is gone")
            os.rmdir(folder)
            check(not fx.leftovers(fx.dir), f"{name} left {fx.leftovers(fx.dir)}")
        ok = True
    finally:
        fx.close(ok)


def test_gen():
    """vigil gen writes files into a folder: a device standing where a file goes is
    written in place, the others are created, nothing temporary stays."""
    d = tmpdir("out-gen")
    ok = False
    try:
        vgl = os.path.join(SRC, "examples", "mailbox", "mailbox.vgl")
        ref = os.path.join(d, "ref")
        run([VIGIL, "gen", vgl, "--lang", "c", "-o", ref], check_rc=0)
        made = sorted(os.listdir(ref))
        check(any(f.endswith("_sensors.h") for f in made), f"gen wrote {made}")
        header = [f for f in made if f.endswith("_sensors.h")][0]
        out = os.path.join(d, "out")
        os.mkdir(out)
        target = os.path.join(out, header)
        if os.geteuid() == 0:
            os.mknod(target, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        else:
            os.mkfifo(target)
            threading.Thread(target=read_fifo, args=(target, []), daemon=True).start()
        run([VIGIL, "gen", vgl, "--lang", "c", "-o", out], check_rc=0)
        st = os.lstat(target)
        check(not stat.S_ISREG(st.st_mode), "gen replaced the node standing for its header")
        check(sorted(os.listdir(out)) == made, f"gen wrote {sorted(os.listdir(out))}, "
              f"expected {made} (a temporary left behind?)")
        for lang in ("python", "java"):
            o2 = os.path.join(d, lang)
            run([VIGIL, "gen", vgl, "--lang", lang, "-o", o2], check_rc=0)
            files = [os.path.join(r, f) for r, _, fs in os.walk(o2) for f in fs]
            check(files and not [f for f in files if ".tmp" in f],
                  f"gen --lang {lang} wrote {files}")
        ok = True
    finally:
        if ok:
            shutil.rmtree(d, ignore_errors=True)
        else:
            print(f"kept {d}")


def test_database():
    """vigil query --into: a database cannot be written in place, so anything but a
    regular file is refused before SQLite touches it (it would create NAME-journal
    beside a device)."""
    fx = Fixture("db")
    ok = False
    try:
        q = os.path.join(fx.dir, "q.tq")
        with open(q, "w") as f:
            f.write("range of W is Waiting\nretrieve R (P = W.Process)\n")
        targets = []
        if os.geteuid() == 0:
            targets.append(("device", fx.device("dbnull")))
        fifo = os.path.join(fx.dir, "dbfifo")
        os.mkfifo(fifo)
        targets.append(("FIFO", fifo))
        for kind, path in targets:
            mode = os.lstat(path).st_mode
            p = run([VIGIL, "query", fx.t, "-f", q, "--into", path], timeout=30)
            check(p.returncode != 0, f"--into {kind} exited 0")
            lines = p.stderr.strip().splitlines()
            check(len(lines) == 1 and "not a regular file" in lines[0],
                  f"--into {kind}: expected one line, got {p.stderr!r}")
            check(os.lstat(path).st_mode == mode, f"--into {kind}: the node changed")
            check(not os.path.exists(path + "-journal"), f"--into {kind}: a journal was made")
        db = os.path.join(fx.dir, "r.db")
        run([VIGIL, "query", fx.t, "-f", q, "--into", db], check_rc=0)
        n = subprocess.run(["sqlite3", db, "select count(*) from R"], capture_output=True,
                           text=True)
        check(n.returncode == 0 and int(n.stdout) > 0, f"r.db: {n.stdout} {n.stderr}")
        ok = True
    finally:
        fx.close(ok)


if __name__ == "__main__":
    main({"files": test_files, "gen": test_gen, "database": test_database})
