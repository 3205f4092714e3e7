#!/usr/bin/env python3
"""A real, throw-away ZooKeeper server for tests (Python 3.11 stdlib only).

Needs Debian's `zookeeper` package: run `bash tests/zookeeper/install.sh` first.

As a module::

    import zkserver
    with zkserver.start() as zk:          # standalone server on 127.0.0.1:<free port>
        zk.connect                        # "127.0.0.1:PORT"
        zk.srvr()                         # output of the `srvr` four-letter command
        zk.pause(); zk.resume()           # SIGSTOP / SIGCONT the JVM
    # leaving the block stops it (SIGTERM, then SIGKILL) and removes its temp dir

As a CLI (for shell scripts and Rust tests)::

    python3 tests/zookeeper/zkserver.py start      # prints {"pid":..,"port":..,"connect":..,"dir":..}
    python3 tests/zookeeper/zkserver.py start --tls CERTS [--client-auth need|want|none]
                                                   # also a secureClientPort ("secure_port")
    python3 tests/zookeeper/zkserver.py pause PID  # SIGSTOP   (resume PID: SIGCONT)
    python3 tests/zookeeper/zkserver.py srvr PORT  # prints the `srvr` answer
    python3 tests/zookeeper/zkserver.py stop PID DIR

The server accepts session timeouts from MIN_SESSION_TIMEOUT_MS to MAX_SESSION_TIMEOUT_MS
(tickTime TICK_TIME_MS), so a client asking for 2000..10000 ms gets exactly what it asked.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ports import listen_port  # noqa: E402

ZK_JAR = "/usr/share/java/zookeeper.jar"
# The jar's manifest Class-Path names its dependencies (jute, netty, slf4j-api, ...);
# slf4j-simple gives the server a logger that writes to stderr (our log file).
EXTRA_JARS = ["/usr/share/java/slf4j-simple.jar"]
# A secureClientPort needs the Netty connection factory, whose SslHandler is in netty-codec:
# Debian's libnetty-java (a dependency of the package) ships it, but the jar's manifest does
# not name it.
TLS_JARS = ["/usr/share/java/netty-codec.jar", "/usr/share/java/netty-resolver.jar"]
MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"
JVM_OPTS = [
    "-Xms32m",
    "-Xmx256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",  # faster start-up, plenty fast for tests
    "-Djava.net.preferIPv4Stack=true",
    "-Dzookeeper.jmx.log4j.disable=true",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
    "-Dorg.slf4j.simpleLogger.showDateTime=true",
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
]

TICK_TIME_MS = 200
MIN_SESSION_TIMEOUT_MS = 1000
MAX_SESSION_TIMEOUT_MS = 60000
START_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))  # tests/: tls_certs, sigstop
from sigstop import stop_process  # noqa: E402

_live: "set[Server]" = set()


def classpath(tls: bool = False) -> str:
    override = os.environ.get("ZK_CLASSPATH")
    if override:
        return override
    if not os.path.exists(ZK_JAR):
        raise RuntimeError(
            f"{ZK_JAR} not found: run `bash {os.path.join(_HERE, 'install.sh')}` first"
        )
    extra = EXTRA_JARS + (TLS_JARS if tls else [])
    return ":".join([ZK_JAR] + [j for j in extra if os.path.exists(j)])


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on `host` that was free a moment ago, below the ephemeral range (tests/ports.py)."""
    return listen_port(host)


def connect_string_of_closed_port() -> str:
    """ "127.0.0.1:PORT" where nothing listens: connecting is refused at once."""
    return f"127.0.0.1:{free_port()}"


