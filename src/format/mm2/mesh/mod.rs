//! `.mod` text meshes, versions 1.06 to 1.10.
//!
//! A line's first word says what it holds, and the reader takes lines in any order: header
//! counts (`verts: N`), records (`v`, `n`, `c`, `t1`, `t2`), `mtl NAME { ... }` and
//! `packet A P M [R] { ... }` blocks, corners (`adj`) and primitives (`tri`, `str`, `stp`)
//! outside packets, and the run lengths `mtxv` and `mtxn`. A line whose first word is none of
//! these (tangent records, a later version's settings) is skipped with a warning.
//!
//! How the records become meshes (FORMATS §5.2):
//! - A material is one mesh: its name, and for shader its first `texture:` (else its name).
//! - Without packets, `adj` and primitive records form one list each, which the materials'
//!   `adjuncts:` and `primitives:` counts cut into runs, in material order; primitives index
//!   the whole `adj` list (as the Blender addon reads them) and must stay inside their
//!   material's run. Version 1.06 materials have no `adjuncts:` count: a mesh then holds the
//!   corners its primitives use, in file order. A corner's bone is its position's, from the
//!   `mtxv` runs (one count per bone, in bone order, over the positions).
//! - With packets (a material's `packets: N` takes the next N packets), a corner's sixth number
//!   indexes its packet's `mtx` list of bones, and primitives index the packet's own corners.
//!   Where `mtxv` is present too, a corner whose position it gives another bone is reported.
//! - Each corner is one vertex: one influence of weight 1 whose origin is the position (relative
//!   to the bone's joint) and whose normal is the corner's normal; its uv is its `t1` and its
//!   colour its `c`. `t2` is checked but not kept: the model has no second uv set.
//! - A `c` record is red, green, blue and alpha from 0 to 1 (the Blender addon hands them to
//!   Blender's colour layer as they are, and writes white as `1 1 1 1`; the retail models hold
//!   one colour, says the Mm2kiwi page); each becomes a byte,
//!   `v * 255` rounded to the nearest (halves away from 0) and clamped to 0..=255. A file without
//!   `c` records has no colours, rather than white ones.
//! - `tri a b c` is a triangle whose front face is `(b - a) x (c - a)`: the Blender addon imports
//!   corners in file order into Blender's counter-clockwise faces through a rotation, and
//!   exports them back the same way. A strip `str N i0 i1 ...` gives `(i0 i1 i2)`, `(i2 i1 i3)`,
//!   `(i2 i3 i4)`, ... (alternating winding), `stp` the same starting with the other winding;
//!   strip triangles that repeat a corner only join runs and are left out.
//!
//! Counts that structure the data (a material's, a packet's, `mtxv`'s) must match what follows;
//! header totals that differ from the records are a warning (an error in strict mode).
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

mod build;

use std::ops::Range;

use super::{Tally, Tokens, checked_name, finite_numbers, found, whole_number};
use crate::error::{Error, Result};
use crate::format::text::{self, Lines, int, ints, show};
use crate::format::{Budget, Checker};
use crate::math::{MAX_MAGNITUDE, in_range};
use crate::model::{Influence, Mesh, MeshParts, ModelParts};

/// The text versions; 2.xx files are binary.
const VERSIONS: [&[u8]; 4] = [b"1.06", b"1.08", b"1.09", b"1.10"];

// Heap bytes per record while reading and in the model, for the caller's memory limit. The
// lists records are read into double as they grow, so a record may hold twice its size there,
// beside what it becomes in the meshes: the charge is what is held at the most.
/// A `v`, `n`, `c` or `t1` record of `N` numbers: twice its numbers, and its position's or
/// normal's bone, or its colour's bytes.
fn cost_record<const N: usize>() -> u64 {
    (size_of::<[f32; N]>() as u64)
        .saturating_mul(2)
        .saturating_add(4)
}
/// An `adj` record: twice itself, and the vertex it becomes (its place in the material's
/// corners, its influence, start, uv and colour).
const COST_ADJ: u64 = (2 * size_of::<Adj>()
    + size_of::<usize>()
    + size_of::<Influence>()
    + size_of::<u32>()
    + size_of::<[f32; 2]>()
    + size_of::<[u8; 4]>()) as u64;
