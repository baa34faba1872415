//! The one error type of the library, its stable numeric codes, and where a problem lies.

use std::fmt;
use std::sync::Arc;

/// Stable numeric codes; the C layer hands these out as `ossa_result`. Never renumbered or reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    NullArgument = 1,
    InvalidArgument = 2,
    UnknownFormat = 3,
    Truncated = 4,
    Malformed = 5,
    Unsupported = 6,
    Limit = 7,
    Io = 8,
    NotFound = 9,
    Mismatch = 10,
    OutOfMemory = 11,
    Panic = 12,
}

impl ErrorCode {
    /// The constant's name as the C header spells it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::NullArgument => "OSSA_ERR_NULL_ARGUMENT",
            ErrorCode::InvalidArgument => "OSSA_ERR_INVALID_ARGUMENT",
            ErrorCode::UnknownFormat => "OSSA_ERR_UNKNOWN_FORMAT",
            ErrorCode::Truncated => "OSSA_ERR_TRUNCATED",
            ErrorCode::Malformed => "OSSA_ERR_MALFORMED",
            ErrorCode::Unsupported => "OSSA_ERR_UNSUPPORTED",
            ErrorCode::Limit => "OSSA_ERR_LIMIT",
            ErrorCode::Io => "OSSA_ERR_IO",
            ErrorCode::NotFound => "OSSA_ERR_NOT_FOUND",
            ErrorCode::Mismatch => "OSSA_ERR_MISMATCH",
            ErrorCode::OutOfMemory => "OSSA_ERR_OUT_OF_MEMORY",
            ErrorCode::Panic => "OSSA_ERR_PANIC",
        }
    }
}

/// What went wrong and where: the file, the structure and index, the rule, and the byte offset or
/// line where the file breaks it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Detail {
    /// The file's name, when the caller gave one.
    pub file: Option<Arc<str>>,
    /// The structure and the rule, e.g. `mesh 1 vertex 812 influence 2: bone 57 out of range`.
    pub message: String,
    /// Byte offset in the failing file.
    pub offset: Option<u64>,
    /// 1-based line in a text file.
    pub line: Option<u32>,
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}")?;
            if let Some(line) = self.line {
                write!(f, " line {line}")?;
            }
            write!(f, ": ")?;
        } else if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        write!(f, "{}", self.message)?;
        if let Some(offset) = self.offset {
            write!(f, " at byte {offset:#x}")?;
        }
        Ok(())
    }
}

