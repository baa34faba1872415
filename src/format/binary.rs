//! What the binary formats share: the parts of a file and the check that none overlap, checked
//! tables, fixed-size name fields, and DPM/SKM's per-vertex influence blocks (the same layout
//! in either byte order), read and written.

use std::fmt;

use byteorder::ByteOrder;

use crate::cursor::{Cursor, f32_at, span, table_bytes, u32_at};
use crate::error::{Error, Result, ResultExt};
use crate::format::Checker;
use crate::model::{Bone, Influence, Mesh, Name, parent_ok};

/// Bytes of one stored influence: origin[3], weight, normal[3], bone.
pub(crate) const INFLUENCE_SIZE: u64 = 32;
/// Influence sums further from 1 than this are reported (default mode) or rejected (strict).
pub(crate) const SUM_EXACT: f32 = 1e-4;
/// Influence sums further from 1 than this are rejected in every mode.
pub(crate) const SUM_TOLERATED: f32 = 1e-2;

/// The parts of a file, named in messages about them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Part {
    Header,
    Bones,
    Meshes,
    Frames,
    Vertices(u32),
    Texcoords(u32),
    Indices(u32),
    GroupIds(u32),
    References(u32),
    Poses(u32),
    Attributes,
    Textures,
    Materials,
    VertexList,
    Faces,
    Animations,
    Tracks(u32),
    Image(u32),
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Part::Header => write!(f, "header"),
            Part::Bones => write!(f, "bone table"),
            Part::Meshes => write!(f, "mesh table"),
            Part::Frames => write!(f, "frame table"),
            Part::Vertices(m) => write!(f, "mesh {m} vertices"),
            Part::Texcoords(m) => write!(f, "mesh {m} texcoords"),
            Part::Indices(m) => write!(f, "mesh {m} indices"),
            Part::GroupIds(m) => write!(f, "mesh {m} group ids"),
            Part::References(m) => write!(f, "mesh {m} references"),
            Part::Poses(fr) => write!(f, "frame {fr} poses"),
            Part::Attributes => write!(f, "attribute table"),
            Part::Textures => write!(f, "texture table"),
            Part::Materials => write!(f, "material table"),
            Part::VertexList => write!(f, "vertex table"),
            Part::Faces => write!(f, "face table"),
            Part::Animations => write!(f, "animation table"),
            Part::Tracks(a) => write!(f, "animation {a} tracks"),
            Part::Image(t) => write!(f, "texture {t} image"),
        }
    }
}

struct Region {
    start: u64,
    end: u64,
    part: Part,
}

/// Where each part of a file lies, for the check that no two share bytes.
#[derive(Default)]
pub(crate) struct Regions(Vec<Region>);

impl Regions {
    pub fn add(&mut self, start: u64, len: u64, part: Part) {
        if len > 0 {
            self.0.push(Region {
                start,
                end: start.saturating_add(len),
                part,
            });
        }
    }

    /// No two structures may share bytes: a file that reuses data would make allocations grow
    /// faster than the file.
    pub fn check_disjoint(mut self) -> Result<()> {
        self.0.sort_unstable_by_key(|r| (r.start, r.end));
        for pair in self.0.windows(2) {
            if let [a, b] = pair
                && b.start < a.end
            {
                return Err(Error::malformed(format!(
                    "{} (bytes {:#x}..{:#x}) overlaps {} (bytes {:#x}..{:#x})",
                    b.part, b.start, b.end, a.part, a.start, a.end
                ))
                .at(b.start));
            }
        }
        Ok(())
    }
}

/// The bytes of a table of `count` records of `size` bytes at `offset`, checked against the file.
pub(crate) fn table(data: &[u8], offset: u32, count: u32, size: u64, part: Part) -> Result<&[u8]> {
    let len = table_bytes(count as u64, size).within(|| part)?;
    let (start, end) = span(offset as u64, len, data.len())
        .map_err(|e| e.within(format!("{part} ({count} records of {size} bytes)")))?;
    Ok(data.get(start..end).unwrap_or_default())
}

/// A fixed-size name field at the start of `record`: the bytes up to the first NUL. A name that
/// fills its whole field has no terminator; real tools write such names, so it is kept whole
/// and reported.
pub(crate) fn name_field(
    record: &[u8],
    size: usize,
    at: u64,
    ck: &mut Checker,
    what: impl FnOnce() -> String,
) -> Result<Name> {
    let field = record.get(..size).unwrap_or_default();
    if !field.contains(&0) {
        ck.tolerate(
            Error::malformed(format!(
                "{}: name fills its whole {size}-byte field with no NUL terminator",
                what()
            ))
            .at(at),
        )?;
    }
    Ok(Name::new(field))
}