/// A primitive: twice itself.
const COST_PRIM: u64 = 2 * size_of::<Prim>() as u64;
/// A primitive's corner index: twice itself.
const COST_INDEX: u64 = 2 * size_of::<i64>() as u64;
/// A triangle a primitive makes: twice its corners while its material's mesh is cut, and its
/// three indices in the mesh (which, made from packets, double as they grow: no more).
const COST_TRIANGLE: u64 = (2 * size_of::<[usize; 3]>() + size_of::<[u32; 3]>()) as u64;
/// A material: twice itself, and the mesh it becomes, as parts and in the model, with its one
/// vertex start (its names are charged by their length).
const COST_MATERIAL: u64 =
    (2 * size_of::<Material>() + size_of::<MeshParts>() + size_of::<Mesh>() + 4) as u64;
/// A packet: twice itself (its `mtx` entries are charged as runs).
const COST_PACKET: u64 = 2 * size_of::<Packet>() as u64;
/// An `mtxv`, `mtxn` or `mtx` entry: itself, in a list of its exact size, and an `mtx` entry's
/// bone while its packet is made into the mesh.
const COST_RUN: u64 = (size_of::<u64>() + size_of::<u32>()) as u64;

/// The header's counts, in the order the files write them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Verts,
    Normals,
    Colors,
    Tex1s,
    Tex2s,
    Tangents,
    Materials,
    Adjuncts,
    Primitives,
    Matrices,
    Reskins,
}

const KEYS: [Key; 11] = [
    Key::Verts,
    Key::Normals,
    Key::Colors,
    Key::Tex1s,
    Key::Tex2s,
    Key::Tangents,
    Key::Materials,
    Key::Adjuncts,
    Key::Primitives,
    Key::Matrices,
    Key::Reskins,
];

impl Key {
    fn name(self) -> &'static str {
        match self {
            Key::Verts => "verts:",
            Key::Normals => "normals:",
            Key::Colors => "colors:",
            Key::Tex1s => "tex1s:",
            Key::Tex2s => "tex2s:",
            Key::Tangents => "tangents:",
            Key::Materials => "materials:",
            Key::Adjuncts => "adjuncts:",
            Key::Primitives => "primitives:",
            Key::Matrices => "matrices:",
            Key::Reskins => "reskins:",
        }
    }

    fn of(word: &[u8]) -> Option<Key> {
        KEYS.into_iter().find(|k| k.name().as_bytes() == word)
    }
}

/// A count and its line.
#[derive(Clone, Copy)]
struct Counted {
    value: u64,
    line: u32,
}

struct Material<'a> {
    name: &'a [u8],
    line: u32,
    packets: Option<Counted>,
    adjuncts: Option<Counted>,
    primitives: Option<Counted>,
    texture: Option<&'a [u8]>,
}

/// A corner: position, normal, colour, tex1, tex2 and (in a packet) matrix indices, as written.
struct Adj {
    index: [i64; 6],
    line: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `tri`
    Triangle,
    /// `str`
    Strip,
    /// `stp`: a strip whose first triangle has the other winding.
    FlippedStrip,
}

/// A primitive: its corner indices are `indices[first..first + count]`.
struct Prim {
    shape: Shape,
    first: usize,
    count: usize,
    line: u32,
}

struct Packet {
    line: u32,
    adjs: Range<usize>,
    prims: Range<usize>,
    /// Bone numbers, and the `mtx` line.
    mtx: Vec<i64>,
    mtx_line: u32,
}

/// An `mtxv` or `mtxn` line: one count per bone.
struct Runs {
    counts: Vec<u64>,
    line: u32,
}

