"""What the watch tests share: reading `vigil watch`'s outputs."""
import collections
import json


def values(text):
    """The explicit values of the JSON tuples in text, counted."""
    c = collections.Counter()
    for line in text.splitlines():
        if line.startswith("{"):
            c[json.dumps(json.loads(line)["values"], sort_keys=True)] += 1
    return c


def stats_of(err):
    """The --stats object on stderr, or None."""
    for line in err.splitlines():
        if line.startswith('{"watch"'):
            return json.loads(line)["watch"]
    return None
