//! The Sims 1 meshes: SKN (text) and BMF, its little-endian binary twin (FORMATS §4.1, §4.4,
//! §4.5).
//!
//! Both hold one mesh in sections: skin name, texture name (`x` = none), bone names, faces
//! (indices into the real vertices, already front-facing along `(b - a) x (c - a)`), bindings
//! (`bone first_real real_count first_blend blend_count`), one uv per real vertex, blends
//! (`vertex weight` in SKN, `weight vertex` in BMF), then the real vertices followed by one blend
//! vertex per blend (position and normal, each in its binding's bone space). BMF strings are a
//! length byte and that many Windows-1252 bytes; its counts and indices are `u32`, its numbers
//! `f32`, and a binding's `first_blend` is signed (-1 when it has no blends).
//!
//! A blend pulls its target (a real vertex) towards its blend vertex: skinned, the target lands
//! at `(1 - w) A_real p + w A_blend q` with `w = raw / 32768`. Such a vertex becomes two
//! influences, `{(1 - w) p, 1 - w, n}` on its own bone and `{w q, w, 0}` on the blend's bone:
//! the tools light it with its real normal only, so the blend vertex's normal is not kept. The
//! file names its bones and has no skeleton of its own: the mesh loads unbound
//! ([`BoneSlots::ByName`]) and [`Model::bind`] finds the names in a skeleton.
//!
//! Every count is checked against the bytes left before anything is allocated for it, so what a
//! file makes the loader allocate is bounded by the file's size.

use std::ops::Range;

use byteorder::LittleEndian;

use crate::cursor::{Cursor, f32_at, u32_at};
use crate::error::{Error, ErrorCode, Result, ResultExt, amount};
use crate::format::binary::{put_f32, put_u32};
use crate::format::text::{Lines, c_g, exact_text, floats, ints, show};
use crate::format::{Budget, Checker, Format};
use crate::model::{BoneSlots, Influence, Mesh, MeshParts, Model, ModelParts, Name};

type Le = LittleEndian;

/// A blend weight of 1: weights are 1.15 fixed point (FORMATS §4.4).
const WEIGHT_ONE: u32 = 32768;
/// No binding owns this vertex or blend.
const NONE: u32 = u32::MAX;

// BMF record sizes, and fields' byte offsets inside a record (used to place problems).
const FACE_SIZE: u64 = 12;
const BINDING_SIZE: u64 = 20;
const UV_SIZE: u64 = 8;
const BLEND_SIZE: u64 = 8;
const VECTOR_SIZE: u64 = 24;
const BINDING_BONE: u64 = 0;
const BINDING_REAL: u64 = 4;
const BINDING_BLEND: u64 = 12;
const BLEND_WEIGHT: u64 = 0;
const BLEND_VERTEX: u64 = 4;

// The fewest bytes an SKN record line can take, newline included: one character per number and
// a separator between numbers.
const MIN_NAME_LINE: u64 = 1;
const MIN_FACE_LINE: u64 = 6;
const MIN_BINDING_LINE: u64 = 10;
const MIN_UV_LINE: u64 = 4;
const MIN_BLEND_LINE: u64 = 4;
const MIN_VECTOR_LINE: u64 = 12;

// Rough heap bytes per record of the loader's tables and of the model they become, for the
// caller's memory limit.
const COST_BONE: u64 = 48;
const COST_FACE: u64 = 36;
const COST_BINDING: u64 = 48;
const COST_UV: u64 = 60;
const COST_BLEND: u64 = 56;
const COST_VECTOR: u64 = 24;

/// Where a problem lies: a line of an SKN or a byte of a BMF.
#[derive(Clone, Copy, Debug)]
pub(super) enum Loc {
    Line(u32),
    Byte(u64),
}

impl Loc {
    pub(super) fn mark(self, e: Error) -> Error {
        match self {
            Loc::Line(n) => e.on_line(n),
            Loc::Byte(at) => e.at(at),
        }
    }
}

/// Where a table's records lie: SKN record `i` is line `start + i`; BMF record `i` starts at
/// byte `start + i * stride`.
#[derive(Clone, Copy, Debug)]
struct Place {
    text: bool,
    start: u64,
    stride: u64,
}

impl Place {
    fn lines(first: u32) -> Place {
        Place {
            text: true,
            start: first as u64,
            stride: 0,
        }
    }

    fn bytes(start: u64, stride: u64) -> Place {
        Place {
            text: false,
            start,
            stride,
        }
    }

    /// The field at byte `field` of record `i` (in an SKN, the record's line). Records lie in
    /// the data: the sums, saturating only as a guard, stay far from u64's end.
    fn at(self, i: usize, field: u64) -> Loc {
        let i = i as u64;
        if self.text {
            Loc::Line(u32::try_from(self.start.saturating_add(i)).unwrap_or(u32::MAX))
        } else {
            Loc::Byte(
                self.start
                    .saturating_add(i.saturating_mul(self.stride))
                    .saturating_add(field),
            )
        }
    }
}

/// A binding as stored; the values are checked when the mesh is built.
#[derive(Clone, Copy, Debug)]
struct Binding {
    bone: i64,
    first_real: i64,
    real_count: i64,
    first_blend: i64,
    blend_count: i64,
}

/// The sections of either file, read but not yet checked against each other.
struct Raw {
    name: Name,
    texture: Name,
    bones: Vec<Name>,
    faces: Vec<[i64; 3]>,
    faces_at: Place,
    bindings: Vec<Binding>,
    bindings_at: Place,
    /// The binding count: problems with the bindings as a whole are reported there.
    bindings_count_at: Loc,
    uvs: Vec<[f32; 2]>,
    uvs_at: Place,
    /// Target vertex and raw weight.
    blends: Vec<(i64, i64)>,
    blends_at: Place,
    vectors: Vec<[f32; 6]>,
    vectors_at: Place,
}

