//! JSON as text formats need it: a small strict reader (RFC 8259) that records the line of every
//! value, so that a format's rules can name where a file breaks them, and the pieces of writing
//! it (strings, numbers that read back to the same bits), plus the base64 of `data:` URLs.
//!
//! The reader is a [`Lexer`], which checks the text and builds nothing but the strings it is
//! asked for, under a tree builder, recursive with a depth limit so that deep nesting cannot
//! overflow the stack. The builder is given the [`Shape`] of the document the format reads: a
//! member no rule reads is checked (syntax and depth) and skipped without being built, and
//! reported to the format's [`Sink`] where it is met; the sink may also take the items of some
//! lists one at a time, so that they are never held as a tree. What the tree holds, with what
//! the sink keeps, is charged to the load's memory limit as it grows: strings without escapes
//! borrow from the input, each list is allocated once at its exact size, and every value costs
//! a few dozen bytes.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::format::Checker;

/// Arrays and objects nest at most this deep.
pub(crate) const MAX_DEPTH: usize = 64;

/// What a format reads of a document: which members of its objects it knows, down the lists.
#[derive(Debug)]
pub(crate) enum Shape {
    /// Anything: built whole.
    Any,
    /// An array of values of one shape (a value of another kind is built whole).
    Array(&'static Shape),
    /// An object whose members are `known` (others are skipped), with the shapes of those of
    /// them that are not [`Shape::Any`].
    Object {
        known: &'static [&'static str],
        nested: &'static [(&'static str, &'static Shape)],
    },
}

impl Shape {
    /// The shape of member `key`: None when it is not known.
    fn member(&self, key: &str) -> Option<&'static Shape> {
        match self {
            Shape::Object { known, nested } => {
                if let Some((_, s)) = nested.iter().find(|(k, _)| *k == key) {
                    Some(s)
                } else if known.contains(&key) {
                    Some(&Shape::Any)
                } else {
                    None
                }
            }
            _ => Some(&Shape::Any),
        }
    }

    fn element(&self) -> &'static Shape {
        match self {
            Shape::Array(s) => s,
            _ => &Shape::Any,
        }
    }
}

/// One step of the way from the document to a value: a key as the file spells it, or an index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Told of each member the shape does not know, as it is met: the steps to it (its key last),
/// its line and the byte offset of its key. An error ends the parse.
pub(crate) type OnUnknown<'h> = dyn FnMut(&mut Checker, &[Step<'_>], u32, u64) -> Result<()> + 'h;

/// A value and the 1-based line it starts on.
#[derive(Debug)]
pub(crate) struct Value<'a> {
    pub line: u32,
    pub kind: Kind<'a>,
}

