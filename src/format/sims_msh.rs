//! The 1998 prototype of The Sims: `.msh` meshes, little-endian binary (docs/formats.md,
//! "Sims MSH").
//!
//! After the magic `b2 b0 b0 b0` come exactly five tables, each a `u32` count, a `u32` record
//! size and the records: positions (12 bytes: `f32` x y z), texture coordinates (8: `f32` u v),
//! faces (16: three `u32` vertex indices and a `u32` that is 0 in every known file), vertices
//! (24: `u32` position index, `u32` texture coordinate index, `f32` normal x y z and a `u32` the
//! game never reads, left uninitialised by the exporter) and the texture name (one record whose
//! size is the name's length, no NUL). Nothing follows the fifth table.
//!
//! Every vertex follows one bone with weight 1, in that bone's space as an SKN's real vertices
//! are; the file does not name the bone. The file's name does: `xskin-SUIT-BONE-PART.msh`, where
//! BONE is the first `-`-separated part after `xskin-` with a letter and no lower-case letter
//! (suit names are lower case, bone names upper case; see [`bone_of_file_name`]). The mesh loads
//! waiting for a skeleton ([`BoneSlots::ByName`] with that one name) as SKN and BMF meshes do.
//!
//! What the model does not hold itself (the shared tables' indices, the unused words) is kept
//! in [`MshLayout`], so that a loaded file saves again byte for byte.
//!
//! Every count is checked against the bytes left and the memory limit before anything is
//! allocated for it.

use byteorder::LittleEndian;

use crate::cursor::{Cursor, f32_at, field_at, record_at, u32_at};
use crate::error::{Error, Result, ResultExt, amount};
use crate::format::binary::{put_f32, put_u32};
use crate::format::sims_mesh::{Loc, finite, shader_of, texture_of, to_u32};
use crate::format::{Budget, Checker, Format};
use crate::model::{BoneSlots, Influence, MeshParts, Model, ModelParts, MshLayout, Name};

type Le = LittleEndian;

/// The first four bytes of every `.msh` file.
pub const MAGIC: &[u8; 4] = b"\xb2\xb0\xb0\xb0";

/// The longest texture name read or written (the longest known is 17 bytes; BMF's strings hold
/// 255).
pub const MAX_TEXTURE_NAME: usize = 255;

const POSITION_SIZE: u32 = 12;
const TEXCOORD_SIZE: u32 = 8;
const FACE_SIZE: u32 = 16;
const VERTEX_SIZE: u32 = 24;
/// Byte offsets of a vertex record's fields.
const VERTEX_TEXCOORD: u64 = 4;
const VERTEX_NORMAL: u64 = 8;

// Rough heap bytes per record of the loader's tables and of the model they become, for the
// caller's memory limit. A position and a texture coordinate: itself, and whether a vertex
// uses it.
const COST_POSITION: u64 = 12 + 1;
const COST_TEXCOORD: u64 = 8 + 1;
const COST_FACE: u64 = 20;
const COST_VERTEX: u64 = 80;

/// The bone a `.msh` file's name gives: in `xskin-SUIT-BONE-PART.msh` (directories, the
/// extension and anything before `xskin-` ignored, ASCII case ignored in `xskin-`), BONE is the
/// first `-`-separated part after SUIT that has a letter and no lower-case letter, with at least
/// one part before it and one after it; suit names may hold `-` (`suit-cue-left-high`), so may
/// part names, which come after the bone. When no part is upper case (a name lower-cased by a
/// copy), a name of exactly three parts after `xskin-` gives its middle one. `None` otherwise.
///
/// In the 272 files of the 1998 prototype this gives the bone the suit files list for each of
/// the 262 meshes they list, and a bone of the skeleton for the other 10.
pub fn bone_of_file_name(name: &str) -> Option<&str> {
    let stem = stem(name);
    let start = stem
        .as_bytes()
        .windows(6)
        .position(|w| w.eq_ignore_ascii_case(b"xskin-"))?;
    let rest = stem.get(start.checked_add(6)?..)?;
    let parts: Vec<&str> = rest.split('-').collect();
    let upper = |p: &&&str| {
        p.bytes().any(|b| b.is_ascii_alphabetic()) && !p.bytes().any(|b| b.is_ascii_lowercase())
    };
    let inner = parts.get(1..parts.len().saturating_sub(1)).unwrap_or(&[]);
    if let Some(bone) = inner.iter().find(upper) {
        return Some(bone);
    }
    match parts.as_slice() {
        [_, bone, _] if !bone.is_empty() => Some(bone),
        _ => None,
    }
}