/// What the file holds, read but not yet checked against itself.
#[derive(Default)]
struct Raw<'a> {
    header: [Option<Counted>; KEYS.len()],
    version_line: u32,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    colors: Vec<[f32; 4]>,
    tex1: Vec<[f32; 2]>,
    tex2: u64,
    materials: Vec<Material<'a>>,
    adjs: Vec<Adj>,
    prims: Vec<Prim>,
    indices: Vec<i64>,
    packets: Vec<Packet>,
    /// The line of the first `adj` or primitive outside a packet.
    loose: Option<u32>,
    mtxv: Option<Runs>,
    mtxn: Option<Runs>,
    unknown: Tally,
    /// The line after the last.
    end_line: u32,
}

/// Reads a `.mod` text mesh: one mesh per material, waiting for its skeleton by bone index.
pub(crate) fn read_mod(data: &[u8], ck: &mut Checker) -> Result<ModelParts> {
    let raw = parse(data, ck)?;
    build::build(raw, ck)
}

// ---------------------------------------------------------------------------------------------
// Reading the lines
// ---------------------------------------------------------------------------------------------

fn parse<'a>(data: &'a [u8], ck: &mut Checker) -> Result<Raw<'a>> {
    let mut lines = Lines::new(data);
    let mut raw = Raw::default();
    let mut budget = Budget::default();
    raw.version_line = read_version(&mut lines)?;
    while let Some((n, line)) = lines.next() {
        let mut words = Tokens::new(line);
        let Some(key) = words.next() else {
            continue;
        };
        let rest = words.rest();
        let at = |e: Error| e.on_line(n);
        match key {
            b"v" => {
                push_record(&mut raw.positions, "v", "x y z", rest, n, &mut budget, ck)?;
                last_in_range(&raw.positions, "v", n)?;
            }
            b"n" => {
                push_record(&mut raw.normals, "n", "x y z", rest, n, &mut budget, ck)?;
                last_in_range(&raw.normals, "n", n)?;
            }
            b"t1" => push_record(&mut raw.tex1, "t1", "s t", rest, n, &mut budget, ck)?,
            b"c" => push_record(&mut raw.colors, "c", RGBA, rest, n, &mut budget, ck)?,
            b"t2" => count_record::<2>(&mut raw.tex2, "t2", "s t", rest, n, ck)?,
            b"mtl" => {
                budget.add(ck, 1, COST_MATERIAL).map_err(at)?;
                let m = read_material(&mut lines, words, n, &mut raw, ck)?;
                // The mesh's name, and its shader's: the texture's, else the name again; each
                // a copy with a NUL.
                let names = (m.name.len())
                    .saturating_add(m.texture.unwrap_or(m.name).len())
                    .saturating_add(2);
                budget.add(ck, names as u64, 1).map_err(at)?;
                raw.materials.push(m);
            }
            b"packet" => {
                budget.add(ck, 1, COST_PACKET).map_err(at)?;
                read_packet(&mut lines, words, n, &mut raw, &mut budget, ck)?;
            }
            b"adj" => {
                let what = || format!("`adj` record {}", raw.adjs.len());
                let [v, nr, c, t1, t2] = ints::<5>(rest, n, what, ADJ_LAYOUT)?;
                budget.add(ck, 1, COST_ADJ).map_err(at)?;
                raw.adjs.push(Adj {
                    index: [v, nr, c, t1, t2, 0],
                    line: n,
                });
                raw.loose.get_or_insert(n);
            }
            b"tri" | b"str" | b"stp" => {
                let prim = read_prim(
                    key,
                    rest,
                    n,
                    raw.prims.len(),
                    &mut raw.indices,
                    &mut budget,
                    ck,
                )?;
                raw.prims.push(prim);
                raw.loose.get_or_insert(n);
            }
            b"mtxv" | b"mtxn" => {
                let slot = if key == b"mtxv" {
                    &mut raw.mtxv
                } else {
                    &mut raw.mtxn
                };
                if let Some(first) = slot {
                    return Err(at(Error::malformed(format!(
                        "a second `{}` line (the first is on line {})",
                        show(key),
                        first.line
                    ))));
                }
                *slot = Some(read_runs(key, rest, n, &mut budget, ck)?);
            }
            b"version:" => {
                return Err(at(Error::malformed(format!(
                    "a second `version:` line (the first is on line {})",
                    raw.version_line
                ))));
            }
            b"{" | b"}" => {
                return Err(at(Error::malformed(format!(
                    "`{}` outside a `mtl` or `packet` block it could open or close",
                    show(key)
                ))));
            }
            _ => match Key::of(key) {
                Some(k) => {
                    let slot = raw.header.get_mut(k as usize);
                    header_count(slot, k, words, n)?;
                }
                None => raw.unknown.note(n, || show(key)),
            },
        }
    }
    raw.end_line = lines.line().saturating_add(1);
    Ok(raw)
}

