"""Makes `ossa/_ossa_cffi.py` from `include/ossa.h`.

cffi's parser takes plain C declarations without a preprocessor, so the header's comments,
includes and C++/C23 conditionals are resolved here for a C99 compiler, the dialect the header
is read as by C callers.
"""

import re
from pathlib import Path

from cffi import FFI

# Every #if in the header asks about C++ or C23; for C99 each is false.
_ASKS_CXX_OR_C23 = re.compile(r"__cplusplus|__STDC_VERSION__")


def declarations(header: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", header, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    kept: list[str] = []
    active: list[bool] = []  # one entry per open conditional
    for line in text.splitlines():
        directive = line.strip()
        if directive.startswith("#"):
            word, _, rest = directive[1:].strip().partition(" ")
            rest = rest.strip()
            if word == "ifndef":
                active.append(True)
            elif word == "ifdef":
                active.append(rest != "__cplusplus")
            elif word == "if":
                if not _ASKS_CXX_OR_C23.search(rest):
                    raise ValueError(f"build_ffi: cannot decide `#if {rest}` in ossa.h")
                active.append(False)
            elif word == "else":
                active[-1] = not active[-1]
            elif word == "endif":
                active.pop()
            elif word == "define" and all(active) and len(rest.split()) == 2:
                kept.append(f"#define {rest}")  # cffi reads integer constants
            # #include and the include guard's bare #define need nothing.
            continue
        if all(active):
            kept.append(line)
    return "\n".join(kept)


def ffibuilder(header_path: Path) -> FFI:
    ffi = FFI()
    ffi.cdef(declarations(header_path.read_text(encoding="utf-8")))
    ffi.set_source("ossa._ossa_cffi", None)
    return ffi


def emit(header_path: Path, out_path: Path) -> None:
    ffibuilder(header_path).emit_python_code(str(out_path))
