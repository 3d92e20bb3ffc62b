"""A faster drop-in for the library's JSON transcoder, writing and reading the same format.

The library's `JSONTranscoder` serialises with the standard `json` module and a `default`
hook: ~7 µs per ledger event, a fifth of the ledger's whole cost of an append.
`OrjsonTranscoder` writes the same JSON document (custom types as `{"_type_": name,
"_data_": ...}` through the registered `Transcoding`s, e.g. the `timestamp` as
`datetime_iso`) with orjson in ~3 µs, and reads it back with orjson, reviving the custom
types innermost first as the library's `object_hook` does.

orjson and `json` disagree on a few values (orjson writes UUIDs, enums and dataclasses
natively, NaN as null, and rejects integers beyond 64 bits, non-string keys, NaN literals
and lone surrogates), so anything but plain JSON values and registered types is handed to
the library's own encoder or decoder: the stored bytes always decode the same way with
either transcoder, and errors are the library's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import Enum
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import DatetimeAsISO, JSONTranscoder, Transcoding

_SCALARS = frozenset({str, int, bool, type(None)})
"""Types whose values orjson and `json` write alike (orjson refuses ints beyond 64 bits,
which then go to the library's encoder)."""

_WRITTEN_NATIVELY = (UUID, Enum, orjson.Fragment, str, int, float, list, tuple, dict)
"""Types orjson writes itself whatever the options (and `json` the JSON-native ones, also
ignoring their transcodings): registered transcodings of these are left to `json`."""

_KEYS = frozenset({str})
"""The one type of dict keys that orjson and `json` write alike."""

_BIG = float(2**63)
"""orjson reads integers beyond 64 bits as floats (`json` as ints): a decoded float this
large may have been one, so such documents are read again with `json`."""

_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
"""Let datetimes and dataclasses reach `default`, hence their registered transcodings."""


class PlainJSON(dict[str, Any]):
    """A dict its maker built of text keys and texts (or such dicts) only, e.g. an event's
    encrypted envelope: orjson and `json` write it alike, so the transcoder writes it
    without looking into it (~0.8 µs per event)."""


class _Inexact(Exception):
    """orjson may have read this document differently from `json`."""


class OrjsonTranscoder(JSONTranscoder):
    """`JSONTranscoder` with orjson: same stored format, same registered transcodings."""

    def __init__(self) -> None:
        super().__init__()
        self._deferred: frozenset[type] = frozenset()
        """Registered types that orjson hands to `default`."""

    def register(self, transcoding: Transcoding) -> None:
        super().register(transcoding)
        self._deferred = frozenset(
            cls for cls in self.types if not issubclass(cls, _WRITTEN_NATIVELY)
        )

    def encode(self, obj: Any) -> bytes:
        if type(obj) is dict:
            prepared = self._prepared(obj)
            if prepared is not None:
                try:
                    return orjson.dumps(prepared, default=self._transcode, option=_OPTIONS)
                except orjson.JSONEncodeError:
                    pass
        return super().encode(obj)

    def _prepared(self, obj: dict[Any, Any]) -> dict[str, Any] | None:
        """`obj` with its top-level values of registered types already in the form
        `_transcode` would give orjson for them (an event's timestamp: one call back from
        orjson less per event), or None when orjson would not write `obj` exactly as the
        library's `json` encoder does (see `_plain`)."""
        if not _KEYS.issuperset(map(type, obj)):
            return None
        deferred = self._deferred
        copy: dict[str, Any] | None = None
        for key, value in obj.items():
            cls = type(value)
            if cls in _SCALARS:
                continue
            if cls is float:
                if value - value == 0.0:  # finite: json writes NaN and Infinity, orjson null
                    continue
                return None
            if cls in deferred:
                transcoding = self.types[cls]
                if cls is datetime and value.tzinfo is UTC and type(transcoding) is DatetimeAsISO:
                    # orjson formats a UTC datetime exactly as `isoformat`, in a fifth of the time
                    data: Any = orjson.Fragment(orjson.dumps(value))
                else:
                    try:
                        data = transcoding.encode(value)
                    except Exception:
                        return None  # the library's encoder raises its own error
                    if type(data) is not str:
                        continue  # orjson hands it to `_transcode`, which checks it
                if copy is None:
                    copy = dict(obj)
                copy[key] = {"_type_": transcoding.name, "_data_": data}
                continue
            if cls is PlainJSON:
                continue
            if cls is dict:
                if _KEYS.issuperset(map(type, value)) and self._plain(value.values()):
                    continue
                return None
            if not self._plain((value,)):
                return None
        return obj if copy is None else copy

    def decode(self, data: bytes) -> Any:
        try:
            return self._revive(orjson.loads(data))
        except (orjson.JSONDecodeError, _Inexact):
            return super().decode(data)

    def _plain(self, values: Iterable[Any]) -> bool:
        """Whether orjson writes `values` exactly as the library's `json` encoder would:
        plain JSON values, finite floats, string keys, and registered types that orjson
        leaves to `default`, all of exact types (`json` writes subclasses of str, int,
        float, list and dict natively, without their transcodings)."""
        deferred = self._deferred
        for value in values:
            cls = type(value)
            if cls in _SCALARS or cls in deferred or cls is PlainJSON:
                continue
            if cls is float:
                if value - value == 0.0:  # finite: json writes NaN and Infinity, orjson null
                    continue
                return False
            if cls is list or cls is tuple:
                if self._plain(value):
                    continue
                return False
            if cls is dict:
                if _KEYS.issuperset(map(type, value)) and self._plain(value.values()):
                    continue
                return False
            return False
        return True

    def _transcode(self, obj: Any) -> dict[str, Any]:
        """orjson's `default`: the library's `{"_type_": ..., "_data_": ...}` form."""
        transcoding = self.types[type(obj)]  # only registered types get here
        data = transcoding.encode(obj)
        if type(data) is not str and not self._plain((data,)):
            raise TypeError("not plain JSON")  # orjson raises, encode falls back to json
        return {"_type_": transcoding.name, "_data_": data}

    def _revive(self, obj: Any) -> Any:
        """Decoded JSON with `_type_`/`_data_` dicts turned back into objects, innermost
        first (as `json`'s `object_hook`)."""
        if type(obj) is dict:
            for key, value in obj.items():
                cls = type(value)
                if cls is dict or cls is list:
                    obj[key] = self._revive(value)
                elif cls is float and not -_BIG < value < _BIG:
                    raise _Inexact
            return self._decode_obj(obj) if len(obj) == 2 else obj
        if type(obj) is list:
            for index, value in enumerate(obj):
                cls = type(value)
                if cls is dict or cls is list:
                    obj[index] = self._revive(value)
                elif cls is float and not -_BIG < value < _BIG:
                    raise _Inexact
        elif type(obj) is float and not -_BIG < obj < _BIG:
            raise _Inexact
        return obj


def loads(data: bytes) -> Any:
    """`json.loads(data)`, faster: orjson, or `json` where orjson would differ."""
    try:
        obj = orjson.loads(data)
        _check_exact(obj)
    except (orjson.JSONDecodeError, _Inexact):
        return json.loads(data)
    return obj


def _check_exact(obj: Any) -> None:
    """Raise `_Inexact` where orjson may have read an integer beyond 64 bits as a float."""
    if type(obj) is dict:
        obj = obj.values()
    elif type(obj) is not list:
        obj = (obj,)
    for value in obj:
        cls = type(value)
        if cls is dict or cls is list:
            _check_exact(value)
        elif cls is float and not -_BIG < value < _BIG:
            raise _Inexact
