"""The packaged `libossa.so`, opened through the cffi module the build made from ossa.h."""

from pathlib import Path

from ._ossa_cffi import ffi

__all__ = ["LIBRARY_PATH", "UINT64_MAX", "ffi", "lib", "text"]

# The library travels inside the package, so an installed ossa never looks at the repository.
LIBRARY_PATH = Path(__file__).with_name("libossa.so")
lib = ffi.dlopen(str(LIBRARY_PATH))

UINT64_MAX = (1 << 64) - 1


def text(pointer: object) -> str:
    """A NUL-terminated string the library hands out; names in files need not be UTF-8."""
    if pointer == ffi.NULL:
        return ""
    return ffi.string(pointer).decode("utf-8", "replace")  # type: ignore[no-any-return]
