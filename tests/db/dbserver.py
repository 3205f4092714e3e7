#!/usr/bin/env python3
"""Throw-away PostgreSQL and MariaDB servers for tests (Python 3.11 stdlib only).

Needs Debian's `postgresql` and `mariadb-server` (`bash tests/db/install.sh` installs them).
Each server runs on 127.0.0.1 on a free port with its data in a temporary directory, as a
non-root system user when started as root (PostgreSQL refuses root; MariaDB is told
`--user=mysql`), and is stopped by PID. A password-protected user `flakery` owns a database
`flakery`, so tests can check that the password never shows.

As a module::

    import dbserver
    with dbserver.start("postgres") as db:     # or "mariadb"; tls_dir=DIR: TLS with DIR's
                                               # server.crt and server.key (see make_certs)
        db.url                                 # postgres://flakery:PASSWORD@127.0.0.1:PORT/flakery
        db.sql("SELECT 1")                     # through psql / mariadb, as the superuser
        db.pause(); db.resume()                # SIGSTOP / SIGCONT
        db.kill(); db.restart()                # SIGKILL, then start again on the same data and port
    # leaving the block stops it and removes its directory

As a CLI (for shell scripts and Rust tests); `start` prints one JSON object::

    python3 tests/db/dbserver.py start postgres|mariadb   # {"kind","pid","port","url","password","dir"}
    python3 tests/db/dbserver.py start KIND --tls CERTS   # the same, serving TLS with CERTS's cert
    python3 tests/db/dbserver.py certs CERTS              # make CERTS/{ca,other-ca}.pem, {server,client}.*
    python3 tests/db/dbserver.py require-client-cert DIR  # the user flakery needs a client certificate
    python3 tests/db/dbserver.py kill DIR                 # SIGKILL (the data stays)
    python3 tests/db/dbserver.py restart DIR              # start again on the same data and port
    python3 tests/db/dbserver.py pause DIR | resume DIR   # SIGSTOP / SIGCONT
    python3 tests/db/dbserver.py sql DIR 'STATEMENT'      # run SQL as the superuser, print rows
    python3 tests/db/dbserver.py stop DIR                 # stop by PID and remove DIR
    python3 tests/db/dbserver.py closed-port              # a 127.0.0.1 port where nothing listens

The CLI keeps each server's state in DIR/server.json, so later commands need only DIR.
"""

from __future__ import annotations

import atexit
import glob
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

START_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0
USER = "flakery"
DATABASE = "flakery"
KINDS = ("postgres", "mariadb")

_live: "set[Server]" = set()

