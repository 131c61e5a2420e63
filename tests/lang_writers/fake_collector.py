"""A tiny collector for tests/lang_writers (stdlib only): decodes every frame a writer
sends strictly per docs/protocol.md, answers HELLO with WELCOME and RECORDS with ACK, and
drives the probe commands: once the writer's schemas are in, it reads the sensor table
with `list 0` and switches one sensor off with `probe ID off`, then lets the writer go
on (by creating a file). Returns what it saw."""
import socket
import struct
import threading


class ProtocolError(Exception):
    pass


class Reader:
    def __init__(self, data):
        self.d, self.p = data, 0

    def take(self, n):
        if self.p + n > len(self.d):
            raise ProtocolError(f"payload cut short at byte {self.p} (+{n} of {len(self.d)})")
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def str(self):
        return self.take(self.u32()).decode("utf-8")

    def bytes(self):
        return self.take(self.u32())

    def end(self):
        if self.p != len(self.d):
            raise ProtocolError(f"{len(self.d) - self.p} bytes after the payload")


def frame(ftype, payload=b""):
    return struct.pack("<IB", len(payload) + 1, ftype) + payload


def sstr(s):
    b = s.encode()
    return struct.pack("<I", len(b)) + b


class FakeCollector:
    def __init__(self, switch_off, go_file):
        self.switch_off, self.go_file = switch_off, go_file
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.port = self.srv.getsockname()[1]
        self.seen = {"hello": None, "schemas": {}, "records": [], "notes": [], "replies": [],
                     "bye": False, "seqs": [], "error": None}
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def read_frame(self):
        head = self.recv(5)
        n, ftype = struct.unpack("<IB", head)
        if n < 1 or n > 16 << 20:
            raise ProtocolError(f"frame length {n}")
        return ftype, self.recv(n - 1)

    def recv(self, n):
        out = b""
        while len(out) < n:
            chunk = self.conn.recv(n - len(out))
            if not chunk:
                raise EOFError
            out += chunk
        return out

    def control(self, line):
        self.conn.sendall(frame(8, sstr(line)))
        while True:  # other frames may come first; the REPLY answers in order
            ftype, p = self.read_frame()
            if ftype == 9:
                r = Reader(p)
                ans = r.str()
                r.end()
                self.seen["replies"].append((line, ans))
                return ans
            self.handle(ftype, p)

    def handle(self, ftype, p):
        r = Reader(p)
        s = self.seen
        if ftype == 5:  # SCHEMA
            sid, event, rel = r.u16(), r.str(), r.str()
            kind, place, strategy = r.u8(), r.u8(), r.u8()
            fields = [(r.str(), r.u8(), r.str()) for _ in range(r.u16())]
            if kind > 5 or place > 3 or strategy > 2 or any(t > 11 for _n, t, _k in fields):
                raise ProtocolError(f"SCHEMA {sid}: out of range")
            s["schemas"][sid] = (event, rel, kind, place, strategy, fields)
        elif ftype == 6:  # RECORDS
            seq, n = r.u64(), r.u32()
            if s["seqs"] and seq != s["seqs"][-1] + 1:
                raise ProtocolError(f"RECORDS seq {seq} after {s['seqs'][-1]}")
            s["seqs"].append(seq)
            for _ in range(n):
                sid, t, tid, body = r.u16(), r.u64(), r.u32(), r.bytes()
                if sid not in s["schemas"]:
                    raise ProtocolError(f"a record of id {sid} before its SCHEMA")
                s["records"].append((s["schemas"][sid][0], t, tid, body))
            self.conn.sendall(frame(7, struct.pack("<Q", seq)))
        elif ftype == 10:  # NOTE
            s["notes"].append(r.str())
        elif ftype == 11:
            s["bye"] = True
        else:
            raise ProtocolError(f"unexpected frame type {ftype}")
        r.end()

    def serve(self):
        try:
            self.srv.settimeout(150)  # a JVM starting on a loaded machine is slow
            self.conn, _a = self.srv.accept()
            self.conn.settimeout(120)  # a writer that stops answering fails the test
            ftype, p = self.read_frame()
            if ftype != 1:
                raise ProtocolError(f"first frame {ftype}, not HELLO")
            r = Reader(p)
            h = self.seen["hello"] = dict(version=r.u16(), token=r.str(), host=r.str(),
                                          pid=r.u32(), start=r.u64(), program=r.str(),
                                          kind=r.u8())
            if h["version"] >= 2:  # the session's secret: empty on a first HELLO
                h["secret"] = r.bytes()
            r.end()
            # Version 2: WELCOME carries the secret the collector issues.
            self.conn.sendall(frame(2, struct.pack("<QQI", 1, 0, 32) + bytes(range(32))))
            # The table, then one sensor off (twice: the second changes nothing), a bad id.
            table = self.control("list 0")
            ids = {e.split(":")[1]: int(e.split(":")[0]) for e in table.split()[3:]}
            self.seen["table"] = table
            if self.switch_off in ids:
                self.control(f"probe {ids[self.switch_off]} off")
                self.control(f"probe {ids[self.switch_off]} off")
            self.control("probe 65000 on")
            self.control("pattern enable x*")
            open(self.go_file, "w").close()
            while not self.seen["bye"]:
                self.handle(*self.read_frame())
        except EOFError:
            pass
        except Exception as e:  # noqa: BLE001 - reported to the test
            self.seen["error"] = repr(e)
            open(self.go_file, "w").close()
        finally:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001
                pass
            self.srv.close()