/// A name as a file stores it. A NUL would cut it short, so it is reported. The name is not
/// shown: the skin and texture names come first, before anything shows the file to be a mesh.
fn checked_name(bytes: &[u8], what: &str, at: Loc, ck: &mut Checker) -> Result<Name> {
    if bytes.contains(&0) {
        ck.problem(at.mark(Error::malformed(format!("{what} holds a NUL byte"))))?;
    }
    Ok(Name::new(bytes))
}

/// A bone name: it must not be empty, or nothing could bind it.
fn bone_name(bytes: &[u8], i: usize, at: Loc, ck: &mut Checker) -> Result<Name> {
    if bytes.is_empty() {
        ck.problem(at.mark(Error::malformed(format!("bone {i}: the name is empty"))))?;
    }
    checked_name(bytes, &format!("bone {i}: the name"), at, ck)
}

// ---------------------------------------------------------------------------------------------
// SKN
// ---------------------------------------------------------------------------------------------

impl<'a> Lines<'a> {
    /// A counted section: its count line (checked against the bytes left and the memory budget),
    /// then one `item` per line, `record(index, line number, line)` reading each.
    fn section<T>(
        &mut self,
        (what, item, min_line): (&str, &str, u64),
        cost: u64,
        budget: &mut Budget,
        ck: &Checker,
        mut record: impl FnMut(usize, u32, &'a [u8]) -> Result<T>,
    ) -> Result<(Vec<T>, u32)> {
        let (count, count_line) = self.count(what, min_line)?;
        budget
            .add(ck, count.into(), cost)
            .map_err(|e| Loc::Line(count_line).mark(e))?;
        let mut records = Vec::with_capacity(count as usize);
        for i in 0..count as usize {
            let (n, line) = self.expect(|| format!("{item} {i}"))?;
            records.push(record(i, n, line)?);
        }
        Ok((records, count_line))
    }
}

/// Reads a Sims SKN (text) mesh.
/// Both encodings hold one vector per real vertex (one per uv), then one per blend.
fn check_vector_count(count: u32, uvs: usize, blends: usize) -> Result<()> {
    if u64::from(count) == (uvs as u64).saturating_add(blends as u64) {
        return Ok(());
    }
    Err(Error::malformed(format!(
        "the vector count is {count}, not the uv count {uvs} plus the blend count {blends} \
         (one vector per real vertex, then one per blend)"
    )))
}

pub(crate) fn read_skn(data: &[u8], ck: &mut Checker) -> Result<ModelParts> {
    let mut lines = Lines::new(data);
    let mut budget = Budget::default();
    let (n, line) = lines.expect(|| "the skin name".into())?;
    let name = checked_name(line.trim_ascii(), "the skin name", Loc::Line(n), ck)?;
    let (n, line) = lines.expect(|| "the texture name".into())?;
    let texture = checked_name(line.trim_ascii(), "the texture name", Loc::Line(n), ck)?;

    // The first line an SKN can be told by: until it holds a count, the file has not shown
    // itself to be an SKN, and what is there is not shown.
    let (count, n) = lines
        .count("bone names", MIN_NAME_LINE)
        .map_err(|e| match e.code() {
            ErrorCode::Malformed => Error::malformed(
                "the bone names count: expected a whole number; this is no Sims SKN text",
            )
            .on_line(lines.line()),
            _ => e,
        })?;
    budget
        .add(ck, count.into(), COST_BONE)
        .map_err(|e| Loc::Line(n).mark(e))?;
    let mut bones = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        let (n, line) = lines.expect(|| format!("the name of bone {i}"))?;
        bones.push(bone_name(line.trim_ascii(), i, Loc::Line(n), ck)?);
    }

    let (faces, n) = lines.section(
        ("faces", "face", MIN_FACE_LINE),
        COST_FACE,
        &mut budget,
        ck,
        |t, n, line| ints::<3>(line, n, || format!("face {t}"), "three vertex indices"),
    )?;
    let faces_at = Place::lines(n.saturating_add(1));

    let layout = "bone, first real vertex, real vertex count, first blend, blend count";
    let (bindings, bindings_count_line) = lines.section(
        ("bindings", "binding", MIN_BINDING_LINE),
        COST_BINDING,
        &mut budget,
        ck,
        |j, n, line| {
            let [bone, first_real, real_count, first_blend, blend_count] =
                ints::<5>(line, n, || format!("binding {j}"), layout)?;
            Ok(Binding {
                bone,
                first_real,
                real_count,
                first_blend,
                blend_count,
            })
        },
    )?;
    let bindings_at = Place::lines(bindings_count_line.saturating_add(1));

    let (uvs, n) = lines.section(
        ("uvs", "uv", MIN_UV_LINE),
        COST_UV,
        &mut budget,
        ck,
        |v, n, line| floats::<2>(line, n, || format!("uv {v}"), "u, v"),
    )?;
    let uvs_at = Place::lines(n.saturating_add(1));

    let (blends, n) = lines.section(
        ("blends", "blend", MIN_BLEND_LINE),
        COST_BLEND,
        &mut budget,
        ck,
        |k, n, line| {
            let [target, weight] =
                ints::<2>(line, n, || format!("blend {k}"), "target vertex, weight")?;
            Ok((target, weight))
        },
    )?;
    let blends_at = Place::lines(n.saturating_add(1));