# The process helpers of the ZooKeeper harness serve here too.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zookeeper"))
from zkserver import _is_gone, _reap, _tail, free_port, stop_process  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testcerts import make_certs  # noqa: E402,F401  (the CLI's `certs`; callers import it here)
from dbdata import chown_tree, init_data, pg_bin, run_as, which  # noqa: E402


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        _reap(pid)
        if _is_gone(pid):
            return True
        time.sleep(0.02)
    return _is_gone(pid)


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Server:
    """A running server. Attributes: kind, pid, port, url, password, dir, data_dir, log_path."""

    def __init__(self, kind: str, dir: str, port: int, password: str, tls: bool = False):
        self.kind = kind
        # TLS with the certificate and key copied to DIR/tls (see make_certs).
        self.tls = tls
        self.dir = dir
        self.port = port
        self.password = password
        self.data_dir = os.path.join(dir, "data")
        self.socket_dir = os.path.join(dir, "run")
        # The server's stdout and stderr (PostgreSQL logs there); MariaDB's own error log is
        # written by the server's user, beside it.
        self.log_path = os.path.join(dir, "console.log")
        self.error_log_path = os.path.join(dir, "run", "mariadb.log")
        self.pid = 0
        self._proc: "subprocess.Popen | None" = None
        self.stopped = False

    @property
    def url(self) -> str:
        scheme = "postgres" if self.kind == "postgres" else "mysql"
        return f"{scheme}://{USER}:{self.password}@127.0.0.1:{self.port}/{DATABASE}"

    def info(self) -> dict:
        return {"kind": self.kind, "pid": self.pid, "port": self.port, "url": self.url,
                "password": self.password, "dir": self.dir, "tls": self.tls}

    def _save(self) -> None:
        with open(os.path.join(self.dir, "server.json"), "w") as f:
            json.dump(self.info(), f)

    @staticmethod
    def load(dir: str) -> "Server":
        with open(os.path.join(dir, "server.json")) as f:
            info = json.load(f)
        srv = Server(info["kind"], info["dir"], info["port"], info["password"],
                     info.get("tls", False))
        srv.pid = info["pid"]
        return srv

    # --- the server process ---------------------------------------------------------
    def _command(self) -> "list[str]":
        cert, key, ca = (os.path.join(self.dir, "tls", name)
                         for name in ("server.crt", "server.key", "ca.pem"))
        if self.kind == "postgres":
            tls = ["-c", "ssl=on", "-c", f"ssl_cert_file={cert}", "-c", f"ssl_key_file={key}",
                   "-c", f"ssl_ca_file={ca}"]
            return [
                pg_bin("postgres"), "-D", self.data_dir, "-h", "127.0.0.1",
                "-p", str(self.port), "-k", self.socket_dir,
                # Commits reach the kernel before they are acknowledged (a killed server keeps
                # them), but are never fsynced: fast, and enough for a test.
                "-c", "fsync=off", "-c", "synchronous_commit=on",
                "-c", "full_page_writes=off", "-c", "max_connections=200",
                "-c", "shared_buffers=16MB", "-c", "log_min_messages=warning",
                *(tls if self.tls else []),
            ]
        return [
            which("mariadbd", "mysqld"), "--no-defaults", f"--datadir={self.data_dir}",
            f"--socket={self.socket_dir}/mysqld.sock", f"--pid-file={self.socket_dir}/mysqld.pid",
            # Its own tmpdir: a starting mariadbd deletes the `#sql*` files of its tmpdir, which
            # in a shared /tmp are other servers' temporary tables (dbdata._init_mariadb).
            f"--tmpdir={self.socket_dir}",
            f"--port={self.port}", "--bind-address=127.0.0.1", "--skip-name-resolve",
            "--skip-log-bin", "--innodb-flush-log-at-trx-commit=2",  # see PostgreSQL's fsync
            "--innodb-buffer-pool-size=16M", "--innodb-log-file-size=8M",
            "--max-connections=300", "--log-error=" + self.error_log_path,
            *(["--user=mysql"] if os.geteuid() == 0 else []),
            *([f"--ssl-cert={cert}", f"--ssl-key={key}", f"--ssl-ca={ca}"] if self.tls else []),
        ]

    def _spawn(self) -> None:
        # MariaDB is started as root and told --user=mysql: it drops the privileges itself.
        owner = run_as(self.kind) if self.kind == "postgres" else None
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                self._command(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=self.dir, start_new_session=True, close_fds=True,
                user=owner[0] if owner else None, group=owner[1] if owner else None,
                extra_groups=[] if owner else None,
            )
        self.pid = self._proc.pid
        self._save()

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                break
            if _port_open(self.port) and self._ping():
                return
            time.sleep(0.05)
        raise RuntimeError(
            f"{self.kind} did not come up on 127.0.0.1:{self.port} within {timeout:.0f}s\n"
            f"--- {self.log_path} (last lines) ---\n{_tail(self.log_path)}"
            + (f"\n--- {self.error_log_path} ---\n{_tail(self.error_log_path)}"
               if self.kind == "mariadb" else ""))

    def _ping(self) -> bool:
        try:
            self.sql("SELECT 1", timeout=2.0,
                     database="postgres" if self.kind == "postgres" else "mysql")
            return True
        except (RuntimeError, subprocess.TimeoutExpired):
            return False

    # --- SQL as the superuser, over the Unix socket -----------------------------------
    def sql(self, statement: str, timeout: float = 10.0, database: str = DATABASE) -> str:
        """Runs `statement` as the superuser; returns the rows, tab-separated, one a line."""
        if self.kind == "postgres":
            cmd = [pg_bin("psql"), "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
                   "-h", self.socket_dir, "-p", str(self.port), "-U", "postgres",
                   "-d", database, "-c", statement]
        else:
            cmd = [which("mariadb", "mysql"), "--no-defaults", "-uroot",
                   f"--socket={self.socket_dir}/mysqld.sock", "-N", "-B", database,
                   "-e", statement]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise RuntimeError(f"{self.kind} SQL failed: {done.stderr.strip()}")
        return done.stdout

    def require_client_cert(self) -> None:
        """Makes the user flakery need a client certificate signed by the server's CA (a TLS
        server): PostgreSQL's pg_hba `clientcert=verify-full`, MariaDB's `REQUIRE X509`."""
        if self.kind == "postgres":
            with open(os.path.join(self.data_dir, "pg_hba.conf"), "w") as f:
                f.write("local all all trust\n"
                        "hostssl all all 127.0.0.1/32 scram-sha-256 clientcert=verify-full\n")
            self.sql("SELECT pg_reload_conf()")
            time.sleep(0.2)  # the postmaster reloads on its own time
        else:
            self.sql(f"ALTER USER '{USER}'@'%' REQUIRE X509")

    # --- control ----------------------------------------------------------------------
    def pause(self) -> None:
        """SIGSTOP, returning once every thread of every process has stopped: the port still
        accepts connections (the kernel's backlog), nothing answers."""
        for pid in [self.pid] + _children(self.pid):
            try:
                stop_process(pid)
            except (ProcessLookupError, FileNotFoundError):
                pass  # a backend that has exited answers nothing

    def resume(self) -> None:
        self._signal_all(signal.SIGCONT)

    def _signal_all(self, sig: int) -> None:
        # PostgreSQL serves each connection from a child of the postmaster: all of them.
        for pid in [self.pid] + _children(self.pid):
            _signal(pid, sig)

    def kill(self) -> None:
        """SIGKILL the server (and PostgreSQL's backends); the data directory stays."""
        pids = [self.pid] + _children(self.pid)
        for pid in pids:
            _signal(pid, signal.SIGKILL)
        for pid in pids:
            _wait_gone(pid, 10)
        if self.kind == "postgres":
            # A killed postmaster leaves its pid file. When nobody reaps the killed process
            # (an orphan under an init that does not), its PID stays a zombie, which the next
            # postmaster would take for a live one.
            for stale in [os.path.join(self.data_dir, "postmaster.pid")] + glob.glob(
                    os.path.join(self.socket_dir, ".s.PGSQL.*.lock")):
                try:
                    os.unlink(stale)
                except FileNotFoundError:
                    pass

    def restart(self, timeout: float = START_TIMEOUT_S) -> None:
        """Starts the server again on the same data directory and port (after kill or stop)."""
        if not _is_gone(self.pid):
            raise RuntimeError(f"{self.kind} pid {self.pid} is still running")
        self._spawn()
        self._wait_ready(timeout)

    def stop(self) -> None:
        """SIGTERM (SIGCONT too, in case it is paused), SIGKILL after a grace; removes dir."""
        if self.stopped:
            return
        self.stopped = True
        _live.discard(self)
        if self.pid and not _is_gone(self.pid):
            if not _is_our_server(self.pid, self.dir):
                raise RuntimeError(f"pid {self.pid} is not the server of {self.dir}")
            children = _children(self.pid)
            for sig in (signal.SIGTERM, signal.SIGCONT):
                _signal(self.pid, sig)
            for pid in children:
                _signal(pid, signal.SIGCONT)
            if not _wait_gone(self.pid, STOP_GRACE_S):
                self.kill()
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if os.path.basename(self.dir).startswith("sql-flakery-db-"):
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Server(kind={self.kind!r}, pid={self.pid}, port={self.port}, dir={self.dir!r})"