#[derive(Debug)]
pub(crate) enum Kind<'a> {
    Null,
    Bool(bool),
    /// The number's text, checked against the grammar: parsed by its reader into the type it
    /// needs, so that a float is rounded once.
    Number(&'a str),
    String(Cow<'a, str>),
    Array(Vec<Value<'a>>),
    /// Members in file order; keys are unique.
    Object(Vec<(Cow<'a, str>, Value<'a>)>),
}

impl<'a> Value<'a> {
    /// What the value is, for messages: "a string", "an object"...
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Number(_) => "a number",
            Kind::String(_) => "a string",
            Kind::Array(_) => "an array",
            Kind::Object(_) => "an object",
        }
    }

    /// The member `key` of an object; None for a missing key or a value that is no object.
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        match &self.kind {
            Kind::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// What a format does with a document beside building its tree: it is told of the members its
/// shape does not know, and may take the items of some lists one at a time (streamed: each item
/// is parsed, handed to [`Sink::take`] and dropped before the next, and the tree keeps the list
/// as an empty array, to say it was there).
pub(crate) trait Sink {
    /// What names a streamed list to the sink.
    type List: Copy;

    /// Told of each member the shape does not know, as it is met: the steps to it (its key
    /// last), its line and the byte offset of its key. An error ends the parse.
    fn unknown(
        &mut self,
        ck: &mut Checker,
        steps: &[Step<'_>],
        line: u32,
        offset: u64,
    ) -> Result<()>;

    /// The list the array under member `key` of an object of `shape` is streamed as; None: it
    /// is built into the tree.
    fn stream(&self, _shape: &'static Shape, _key: &str) -> Option<Self::List> {
        None
    }

    /// Item `index` of `list` is about to be parsed.
    fn begin(&mut self, _list: Self::List, _index: usize) {}

    /// Item `index` of `list`, whose text starts at byte `offset` on `line`.
    fn take(&mut self, _list: Self::List, _index: usize, _offset: u64, _line: u32, _item: &Value) {}

    /// Heap what the sink keeps holds: charged to the load's limit with the tree.
    fn kept(&self) -> u64 {
        0
    }
}

/// A [`Sink`] that streams nothing and tells `on_unknown` of the members the shape does not know.
struct Told<'c, 'h>(&'c mut OnUnknown<'h>);

impl Sink for Told<'_, '_> {
    type List = ();

    fn unknown(
        &mut self,
        ck: &mut Checker,
        steps: &[Step<'_>],
        line: u32,
        offset: u64,
    ) -> Result<()> {
        (self.0)(ck, steps, line, offset)
    }
}

/// Parses a whole document (one value, with only whitespace around it and a UTF-8 byte order
/// mark before it) as `shape` says: members it does not know go to `on_unknown` and are skipped,
/// and what the tree holds is charged to `ck`'s memory limit (`Limit` once past it).
pub(crate) fn parse<'a>(
    data: &'a [u8],
    shape: &'static Shape,
    ck: &mut Checker,
    on_unknown: &mut OnUnknown<'_>,
) -> Result<Value<'a>> {
    parse_into(data, shape, ck, &mut Told(on_unknown))
}

/// [`parse`], with `sink` told of the members the shape does not know and given the items of
/// the lists it streams; what it keeps is charged with the tree.
pub(crate) fn parse_into<'a, S: Sink>(
    data: &'a [u8],
    shape: &'static Shape,
    ck: &mut Checker,
    sink: &mut S,
) -> Result<Value<'a>> {
    let mut lex = Lexer::at(data, 0, 1);
    if data.starts_with(b"\xEF\xBB\xBF") {
        lex.pos = 3;
    }
    let mut p = Parser {
        lex,
        ck,
        sink,
        path: Vec::new(),
        items: Vec::new(),
        members: Vec::new(),
        held: 0,
    };
    let v = p.value(0, Some(shape), None)?.unwrap_or(Value {
        line: 1,
        kind: Kind::Null,
    });
    p.lex.skip_ws();
    if let Some(c) = p.lex.peek() {
        return Err(p
            .lex
            .fail(format!("{} after the document's value", describe(c))));
    }
    Ok(v)
}

fn describe(c: u8) -> String {
    if c.is_ascii_graphic() {
        format!("`{}`", c as char)
    } else {
        format!("byte {c:#04x}")
    }
}

/// The text being read: where, and on which line. It checks what it passes as RFC 8259 says,
/// and builds nothing but the strings it is asked to.
#[derive(Clone)]
pub(crate) struct Lexer<'a> {
    data: &'a [u8],
    pub pos: usize,
    pub line: u32,
}

