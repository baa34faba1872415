//! The two encodings of a character file behind one reader: CMX text (one value per line,
//! vectors between bars) and BCF binary (little-endian, counted strings). The walk over the
//! structure is shared; each source says where a value sits (line or byte) and checks every count
//! against what is left before anything is allocated for it.

use byteorder::LittleEndian;

use crate::cursor::{Cursor, table_bytes};
use crate::error::{Error, Result};
use crate::format::Checker;
use crate::model::Name;

/// Where a value sits, attached to the errors about it.
#[derive(Clone, Copy, Debug)]
pub(super) enum Mark {
    Line(u32),
    Offset(u64),
}

impl Mark {
    pub fn put(self, e: Error) -> Error {
        match self {
            Mark::Line(n) => e.on_line(n),
            Mark::Offset(o) => e.at(o),
        }
    }
}

/// The records whose counts a file gives, for the smallest room one of them can take.
#[derive(Clone, Copy, Debug)]
pub(super) enum Record {
    Skeleton,
    Bone,
    Suit,
    Skin,
    Skill,
    Motion,
    PropertyList,
    Property,
    TimePropertyList,
    TimeProperty,
}

impl Record {
    fn name(self) -> &'static str {
        match self {
            Record::Skeleton => "skeletons",
            Record::Bone => "bones",
            Record::Suit => "suits",
            Record::Skin => "skins",
            Record::Skill => "skills",
            Record::Motion => "motions",
            Record::PropertyList => "property lists",
            Record::Property => "properties",
            Record::TimePropertyList => "time property lists",
            Record::TimeProperty => "time properties",
        }
    }

    /// Fewest lines one record takes in CMX text (a version 200 bone has no property lists and
    /// two flags, a version 200 suit only its name and skin count, a version 200 skin only its
    /// bone and mesh; every nested list may be empty).
    fn min_lines(self, version: u32) -> u64 {
        match self {
            Record::Skeleton => 2,
            Record::Bone if version == 200 => 6,
            Record::Bone => 10,
            Record::Suit if version == 200 => 2,
            Record::Suit => 4,
            Record::Skin if version == 200 => 2,
            Record::Skin => 4,
            Record::Skill => 8,
            Record::Motion => 9,
            Record::PropertyList => 1,
            Record::Property => 2,
            Record::TimePropertyList => 1,
            Record::TimeProperty => 2,
        }
    }

    /// Fewest bytes one record takes in a BCF (a counted string takes at least its length byte).
    fn min_bytes(self) -> u64 {
        match self {
            Record::Skeleton => 1 + 4,
            Record::Bone => 1 + 1 + 4 + 12 + 16 + 12 + 8,
            Record::Suit => 1 + 4 + 4 + 4,
            Record::Skin => 1 + 1 + 4 + 4,
            Record::Skill => 1 + 1 + 4 * 6,
            Record::Motion => 1 + 4 * 8,
            Record::PropertyList => 4,
            Record::Property => 1 + 1,
            Record::TimePropertyList => 4,
            Record::TimeProperty => 4 + 4,
        }
    }
}

/// What the shared walk reads; `what` names the field for messages and is only called on failure.
pub(super) trait Source {
    /// Where the next value starts.
    fn mark(&self) -> Mark;
    fn string(&mut self, what: &dyn Fn() -> String) -> Result<Name>;
    fn u32(&mut self, what: &dyn Fn() -> String) -> Result<u32>;
    fn i32(&mut self, what: &dyn Fn() -> String) -> Result<i32>;
    /// A float as stored: NaN and infinity included, for the caller to report.
    fn f32(&mut self, what: &dyn Fn() -> String) -> Result<f32>;
    /// N floats: one `| x y z |` line of text, or N floats of binary.
    fn floats<const N: usize>(&mut self, what: &dyn Fn() -> String) -> Result<[f32; N]>;
    /// A count of records, checked against the room left for them.
    fn count(&mut self, record: Record, what: &dyn Fn() -> String) -> Result<usize>;
    /// Whether the next line is a vector (text): a version 200 bone without property lists.
    fn vector_next(&self) -> bool;
    /// Anything after the last skill is reported (a warning, or a problem in strict mode).
    fn finish(&mut self, ck: &mut Checker) -> Result<()>;
}