const ADJ_LAYOUT: &str = "position, normal, colour, tex1 and tex2 indices";
const RGBA: &str = "red green blue alpha";

/// A record of `N` numbers after its keyword, kept in `list`.
fn push_record<const N: usize>(
    list: &mut Vec<[f32; N]>,
    key: &str,
    layout: &str,
    rest: &[u8],
    n: u32,
    budget: &mut Budget,
    ck: &mut Checker,
) -> Result<()> {
    let what = || format!("`{key}` record {}", list.len());
    let v = finite_numbers::<N>(rest, n, what, layout, ck)?;
    budget
        .add(ck, 1, cost_record::<N>())
        .map_err(|e| e.on_line(n))?;
    list.push(v);
    Ok(())
}

/// Every model refuses influences beyond MAX_MAGNITUDE; a position or normal becomes one, so
/// it is refused here, on its line.
fn last_in_range(list: &[[f32; 3]], key: &str, n: u32) -> Result<()> {
    let Some((last, _)) = list.split_last() else {
        return Ok(());
    };
    if let Some(&v) = last.iter().find(|&&v| !in_range(v.into())) {
        return Err(Error::limit(format!(
            "`{key}` record {} holds {v:e}, beyond {MAX_MAGNITUDE:e}",
            list.len().saturating_sub(1)
        ))
        .on_line(n));
    }
    Ok(())
}

/// A record whose `N` numbers are checked but not kept (`t2`: the model has no second uv set):
/// counted in `count`.
fn count_record<const N: usize>(
    count: &mut u64,
    key: &str,
    layout: &str,
    rest: &[u8],
    n: u32,
    ck: &mut Checker,
) -> Result<()> {
    let what = || format!("`{key}` record {count}");
    finite_numbers::<N>(rest, n, what, layout, ck)?;
    *count = count.saturating_add(1);
    Ok(())
}

/// The `version:` line, the first that is not blank; returns its number.
fn read_version(lines: &mut Lines<'_>) -> Result<u32> {
    loop {
        let Some((n, line)) = lines.next() else {
            return Err(Error::truncated("the data ends before `version:`")
                .on_line(lines.line().saturating_add(1)));
        };
        let mut words = Tokens::new(line);
        let Some(key) = words.next() else {
            continue;
        };
        if key != b"version:" {
            // Not yet an MM2 mesh: what is there is not shown (it may be any file).
            return Err(
                Error::malformed("expected `version:` first; this is no MM2 .mod text").on_line(n),
            );
        }
        return match words.next() {
            Some(v) if VERSIONS.contains(&v) => Ok(n),
            Some(v) if v.starts_with(b"2.") => Err(Error::unsupported(format!(
                "version {}: a binary .mod, which ossa does not read (it reads text versions \
                 1.06 to 1.10)",
                show(v.get(..4).unwrap_or(v))
            ))
            .on_line(n)),
            other => Err(Error::unsupported(format!(
                "version {}: ossa reads the text versions 1.06, 1.08, 1.09 and 1.10",
                found(other)
            ))
            .on_line(n)),
        };
    }
}

/// A header count, `KEY: N`, which may be given once.
fn header_count(
    slot: Option<&mut Option<Counted>>,
    key: Key,
    mut words: Tokens<'_>,
    n: u32,
) -> Result<()> {
    let Some(slot) = slot else {
        return Ok(());
    };
    set_count(slot, key.name(), &mut words, n, || key.name().to_owned())
}

