"""The consent gate (seed 003 §10): what a sensitive profile field may reach, and when.

A memory may say "I live in Porto" (the semantic store keeps what was said), but the
user's profile — core.md, `profile`, the profile and notes of an agent's context — takes a
preferred name, pronouns, a city or a language only once a person has granted it:

- every write path (add, notes, ingest) turns each such field a new text states into a
  `ConsentRequest`, saved in the same transaction as the memories; a request already made
  for the same field and value (pending, granted or denied) is not made again;
- core.md never holds such a statement as free text: `core_sync.record` drops it, whichever
  stage (an LLM's or the offline rules) wrote it. A granted field enters core.md's USER
  section as one field bullet ("City: Porto"), written with the grant (`granted_core`); a
  later grant of the same field replaces it; a denied one never enters;
- `profile` and the agent context read `consented_profile` / `redact`: sensitive columns
  come only from granted requests, and a sentence that states an ungranted field is left
  out.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Final

from eventsourcing.domain import Aggregate

from mnemoledger.commands.judge.judgement import Judge
from mnemoledger.commands.lifecycle import core_sync
from mnemoledger.commands.write.consent_fields import (
    CITY,
    LANGUAGE,
    PREFERRED_NAME,
    PRONOUNS,
    FieldMention,
    field_bullet,
    field_of_bullet,
    field_value,
    mentions,
    mentions_in,
    same_value,
    sentences,
)
from mnemoledger.commands.write.replaying import now as decision_time
from mnemoledger.commands.write.replaying import recorded_id
from mnemoledger.ledger import Ledger, Provenance
from mnemoledger.ledger.consent import ConsentRequest
from mnemoledger.ledger.core import CoreDocument
from mnemoledger.ledger.policy import (
    CONSENT_DENIED,
    CONSENT_GRANTED,
    CONSENT_PENDING,
    CONSENT_WINDOW_DAYS,
    MAX_CONSENT_REASON_CHARS,
    MAX_PROFILE_VALUE_CHARS,
    SENSITIVE_PROFILE_FIELDS,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.projections.consent import ConsentProjection

PROFILE_COLUMNS: Final = {PREFERRED_NAME: "display_name", CITY: "location"}
"""The `profile` columns (seed 004 §5) a sensitive field fills once granted; pronouns and
language are columns of their own."""
SENSITIVE_COLUMNS: Final = frozenset({*PROFILE_COLUMNS.values(), PRONOUNS, LANGUAGE})
KEYED_FIELDS: Final = {
    "name": PREFERRED_NAME,
    "display_name": PREFERRED_NAME,
    "preferred_name": PREFERRED_NAME,
    "nickname": PREFERRED_NAME,
    "location": CITY,
    "city": CITY,
    "home_city": CITY,
    "hometown": CITY,
    "residence": CITY,
    "pronouns": PRONOUNS,
    "language": LANGUAGE,
    "languages": LANGUAGE,
    "native_language": LANGUAGE,
    "preferred_language": LANGUAGE,
}
"""The last part of a memory key (Nebo's `user/location`) that files a sensitive field."""

KEEPS_A_DECISION: Final = (CONSENT_PENDING, CONSENT_GRANTED, CONSENT_DENIED)
"""A request in one of these states answers a new statement of the same value: asking
again would nag (pending), or reopen what a person settled (granted, denied). An expired
one does not: the statement is proposed again."""
_REASON_QUOTE_CHARS: Final = 160
MAX_BARE_VALUE_WORDS: Final = 4
"""A profile column's value longer than this is a sentence, read for mentions instead."""


# --- core.md ----------------------------------------------------------------------------------


def granted_core(
    ledger: Ledger, provenance: Provenance, user_id: str, field: str, value: str
) -> CoreDocument | None:
    """The user's core document with the granted field's bullet in USER (replacing an
    earlier value of the field), unsaved; None if it is there already."""
    document = ledger.core_document(provenance, user_id)
    bullet = field_bullet(field, value)
    bullets = [
        b
        for b in core_sync.bullets_of(document.markdown, document.sources)
        if (field_of_bullet(b.text) or ("", ""))[0] != field
    ]
    bullets.append(core_sync.CoreBullet(core_sync.USER_SECTION, bullet, ()))
    return core_sync.record(document, provenance, bullets, [], admitted=(bullet,))


# --- profile and context ----------------------------------------------------------------------


def consented_profile(profile: Mapping[str, str], granted: Mapping[str, str]) -> dict[str, str]:
    """A derived profile with its sensitive columns taken from the granted fields only, and
    no other column's value stating an ungranted field."""
    result = {
        column: value
        for column, value in profile.items()
        if column not in SENSITIVE_COLUMNS and not _ungranted(value, granted)
    }
    for field in SENSITIVE_PROFILE_FIELDS:
        if field in granted:
            result[PROFILE_COLUMNS.get(field, field)] = granted[field]
    return dict(sorted(result.items()))


def redact(text: str, granted: Mapping[str, str], *, named_is_user: bool = False) -> str:
    """`text` without the sentences that state a sensitive field of the user with a value
    nobody granted; the text itself when it states none."""
    if not _ungranted(text, granted, named_is_user=named_is_user):
        return text
    kept = [
        text[start:end]
        for start, end in sentences(text)
        if not _ungranted(text[start:end], granted, named_is_user=named_is_user)
    ]
    return "".join(kept).strip()


def _ungranted(text: str, granted: Mapping[str, str], *, named_is_user: bool = False) -> bool:
    return any(
        not (m.field in granted and m.matches(granted[m.field]))
        for m in mentions(text, named_is_user=named_is_user)
    )


# --- proposals --------------------------------------------------------------------------------


def proposals(
    texts: Iterable[str],
    provenance: Provenance,
    consent: ConsentProjection | None,
    *,
    keyed: Iterable[tuple[str | None, str]] = (),
    now: datetime | None = None,
    judge: Judge | None = None,
) -> builtins.list[ConsentRequest]:
    """One unsaved `ConsentRequest` per sensitive field and value the `texts` state about
    the user, or that a value filed under a sensitive key gives (`keyed`: (key, value) of
    extracted facts, "user/location" = "Porto"), except those a request already answers
    (`KEEPS_A_DECISION`). Made under `provenance` (the command that read the texts), so
    the audit trail names it; the window opens at `now` (`asked_at` the command). `judge`
    reads the texts, in one batch (the offline facts model when None; the configured
    model's, recorded on the command, with a provider)."""
    answered = _answered(consent, provenance.user_id)
    moment = now or decision_time()
    texts = builtins.list(texts)
    read = mentions_in(texts, judge=judge)
    found = [(m, text) for text, found_in in zip(texts, read, strict=True) for m in found_in]
    found += [(m, value) for key, value in keyed if (m := _keyed_mention(key, value))]
    requests: builtins.list[ConsentRequest] = []
    for mention, text in found:
        key = (mention.field, _fold(mention.value))
        if key in answered:
            continue
        answered.add(key)
        requests.append(_request(mention, text, provenance, moment))
    return requests


def keyed_field(key: str | None) -> str | None:
    """The sensitive field a memory key files its value under ("user/location": city;
    "language/portuguese", one of a list: language)."""
    if not key:
        return None
    for part in reversed(key.split("/")):
        field = KEYED_FIELDS.get(re.sub(r"[^a-z]+", "_", part.casefold()).strip("_"))
        if field is not None:
            return field
    return None


def _keyed_mention(key: str | None, value: str) -> FieldMention | None:
    """A bare value ("Porto") filed under a sensitive key; a longer text is read for
    mentions instead."""
    field = keyed_field(key)
    if field is None or len(value.split()) > MAX_BARE_VALUE_WORDS:
        return None
    found = field_value(field, value)
    return None if found is None else FieldMention(field, found, 0, len(value))


def keyed_ungranted(key: str | None, value: str, granted: Mapping[str, str]) -> bool:
    """A value filed under a sensitive key that is not the granted value of its field."""
    field = keyed_field(key)
    return field is not None and not (field in granted and same_value(granted[field], value))


def asked_at(command: Aggregate) -> datetime:
    """When a command's proposals open their window: the time its request was recorded.
    A replay re-creates the command later, but its clock (`replaying.now`) reads the
    original request's time, the earlier of the two."""
    return min(decision_time(), command.created_on)


def _answered(consent: ConsentProjection | None, user_id: str) -> set[tuple[str, str]]:
    if consent is None:
        return set()
    return {
        (row.field, _fold(row.proposed_value))
        for row in consent.list(user_id)
        if row.status in KEEPS_A_DECISION
    }


def _request(
    mention: FieldMention, text: str, provenance: Provenance, moment: datetime
) -> ConsentRequest:
    quote = " ".join(text.split())
    if len(quote) > _REASON_QUOTE_CHARS:
        quote = quote[: _REASON_QUOTE_CHARS - 1] + "…"
    reason = f"stated: {quote}"[:MAX_CONSENT_REASON_CHARS]
    with acting_as(provenance):
        request = ConsentRequest(
            user_id=provenance.user_id,
            field=mention.field,
            proposed_value=mention.value[:MAX_PROFILE_VALUE_CHARS],
            reason=reason,
            expires_at=(moment + timedelta(days=CONSENT_WINDOW_DAYS)).isoformat(),
            sensitive=True,
        )
    return recorded_id(request)


def _fold(value: str) -> str:
    return " ".join(value.casefold().split())


def granted_fields(consent: ConsentProjection | None, user_id: str) -> dict[str, str]:
    """The user's granted profile fields ({} without a consent read model)."""
    return {} if consent is None else consent.profile_fields(user_id)


__all__ = [
    "consented_profile",
    "field_bullet",
    "field_of_bullet",
    "granted_core",
    "granted_fields",
    "keyed_field",
    "keyed_ungranted",
    "proposals",
    "redact",
    "same_value",
]