    let (count, n) = lines.count("vectors", MIN_VECTOR_LINE)?;
    check_vector_count(count, uvs.len(), blends.len()).map_err(|e| e.on_line(n))?;
    budget
        .add(ck, count.into(), COST_VECTOR)
        .map_err(|e| Loc::Line(n).mark(e))?;
    let vectors_at = Place::lines(n.saturating_add(1));
    let mut vectors = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        let what = || format!("vector {i}");
        let (n, line) = lines.expect(what)?;
        vectors.push(floats::<6>(line, n, what, "position x y z, normal x y z")?);
    }

    // Blank lines may follow; anything else is not part of the mesh.
    while let Some((n, line)) = lines.next() {
        if !line.trim_ascii().is_empty() {
            ck.problem(
                Error::malformed(format!(
                    "text after the last vector: `{}` (the mesh ends with its vectors)",
                    show(line)
                ))
                .on_line(n),
            )?;
            break;
        }
    }

    build(
        Raw {
            name,
            texture,
            bones,
            faces,
            faces_at,
            bindings,
            bindings_at,
            bindings_count_at: Loc::Line(bindings_count_line),
            uvs,
            uvs_at,
            blends,
            blends_at,
            vectors,
            vectors_at,
        },
        Format::SimsSkn,
        ck,
    )
}

// ---------------------------------------------------------------------------------------------
// BMF
// ---------------------------------------------------------------------------------------------

/// A Pascal string: a length byte, then that many bytes.
fn pascal(c: &mut Cursor<'_, Le>, what: &str, ck: &mut Checker) -> Result<(Name, u64)> {
    let at = c.pos();
    let len = c.bytes(1).within(|| format!("{what}: length byte"))?;
    let len = len.first().copied().unwrap_or_default() as usize;
    let bytes = c
        .bytes(len)
        .within(|| format!("{what} ({len} bytes from byte {at:#x})"))?;
    Ok((checked_name(bytes, what, Loc::Byte(at), ck)?, at))
}

/// A count followed by that many records of at least `size` bytes, which must fit the data.
fn bmf_count(c: &mut Cursor<'_, Le>, what: &str, size: u64) -> Result<(u32, u64)> {
    let at = c.pos();
    let count = c.u32().within(|| format!("the {what} count"))?;
    c.require(u64::from(count).saturating_mul(size))
        .within(|| format!("{count} {what} of {size} bytes (count at byte {at:#x})"))?;
    Ok((count, at))
}

/// The bytes of `count` records of `size` bytes (checked by [`bmf_count`]) and where they start.
fn bmf_table<'a>(c: &mut Cursor<'a, Le>, count: u32, size: u64) -> Result<(&'a [u8], Place)> {
    let start = c.pos();
    let bytes = c.records(count.into(), size)?;
    Ok((bytes, Place::bytes(start, size)))
}

/// Reads a Sims BMF (binary) mesh.
pub(crate) fn read_bmf(data: &[u8], ck: &mut Checker) -> Result<ModelParts> {
    let mut c = Cursor::<Le>::at(data, 0)?;
    let mut budget = Budget::default();
    let (name, _) = pascal(&mut c, "the skin name", ck)?;
    let (texture, _) = pascal(&mut c, "the texture name", ck)?;

    let (count, at) = bmf_count(&mut c, "bone names", 1)?;
    budget
        .add(ck, count.into(), COST_BONE)
        .map_err(|e| Loc::Byte(at).mark(e))?;
    let mut bones = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        let what = format!("bone {i}: the name");
        let at = c.pos();
        let (bone, _) = pascal(&mut c, &what, ck)?;
        if bone.is_empty() {
            ck.problem(Error::malformed(format!("bone {i}: the name is empty")).at(at))?;
        }
        bones.push(bone);
    }

    let (count, at) = bmf_count(&mut c, "faces", FACE_SIZE)?;
    budget
        .add(ck, count.into(), COST_FACE)
        .map_err(|e| Loc::Byte(at).mark(e))?;
    let (bytes, faces_at) = bmf_table(&mut c, count, FACE_SIZE)?;
    let faces = bytes
        .as_chunks::<12>()
        .0
        .iter()
        .map(|r| [0, 4, 8].map(|at| u32_at::<Le>(r, at) as i64))
        .collect();

    let (count, bindings_count_at) = bmf_count(&mut c, "bindings", BINDING_SIZE)?;
    budget
        .add(ck, count.into(), COST_BINDING)
        .map_err(|e| Loc::Byte(bindings_count_at).mark(e))?;
    let (bytes, bindings_at) = bmf_table(&mut c, count, BINDING_SIZE)?;
    let bindings = bytes
        .as_chunks::<20>()
        .0
        .iter()
        .map(|r| Binding {
            bone: u32_at::<Le>(r, 0) as i64,
            first_real: u32_at::<Le>(r, 4) as i64,
            real_count: u32_at::<Le>(r, 8) as i64,
            // The one signed field: -1 when the binding has no blends.
            first_blend: u32_at::<Le>(r, 12) as i32 as i64,
            blend_count: u32_at::<Le>(r, 16) as i64,
        })
        .collect();

    let (count, at) = bmf_count(&mut c, "uvs", UV_SIZE)?;
    budget
        .add(ck, count.into(), COST_UV)
        .map_err(|e| Loc::Byte(at).mark(e))?;
    let (bytes, uvs_at) = bmf_table(&mut c, count, UV_SIZE)?;
    let uvs: Vec<[f32; 2]> = bytes
        .as_chunks::<8>()
        .0
        .iter()
        .map(|r| [0, 4].map(|at| f32_at::<Le>(r, at)))
        .collect();

    let (count, at) = bmf_count(&mut c, "blends", BLEND_SIZE)?;
    budget
        .add(ck, count.into(), COST_BLEND)
        .map_err(|e| Loc::Byte(at).mark(e))?;
    let (bytes, blends_at) = bmf_table(&mut c, count, BLEND_SIZE)?;
    // Weight first, then the target: the reverse of the text order.
    let blends: Vec<(i64, i64)> = bytes
        .as_chunks::<8>()
        .0
        .iter()
        .map(|r| {
            (
                u32_at::<Le>(r, BLEND_VERTEX as usize) as i64,
                u32_at::<Le>(r, BLEND_WEIGHT as usize) as i64,
            )
        })
        .collect();

    let count_at = c.pos();
    let count = c.u32().within(|| "the vector count")?;
    check_vector_count(count, uvs.len(), blends.len()).map_err(|e| e.at(count_at))?;
    c.require(u64::from(count).saturating_mul(VECTOR_SIZE))
        .within(|| format!("{count} vectors of {VECTOR_SIZE} bytes"))?;
    budget
        .add(ck, count.into(), COST_VECTOR)
        .map_err(|e| Loc::Byte(count_at).mark(e))?;
    let (bytes, vectors_at) = bmf_table(&mut c, count, VECTOR_SIZE)?;
    let vectors = bytes
        .as_chunks::<24>()
        .0
        .iter()
        .map(|r| [0, 4, 8, 12, 16, 20].map(|at| f32_at::<Le>(r, at)))
        .collect();

    let end = c.pos();
    if end < data.len() as u64 {
        ck.problem(
            Error::malformed(format!(
                "{} bytes after the last vector (the mesh ends with its vectors)",
                (data.len() as u64).saturating_sub(end)
            ))
            .at(end),
        )?;
    }

    build(
        Raw {
            name,
            texture,
            bones,
            faces,
            faces_at,
            bindings,
            bindings_at,
            bindings_count_at: Loc::Byte(bindings_count_at),
            uvs,
            uvs_at,
            blends,
            blends_at,
            vectors,
            vectors_at,
        },
        Format::SimsBmf,
        ck,
    )
}