def _children(pid: int) -> "list[int]":
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return out


def _is_our_server(pid: int, dir: str) -> bool:
    """Guards against a reused PID: the process's command line names our data directory."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return False
    return os.path.join(dir, "data") in cmd


def _create_user(srv: Server) -> None:
    pw = srv.password
    if srv.kind == "postgres":
        srv.sql(f"CREATE ROLE {USER} LOGIN PASSWORD '{pw}'", database="postgres")
        srv.sql(f"CREATE DATABASE {DATABASE} OWNER {USER}", database="postgres")
    else:
        srv.sql(f"CREATE DATABASE {DATABASE}; CREATE USER '{USER}'@'%' IDENTIFIED BY '{pw}';"
                f" GRANT ALL ON {DATABASE}.* TO '{USER}'@'%'", database="mysql")


def start(kind: str, *, timeout: float = START_TIMEOUT_S, detached: bool = False,
          tls_dir: "str | None" = None) -> Server:
    """Starts a fresh server of `kind` ("postgres" or "mariadb"); returns when it answers SQL.

    detached: not stopped when this Python process exits (the CLI uses this).
    tls_dir: serve TLS with tls_dir's server.crt and server.key (see make_certs)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    last = ""
    for _ in range(3):  # a picked free port can be raced: retry with another
        dir = tempfile.mkdtemp(prefix="sql-flakery-db-")
        os.chmod(dir, 0o755)
        srv = Server(kind, dir, free_port(), secrets.token_hex(12), tls=tls_dir is not None)
        os.makedirs(srv.socket_dir)
        if tls_dir is not None:
            # Copied: the server's user must own its key, and PostgreSQL wants it 0600.
            os.makedirs(os.path.join(dir, "tls"))
            for name in ("server.crt", "server.key", "ca.pem"):
                shutil.copy(os.path.join(tls_dir, name), os.path.join(dir, "tls", name))
            os.chmod(os.path.join(dir, "tls", "server.key"), 0o600)
        try:
            init_data(kind, srv.dir, srv.data_dir)
            chown_tree(srv.dir, run_as(kind))
            srv._spawn()
            srv._wait_ready(timeout)
            _create_user(srv)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            last = str(e)
            srv.stop()
            shutil.rmtree(dir, ignore_errors=True)
            if "already in use" in last:
                continue
            raise RuntimeError(last) from None
        if not detached:
            _live.add(srv)
        return srv
    raise RuntimeError(last)


