"""Engine rules: what DarkPlaces', FTE's, qfusion's and Warfork's IQM loaders would refuse or get
wrong in a model file (`ossa_check_engine`; docs/engines.md lists every rule and its source).

    for finding in ossa.check_engine("tris.iqm", "warfork"):
        print(finding.kind.name, finding.rule, finding.message)
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import Union

from ._native import UINT64_MAX, ffi, lib, text
from .errors import InvalidArgumentError, raise_record
from .model import StrPath, _load_options

Source = Union[StrPath, bytes, bytearray, memoryview]


class Engine(enum.IntEnum):
    """`ossa_engine`: an engine whose IQM loader files are checked against."""

    DARKPLACES = 1
    FTE = 2
    QFUSION = 3
    WARFORK = 4

    @property
    def c_name(self) -> str:
        return text(lib.ossa_engine_name(self.value))

    @classmethod
    def parse(cls, value: Engine | str) -> Engine:
        """An Engine, or its name without case: also "dp" and "xonotic", "fteqw", "qf", "wf"."""
        if isinstance(value, Engine):
            return value
        key = value.strip().lower()
        aliases = {"dp": "darkplaces", "xonotic": "darkplaces", "fteqw": "fte", "qf": "qfusion", "wf": "warfork"}
        key = aliases.get(key, key).upper()
        if key in cls.__members__:
            return cls[key]
        raise InvalidArgumentError(f"unknown engine {value!r}; one of darkplaces (xonotic), fte, qfusion, warfork")


class FindingKind(enum.IntEnum):
    """`ossa_engine_finding_kind`: what the engine does with a file that breaks the rule."""

    REFUSES = 1  # it does not load the file
    MISREADS = 2  # it loads the file and gets something silently wrong
    NOTE = 3  # worth knowing, wrong in nothing on x86


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str  # "qfusion.version"
    kind: FindingKind
    offset: int | None  # the byte of the file where it is; None where there is none
    line: int  # the line of animation.cfg for Warfork's player rules, else 0
    message: str  # which structure and index, what the engine does (and at which byte)

    @property
    def refuses(self) -> bool:
        return self.kind is FindingKind.REFUSES


def check_engine(
    source: Source,
    engine: Engine | str,
    *,
    player: bool = False,
    name: str | None = None,
    max_bytes: int = 0,
    base_dir: StrPath | None = None,
) -> list[Finding]:
    """Every rule of `engine` the model file at `source` (a path, or its bytes) breaks, in the order
    its loader meets them; empty when the engine loads it as it is.

    `player` checks it as a Warfork player model, as a file named `tris.iqm` is: the
    `animation.cfg` beside a path is read too (for bytes it is not, and a NOTE says so). `name`
    names in-memory data (its extension helps detection); `max_bytes` caps what is read (0: the
    library default); `base_dir` is the directory a file and its sidecars may be read from.
    """
    which = Engine.parse(engine)
    flags = lib.OSSA_ENGINE_PLAYER if player else 0
    options, keep = _load_options(False, "auto", name, None, max_bytes, base_dir)
    count = ffi.new("size_t *")
    record = ffi.new("ossa_error *")
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = ffi.from_buffer(source)

        def call(findings: object, capacity: int) -> int:
            return lib.ossa_check_engine(data, len(data), which, flags, options, findings, capacity, count, record)

    else:
        path = os.fsencode(source)

        def call(findings: object, capacity: int) -> int:
            return lib.ossa_check_engine_file(path, which, flags, options, findings, capacity, count, record)

    # The count first, then every finding.
    raise_record(call(ffi.NULL, 0), record)
    capacity = int(count[0])
    findings = ffi.new("ossa_engine_finding[]", max(capacity, 1))
    raise_record(call(findings, capacity), record)
    del keep
    return [
        Finding(
            rule=text(f.rule),
            kind=FindingKind(f.kind),
            offset=None if f.offset == UINT64_MAX else int(f.offset),
            line=int(f.line),
            message=text(f.message),
        )
        for f in (findings[k] for k in range(min(capacity, int(count[0]))))
    ]