// ---------------------------------------------------------------------------------------------
// The mesh, from either file
// ---------------------------------------------------------------------------------------------

/// The range `first..first + count` of `len` items, when it lies inside.
fn range_of(first: i64, count: i64, len: usize) -> Option<Range<usize>> {
    let first = usize::try_from(first).ok()?;
    let end = first.checked_add(usize::try_from(count).ok()?)?;
    (end <= len).then_some(first..end)
}

/// Marks the items of binding `j`'s range as its own. An empty range's start is not looked at:
/// the files write -1 there.
fn cover(
    owner: &mut [u32],
    j: usize,
    first: i64,
    count: i64,
    (items, item): (&str, &str),
    at: Loc,
    ck: &mut Checker,
) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let len = owner.len();
    let Some(range) = range_of(first, count, len) else {
        return ck.problem(at.mark(Error::malformed(format!(
            "binding {j}: {items} from {first}, {count} of them, do not fit the mesh's {len} {items}"
        ))));
    };
    let start = range.start;
    let mut clash = None;
    for (i, o) in owner
        .get_mut(range.clone())
        .unwrap_or_default()
        .iter_mut()
        .enumerate()
    {
        if *o == NONE {
            *o = j as u32;
        } else if clash.is_none() {
            clash = Some((start.saturating_add(i), *o));
        }
    }
    if let Some((v, other)) = clash {
        ck.problem(at.mark(Error::malformed(format!(
            "binding {j}: {items} {}..{} overlap binding {other} at {item} {v} \
             (each belongs to exactly one binding)",
            range.start, range.end
        ))))?;
    }
    Ok(())
}

/// Items no binding owns.
fn uncovered(owner: &[u32], (items, item): (&str, &str), at: Loc, ck: &mut Checker) -> Result<()> {
    let missing = owner.iter().filter(|&&o| o == NONE).count();
    if let Some(first) = owner.iter().position(|&o| o == NONE) {
        ck.problem(at.mark(Error::malformed(format!(
            "{missing} of the {} {items} belong to no binding (the first is {item} {first})",
            owner.len()
        ))))?;
    }
    Ok(())
}

/// Replaces NaN and infinity by 0 after reporting them.
pub(super) fn finite<const N: usize>(
    values: &mut [f32; N],
    at: impl Fn(u64) -> Loc,
    what: impl FnOnce() -> String,
    ck: &mut Checker,
) -> Result<()> {
    if let Some(j) = values.iter().position(|v| !v.is_finite()) {
        let v = values.get(j).copied().unwrap_or_default();
        ck.problem(
            at((j as u64).saturating_mul(4)).mark(Error::malformed(format!(
                "{}: {v} is not a finite number",
                what()
            ))),
        )?;
        *values = [0.0; N];
    }
    Ok(())
}

