#!/usr/bin/env python3
"""The examples of every `--help` text and of docs/*.md, run as written (issue 21, item
7; the README's are tests/e2e/readme_test.py).

Sources: the `examples:` section of `vigil --help`, of each `vigil COMMAND --help` and of
`vigild --help` (one example a line; a line indented deeper continues the one above; the
words after two spaces outside quotes are its description), and each code block of
docs/*.md whose lines are commands (`vigil ...`, `$ vigil ...`, `sqlite3 ...`).

Each source runs in a folder of its own, with bash, its examples in order (a background
job of one is there for the next; all are ended after the last), with the build's bin
directory first on PATH and the fixtures a reader of the text has: `./mailbox` and
`mailbox` (the example program), `mailbox.vgl`, `resumed.tq` and `q.tq` (the README's
question), recordings `run1` (mailbox --seed 2) and `run2` (seed 3), models `base.vgm`,
`slow.vgm`, `run1.vgm`, `sensors.vgm`, `old.vgm` of them, unless the source makes that name itself.

An example that names something only the reader has (their own program, a PostgreSQL
server, other hosts, a collector on a fixed port) is skipped, said with its reason; in a
docs block, the whole block. Every other example must exit 0 with no error line on
stderr; a docs example shown as `$ COMMAND` followed by its output must print that output
(numbers with a decimal point, the times, are not compared); one that asks the README's
question (resumed.tq) with `vigil query` or `vigil watch` must answer tuples."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.abspath(os.environ.get("VIGIL_BIN", "build/bin"))
SRC = os.path.abspath(os.environ.get("VIGIL_SRC", "."))
COMMANDS = ["record", "dump", "recover", "gen", "relations", "query", "explain", "watch",
            "model", "diff", "cdf", "check", "net", "clock", "probes", "report", "send", "store", "export", "usdt"]
# What only the reader has, and why the example cannot run here.
PLACEHOLDERS = {
    "./server": "the reader's own server", "./app": "the reader's own program",
    "app.vgl": "the reader's own sensors", "./front": "the reader's own hosts",
    "./back": "the reader's own hosts", "my_server": "the reader's own server",
    "make -j2": "the reader's own build", "postgres": "a PostgreSQL server",
    "psql": "a PostgreSQL server", "127.0.0.1:7878": "a collector on vigild's fixed port",
    "0.0.0.0": "a collector for other machines", "hostA": "traces of the reader's hosts",
    "a/ b/": "traces of the reader's hosts", "a b c": "traces of the reader's hosts",
    "nets": "networks of the reader's hosts", "run.vgm": "a PostgreSQL model",
    "'request start'": "the reader's own log events", "PID": "a pid the reader looks up",
    "--from A --to B": "events the reader names", "vigild -o traces": "vigild's fixed port",
    "traces/": "what a vigild on its fixed port collected", "COMMAND": "a command to name",
    "--from-trace ample": "recordings of a PostgreSQL server (usdt.bufferpool runs them)",
    "ample.vgm small.vgm": "models of a PostgreSQL server (usdt.bufferpool runs them)",
}


def help_examples(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    text = p.stdout + p.stderr
    m = re.search(r"^examples:\n(.*?)(?:\n\n|\Z)", text, re.S | re.M)
    if not m:
        return []
    out = []
    for line in m.group(1).splitlines():
        if re.match(r"^  \S", line):
            out.append(line[2:])
        elif re.match(r"^   +\S", line) and out:
            out[-1] += "\n" + line
    return [strip_description(e) for e in out]


def strip_description(example):
    """The command without its description: up to two spaces outside quotes."""
    quote = None
    for i, c in enumerate(example):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif example.startswith("  ", i) and "\n" not in example[i:i + 2]:
            return example[:i].rstrip()
    return example.rstrip()


def doc_blocks():
    """(name, [(command, expected output or None)]) of each docs block of commands."""
    for f in sorted(os.listdir(os.path.join(SRC, "docs"))):
        if not f.endswith(".md"):
            continue
        with open(os.path.join(SRC, "docs", f)) as fh:
            text = fh.read()
        for n, (lang, body) in enumerate(re.findall(r"^```(\w*)\n(.*?)^```", text,
                                                    re.S | re.M), 1):
            if lang not in ("", "sh"):
                continue
            lines = body.splitlines()
            cmd_re = r"^(\$ )?(vigil|vigild|sqlite3|babeltrace2|VIGIL_\w+=\S* vigil) "
            if not lines or not re.match(cmd_re, lines[0]):
                continue
            # A synopsis (vigil query TRACE (-e ...) ...) is not an example.
            if any(re.search(r"\b[A-Z]{3,}\b(?!=)", l.split("#")[0]) and
                   not re.search(r"'[^']*[A-Z]{3,}", l) for l in lines
                   if re.match(cmd_re, l) and "VIGIL_" not in l):
                continue
            steps = []
            for l in lines:
                if l.startswith("$ "):
                    # What a terminal shows: vigil query prints a table there.
                    cmd = l[2:]
                    if cmd.startswith("vigil query ") and "--format" not in cmd:
                        cmd += " --format table"
                    steps.append([cmd, []])
                elif steps and steps[-1][1] is not None and not re.match(cmd_re, l) \
                        and lines[0].startswith("$ "):
                    steps[-1][1].append(l)
                elif re.match(r"^\s+\S", l) and steps:
                    steps[-1][0] += "\n" + l
                else:
                    steps.append([l, None])
            yield f"docs/{f} block {n}", [(c, o if lines[0].startswith("$ ") else None)
                                          for c, o in steps]


def placeholder(text):
    for p, why in PLACEHOLDERS.items():
        if p in text:
            return f"{p}: {why}"
    return None


def normalise(lines):
    return [re.sub(r"\s+", " ", re.sub(r"\d+\.\d+", "T", l)).strip() for l in lines
            if l.strip()]


class Fixtures:
    """Made once, linked into each source's folder."""

    def __init__(self, root):
        self.root = os.path.join(root, "fixtures")
        os.mkdir(self.root)
        os.symlink(os.path.join(BIN, "mailbox"), os.path.join(self.root, "mailbox"))
        os.symlink(os.path.join(SRC, "examples/mailbox/mailbox.vgl"),
                   os.path.join(self.root, "mailbox.vgl"))
        with open(os.path.join(SRC, "README.md")) as f:
            tq = re.search(r"<<'EOF'\n(.*?)^EOF", f.read(), re.S | re.M).group(1)
        for name in ("resumed.tq", "q.tq"):
            with open(os.path.join(self.root, name), "w") as f:
                f.write(tq)
        for name, seed in (("run1", "2"), ("run2", "3")):
            self.run(["vigil", "record", "-q", "-o", name, "--", "./mailbox", "--seed", seed])
        for name, trace in (("base.vgm", "run1"), ("slow.vgm", "run2"), ("run1.vgm", "run1"),
                            ("sensors.vgm", "run1"), ("old.vgm", "run2")):
            self.run(["vigil", "model", "--from-trace", trace, "-o", name])

    def run(self, argv):
        p = subprocess.run(argv, cwd=self.root, capture_output=True, text=True, timeout=120,
                           env=env())
        if p.returncode:
            raise SystemExit(f"FAIL: fixture {' '.join(argv)}: {p.stderr}")

    def link(self, folder, text):
        for name in os.listdir(self.root):
            if not re.search(r"-o\s+" + re.escape(name) + r"(\s|$)", text):
                os.symlink(os.path.join(self.root, name), os.path.join(folder, name))


