"""`mnemoledger serve --workers 2` (issue 17): two server processes on one port and one home
(or one PostgreSQL log). A write acknowledged by one worker is seen by the next read on the
other, API keys created or revoked while they run hold on both, and an erasure reaches both.

Which worker holds a connection is read from /proc (the socket's inode among each worker's
open files), so the test pins one keep-alive connection to each worker and alternates."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from mnemoledger.commands.cli import cli
from mnemoledger.commands.service.serve_cli import MAX_DEFAULT_WORKERS, default_workers
from tests.live_server import live_server

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    not Path("/proc/net/tcp").exists(), reason="finds a connection's worker through /proc"
)


def cli_json(home: Path, *args: str) -> object:
    result = CliRunner().invoke(cli, ["--home", str(home), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


@dataclass
class Served:
    url: str
    process: subprocess.Popen[bytes]

    def workers(self) -> list[int]:
        """The worker processes (uvicorn's supervisor forks them from `serve`'s process;
        each is a `multiprocessing` spawn, possibly under a resource tracker)."""
        return [pid for pid in children(self.process.pid) if not _resource_tracker(pid)]


def _resource_tracker(pid: int) -> bool:
    """Whether the process is a resource tracker (one that has ended is none)."""
    try:
        return b"resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return True


@contextmanager
def serve(home: Path, workers: int) -> Iterator[Served]:
    port = free_port()
    options = ["--port", str(port), "--workers", str(workers), "--log-level", "warning"]
    process = subprocess.Popen(
        [sys.executable, "-m", "mnemoledger", "--home", str(home), "serve", *options],
        cwd=REPO,
        env={**os.environ, "MNEMOLEDGER_EMBEDDER": "hashing"},
    )
    served = Served(f"http://127.0.0.1:{port}", process)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if (
                    httpx.get(f"{served.url}/health", timeout=5).status_code == 200
                    and len(served.workers()) >= workers
                ):
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("serve --workers did not start")
            time.sleep(0.1)
        yield served
    finally:
        process.terminate()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


def socket_inodes(pid: int) -> set[str]:
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            found.add(target[8:-1])
    return found


def server_side_inode(client_port: int) -> str | None:
    """The inode of the server's end of the loopback connection from `client_port`."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote_port = int(fields[2].split(":")[1], 16)
        if remote_port == client_port and fields[3] == "01":  # ESTABLISHED
            return fields[9]
    return None


def worker_of(client: httpx.Client, served: Served) -> int:
    """Which worker holds `client`'s (kept-alive) connection."""
    assert client.get("/health").status_code == 200
    for pool in client._transport._pool.connections:  # type: ignore[attr-defined]
        stream = pool._connection._network_stream  # type: ignore[union-attr]
        port = stream.get_extra_info("socket").getsockname()[1]
        inode = server_side_inode(port)
        for pid in served.workers():
            if inode is not None and inode in socket_inodes(pid):
                return pid
    raise AssertionError("no worker holds the connection")


def one_client_per_worker(served: Served, stack: ExitStack, key: str) -> list[httpx.Client]:
    """A kept-alive connection to each worker (opened until each worker holds one)."""
    pinned: dict[int, httpx.Client] = {}
    headers = {"Authorization": f"Bearer {key}"}
    for _ in range(200):
        client = stack.enter_context(httpx.Client(base_url=served.url, headers=headers, timeout=60))
        pinned.setdefault(worker_of(client, served), client)
        if len(pinned) == len(served.workers()):
            return list(pinned.values())
        # the workers share one listening socket: whichever is waiting in accept() takes the
        # next connection, and on busy cores one worker can take many in a row
        time.sleep(0.05)
    raise AssertionError(f"connections reached only workers {sorted(pinned)}")


def test_default_workers_is_one_per_core_up_to_four() -> None:
    assert 1 <= default_workers() <= MAX_DEFAULT_WORKERS
    assert default_workers() == min(MAX_DEFAULT_WORKERS, len(os.sched_getaffinity(0)))