/// Checks the sections against each other and builds the one mesh.
fn build(raw: Raw, format: Format, ck: &mut Checker) -> Result<ModelParts> {
    let Raw {
        name,
        texture,
        bones,
        faces,
        faces_at,
        bindings,
        bindings_at,
        bindings_count_at,
        mut uvs,
        uvs_at,
        blends,
        blends_at,
        mut vectors,
        vectors_at,
    } = raw;
    let nb = bones.len();
    let real = uvs.len();
    const REAL: (&str, &str) = ("real vertices", "real vertex");
    const BLENDS: (&str, &str) = ("blends", "blend");

    // Who owns each real vertex and each blend: a binding index.
    let mut real_owner = vec![NONE; real];
    let mut blend_owner = vec![NONE; blends.len()];
    let mut slot_of = Vec::with_capacity(bindings.len());
    for (j, b) in bindings.iter().enumerate() {
        let slot = match u32::try_from(b.bone) {
            Ok(s) if (s as usize) < nb => s,
            _ => {
                ck.problem(
                    bindings_at
                        .at(j, BINDING_BONE)
                        .mark(Error::malformed(format!(
                            "binding {j}: bone {} out of range (the mesh names {})",
                            b.bone,
                            amount(nb as u64, "bone", "bones")
                        ))),
                )?;
                0
            }
        };
        slot_of.push(slot);
        let at = bindings_at.at(j, BINDING_REAL);
        cover(&mut real_owner, j, b.first_real, b.real_count, REAL, at, ck)?;
        let at = bindings_at.at(j, BINDING_BLEND);
        cover(
            &mut blend_owner,
            j,
            b.first_blend,
            b.blend_count,
            BLENDS,
            at,
            ck,
        )?;
    }
    uncovered(&real_owner, REAL, bindings_count_at, ck)?;
    uncovered(&blend_owner, BLENDS, bindings_count_at, ck)?;
    let slot = |owner: Option<&u32>| {
        owner
            .and_then(|&j| slot_of.get(j as usize))
            .copied()
            .unwrap_or(0)
    };

    let mut indices = Vec::with_capacity(faces.len().saturating_mul(3));
    for (t, face) in faces.iter().enumerate() {
        for (i, &corner) in (0u64..).zip(face) {
            match u32::try_from(corner) {
                Ok(v) if (v as usize) < real => indices.push(v),
                _ => {
                    ck.problem(faces_at.at(t, i.saturating_mul(4)).mark(Error::malformed(
                        format!(
                            "face {t} corner {i}: vertex {corner} out of range (the mesh has \
                         {real} real vertices)"
                        ),
                    )))?;
                    indices.push(0);
                }
            }
        }
    }
    drop(faces);

    for (v, uv) in uvs.iter_mut().enumerate() {
        finite(uv, |f| uvs_at.at(v, f), || format!("uv {v}"), ck)?;
    }
    for (i, vector) in vectors.iter_mut().enumerate() {
        let what = || match i.checked_sub(real) {
            None => format!("vector {i} (real vertex {i})"),
            Some(k) => format!("vector {i} (blend {k})"),
        };
        finite(vector, |f| vectors_at.at(i, f), what, ck)?;
    }

    // Which blend pulls each real vertex; when several do, the last (as FreeSO applies them).
    let mut weights = Vec::with_capacity(blends.len());
    let mut blend_of = vec![NONE; real];
    let mut repeats = 0usize;
    let mut first_repeat = None;
    for (k, &(target, raw_weight)) in blends.iter().enumerate() {
        let weight = match u32::try_from(raw_weight) {
            Ok(w) if w <= WEIGHT_ONE => w,
            _ => {
                ck.problem(blends_at.at(k, BLEND_WEIGHT).mark(Error::malformed(format!(
                    "blend {k}: weight {raw_weight} is outside 0..{WEIGHT_ONE} (0 to 1 in \
                     steps of 1/{WEIGHT_ONE})"
                ))))?;
                raw_weight.clamp(0, WEIGHT_ONE as i64) as u32
            }
        };
        weights.push(weight);
        let slot = usize::try_from(target)
            .ok()
            .and_then(|t| blend_of.get_mut(t));
        match slot {
            Some(slot) => {
                if *slot != NONE {
                    repeats = repeats.saturating_add(1);
                    first_repeat.get_or_insert((target, *slot, k));
                }
                *slot = k as u32;
            }
            None => {
                ck.problem(blends_at.at(k, BLEND_VERTEX).mark(Error::malformed(format!(
                    "blend {k}: target vertex {target} out of range (the mesh has {real} real \
                     vertices)"
                ))))?;
            }
        }
    }
    if let Some((target, earlier, k)) = first_repeat {
        ck.tolerate(blends_at.at(k, BLEND_VERTEX).mark(Error::malformed(format!(
            "{repeats} blends target a real vertex that an earlier blend targets too (the first \
             is blend {k}, which targets vertex {target} as blend {earlier} does); the last \
             blend of a vertex is the one applied"
        ))))?;
    }
    drop(blends);

    let blended = blend_of.iter().filter(|&&k| k != NONE).count();
    let mut influence_start = Vec::with_capacity(real.saturating_add(1));
    let mut influences = Vec::with_capacity(real.saturating_add(blended));
    influence_start.push(0u32);
    for (v, (&owner, &k)) in real_owner.iter().zip(&blend_of).enumerate() {
        let [px, py, pz, nx, ny, nz] = vectors.get(v).copied().unwrap_or_default();
        let bone = slot(Some(&owner));
        if k == NONE {
            influences.push(Influence {
                origin: [px, py, pz],
                weight: 1.0,
                normal: [nx, ny, nz],
                bone,
            });
        } else {
            let raw = weights.get(k as usize).copied().unwrap_or_default();
            // Both are exact: a multiple of 2^-15 in 0..=1 fits an f32.
            let w = raw as f32 / WEIGHT_ONE as f32;
            // The weights were checked (or clamped) to 0..=WEIGHT_ONE.
            let keep = WEIGHT_ONE.saturating_sub(raw) as f32 / WEIGHT_ONE as f32;
            let [qx, qy, qz, ..] = vectors
                .get(real.saturating_add(k as usize))
                .copied()
                .unwrap_or_default();
            influences.push(Influence {
                origin: [keep * px, keep * py, keep * pz],
                weight: keep,
                normal: [nx, ny, nz],
                bone,
            });
            influences.push(Influence {
                origin: [w * qx, w * qy, w * qz],
                weight: w,
                normal: [0.0; 3],
                bone: slot(blend_owner.get(k as usize)),
            });
        }
        influence_start.push(u32::try_from(influences.len()).map_err(|_| {
            Error::limit(format!("vertex {v}: more influences than 32 bits count"))
        })?);
    }

    let shader = shader_of(texture);
    let mut parts = ModelParts::new(format);
    parts.meshes.push(MeshParts {
        name,
        shader,
        influence_start,
        influences,
        indices,
        texcoords: Some(uvs),
        group_ids: None,
        references: None,
        ..MeshParts::default()
    });
    parts.up_axis = 1;
    parts.handedness = -1;
    parts.unbound = Some(BoneSlots::ByName(bones));
    Ok(parts)
}

