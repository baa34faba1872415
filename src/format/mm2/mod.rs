//! Midtown Madness 2 pedestrians: `.skel` skeletons and the `.mod` text meshes bound to them
//! (FORMATS §5; the Mm2kiwi pages "Pedestrian skeleton" and "Pedestrian model"; the Angel
//! Studios Blender addon's readers and writers).
//!
//! A `.skel` is `NumBones N` and a tree of `bone NAME { offset x y z  CHILDREN }` blocks. Bones
//! are numbered in document (pre-)order; an offset is a translation from the parent's joint,
//! with no rotation, so the bind pose of a bone is the sum of the offsets from the root down to
//! it. It loads as a model with those bones and one frame, `rest`, of pure translations.
//!
//! A `.mod` (text, versions 1.06 to 1.10) holds a header of counts, the vertex positions (`v`),
//! normals (`n`), colours (`c`) and texture coordinates (`t1`, `t2`), one `mtl NAME { ... }`
//! block per material, then the corners (`adj`: position, normal, colour, tex1 and tex2
//! indices) and primitives (`tri a b c`, strips `str N ...` and `stp N ...`) that index them,
//! either in one list over all materials or in `packet` blocks that also carry the bones they
//! use (`mtx`), and last the run lengths `mtxv` and `mtxn` giving each position and normal its
//! bone. Positions are relative to their bone's joint. Each material becomes one mesh whose
//! vertices are its corners, each following one bone with weight 1 and carrying its `t1` uv and
//! its `c` colour as bytes (`t2` is checked but not kept: the model has no second uv set); the
//! meshes wait for the skeleton ([`BoneSlots::ByIndex`](crate::model::BoneSlots), the header's
//! `matrices:` count), which [`Model::bind`](crate::model::Model::bind) or the `.skel` beside
//! the file supplies.
//!
//! Coordinates stay as the files have them: y up, right-handed (the Blender addon maps them to
//! Blender's with `(x, y, z) -> (-x, z, y)`, a rotation).
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

mod bake;
mod mesh;
mod skel;
mod write;

pub use bake::{BakeReport, bake_rest_pose};
pub(crate) use mesh::read_mod;
pub(crate) use skel::read_skel;
pub use skel::write_skel;
pub use write::write_mod;

pub(crate) use crate::error::amount;
use crate::error::{Error, Result};
use crate::format::Checker;
use crate::format::text::show;

/// The longest bone name: the engine's `crBoneData` keeps 64 bytes with the NUL.
pub const MAX_NAME: usize = 63;

/// The colour of a vertex without one: the writers give it to the vertices of a mesh without
/// colours, as the Blender addon writes `1 1 1 1` for a mesh without a colour layer.
const WHITE: [u8; 4] = [255; 4];

pub fn looks_like_skel(data: &[u8]) -> bool {
    data.trim_ascii_start().starts_with(b"NumBones")
}

pub fn looks_like_mod(data: &[u8]) -> bool {
    data.trim_ascii_start().starts_with(b"version:")
}

/// The words of a line, where `{` and `}` are words of their own even when written against a
/// name (`bone root{`): the braces give the files their structure.
#[derive(Clone, Copy)]
struct Tokens<'a> {
    rest: &'a [u8],
}

impl<'a> Tokens<'a> {
    fn new(line: &'a [u8]) -> Tokens<'a> {
        Tokens { rest: line }
    }

    /// What the line holds after the words taken so far.
    fn rest(&self) -> &'a [u8] {
        self.rest
    }

    fn peek(&self) -> Option<&'a [u8]> {
        self.clone().next()
    }

    /// The next word unless it is a brace (which is left to be taken).
    fn next_word(&mut self) -> Option<&'a [u8]> {
        match self.peek() {
            Some(w) if !is_brace(w) => self.next(),
            _ => None,
        }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|b| !b.is_ascii_whitespace())?;
        let rest = self.rest.get(start..)?;
        let len = match rest.first() {
            Some(b'{' | b'}') => 1,
            _ => rest
                .iter()
                .position(|&b| b.is_ascii_whitespace() || b == b'{' || b == b'}')
                .unwrap_or(rest.len()),
        };
        let (word, after) = rest.split_at_checked(len)?;
        self.rest = after;
        Some(word)
    }
}