def env():
    e = dict(os.environ)
    e["PATH"] = BIN + ":" + e.get("PATH", "")
    for k in list(e):
        if k.startswith("VIGIL_") and k not in ("VIGIL_BIN", "VIGIL_SRC"):
            del e[k]
    return e


def run_source(work, fix, name, steps):
    """None, or why the source failed. steps: [(command, expected output or None)]."""
    folder = os.path.join(work, re.sub(r"\W+", "_", name))
    os.mkdir(folder)
    os.symlink(os.path.dirname(BIN), os.path.join(folder, "build"))
    os.symlink(os.path.join(SRC, "examples"), os.path.join(folder, "examples"))
    fix.link(folder, "\n".join(c for c, _ in steps))
    script = ["set -o pipefail",
              "trap 'for j in $(jobs -p); do kill $j 2>/dev/null; done; wait' EXIT"]
    for i, (cmd, _) in enumerate(steps):
        script += [f"echo '@@{i}' >&2; echo '@@{i}'", cmd,
                   f"rc=$?; if [ $rc != 0 ]; then echo \"@@failed {i} $rc\" >&2; exit 1; fi"]
    p = subprocess.run(["bash", "-c", "\n".join(script)], cwd=folder, capture_output=True,
                       text=True, timeout=240, env=env())
    outs = re.split(r"^@@\d+\n", p.stdout, flags=re.M)[1:]
    errs = re.split(r"^@@\d+\n", p.stderr, flags=re.M)[1:]
    m = re.search(r"^@@failed (\d+) (\d+)", p.stderr, re.M)
    if m:
        i = int(m.group(1))
        return f"`{steps[i][0]}` exited {m.group(2)}: {errs[i][-600:]}"
    if p.returncode:
        return f"bash exited {p.returncode}: {p.stderr[-600:]}"
    for i, (cmd, want) in enumerate(steps):
        bad = [l for l in errs[i].splitlines() if re.search(r"\berror|\bfail", l, re.I)]
        if bad:
            return f"`{cmd}` said: {bad[:3]}"
        asks = re.search(r"vigil (query|watch) .*resumed\.tq", cmd) and not re.search(
            r"--stats|--into|>", cmd)
        if asks and not re.search(r"ResumedbyP1 \(event relation, [1-9]|\"ResumedbyP1\"",
                                  outs[i]):
            return f"`{cmd}` answered no ResumedbyP1 tuple: {outs[i][-300:]!r}"
        if want and normalise(outs[i].splitlines()) != normalise(want):
            return f"`{cmd}` printed:\n{outs[i]}\nthe text shows:\n" + "\n".join(want)
    return None


