"""Debian's nginx on a free loopback port, with Debian's own configuration
(/etc/nginx/nginx.conf: `user www-data;`, `sendfile on;`, its includes) where only the
paths and the server change: pid, logs and temporary files go to the caller's directory,
the sites are replaced by one server on 127.0.0.1:PORT serving DIR/www, and the access
log records each request's bytes ($request_length, $bytes_sent) so that a test can
compare them with a trace. Used by tests/net/record/net_record_test.py (nginx) and
bench/nginx_bench.py."""
import os
import re
import shutil
import socket

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
DEBIAN_CONF = "/etc/nginx/nginx.conf"
LOG_FORMAT = "$request_length $bytes_sent $status"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make(d, files, workers=None, user=None, sendfile=None):
    """Writes DIR/nginx.conf and DIR/www (files: {name: bytes}); returns (conf, port).
    workers/user/sendfile override Debian's settings (the benchmark's one worker); by
    default they are Debian's. Everything nginx must read is world-readable: the
    workers run as www-data."""
    with open(DEBIAN_CONF) as f:
        text = f.read()
    port = free_port()
    www = os.path.join(d, "www")
    os.makedirs(www, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(www, name), "wb") as f:
            f.write(data)
        os.chmod(os.path.join(www, name), 0o644)
    for p in (d, www):
        os.chmod(p, 0o755)
    text = re.sub(r"(?m)^\s*pid\s+[^;]*;", f"pid {d}/nginx.pid;", text)
    text = re.sub(r"(?m)^\s*error_log\s+[^;]*;", f"error_log {d}/error.log;", text)
    text = re.sub(r"(?m)^\s*access_log\s+[^;]*;", f"access_log {d}/access.log bytes;", text)
    text = re.sub(r"(?m)^\s*include\s+/etc/nginx/sites-enabled/[^;]*;", "", text)
    if workers is not None:
        text = re.sub(r"(?m)^\s*worker_processes\s+[^;]*;", f"worker_processes {workers};", text)
    if user is not None:
        text = re.sub(r"(?m)^\s*user\s+[^;]*;", f"user {user};", text)
    if sendfile is not None:
        text = re.sub(r"(?m)^\s*sendfile\s+[^;]*;", f"sendfile {sendfile};", text)
    server = f"""
	log_format bytes '{LOG_FORMAT}';
	client_body_temp_path {d}/client_body;
	proxy_temp_path {d}/proxy;
	fastcgi_temp_path {d}/fastcgi;
	uwsgi_temp_path {d}/uwsgi;
	scgi_temp_path {d}/scgi;
	server {{
		listen 127.0.0.1:{port};
		root {www};
		location / {{ }}
	}}
"""
    i = text.index("http {") + len("http {")
    text = text[:i] + server + text[i:]
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write(text)
    return conf, port


def command(conf, d):
    """nginx in the foreground (its master is the process started), errors to DIR."""
    return [NGINX, "-c", conf, "-e", f"{d}/error.log", "-g", "daemon off;"]


def access_log(d):
    """[(request_length, bytes_sent, status)] per logged request."""
    out = []
    with open(os.path.join(d, "access.log")) as f:
        for line in f:
            a, b, s = line.split()
            out.append((int(a), int(b), int(s)))
    return out