impl<'a> Lexer<'a> {
    /// Reading `data` from byte `pos`, which is on `line`.
    pub fn at(data: &'a [u8], pos: usize, line: u32) -> Lexer<'a> {
        Lexer { data, pos, line }
    }

    fn fail(&self, message: impl Into<String>) -> Error {
        Error::malformed(format!("JSON: {}", message.into()))
            .on_line(self.line)
            .at(self.pos as u64)
    }

    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    fn bump(&mut self) {
        self.pos = self.pos.saturating_add(1);
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                b'\n' => self.line = self.line.saturating_add(1),
                b' ' | b'\t' | b'\r' => {}
                _ => return,
            }
            self.bump();
        }
    }

    /// Consumes `c` after optional whitespace, or fails naming what was expected.
    fn expect(&mut self, c: u8, what: &str) -> Result<()> {
        self.skip_ws();
        match self.peek() {
            Some(got) if got == c => {
                self.bump();
                Ok(())
            }
            Some(got) => Err(self.fail(format!("expected {what}, found {}", describe(got)))),
            None => Err(self.fail(format!("the data ends where {what} should be"))),
        }
    }

    fn literal(&mut self, word: &str) -> Result<()> {
        let end = self.pos.saturating_add(word.len());
        if self.data.get(self.pos..end) == Some(word.as_bytes()) {
            self.pos = end;
            Ok(())
        } else {
            Err(self.fail(format!("expected `{word}`")))
        }
    }

    fn too_deep(&self, line: u32) -> Error {
        Error::limit(format!(
            "JSON: arrays and objects nest deeper than {MAX_DEPTH} levels"
        ))
        .on_line(line)
        .at(self.pos as u64)
    }

    /// A value at `depth` checked (syntax and depth) and passed, not built.
    pub fn skip(&mut self, depth: usize) -> Result<()> {
        self.skip_ws();
        let line = self.line;
        match self.peek() {
            None => Err(self.fail("the data ends where a value should be")),
            Some(b'{' | b'[') if depth >= MAX_DEPTH => Err(self.too_deep(line)),
            Some(b'{') => self.skip_object(depth.saturating_add(1)),
            Some(b'[') => self.skip_array(depth.saturating_add(1)),
            Some(b'"') => self.string(false).map(|_| ()),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(b'-' | b'0'..=b'9') => self.number().map(|_| ()),
            Some(c) => Err(self.fail(format!("{} where a value should be", describe(c)))),
        }
    }

    /// At an array's `[` or an object's `{`: consumes it, and when the list is empty its
    /// `close` too (true).
    fn open(&mut self, close: u8) -> bool {
        self.bump();
        self.skip_ws();
        let empty = self.peek() == Some(close);
        if empty {
            self.bump();
        }
        empty
    }

    fn skip_array(&mut self, depth: usize) -> Result<()> {
        if self.open(b']') {
            return Ok(());
        }
        loop {
            self.skip(depth)?;
            if self.list_next(b']')? {
                return Ok(());
            }
        }
    }

    fn skip_object(&mut self, depth: usize) -> Result<()> {
        if self.open(b'}') {
            return Ok(());
        }
        loop {
            self.at_key()?;
            self.string(false)?;
            self.expect(b':', "`:` after the key")?;
            self.skip(depth)?;
            if self.list_next(b'}')? {
                return Ok(());
            }
        }
    }

    /// After an item of an array (`close` is `]`) or a member of an object (`}`): consumes `,`
    /// (false) or the closing bracket (true).
    fn list_next(&mut self, close: u8) -> Result<bool> {
        let what = if close == b']' {
            "an array"
        } else {
            "an object"
        };
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.bump();
                Ok(false)
            }
            Some(c) if c == close => {
                self.bump();
                Ok(true)
            }
            Some(c) => Err(self.fail(format!(
                "expected `,` or `{}` in {what}, found {}",
                close as char,
                describe(c)
            ))),
            None => Err(self.fail(format!("the data ends inside {what}"))),
        }
    }

    /// At a member's key (after whitespace), or fails.
    fn at_key(&mut self) -> Result<()> {
        self.skip_ws();
        match self.peek() {
            Some(b'"') => Ok(()),
            Some(c) => Err(self.fail(format!("expected a key, found {}", describe(c)))),
            None => Err(self.fail("the data ends inside an object")),
        }
    }

    /// A string at the opening quote, and its text as the file spells it (escapes and all).
    /// Built (`build`), it is borrowed when it holds no escape, else decoded into a string of
    /// its own (which the caller charges for).
    fn string(&mut self, build: bool) -> Result<(Option<Cow<'a, str>>, &'a str)> {
        self.bump();
        let start = self.pos;
        let mut owned: Option<Vec<u8>> = None;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.fail("the data ends inside a string"));
            };
            match c {
                b'"' => {
                    let raw =
                        std::str::from_utf8(self.data.get(start..self.pos).unwrap_or_default())
                            .map_err(|_| self.fail("a string is not UTF-8"))?;
                    self.bump();
                    let text = match owned {
                        None if build => Some(Cow::Borrowed(raw)),
                        None => None,
                        Some(v) => {
                            // Escapes give whole characters between the raw text's pieces.
                            let s = String::from_utf8(v)
                                .map_err(|_| self.fail("a string is not UTF-8"))?;
                            Some(Cow::Owned(s))
                        }
                    };
                    return Ok((text, raw));
                }
                b'\\' => {
                    if build && owned.is_none() {
                        owned = Some(self.data.get(start..self.pos).unwrap_or_default().to_vec());
                    }
                    self.bump();
                    let esc = self.peek();
                    self.bump();
                    let mut utf8 = [0u8; 4];
                    let piece: &[u8] = match esc {
                        Some(b'"') => b"\"",
                        Some(b'\\') => b"\\",
                        Some(b'/') => b"/",
                        Some(b'b') => b"\x08",
                        Some(b'f') => b"\x0c",
                        Some(b'n') => b"\n",
                        Some(b'r') => b"\r",
                        Some(b't') => b"\t",
                        Some(b'u') => self.unicode_escape()?.encode_utf8(&mut utf8).as_bytes(),
                        Some(c) => {
                            return Err(self.fail(format!("unknown escape \\{}", describe(c))));
                        }
                        None => return Err(self.fail("the data ends inside a string")),
                    };
                    if let Some(buf) = &mut owned {
                        buf.extend_from_slice(piece);
                    }
                }
                0..=0x1f => {
                    return Err(self.fail(format!(
                        "control character {} inside a string (escape it)",
                        describe(c)
                    )));
                }
                _ => {
                    if let Some(buf) = &mut owned {
                        buf.push(c);
                    }
                    self.bump();
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32> {
        let end = self.pos.saturating_add(4);
        let digits = self
            .data
            .get(self.pos..end)
            .and_then(|d| std::str::from_utf8(d).ok())
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.fail("\\u is not followed by four hex digits"))?;
        self.pos = end;
        Ok(digits)
    }

    /// The character of a `\uXXXX` escape (after the `u`), joining a surrogate pair.
    fn unicode_escape(&mut self) -> Result<char> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                let end = self.pos.saturating_add(2);
                if self.data.get(self.pos..end) != Some(b"\\u") {
                    return Err(self.fail("a high surrogate escape is not followed by a low one"));
                }
                self.pos = end;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.fail("a high surrogate escape is not followed by a low one"));
                }
                // Both are in range, so neither subtraction wraps and the sum fits 21 bits.
                0x10000u32
                    .wrapping_add(first.wrapping_sub(0xD800) << 10)
                    .wrapping_add(second.wrapping_sub(0xDC00))
            }
            0xDC00..=0xDFFF => {
                return Err(self.fail("a low surrogate escape without a high one"));
            }
            c => c,
        };
        char::from_u32(code).ok_or_else(|| self.fail("an escape names no character"))
    }

    /// A number, checked against the grammar `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Result<&'a str> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.bump();
        }
        match self.peek() {
            Some(b'0') => self.bump(),
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.fail("a number has no digits after its sign")),
        }
        if self.peek() == Some(b'.') {
            self.bump();
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.fail("a number has no digits after its decimal point"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.bump();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.bump();
            }
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.fail("a number has no digits in its exponent"));
            }
            self.digits();
        }
        let text = self.data.get(start..self.pos).unwrap_or_default();
        std::str::from_utf8(text).map_err(|_| self.fail("a number is not ASCII"))
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
        }
    }
}

