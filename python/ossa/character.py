"""A Sims character checked across its files (`ossa_check_character`), as
`ossa validate FILE --skeleton --suit --skills --search` lists its problems, file by file.

    for problem in ossa.check_character("adult-skeleton.cmx", suit="b001mafit_01", skills=["adult-idle1.cmx"]):
        print(problem.file, problem.result_name, problem.message)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._native import UINT64_MAX, ffi, lib, text
from .errors import raise_record
from .model import StrPath, _load_options


@dataclass(frozen=True, slots=True)
class Problem:
    file: str  # the file the problem is in, as given or as found
    code: int  # its ossa_result (OSSA_ERR_NOT_FOUND = 9, OSSA_ERR_MISMATCH = 10, ...)
    line: int  # 1-based line of a text file, 0 when not applicable
    offset: int | None  # byte offset in the file, None when not applicable
    message: str  # which suit, skin, mesh, texture or skill, what is wrong, where it was looked for

    @property
    def result_name(self) -> str:
        """The C name of the code, such as "OSSA_ERR_NOT_FOUND"."""
        return text(lib.ossa_result_name(self.code))


def check_character(
    path: StrPath,
    *,
    skeleton: StrPath | None = None,
    suit: str | None = None,
    skills: Sequence[StrPath] = (),
    search: Sequence[StrPath] = (),
    strict: bool = False,
    max_bytes: int = 0,
) -> list[Problem]:
    """Every problem of the Sims character whose file is `path` (a skeleton, a suit file, or both):
    on `skeleton`'s skeleton (default: the file's own), wearing `suit` (the file's, else
    SUIT.cmx, SUIT.cmx.bcf or SUIT.bcf beside it or in a `search` directory, as each skin's mesh
    is found), playing the skills of the `skills` files (their numbers beside them). Empty when
    the character is clean. `strict` rejects what the default mode tolerates; `max_bytes` caps
    what each file may take (0: the library default).
    """
    options, keep = _load_options(strict, "auto", None, None, max_bytes, None)
    character = ffi.new("ossa_character *")
    character.size = ffi.sizeof("ossa_character")
    strings: list[Any] = []

    def c_string(value: StrPath | str) -> Any:
        s = ffi.new("char[]", os.fsencode(value))
        strings.append(s)
        return s

    if skeleton is not None:
        character.skeleton = c_string(skeleton)
    if suit is not None:
        character.suit = c_string(suit)
    skill_list = ffi.new("const char *[]", [c_string(s) for s in skills] or [ffi.NULL])
    search_list = ffi.new("const char *[]", [c_string(d) for d in search] or [ffi.NULL])
    character.skills = skill_list
    character.skill_count = len(skills)
    character.search = search_list
    character.search_count = len(search)
    c_path = os.fsencode(path)
    count = ffi.new("size_t *")
    record = ffi.new("ossa_error *")
    # The count first, then every problem.
    raise_record(lib.ossa_check_character(c_path, character, options, ffi.NULL, 0, count, ffi.NULL, record), record)
    capacity = int(count[0])
    problems = ffi.new("ossa_problem[]", max(capacity, 1))
    raise_record(
        lib.ossa_check_character(c_path, character, options, problems, capacity, count, ffi.NULL, record), record
    )
    del keep, strings
    return [
        Problem(
            file=text(p.file),
            code=int(p.code),
            line=int(p.line),
            offset=None if p.offset == UINT64_MAX else int(p.offset),
            message=text(p.message),
        )
        for p in (problems[k] for k in range(min(capacity, int(count[0]))))
    ]
