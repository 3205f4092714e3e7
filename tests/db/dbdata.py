"""The data directories of tests/db/dbserver.py's servers (Python 3.11 stdlib only).

Where Debian's PostgreSQL and MariaDB programs are, the system user a server runs as, and the
data directory a new server starts on: made by initdb or mariadb-install-db once, kept as a
template beside cargo's build output, and copied for each server (a copy takes milliseconds,
an initdb seconds).
"""

from __future__ import annotations

import fcntl
import glob
import os
import pwd
import shutil
import subprocess
import tempfile



def pg_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if found:
        return found[-1]
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(f"PostgreSQL's {name} not found: run `bash tests/db/install.sh`")
    return path


def which(*names: str) -> str:
    for name in names:
        for path in (shutil.which(name), f"/usr/sbin/{name}", f"/usr/bin/{name}"):
            if path and os.access(path, os.X_OK):
                return path
    raise RuntimeError(f"{names[0]} not found: run `bash tests/db/install.sh`")


def run_as(kind: str) -> "tuple[int, int] | None":
    """(uid, gid) of the system user a server runs as when we are root; None otherwise.

    The Debian packages create `postgres` and `mysql`."""
    if os.geteuid() != 0:
        return None
    name = "postgres" if kind == "postgres" else "mysql"
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise RuntimeError(f"running as root, but there is no {name} user") from None
    return entry.pw_uid, entry.pw_gid


def chown_tree(path: str, owner: "tuple[int, int] | None") -> None:
    if owner is None:
        return
    for root, dirs, files in os.walk(path):
        for name in [root] + [os.path.join(root, n) for n in dirs + files]:
            os.chown(name, *owner)



def _init_postgres(dir: str, data_dir: str) -> None:
    owner = run_as("postgres")
    pwfile = os.path.join(dir, "pwfile")
    with open(pwfile, "w") as f:
        f.write("postgres\n")
    chown_tree(dir, owner)
    done = subprocess.run(
        [pg_bin("initdb"), "-D", data_dir, "-U", "postgres", "--pwfile", pwfile,
         "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync",
         "--locale=C"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL,
        user=owner[0] if owner else None, group=owner[1] if owner else None,
        extra_groups=[] if owner else None, cwd=dir,
    )
    os.unlink(pwfile)
    if done.returncode != 0:
        raise RuntimeError(f"initdb failed: {done.stdout}{done.stderr}")


def _init_mariadb(dir: str, data_dir: str) -> None:
    # A tmpdir of its own: a starting mariadbd removes every `#sql*` file in its tmpdir, so
    # beside another in a shared /tmp it deletes that one's temporary tables (mariadb-install-db
    # then fails: "Could not remove temporary table", "Unknown table 'mysql.tmp_user_sys'";
    # 2 of 16 install-db runs, 8 at once, failed so, none of 16 with their own tmpdir).
    tmp = os.path.join(dir, "tmp")
    os.makedirs(tmp, exist_ok=True)
    chown_tree(tmp, run_as("mariadb"))
    args = [which("mariadb-install-db", "mysql_install_db"), "--no-defaults",
            f"--datadir={data_dir}", f"--tmpdir={tmp}", "--auth-root-authentication-method=socket",
            "--skip-test-db", "--skip-name-resolve"]
    if os.geteuid() == 0:
        args.append("--user=mysql")
    done = subprocess.run(args, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          cwd=dir)
    if done.returncode != 0:
        raise RuntimeError(f"mariadb-install-db failed: {done.stdout}{done.stderr}")


def _template_dir() -> str:
    """Where the initialised data directories are kept between servers: beside cargo's build
    output (a cache, like it; FLAKERY_DB_TEMPLATES overrides)."""
    if os.environ.get("FLAKERY_DB_TEMPLATES"):
        return os.environ["FLAKERY_DB_TEMPLATES"]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    target = os.environ.get("CARGO_TARGET_DIR") or "target"
    return os.path.join(root, target, "db-templates")


def init_data(kind: str, dir: str, data_dir: str) -> None:
    """data_dir (a server's, under dir) as initdb / mariadb-install-db make it, copied from one made
    before with the same program (each takes seconds; a copy, milliseconds). The template is
    made once, in a directory of its own, under a lock (tests run servers side by side)."""
    init = _init_postgres if kind == "postgres" else _init_mariadb
    program = pg_bin("initdb") if kind == "postgres" else which("mariadb-install-db", "mysql_install_db")
    stat = os.stat(os.path.realpath(program))
    key = f"{kind}-{os.geteuid()}-{stat.st_ino}-{stat.st_mtime_ns}"
    cache = _template_dir()
    template = os.path.join(cache, key)
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, key + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.isdir(template):
            work = tempfile.mkdtemp(prefix=f"sql-flakery-db-template-{kind}-")
            try:
                os.chmod(work, 0o755)
                made = os.path.join(work, "data")
                init(work, made)
                staged = template + ".new"
                shutil.rmtree(staged, ignore_errors=True)
                shutil.copytree(made, staged, symlinks=True)
                os.rename(staged, template)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(template, data_dir, symlinks=True)

