"""Exceptions named after the C ABI's result codes: `OSSA_ERR_TRUNCATED` is `TruncatedError`."""

from __future__ import annotations

from ._native import UINT64_MAX, ffi, lib, text


class Error(Exception):
    """A call into ossa failed; `code` is its `ossa_result`, `str(error)` the library's message."""

    code: int = -1

    def __init__(self, message: str, code: int | None = None, line: int = 0, offset: int | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.line = line  # 1-based line of a text file, 0 when not applicable
        self.offset = offset  # byte offset in the failing file, None when not applicable

    @property
    def result_name(self) -> str:
        """The C name of the code, such as "OSSA_ERR_TRUNCATED"."""
        return text(lib.ossa_result_name(self.code))


class NullArgumentError(Error):
    code = 1


class InvalidArgumentError(Error, ValueError):
    code = 2


class UnknownFormatError(Error):
    code = 3


class TruncatedError(Error):
    code = 4


class MalformedError(Error):
    code = 5


class UnsupportedError(Error):
    code = 6


class LimitError(Error):
    code = 7


class IoError(Error):
    code = 8


class NotFoundError(Error):
    code = 9


class MismatchError(Error):
    code = 10


class OutOfMemoryError(Error):
    code = 11


class PanicError(Error):
    code = 12


def class_name(result_name: str) -> str:
    """The exception name of a C result name: OSSA_ERR_NOT_FOUND -> NotFoundError."""
    words = result_name.removeprefix("OSSA_ERR_").split("_")
    return "".join(word.capitalize() for word in words) + "Error"


def _classes_by_code() -> dict[int, type[Error]]:
    # Walk the header's own enum, so a code and its class cannot drift apart silently.
    classes: dict[int, type[Error]] = {}
    for name, code in ffi.typeof("enum ossa_result").relements.items():
        if code != lib.OSSA_OK:
            cls = globals().get(class_name(name))
            if isinstance(cls, type) and issubclass(cls, Error) and cls.code == code:
                classes[code] = cls
    return classes


ERRORS_BY_CODE = _classes_by_code()


def error(code: int, message: str, line: int = 0, offset: int | None = None) -> Error:
    return ERRORS_BY_CODE.get(code, Error)(message, code, line, offset)


def check(code: int, what: str) -> None:
    """Raises for a failed call that has no error record: the message names call and code."""
    if code != lib.OSSA_OK:
        raise error(code, f"{what}: {text(lib.ossa_result_name(code))}")


def raise_record(code: int, record: object) -> None:
    """Raises for a failed load, bind or save with the library's own message, line and offset."""
    if code == lib.OSSA_OK:
        return
    message = text(record.message) or text(lib.ossa_result_name(code))  # type: ignore[attr-defined]
    offset = record.offset  # type: ignore[attr-defined]
    raise error(code, message, record.line, None if offset == UINT64_MAX else offset)  # type: ignore[attr-defined]