/// `KEY N` (a header count or a material's setting): one whole number, given once.
fn set_count(
    slot: &mut Option<Counted>,
    key: &str,
    words: &mut Tokens<'_>,
    n: u32,
    what: impl Fn() -> String,
) -> Result<()> {
    if let Some(first) = slot {
        return Err(Error::malformed(format!(
            "{}: a second `{key}` line (the first is on line {})",
            what(),
            first.line
        ))
        .on_line(n));
    }
    let value = whole_number(words.next(), n, &what)?;
    if let Some(extra) = words.next() {
        return Err(Error::malformed(format!(
            "{}: one number expected, `{}` follows it",
            what(),
            show(extra)
        ))
        .on_line(n));
    }
    *slot = Some(Counted { value, line: n });
    Ok(())
}

/// A primitive line after its keyword: `tri a b c`, or a strip `str N i0 ... iN-1`.
fn read_prim(
    key: &[u8],
    rest: &[u8],
    n: u32,
    index: usize,
    indices: &mut Vec<i64>,
    budget: &mut Budget,
    ck: &Checker,
) -> Result<Prim> {
    let what = || format!("`{}` primitive {index}", show(key));
    let first = indices.len();
    let shape = match key {
        b"tri" => Shape::Triangle,
        b"str" => Shape::Strip,
        _ => Shape::FlippedStrip,
    };
    if shape == Shape::Triangle {
        let corners = ints::<3>(rest, n, what, "three corner (adj) indices")?;
        budget
            .add(ck, 1, 3 * COST_INDEX + COST_TRIANGLE)
            .map_err(|e| e.on_line(n))?;
        indices.extend(corners);
    } else {
        let mut list = text::words(rest);
        let declared = whole_number(list.next(), n, || format!("{}: index count", what()))?;
        let held = list.clone().count();
        if declared != held as u64 {
            return Err(Error::malformed(format!(
                "{}: says {declared} indices, the line holds {held}",
                what()
            ))
            .on_line(n));
        }
        // A strip of n corners makes n - 2 triangles at the most.
        budget
            .add(ck, declared, COST_INDEX)
            .and_then(|()| budget.add(ck, declared.saturating_sub(2), COST_TRIANGLE))
            .map_err(|e| e.on_line(n))?;
        for word in list {
            indices.push(int(word, n, what)?);
        }
    }
    budget.add(ck, 1, COST_PRIM).map_err(|e| e.on_line(n))?;
    Ok(Prim {
        shape,
        first,
        count: indices.len().saturating_sub(first),
        line: n,
    })
}

/// `mtxv` or `mtxn` after its keyword: whole numbers.
fn read_runs(key: &[u8], rest: &[u8], n: u32, budget: &mut Budget, ck: &Checker) -> Result<Runs> {
    let held = text::words(rest).count();
    budget
        .add(ck, held as u64, COST_RUN)
        .map_err(|e| e.on_line(n))?;
    let mut counts = Vec::with_capacity(held);
    for (b, word) in text::words(rest).enumerate() {
        counts.push(whole_number(Some(word), n, || {
            format!("`{}` count {b}", show(key))
        })?);
    }
    Ok(Runs { counts, line: n })
}