/// Shortens a line quoted in a message.
fn quote(bytes: &[u8]) -> String {
    const MAX: usize = 40;
    let s: String = bytes.iter().take(MAX).map(|&b| b as char).collect();
    if bytes.len() > MAX {
        format!("`{s}...`")
    } else {
        format!("`{s}`")
    }
}

/// A line that is not a comment: its trimmed bytes and its 1-based number.
#[derive(Clone, Copy)]
struct Line {
    number: u32,
    start: usize,
    end: usize,
}

/// CMX text: lines split at LF (a CR before it is dropped), trimmed of spaces and tabs; lines
/// starting with `//` are comments wherever they are. Blank lines are values (an empty name or
/// property); only at the end are they ignored. Lines are found as they are read (no table of
/// them is kept), and the number left is known from the start for checking counts.
pub(super) struct Text<'a> {
    data: &'a [u8],
    /// Where the next unscanned piece starts; None once the last one has been scanned.
    pos: Option<usize>,
    /// The number the next scanned piece has.
    number: u32,
    /// The next line, read ahead.
    ahead: Option<Line>,
    /// Lines not yet taken, `ahead` included.
    left: u64,
    version: u32,
    last_line: u32,
}

/// The range of `bytes` left after trimming spaces, tabs and CRs from both ends.
fn trimmed(bytes: &[u8]) -> (usize, usize) {
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c');
    let start = bytes
        .iter()
        .position(|b| !is_space(b))
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !is_space(b))
        // Below the length, which is below isize::MAX.
        .map_or(start, |e| e.saturating_add(1));
    (start, end)
}

fn is_comment(piece: &[u8]) -> bool {
    let (s, e) = trimmed(piece);
    piece.get(s..e).is_some_and(|t| t.starts_with(b"//"))
}

impl<'a> Text<'a> {
    /// Reads the version line (the first that is not a comment or blank): `version 300` or
    /// `version 200`.
    pub fn new(data: &'a [u8]) -> Result<Text<'a>> {
        let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
        let mut left = 0u64;
        let mut pieces = 0u32;
        for piece in data.split(|&b| b == b'\n') {
            pieces = pieces.saturating_add(1);
            if !is_comment(piece) {
                left = left.saturating_add(1);
            }
        }
        let mut text = Text {
            data,
            pos: Some(0),
            number: 1,
            ahead: None,
            left,
            version: 300,
            last_line: pieces,
        };
        text.ahead = text.scan();
        while text.peek().is_some_and(|l| l.is_empty()) {
            text.take();
        }
        let mark = text.mark();
        let Some(line) = text.take() else {
            return Err(Error::truncated(
                "the file has no `version 300` line (it is empty or only comments)",
            )
            .on_line(text.last_line));
        };
        let words: Vec<&[u8]> = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .collect();
        let version = match words.as_slice() {
            [kw, v] if kw.eq_ignore_ascii_case(b"version") => std::str::from_utf8(v)
                .ok()
                .and_then(|v| v.parse::<u32>().ok()),
            _ => None,
        };
        match version {
            Some(v @ (200 | 300)) => text.version = v,
            Some(v) => {
                return Err(mark.put(Error::unsupported(format!(
                    "CMX version {v} (versions 300 and 200 are read)"
                ))));
            }
            None => {
                // Not yet a CMX: what is there is not shown (it may be any file).
                return Err(mark.put(Error::malformed(
                    "expected `version 300` first; this is no Sims CMX text",
                )));
            }
        }
        Ok(text)
    }

    pub fn version(&self) -> u32 {
        self.version
    }

    /// The next line that is not a comment, from `pos` on.
    fn scan(&mut self) -> Option<Line> {
        loop {
            let start = self.pos?;
            let rest = self.data.get(start..)?;
            let (len, next) = match rest.iter().position(|&b| b == b'\n') {
                // Positions inside the data, whose length is below isize::MAX.
                Some(i) => (i, Some(start.saturating_add(i).saturating_add(1))),
                None => (rest.len(), None),
            };
            self.pos = next;
            let number = self.number;
            self.number = self.number.saturating_add(1);
            let piece = rest.get(..len).unwrap_or_default();
            if is_comment(piece) {
                continue;
            }
            let (s, e) = trimmed(piece);
            return Some(Line {
                number,
                start: start.saturating_add(s),
                end: start.saturating_add(e),
            });
        }
    }

    fn peek(&self) -> Option<&'a [u8]> {
        let l = self.ahead?;
        self.data.get(l.start..l.end)
    }