def four_letter(port: int, cmd: str = "srvr", host: str = "127.0.0.1", timeout: float = 2.0) -> str:
    """Send a four-letter command (`srvr`, `ruok`, `stat`, `cons`, `mntr`...) and return the answer."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(cmd.encode("ascii"))
        chunks = []
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks).decode("utf-8", "replace")


def _tail(path: str, lines: int = 80) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read().decode("utf-8", "replace").splitlines()
        return "\n".join(data[-lines:])
    except OSError as e:
        return f"(no log: {e})"


def _is_gone(pid: int) -> bool:
    """True if `pid` no longer exists or is a zombie whose threads have all exited.

    A JVM's main thread can exit first: the process then shows as a zombie while its other
    threads still run and still hold the listening socket, so a port taken at once after a
    stop was "in use"."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        if state not in ("Z", "X"):
            return False
        return len(os.listdir(f"/proc/{pid}/task")) <= 1
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _listening_inodes(port: int) -> "set[str]":
    """The inodes of the sockets listening on TCP `port` (any address) in this network
    namespace, from /proc/net/tcp and tcp6."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            # local_address is ADDR:PORT in hex; state 0A is LISTEN; field 9 is the inode.
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def _holds_socket(pid: int, inodes: "set[str]") -> bool:
    """Whether process `pid` has one of the sockets `inodes` among its open files."""
    wanted = {f"socket:[{inode}]" for inode in inodes}
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") in wanted:
                return True
        except OSError:
            continue
    return False


def _port_owner(port: int) -> str:
    """Who listens on `port`, for an error message: "pid N (command line)" of each process
    whose open files this user can read, else the bare fact."""
    inodes = _listening_inodes(port)
    if not inodes:
        return "nothing listens on it now"
    owners = [f"pid {d} ({_cmdline(int(d))[:200]})" for d in os.listdir("/proc")
              if d.isdigit() and _holds_socket(int(d), inodes)]
    return "it is held by " + (", ".join(owners) if owners else "a process of another user")


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def kill_server(pid: int, grace: float = STOP_GRACE_S) -> None:
    """SIGTERM (plus SIGCONT in case it is paused), wait up to `grace`, then SIGKILL; wait till gone."""
    for sig in (signal.SIGTERM, signal.SIGCONT):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        _reap(pid)
        if _is_gone(pid):
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        _reap(pid)
        if _is_gone(pid):
            return
        time.sleep(0.05)
    raise RuntimeError(f"ZooKeeper pid {pid} did not die after SIGKILL")


class Server:
    """A running standalone ZooKeeper. Attributes: pid, port, connect, dir, data_dir, log_path."""

    def __init__(self, proc: "subprocess.Popen | None", pid: int, port: int, dir: str,
                 data_dir: str, own_data_dir: bool):
        self._proc = proc
        self.pid = pid
        self.port = port
        self.connect = f"127.0.0.1:{port}"
        self.secure_port: "int | None" = None
        self.dir = dir
        self.data_dir = data_dir
        self.log_path = os.path.join(dir, "zookeeper.log")
        self.cfg_path = os.path.join(dir, "zoo.cfg")
        self._own_data_dir = own_data_dir
        self.stopped = False

    # --- control -------------------------------------------------------------------------
    def pause(self) -> None:
        """SIGSTOP the JVM, returning once every thread has stopped: the port still accepts TCP
        connections, but nothing answers."""
        stop_process(self.pid)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)

    def stop(self) -> None:
        """SIGTERM then SIGKILL by PID, wait, remove the temp dir. Safe to call twice."""
        if self.stopped:
            return
        self.stopped = True
        _live.discard(self)
        kill_server(self.pid)
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)
            except (subprocess.TimeoutExpired, ChildProcessError):
                pass
        shutil.rmtree(self.dir, ignore_errors=True)  # a caller-provided data_dir is left alone

    def srvr(self, timeout: float = 2.0) -> str:
        return four_letter(self.port, "srvr", timeout=timeout)

    def is_alive(self) -> bool:
        if self._proc is not None:
            return self._proc.poll() is None
        return not _is_gone(self.pid)

    def log(self, lines: int = 80) -> str:
        return _tail(self.log_path, lines)

    def info(self) -> dict:
        info = {"pid": self.pid, "port": self.port, "connect": self.connect, "dir": self.dir}
        if self.secure_port is not None:
            info["secure_port"] = self.secure_port
        return info

    # --- context manager ---------------------------------------------------------------
    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Server(pid={self.pid}, connect={self.connect!r}, dir={self.dir!r})"


def _tls_cfg(certs: str, secure_port: int, client_auth: str) -> "list[str]":
    """A secureClientPort on 127.0.0.1 with the test CA's server pair (tests/tls_certs.py's
    server.p12, whose password is P12_PASSWORD) and its CA as the truststore (PEM, as
    ZooKeeper 3.6+ reads it), so `client_auth=need` takes client.crt and refuses the rest."""
    from tls_certs import P12_PASSWORD

    certs = os.path.abspath(certs)
    return [
        f"secureClientPort={secure_port}",
        "secureClientPortAddress=127.0.0.1",
        "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
        f"ssl.keyStore.location={os.path.join(certs, 'server.p12')}",
        f"ssl.keyStore.password={P12_PASSWORD}",
        "ssl.keyStore.type=PKCS12",
        f"ssl.trustStore.location={os.path.join(certs, 'ca.pem')}",
        "ssl.trustStore.type=PEM",
        f"ssl.clientAuth={client_auth}",
    ]


def _write_cfg(path: str, data_dir: str, port: int, tick: int, min_to: int, max_to: int,
               extra: "list[str]") -> None:
    with open(path, "w") as f:
        f.write(
            "\n".join(
                [
                    f"tickTime={tick}",
                    f"dataDir={data_dir}",
                    f"clientPort={port}",
                    "clientPortAddress=127.0.0.1",
                    f"minSessionTimeout={min_to}",
                    f"maxSessionTimeout={max_to}",
                    "maxClientCnxns=0",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=*",
                    "forceSync=no",  # test data: no fsync per write
                    *extra,
                    "",
                ]
            )
        )


def start(data_dir: "str | None" = None, port: "int | None" = None, *,
          tick_time_ms: int = TICK_TIME_MS,
          min_session_timeout_ms: int = MIN_SESSION_TIMEOUT_MS,
          max_session_timeout_ms: int = MAX_SESSION_TIMEOUT_MS,
          timeout: float = START_TIMEOUT_S, detached: bool = False,
          tls_certs: "str | None" = None, client_auth: str = "need") -> Server:
    """Start a standalone ZooKeeper on 127.0.0.1 and wait until `srvr` says `Mode: standalone`
    and the port's listening socket is among the started process's open files (not another
    process's server on the same port).

    data_dir: keep the data there (not removed by stop(); pass the same dir, and `port`, to
    "restart" a server with its state). Default: inside the temp dir, removed by stop().
    detached: do not stop it when this Python process exits (the CLI uses this).
    tls_certs: a directory of tests/tls_certs.py's files: also serve TLS on a secureClientPort
    (`Server.secure_port`), asking clients for a certificate as `client_auth` says.
    Raises RuntimeError with the server's log if it does not come up within `timeout` s, or
    if what answers on `port` is another process's server (naming it when it can).
    """
    cp = classpath(tls=tls_certs is not None)
    java = shutil.which("java")
    if java is None:
        raise RuntimeError(f"java not found: run `bash {os.path.join(_HERE, 'install.sh')}`")
    attempts = 1 if port is not None else 3  # a picked free port can be raced; retry
    last_err = ""
    for _ in range(attempts):
        tmp = tempfile.mkdtemp(prefix="flakery-zk-")
        own = data_dir is None
        ddir = os.path.join(tmp, "data") if own else os.path.abspath(data_dir)
        os.makedirs(ddir, exist_ok=True)
        p = port if port is not None else free_port()
        secure = free_port() if tls_certs is not None else None
        extra = _tls_cfg(tls_certs, secure, client_auth) if secure is not None else []
        cfg = os.path.join(tmp, "zoo.cfg")
        _write_cfg(cfg, ddir, p, tick_time_ms, min_session_timeout_ms, max_session_timeout_ms,
                   extra)
        log_path = os.path.join(tmp, "zookeeper.log")
        with open(log_path, "wb") as logf:
            proc = subprocess.Popen(
                [java, *JVM_OPTS, "-cp", cp, MAIN_CLASS, cfg],
                stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                cwd=tmp, start_new_session=True, close_fds=True,
            )
        srv = Server(proc, proc.pid, p, tmp, ddir, own)
        srv.secure_port = secure
        deadline = time.monotonic() + timeout
        ok = False
        other = ""
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            try:
                answer = four_letter(p, "srvr", timeout=1.0)
            except OSError:
                answer = ""
            if "Mode: standalone" in answer:
                # The server answering must be this start's: another process's ZooKeeper on
                # the port (left by another test, or paused by one) is not, whatever it says.
                if _holds_socket(proc.pid, _listening_inodes(p)):
                    ok = True
                    break
                other = _port_owner(p)
                break
            time.sleep(0.05)
        if ok:
            if not detached:
                _live.add(srv)
            return srv
        log = _tail(log_path)
        exited = proc.poll()
        if exited is not None and not other and "Address already in use" in log:
            other = _port_owner(p)
        srv.stop()
        if other:
            last_err = (
                f"the ZooKeeper answering on 127.0.0.1:{p} is not the one this start ran "
                f"(pid {proc.pid}): {other}.\n--- {log_path} (last lines) ---\n{log}"
            )
            if port is not None:
                break
            continue
        last_err = (
            f"ZooKeeper did not come up on 127.0.0.1:{p} within {timeout:.0f}s"
            f" ({'exited with ' + str(exited) if exited is not None else 'still running, killed'}).\n"
            f"--- {log_path} (last lines) ---\n{log}"
        )
        if "Address already in use" not in log:
            break
    raise RuntimeError(last_err)


@atexit.register
def _stop_all() -> None:
    for s in list(_live):
        try:
            s.stop()
        except Exception:
            pass


def stop_detached(pid: int, dir: str) -> None:
    """Stop a server started by the CLI (by PID) and remove its dir.

    Refuses to signal `pid` if it is alive but is not the ZooKeeper started with `dir`
    (guards against a reused PID)."""
    dir = os.path.abspath(dir)
    if not _is_gone(pid):
        cmd = _cmdline(pid)
        if MAIN_CLASS not in cmd or os.path.join(dir, "zoo.cfg") not in cmd:
            raise RuntimeError(f"pid {pid} is not the ZooKeeper of {dir}: {cmd!r}")
        kill_server(pid)
    if os.path.basename(dir).startswith("flakery-zk-"):
        shutil.rmtree(dir, ignore_errors=True)


def _main(argv: "list[str]") -> int:
    usage = (
        "usage: zkserver.py start [--data-dir DIR] [--port PORT] [--tls CERTS]"
        " [--client-auth need|want|none]\n"
        "       zkserver.py stop PID DIR\n"
        "       zkserver.py pause PID | resume PID\n"
        "       zkserver.py srvr PORT\n"
        "       zkserver.py closed-port\n"
    )
    if not argv:
        sys.stderr.write(usage)
        return 2
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "start":
            kw: dict = {}
            it = iter(args)
            for a in it:
                if a == "--data-dir":
                    kw["data_dir"] = next(it)
                elif a == "--port":
                    kw["port"] = int(next(it))
                elif a == "--tls":
                    kw["tls_certs"] = next(it)
                elif a == "--client-auth":
                    kw["client_auth"] = next(it)
                else:
                    sys.stderr.write(usage)
                    return 2
            srv = start(detached=True, **kw)
            print(json.dumps(srv.info()), flush=True)
            return 0
        if cmd == "stop" and len(args) == 2:
            stop_detached(int(args[0]), args[1])
            return 0
        if cmd in ("pause", "resume") and len(args) == 1:
            if cmd == "pause":
                stop_process(int(args[0]))
            else:
                os.kill(int(args[0]), signal.SIGCONT)
            return 0
        if cmd == "srvr" and len(args) == 1:
            sys.stdout.write(four_letter(int(args[0]), "srvr"))
            return 0
        if cmd == "closed-port" and not args:
            print(connect_string_of_closed_port())
            return 0
    except (RuntimeError, OSError, ValueError) as e:
        sys.stderr.write(f"zkserver.py {cmd}: {e}\n")
        return 1
    sys.stderr.write(usage)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