/// A file name without its directories and its `.msh` extension (ASCII case ignored).
fn stem(name: &str) -> &str {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    match base.len().checked_sub(4) {
        Some(n)
            if base
                .get(n..)
                .is_some_and(|e| e.eq_ignore_ascii_case(".msh")) =>
        {
            base.get(..n).unwrap_or(base)
        }
        _ => base,
    }
}

/// A table's records, checked to be `size` bytes each and to fit the data and the memory limit.
struct Table<'a> {
    bytes: &'a [u8],
    count: u32,
    /// The byte of the first record.
    start: u64,
}

impl Table<'_> {
    /// The byte of field `field` of record `i`.
    fn at(&self, i: usize, field: u64, size: u32) -> u64 {
        field_at(record_at(self.start, i, size.into()), field)
    }
}

fn table<'a>(
    c: &mut Cursor<'a, Le>,
    (what, item, layout): (&str, &str, &str),
    size: u32,
    cost: u64,
    budget: &mut Budget,
    ck: &Checker,
) -> Result<Table<'a>> {
    let at = c.pos();
    let count = c.u32().within(|| format!("the {what} count"))?;
    let size_at = c.pos();
    let stored = c.u32().within(|| format!("the {what} record size"))?;
    if stored != size {
        return Err(Error::malformed(format!(
            "the {what} table's record size is {stored}, not {size} (a {item} is {layout})"
        ))
        .at(size_at));
    }
    c.require(u64::from(count).saturating_mul(size.into()))
        .within(|| format!("{count} {what} of {size} bytes (count at byte {at:#x})"))?;
    budget.add(ck, count.into(), cost).map_err(|e| e.at(at))?;
    let start = c.pos();
    let bytes = c.records(count.into(), size.into())?;
    Ok(Table {
        bytes,
        count,
        start,
    })
}

/// The texture name table: one record, the name's bytes.
fn texture_name(c: &mut Cursor<'_, Le>, ck: &mut Checker) -> Result<Name> {
    let at = c.pos();
    let count = c.u32().within(|| "the texture name count")?;
    if count != 1 {
        return Err(Error::malformed(format!(
            "the texture name table holds {count} records, not 1 (the texture's name)"
        ))
        .at(at));
    }
    let size_at = c.pos();
    let len = c.u32().within(|| "the texture name's length")?;
    if len == 0 || len as usize > MAX_TEXTURE_NAME {
        return Err(Error::malformed(format!(
            "the texture name is {len} bytes long, not 1 to {MAX_TEXTURE_NAME}"
        ))
        .at(size_at));
    }
    let start = c.pos();
    let bytes = c
        .bytes(len as usize)
        .within(|| format!("the texture name ({len} bytes from byte {start:#x})"))?;
    if let Some(i) = bytes.iter().position(|b| !(0x20..0x7f).contains(b)) {
        let b = bytes.get(i).copied().unwrap_or_default();
        ck.problem(
            Error::malformed(format!(
                "the texture name holds byte {b:#04x}, which is not printable ASCII"
            ))
            .at(field_at(start, i as u64)),
        )?;
    }
    Ok(Name::new(bytes))
}

/// An index field of record `i` that must be below `len`; out of range it is reported and 0
/// stands in for it.
fn index(
    value: u32,
    len: u32,
    at: u64,
    what: impl FnOnce() -> String,
    ck: &mut Checker,
) -> Result<u32> {
    if value < len {
        return Ok(value);
    }
    ck.problem(
        Error::malformed(format!(
            "{}: {value} out of range (the file has {len})",
            what()
        ))
        .at(at),
    )?;
    Ok(0)
}

