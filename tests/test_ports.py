"""tests/ports.py: a held port refuses connections and cannot be taken; a server that lost its
port to someone else is started again on a fresh one (PostgreSQL's own message read)."""

from __future__ import annotations

import errno
import socket

import ports
import postgres
import pytest
from ports import PortInUse, closed_port, on_free_ports


def test_a_closed_port_refuses_connections_and_nothing_else_can_take_it() -> None:
    with closed_port() as port:
        with socket.socket() as client, pytest.raises(ConnectionRefusedError):
            client.connect(("127.0.0.1", port))
        with socket.socket() as other, pytest.raises(OSError) as taken:
            other.bind(("127.0.0.1", port))
        assert taken.value.errno == errno.EADDRINUSE


def test_a_port_in_use_is_retried_on_fresh_ports_a_bounded_number_of_times() -> None:
    tried: list[tuple[int, ...]] = []

    def lose_twice(*given: int) -> tuple[int, ...]:
        tried.append(given)
        if len(tried) < 3:
            raise PortInUse("taken")
        return given

    assert on_free_ports(lose_twice, count=2) == tried[-1]
    assert len(tried) == 3 and all(len(given) == 2 for given in tried)

    def always_taken(port: int) -> None:
        tried.append((port,))
        raise PortInUse("taken")

    tried.clear()
    with pytest.raises(PortInUse):
        on_free_ports(always_taken, attempts=4)
    assert len(tried) == 4

    def broken(port: int) -> None:
        tried.append((port,))
        raise RuntimeError("not a port")

    tried.clear()
    with pytest.raises(RuntimeError, match="not a port"):
        on_free_ports(broken)
    assert len(tried) == 1  # only a port in use is retried


def test_postgresql_that_lost_its_port_starts_on_another(monkeypatch: pytest.MonkeyPatch) -> None:
    if postgres.BINDIR is None or not (postgres.BINDIR / "postgres").is_file():
        pytest.skip(postgres.MISSING)
    fresh = ports.free_port
    picked: list[int] = []
    with socket.socket() as holder:  # someone else took the port between pick and start
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]

        def first_taken() -> int:
            picked.append(taken if not picked else fresh())
            return picked[-1]

        monkeypatch.setattr(ports, "free_port", first_taken)
        with postgres.running_server() as url:
            assert len(picked) == 2
            assert url == f"postgresql://postgres@127.0.0.1:{picked[1]}"
            import psycopg

            with psycopg.connect(f"{url}/postgres") as db:
                assert db.execute("SELECT 1").fetchone() == (1,)