    fn take(&mut self) -> Option<&'a [u8]> {
        let l = self.peek()?;
        self.ahead = self.scan();
        self.left = self.left.saturating_sub(1);
        Some(l)
    }

    /// The next line, or a truncation error naming the field.
    fn line(&mut self, what: &dyn Fn() -> String, expected: &str) -> Result<(&'a [u8], Mark)> {
        let mark = self.mark();
        match self.take() {
            Some(l) => Ok((l, mark)),
            None => Err(Error::truncated(format!(
                "{}: the file ends where {expected} was expected",
                what()
            ))
            .on_line(self.last_line)),
        }
    }

    fn number<T: std::str::FromStr>(
        &mut self,
        what: &dyn Fn() -> String,
        expected: &str,
    ) -> Result<T> {
        let (line, mark) = self.line(what, expected)?;
        std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.parse::<T>().ok())
            .ok_or_else(|| {
                mark.put(Error::malformed(format!(
                    "{}: expected {expected}, found {}",
                    what(),
                    if line.is_empty() {
                        "an empty line".to_owned()
                    } else {
                        quote(line)
                    }
                )))
            })
    }
}

impl Source for Text<'_> {
    fn mark(&self) -> Mark {
        Mark::Line(self.ahead.map_or(self.last_line, |l| l.number))
    }

    fn string(&mut self, what: &dyn Fn() -> String) -> Result<Name> {
        let (line, _) = self.line(what, "a name")?;
        Ok(Name::new(line))
    }

    fn u32(&mut self, what: &dyn Fn() -> String) -> Result<u32> {
        self.number(what, "a whole number from 0 to 4294967295")
    }

    fn i32(&mut self, what: &dyn Fn() -> String) -> Result<i32> {
        self.number(what, "a whole number")
    }

    fn f32(&mut self, what: &dyn Fn() -> String) -> Result<f32> {
        self.number(what, "a number")
    }

    fn floats<const N: usize>(&mut self, what: &dyn Fn() -> String) -> Result<[f32; N]> {
        let expected = format!("{N} numbers between bars");
        let (line, mark) = self.line(what, &expected)?;
        let inner = line.strip_prefix(b"|").unwrap_or(line);
        let inner = inner.strip_suffix(b"|").unwrap_or(inner);
        let mut out = [0.0f32; N];
        let mut n = 0usize;
        let mut bad = false;
        for word in inner
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
        {
            match (
                out.get_mut(n),
                std::str::from_utf8(word)
                    .ok()
                    .and_then(|s| s.parse::<f32>().ok()),
            ) {
                (Some(slot), Some(v)) => *slot = v,
                _ => bad = true,
            }
            n = n.saturating_add(1);
        }
        if bad || n != N {
            return Err(mark.put(Error::malformed(format!(
                "{}: expected {expected}, found {}",
                what(),
                quote(line)
            ))));
        }
        Ok(out)
    }

    fn count(&mut self, record: Record, what: &dyn Fn() -> String) -> Result<usize> {
        let mark = self.mark();
        let n: u32 = self.number(what, "a count")?;
        let left = self.left;
        // A u32 count times a few lines: exact in u64.
        let need = u64::from(n).saturating_mul(record.min_lines(self.version));
        if need > left {
            return Err(mark.put(Error::truncated(format!(
                "{}: {n} {} need at least {need} more lines, the file has {left}",
                what(),
                record.name()
            ))));
        }
        Ok(n as usize)
    }

    fn vector_next(&self) -> bool {
        self.peek().is_some_and(|l| l.starts_with(b"|"))
    }

    fn finish(&mut self, ck: &mut Checker) -> Result<()> {
        while let Some(line) = self.peek() {
            let mark = self.mark();
            self.take();
            if !line.is_empty() {
                ck.tolerate(mark.put(Error::malformed(format!(
                    "text after the last skill: {}",
                    quote(line)
                ))))?;
                break;
            }
        }
        Ok(())
    }
}