fn is_brace(word: &[u8]) -> bool {
    word == b"{" || word == b"}"
}

/// A word for a message: in backquotes, or "the end of the line".
fn found(word: Option<&[u8]>) -> String {
    match word {
        Some(w) => format!("`{}`", show(w)),
        None => "the end of the line".to_owned(),
    }
}

/// A count: a whole number from 0 up.
fn whole_number(word: Option<&[u8]>, line: u32, what: impl FnOnce() -> String) -> Result<u64> {
    const KIND: &str = "a whole number from 0 up";
    match word {
        Some(w) => crate::format::text::parsed(w, line, what, KIND),
        None => Err(Error::malformed(format!(
            "{}: expected {KIND}, found the end of the line",
            what()
        ))
        .on_line(line)),
    }
}

/// The numbers of a record after its keyword, which must be exactly `N`; NaN and infinity are
/// reported (MSVC wrote NaN as `-1.#QNAN0`, which is not a number here either) and read as 0.
fn finite_numbers<const N: usize>(
    rest: &[u8],
    line: u32,
    what: impl Fn() -> String,
    layout: &str,
    ck: &mut Checker,
) -> Result<[f32; N]> {
    let mut v = crate::format::text::floats::<N>(rest, line, &what, layout)?;
    if let Some(x) = v.iter().find(|x| !x.is_finite()) {
        ck.problem(
            Error::malformed(format!("{}: {x} is not a finite number", what())).on_line(line),
        )?;
        v = [0.0; N];
    }
    Ok(v)
}

/// Problems of one kind that the default mode tolerates, counted as they are found and reported
/// once, at the first.
#[derive(Default)]
struct Tally {
    count: u64,
    first: Option<(u32, String)>,
}

impl Tally {
    fn note(&mut self, line: u32, detail: impl FnOnce() -> String) {
        self.count = self.count.saturating_add(1);
        if self.first.is_none() {
            self.first = Some((line, detail()));
        }
    }

    /// A warning (strict mode: an error) at the first, `message(count, first)` saying what.
    fn report(self, ck: &mut Checker, message: impl FnOnce(u64, &str) -> String) -> Result<()> {
        match self.first {
            Some((line, detail)) => {
                ck.tolerate(Error::malformed(message(self.count, &detail)).on_line(line))
            }
            None => Ok(()),
        }
    }
}

/// A name a reader takes from a word: a NUL would cut it short, so it is reported.
fn checked_name(
    word: &[u8],
    what: impl FnOnce() -> String,
    line: u32,
    ck: &mut Checker,
) -> Result<()> {
    if word.contains(&0) {
        ck.problem(
            Error::malformed(format!("{} `{}` holds a NUL byte", what(), show(word))).on_line(line),
        )?;
    }
    Ok(())
}

/// Whether a writer can put `name` where a reader takes one word: not empty, no white space, no
/// braces.
fn is_word(name: &[u8]) -> bool {
    !name.is_empty()
        && !name
            .iter()
            .any(|&b| b.is_ascii_whitespace() || b == b'{' || b == b'}' || b == 0)
}

/// The deepest level indented (three spaces each); deeper lines are indented as this one.
const MAX_INDENT: usize = 32;

/// Appends `text` as one CRLF line indented by `depth` steps of three spaces (the layout of the
/// documented files).
fn put_line(out: &mut Vec<u8>, depth: usize, text: &[u8]) {
    // Indentation means nothing to a reader; past a depth no real skeleton reaches it stops
    // growing, so that a chain of n bones writes O(n) bytes, not O(n^2).
    out.extend(std::iter::repeat_n(
        b' ',
        depth.min(MAX_INDENT).saturating_mul(3),
    ));
    out.extend_from_slice(text);
    out.extend_from_slice(b"\r\n");
}

/// `x` as the files write numbers (`%f`), or exactly where six decimals cannot hold it.
fn number(x: f32, what: impl FnOnce() -> String) -> Result<String> {
    crate::format::text::exact_fixed(x)
        .ok_or_else(|| Error::invalid_argument(format!("{}: {x} is not finite", what())))
}
