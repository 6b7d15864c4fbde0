"""A real PostgreSQL server for the shared results store's tests: no mock can show that the
SQL, the locks and the migrations work. The server is the system's (Debian's ``postgresql``
package), started once per session in a temporary directory, listening on 127.0.0.1 only,
trust authentication; each test gets a database of its own (``pg_url``). Tests skip with
one line when the server binaries are absent; CI installs them (``.ci/run``)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from ports import ATTEMPTS, PortInUse, in_use, on_free_ports

# The newest installed major version's binaries (Debian keeps them off PATH).
_BINDIRS = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name))
BINDIR = Path(_BINDIRS[-1]) if _BINDIRS else None
MISSING = "postgresql is not installed (apt-get install postgresql)"


def _as_postgres(root: Path, *command: str | Path) -> list[str]:
    """initdb and postgres refuse to run as root: run them as the ``postgres`` user.

    initdb's shell steps write to /dev/null; where a container left a plain root-owned file
    there, they run in a mount namespace of their own with a real null device bound over it
    (the machine's /dev/null is not touched).
    """
    args = [str(part) for part in command]
    if os.getuid() != 0:
        return args
    args = ["runuser", "-u", "postgres", "--", *args]
    if stat.S_ISCHR(os.stat("/dev/null").st_mode):
        return args
    null = root / "null"
    if not null.exists():
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        os.chmod(null, 0o666)
    bind = 'mount --bind "$0" /dev/null && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", bind, str(null), *args]


@dataclass
class Server:
    """A running throwaway server that a test may stop and start again (an outage)."""

    root: Path
    data: Path
    log: Path
    options: str
    url: str

    def stop(self) -> None:
        """Stop as an administrator's ``pg_ctl stop`` does: connections are cut."""
        subprocess.run(
            _as_postgres(self.root, BINDIR / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"),
            check=True, capture_output=True,
        )  # fmt: skip

    def start(self) -> None:
        """Start again on the same port (an outage's end): a port taken meanwhile (a client's
        ephemeral port) is waited for, a few times."""
        for attempt in range(ATTEMPTS):
            try:
                self._start()
                return
            except PortInUse:
                if attempt == ATTEMPTS - 1:
                    raise
                time.sleep(1)

    def _start(self) -> None:
        """One ``pg_ctl start``; ``PortInUse`` when the server could not bind its port."""
        seen = self.log.stat().st_size if self.log.exists() else 0
        try:
            subprocess.run(
                _as_postgres(
                    self.root, BINDIR / "pg_ctl", "-D", self.data, "-l", self.log,
                    "-o", self.options, "-w", "start",
                ),
                check=True, capture_output=True,
            )  # fmt: skip
        except subprocess.CalledProcessError as error:
            if not self.log.exists():
                raise
            with self.log.open("rb") as log:
                log.seek(seen)
                if in_use(log.read().decode(errors="replace")):
                    raise PortInUse(f"PostgreSQL: {self.url}: port in use") from error
            raise


@contextmanager
def running_server(**settings: str) -> Iterator[str]:
    """A throwaway server for this process's use (tests, ``bench/bench_audit.py``): its base
    URL, ``postgresql://postgres@127.0.0.1:PORT``; ``settings`` are extra ``-c`` options."""
    with stoppable_server(**settings) as server:
        yield server.url


@contextmanager
def stoppable_server(**settings: str) -> Iterator[Server]:
    """``running_server``, as a ``Server`` the caller can stop and start."""
    if BINDIR is None or not (BINDIR / "postgres").is_file():
        raise FileNotFoundError(MISSING)
    root = Path(tempfile.mkdtemp(prefix="rampart-pg-"))
    data = root / "data"
    if os.getuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
    log = root / "server.log"
    extra = "".join(f" -c {name}={value}" for name, value in settings.items())

    def start_on(port: int) -> Server:
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root}"
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        ) + extra
        server = Server(root, data, log, options, f"postgresql://postgres@127.0.0.1:{port}")
        server._start()
        return server

    try:
        subprocess.run(
            _as_postgres(
                root, BINDIR / "initdb", "-D", data, "-U", "postgres", "--auth=trust",
                "--encoding=UTF8", "--no-sync",
            ),
            check=True, capture_output=True,
        )  # fmt: skip
        server = on_free_ports(start_on)
    except (subprocess.CalledProcessError, PortInUse) as error:
        detail = str(error)
        if isinstance(error, subprocess.CalledProcessError):
            detail = (error.stderr or b"").decode(errors="replace").strip()
        if log.exists():
            detail += "\n" + log.read_text(errors="replace")
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"could not start PostgreSQL: {detail}") from None
    try:
        yield server
    finally:
        subprocess.run(
            _as_postgres(root, BINDIR / "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The server's base URL, ``postgresql://postgres@127.0.0.1:PORT``."""
    if BINDIR is None or not (BINDIR / "postgres").is_file():
        pytest.skip(MISSING)
    with running_server() as url:
        yield url


@contextmanager
def fresh_database(server: str) -> Iterator[str]:
    """A new, empty database on ``server`` (``pg_server``'s URL), dropped on exit; for
    module-scoped fixtures that build one history for many tests."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A new, empty database on the session's server, dropped after the test."""
    with fresh_database(pg_server) as url:
        yield url