/// Builds the tree of a document, streaming the lists its sink takes.
struct Parser<'a, 'c, S> {
    lex: Lexer<'a>,
    ck: &'c mut Checker,
    sink: &'c mut S,
    /// Where the parse is, for the sink: a key or an index, or both, a level.
    path: Vec<Step<'a>>,
    /// The items and members of the lists being built, end to end; a list closed moves its
    /// own to a list of its exact size.
    items: Vec<Value<'a>>,
    members: Vec<(Cow<'a, str>, Value<'a>)>,
    /// Bytes the finished lists and escaped strings of the trees being held take.
    held: u64,
}

impl<'a, S: Sink> Parser<'a, '_, S> {
    /// Charges `bytes` more to the tree, with the room the lists being read have taken and
    /// what the sink keeps.
    fn charge(&mut self, bytes: usize) -> Result<()> {
        self.held = self.held.saturating_add(bytes as u64);
        let room = std::mem::size_of::<Value>()
            .saturating_mul(self.items.capacity())
            .saturating_add(
                std::mem::size_of::<(Cow<str>, Value)>().saturating_mul(self.members.capacity()),
            );
        let total = self
            .held
            .saturating_add(room as u64)
            .saturating_add(self.sink.kept());
        let (line, pos) = (self.lex.line, self.lex.pos as u64);
        self.ck
            .reserve(total, "the JSON document")
            .map_err(|e| e.on_line(line).at(pos))
    }

    /// A string built (see [`Lexer::string`]), its decoded copy charged to the tree.
    fn string(&mut self) -> Result<(Cow<'a, str>, &'a str)> {
        let (text, raw) = self.lex.string(true)?;
        if let Some(Cow::Owned(s)) = &text {
            self.charge(s.capacity())?;
        }
        Ok((text.unwrap_or_default(), raw))
    }

    /// A value of `shape` (streamed into `list` when it is an array and `list` is given); with
    /// no shape, a value skipped (checked, not built: None).
    fn value(
        &mut self,
        depth: usize,
        shape: Option<&'static Shape>,
        list: Option<S::List>,
    ) -> Result<Option<Value<'a>>> {
        let Some(shape) = shape else {
            self.lex.skip(depth)?;
            return Ok(None);
        };
        self.lex.skip_ws();
        let line = self.lex.line;
        let kind = match self.lex.peek() {
            None => return Err(self.lex.fail("the data ends where a value should be")),
            Some(b'{' | b'[') if depth >= MAX_DEPTH => return Err(self.lex.too_deep(line)),
            Some(b'{') => self.object(depth.saturating_add(1), shape)?,
            Some(b'[') => match list {
                Some(list) => self.stream(depth.saturating_add(1), shape, list)?,
                None => self.array(depth.saturating_add(1), shape)?,
            },
            Some(b'"') => Kind::String(self.string()?.0),
            Some(b't') => self.lex.literal("true").map(|_| Kind::Bool(true))?,
            Some(b'f') => self.lex.literal("false").map(|_| Kind::Bool(false))?,
            Some(b'n') => self.lex.literal("null").map(|_| Kind::Null)?,
            Some(b'-' | b'0'..=b'9') => Kind::Number(self.lex.number()?),
            Some(c) => {
                return Err(self
                    .lex
                    .fail(format!("{} where a value should be", describe(c))));
            }
        };
        Ok(Some(Value { line, kind }))
    }

    fn array(&mut self, depth: usize, shape: &'static Shape) -> Result<Kind<'a>> {
        if self.lex.open(b']') {
            return Ok(Kind::Array(Vec::new()));
        }
        let base = self.items.len();
        let element = shape.element();
        let mut index = 0usize;
        loop {
            self.path.push(Step::Index(index));
            let item = self.value(depth, Some(element), None)?;
            self.path.pop();
            index = index.saturating_add(1);
            if let Some(item) = item {
                let room = self.items.capacity();
                self.items.push(item);
                if self.items.capacity() != room {
                    self.charge(0)?;
                }
            }
            if self.lex.list_next(b']')? {
                let items: Vec<Value<'a>> = self.items.drain(base..).collect();
                self.charge(std::mem::size_of::<Value>().saturating_mul(items.len()))?;
                return Ok(Kind::Array(items));
            }
        }
    }

    /// A list whose items are each parsed, given to the sink, and dropped: the tree keeps it
    /// as an empty array, to say it was there.
    fn stream(&mut self, depth: usize, shape: &'static Shape, list: S::List) -> Result<Kind<'a>> {
        if self.lex.open(b']') {
            return Ok(Kind::Array(Vec::new()));
        }
        let element = shape.element();
        let mut index = 0usize;
        loop {
            self.lex.skip_ws();
            let (offset, line) = (self.lex.pos as u64, self.lex.line);
            self.sink.begin(list, index);
            let held = self.held;
            self.path.push(Step::Index(index));
            let item = self.value(depth, Some(element), None)?;
            self.path.pop();
            if let Some(item) = item {
                self.sink.take(list, index, offset, line, &item);
            }
            self.held = held;
            self.charge(0)?;
            index = index.saturating_add(1);
            if self.lex.list_next(b']')? {
                return Ok(Kind::Array(Vec::new()));
            }
        }
    }

    /// An object; the members `shape` knows are built and the others told to the sink and
    /// skipped (so their keys are not checked for repeats).
    fn object(&mut self, depth: usize, shape: &'static Shape) -> Result<Kind<'a>> {
        if self.lex.open(b'}') {
            return Ok(Kind::Object(Vec::new()));
        }
        let base = self.members.len();
        loop {
            self.lex.at_key()?;
            let (key_line, key_pos) = (self.lex.line, self.lex.pos as u64);
            let (key, raw) = self.string()?;
            self.lex.expect(b':', "`:` after the key")?;
            let member = shape.member(&key);
            if member.is_none() {
                self.path.push(Step::Key(raw));
                let told = self.sink.unknown(self.ck, &self.path, key_line, key_pos);
                self.path.pop();
                told?;
            }
            let list = self.sink.stream(shape, &key);
            self.path.push(Step::Key(raw));
            let v = self.value(depth, member, list)?;
            self.path.pop();
            if let Some(v) = v {
                let room = self.members.capacity();
                self.members.push((key, v));
                if self.members.capacity() != room {
                    self.charge(0)?;
                }
            }
            if self.lex.list_next(b'}')? {
                let members: Vec<(Cow<'a, str>, Value<'a>)> = self.members.drain(base..).collect();
                self.charge(
                    std::mem::size_of::<(Cow<str>, Value)>().saturating_mul(members.len()),
                )?;
                unique_keys(&members)?;
                return Ok(Kind::Object(members));
            }
        }
    }
}

/// Fails on a key that appears twice, naming the line of its second value; sorting keeps this
/// O(n log n) for objects with many keys.
fn unique_keys(members: &[(Cow<'_, str>, Value<'_>)]) -> Result<()> {
    if members.len() < 2 {
        return Ok(());
    }
    let mut keys: Vec<(&str, usize)> = members
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (k.as_ref(), i))
        .collect();
    keys.sort_unstable();
    let twice = keys
        .windows(2)
        .filter_map(|w| match w {
            [(a, _), (b, i)] if a == b => Some(*i),
            _ => None,
        })
        .min();
    match twice.and_then(|i| members.get(i)) {
        Some((key, v)) => {
            Err(Error::malformed(format!("JSON: key {key:?} appears twice")).on_line(v.line))
        }
        None => Ok(()),
    }
}

/// Appends `s` as a JSON string.
pub(crate) fn put_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `x` as the shortest text that reads back as the same bits (finite `x` only: JSON has no NaN).
pub(crate) fn put_f32(out: &mut String, x: f32) {
    let a = x.abs();
    if a == 0.0 || (1e-5..1e9).contains(&a) {
        let _ = write!(out, "{x}");
    } else {
        let _ = write!(out, "{x:e}");
    }
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub(crate) fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3).saturating_mul(4));
    let sym = |v: u32| char::from(BASE64.get((v & 63) as usize).copied().unwrap_or(b'A'));
    for chunk in data.chunks(3) {
        let b = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = (b(0) << 16) | (b(1) << 8) | b(2);
        out.push(sym(n >> 18));
        out.push(sym(n >> 12));
        out.push(if chunk.len() > 1 { sym(n >> 6) } else { '=' });
        out.push(if chunk.len() > 2 { sym(n) } else { '=' });
    }
    out
}

