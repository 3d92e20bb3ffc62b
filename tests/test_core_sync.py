"""core.md follows the store (issue 14, item 4): every bullet rests on memory ids, and
forget, update, supersede, consolidation merges and expiry reach it in the same save;
transient facts never enter it; a rebuild gives the same core.md."""

from __future__ import annotations

from pathlib import Path

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm import OfflineProvider, ScriptedProvider
from mnemoledger.commands.llm.consolidation_schemas import ReconcileOutput
from mnemoledger.ledger import Provenance
from mnemoledger.ledger.core import parse_sections
from mnemoledger.ledger.provenance import acting_as
from tests.test_consolidation_helpers import USER, Clock, clock, engram, place, remember, set_ttl

__all__ = ["clock", "engram"]


def user_bullets(memory: MnemoLedger, user: str = "u") -> list[str]:
    return parse_sections(memory.core(user=user).markdown)["USER"]


def bullet_sources(memory: MnemoLedger, user: str = "u") -> dict[str, list[str]]:
    memory.refresh()
    return {b.text: b.memory_ids for b in memory.core_model.bullets(user)}


def same_save(memory: MnemoLedger, memory_id: str) -> bool:
    """The memory's last event and the newest CoreUpdated were written by one save."""
    log = memory.ledger.read(0, 1_000_000)
    last_change = max(r.position or 0 for r in log if r.stream_id == memory_id)
    [core] = [r for r in log if r.type == "CoreUpdated"][-1:]
    return core.position == last_change + 1


def test_each_bullet_rests_on_the_memory_it_came_from(memory: MnemoLedger) -> None:
    [allergy] = memory.add(["I'm allergic to penicillin"], user="u").memories
    assert user_bullets(memory) == ["I'm allergic to penicillin"]
    assert bullet_sources(memory) == {"I'm allergic to penicillin": [allergy.id]}
    [core] = [r for r in memory.ledger.read(0, 1_000_000) if r.type == "CoreUpdated"]
    assert core.data["sources"] == {"I'm allergic to penicillin": [allergy.id]}


def test_forget_removes_the_bullet_from_core_md_and_resume(memory: MnemoLedger) -> None:
    [editor] = memory.add(["I use Neovim as my editor"], user="u").memories
    [allergy] = memory.add(["I'm allergic to penicillin"], user="u").memories
    core = memory.core(user="u")
    assert "Neovim" in core.markdown and "Neovim" in memory.resume("u").text

    memory.forget(editor.id)

    after = memory.core(user="u")
    assert after.version == core.version + 1
    assert "Neovim" not in after.markdown and "penicillin" in after.markdown
    assert after.path and Path(after.path).read_text() == after.markdown
    assert "Neovim" not in memory.resume("u").text
    assert same_save(memory, editor.id)
    assert bullet_sources(memory) == {"I'm allergic to penicillin": [allergy.id]}


def test_forgetting_a_memory_no_bullet_rests_on_writes_no_core_version(
    memory: MnemoLedger,
) -> None:
    memory.add(["I'm allergic to penicillin"], user="u")
    [lunch] = memory.add(["I had pasta for lunch"], user="u").memories
    version = memory.core(user="u").version
    memory.forget(lunch.id)
    assert memory.core(user="u").version == version


def test_update_replaces_the_bullet(memory: MnemoLedger) -> None:
    [job] = memory.add(["I work at Acme"], user="u").memories
    memory.update(job.id, "I work at Globex")
    assert user_bullets(memory) == ["I work at Globex"]
    assert bullet_sources(memory) == {"I work at Globex": [job.id]}
    assert same_save(memory, job.id)


def test_an_update_the_core_gate_refuses_drops_the_bullet(memory: MnemoLedger) -> None:
    [job] = memory.add(["I work at Acme"], user="u").memories
    memory.update(job.id, "The meeting moved to 3pm")
    assert user_bullets(memory) == []
    assert "meeting" not in memory.core(user="u").markdown


