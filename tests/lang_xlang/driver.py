"""Python driver of the cross-language tests: writes test vectors with a module that
`vigil gen --lang python` generated, and reads such files back in canonical form.

  driver.py write DIR MODULE VECTORS OUT.bin
  driver.py read DIR MODULE VECTORS IN.bin OUT.json
  driver.py range DIR MODULE RECORD     every integer field refuses its limits +- 1
"""
import importlib
import json
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

from xlang_common import INT_TYPES, canon, int_range, load_vectors, to_float


def load(moddir, name):
    sys.path.insert(0, moddir)
    return importlib.import_module(name)


def value(t, v, mod):
    if t in INT_TYPES:
        return int(v)
    if t == "float64":
        return to_float(v)
    if t == "bytes":
        return bytes.fromhex(v)
    if t == "entity":
        return mod.EntityRef(int(v[0]), int(v[1]))
    return v  # bool, string


def build(mod, vec):
    cls = mod.RECORDS[vec["type"]]
    rec = cls()
    types = {name: t for name, t, _max in cls.FIELDS}
    for name, v in vec.get("values", {}).items():
        if name not in types:
            raise SystemExit(f"{vec['type']} has no field {name}")
        setattr(rec, name, value(types[name], v, mod))
    return rec


def write(moddir, modname, vectors, out):
    mod = load(moddir, modname)
    with open(out, "wb") as f:
        mod.write_records(f, [build(mod, v) for v in load_vectors(vectors)])


def read(moddir, modname, vectors, path, out):
    mod = load(moddir, modname)
    result = []
    with open(path, "rb") as f:
        for vec in load_vectors(vectors):
            cls = mod.RECORDS[vec["type"]]
            rec = mod.read_record(f, cls)
            if rec is None:
                raise SystemExit(f"{path}: ends before a {vec['type']}")
            result.append({"type": vec["type"],
                           "values": {n: canon(t, getattr(rec, n)) for n, t, _m in cls.FIELDS}})
        if f.read(1):
            raise SystemExit(f"{path}: bytes after the last record")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False)


def check_range(moddir, modname, record):
    mod = load(moddir, modname)
    cls = mod.RECORDS[record]
    checked = 0
    for name, t, _max in cls.FIELDS:
        if t not in INT_TYPES:
            continue
        lo, hi = int_range(t)
        for v, ok in ((lo, True), (hi, True), (lo - 1, False), (hi + 1, False)):
            rec = cls()
            setattr(rec, name, v)
            try:
                rec.encode()
                refused = False
            except ValueError:
                refused = True
            if refused == ok:
                raise SystemExit(f"{record}.{name} ({t}) = {v}: "
                                 f"{'refused' if refused else 'accepted'}")
            checked += 1
    ref = next((n for n, t, _m in cls.FIELDS if t == "entity"), None)
    if ref:
        for bad in (mod.EntityRef(-1, 0), mod.EntityRef(1 << 64, 0), mod.EntityRef(0, 1 << 32)):
            rec = cls()
            setattr(rec, ref, bad)
            try:
                rec.encode()
                raise SystemExit(f"{record}.{ref} = {bad}: accepted")
            except ValueError:
                checked += 1
    if checked == 0:
        raise SystemExit(f"{record}: no integer field to check")
    print(f"python: {checked} range checks")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"write": write, "read": read, "range": check_range}[cmd](*args)
