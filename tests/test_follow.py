"""`mnemoledger project --follow` as its own process: it keeps the read models up to date
while a writer writes (woken by LISTEN/NOTIFY on PostgreSQL: there it is told to poll only
once a minute, so only a notification can wake it in time), and stops cleanly on SIGTERM
and SIGINT."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemoledger.ledger import Ledger, NewMemory, Provenance, Settings
from mnemoledger.ledger.store import is_postgres
from mnemoledger.projections.layers import LayersProjection


def layers_position(home: Path) -> int:
    layers = LayersProjection(Settings(home=home).projections_dir / "layers.sqlite3")
    try:
        return layers.position()
    finally:
        layers.close()


def wait_for(condition: object, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_a_follower_keeps_up_with_a_writer_and_stops_cleanly(
    home: Path, stop_signal: signal.Signals
) -> None:
    poll = "60" if is_postgres(os.environ.get("MNEMOLEDGER_DB")) else "0.1"
    command = [sys.executable, "-m", "mnemoledger", "--home", str(home), "--json", "project"]
    provenance = Provenance(user_id="maya", actor="tester")
    with Ledger(Settings(home=home)) as ledger:
        ledger.add(provenance, [NewMemory("before the follower started")])
        follower = subprocess.Popen(
            [*command, "--follow", "--poll", poll],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_for(lambda: layers_position(home) == ledger.last_position())
            for n in range(3):
                ledger.add(provenance, [NewMemory(f"fact {n} written while following")])
                wait_for(lambda: layers_position(home) == ledger.last_position(), 20)
            assert follower.poll() is None, "still following"
        finally:
            follower.send_signal(stop_signal)
            out, err = follower.communicate(timeout=60)
        assert follower.returncode == 0, err
        assert err == ""
        result = json.loads(out)
        assert result["followed"] and result["position"] == ledger.last_position()
        assert result["events"] == ledger.last_position()