/// Reads a Sims `.msh` mesh. `name` is the file's name, which names the bone
/// ([`bone_of_file_name`]); without a bone in it the mesh's one bone slot has no name, which a
/// warning says, and binding it fails.
pub(crate) fn read_msh(data: &[u8], ck: &mut Checker, name: Option<&str>) -> Result<ModelParts> {
    let mut c = Cursor::<Le>::at(data, 0)?;
    let magic = c.bytes(4).within(|| "the magic number")?;
    if magic != MAGIC {
        return Err(Error::unknown_format(format!(
            "the magic number is {magic:02x?}, not a Sims .msh's b2 b0 b0 b0"
        ))
        .at(0));
    }
    let mut budget = Budget::default();
    let positions = table(
        &mut c,
        ("positions", "position", "f32 x, y, z"),
        POSITION_SIZE,
        COST_POSITION,
        &mut budget,
        ck,
    )?;
    let texcoords = table(
        &mut c,
        ("texture coordinates", "texture coordinate", "f32 u, v"),
        TEXCOORD_SIZE,
        COST_TEXCOORD,
        &mut budget,
        ck,
    )?;
    let faces = table(
        &mut c,
        ("faces", "face", "three u32 vertex indices and a u32"),
        FACE_SIZE,
        COST_FACE,
        &mut budget,
        ck,
    )?;
    let vertices = table(
        &mut c,
        (
            "vertices",
            "vertex",
            "u32 position, u32 texture coordinate, f32 normal x, y, z and a u32",
        ),
        VERTEX_SIZE,
        COST_VERTEX,
        &mut budget,
        ck,
    )?;
    let texture = texture_name(&mut c, ck)?;
    let end = c.pos();
    if end < data.len() as u64 {
        ck.problem(
            Error::malformed(format!(
                "{} bytes after the texture name (the mesh ends with it)",
                (data.len() as u64).saturating_sub(end)
            ))
            .at(end),
        )?;
    }

    let mut points: Vec<[f32; 3]> = Vec::with_capacity(positions.count as usize);
    for (p, r) in positions.bytes.as_chunks::<12>().0.iter().enumerate() {
        let mut xyz = [0, 4, 8].map(|at| f32_at::<Le>(r, at));
        let at = |f| Loc::Byte(positions.at(p, f, POSITION_SIZE));
        finite(&mut xyz, at, || format!("position {p}"), ck)?;
        points.push(xyz);
    }
    let mut uvs: Vec<[f32; 2]> = Vec::with_capacity(texcoords.count as usize);
    for (t, r) in texcoords.bytes.as_chunks::<8>().0.iter().enumerate() {
        let mut uv = [0, 4].map(|at| f32_at::<Le>(r, at));
        let at = |f| Loc::Byte(texcoords.at(t, f, TEXCOORD_SIZE));
        finite(&mut uv, at, || format!("texture coordinate {t}"), ck)?;
        uvs.push(uv);
    }

    let vc = vertices.count as usize;
    let mut influences = Vec::with_capacity(vc);
    let mut influence_start = Vec::with_capacity(vc.saturating_add(1));
    let mut texcoords_out = Vec::with_capacity(vc);
    let mut layout = Vec::with_capacity(vc);
    let mut position_used = vec![false; points.len()];
    let mut texcoord_used = vec![false; uvs.len()];
    let mut bad_normals = Vec::new();
    // The first normal that is not a number: its vertex, the value and its byte.
    let mut first_bad = None;
    influence_start.push(0u32);
    for (v, r) in vertices.bytes.as_chunks::<24>().0.iter().enumerate() {
        let at = |f| vertices.at(v, f, VERTEX_SIZE);
        let p = index(
            u32_at::<Le>(r, 0),
            positions.count,
            at(0),
            || format!("vertex {v}: position"),
            ck,
        )?;
        let t = index(
            u32_at::<Le>(r, VERTEX_TEXCOORD as usize),
            texcoords.count,
            at(VERTEX_TEXCOORD),
            || format!("vertex {v}: texture coordinate"),
            ck,
        )?;
        let mut normal = [8, 12, 16].map(|f| f32_at::<Le>(r, f));
        // The exporter wrote NaN normals for some corners (7 vertices of one known file): the
        // mesh takes them as zero, and keeps the bits to write them back.
        if let Some(k) = normal.iter().position(|x| !x.is_finite()) {
            let value = normal.get(k).copied().unwrap_or_default();
            let byte = at(VERTEX_NORMAL.saturating_add((k as u64).saturating_mul(4)));
            first_bad.get_or_insert((v, value, byte));
            bad_normals.push((v as u32, [8, 12, 16].map(|f| u32_at::<Le>(r, f))));
            normal = [0.0; 3];
        }
        if let Some(u) = position_used.get_mut(p as usize) {
            *u = true;
        }
        if let Some(u) = texcoord_used.get_mut(t as usize) {
            *u = true;
        }
        influences.push(Influence {
            origin: points.get(p as usize).copied().unwrap_or_default(),
            weight: 1.0,
            normal,
            bone: 0,
        });
        // One influence a vertex: the vertex count is a u32, and so is its count.
        influence_start.push(u32::try_from(influences.len()).unwrap_or(u32::MAX));
        texcoords_out.push(uvs.get(t as usize).copied().unwrap_or_default());
        layout.push([p, t, u32_at::<Le>(r, 20)]);
    }
    drop(points);
    drop(uvs);
    if let Some((v, value, byte)) = first_bad {
        ck.tolerate(
            Error::malformed(format!(
                "{} a normal that is not a finite number (the first is vertex {v}: {value}); \
                 they are read as zero normals",
                match bad_normals.len() {
                    1 => "1 vertex has".to_string(),
                    n => format!("{n} vertices have"),
                }
            ))
            .at(byte),
        )?;
    }

    let mut indices = Vec::with_capacity((faces.count as usize).saturating_mul(3));
    let mut face_words = Vec::with_capacity(faces.count as usize);
    for (f, r) in faces.bytes.as_chunks::<16>().0.iter().enumerate() {
        for k in 0..3u64 {
            let field = k.saturating_mul(4);
            indices.push(index(
                u32_at::<Le>(r, field as usize),
                vertices.count,
                faces.at(f, field, FACE_SIZE),
                || format!("face {f} corner {k}: vertex"),
                ck,
            )?);
        }
        face_words.push(u32_at::<Le>(r, 12));
    }

    for (used, (what, one), table, size) in [
        (
            &position_used,
            ("positions", "position"),
            &positions,
            POSITION_SIZE,
        ),
        (
            &texcoord_used,
            ("texture coordinates", "texture coordinate"),
            &texcoords,
            TEXCOORD_SIZE,
        ),
    ] {
        if let Some(first) = used.iter().position(|&u| !u) {
            let n = used.iter().filter(|&&u| !u).count();
            ck.tolerate(
                Error::malformed(format!(
                    "{} of the {} {what} no vertex uses (the first is {one} {first}); the mesh \
                     does not keep them, and saving it as .msh writes zeros there",
                    amount(n as u64, one, what),
                    table.count
                ))
                .at(table.at(first, 0, size)),
            )?;
        }
    }

    let bone = name.and_then(bone_of_file_name);
    if bone.is_none() {
        let why = match name {
            Some(n) => format!("the file name `{n}` is not xskin-SUIT-BONE-PART.msh"),
            None => "the file has no name".into(),
        };
        ck.warnings.push(format!(
            "{why}, and a .msh names its bone only there: the mesh's bone has no name, and \
             binding it to a skeleton fails"
        ));
    }
    let mesh_name = name.map(stem).map(Name::from).unwrap_or_default();

    let mut parts = ModelParts::new(Format::SimsMsh);
    parts.meshes.push(MeshParts {
        name: mesh_name,
        shader: shader_of(texture),
        influence_start,
        influences,
        indices,
        texcoords: Some(texcoords_out),
        msh: Some(MshLayout {
            positions: positions.count,
            texcoords: texcoords.count,
            vertices: layout,
            faces: face_words,
            bad_normals,
        }),
        ..MeshParts::default()
    });
    parts.up_axis = 1;
    parts.handedness = -1;
    parts.unbound = Some(BoneSlots::ByName(vec![
        bone.map(Name::from).unwrap_or_default(),
    ]));
    Ok(parts)
}

