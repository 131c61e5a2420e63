"""Cross-language tests of the generated record code (issue 3): the real `vigil gen`
($VIGIL_BIN/vigil) generates Python, Java, C and Perl from the same .vgl; a driver per language
writes the same vectors; the files must be byte-identical (and equal to the encodings
written by hand in the vectors), and every language must read every other's file back to
the expected values. Also: schema evolution across languages, integer range checks,
malformed input.

  run_xlang.py vectors | evolution | range | malformed | handmodel
"""
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from xlang_common import expected, load_vectors  # noqa: E402

BIN = os.environ.get("VIGIL_BIN", "build/bin")
VIGIL = os.path.join(BIN, "vigil")
SRC = os.environ.get("VIGIL_SRC", os.path.dirname(os.path.dirname(HERE)))
LANGS = ("python", "java", "c", "perl")
PERL = "/usr/bin/perl"


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if p.returncode != 0:
        raise Failure(f"{' '.join(cmd)} exited {p.returncode}\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    return p


class Schema:
    """One .vgl file generated for every language into its own folder."""

    def __init__(self, work, vgl, pkg):
        self.pkg, self.dir = pkg, os.path.join(work, pkg)
        run([VIGIL, "gen", os.path.join(HERE, vgl), "-l", "python", "-l", "java", "-l", "c",
             "-l", "perl", "-o", self.dir])
        run([PERL, "-wc", "-I", self.dir, os.path.join(self.dir, f"{pkg}_records.pm")])
        self.module = f"{pkg}_records"
        sys.path.insert(0, self.dir)
        self.py = __import__(self.module)

    def fields(self, rtype):
        return [(n, t) for n, t, _m in self.py.RECORDS[rtype].FIELDS]

    def java_sources(self):
        out = []
        for root, _dirs, files in os.walk(os.path.join(self.dir, "vigil")):
            out += [os.path.join(root, f) for f in files if f.endswith(".java")]
        check(out, f"no Java source generated in {self.dir}")
        return out

    def c_driver(self, vectors, name):
        """The C driver for `vectors`, compiled against this schema's generated C."""
        src = os.path.join(self.dir, f"{name}.c")
        exe = os.path.join(self.dir, name)
        run([sys.executable, os.path.join(HERE, "make_c_driver.py"), self.dir, self.module,
             self.pkg, vectors, src])
        # Warnings of the generated C are the C generator's tests' business: shown, not fatal.
        p = run(["cc", "-std=gnu11", "-O1", "-Wall", "-Wextra", f"-I{self.dir}", f"-I{HERE}",
                 f"-I{SRC}/include", "-o", exe, src, os.path.join(self.dir, f"{self.pkg}_sensors.c")])
        if p.stderr:
            print(f"(C compiler warnings for {self.pkg}, not fatal)\n{p.stderr[-1500:]}")
        return exe


def compile_java(work, schemas):
    """All generated classes and the driver in one javac call."""
    classes = os.path.join(work, "classes")
    srcs = [os.path.join(HERE, "XlangDriver.java")]
    for s in schemas:
        srcs += s.java_sources()
    run(["javac", "-nowarn", "-d", classes] + srcs)
    return classes


class Drivers:
    """write(lang, vectors, out) and read(lang, vectors, inp) -> canonical values."""

    def __init__(self, work, schema, classes, vectors, tag):
        self.work, self.s, self.classes, self.tag = work, schema, classes, tag
        self.cexe = schema.c_driver(vectors, f"cdriver_{tag}")
        self.vectors = vectors

    def write(self, lang, out):
        if lang == "python":
            run([sys.executable, os.path.join(HERE, "driver.py"), "write", self.s.dir,
                 self.s.module, self.vectors, out])
        elif lang == "java":
            run(["java", "-cp", self.classes, "XlangDriver", "write", self.s.pkg, self.vectors,
                 out])
        elif lang == "perl":
            run([PERL, os.path.join(HERE, "driver.pl"), "write", self.s.dir, self.s.module,
                 self.vectors, out])
        else:
            run([self.cexe, "write", out])

    def read(self, lang, inp):
        out = os.path.join(self.work, f"read_{self.tag}_{lang}_{os.path.basename(inp)}.json")
        if lang == "python":
            run([sys.executable, os.path.join(HERE, "driver.py"), "read", self.s.dir,
                 self.s.module, self.vectors, inp, out])
        elif lang == "java":
            run(["java", "-cp", self.classes, "XlangDriver", "read", self.s.pkg, self.vectors,
                 inp, out])
        elif lang == "perl":
            run([PERL, os.path.join(HERE, "driver.pl"), "read", self.s.dir, self.s.module,
                 self.vectors, inp, out])
        else:
            run([self.cexe, "read", inp, out])
        with open(out, encoding="utf-8") as f:
            got = json.load(f)
        for rec in got:  # the C driver prints a string's bytes; decode them as the others do
            for k, v in rec["values"].items():
                if isinstance(v, dict) and "hex" in v:
                    rec["values"][k] = bytes.fromhex(v["hex"]).decode("utf-8", "replace")
        return got


def records_of(data):
    """The standalone records of a file, as byte strings."""
    out, off = [], 0
    while off < len(data):
        check(len(data) - off >= 4, f"a cut length at byte {off}")
        n = 4 + int.from_bytes(data[off:off + 4], "little")
        check(len(data) - off >= n, f"a cut record at byte {off}")
        out.append(data[off:off + n])
        off += n
    return out


def differing(cls, a, b):
    """Which fields of two encodings of a record differ, as Python decodes them."""
    try:
        ra, rb = cls.decode(a)[0], cls.decode(b)[0]
    except ValueError as e:
        return f"(one does not decode: {e})"
    diff = [f"{n}: {getattr(ra, n)!r:.60} vs {getattr(rb, n)!r:.60}" for n, _t, _m in cls.FIELDS
            if repr(getattr(ra, n)) != repr(getattr(rb, n))]
    return "differing fields: " + ("; ".join(diff) or "none (the lengths differ)")


def compare_reads(got, want, who):
    check(len(got) == len(want), f"{who}: {len(got)} records read, {len(want)} expected")
    for i, (g, w) in enumerate(zip(got, want)):
        check(g["type"] == w["type"], f"{who}: record {i} is {g['type']}, expected {w['type']}")
        for k in w["values"]:
            check(k in g["values"], f"{who}: record {i} ({w['type']}) has no field {k}")
            check(g["values"][k] == w["values"][k],
                  f"{who}: record {i} ({w['type']}).{k} = {g['values'][k]!r}, "
                  f"expected {w['values'][k]!r}")
        check(set(g["values"]) == set(w["values"]),
              f"{who}: record {i} fields {sorted(g['values'])}, expected {sorted(w['values'])}")


def write_all(work, drivers, tag):
    files = {}
    for lang in LANGS:
        files[lang] = os.path.join(work, f"{tag}_{lang}.bin")
        drivers.write(lang, files[lang])
    return files


def test_vectors(work):
    s = Schema(work, "xlang.vgl", "xlang")
    vectors = os.path.join(HERE, "vectors.json")
    vecs = load_vectors(vectors)
    d = Drivers(work, s, compile_java(work, [s]), vectors, "xlang")
    files = write_all(work, d, "xlang")
    data = {lang: open(p, "rb").read() for lang, p in files.items()}
    py = records_of(data["python"])
    check(len(py) == len(vecs), f"python wrote {len(py)} records for {len(vecs)} vectors")
    for i, vec in enumerate(vecs):  # the encodings written by hand from docs/encoding.md
        if "hex" in vec:
            check(py[i].hex() == vec["hex"],
                  f"record {i} ({vec['type']}): python wrote {py[i].hex()}, "
                  f"docs/encoding.md says {vec['hex']}")
    for lang in LANGS[1:]:
        other = records_of(data[lang])
        check(len(other) == len(py), f"{lang} wrote {len(other)} records, python {len(py)}")
        for i, (a, b) in enumerate(zip(py, other)):
            check(a == b, f"record {i} ({vecs[i]['type']}): python {a.hex()}\n{lang:>6} {b.hex()}"
                  f"\n{differing(s.py.RECORDS[vecs[i]['type']], a, b)}")
        check(data[lang] == data["python"], f"{lang} and python files differ")
    want = expected(vecs, s.fields)
    for reader in LANGS:
        for writer in LANGS:
            compare_reads(d.read(reader, files[writer]), want, f"{reader} reading {writer}'s file")
    print(f"{len(vecs)} records, {len(data['python'])} bytes: identical in {', '.join(LANGS)}; "
          f"each language reads each file back")


def test_evolution(work):
    v1 = Schema(work, "evo_v1.vgl", "evo1")
    v2 = Schema(work, "evo_v2.vgl", "evo2")
    classes = compile_java(work, [v1, v2])
    vec1, vec2 = os.path.join(HERE, "evo_v1.json"), os.path.join(HERE, "evo_v2.json")
    # Writers of each version; the vectors of one version read with the other's reader.
    w1 = Drivers(work, v1, classes, vec1, "w1")
    w2 = Drivers(work, v2, classes, vec2, "w2")
    r1 = Drivers(work, v1, classes, vec2, "r1")  # v1 reader, records as v2 wrote them
    r2 = Drivers(work, v2, classes, vec1, "r2")  # v2 reader, records as v1 wrote them
    old, new = write_all(work, w1, "v1"), write_all(work, w2, "v2")
    for lang in LANGS[1:]:
        check(open(old[lang], "rb").read() == open(old["python"], "rb").read(), f"v1: {lang} differs")
        check(open(new[lang], "rb").read() == open(new["python"], "rb").read(), f"v2: {lang} differs")
    n1, n2 = len(open(old["python"], "rb").read()), len(open(new["python"], "rb").read())
    check(n2 > n1, f"v2 data ({n2} bytes) is not longer than v1 data ({n1} bytes)")
    vecs1, vecs2 = load_vectors(vec1), load_vectors(vec2)
    # A v2 reader on v1 data: the new property takes its default (evo_v2.json's
    # expect_on_v1_data); vectors of both versions come in the same order.
    check(any(v.get("expect_on_v1_data") for v in vecs2), "evo_v2.json sets no default to check")
    merged = [dict(a, expect={**a.get("expect", {}), **b.get("expect_on_v1_data", {})})
              for a, b in zip(vecs1, vecs2)]
    want_new_on_old = expected(merged, v2.fields)
    # A v1 reader on v2 data: the fields it knows, the new one skipped.
    want_old_on_new = expected(vecs2, v1.fields)
    for reader in LANGS:
        for writer in LANGS:
            compare_reads(r2.read(reader, old[writer]), want_new_on_old,
                          f"v2 {reader} reading v1 {writer}'s file")
            compare_reads(r1.read(reader, new[writer]), want_old_on_new,
                          f"v1 {reader} reading v2 {writer}'s file")
    print(f"v1 ({n1} bytes) and v2 ({n2} bytes) files read by both versions in {', '.join(LANGS)}")


def test_range(work):
    s = Schema(work, "xlang.vgl", "xlang")
    classes = compile_java(work, [s])
    for rec in ("Ints", "Urgent"):
        print(run([sys.executable, os.path.join(HERE, "driver.py"), "range", s.dir, s.module,
                   rec]).stdout.strip())
        print(run(["java", "-cp", classes, "XlangDriver", "range", "xlang", rec]).stdout.strip())
        print(run([PERL, os.path.join(HERE, "driver.pl"), "range", s.dir, s.module,
                   rec]).stdout.strip())


def test_malformed(work):
    s = Schema(work, "xlang.vgl", "xlang")
    classes = compile_java(work, [s])
    n = 0
    for name, cls in s.py.RECORDS.items():
        whole = cls().encode()
        for cut in range(len(whole)):  # the length promises more than there is
            try:
                cls.decode(whole[:cut])
                raise Failure(f"python: {name} cut to {cut} bytes decodes")
            except ValueError:
                n += 1
        print(run(["java", "-cp", classes, "XlangDriver", "malformed", "xlang", name]).stdout.strip())
    texts = s.py.RECORDS["Texts"]
    for bad in ("0200000061", "0500000000ffffffff", "0300000000000000"):  # no 0 byte; bytes too long; cut length
        try:
            texts.decode(bytes.fromhex(bad))
            raise Failure(f"python: Texts {bad} decodes")
        except ValueError:
            n += 1
    rec, used = texts.decode(bytes.fromhex("0300000061620099"), 0)  # a string, then nothing
    check(rec.s == "ab" and rec.b == b"" and used == 7, f"python: short Texts: {rec}, {used}")
    print(f"python: {n} malformed records refused")


def test_handmodel(work):
    exe = os.path.join(BIN, "lang_handmodel")
    out = os.path.join(work, "hand")
    p = run([exe, out])
    print(p.stdout.strip())
    sys.path.insert(0, out)
    import hand_records as h

    golden = ("4800000080ffffffffffffffff000000000000008068c3a90a000300000000ff22000000000000"
              "00000000000001000000000000f0ff00000000000000000000000000000007000000ffffff")
    c = h.Child()
    check(c.encode().hex() == golden, f"python Child(): {c.encode().hex()}\n    expected {golden}")
    check(isinstance(c, h.Base) and [f[0] for f in h.Child.FIELDS][-4:] ==
          ["other", "class_", "encode_", "int"], f"python names: {h.Child.FIELDS}")
    check(h.RECORDS["Child"] is h.Child and h.Child.__mro__[1] is h.Base, "python: Child(Base)")
    back, used = h.Child.decode(bytes.fromhex(golden))
    c.s = "h\u00e9\n"  # the default cut to its max, 4 bytes
    check(back == c and used == len(golden) // 2, f"python decode: {back} {used}")
    base, used = h.Base.decode(bytes.fromhex(golden))  # a parent reader skips the child's fields
    check(used == len(golden) // 2 and base.s == "h\u00e9\n" and base.inf == float("-inf"),
          f"python Base from a Child: {base}")
    classes = os.path.join(work, "hand_classes")
    srcs = [os.path.join(r, f) for r, _d, fs in os.walk(os.path.join(out, "vigil")) for f in fs]
    run(["javac", "-nowarn", "-d", classes, os.path.join(HERE, "HandCheck.java")] + srcs)
    got = run(["java", "-cp", classes, "HandCheck", golden]).stdout.split()
    check(got[0] == golden, f"java new Child(): {got[0]}\n  expected {golden}")
    check(got[1:] == ["ok"], f"java: {got[1:]}")
    print("hand model: python and java match the golden encoding")


TESTS = {"vectors": test_vectors, "evolution": test_evolution, "range": test_range,
         "malformed": test_malformed, "handmodel": test_handmodel}

if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else None
    if name not in TESTS:
        sys.exit(f"usage: run_xlang.py {'|'.join(TESTS)}")
    work = tempfile.mkdtemp(prefix=f"vigil-xlang-{name}-")
    try:
        TESTS[name](work)
    except Failure as e:
        print(f"FAIL {name}: {e}\n(files kept in {work})")
        sys.exit(1)
    shutil.rmtree(work)
    print(f"PASS {name}")