/// A `mtl NAME {` block up to its `}`.
fn read_material<'a>(
    lines: &mut Lines<'a>,
    mut words: Tokens<'a>,
    n: u32,
    raw: &mut Raw<'a>,
    ck: &mut Checker,
) -> Result<Material<'a>> {
    let index = raw.materials.len();
    let Some(name) = words.next_word() else {
        return Err(Error::malformed(format!(
            "material {index}: expected its name after `mtl`, found {}",
            found(words.peek())
        ))
        .on_line(n));
    };
    checked_name(name, || format!("material {index}: the name"), n, ck)?;
    let what = || format!("material {index} `{}`", show(name));
    open_block(&mut words, n, what)?;
    let mut m = Material {
        name,
        line: n,
        packets: None,
        adjuncts: None,
        primitives: None,
        texture: None,
    };
    read_block(lines, n, &what, &mut raw.unknown, |key, mut words, k| {
        let setting = |key: &str| format!("{}: `{key}`", what());
        match key {
            b"packets:" => set_count(&mut m.packets, "packets:", &mut words, k, || {
                setting("packets:")
            })?,
            b"adjuncts:" => set_count(&mut m.adjuncts, "adjuncts:", &mut words, k, || {
                setting("adjuncts:")
            })?,
            b"primitives:" => set_count(&mut m.primitives, "primitives:", &mut words, k, || {
                setting("primitives:")
            })?,
            b"texture:" => {
                let texture = texture_name(&mut words, k, || setting("texture:"))?;
                checked_name(texture, || setting("texture:"), k, ck)?;
                m.texture.get_or_insert(texture);
            }
            // Colours and settings the model does not keep.
            b"textures:" | b"illum:" | b"ambient:" | b"diffuse:" | b"specular:"
            | b"attributes:" | b"float" | b"int" => {}
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(m)
}

/// The lines of a block opened on line `n`, up to its `}`: `line(key, words, k)` takes each
/// line's first word and the words after it, and says whether it knew the word; a line it did
/// not know is noted in `unknown` and skipped. A block opening inside another, or the data
/// ending before the `}`, is an error.
fn read_block<'a>(
    lines: &mut Lines<'a>,
    n: u32,
    what: &dyn Fn() -> String,
    unknown: &mut Tally,
    mut line: impl FnMut(&'a [u8], Tokens<'a>, u32) -> Result<bool>,
) -> Result<()> {
    loop {
        let Some((k, text)) = lines.next() else {
            return Err(Error::truncated(format!("{} is never closed", what())).on_line(n));
        };
        let mut words = Tokens::new(text);
        let Some(key) = words.next() else {
            continue;
        };
        match key {
            b"}" => return close_block(&mut words, k, what),
            b"mtl" | b"packet" | b"{" => {
                return Err(Error::malformed(format!(
                    "{} (line {n}) is not closed before this `{}`",
                    what(),
                    show(key)
                ))
                .on_line(k));
            }
            _ => {
                if !line(key, words, k)? {
                    unknown.note(k, || show(key));
                }
            }
        }
    }
}

/// The `{` that ends a block's first line.
fn open_block(words: &mut Tokens<'_>, n: u32, what: impl Fn() -> String) -> Result<()> {
    let brace = words.next();
    if brace != Some(b"{") {
        return Err(Error::malformed(format!(
            "{}: expected `{{` at the end of its first line, found {}",
            what(),
            found(brace)
        ))
        .on_line(n));
    }
    match words.next() {
        Some(extra) => Err(Error::malformed(format!(
            "{}: `{}` after `{{` (what a block holds starts on the next line)",
            what(),
            show(extra)
        ))
        .on_line(n)),
        None => Ok(()),
    }
}

/// The rest of a block's `}` line, which must be empty.
fn close_block(words: &mut Tokens<'_>, n: u32, what: impl Fn() -> String) -> Result<()> {
    match words.next() {
        Some(extra) => Err(Error::malformed(format!(
            "{}: `{}` after its closing `}}`",
            what(),
            show(extra)
        ))
        .on_line(n)),
        None => Ok(()),
    }
}

/// `texture: INDEX NAME`, the name in double quotes when it holds spaces.
fn texture_name<'a>(words: &mut Tokens<'a>, n: u32, what: impl Fn() -> String) -> Result<&'a [u8]> {
    whole_number(words.next(), n, || {
        format!("{}: the texture's index", what())
    })?;
    let rest = words.rest().trim_ascii();
    let (name, after) = match rest.strip_prefix(b"\"") {
        Some(quoted) => {
            let end = quoted.iter().position(|&b| b == b'"').ok_or_else(|| {
                Error::malformed(format!("{}: the name's closing `\"` is missing", what()))
                    .on_line(n)
            })?;
            let (name, after) = quoted.split_at_checked(end).unwrap_or((quoted, &[]));
            (name, after.get(1..).unwrap_or_default())
        }
        None => {
            let end = rest
                .iter()
                .position(|b| b.is_ascii_whitespace())
                .unwrap_or(rest.len());
            rest.split_at_checked(end).unwrap_or((rest, &[]))
        }
    };
    if name.is_empty() {
        return Err(Error::malformed(format!(
            "{}: expected a texture name after the index",
            what()
        ))
        .on_line(n));
    }
    if let Some(extra) = words_after(after) {
        return Err(Error::malformed(format!(
            "{}: `{}` after the texture name",
            what(),
            show(extra)
        ))
        .on_line(n));
    }
    Ok(name)
}

