"""The parts every capability of `MnemoLedger` shares, and the descriptor that lets the
facade expose them.

`Parts` is built once per facade: the settings, the acting identity, the clock, the event
log, the embedder, every read model and the runner over them, the LLM provider, the add
pipeline, and the helpers every capability uses (catch up, provenance, the categories
config, memory rows as API models). Capabilities (`Writes`, `Notes`, `Recall`, ...) hold
the parts and read them at call time, so a part the caller replaces (`memory.clock = ...`,
`memory.actor = ...`, a replay's `memory.llm = ...`) is what the next call uses.

    class MnemoLedger:
        ledger: part[Ledger] = part()           # memory.ledger reads and sets parts.ledger
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar, overload

from mnemoledger.commands.judge.facts import StatedFact
from mnemoledger.commands.llm import make_provider
from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.models import MemoryOut
from mnemoledger.commands.recall.relations import edges_of
from mnemoledger.commands.recall.user_names import UserNames
from mnemoledger.commands.write import replaying
from mnemoledger.commands.write.add import AddPipeline
from mnemoledger.commands.write.add_later import AddProcessor, in_flight, pipeline_on
from mnemoledger.commands.write.categories import CategoriesConfig, load_categories
from mnemoledger.commands.write.command_run import holds_a_writer_lock
from mnemoledger.ledger import Ledger, Memory, Provenance, Settings
from mnemoledger.ledger.errors import MemoryNotFound
from mnemoledger.ledger.validation import identifier
from mnemoledger.projections.checkpoints import CheckpointsProjection
from mnemoledger.projections.consent import ConsentProjection
from mnemoledger.projections.core import CoreProjection
from mnemoledger.projections.delta import DeltaProjection
from mnemoledger.projections.embeddings import make_embedder
from mnemoledger.projections.embeddings.cache import CachedEmbedder, EmbeddingCache
from mnemoledger.projections.facts import FactsProjection
from mnemoledger.projections.flushes import FLUSH_GUARD_DIR, FlushGuard
from mnemoledger.projections.graph import GraphProjection
from mnemoledger.projections.history import HistoryProjection
from mnemoledger.projections.latest import LatestProjection
from mnemoledger.projections.layers import LayersProjection, MemoryRow
from mnemoledger.projections.pending_adds import PENDING_ADDS_DIR, PendingAdds
from mnemoledger.projections.runner import Progress, Runner
from mnemoledger.projections.topics import TopicsProjection
from mnemoledger.projections.transcripts import TranscriptsProjection
from mnemoledger.projections.turn_queue import TURN_QUEUE_DIR, PendingTurns
from mnemoledger.projections.vectors import VectorsProjection

ADD_READS = ("layers", "vectors", "consent")
"""The read models `add` decides from; the others catch up at the next read."""

T = TypeVar("T")


class Parts:
    """What the capabilities share: one ledger, its read models and their helpers."""

    def __init__(
        self, settings: Settings, actor: str, embedder: CachedEmbedder | None = None
    ) -> None:
        self.settings = settings
        self.actor = actor
        """Recorded on every event; servers set it per request (calls are serial)."""
        self.clock: Callable[[], datetime] = replaying.now
        """Now, in UTC: the original run's time inside a replay; tests and the worker set it."""
        self.ledger = Ledger(settings)
        directory = settings.projections_dir
        self._owns_embedder = embedder is None
        self.embedder = embedder or CachedEmbedder(
            make_embedder(settings), EmbeddingCache(settings.home / "embeddings.sqlite3")
        )
        self.layers = LayersProjection(directory / "layers.sqlite3")
        self.vectors = VectorsProjection(directory / "vectors", self.embedder)
        self.core_model = CoreProjection(directory / "core")
        self.consent_model = ConsentProjection(directory / "consent")
        self.delta_model = DeltaProjection(directory / "delta")
        self.graph_model = GraphProjection(directory / "graph")
        self.transcripts_model = TranscriptsProjection(directory / "transcripts", self.embedder)
        self.history_model = HistoryProjection(directory / "history")
        self.topics_model = TopicsProjection(directory / "topics")
        self.latest_model = LatestProjection(directory / "latest")
        self.checkpoints_model = CheckpointsProjection(directory / "checkpoints")
        self.facts_model = FactsProjection(directory / "facts")
        self.flushes_model = FlushGuard(directory / FLUSH_GUARD_DIR)
        self.turn_queue_model = PendingTurns(directory / TURN_QUEUE_DIR)
        self.pending_adds_model = PendingAdds(directory / PENDING_ADDS_DIR)
        self.runner = Runner(
            self.ledger,
            [
                self.layers,
                self.vectors,
                self.core_model,
                self.consent_model,
                self.delta_model,
                self.graph_model,
                self.transcripts_model,
                self.history_model,
                self.topics_model,
                self.latest_model,
                self.checkpoints_model,
                self.facts_model,
                self.flushes_model,
                self.turn_queue_model,
                self.pending_adds_model,
            ],
            directory / ".lock",
        )
        self.llm: LLMProvider = make_provider(settings)
        self.add_pipeline = AddPipeline(
            self.ledger,
            self.layers,
            self.vectors,
            self.embedder,
            self.llm,
            settings,
            refresh=self.refresh_for_add,
            consent=self.consent_model,
        )
        self.in_flight = in_flight(settings)
        """The adds this process is still processing on this log (every ledger's of it)."""
        self.adds_in_background = True
        """Whether `add(wait=False)` processes the add in a background thread of this
        process; the CLI, which exits at once, leaves it to `worker` or `serve`."""
        self.add_processor = AddProcessor(
            settings,
            lambda: Parts(self.settings, self.actor, self.embedder),
            lambda parts: pipeline_on(self.add_pipeline, parts),
        )
        self._categories: CategoriesConfig | None = None
        self._user_names: UserNames | None = None

    # --- catching up -------------------------------------------------------------------

    def refresh(self, progress: Progress | None = None) -> int:
        """Bring the read models up to date with the log; returns events processed. A read
        first waits for the adds this process is still processing (`add(wait=False)`); a
        writer deciding under a user's writer lock does not."""
        if not holds_a_writer_lock(self.ledger):
            self.in_flight.wait()
        return self.runner.catch_up(progress)

    def refresh_for_add(self) -> int:
        """Bring up to date only the read models an add decides from (its duplicates and
        related memories, the consent requests already made): the others (graph, delta,
        history, topics, transcripts, core files, latest) follow the add's events at the
        next read that catches up, off the add's path."""
        return self.runner.catch_up(names=ADD_READS)

    # --- shared helpers ----------------------------------------------------------------

    @property
    def categories_config(self) -> CategoriesConfig:
        """The categories config, read once from the configured file."""
        if self._categories is None:
            self._categories = load_categories(self.settings)
        return self._categories

    @property
    def user_names(self) -> UserNames | None:
        """Which names each user's memories give as the user's own, for searches to read a
        question naming the user as one about them; None when the setting
        `search_user_names` is off."""
        if not self.settings.search_user_names:
            return None
        if self._user_names is None or self._user_names.layers is not self.layers:
            self._user_names = UserNames(self.layers, _read_facts)
        return self._user_names

    def provenance(self, user: str, agent: str | None, thread: str | None) -> Provenance:
        """Who acts: the acting identity, with the agent and thread named (validated)."""
        return Provenance(
            user_id=user,
            actor=self.actor,
            agent_id=identifier("agent", agent, required=False),
            thread_id=identifier("thread", thread, required=False),
        )

    def out(self, row: MemoryRow) -> MemoryOut:
        """A memory row of the layers read model, with its relations, as the API returns it."""
        return MemoryOut(**row.as_json(), links=edges_of(self.graph_model, row.id))

    def current(self, memory: Memory) -> MemoryOut:
        """A memory just written, as the read models now show it."""
        self.refresh()
        row = self.layers.get(memory.id.hex)
        if row is None:  # pragma: no cover - the refresh above guarantees the row
            raise MemoryNotFound(memory.id.hex)
        return self.out(row)

    def close(self) -> None:
        """`MnemoLedger.close`: finish background adds, release everything (documented there)."""
        self.add_processor.close()
        self.runner.close()
        if self._owns_embedder:
            self.embedder.close()
        self.ledger.close()


def _read_facts(texts: Sequence[tuple[str, str]]) -> list[list[StatedFact]]:
    """The judge's facts model (loaded on first use: numpy and the model)."""
    from mnemoledger.commands.judge import default_judge

    return default_judge().facts(texts)


# --- the shared parts, seen through the facade ---------------------------------------------


class HasParts(Protocol):
    @property
    def parts(self) -> Parts: ...


class part(Generic[T]):
    """A shared part seen through the facade: `memory.ledger` reads `parts.ledger`, and
    `memory.ledger = view` replaces it for every capability."""

    name: str

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, facade: None, owner: type[Any]) -> part[T]: ...

    @overload
    def __get__(self, facade: HasParts, owner: type[Any] | None = None) -> T: ...

    def __get__(self, facade: HasParts | None, owner: type[Any] | None = None) -> T | part[T]:
        if facade is None:
            return self
        value: T = getattr(facade.parts, self.name)
        return value

    def __set__(self, facade: HasParts, value: T) -> None:
        setattr(facade.parts, self.name, value)
