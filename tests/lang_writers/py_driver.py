"""The Python side of tests/lang_writers: fires values.json's emissions through the
generated module's Writer, then prints the writer's counts as JSON.

  py_driver.py GEN_DIR VALUES.json TO ENTITIES_JSON send
  py_driver.py GEN_DIR VALUES.json TO - full N MAX_BUFFER   (no collector: drops counted)
  py_driver.py GEN_DIR VALUES.json TO ENTITIES_JSON restart HALF_FILE GO_FILE
  py_driver.py GEN_DIR VALUES.json TO ENTITIES_JSON probes GO_FILE
      (waits for GO_FILE, fires, then a Job record alone)"""
import json
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import wtest_records as w  # noqa: E402


def record(e, ents):
    cls = w.RECORDS[e["record"]]
    kw = {}
    for k, v in e["values"].items():
        if k in ("worker", "queue"):
            v = w.EntityRef(*ents[v]) if v else w.EntityRef()
        elif k == "blob":
            v = bytes.fromhex(v)
        kw[k] = v
    return cls(**kw)


def main():
    gen, values, to, ents_json, mode = sys.argv[1:6]
    emissions = json.load(open(values))["emissions"]
    if mode == "full":
        n, cap = int(sys.argv[6]), int(sys.argv[7])
        wr = w.Writer(to, max_buffer=cap)
        rec = w.Phase(worker=w.EntityRef(1, 2), phase="x")
        queued = sum(wr.emit(rec, "WorkerPhase") for _ in range(n))
        ok = wr.close(timeout=0.2)
        print(json.dumps({"queued": queued, "dropped": wr.dropped, "closed_ok": ok,
                          "error": wr.error}))
        return
    ents = json.loads(ents_json)
    wr = w.Writer(to, token=os.environ.get("WRITER_TOKEN", ""))
    if mode == "restart":
        # Half, acknowledged; the test restarts the collector; then the other half.
        half_file, go_file = sys.argv[6:8]
        half = len(emissions) // 2
        for e in emissions[:half]:
            wr.emit(record(e, ents), e["sensor"])
        flushed = wr.flush(20)
        # Written whole, then renamed: the test polls for the name and must never read a
        # file that exists but is still empty.
        with open(half_file + ".tmp", "w") as f:
            f.write("flushed" if flushed else "not flushed")
        os.rename(half_file + ".tmp", half_file)
        while not os.path.exists(go_file):
            time.sleep(0.02)
        emissions = emissions[half:]
    if mode == "probes":
        while not os.path.exists(sys.argv[6]):
            time.sleep(0.02)
    for e in emissions:
        wr.emit(record(e, ents), e["sensor"])
    if mode == "probes":
        wr.emit(w.Job())
    ok = wr.close(timeout=20)
    print(json.dumps({"sent": wr.sent, "dropped": wr.dropped, "off": wr.off,
                      "closed_ok": ok, "acked_seq": wr.acked_seq, "error": wr.error}))


main()
