"""core.md follows the store (HAEMA core layer, seed 000).

Every bullet of a user's core document rests on memory ids (`CoreDocument.sources`).
Whatever changes a memory's state or text — forget, update, supersede (add's
reconstruction, consolidation's reconcile and merges), merge, expiry, eviction, lapse,
purge — calls `follow` with the memories it changed, before its save; the new core
version it returns is saved in the same transaction as the change:

- a bullet keeps the memories that still hold it; a superseded memory hands its place to
  its replacement;
- a bullet whose memory got a new text (updated, merged, replaced) takes that text when
  the core gate still admits it into the bullet's section (`section_of`; a text that
  belongs elsewhere is a new candidate, for the core-update stage to judge), else that
  memory stops holding it;
- a bullet no memory holds any more is dropped; one written before sources were recorded
  rests on the changed memories that say exactly it, else on nothing known: it stays.

Every version passes the consent gate (seed 003 §10) on its way out (`record`): a bullet
stating the user's preferred name, pronouns, city or language is never written as free
text, whoever wrote it; such a field enters only as a field bullet ("City: Porto") that a
grant admits (`commands.consent_gate.granted_core`), and stays in later versions.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from mnemoledger.commands.llm.rules.core import render_core_markdown, section_of
from mnemoledger.commands.llm.rules.text import comparison_key
from mnemoledger.commands.write.consent_fields import field_of_bullet, mentions
from mnemoledger.ledger import EventRecord, Ledger, Memory, MemoryNotFound, Provenance, validation
from mnemoledger.ledger.application import retry_on_conflict
from mnemoledger.ledger.core import CORE_SECTIONS, CoreDocument, parse_sections
from mnemoledger.ledger.policy import ACTIVE, SUPERSEDED
from mnemoledger.ledger.provenance import acting_as

CORE_UPDATED = "CoreUpdated"
"""The event of a new core version."""
TEXT_CHANGES = frozenset({"MemoryUpdated", "MemoryMerged"})
"""The memory events that give a memory a new text."""
USER_SECTION = "USER"
"""The section about the user: there a bare name stands for the user ("Pri lives in Porto")."""
MAX_REPLACEMENT_HOPS = 8
"""How far a chain of supersessions is followed within one change (A -> B -> C)."""

Resolve = Callable[[str], Memory | None]
"""Finds a memory by id (a replacement the change did not touch), None if unknown."""


@dataclass(frozen=True)
class CoreBullet:
    """One bullet of core.md, its section and the memories it rests on."""

    section: str
    text: str
    memory_ids: tuple[str, ...]


def bullets_of(markdown: str, sources: Mapping[str, Sequence[str]]) -> list[CoreBullet]:
    """The bullets of a core.md in order, each with the memory ids `sources` names."""
    return [
        CoreBullet(section, text, tuple(sources.get(text, ())))
        for section, texts in parse_sections(markdown).items()
        for text in texts
    ]


def stage_bullets(
    markdown: str,
    before: Sequence[CoreBullet],
    candidates: Sequence[Memory],
    named: Iterable[tuple[str, Sequence[str]]] = (),
) -> list[CoreBullet]:
    """The bullets of the core-update stage's markdown, each resting on the ids the stage
    named for it (candidates or memories the core already rests on), the candidates that
    say it, and the memories the same bullet rested on before."""
    known = {m.id.hex for m in candidates} | {i for b in before for i in b.memory_ids}
    said: dict[str, list[str]] = {}
    for memory in candidates:
        said.setdefault(comparison_key(memory.content), []).append(memory.id.hex)
    for bullet in before:
        said.setdefault(comparison_key(bullet.text), []).extend(bullet.memory_ids)
    for text, ids in named:
        said.setdefault(comparison_key(text), []).extend(i for i in ids if i in known)
    return [
        CoreBullet(b.section, b.text, _unique(said.get(comparison_key(b.text), ())))
        for b in bullets_of(markdown, {})
    ]


def followed(
    bullets: Sequence[CoreBullet],
    changed: Mapping[str, Memory],
    resolve: Resolve,
    reworded: Collection[str] | None = None,
) -> list[CoreBullet]:
    """The bullets after the `changed` memories (by id): dropped, rewritten or kept.
    `reworded` names the memories whose text changed (default: their unsaved events say)."""
    result: list[CoreBullet] = []
    for bullet in (_with_legacy_holders(b, changed) for b in bullets):
        if not any(m in changed for m in bullet.memory_ids):
            result.append(bullet)
            continue
        holders: list[str] = []
        new_text: str | None = None
        for memory_id in bullet.memory_ids:
            if memory_id not in changed:
                holders.append(memory_id)
                continue
            memory, replaced = _current(changed[memory_id], changed, resolve)
            if memory is None or memory.state != ACTIVE:
                continue  # gone: forgotten, expired, evicted, lapsed, purged
            rewritten = replaced or (
                _rewritten(memory) if reworded is None else memory_id in reworded
            )
            if rewritten and comparison_key(memory.content) != comparison_key(bullet.text):
                if section_of(memory.content) != bullet.section:
                    continue  # the gate no longer admits what the memory says, not here
                new_text = new_text or memory.content
            holders.append(memory.id.hex)
        if not holders:
            continue
        text = bullet.text if new_text is None else new_text
        result.append(CoreBullet(bullet.section, text, _unique(holders)))
    return _merged(result)


def follow(
    ledger: Ledger,
    provenance: Provenance,
    user_id: str,
    changed: Iterable[Memory],
    reworded: Collection[str] | None = None,
) -> CoreDocument | None:
    """The user's core document with a new version that follows `changed` (unsaved), or
    None when no bullet rests on them."""
    by_id = {m.id.hex: m for m in changed}
    if not by_id:
        return None
    document = ledger.core_document(provenance, user_id)
    if not document.revision:
        return None
    bullets = bullets_of(document.markdown, document.sources)
    after = followed(bullets, by_id, lambda memory_id: lookup(ledger, memory_id), reworded)
    if after == bullets:
        return None
    return record(document, provenance, after, list(by_id))


def change_memory(
    ledger: Ledger, provenance: Provenance, memory_id: str, change: Callable[[Memory], None]
) -> Memory:
    """Apply `change` to one memory and save it with the core version that follows it, in
    one transaction; a concurrent writer makes the save conflict and it runs again."""

    def attempt() -> Memory:
        memory = ledger.memory(memory_id)
        decided = replace(provenance, user_id=memory.user_id)
        with acting_as(decided):
            change(memory)
        core = follow(ledger, decided, memory.user_id, [memory])
        ledger.save(memory, *([core] if core is not None else []))
        return memory

    return retry_on_conflict(attempt)


def forget(ledger: Ledger, provenance: Provenance, memory_id: str) -> Memory:
    """Soft-delete a memory; the core bullets resting only on it go with it."""
    return change_memory(ledger, provenance, memory_id, lambda memory: memory.forget())


def update(
    ledger: Ledger,
    provenance: Provenance,
    memory_id: str,
    content: str,
    tags: Sequence[str] | None = None,
) -> Memory:
    """Replace a memory's content (and tags); its core bullet takes the new text if the
    core gate admits it, else the bullet goes."""
    new_content = validation.content(content)
    new_tags = validation.tags(tags) if tags is not None else None
    return change_memory(
        ledger, provenance, memory_id, lambda memory: memory.update(new_content, new_tags)
    )


def refollow(ledger: Ledger, record: EventRecord) -> bool:
    """Replay: derive again a core version a direct verb (forget, update) wrote, from the
    replaying ledger's own core and memories, instead of copying the recorded markdown;
    False when `record` is no such version."""
    memory_ids = [str(i) for i in record.data.get("memory_ids") or ()]
    if record.type != CORE_UPDATED or record.prompt_version or not memory_ids:
        return False
    memories = [m for m in (lookup(ledger, i) for i in memory_ids) if m is not None]
    if len(memories) != len(memory_ids):
        return False
    provenance = Provenance(
        user_id=record.user_id,
        actor=record.actor,
        agent_id=record.agent_id,
        thread_id=record.thread_id,
        causation_id=record.causation_id,
    )
    document = follow(ledger, provenance, record.user_id, memories, reworded=memory_ids)
    if document is not None:
        ledger.save(document)
    return True


def record(
    document: CoreDocument,
    provenance: Provenance,
    bullets: Sequence[CoreBullet],
    memory_ids: Sequence[str],
    *,
    admitted: Collection[str] = (),
) -> CoreDocument | None:
    """Write `bullets`, through the consent gate (`consented`), as the document's next
    version; None if the markdown and sources are unchanged, or if a first version would
    hold nothing. `admitted`: field bullets a grant lets in."""
    kept = consented(bullets, document.markdown, admitted)
    if not document.revision and not kept:
        return None
    sections: dict[str, list[str]] = {name: [] for name in CORE_SECTIONS}
    sources: dict[str, list[str]] = {}
    for bullet in kept:
        sections[bullet.section].append(bullet.text)
        if bullet.memory_ids:
            sources[bullet.text] = list(bullet.memory_ids)
    markdown = render_core_markdown(sections)
    if markdown == document.markdown and sources == document.sources:
        return None
    with acting_as(provenance):
        document.update(markdown, sections, list(memory_ids), sources)
    return document


def consented(
    bullets: Sequence[CoreBullet], previous_markdown: str, admitted: Collection[str] = ()
) -> list[CoreBullet]:
    """`bullets` without a free-text statement of a sensitive profile field, and without a
    field bullet that was neither in the previous version nor is `admitted` by a grant."""
    had = {b.text for b in bullets_of(previous_markdown, {}) if field_of_bullet(b.text)}
    kept: list[CoreBullet] = []
    for bullet in bullets:
        if field_of_bullet(bullet.text) is not None:
            if bullet.text in had or bullet.text in admitted:
                kept.append(bullet)
        elif not mentions(bullet.text, named_is_user=bullet.section == USER_SECTION):
            kept.append(bullet)
    return kept


def lookup(ledger: Ledger, memory_id: str) -> Memory | None:
    try:
        return ledger.memory(memory_id)
    except MemoryNotFound:
        return None


def standing_for(memory: Memory, changed: Mapping[str, Memory], resolve: Resolve) -> Memory | None:
    """The memory that now stands for `memory`: itself, or the end of its chain of
    replacements (None when the chain is lost or too long)."""
    return _current(memory, changed, resolve)[0]


def _current(
    memory: Memory, changed: Mapping[str, Memory], resolve: Resolve
) -> tuple[Memory | None, bool]:
    """The memory that now stands for `memory` (its replacement if superseded), and
    whether it is a replacement."""
    replaced = False
    for _ in range(MAX_REPLACEMENT_HOPS):
        if memory.state != SUPERSEDED or not memory.superseded_by:
            return memory, replaced
        successor = changed.get(memory.superseded_by) or resolve(memory.superseded_by)
        if successor is None:
            return None, replaced
        memory, replaced = successor, True
    return None, replaced


def _with_legacy_holders(bullet: CoreBullet, changed: Mapping[str, Memory]) -> CoreBullet:
    """A bullet that names no memory (written before sources were recorded) rests on the
    changed memories that say exactly it, if any."""
    if bullet.memory_ids:
        return bullet
    key = comparison_key(bullet.text)
    saying = [
        memory_id
        for memory_id, memory in changed.items()
        if comparison_key(memory.content) == key and not _rewritten(memory)
    ]
    return CoreBullet(bullet.section, bullet.text, tuple(saying)) if saying else bullet


def _rewritten(memory: Memory) -> bool:
    """The change gave the memory a new text (its unsaved events say so)."""
    return any(type(e).__name__ in TEXT_CHANGES for e in memory.pending_events)


def _unique(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ids))


def _merged(bullets: Sequence[CoreBullet]) -> list[CoreBullet]:
    """Bullets saying the same thing become one (the first), resting on all their ids."""
    first: dict[str, int] = {}
    result: list[CoreBullet] = []
    for bullet in bullets:
        key = comparison_key(bullet.text)
        if key in first:
            kept = result[first[key]]
            ids = _unique([*kept.memory_ids, *bullet.memory_ids])
            result[first[key]] = CoreBullet(kept.section, kept.text, ids)
        else:
            first[key] = len(result)
            result.append(bullet)
    return result