/// A bone record: a name field of `name_size` bytes, then `i32 parent` and `u32 flags` (DPM and
/// SKP lay their bones out alike). A parent that is not an earlier bone or -1 is a problem; -1
/// stands in when validating.
pub(crate) fn read_bone<E: ByteOrder>(
    record: &[u8],
    name_size: usize,
    i: usize,
    at: u64,
    ck: &mut Checker,
) -> Result<Bone> {
    let name = name_field(record, name_size, at, ck, || format!("bone {i}"))?;
    let mut parent = u32_at::<E>(record, name_size) as i32;
    if !parent_ok(parent, i) {
        ck.problem(
            Error::malformed(format!(
                "bone {i} ({name}): parent {parent} is not an earlier bone or -1"
            ))
            .at(at + name_size as u64),
        )?;
        parent = -1;
    }
    Ok(Bone {
        name,
        parent,
        flags: u32_at::<E>(record, name_size + 4),
    })
}

/// Writes a name into a field of `size` bytes, NUL-padded; `max` is the longest the format keeps.
pub(crate) fn put_name(
    out: &mut Vec<u8>,
    name: &Name,
    size: usize,
    max: usize,
    what: impl FnOnce() -> String,
) -> Result<()> {
    let bytes = name.as_bytes();
    if bytes.len() > max {
        return Err(Error::limit(format!(
            "{}: name is {} bytes, the format holds {max}",
            what(),
            bytes.len()
        )));
    }
    out.extend_from_slice(bytes);
    out.resize(out.len() + size - bytes.len(), 0);
    Ok(())
}

pub(crate) fn put_u32<E: ByteOrder>(out: &mut Vec<u8>, v: u32) {
    let mut b = [0u8; 4];
    E::write_u32(&mut b, v);
    out.extend_from_slice(&b);
}

pub(crate) fn put_f32<E: ByteOrder>(out: &mut Vec<u8>, v: f32) {
    put_u32::<E>(out, v.to_bits());
}

/// Pass one over a vertex block: walks the per-vertex counts without reading the influences,
/// and returns the block's length and its number of influences.
pub(crate) fn measure_vertices<E: ByteOrder>(
    data: &[u8],
    offset: u32,
    num_verts: u32,
    m: usize,
) -> Result<(u64, u64)> {
    // Every vertex holds at least its 4-byte count; check that much before walking.
    table(data, offset, num_verts, 4, Part::Vertices(m as u32))?;
    let mut c = Cursor::<E>::at(data, offset as u64)?;
    let mut influences = 0u64;
    for v in 0..num_verts {
        let n = c.u32().within(|| format!("mesh {m} vertex {v}"))?;
        c.skip(n as u64 * INFLUENCE_SIZE)
            .within(|| format!("mesh {m} vertex {v}: {n} influences"))?;
        influences += n as u64;
    }
    Ok((c.pos() - offset as u64, influences))
}

/// Worst influence sum seen in a mesh among those the default mode tolerates.
#[derive(Default)]
struct SumReport {
    count: u32,
    worst_vertex: u32,
    worst_sum: f32,
    worst_off: f32,
    worst_at: u64,
}

/// Pass two over a vertex block measured by [`measure_vertices`]: every influence, with its
/// numbers finite, its bone in range and each vertex's weights summing to 1.
pub(crate) fn read_vertices<E: ByteOrder>(
    data: &[u8],
    offset: u32,
    num_verts: u32,
    influence_count: u64,
    num_bones: u32,
    m: usize,
    ck: &mut Checker,
) -> Result<(Vec<u32>, Vec<Influence>)> {
    let mut influence_start = Vec::with_capacity(num_verts as usize + 1);
    let mut influences = Vec::with_capacity(influence_count as usize);
    influence_start.push(0u32);
    let mut sums = SumReport::default();
    let mut c = Cursor::<E>::at(data, offset as u64)?;
    for v in 0..num_verts {
        let vertex_at = c.pos();
        let n = c.u32()?;
        let block = c.bytes((n as u64 * INFLUENCE_SIZE) as usize)?;
        let mut sum = 0.0f32;
        for (k, rec) in block.as_chunks::<32>().0.iter().enumerate() {
            let at = vertex_at + 4 + k as u64 * INFLUENCE_SIZE;
            let mut f = [0.0f32; 7];
            E::read_f32_into(rec.get(..28).unwrap_or_default(), &mut f);
            let mut bone = u32_at::<E>(rec, 28);
            if let Some(j) = f.iter().position(|x| !x.is_finite()) {
                ck.problem(
                    Error::malformed(format!(
                        "mesh {m} vertex {v} influence {k}: {} is not a finite number",
                        f.get(j).copied().unwrap_or_default()
                    ))
                    .at(at + j as u64 * 4),
                )?;
                f = [0.0; 7];
            }
            if bone >= num_bones {
                ck.problem(
                    Error::malformed(format!(
                        "mesh {m} vertex {v} influence {k}: bone {bone} out of range (model has {num_bones} bones)"
                    ))
                    .at(at + 28),
                )?;
                bone = 0;
            }
            let [ox, oy, oz, w, nx, ny, nz] = f;
            sum += w;
            influences.push(Influence {
                origin: [ox, oy, oz],
                weight: w,
                normal: [nx, ny, nz],
                bone,
            });
        }
        let off = (sum - 1.0).abs();
        if !off.is_finite() || off > SUM_TOLERATED {
            ck.problem(
                Error::malformed(format!(
                    "mesh {m} vertex {v}: {n} influences sum to {sum} (must be 1 within {SUM_TOLERATED})"
                ))
                .at(vertex_at),
            )?;
        } else if off > SUM_EXACT {
            sums.count += 1;
            if off > sums.worst_off {
                sums.worst_vertex = v;
                sums.worst_sum = sum;
                sums.worst_off = off;
                sums.worst_at = vertex_at;
            }
        }
        influence_start.push(influences.len() as u32);
    }
    if sums.count > 0 {
        ck.tolerate(
            Error::malformed(format!(
                "mesh {m}: {} vertices have influence sums off 1 by more than {SUM_EXACT} (worst: vertex {}, sum {})",
                sums.count, sums.worst_vertex, sums.worst_sum
            ))
            .at(sums.worst_at),
        )?;
    }
    Ok((influence_start, influences))
}