def test_a_new_job_leaves_core_with_the_new_employer_only(memory: MnemoLedger) -> None:
    # (a city would not enter core.md without consent: see tests/test_consent.py)
    [acme] = memory.add(["I work at Acme"], user="u").memories
    [globex] = memory.add(["I left my job at Acme and joined Globex"], user="u").memories
    assert user_bullets(memory) == [globex.content]
    assert bullet_sources(memory) == {globex.content: [globex.id]}
    active = [m.id for m in memory.list(user="u") if m.state == "active"]
    assert acme.id not in active and globex.id in active  # the new job replaced Acme


def test_transient_facts_never_enter_core(memory: MnemoLedger) -> None:
    memory.add(["The meeting moved to 3pm"], user="u")
    memory.add(["Dentist appointment on Friday at 10"], user="u")
    memory.add(["I'm allergic to penicillin"], user="u")
    memory.add(["I work from home on Fridays"], user="u")
    assert user_bullets(memory) == ["I'm allergic to penicillin", "I work from home on Fridays"]
    assert not any(
        "meeting" in bullet or "Dentist" in bullet
        for bullets in parse_sections(memory.core(user="u").markdown).values()
        for bullet in bullets
    )


def test_a_consolidation_merge_rewrites_the_bullet(engram: MnemoLedger, clock: Clock) -> None:
    [older] = engram.add(["Maya works at Acme as a designer"], user=USER).memories
    assert user_bullets(engram, USER) == ["Maya works at Acme as a designer"]
    clock.advance(hours=2)
    newer = remember(engram, "Maya works at Globex")
    for memory_id in (older.id, newer):
        place(engram, memory_id, "working")
    merged = "Maya works at Globex as a designer (she worked at Acme before)"
    scripted = ScriptedProvider(OfflineProvider())
    scripted.script("reconcile", ReconcileOutput(decision="absorb", merged_content=merged))
    engram.llm = scripted
    engram.consolidate(user=USER)
    assert engram.get(older.id).superseded_by == newer
    assert user_bullets(engram, USER) == [merged]
    assert bullet_sources(engram, USER) == {merged: [newer]}


def test_expiry_in_a_cycle_drops_the_bullet(engram: MnemoLedger, clock: Clock) -> None:
    [allergy] = engram.add(["Maya is allergic to penicillin"], user=USER).memories
    [cat] = engram.add(["Maya has a cat called Miso"], user=USER).memories
    set_ttl(engram, cat.id, 1, clock)
    clock.advance(days=2)
    result = engram.consolidate(user=USER)
    assert any(o["op"] == "expire" and o["memory"] == cat.id for o in result.operations)
    assert user_bullets(engram, USER) == ["Maya is allergic to penicillin"]
    assert bullet_sources(engram, USER) == {"Maya is allergic to penicillin": [allergy.id]}
    [command] = result.users
    [core] = [r for r in engram.ledger.read(0, 1_000_000) if r.type == "CoreUpdated"][-1:]
    assert core.causation_id == command.command_id


def test_a_core_written_before_sources_follows_a_forget_by_its_text(
    memory: MnemoLedger,
) -> None:
    [editor] = memory.add(["I use Neovim as my editor"], user="u").memories
    [allergy] = memory.add(["I'm allergic to penicillin"], user="u").memories
    provenance = Provenance(user_id="u")
    document = memory.ledger.core_document(provenance, "u")
    with acting_as(provenance):  # a version as the log held them before `sources`
        document.update(document.markdown, parse_sections(document.markdown), [])
    memory.ledger.save(document)
    assert bullet_sources(memory) == {"I use Neovim as my editor": [], allergy.content: []}
    memory.forget(editor.id)
    assert "Neovim" not in memory.core(user="u").markdown
    assert bullet_sources(memory) == {allergy.content: []}


def test_a_rebuild_gives_the_same_core(memory: MnemoLedger) -> None:
    [editor] = memory.add(["I use Neovim as my editor"], user="u").memories
    [job] = memory.add(["I work at Acme"], user="u").memories
    memory.add(["I'm allergic to penicillin"], user="u")
    memory.forget(editor.id)
    memory.update(job.id, "I work at Globex")
    before = (memory.core(user="u"), memory.core_model.versions("u"), bullet_sources(memory))
    memory.rebuild()
    after = (memory.core(user="u"), memory.core_model.versions("u"), bullet_sources(memory))
    assert after == before
    assert "Neovim" not in after[0].markdown and "Globex" in after[0].markdown