/// The mesh's shader for a stored texture name: "x" is how the files say "no texture".
pub(super) fn shader_of(texture: Name) -> Name {
    if texture.as_bytes().eq_ignore_ascii_case(b"x") {
        Name::empty()
    } else {
        texture
    }
}

/// The texture name to store for a mesh's shader: "x" when it has none.
pub(super) fn texture_of(shader: &Name) -> Name {
    if shader.is_empty() {
        Name::from("x")
    } else {
        shader.clone()
    }
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

/// A stored vertex as the model keeps it: the reader makes `origin` by multiplying the file's
/// position by `factor` (1 for a vertex without a blend, `1 - w` or `w` for the two points of a
/// blended one).
#[derive(Clone, Copy)]
struct Vector {
    origin: [f32; 3],
    factor: f32,
    normal: [f32; 3],
}

/// A model's one mesh laid out as a Sims mesh file's sections.
struct Plan<'a> {
    mesh: &'a Mesh,
    bones: Vec<Name>,
    /// Per bone, in bone order: bone, first real, real count, first blend, blend count.
    bindings: Vec<[i64; 5]>,
    /// Target vertex and raw weight.
    blends: Vec<(u32, u32)>,
    /// The real vertices, then one per blend.
    vectors: Vec<Vector>,
}

/// Influence weights `1 - w` and `w` of a blended vertex may be off by this much (a model not
/// loaded from a Sims file).
const WEIGHT_TOLERANCE: f32 = 1e-4;

fn plan(model: &Model) -> Result<Plan<'_>> {
    let mesh = match model.meshes() {
        [mesh] => mesh,
        meshes => {
            return Err(Error::unsupported(format!(
                "a Sims mesh file holds exactly one mesh; the model has {}",
                meshes.len()
            )));
        }
    };
    // The bone list: the names the mesh waits for, or the skeleton's bones it uses.
    let (bones, remap): (Vec<Name>, Option<Vec<u32>>) = match model.unbound() {
        Some(BoneSlots::ByName(names)) => (names.clone(), None),
        Some(BoneSlots::ByIndex(_)) => {
            return Err(Error::unsupported(
                "the model's meshes number their bones and have no skeleton to name them (an \
                 SKM alone); a Sims mesh names its bones: bind the model to its skeleton first",
            ));
        }
        None => {
            let mut used = vec![false; model.bones().len()];
            for i in mesh.all_influences() {
                if let Some(u) = used.get_mut(i.bone as usize) {
                    *u = true;
                }
            }
            let mut names = Vec::new();
            let mut remap = Vec::with_capacity(used.len());
            for (bone, used) in model.bones().iter().zip(used) {
                remap.push(if used { names.len() as u32 } else { NONE });
                if used {
                    names.push(bone.name.clone());
                }
            }
            (names, Some(remap))
        }
    };
    let slot_of = |bone: u32| match &remap {
        Some(r) => r.get(bone as usize).copied().unwrap_or(NONE),
        None => bone,
    };
    if let Some(i) = bones.iter().position(Name::is_empty) {
        return Err(Error::unsupported(format!(
            "bone {i} has no name, and a Sims mesh binds its bones by name"
        )));
    }

    let vc = mesh.vertex_count();
    let mut vectors = Vec::with_capacity(vc);
    // Per bone slot: the run of real vertices it owns.
    let mut runs: Vec<Option<(usize, usize)>> = vec![None; bones.len()];
    let mut previous = NONE;
    // Blend bone slot, target, raw weight, blend vertex.
    let mut pulls: Vec<(u32, u32, u32, Vector)> = Vec::new();
    for v in 0..vc {
        let (real, bone, pull) = match mesh.influences(v) {
            [a] => {
                if a.weight != 1.0 {
                    return Err(Error::unsupported(format!(
                        "vertex {v}: its one influence has weight {}; a Sims vertex without a \
                         blend follows its bone with weight 1",
                        a.weight
                    )));
                }
                let real = Vector {
                    origin: a.origin,
                    factor: 1.0,
                    normal: a.normal,
                };
                (real, slot_of(a.bone), None)
            }
            [a, b] => {
                let w = b.weight;
                if !(0.0..=1.0).contains(&w) || (a.weight + w - 1.0).abs() > WEIGHT_TOLERANCE {
                    return Err(Error::unsupported(format!(
                        "vertex {v}: influence weights {} and {w} are not 1 - w and w with w \
                         from 0 to 1, as a Sims blend's are",
                        a.weight
                    )));
                }
                if b.normal != [0.0; 3] {
                    return Err(Error::unsupported(format!(
                        "vertex {v}: its second influence has a normal; a Sims blend moves the \
                         position only"
                    )));
                }
                let raw = (w * WEIGHT_ONE as f32).round() as u32;
                // w is from 0 to 1, checked above.
                let keep = WEIGHT_ONE.saturating_sub(raw) as f32 / WEIGHT_ONE as f32;
                let pulled = raw as f32 / WEIGHT_ONE as f32;
                for (i, factor) in [(a, keep), (b, pulled)] {
                    if factor == 0.0 && i.origin != [0.0; 3] {
                        return Err(Error::unsupported(format!(
                            "vertex {v}: an influence with weight {} (stored as {factor}) has a \
                             point away from its bone, which a Sims blend cannot keep",
                            i.weight
                        )));
                    }
                }
                let real = Vector {
                    origin: a.origin,
                    factor: keep,
                    normal: a.normal,
                };
                // The blend vertex's own normal is not in the model; a zero normal keeps
                // tools that blend normals lighting the vertex as the model does.
                let blend = Vector {
                    origin: b.origin,
                    factor: pulled,
                    normal: [0.0; 3],
                };
                (real, slot_of(a.bone), Some((slot_of(b.bone), raw, blend)))
            }
            other => {
                return Err(Error::unsupported(format!(
                    "vertex {v} has {} influences; a Sims vertex has one, or two when a blend \
                     pulls it",
                    other.len()
                )));
            }
        };
        let run = runs.get_mut(bone as usize).ok_or_else(|| {
            Error::invalid_argument(format!("vertex {v}: bone slot {bone} out of range"))
        })?;
        match run {
            Some((first, count)) if bone != previous => {
                let name = bones.get(bone as usize).cloned().unwrap_or_default();
                return Err(Error::unsupported(format!(
                    "the vertices of bone {name:?} are not contiguous (vertices {first}..{} and \
                     then vertex {v}): a Sims mesh binds one run of vertices to each bone",
                    first.saturating_add(*count)
                )));
            }
            Some((_, count)) => *count = count.saturating_add(1),
            None => *run = Some((v, 1)),
        }
        previous = bone;
        vectors.push(real);
        if let Some((blend_bone, raw, blend)) = pull {
            if blend_bone as usize >= bones.len() {
                return Err(Error::invalid_argument(format!(
                    "vertex {v}: bone slot {blend_bone} out of range"
                )));
            }
            pulls.push((blend_bone, v as u32, raw, blend));
        }
    }

    // Blends grouped by their bone in bone order (a binding holds one run of them), each group
    // in target order.
    pulls.sort_by_key(|p| p.0);
    let mut blend_runs: Vec<Option<(usize, usize)>> = vec![None; bones.len()];
    for (k, p) in pulls.iter().enumerate() {
        if let Some(run) = blend_runs.get_mut(p.0 as usize) {
            match run {
                Some((_, count)) => *count = count.saturating_add(1),
                None => *run = Some((k, 1)),
            }
        }
    }
    let span = |run: Option<(usize, usize)>| match run {
        Some((first, count)) => [first as i64, count as i64],
        None => [-1, 0],
    };
    let bindings = (0i64..)
        .zip(runs.iter().zip(&blend_runs))
        .map(|(b, (&real, &blend))| {
            let [first_real, real_count] = span(real);
            let [first_blend, blend_count] = span(blend);
            [b, first_real, real_count, first_blend, blend_count]
        })
        .collect();
    let blends = pulls.iter().map(|p| (p.1, p.2)).collect();
    vectors.extend(pulls.iter().map(|p| p.3));
    Ok(Plan {
        mesh,
        bones,
        bindings,
        blends,
        vectors,
    })
}

