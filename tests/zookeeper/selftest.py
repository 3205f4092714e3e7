#!/usr/bin/env python3
"""Checks the ZooKeeper harness itself against the real server (stdlib unittest).

    bash tests/zookeeper/install.sh && python3 tests/zookeeper/selftest.py
"""

import json
import os
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zkserver  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


# Every server this test starts inherits the mark; servers of tests running beside it (other
# areas start ZooKeeper too) do not have it, and are not this test's to count.
MARK = f"FLAKERY_ZK_SELFTEST={os.getpid()}"
os.environ["FLAKERY_ZK_SELFTEST"] = str(os.getpid())


def marked(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return MARK.encode() in f.read().split(b"\0")
    except OSError:
        return False


def java_pids() -> "set[int]":
    """The ZooKeeper processes alive that this test started."""
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit() and zkserver.MAIN_CLASS in zkserver._cmdline(int(d)):
            if not zkserver._is_gone(int(d)) and marked(int(d)):
                out.add(int(d))
    return out


class HarnessTest(unittest.TestCase):
    def setUp(self):
        self.before = java_pids()

    def tearDown(self):
        self.assertEqual(java_pids() - self.before, set(), "a ZooKeeper process was left behind")

    def test_start_srvr_pause_resume_stop(self):
        t0 = time.monotonic()
        srv = zkserver.start()
        print(f"\nstart took {time.monotonic() - t0:.2f}s", file=sys.stderr)
        with srv:
            self.assertEqual(srv.connect, f"127.0.0.1:{srv.port}")
            self.assertIn("Mode: standalone", srv.srvr())
            self.assertEqual(zkserver.four_letter(srv.port, "ruok"), "imok")
            srv.pause()
            with self.assertRaises(OSError):  # socket.timeout is an OSError
                zkserver.four_letter(srv.port, "srvr", timeout=0.5)
            srv.resume()
            self.assertIn("Mode: standalone", srv.srvr())
            d = srv.dir
        self.assertFalse(os.path.exists(d))
        self.assertTrue(zkserver._is_gone(srv.pid))

    def test_stop_while_paused(self):
        srv = zkserver.start()
        srv.pause()
        # Stopped although it cannot answer SIGTERM: stop() returns and the process is gone
        # (an order of events; stop() itself bounds its wait before SIGKILL).
        srv.stop()
        self.assertTrue(zkserver._is_gone(srv.pid))

    def test_restart_with_same_data_dir_and_port(self):
        import tempfile, shutil
        data = tempfile.mkdtemp(prefix="zkdata-")
        try:
            with zkserver.start(data_dir=data) as a:
                port = a.port
            with zkserver.start(data_dir=data, port=port) as b:
                self.assertEqual(b.port, port)
                self.assertIn("Mode: standalone", b.srvr())
        finally:
            shutil.rmtree(data)

    def test_start_on_a_port_refuses_another_processs_server(self):
        # Another server on the port, answering or paused (SIGSTOP: it accepts and never
        # answers), is not taken for the one this start ran: a clear error naming its pid.
        with zkserver.start() as other:
            for paused in (False, True):
                if paused:
                    other.pause()
                with self.assertRaises(RuntimeError) as cm:
                    zkserver.start(port=other.port, timeout=30)
                message = str(cm.exception)
                self.assertIn(f"127.0.0.1:{other.port} is not the one this start ran", message)
                self.assertIn(f"pid {other.pid} (", message)
            other.resume()
            self.assertIn("Mode: standalone", other.srvr())

    def test_cli_start_stop_detached(self):
        t0 = time.monotonic()
        out = subprocess.run([sys.executable, os.path.join(HERE, "zkserver.py"), "start"],
                             check=True, capture_output=True, text=True, timeout=90).stdout
        took = time.monotonic() - t0
        info = json.loads(out.strip())
        print(f"\nCLI start took {took:.2f}s: {info}", file=sys.stderr)
        self.assertEqual(set(info), {"pid", "port", "connect", "dir"})
        self.assertIn("Mode: standalone", zkserver.four_letter(info["port"]))
        # a wrong DIR must not kill the process
        r = subprocess.run([sys.executable, os.path.join(HERE, "zkserver.py"), "stop",
                            str(info["pid"]), "/tmp/flakery-zk-nope"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertFalse(zkserver._is_gone(info["pid"]))
        subprocess.run([sys.executable, os.path.join(HERE, "zkserver.py"), "pause", str(info["pid"])], check=True)
        subprocess.run([sys.executable, os.path.join(HERE, "zkserver.py"), "resume", str(info["pid"])], check=True)
        subprocess.run([sys.executable, os.path.join(HERE, "zkserver.py"), "stop",
                        str(info["pid"]), info["dir"]], check=True, timeout=30)
        self.assertTrue(zkserver._is_gone(info["pid"]))
        self.assertFalse(os.path.exists(info["dir"]))

    def test_closed_port_refuses(self):
        host, port = zkserver.connect_string_of_closed_port().split(":")
        with self.assertRaises(ConnectionRefusedError):
            socket.create_connection((host, int(port)), timeout=1).close()

    def test_failure_reports_log(self):
        os.environ["ZK_CLASSPATH"] = "/nonexistent.jar"
        try:
            with self.assertRaises(RuntimeError) as cm:
                zkserver.start(timeout=20)
            self.assertIn("ClassNotFoundException", str(cm.exception).replace("Could not find or load main class", "ClassNotFoundException"))
        finally:
            del os.environ["ZK_CLASSPATH"]


if __name__ == "__main__":
    unittest.main(verbosity=2)