/// A mesh's texcoords: two finite floats per vertex.
pub(crate) fn read_texcoords<E: ByteOrder>(
    data: &[u8],
    offset: u32,
    num_verts: u32,
    m: usize,
    ck: &mut Checker,
) -> Result<Vec<[f32; 2]>> {
    let bytes = table(data, offset, num_verts, 8, Part::Texcoords(m as u32))?;
    let mut texcoords = Vec::with_capacity(num_verts as usize);
    for (v, rec) in bytes.as_chunks::<8>().0.iter().enumerate() {
        let mut uv = [f32_at::<E>(rec, 0), f32_at::<E>(rec, 4)];
        if let Some(j) = uv.iter().position(|x| !x.is_finite()) {
            ck.problem(
                Error::malformed(format!(
                    "mesh {m} vertex {v}: texcoord is not a finite number"
                ))
                .at(offset as u64 + v as u64 * 8 + j as u64 * 4),
            )?;
            uv = [0.0; 2];
        }
        texcoords.push(uv);
    }
    Ok(texcoords)
}

/// A mesh's triangles, each corner below `num_verts`; `reverse` swaps the last two corners of
/// files whose front faces are clockwise.
pub(crate) fn read_triangles<E: ByteOrder>(
    data: &[u8],
    offset: u32,
    num_tris: u32,
    num_verts: u32,
    reverse: bool,
    m: usize,
    ck: &mut Checker,
) -> Result<Vec<u32>> {
    let bytes = table(data, offset, num_tris, 12, Part::Indices(m as u32))?;
    let mut indices = Vec::with_capacity(num_tris as usize * 3);
    for (t, tri) in bytes.as_chunks::<12>().0.iter().enumerate() {
        let mut corners = [0u32; 3];
        for (i, corner) in corners.iter_mut().enumerate() {
            let index = u32_at::<E>(tri, i * 4);
            if index >= num_verts {
                ck.problem(
                    Error::malformed(format!(
                        "mesh {m} triangle {t} corner {i}: vertex {index} out of range (mesh has {num_verts} vertices)"
                    ))
                    .at(offset as u64 + t as u64 * 12 + i as u64 * 4),
                )?;
            } else {
                *corner = index;
            }
        }
        let [a, b, c] = corners;
        indices.extend_from_slice(&if reverse { [a, c, b] } else { [a, b, c] });
    }
    Ok(indices)
}

/// Writes a mesh's vertex block: per vertex its influence count, then its influences.
pub(crate) fn put_vertices<E: ByteOrder>(out: &mut Vec<u8>, mesh: &Mesh) {
    for v in 0..mesh.vertex_count() {
        let influences = mesh.influences(v);
        put_u32::<E>(out, influences.len() as u32);
        for i in influences {
            for x in i.origin {
                put_f32::<E>(out, x);
            }
            put_f32::<E>(out, i.weight);
            for x in i.normal {
                put_f32::<E>(out, x);
            }
            put_u32::<E>(out, i.bone);
        }
    }
}

/// Bytes of a mesh's vertex block as [`put_vertices`] writes it.
pub(crate) fn vertex_bytes(mesh: &Mesh) -> u64 {
    mesh.vertex_count() as u64 * 4 + mesh.all_influences().len() as u64 * INFLUENCE_SIZE
}