fn words_after(rest: &[u8]) -> Option<&[u8]> {
    text::words(rest).next()
}

/// A `packet ADJUNCTS PRIMITIVES MATRICES [RESKINS] {` block up to its `}`.
fn read_packet<'a>(
    lines: &mut Lines<'a>,
    mut words: Tokens<'a>,
    n: u32,
    raw: &mut Raw<'a>,
    budget: &mut Budget,
    ck: &mut Checker,
) -> Result<()> {
    let index = raw.packets.len();
    let what = || format!("packet {index}");
    let mut declared = [0u64; 4];
    let mut given = 0usize;
    while let Some(word) = words.next_word() {
        let slot = declared.get_mut(given).ok_or_else(|| {
            Error::malformed(format!(
                "{}: more than four counts (adjuncts, primitives, matrices, reskins)",
                what()
            ))
            .on_line(n)
        })?;
        *slot = whole_number(Some(word), n, what)?;
        given = given.saturating_add(1);
    }
    if given < 3 {
        return Err(Error::malformed(format!(
            "{}: expected its adjunct, primitive and matrix counts, found {given} numbers",
            what()
        ))
        .on_line(n));
    }
    open_block(&mut words, n, what)?;
    let adj_start = raw.adjs.len();
    let prim_start = raw.prims.len();
    let mut mtx: Option<(Vec<i64>, u32)> = None;
    read_block(lines, n, &what, &mut raw.unknown, |key, words, k| {
        let rest = words.rest();
        match key {
            b"adj" => {
                let corner = raw.adjs.len().saturating_sub(adj_start);
                let what = || format!("packet {index} `adj` record {corner}");
                let layout = "position, normal, colour, tex1, tex2 and matrix indices";
                let index = ints::<6>(rest, k, what, layout)?;
                budget.add(ck, 1, COST_ADJ).map_err(|e| e.on_line(k))?;
                raw.adjs.push(Adj { index, line: k });
            }
            b"tri" | b"str" | b"stp" => {
                let p = raw.prims.len().saturating_sub(prim_start);
                let prim = read_prim(key, rest, k, p, &mut raw.indices, budget, ck)
                    .map_err(|e| e.within(what()))?;
                raw.prims.push(prim);
            }
            b"mtx" => {
                if let Some((_, first)) = mtx {
                    return Err(Error::malformed(format!(
                        "{}: a second `mtx` line (the first is on line {first})",
                        what()
                    ))
                    .on_line(k));
                }
                let held = text::words(rest).count();
                budget
                    .add(ck, held as u64, COST_RUN)
                    .map_err(|e| e.on_line(k))?;
                let mut bones = Vec::with_capacity(held);
                for (j, word) in text::words(rest).enumerate() {
                    bones.push(int(word, k, || format!("{}: `mtx` entry {j}", what()))?);
                }
                mtx = Some((bones, k));
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    let adjs = adj_start..raw.adjs.len();
    let prims = prim_start..raw.prims.len();
    let (mtx, mtx_line) = mtx.unwrap_or((Vec::new(), n));
    let [adj_count, prim_count, mtx_count, _] = declared;
    for (says, holds, of) in [
        (adj_count, adjs.len(), "`adj` records"),
        (prim_count, prims.len(), "primitives"),
        (mtx_count, mtx.len(), "`mtx` entries"),
    ] {
        if says != holds as u64 {
            return Err(Error::malformed(format!(
                "{}: declares {says} {of} and holds {holds}",
                what()
            ))
            .on_line(n));
        }
    }
    raw.packets.push(Packet {
        line: n,
        adjs,
        prims,
        mtx,
        mtx_line,
    });
    Ok(())
}