/// Decodes standard base64 with padding: the length a multiple of 4, `=` only as the last one
/// or two characters, and the bits the padding leaves over zero (so every byte string has one
/// encoding). The error names the first offending character.
pub(crate) fn base64_decode(text: &str) -> std::result::Result<Vec<u8>, String> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "base64 of {} characters is not a whole number of 4-character groups",
            bytes.len()
        ));
    }
    let value = |i: usize, c: u8| -> std::result::Result<u32, String> {
        match c {
            b'A'..=b'Z' => Ok(u32::from(c.wrapping_sub(b'A'))),
            b'a'..=b'z' => Ok(u32::from(c.wrapping_sub(b'a')).wrapping_add(26)),
            b'0'..=b'9' => Ok(u32::from(c.wrapping_sub(b'0')).wrapping_add(52)),
            b'+' => Ok(62),
            b'/' => Ok(63),
            _ => Err(format!("base64 character {i} is {}", describe(c))),
        }
    };
    let groups = bytes.len() / 4;
    let mut out = Vec::with_capacity(groups.saturating_mul(3));
    for (g, chunk) in bytes.chunks_exact(4).enumerate() {
        let last = g.wrapping_add(1) == groups;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            let at = g
                .saturating_mul(4)
                .saturating_add(4usize.saturating_sub(pad));
            return Err(format!(
                "base64 padding `=` at character {at} is not at the end"
            ));
        }
        let mut n = 0u32;
        for (k, &c) in chunk.iter().enumerate() {
            let at = g.saturating_mul(4).saturating_add(k);
            let v = if k >= 4usize.saturating_sub(pad) {
                0
            } else {
                value(at, c)?
            };
            n = (n << 6) | v;
        }
        let [_, b0, b1, b2] = n.to_be_bytes();
        let leftover = match pad {
            1 => u32::from(b2),
            2 => u32::from(b1) | u32::from(b2),
            _ => 0,
        };
        if leftover != 0 {
            return Err(format!(
                "base64 group {g} has bits set beyond its last byte"
            ));
        }
        out.push(b0);
        if pad < 2 {
            out.push(b1);
        }
        if pad < 1 {
            out.push(b2);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::format::LoadOptions;

    /// The whole document built, within the default limit for its size.
    fn parse(data: &[u8]) -> Result<Value<'_>> {
        let mut ck = Checker::new(&LoadOptions::default(), false, data.len());
        super::parse(data, &Shape::Any, &mut ck, &mut |_, _, _, _| Ok(()))
    }

    static ITEM: Shape = Shape::Object {
        known: &["x"],
        nested: &[],
    };
    static DOC: Shape = Shape::Object {
        known: &["a", "list"],
        nested: &[("list", &Shape::Array(&ITEM))],
    };

    /// `data` parsed as [`DOC`] under a limit of `max_bytes`, with the unknown members met.
    fn parse_doc(data: &[u8], max_bytes: u64) -> (Result<Value<'_>>, Vec<(String, u32, u64)>) {
        let options = LoadOptions {
            max_bytes,
            ..LoadOptions::default()
        };
        let mut ck = Checker::new(&options, false, data.len());
        let mut met = Vec::new();
        let r = super::parse(data, &DOC, &mut ck, &mut |_, steps, line, at| {
            met.push((format!("{steps:?}"), line, at));
            Ok(())
        });
        (r, met)
    }

    #[test]
    fn unknown_members_are_reported_where_met_and_not_built() {
        let text = b"{\"a\": 1, \"list\": [{\"x\": 1},\n {\"x\": 2, \"y\": [1, {\"z\": 2}]}],\n \"b\": {\"q\": [[]]}}";
        let (v, met) = parse_doc(text, 0);
        let v = v.unwrap();
        assert_eq!(
            met,
            [
                ("[Key(\"list\"), Index(1), Key(\"y\")]".to_owned(), 2, 38),
                ("[Key(\"b\")]".to_owned(), 3, 61),
            ]
        );
        // The offsets are the keys'.
        assert_eq!(
            (&text[38..41], &text[61..64]),
            (&b"\"y\""[..], &b"\"b\""[..])
        );
        assert!(v.get("b").is_none());
        match &v.get("list").unwrap().kind {
            Kind::Array(items) => {
                assert_eq!(items.len(), 2);
                assert!(items[1].get("y").is_none());
                assert!(items[1].get("x").is_some());
            }
            _ => panic!("not an array"),
        }
    }

    #[test]
    fn skipped_values_are_still_checked() {
        for (text, code, line) in [
            (&b"{\"b\": [1,\n 2,]}"[..], ErrorCode::Malformed, 2),
            (b"{\"b\": {\"k\" 1}}", ErrorCode::Malformed, 1),
            (b"{\"b\": \"\\q\"}", ErrorCode::Malformed, 1),
            (b"{\"b\": \"\xff\"}", ErrorCode::Malformed, 1),
            (b"{\"b\": [tru]}", ErrorCode::Malformed, 1),
        ] {
            let e = parse_doc(text, 0).0.unwrap_err();
            assert_eq!((e.code(), e.line()), (code, Some(line)), "{e}");
        }
        let deep = format!(
            "{{\"b\": {}{}}}",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        let e = parse_doc(deep.as_bytes(), 0).0.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    }

    #[test]
    fn the_tree_is_charged_to_the_limit_as_it_grows() {
        // 100k items of 40 bytes each at least, under a limit of 1 MB: refused part way.
        let text = format!("[{}0]", "[0],".repeat(100_000));
        let e = super::parse(
            text.as_bytes(),
            &Shape::Any,
            &mut Checker::new(
                &LoadOptions {
                    max_bytes: 1 << 20,
                    ..LoadOptions::default()
                },
                false,
                text.len(),
            ),
            &mut |_, _, _, _| Ok(()),
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Limit, "{e}");
        assert!(
            e.to_string()
                .starts_with("line 1: the JSON document needs "),
            "{e}"
        );
        assert!(e.offset().unwrap() < text.len() as u64 / 2, "{e}");
        // Under a known key skipped members cost nothing: the same text as an unknown member.
        let text = format!("{{\"junk\": {text}, \"a\": 1}}");
        let (v, met) = parse_doc(text.as_bytes(), 1 << 10);
        assert!(v.unwrap().get("a").is_some());
        assert_eq!(met.len(), 1);
    }

    #[test]
    fn values_with_lines() {
        let v = parse(b"{\n  \"a\": [1, -2.5e3, true],\n  \"b\": \"x\\u00e9\\ud83d\\ude00\\n\"\n}")
            .unwrap();
        assert_eq!(v.line, 1);
        let a = v.get("a").unwrap();
        assert_eq!(a.line, 2);
        match &a.kind {
            Kind::Array(items) => {
                assert!(matches!(items[1].kind, Kind::Number("-2.5e3")));
                assert!(matches!(items[2].kind, Kind::Bool(true)));
            }
            _ => panic!("not an array"),
        }
        match &v.get("b").unwrap().kind {
            Kind::String(s) => assert_eq!(s, "x\u{e9}\u{1f600}\n"),
            _ => panic!("not a string"),
        }
        assert_eq!(v.get("b").unwrap().line, 3);
    }

    #[test]
    fn rejects_what_rfc_8259_rejects() {
        for (text, line) in [
            (&b"{\"a\": 1,}"[..], 1),
            (b"[1 2]", 1),
            (b"\n\n01", 3),
            (b"1.", 1),
            (b"-", 1),
            (b"1e", 1),
            (b"\"a\nb\"", 1),
            (b"\"\\x\"", 1),
            (b"\"\\ud800\"", 1),
            (b"\"\\udc00\"", 1),
            (b"{\"a\": 1, \"a\": 2}", 1),
            (b"[1]\n x", 2),
            (b"tru", 1),
            (b"\"\xff\"", 1),
            (b"", 1),
            (b"{\"a\" 1}", 1),
            (b"NaN", 1),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.code(), ErrorCode::Malformed, "{text:?}: {e}");
            assert_eq!(e.line(), Some(line), "{text:?}: {e}");
        }
    }

    #[test]
    fn many_keys_are_checked_for_repeats_quickly() {
        let n = 200_000;
        let mut text: String = (0..n).map(|i| format!("\"k{i}\":{i},")).collect();
        text.insert(0, '{');
        text.push_str("\n\"k7\":0}");
        let e = parse(text.as_bytes()).unwrap_err();
        assert_eq!(e.line(), Some(2), "{e}");
        assert!(e.to_string().contains("\"k7\" appears twice"), "{e}");
    }

    #[test]
    fn nesting_is_limited() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        parse(ok.as_bytes()).unwrap();
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(parse(deep.as_bytes()).unwrap_err().code(), ErrorCode::Limit);
        let hostile = "[".repeat(1 << 20);
        assert_eq!(
            parse(hostile.as_bytes()).unwrap_err().code(),
            ErrorCode::Limit
        );
    }

    #[test]
    fn floats_read_back_bit_exact() {
        for x in [
            0.1f32,
            -0.0,
            1e30,
            1e-30,
            f32::MAX,
            f32::MIN_POSITIVE,
            1.0e-45,
            123456.79,
            3.0,
        ] {
            let mut s = String::new();
            put_f32(&mut s, x);
            assert_eq!(s.parse::<f32>().unwrap().to_bits(), x.to_bits(), "{s}");
        }
    }

    #[test]
    fn strings_escape_and_read_back() {
        let mut s = String::new();
        put_string(&mut s, "a\"b\\c\n\u{1}é");
        match parse(s.as_bytes()).unwrap().kind {
            Kind::String(t) => assert_eq!(t, "a\"b\\c\n\u{1}é"),
            _ => panic!(),
        }
    }

    #[test]
    fn base64_both_ways() {
        for data in [
            &b""[..],
            b"f",
            b"fo",
            b"foo",
            b"foob",
            b"fooba",
            b"foobar",
            b"\x89PNG\r\n\x1a\n",
        ] {
            let text = base64_encode(data);
            assert_eq!(base64_decode(&text).unwrap(), data);
        }
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        for bad in ["Zm8", "Zm=v", "Zm9v=A==", "Zm8-", "Zm9=", "Zh==", "===="] {
            assert!(base64_decode(bad).is_err(), "{bad}");
        }
    }
}