/// The tables of a `.msh` file, ready to write.
struct Tables {
    positions: Vec<[f32; 3]>,
    texcoords: Vec<[f32; 2]>,
    vertices: Vec<[u32; 3]>,
    faces: Vec<u32>,
    /// Per vertex, the bits of its normal.
    normals: Vec<[u32; 3]>,
}

/// The tables the mesh's `.msh` layout describes, when it fits the mesh: each position and
/// texture coordinate given by the vertices that use it (the same by every one of them), an
/// entry no vertex uses written as zeros; a normal the file did not hold as a number, and the
/// mesh as zero, written as the file had it.
fn tables_from_layout(
    layout: &MshLayout,
    origins: &[[f32; 3]],
    uvs: &[[f32; 2]],
    normals: &[[u32; 3]],
    triangles: usize,
) -> Option<Tables> {
    if layout.vertices.len() != origins.len() || layout.faces.len() != triangles {
        return None;
    }
    fn fill<const N: usize>(
        table: &mut [Option<[f32; N]>],
        at: u32,
        value: [f32; N],
    ) -> Option<()> {
        let slot = table.get_mut(at as usize)?;
        match slot {
            Some(old) if old.map(f32::to_bits) != value.map(f32::to_bits) => None,
            _ => {
                *slot = Some(value);
                Some(())
            }
        }
    }
    // A layout made in code (not read from a file) may declare tables far larger than the
    // mesh: their room is asked for, not assumed.
    fn table<const N: usize>(len: u32) -> Option<Vec<Option<[f32; N]>>> {
        let mut v = Vec::new();
        v.try_reserve_exact(len as usize).ok()?;
        v.resize(len as usize, None);
        Some(v)
    }
    let mut positions = table::<3>(layout.positions)?;
    let mut texcoords = table::<2>(layout.texcoords)?;
    for ((&[p, t, _], &origin), &uv) in layout.vertices.iter().zip(origins).zip(uvs) {
        fill(&mut positions, p, origin)?;
        fill(&mut texcoords, t, uv)?;
    }
    let mut normals = normals.to_vec();
    for &(v, bits) in &layout.bad_normals {
        if let Some(n) = normals.get_mut(v as usize)
            && *n == [0; 3]
        {
            *n = bits;
        }
    }
    Some(Tables {
        positions: positions
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect(),
        texcoords: texcoords
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect(),
        vertices: layout.vertices.clone(),
        faces: layout.faces.clone(),
        normals,
    })
}