@atexit.register
def _stop_all() -> None:
    for srv in list(_live):
        try:
            srv.stop()
        except Exception:
            pass


def _main(argv: "list[str]") -> int:
    usage = __doc__.split("As a CLI", 1)[1].split("The CLI keeps", 1)[0]
    if not argv:
        sys.stderr.write("usage:" + usage)
        return 2
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "start" and len(args) == 1:
            print(json.dumps(start(args[0], detached=True).info()), flush=True)
            return 0
        if cmd == "start" and len(args) == 3 and args[1] == "--tls":
            print(json.dumps(start(args[0], detached=True, tls_dir=args[2]).info()), flush=True)
            return 0
        if cmd == "certs" and len(args) == 1:
            make_certs(args[0])
            return 0
        if cmd == "closed-port" and not args:
            print(free_port())
            return 0
        if len(args) >= 1:
            srv = Server.load(args[0])
            if cmd == "sql" and len(args) == 2:
                sys.stdout.write(srv.sql(args[1]))
                return 0
            if cmd == "require-client-cert" and len(args) == 1:
                srv.require_client_cert()
                return 0
            if len(args) == 1 and cmd in ("kill", "restart", "pause", "resume", "stop"):
                if cmd in ("kill", "pause", "resume", "stop") and not _is_gone(srv.pid) \
                        and not _is_our_server(srv.pid, srv.dir):
                    raise RuntimeError(f"pid {srv.pid} is not the server of {srv.dir}")
                getattr(srv, cmd)()
                if cmd == "restart":
                    print(json.dumps(srv.info()), flush=True)
                return 0
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        sys.stderr.write(f"dbserver.py {cmd}: {e}\n")
        return 1
    sys.stderr.write("usage:" + usage)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