/// BCF binary: little-endian 32-bit numbers and counted strings (a length byte, or 255 and then a
/// 32-bit length, as Don Hopkins describes the format; no retail name is that long).
pub(super) struct Binary<'a> {
    c: Cursor<'a, LittleEndian>,
    len: usize,
}

impl<'a> Binary<'a> {
    pub fn new(data: &'a [u8]) -> Result<Binary<'a>> {
        Ok(Binary {
            c: Cursor::at(data, 0)?,
            len: data.len(),
        })
    }

    fn left(&self) -> u64 {
        (self.len as u64).saturating_sub(self.c.pos())
    }
}

impl Source for Binary<'_> {
    fn mark(&self) -> Mark {
        Mark::Offset(self.c.pos())
    }

    fn string(&mut self, what: &dyn Fn() -> String) -> Result<Name> {
        let at = self.c.pos();
        let fail = |e: Error| e.within(format!("{} (string at byte {at:#x})", what()));
        let first = self.c.bytes(1).map_err(fail)?;
        let mut len = first.first().copied().unwrap_or_default() as u64;
        if len == 255 {
            len = self.c.u32().map_err(fail)? as u64;
        }
        let bytes = self
            .c
            .bytes(usize::try_from(len).unwrap_or(usize::MAX))
            .map_err(fail)?;
        Ok(Name::new(bytes))
    }

    fn u32(&mut self, what: &dyn Fn() -> String) -> Result<u32> {
        self.c.u32().map_err(|e| e.within(what()))
    }

    fn i32(&mut self, what: &dyn Fn() -> String) -> Result<i32> {
        self.c.i32().map_err(|e| e.within(what()))
    }

    fn f32(&mut self, what: &dyn Fn() -> String) -> Result<f32> {
        self.c.f32_raw().map_err(|e| e.within(what()))
    }

    fn floats<const N: usize>(&mut self, what: &dyn Fn() -> String) -> Result<[f32; N]> {
        self.c
            .require(table_bytes(N as u64, 4)?)
            .map_err(|e| e.within(what()))?;
        let mut out = [0.0f32; N];
        for v in &mut out {
            *v = self.c.f32_raw()?;
        }
        Ok(out)
    }

    fn count(&mut self, record: Record, what: &dyn Fn() -> String) -> Result<usize> {
        let at = self.c.pos();
        let n = self.c.u32().map_err(|e| e.within(what()))?;
        let left = self.left();
        // A u32 count times a few bytes: exact in u64.
        let need = u64::from(n).saturating_mul(record.min_bytes());
        if need > left {
            return Err(Error::truncated(format!(
                "{}: {n} {} need at least {need} more bytes, the data has {left}",
                what(),
                record.name()
            ))
            .at(at));
        }
        Ok(n as usize)
    }

    fn vector_next(&self) -> bool {
        false
    }

    fn finish(&mut self, ck: &mut Checker) -> Result<()> {
        let left = self.left();
        if left > 0 {
            ck.tolerate(
                Error::malformed(format!("{left} bytes after the last skill")).at(self.c.pos()),
            )?;
        }
        Ok(())
    }
}