fn put_table_header(out: &mut Vec<u8>, count: usize, size: u32, what: &str) -> Result<()> {
    put_u32::<Le>(out, to_u32(count, what)?);
    put_u32::<Le>(out, size);
    Ok(())
}

/// Writes a model as a Sims `.msh`.
///
/// The model must hold one mesh whose every vertex follows one bone with weight 1, the same bone
/// for all (unbound and waiting for its one bone by name, or bound to a skeleton); a `.msh`
/// cannot blend bones or hold several meshes. The bone is not written: the file's name carries
/// it (`xskin-SUIT-BONE-PART.msh`). The texture name is the mesh's shader (`x` when it has none),
/// printable ASCII of at most [`MAX_TEXTURE_NAME`] bytes.
///
/// A mesh loaded from a `.msh` keeps the file's layout ([`MshLayout`]) and is written back byte
/// for byte. Any other mesh gets one position and one texture coordinate per vertex, and zeros
/// in the words the game does not read.
pub fn write_msh(model: &Model) -> Result<Vec<u8>> {
    let mesh = match model.meshes() {
        [mesh] => mesh,
        meshes => {
            return Err(Error::unsupported(format!(
                "a Sims .msh holds exactly one mesh; the model has {}",
                meshes.len()
            )));
        }
    };
    if let Some(BoneSlots::ByIndex(_)) = model.unbound() {
        return Err(Error::unsupported(
            "the model's meshes number their bones and have no skeleton to name them (an SKM \
             alone); a .msh's bone is named by its file name: bind the model first",
        ));
    }
    let vc = mesh.vertex_count();
    let mut origins = Vec::with_capacity(vc);
    let mut normals = Vec::with_capacity(vc);
    let mut bone = None;
    for v in 0..vc {
        let i = match mesh.influences(v) {
            [i] if i.weight == 1.0 => i,
            [i] => {
                return Err(Error::unsupported(format!(
                    "vertex {v}: its one influence has weight {}; a .msh vertex follows its bone \
                     with weight 1",
                    i.weight
                )));
            }
            other => {
                return Err(Error::unsupported(format!(
                    "vertex {v} has {} influences; a .msh vertex follows exactly one bone",
                    other.len()
                )));
            }
        };
        match bone {
            Some(b) if b != i.bone => {
                return Err(Error::unsupported(format!(
                    "vertex {v} follows bone {} where vertex 0 follows bone {b}; all the \
                     vertices of a .msh follow one bone",
                    i.bone
                )));
            }
            _ => bone = Some(i.bone),
        }
        origins.push(i.origin);
        normals.push(i.normal.map(f32::to_bits));
    }
    let texture = texture_of(mesh.shader());
    let name = texture.as_bytes();
    if name.len() > MAX_TEXTURE_NAME || name.iter().any(|b| !(0x20..0x7f).contains(b)) {
        return Err(Error::unsupported(format!(
            "the texture name {texture:?} is not printable ASCII of 1 to {MAX_TEXTURE_NAME} \
             bytes, which a .msh holds"
        )));
    }
    let uvs: Vec<[f32; 2]> = match mesh.texcoords() {
        Some(t) => t.to_vec(),
        None => vec![[0.0; 2]; vc],
    };
    let triangles = mesh.triangle_count();
    let tables = mesh
        .msh()
        .and_then(|l| tables_from_layout(l, &origins, &uvs, &normals, triangles))
        .unwrap_or_else(|| Tables {
            vertices: (0..vc as u32).map(|v| [v, v, 0]).collect(),
            faces: vec![0; triangles],
            positions: origins,
            texcoords: uvs,
            normals,
        });
    let size = [
        (tables.positions.len(), 12),
        (tables.texcoords.len(), 8),
        (tables.faces.len(), 16),
        (tables.vertices.len(), 24),
        (1, name.len().saturating_add(64)),
    ]
    .iter()
    .fold(4usize, |sum, &(n, size)| {
        sum.saturating_add(n.saturating_mul(size))
    });
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(MAGIC);
    put_table_header(&mut out, tables.positions.len(), POSITION_SIZE, "positions")?;
    for x in tables.positions.iter().flatten() {
        put_f32::<Le>(&mut out, *x);
    }
    put_table_header(
        &mut out,
        tables.texcoords.len(),
        TEXCOORD_SIZE,
        "texture coordinates",
    )?;
    for x in tables.texcoords.iter().flatten() {
        put_f32::<Le>(&mut out, *x);
    }
    put_table_header(&mut out, tables.faces.len(), FACE_SIZE, "faces")?;
    for (corners, &word) in mesh.indices().as_chunks::<3>().0.iter().zip(&tables.faces) {
        corners.iter().for_each(|&i| put_u32::<Le>(&mut out, i));
        put_u32::<Le>(&mut out, word);
    }
    put_table_header(&mut out, tables.vertices.len(), VERTEX_SIZE, "vertices")?;
    for (&[p, t, word], normal) in tables.vertices.iter().zip(&tables.normals) {
        put_u32::<Le>(&mut out, p);
        put_u32::<Le>(&mut out, t);
        normal.iter().for_each(|&x| put_u32::<Le>(&mut out, x));
        put_u32::<Le>(&mut out, word);
    }
    put_u32::<Le>(&mut out, 1);
    put_u32::<Le>(&mut out, to_u32(name.len(), "texture name bytes")?);
    out.extend_from_slice(name);
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_bone_is_the_first_upper_case_part_after_the_suit() {
        let cases = [
            ("xskin-colonel-R_ARM1-SHOULDERL.msh", Some("R_ARM1")),
            ("dir/xskin-biped-ed-HEAD-HEAD.msh", Some("HEAD")),
            (
                "xskin-suit-cue-left-high-L_HAND-SUIT-POOLTABLE-CUE-LEFT-HIGH.msh",
                Some("L_HAND"),
            ),
            ("so_xskin-colonel-PELVIS-HIP", Some("PELVIS")),
            ("xskin-colonel-pelvis-hip.msh", Some("pelvis")),
            ("xskin-a-b-c-d.msh", None),
            ("xskin-HEAD.msh", None),
            ("colonel.msh", None),
            ("xskin-.msh", None),
            ("", None),
        ];
        for (name, bone) in cases {
            assert_eq!(bone_of_file_name(name), bone, "{name}");
        }
    }
}