/// The values near `origin / factor`, nearest first, whose product with `factor` (as the
/// reader computes it) is `origin` again. `origin / factor` itself is not always one.
fn unscaled(origin: f32, factor: f32) -> impl Iterator<Item = f32> {
    let x = if factor == 0.0 { 0.0 } else { origin / factor };
    let (u1, d1) = (x.next_up(), x.next_down());
    let (u2, d2) = (u1.next_up(), d1.next_down());
    let (u3, d3) = (u2.next_up(), d2.next_down());
    [x, u1, d1, u2, d2, u3, d3]
        .into_iter()
        .filter(move |&c| c.is_finite() && factor * c == origin)
}

/// The stored position of a vector: the value the reader turns back into `origin`.
fn position(v: &Vector, i: usize) -> Result<[f32; 3]> {
    let mut out = [0.0f32; 3];
    for (o, &origin) in out.iter_mut().zip(&v.origin) {
        *o = unscaled(origin, v.factor)
            .next()
            .ok_or_else(|| position_error(i, origin, v.factor))?;
    }
    Ok(out)
}

fn position_error(i: usize, origin: f32, factor: f32) -> Error {
    Error::limit(format!(
        "vector {i}: no f32 position times {factor} gives the stored {origin}"
    ))
}

/// The text of one coordinate of a stored position: among the values that give `origin` back,
/// one that `%g` writes exactly, so that a file read and written again keeps its numbers.
fn position_text(origin: f32, factor: f32, i: usize) -> Result<String> {
    if let Some(g) = unscaled(origin, factor).find_map(|x| {
        let g = c_g(x);
        (g.parse::<f32>().ok().map(f32::to_bits) == Some(x.to_bits())).then_some(g)
    }) {
        return Ok(g);
    }
    unscaled(origin, factor)
        .next()
        .and_then(exact_text)
        .ok_or_else(|| position_error(i, origin, factor))
}

fn number(x: f32, what: impl FnOnce() -> String) -> Result<String> {
    exact_text(x).ok_or_else(|| Error::invalid_argument(format!("{}: {x} is not finite", what())))
}

pub(super) fn to_u32(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::limit(format!("{n} {what} do not fit 32 bits")))
}

/// A name an SKN line can hold: the reader trims lines, so the name must not start or end with
/// blanks, nor hold a line break.
fn text_line(out: &mut Vec<u8>, name: &Name, what: impl FnOnce() -> String) -> Result<()> {
    let b = name.as_bytes();
    if b.iter().any(|&c| c == b'\n' || c == b'\r') || b.trim_ascii().len() != b.len() {
        return Err(Error::unsupported(format!(
            "{} `{name}` starts or ends with blanks or holds a line break, which an SKN line \
             cannot keep",
            what()
        )));
    }
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
    Ok(())
}