def test_two_workers_read_each_others_writes_and_keys_and_erasures(home: Path) -> None:
    with serve(home, workers=2) as served, ExitStack() as stack:
        assert len(served.workers()) == 2
        # a key created after the workers started works on both
        issued = cli_json(home, "keys", "create", "--agent", "ops", "--user", "maya", "--admin")
        assert isinstance(issued, dict)
        first, second = one_client_per_worker(served, stack, issued["key"])
        assert worker_of(first, served) != worker_of(second, served)

        for round_ in range(6):
            writer, reader = (first, second) if round_ % 2 == 0 else (second, first)
            content = f"Maya visited museum number {round_} in Lisbon"
            added = writer.post("/memories", json={"contents": [content], "user_id": "maya"})
            assert added.status_code == 201, added.text
            memory_id = added.json()["memories"][0]["id"]
            # the very next read, on the other process, sees the acknowledged write
            got = reader.get(f"/memories/{memory_id}")
            assert got.status_code == 200 and got.json()["content"] == content
            listed = reader.get("/memories", params={"user_id": "maya"}).json()
            assert content in [m["content"] for m in listed]
            hits = reader.post("/search", json={"query": f"museum {round_}", "user_id": "maya"})
            assert memory_id in [h["id"] for h in hits.json()]
            forgotten = reader.post(f"/memories/{memory_id}/forget")
            assert forgotten.status_code == 200
            assert writer.get(f"/memories/{memory_id}").json()["state"] == "forgotten"

        # revoked in another process: refused by both workers at once
        cli_json(home, "keys", "revoke", issued["id"])
        for client in (first, second):
            assert client.get("/whoami").status_code == 401

        # an erasure by the CLI reaches both workers
        admin = cli_json(home, "keys", "create", "--agent", "ops", "--user", "eve", "--admin")
        assert isinstance(admin, dict)
        auth = {"Authorization": f"Bearer {admin['key']}"}
        for client in (first, second):
            client.headers.update(auth)
        written = first.post(
            "/memories", json={"contents": ["Eve hides the Zorblatt key"], "user_id": "eve"}
        )
        assert written.status_code == 201, written.text
        eve_id = written.json()["memories"][0]["id"]
        assert second.get(f"/memories/{eve_id}").status_code == 200
        erased = CliRunner().invoke(cli, ["--home", str(home), "erase", "--user", "eve", "--yes"])
        assert erased.exit_code == 0, erased.output
        for client in (first, second):
            assert client.get(f"/memories/{eve_id}").status_code == 404
            assert client.get("/memories", params={"user_id": "eve"}).json() == []
            found = client.post("/search", json={"query": "Zorblatt", "user_id": "eve"})
            assert found.json() == []


def test_a_read_does_not_wait_for_a_write_of_its_own_process(tmp_path: Path) -> None:
    """Each process runs reads and writes on two facades: a read answers while a long write
    (here: the writers' thread held for seconds) is still running."""
    with live_server(tmp_path / "home") as server:
        key = server.key("ops", ["maya"], admin=True)
        auth = {"Authorization": f"Bearer {key}"}
        added = httpx.post(
            f"{server.url}/memories",
            json={"contents": ["Maya likes tea"], "user_id": "maya"},
            headers=auth,
            timeout=60,
        )
        assert added.status_code == 201, added.text
        release = threading.Event()
        # the write holds the writers' thread until both reads have answered: a read that
        # waited for it would never answer (the client's timeout would fail the test)
        busy = threading.Thread(target=server.state.writes.call, args=(lambda m: release.wait(),))
        busy.start()
        try:
            listed = httpx.get(
                f"{server.url}/memories", params={"user_id": "maya"}, headers=auth, timeout=60
            )
            hits = httpx.post(
                f"{server.url}/search",
                json={"query": "tea", "user_id": "maya"},
                headers=auth,
                timeout=60,
            )
            assert busy.is_alive()  # the write was still running throughout
        finally:
            release.set()
            busy.join(30)
        assert listed.status_code == 200 and [m["content"] for m in listed.json()] == [
            "Maya likes tea"
        ]
        assert hits.status_code == 200 and hits.json()


def test_serve_hands_its_options_and_one_native_thread_to_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mnemoledger.commands.options import CliState
    from mnemoledger.commands.service.serve_cli import serving_environment

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    serving_environment(CliState(home=tmp_path / "served", actor="ops"))
    assert os.environ["MNEMOLEDGER_HOME"] == str((tmp_path / "served").resolve())
    assert os.environ["MNEMOLEDGER_ACTOR"] == "ops"
    assert os.environ["OMP_NUM_THREADS"] == "1"
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # an operator's own choice stands
    serving_environment(CliState())
    assert os.environ["OMP_NUM_THREADS"] == "2"