/// Every failure of the library. The variant is the kind (and fixes the numeric code); the
/// [`Detail`] says exactly what and where.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    NullArgument(Detail),
    #[error("{0}")]
    InvalidArgument(Detail),
    #[error("{0}")]
    UnknownFormat(Detail),
    #[error("{0}")]
    Truncated(Detail),
    #[error("{0}")]
    Malformed(Detail),
    #[error("{0}")]
    Unsupported(Detail),
    #[error("{0}")]
    Limit(Detail),
    #[error("{0}")]
    Io(Detail, #[source] Option<std::io::Error>),
    #[error("{0}")]
    NotFound(Detail),
    #[error("{0}")]
    Mismatch(Detail),
    #[error("{0}")]
    OutOfMemory(Detail),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

fn detail(message: impl Into<String>) -> Detail {
    Detail {
        message: message.into(),
        ..Detail::default()
    }
}

impl Error {
    pub fn invalid_argument(message: impl Into<String>) -> Error {
        Error::InvalidArgument(detail(message))
    }
    pub fn null_argument(message: impl Into<String>) -> Error {
        Error::NullArgument(detail(message))
    }
    pub fn unknown_format(message: impl Into<String>) -> Error {
        Error::UnknownFormat(detail(message))
    }
    pub fn truncated(message: impl Into<String>) -> Error {
        Error::Truncated(detail(message))
    }
    pub fn malformed(message: impl Into<String>) -> Error {
        Error::Malformed(detail(message))
    }
    pub fn unsupported(message: impl Into<String>) -> Error {
        Error::Unsupported(detail(message))
    }
    pub fn limit(message: impl Into<String>) -> Error {
        Error::Limit(detail(message))
    }
    pub fn io(message: impl Into<String>, source: Option<std::io::Error>) -> Error {
        Error::Io(detail(message), source)
    }
    pub fn not_found(message: impl Into<String>) -> Error {
        Error::NotFound(detail(message))
    }
    pub fn mismatch(message: impl Into<String>) -> Error {
        Error::Mismatch(detail(message))
    }
    pub fn out_of_memory(message: impl Into<String>) -> Error {
        Error::OutOfMemory(detail(message))
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Error::NullArgument(_) => ErrorCode::NullArgument,
            Error::InvalidArgument(_) => ErrorCode::InvalidArgument,
            Error::UnknownFormat(_) => ErrorCode::UnknownFormat,
            Error::Truncated(_) => ErrorCode::Truncated,
            Error::Malformed(_) => ErrorCode::Malformed,
            Error::Unsupported(_) => ErrorCode::Unsupported,
            Error::Limit(_) => ErrorCode::Limit,
            Error::Io(..) => ErrorCode::Io,
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::Mismatch(_) => ErrorCode::Mismatch,
            Error::OutOfMemory(_) => ErrorCode::OutOfMemory,
        }
    }

    pub fn detail(&self) -> &Detail {
        match self {
            Error::NullArgument(d)
            | Error::InvalidArgument(d)
            | Error::UnknownFormat(d)
            | Error::Truncated(d)
            | Error::Malformed(d)
            | Error::Unsupported(d)
            | Error::Limit(d)
            | Error::Io(d, _)
            | Error::NotFound(d)
            | Error::Mismatch(d)
            | Error::OutOfMemory(d) => d,
        }
    }

    fn detail_mut(&mut self) -> &mut Detail {
        match self {
            Error::NullArgument(d)
            | Error::InvalidArgument(d)
            | Error::UnknownFormat(d)
            | Error::Truncated(d)
            | Error::Malformed(d)
            | Error::Unsupported(d)
            | Error::Limit(d)
            | Error::Io(d, _)
            | Error::NotFound(d)
            | Error::Mismatch(d)
            | Error::OutOfMemory(d) => d,
        }
    }

    /// The same error again, for a failure reported in more than one place (a file named by
    /// several buffers); an I/O error's source keeps its kind and text. glTF's reader alone
    /// needs it.
    #[cfg(feature = "gltf")]
    pub(crate) fn duplicate(&self) -> Error {
        let d = self.detail().clone();
        match self {
            Error::NullArgument(_) => Error::NullArgument(d),
            Error::InvalidArgument(_) => Error::InvalidArgument(d),
            Error::UnknownFormat(_) => Error::UnknownFormat(d),
            Error::Truncated(_) => Error::Truncated(d),
            Error::Malformed(_) => Error::Malformed(d),
            Error::Unsupported(_) => Error::Unsupported(d),
            Error::Limit(_) => Error::Limit(d),
            Error::Io(_, source) => Error::Io(
                d,
                source
                    .as_ref()
                    .map(|e| std::io::Error::new(e.kind(), e.to_string())),
            ),
            Error::NotFound(_) => Error::NotFound(d),
            Error::Mismatch(_) => Error::Mismatch(d),
            Error::OutOfMemory(_) => Error::OutOfMemory(d),
        }
    }

    /// The problem sits at this byte of the file.
    pub fn at(mut self, offset: u64) -> Error {
        self.detail_mut().offset = Some(offset);
        self
    }

    /// The problem sits on this line of a text file.
    pub fn on_line(mut self, line: u32) -> Error {
        self.detail_mut().line = Some(line);
        self
    }

    /// Names the file when one is known.
    pub fn in_file_if(self, file: Option<&Arc<str>>) -> Error {
        match file {
            Some(f) => self.in_file(f),
            None => self,
        }
    }

    /// Names the file, unless a file is named already (a sidecar's error keeps its own name).
    pub fn in_file(mut self, file: &Arc<str>) -> Error {
        let d = self.detail_mut();
        if d.file.is_none() {
            d.file = Some(Arc::clone(file));
        }
        self
    }

    /// Prefixes the message with the structure that was being read: `mesh 1 vertex 3: ...`.
    pub fn within(mut self, structure: impl fmt::Display) -> Error {
        let d = self.detail_mut();
        d.message = format!("{structure}: {}", d.message);
        self
    }

    pub fn offset(&self) -> Option<u64> {
        self.detail().offset
    }

    pub fn line(&self) -> Option<u32> {
        self.detail().line
    }
}

/// Adds the structure being read to an error on its way out, computed only on failure.
pub(crate) trait ResultExt<T> {
    fn within<D: fmt::Display>(self, structure: impl FnOnce() -> D) -> Result<T>;
}

impl<T> ResultExt<T> for Result<T> {
    #[inline]
    fn within<D: fmt::Display>(self, structure: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| e.within(structure()))
    }
}

/// `n` things in words: "1 bone", "2 bones".
pub(crate) fn amount(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_file_structure_and_offset() {
        let e = Error::malformed("bone 57 out of range (model has 34 bones)")
            .at(0x2a1c)
            .within("mesh 1 vertex 812 influence 2")
            .in_file(&Arc::from("zombie.dpm"));
        assert_eq!(
            e.to_string(),
            "zombie.dpm: mesh 1 vertex 812 influence 2: bone 57 out of range (model has 34 bones) at byte 0x2a1c"
        );
        assert_eq!(e.code(), ErrorCode::Malformed);
        assert_eq!(e.code() as u32, 5);
    }

    #[test]
    fn text_errors_carry_the_line() {
        let e = Error::malformed("expected a number, found `abc`")
            .on_line(12)
            .in_file(&Arc::from("a.skn"));
        assert_eq!(
            e.to_string(),
            "a.skn line 12: expected a number, found `abc`"
        );
        assert_eq!(e.line(), Some(12));
    }
}