fn put_line(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Writes a model of one mesh as a Sims SKN: CRLF lines, numbers as the retail files write them.
///
/// The model must be a mesh waiting for its skeleton by name (as an SKN or BMF loads), or a
/// bound model, whose skeleton's bones that the mesh uses become the bone list. Each vertex must
/// have one influence of weight 1, or two of weights `1 - w` and `w` where the second has no
/// normal (a blend), and each bone's vertices must be contiguous: a binding holds one run. Blends
/// are written grouped by bone, in target order; their vertices' normals are written as zero,
/// since the model does not keep them.
pub fn write_skn(model: &Model) -> Result<Vec<u8>> {
    let plan = plan(model)?;
    let mesh = plan.mesh;
    let mut out = Vec::with_capacity(plan.vectors.len().saturating_mul(64).saturating_add(64));
    text_line(&mut out, mesh.name(), || "the skin name".into())?;
    if mesh.shader().is_empty() {
        put_line(&mut out, "x");
    } else {
        text_line(&mut out, mesh.shader(), || "the texture name".into())?;
    }
    put_line(&mut out, &plan.bones.len().to_string());
    for (i, bone) in plan.bones.iter().enumerate() {
        text_line(&mut out, bone, || format!("bone {i}'s name"))?;
    }
    put_line(&mut out, &mesh.triangle_count().to_string());
    for [a, b, c] in mesh.indices().as_chunks::<3>().0 {
        put_line(&mut out, &format!("{a} {b} {c}"));
    }
    put_line(&mut out, &plan.bindings.len().to_string());
    for [b, fr, rc, fb, bc] in &plan.bindings {
        put_line(&mut out, &format!("{b} {fr} {rc} {fb} {bc}"));
    }
    let vc = mesh.vertex_count();
    put_line(&mut out, &vc.to_string());
    for v in 0..vc {
        let [u, w] = mesh
            .texcoords()
            .and_then(|t| t.get(v))
            .copied()
            .unwrap_or_default();
        let what = || format!("uv {v}");
        put_line(
            &mut out,
            &format!("{} {}", number(u, what)?, number(w, what)?),
        );
    }
    put_line(&mut out, &plan.blends.len().to_string());
    for (target, raw) in &plan.blends {
        put_line(&mut out, &format!("{target} {raw}"));
    }
    put_line(&mut out, &plan.vectors.len().to_string());
    for (i, vector) in plan.vectors.iter().enumerate() {
        let mut line = String::with_capacity(64);
        for &origin in &vector.origin {
            line.push_str(&position_text(origin, vector.factor, i)?);
            line.push(' ');
        }
        for &n in &vector.normal {
            line.push_str(&number(n, || format!("vector {i}"))?);
            line.push(' ');
        }
        put_line(&mut out, line.trim_end());
    }
    Ok(out)
}

fn put_pascal(out: &mut Vec<u8>, name: &Name, what: impl FnOnce() -> String) -> Result<()> {
    let b = name.as_bytes();
    let len = u8::try_from(b.len()).map_err(|_| {
        Error::limit(format!(
            "{} is {} bytes long; a BMF string holds at most 255",
            what(),
            b.len()
        ))
    })?;
    out.push(len);
    out.extend_from_slice(b);
    Ok(())
}

/// Writes a model of one mesh as a Sims BMF; the model must be as [`write_skn`] describes.
pub fn write_bmf(model: &Model) -> Result<Vec<u8>> {
    let plan = plan(model)?;
    let mesh = plan.mesh;
    let vc = mesh.vertex_count();
    // A capacity only: sizes of what the model holds, saturating as a guard.
    let mut out = Vec::with_capacity(
        [
            (1, 64),
            (plan.bones.len(), 16),
            (mesh.indices().len(), 4),
            (vc, 8),
            (plan.vectors.len(), 24),
        ]
        .iter()
        .fold(0usize, |sum, &(n, size)| {
            sum.saturating_add(n.saturating_mul(size))
        }),
    );
    put_pascal(&mut out, mesh.name(), || "the skin name".into())?;
    put_pascal(&mut out, &texture_of(mesh.shader()), || {
        "the texture name".into()
    })?;
    put_u32::<Le>(&mut out, to_u32(plan.bones.len(), "bones")?);
    for (i, bone) in plan.bones.iter().enumerate() {
        put_pascal(&mut out, bone, || format!("bone {i}'s name"))?;
    }
    put_u32::<Le>(&mut out, to_u32(mesh.triangle_count(), "faces")?);
    for &i in mesh.indices() {
        put_u32::<Le>(&mut out, i);
    }
    put_u32::<Le>(&mut out, to_u32(plan.bindings.len(), "bindings")?);
    for binding in &plan.bindings {
        // Every field is a 32-bit word; -1 (an empty range's start) is written as all ones.
        for &field in binding {
            put_u32::<Le>(&mut out, field as i32 as u32);
        }
    }
    put_u32::<Le>(&mut out, to_u32(vc, "uvs")?);
    for v in 0..vc {
        let uv: [f32; 2] = mesh
            .texcoords()
            .and_then(|t| t.get(v))
            .copied()
            .unwrap_or_default();
        uv.iter().for_each(|&x| put_f32::<Le>(&mut out, x));
    }
    put_u32::<Le>(&mut out, to_u32(plan.blends.len(), "blends")?);
    for &(target, raw) in &plan.blends {
        put_u32::<Le>(&mut out, raw);
        put_u32::<Le>(&mut out, target);
    }
    put_u32::<Le>(&mut out, to_u32(plan.vectors.len(), "vectors")?);
    for (i, vector) in plan.vectors.iter().enumerate() {
        for x in position(vector, i)?.iter().chain(&vector.normal) {
            put_f32::<Le>(&mut out, *x);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn unscaling_finds_a_value_the_reader_scales_back() {
        for (origin, factor) in [(1.0f32, 49.0f32 / 64.0), (0.3, 0.1), (-2.5e-7, 0.75)] {
            let x = unscaled(origin, factor).next().unwrap();
            assert_eq!(factor * x, origin);
        }
        assert_eq!(unscaled(0.0, 0.0).next(), Some(0.0));
    }
}
