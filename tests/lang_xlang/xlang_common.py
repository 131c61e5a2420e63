"""Shared by the cross-language test harness and its Python driver: test vectors and the
canonical form of decoded values every driver prints (so that values compare exactly).

Vectors (JSON): {"records": [{"type": T, "values": {field: v}, "expect": {field: v},
"hex": "..."}]}. `values` are what the writer sets (fields left out keep their
defaults); `expect` what a reader must decode where it differs from `values` (cuts,
defaults). `hex`, if present, is the record's exact encoding, written by hand from
docs/encoding.md. Value forms: integers as JSON numbers; float64 as a number or "inf",
"-inf", "nan", "-0.0"; bool; string; bytes as hex; entity as [id, gen].

Canonical form: integers as numbers (unsigned for uintN), float64 as the 16 hex digits
of its bits, bool, string, bytes as hex, entity as [id, gen] (unsigned)."""
import json
import struct

INT_TYPES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


def int_range(t):
    bits = int(t.lstrip("uint"))
    if t.startswith("u"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def to_float(v):
    return float(v)  # float("inf"), float("-0.0"), float("nan") and numbers


def float_bits(v):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", to_float(v)))[0]


def canon(t, v):
    """A value given in a vector (or decoded by Python) in canonical form."""
    if t in INT_TYPES:
        return int(v)
    if t == "float64":
        return float_bits(v)
    if t == "bool":
        return bool(v)
    if t == "string":
        return v
    if t == "bytes":
        return v.hex() if isinstance(v, (bytes, bytearray)) else v.lower()
    if t == "entity":
        return [int(v[0]), int(v[1])] if isinstance(v, list) else [v.id, v.gen]
    raise ValueError(f"unknown type {t}")


def load_vectors(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)["records"]


def expected(vectors, fields_of):
    """The canonical values a reader must decode for each vector. fields_of(type) gives
    the record's (name, type) pairs; every field needs a value or an expectation."""
    out = []
    for i, vec in enumerate(vectors):
        vals = {}
        for name, t in fields_of(vec["type"]):
            if name in vec.get("expect", {}):
                vals[name] = canon(t, vec["expect"][name])
            elif name in vec.get("values", {}):
                vals[name] = canon(t, vec["values"][name])
            else:
                raise ValueError(f"vector {i} ({vec['type']}): field {name} has no value "
                                 "and no expectation")
        out.append({"type": vec["type"], "values": vals})
    return out
