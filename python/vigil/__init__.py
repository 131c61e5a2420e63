"""vigil from Python: a trace's relations, TQuel answers (as rows or a pandas DataFrame)
and its events, computed by the same engine as the `vigil` command (docs/python.md).

    import vigil
    vigil.relations("run1")                  # what `vigil relations --json run1` lists
    vigil.query("run1", "range of W is Waiting retrieve (W.process)")   # rows
    vigil.query("run1", tquel, frame=True)   # a pandas DataFrame with valid-time columns
    for ev in vigil.events("run1"): ...      # what `vigil dump --json run1` prints

The engine is libvigilquery.so, loaded with ctypes: from VIGIL_QUERY_LIB if set, else where
`make install` put it beside this module, else from VIGIL_BIN (a build's bin folder), else
from the loader's path.
"""
import ctypes
import json
import os
import warnings

__all__ = ["Error", "Row", "relations", "query", "events", "library_version"]


class Error(Exception):
    """A trace that cannot be read, or statements that cannot be answered: the message
    is the CLI's (TQuel diagnostics with their caret)."""


class Row:
    """One tuple of an answer: the retrieve's relation, its valid time (ns since the
    epoch: `valid_at` for an event relation; `valid_from`, `valid_to` for an interval
    relation) and its values, by attribute name (row["process"] or row.values)."""

    __slots__ = ("relation", "kind", "valid_from", "valid_to", "values")

    def __init__(self, obj):
        self.relation = obj["relation"]
        self.kind = obj["kind"]
        if self.kind == "event":
            self.valid_from = self.valid_to = obj["at"]
        else:
            self.valid_from, self.valid_to = obj["from"], obj["to"]
        self.values = obj["values"]

    @property
    def valid_at(self):
        return self.valid_from

    def __getitem__(self, name):
        return self.values[name]

    def __eq__(self, other):
        return isinstance(other, Row) and all(
            getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __repr__(self):
        when = (f"at={self.valid_from}" if self.kind == "event"
                else f"from={self.valid_from}, to={self.valid_to}")
        return f"Row({self.relation!r}, {when}, {self.values!r})"


_lib = None


def _library_path():
    env = os.environ.get("VIGIL_QUERY_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from . import _install  # written by `make install`: where it put the library
        return os.path.normpath(os.path.join(here, _install.LIBRARY))
    except ImportError:
        pass
    bin_dir = os.environ.get("VIGIL_BIN")
    if bin_dir:
        return os.path.join(bin_dir, "libvigilquery.so")
    return "libvigilquery.so"


def _load():
    global _lib
    if _lib is not None:
        return _lib
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise Error(f"cannot load the vigil query library {path}: {e} "
                    "(set VIGIL_QUERY_LIB, or VIGIL_BIN to a build's bin folder)") from None
    c_char_pp = ctypes.POINTER(ctypes.c_char_p)
    out = ctypes.POINTER(ctypes.c_void_p)
    lib.vigil_ql_relations.argtypes = [c_char_pp, ctypes.c_size_t, out, out, out]
    lib.vigil_ql_query.argtypes = [c_char_pp, ctypes.c_size_t, ctypes.c_char_p, out, out, out]
    lib.vigil_ql_query_stats.argtypes = [c_char_pp, ctypes.c_size_t, ctypes.c_char_p, out, out,
                                         out, out]
    lib.vigil_ql_relations.restype = lib.vigil_ql_query.restype = ctypes.c_int
    lib.vigil_ql_query_stats.restype = ctypes.c_int
    lib.vigil_ql_events_open.argtypes = [c_char_pp, ctypes.c_size_t, out]
    lib.vigil_ql_events_open.restype = ctypes.c_void_p
    lib.vigil_ql_events_next.argtypes = [ctypes.c_void_p]
    lib.vigil_ql_events_next.restype = ctypes.c_void_p
    lib.vigil_ql_events_close.argtypes = [ctypes.c_void_p]
    lib.vigil_ql_events_close.restype = ctypes.c_void_p
    lib.vigil_ql_free.argtypes = [ctypes.c_void_p]
    lib.vigil_ql_free.restype = None
    lib.vigil_ql_version.restype = ctypes.c_char_p
    _lib = lib
    return lib


def library_version():
    """The version of the engine loaded (vigil --version's)."""
    return _load().vigil_ql_version().decode()


def _traces(trace):
    paths = [trace] if isinstance(trace, (str, bytes, os.PathLike)) else list(trace)
    if not paths:
        raise Error("no trace given")
    enc = [os.fsencode(p) for p in paths]
    return (ctypes.c_char_p * len(enc))(*enc), len(enc)


def _take(lib, ptr):
    """The text of a string the library handed out, freed."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        lib.vigil_ql_free(ptr)


def _call(fn, *args, extra=()):
    lib = _load()
    out, warn, err = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    rc = fn(*args, ctypes.byref(out), ctypes.byref(warn), ctypes.byref(err), *extra)
    text, notes, msg = _take(lib, out), _take(lib, warn), _take(lib, err)
    for line in (notes or "").splitlines():
        warnings.warn(line, stacklevel=3)
    if rc:
        raise Error((msg or "failed").rstrip("\n"))
    return [json.loads(l) for l in text.splitlines() if l]


def relations(trace):
    """Every relation of the trace (one or several trace folders), as dicts:
    name, kind (event, interval, state, entity), attributes [{name, type[, entity]}],
    tuples, open, unmatched_ends, from, to (ns since the epoch); the Clock relation last."""
    arr, n = _traces(trace)
    return _call(_load().vigil_ql_relations, arr, n)


def query(trace, tquel, frame=False, stats=None):
    """Answers the TQuel statements (docs/tquel.md) on the trace: the tuples of every
    retrieve, in order, as Rows; with frame=True a pandas DataFrame instead, one row per
    tuple: `relation`, the valid time as UTC timestamps (`valid_at` when every tuple is
    an event, else `valid_from` and `valid_to`), then one column per attribute. A dict
    given as stats gets what the build read and passed over: "events" read, "cache"
    (warm: the relations cache `vigil query` keeps beside the trace was used; cold:
    built and cached) and "skip" (as `vigil query --stats` says them)."""
    arr, n = _traces(trace)
    lib = _load()
    got = ctypes.c_void_p()
    try:
        found = _call(lib.vigil_ql_query_stats, arr, n, tquel.encode(),
                      extra=(ctypes.byref(got),))
    finally:
        text = _take(lib, got.value)
        if stats is not None and text:
            stats.update(json.loads(text))
    rows = [Row(o) for o in found]
    return _frame(rows) if frame else rows


def _frame(rows):
    import pandas as pd
    events = all(r.kind == "event" for r in rows)
    cols = {"relation": [r.relation for r in rows]}
    if events:
        cols["valid_at"] = pd.to_datetime([r.valid_from for r in rows], unit="ns", utc=True)
    else:
        cols["valid_from"] = pd.to_datetime([r.valid_from for r in rows], unit="ns", utc=True)
        cols["valid_to"] = pd.to_datetime([r.valid_to for r in rows], unit="ns", utc=True)
    names = []
    for r in rows:
        names += [k for k in r.values if k not in names]
    for k in names:
        cols[k] = [r.values.get(k) for r in rows]
    return pd.DataFrame(cols)


def events(trace):
    """The events of the trace in time order, one dict each, as `vigil dump --json`
    prints them: ts, clock, time, host, pid, proc, tid, name, fields (entity references
    as {kind, id, gen, name})."""
    lib = _load()
    arr, n = _traces(trace)
    err = ctypes.c_void_p()
    handle = lib.vigil_ql_events_open(arr, n, ctypes.byref(err))
    if not handle:
        raise Error((_take(lib, err) or "cannot open the trace").rstrip("\n"))
    try:
        while True:
            p = lib.vigil_ql_events_next(handle)
            if not p:
                break
            yield json.loads(_take(lib, p))
    finally:
        for line in (_take(lib, lib.vigil_ql_events_close(handle)) or "").splitlines():
            warnings.warn(line, stacklevel=2)