def main():
    work = tempfile.mkdtemp(prefix="vigil-examples-")
    # caches the examples fill (vigil usdt plan's plan cache, docs/usdt.md) stay in ours
    os.environ["XDG_CACHE_HOME"] = os.path.join(work, "cache")
    failures, ran, skipped = [], 0, 0
    try:
        fix = Fixtures(work)
        sources = [("vigil --help", help_examples([os.path.join(BIN, "vigil"), "--help"])),
                   ("vigild --help", help_examples([os.path.join(BIN, "vigild"), "--help"]))]
        sources += [(f"vigil {c} --help", help_examples([os.path.join(BIN, "vigil"), c,
                                                          "--help"])) for c in COMMANDS]
        sources = [(n, [(e, None) for e in ex]) for n, ex in sources]
        docs = list(doc_blocks())
        for name, steps in sources + docs:
            if name.startswith("docs/"):
                why = placeholder("\n".join(c for c, _ in steps))
                if why:
                    print(f"skipped {name}: {why}")
                    skipped += len(steps)
                    continue
            else:
                keep = []
                for cmd, want in steps:
                    why = placeholder(cmd)
                    if why:
                        print(f"skipped {name}: `{cmd}`: {why}")
                        skipped += 1
                    else:
                        keep.append((cmd, want))
                steps = keep
            if not steps:
                continue
            fail = run_source(work, fix, name, steps)
            if fail:
                failures.append(f"{name}: {fail}")
            ran += len(steps)
            print(f"{'FAIL' if fail else 'ok'} {name}: {len(steps)} examples")
    finally:
        if failures:
            print("FAIL:\n" + "\n".join(failures) + f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        return 1
    if ran < 40:
        print(f"FAIL: only {ran} examples ran: the texts changed shape?")
        return 1
    print(f"ok: {ran} examples ran as written, {skipped} skipped (named above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
