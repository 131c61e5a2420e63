"""A throw-away PostgreSQL server for tests/logmodel/postgres.py and bench/logmodel_pg.py:
initdb into a temporary directory, a unix socket in that directory (no TCP), the server
optionally under `vigil record` with the logging adapter (pg_vigil_log.so) preloaded by
shared_preload_libraries, pgbench and psql as clients.

PostgreSQL refuses to run as root: as root, initdb and the server run as the `postgres`
system user (else `nobody`) through runuser, in a directory given to that user. Only
Debian's binaries are used (--pg-bin /usr/lib/postgresql/VER/bin), never /usr/local."""
import os
import pwd
import random
import shutil
import subprocess
import tempfile
import time


class PgError(Exception):
    pass


def newest_pg_bin(need="initdb"):
    """The bin directory of Debian's newest PostgreSQL with the program `need`, or None."""
    import glob
    found = []
    for b in glob.glob("/usr/lib/postgresql/*/bin"):
        ver = os.path.basename(os.path.dirname(b))
        if ver.isdigit() and os.path.exists(os.path.join(b, need)):
            found.append((int(ver), b))
    return max(found)[1] if found else None


class PgServer:
    def __init__(self, pg_bin, vigil_bin, adapter=None, syslog_sink=None, keep=None):
        self.pg_bin = pg_bin
        self.vigil = os.path.join(vigil_bin, "vigil")
        self.adapter = adapter
        self.syslog_sink = syslog_sink
        self.prefix = []
        self.user = None
        if os.geteuid() == 0:
            for u in ("postgres", "nobody"):
                try:
                    pwd.getpwnam(u)
                    self.user = u
                    break
                except KeyError:
                    pass
            if not self.user or not shutil.which("runuser"):
                raise PgError("running as root, and no postgres/nobody user or no runuser")
            self.prefix = ["runuser", "-u", self.user, "--"]
        if keep:
            os.makedirs(keep, exist_ok=True)
            self.dir = keep
        else:
            self.dir = tempfile.mkdtemp(prefix="vigil-pg-")
        self.keep = keep
        os.chmod(self.dir, 0o755)
        if self.user:
            pw = pwd.getpwnam(self.user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        self.data = os.path.join(self.dir, "data")
        self.port = str(random.Random(os.getpid()).randrange(20000, 60000))
        self.proc = None
        self.out = None

    def path(self, name):
        return os.path.join(self.dir, name)

    def bin(self, name):
        return os.path.join(self.pg_bin, name)

    def as_user(self, cmd, **kw):
        r = subprocess.run(self.prefix + cmd, capture_output=True, text=True, **kw)
        if r.returncode:
            raise PgError("%s exited %d: %s" % (" ".join(cmd), r.returncode,
                                                (r.stderr or r.stdout)[-2000:]))
        return r

    def initdb(self, conf):
        """initdb, then `conf` (a dict) appended to postgresql.conf."""
        self.as_user([self.bin("initdb"), "-D", self.data, "-A", "trust", "-U", "postgres",
                      "--no-sync", "-E", "UTF8", "--locale=C"])
        self.set_conf(conf)

    def set_conf(self, conf):
        """Appends settings to postgresql.conf (the last occurrence wins)."""
        base = {"listen_addresses": "''", "unix_socket_directories": "'%s'" % self.dir,
                "port": self.port}
        if self.adapter:
            base["shared_preload_libraries"] = "'%s'" % self.adapter
        base.update(conf)
        # The file belongs to the server's user: append through it.
        text = "".join("%s = %s\n" % kv for kv in base.items())
        subprocess.run(self.prefix + ["sh", "-c", 'cat >> "$1"', "sh",
                                      os.path.join(self.data, "postgresql.conf")],
                       input=text, text=True, check=True)

    def start(self, record=None, env=None, out="server.out", record_args=()):
        """Starts the server (under `vigil record -o RECORD [RECORD_ARGS]` when given); its
        stdout and stderr go to DIR/OUT. Returns when it accepts connections."""
        env_args = ["%s=%s" % kv for kv in (env or {}).items()]
        if self.syslog_sink:
            env_args += ["LD_PRELOAD=" + self.syslog_sink,
                         "LOGMODEL_SYSLOG_FILE=" + self.path("syslog.txt")]
        cmd = [self.bin("postgres"), "-D", self.data]
        if record:
            cmd = [self.vigil, "record", "-q", "-o", record] + list(record_args) + ["--"] + cmd
        self.out = self.path(out)
        f = open(self.out, "ab")
        self.proc = subprocess.Popen(self.prefix + ["env"] + env_args + cmd, stdout=f,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        f.close()
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise PgError("the server exited %d; see %s:\n%s" %
                              (self.proc.returncode, self.out, self.tail()))
            r = subprocess.run([self.bin("pg_isready"), "-q", "-h", self.dir, "-p",
                                self.port, "-U", "postgres"], capture_output=True)
            if r.returncode == 0:
                return
            time.sleep(0.2)
        raise PgError("the server did not accept connections in 60 s:\n" + self.tail())

    def tail(self):
        try:
            with open(self.out, errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def reload(self):
        self.as_user([self.bin("pg_ctl"), "reload", "-s", "-D", self.data])

    def stop(self):
        if not self.proc:
            return
        subprocess.run(self.prefix + [self.bin("pg_ctl"), "stop", "-s", "-D", self.data,
                                      "-m", "fast", "-t", "60"], capture_output=True)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def client(self, name):
        return [self.bin(name), "-h", self.dir, "-p", self.port, "-U", "postgres"]

    def psql(self, sql, check=True):
        r = subprocess.run(self.client("psql") + ["-X", "-q", "-At", "-c", sql, "postgres"],
                           capture_output=True, text=True)
        if check and r.returncode:
            raise PgError("psql %r: %s" % (sql, r.stderr))
        return r

    def psql_session(self):
        """A psql reading statements from a pipe (one connection for the whole run)."""
        return subprocess.Popen(self.client("psql") + ["-X", "-q", "postgres"],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, text=True)

    def pgbench_start(self, args):
        """Starts pgbench ARGS; communicate() gives its output."""
        return subprocess.Popen(self.client("pgbench") + args + ["postgres"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def pgbench(self, args, every=None, statement=None):
        """Runs pgbench ARGS; with `every` seconds and `statement`, a psql session sends
        the statement at that period while pgbench runs. Returns pgbench's stdout."""
        p = subprocess.Popen(self.client("pgbench") + args + ["postgres"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        side = self.psql_session() if every else None
        if side:
            next_t = time.time() + every
            while p.poll() is None:
                time.sleep(max(0.0, min(0.05, next_t - time.time())))
                if time.time() >= next_t and p.poll() is None:
                    side.stdin.write(statement + "\n")
                    side.stdin.flush()
                    next_t += every
            side.stdin.close()
            side.wait()
        out, err = p.communicate()
        if p.returncode:
            raise PgError("pgbench %s exited %d: %s" % (" ".join(args), p.returncode, err))
        return out

    def cleanup(self):
        self.stop()
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def tps(pgbench_out):
    for line in pgbench_out.splitlines():
        if line.startswith("tps = "):
            return float(line.split()[2])
    raise PgError("no tps in pgbench's output:\n" + pgbench_out)
