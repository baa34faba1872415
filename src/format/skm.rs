//! qfusion / Warsow SKM (meshes) and SKP (skeleton and frames): little-endian, one magic
//! (`SKM1`) and one type (2) for both.
//!
//! SKM layout (offsets from the start of the file): a 24-byte header; `num_meshes` 156-byte mesh
//! headers; per mesh a sequential vertex block (`u32 numweights` then that many 32-byte
//! influences, DPM's layout in little-endian), texcoords, `u32` indices and `u32` references.
//! SKP layout: a 28-byte header; `num_bones` 72-byte bones; `num_frames` 68-byte frame headers;
//! per frame `num_bones` 28-byte parent-relative poses (quaternion x, y, z, w, then origin).
//!
//! An SKM has no skeleton of its own: it loads as meshes waiting for one
//! ([`BoneSlots::ByIndex`]) and [`Model::bind`] joins it to its SKP. SKM triangles are
//! clockwise-front (FORMATS §3.7), so they are reversed on load and back on save.
//!
//! As for DPM, every offset and size is checked against the buffer and no two structures may
//! share bytes, so that what is allocated is bounded by the file's size.

use byteorder::{ByteOrder, LittleEndian};
use glam::Quat;

use crate::cursor::{Cursor, field_at, record_at, span, table_bytes, u32_at};
use crate::error::{Error, Result, ResultExt};
use crate::format::binary::{
    Part, Regions, VertexBlock, Vertices, decode_table, guess_blocks, header_start,
    measure_vertices, name_field, put_f32, put_name, put_u32, put_vertices, put_zeros, read_bone,
    read_guessing_first, read_sound_vertices, read_texcoords, read_triangles, read_vertices,
    records_len, table, vertex_bytes,
};
use crate::format::{Checker, Format, total};
use crate::math::Mat3x4;
use crate::model::{Animation, BoneSlots, Frame, Mesh, MeshParts, Model, ModelParts, Name};
use crate::poses::{Poses, RigidPose};

type Le = LittleEndian;

pub const MAGIC: &[u8; 4] = b"SKM1";
const TYPE: u32 = 2;
const SKM_HEADER_SIZE: u64 = 24;
const SKP_HEADER_SIZE: u64 = 28;
const MESH_SIZE: u64 = 156;
const BONE_SIZE: u64 = 72;
const FRAME_SIZE: u64 = 68;
const POSE_SIZE: u64 = 28;
const NAME_SIZE: usize = 64;

/// The format's own limits (qfusion's `qfiles.h`); the engine refuses files beyond them.
const MAX_MESHES: u32 = 32;
const MAX_FRAMES: u32 = 65536;
const MAX_TRIS: u32 = 65536;
const MAX_VERTS: u32 = 196608;
const MAX_BONES: u32 = 256;
const MAX_FILESIZE: u32 = 16 << 20;

/// Quaternions further from unit length than this are reported; all are normalised.
const QUAT_UNIT: f64 = 1e-3;
/// A pose whose scale is further from 1 than this has no quaternion-and-origin form.
const SCALE_TOLERANCE: f32 = 1e-4;
/// One scene per frame at this rate, as the DPM reader does for a file without scene data.
const DEFAULT_FPS: f32 = 10.0;

/// A count that must be at least 1 (`empty` says why) and at most the format's `max`.
fn check_count(
    ck: &mut Checker,
    value: u32,
    max: u32,
    at: u64,
    what: &str,
    empty: Option<&str>,
) -> Result<()> {
    if value > max {
        ck.problem(
            Error::limit(format!(
                "{what} {value} is over the format's limit of {max}"
            ))
            .at(at),
        )?;
    } else if value == 0
        && let Some(why) = empty
    {
        ck.problem(Error::malformed(format!("{what} is 0 ({why})")).at(at))?;
    }
    Ok(())
}

/// The checks both headers share: id, type, and the declared file size. Returns a cursor at
/// byte 12, after which the two headers differ.
fn read_header_start<'a>(
    data: &'a [u8],
    header_size: u64,
    ck: &mut Checker,
) -> Result<Cursor<'a, Le>> {
    let mut c = header_start::<Le>(data, MAGIC, "an SKM or SKP file", header_size)?;
    let filesize_at = c.pos();
    let filesize = c.u32()?;
    if filesize > MAX_FILESIZE {
        ck.problem(
            Error::limit(format!(
                "header: filesize {filesize} is over the format's limit of {MAX_FILESIZE} bytes"
            ))
            .at(filesize_at),
        )?;
    } else if filesize as u64 != data.len() as u64 {
        ck.tolerate(
            Error::malformed(format!(
                "header: filesize says {filesize} bytes, the data has {}",
                data.len()
            ))
            .at(filesize_at),
        )?;
    }
    Ok(c)
}

/// Whether `SKM1` data is laid out as an SKP rather than an SKM, for data whose name does not
/// say. The word at byte 20 is an SKM's `ofs_meshes` and an SKP's `ofs_bones`. An SKP's tables
/// cannot start inside its 28-byte header, so a value below 28 means an SKM (the Warsow tools
/// put the mesh table right after the 24-byte header); otherwise it is an SKP when both its
/// offsets (bytes 20 and 24) are past the header and its bone and frame tables, with the
/// counts at bytes 12 and 16, fit the data.
pub(crate) fn looks_like_skp(data: &[u8]) -> bool {
    let Some(header) = data.get(..SKP_HEADER_SIZE as usize) else {
        return false;
    };
    let word = |at: usize| u32_at::<Le>(header, at) as u64;
    let fits = |ofs: u64, count: u64, size: u64| {
        ofs >= SKP_HEADER_SIZE
            && ofs
                .checked_add(count.saturating_mul(size))
                .is_some_and(|end| end <= data.len() as u64)
    };
    fits(word(20), word(12), BONE_SIZE) && fits(word(24), word(16), FRAME_SIZE)
}

// ---------------------------------------------------------------------------------------------
// SKP
// ---------------------------------------------------------------------------------------------

struct FrameLayout {
    name: Name,
    ofs_poses: u32,
}

/// The worst of the quaternions that are off unit length by more than the default mode reports.
#[derive(Default)]
struct QuatReport {
    count: u64,
    worst: Option<(usize, usize, f64, u64)>,
}

/// The unit quaternion of stored components, with their length; `None` for zero length.
fn unit_quat(q: [f32; 4]) -> Option<(Quat, f64)> {
    // In f64 the squares of finite f32 values neither overflow nor underflow.
    let q64 = q.map(f64::from);
    let len = q64.iter().map(|c| c * c).sum::<f64>().sqrt();
    if len == 0.0 || !len.is_finite() {
        return None;
    }
    let [x, y, z, w] = q64.map(|c| (c / len) as f32);
    Some((Quat::from_xyzw(x, y, z, w), len))
}

fn read_poses(
    data: &[u8],
    frames: &[FrameLayout],
    num_bones: u32,
    ck: &mut Checker,
) -> Result<Vec<RigidPose>> {
    // Each frame's poses lie inside the file, apart from every other structure: the
    // allocation is bounded by the file's size. They stay rotations and origins (the skeleton
    // makes each matrix when asked, as Mat3x4::from_rotation_translation).
    let mut poses = Vec::with_capacity(frames.len().saturating_mul(num_bones as usize));
    let mut off_unit = QuatReport::default();
    for (f, fl) in frames.iter().enumerate() {
        let bytes = table(
            data,
            fl.ofs_poses,
            num_bones,
            POSE_SIZE,
            Part::Poses(f as u32, f as u32),
        )?;
        let (values, nonfinite) = decode_table::<Le, f32, 7>(bytes, num_bones);
        for (b, mut v) in values.into_iter().enumerate() {
            let at = record_at(fl.ofs_poses.into(), b, POSE_SIZE);
            if let Some(k) = v.iter().position(|x| !x.is_finite()).filter(|_| nonfinite) {
                ck.problem(
                    Error::malformed(format!(
                        "frame {f} ({}) bone {b}: pose element {k} is {}, not a finite number",
                        fl.name,
                        v.get(k).copied().unwrap_or_default()
                    ))
                    .at(record_at(at, k, 4)),
                )?;
                v = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
            }
            let [x, y, z, w, ox, oy, oz] = v;
            let q = match unit_quat([x, y, z, w]) {
                None => {
                    ck.problem(
                        Error::malformed(format!(
                            "frame {f} ({}) bone {b}: quaternion has zero length",
                            fl.name
                        ))
                        .at(at),
                    )?;
                    Quat::IDENTITY
                }
                Some((q, len)) => {
                    let off = (len - 1.0).abs();
                    if off > QUAT_UNIT {
                        off_unit.count = off_unit.count.saturating_add(1);
                        if off_unit
                            .worst
                            .is_none_or(|(_, _, l, _)| off > (l - 1.0).abs())
                        {
                            off_unit.worst = Some((f, b, len, at));
                        }
                    }
                    q
                }
            };
            poses.push(RigidPose {
                rotation: q.to_array(),
                translation: [ox, oy, oz],
            });
        }
    }
    if let Some((f, b, len, at)) = off_unit.worst {
        ck.tolerate(
            Error::malformed(format!(
                "{} quaternions are off unit length by more than {QUAT_UNIT} and were normalised \
                 (worst: frame {f} bone {b}, length {len})",
                off_unit.count
            ))
            .at(at),
        )?;
    }
    Ok(poses)
}

/// Reads an SKP: the skeleton and its frames.
pub(crate) fn read_skp(data: &[u8], ck: &mut Checker) -> Result<ModelParts> {
    let mut c = read_header_start(data, SKP_HEADER_SIZE, ck)?;
    let counts_at = c.pos();
    let num_bones = c.u32()?;
    let num_frames = c.u32()?;
    let ofs_bones = c.u32()?;
    let ofs_frames = c.u32()?;
    check_count(
        ck,
        num_bones,
        MAX_BONES,
        counts_at,
        "header: bone count",
        Some("the skeleton has no bones"),
    )?;
    check_count(
        ck,
        num_frames,
        MAX_FRAMES,
        field_at(counts_at, 4),
        "header: frame count",
        Some("frame 0 is the bind pose"),
    )?;

    let mut regions = Regions::default();
    regions.add(0, SKP_HEADER_SIZE, Part::Header);
    let bone_bytes = table(data, ofs_bones, num_bones, BONE_SIZE, Part::Bones)?;
    let frame_bytes = table(data, ofs_frames, num_frames, FRAME_SIZE, Part::Frames)?;
    regions.add(ofs_bones as u64, bone_bytes.len() as u64, Part::Bones);
    regions.add(ofs_frames as u64, frame_bytes.len() as u64, Part::Frames);

    // The tables are inside the file, so these counts are bounded by its size.
    let mut bones = Vec::with_capacity(num_bones as usize);
    for (i, rec) in bone_bytes.as_chunks::<72>().0.iter().enumerate() {
        let at = record_at(ofs_bones.into(), i, BONE_SIZE);
        bones.push(read_bone::<Le>(rec, NAME_SIZE, i, at, ck)?);
    }

    let pose_bytes = table_bytes(num_bones.into(), POSE_SIZE)?;
    let mut frames = Vec::with_capacity(num_frames as usize);
    for (f, rec) in frame_bytes.as_chunks::<68>().0.iter().enumerate() {
        let at = record_at(ofs_frames.into(), f, FRAME_SIZE);
        let name = name_field(rec, NAME_SIZE, at, ck, || format!("frame {f}"))?;
        let ofs_poses = u32_at::<Le>(rec, 64);
        span(ofs_poses as u64, pose_bytes, data.len()).within(|| {
            format!("frame {f} ({name}) poses ({num_bones} bones of {POSE_SIZE} bytes)")
        })?;
        regions.add_poses(f as u32, ofs_poses as u64, pose_bytes);
        frames.push(FrameLayout { name, ofs_poses });
    }
    regions.check_disjoint()?;

    let (frames_count, bones_count) = (u64::from(num_frames), u64::from(num_bones));
    ck.reserve_parts(
        &[
            // Two u32s: the product is exact. Poses stay rotations and origins.
            (
                frames_count.saturating_mul(bones_count),
                size_of::<RigidPose>() as u64,
            ),
            (frames_count, 160),
            (bones_count, 160),
        ],
        "the skeleton",
    )?;

    let poses = read_poses(data, &frames, num_bones, ck)?;
    let frames: Vec<Frame> = frames
        .into_iter()
        .map(|f| Frame {
            name: f.name,
            mins: [0.0; 3],
            maxs: [0.0; 3],
            yaw_radius: 0.0,
            radius: 0.0,
        })
        .collect();
    let animations = frames
        .iter()
        .enumerate()
        .map(|(i, f)| Animation {
            name: f.name.clone(),
            first_frame: i as u32,
            frame_count: 1,
            fps: DEFAULT_FPS,
            looping: true,
            ..Animation::default()
        })
        .collect();
    let mut parts = ModelParts::new(Format::Skp);
    parts.bones = bones;
    parts.frames = frames;
    parts.poses = poses.into();
    parts.animations = animations;
    Ok(parts)
}

// ---------------------------------------------------------------------------------------------
// SKM
// ---------------------------------------------------------------------------------------------

struct MeshLayout {
    shader: Name,
    name: Name,
    num_verts: u32,
    num_tris: u32,
    num_references: u32,
    ofs_verts: u32,
    ofs_texcoords: u32,
    ofs_indices: u32,
    ofs_references: u32,
    vertices: VertexBlock,
}

/// Pass one over a mesh header: its names, counts and the regions of its data, without
/// allocating for the contents. Without `measure`, the vertex block holds only its offset and
/// vertex count, for [`guess_blocks`].
fn read_mesh_layout(
    data: &[u8],
    (m, rec, at): (usize, &[u8], u64),
    measure: bool,
    regions: &mut Regions,
    ck: &mut Checker,
) -> Result<MeshLayout> {
    let mi = m as u32;
    let mut l = MeshLayout {
        shader: name_field(rec, NAME_SIZE, at, ck, || format!("mesh {m} shader"))?,
        name: name_field(
            rec.get(64..).unwrap_or_default(),
            NAME_SIZE,
            field_at(at, 64),
            ck,
            || format!("mesh {m} name"),
        )?,
        num_verts: u32_at::<Le>(rec, 128),
        num_tris: u32_at::<Le>(rec, 132),
        num_references: u32_at::<Le>(rec, 136),
        ofs_verts: u32_at::<Le>(rec, 140),
        ofs_texcoords: u32_at::<Le>(rec, 144),
        ofs_indices: u32_at::<Le>(rec, 148),
        ofs_references: u32_at::<Le>(rec, 152),
        vertices: VertexBlock::default(),
    };
    l.vertices.offset = l.ofs_verts;
    l.vertices.num_verts = l.num_verts;
    let what = |field: &str| format!("mesh {m}: {field}");
    check_count(
        ck,
        l.num_verts,
        MAX_VERTS,
        field_at(at, 128),
        &what("vertex count"),
        None,
    )?;
    check_count(
        ck,
        l.num_tris,
        MAX_TRIS,
        field_at(at, 132),
        &what("triangle count"),
        None,
    )?;
    check_count(
        ck,
        l.num_references,
        MAX_BONES,
        field_at(at, 136),
        &what("reference count"),
        None,
    )?;

    let at_mesh = |e: Error| e.within(format!("mesh {m} (header at byte {at:#x})"));
    let tc = table(data, l.ofs_texcoords, l.num_verts, 8, Part::Texcoords(mi)).map_err(at_mesh)?;
    let ix = table(data, l.ofs_indices, l.num_tris, 12, Part::Indices(mi)).map_err(at_mesh)?;
    let rf = table(
        data,
        l.ofs_references,
        l.num_references,
        4,
        Part::References(mi),
    )
    .map_err(at_mesh)?;
    if measure {
        l.vertices = measure_vertices::<Le>(data, l.ofs_verts, l.num_verts, m).map_err(at_mesh)?;
        regions.add(l.ofs_verts as u64, l.vertices.len, Part::Vertices(mi));
    }
    regions.add(l.ofs_texcoords as u64, tc.len() as u64, Part::Texcoords(mi));
    regions.add(l.ofs_indices as u64, ix.len() as u64, Part::Indices(mi));
    regions.add(
        l.ofs_references as u64,
        rf.len() as u64,
        Part::References(mi),
    );
    Ok(l)
}

fn read_mesh(
    data: &[u8],
    m: usize,
    l: MeshLayout,
    sound: Option<Vertices>,
    num_bones: u32,
    ck: &mut Checker,
) -> Result<MeshParts> {
    let (influence_start, influences) =
        read_vertices::<Le>(data, &l.vertices, sound, num_bones, m, ck)?;
    let texcoords = read_texcoords::<Le>(data, l.ofs_texcoords, l.num_verts, m, ck)?;
    // The file's front faces are clockwise; ossa's are counter-clockwise.
    let indices = read_triangles::<Le>(data, l.ofs_indices, l.num_tris, l.num_verts, true, m, ck)?;
    let mi = m as u32;
    let rf = table(
        data,
        l.ofs_references,
        l.num_references,
        4,
        Part::References(mi),
    )?;
    let mut references = Vec::with_capacity(l.num_references as usize);
    for (r, word) in rf.as_chunks::<4>().0.iter().enumerate() {
        let mut bone = Le::read_u32(word);
        if bone >= num_bones {
            ck.problem(
                Error::malformed(format!(
                    "mesh {m} reference {r}: bone {bone} out of range (model has {num_bones} bones)"
                ))
                .at(record_at(l.ofs_references.into(), r, 4)),
            )?;
            bone = 0;
        }
        references.push(bone);
    }

    Ok(MeshParts {
        name: l.name,
        shader: l.shader,
        influence_start,
        influences,
        indices,
        texcoords: Some(texcoords),
        group_ids: None,
        references: Some(references),
        ..MeshParts::default()
    })
}

/// Reads an SKM: meshes that wait for their skeleton (an SKP) by bone index (see
/// [`read_guessing_first`]).
pub(crate) fn read_skm(data: &[u8], ck: &mut Checker) -> Result<ModelParts> {
    read_guessing_first(ck, |measure, ck| read_skm_as(data, measure, ck))
}

/// Reads an SKM with its vertex blocks measured, or guessed (None when a guess fails).
fn read_skm_as(data: &[u8], measure: bool, ck: &mut Checker) -> Result<Option<ModelParts>> {
    let mut c = read_header_start(data, SKM_HEADER_SIZE, ck)?;
    let counts_at = c.pos();
    let num_bones = c.u32()?;
    let num_meshes = c.u32()?;
    let ofs_meshes = c.u32()?;
    check_count(
        ck,
        num_bones,
        MAX_BONES,
        counts_at,
        "header: bone count",
        Some("influences need bones"),
    )?;
    check_count(
        ck,
        num_meshes,
        MAX_MESHES,
        field_at(counts_at, 4),
        "header: mesh count",
        Some("an SKM holds at least one mesh"),
    )?;

    let mut regions = Regions::default();
    regions.add(0, SKM_HEADER_SIZE, Part::Header);
    let mesh_bytes = table(data, ofs_meshes, num_meshes, MESH_SIZE, Part::Meshes)?;
    regions.add(ofs_meshes as u64, mesh_bytes.len() as u64, Part::Meshes);
    let mut layouts = Vec::with_capacity(num_meshes as usize);
    for (m, rec) in mesh_bytes.as_chunks::<156>().0.iter().enumerate() {
        let at = record_at(ofs_meshes.into(), m, MESH_SIZE);
        layouts.push(read_mesh_layout(
            data,
            (m, rec, at),
            measure,
            &mut regions,
            ck,
        )?);
    }
    if !measure {
        let mut blocks: Vec<_> = layouts.iter_mut().map(|l| &mut l.vertices).collect();
        if guess_blocks(data.len(), &mut blocks, &mut regions).is_none() {
            return Ok(None);
        }
    }
    regions.check_disjoint()?;

    ck.reserve_parts(
        &[
            (total(layouts.iter().map(|l| l.vertices.influences)), 32),
            (total(layouts.iter().map(|l| l.num_verts.into())), 4 + 8),
            (total(layouts.iter().map(|l| l.num_tris.into())), 12),
            (total(layouts.iter().map(|l| l.num_references.into())), 4),
            (num_meshes.into(), 256),
        ],
        "the model",
    )?;

    // Guessed blocks are all read before anything is reported about the meshes: a refuted
    // guess leaves nothing to take back.
    let mut sound = Vec::new().into_iter();
    if !measure {
        let read = |l: &MeshLayout| read_sound_vertices::<Le>(data, &l.vertices, num_bones);
        match layouts.iter().map(read).collect::<Option<Vec<_>>>() {
            Some(v) => sound = v.into_iter(),
            None => return Ok(None),
        }
    }
    let mut meshes = Vec::with_capacity(layouts.len());
    for (m, l) in layouts.into_iter().enumerate() {
        meshes.push(read_mesh(data, m, l, sound.next(), num_bones, ck)?);
    }
    let mut parts = ModelParts::new(Format::Skm);
    parts.meshes = meshes;
    parts.unbound = Some(BoneSlots::ByIndex(num_bones));
    Ok(Some(parts))
}

// ---------------------------------------------------------------------------------------------
// Writers
// ---------------------------------------------------------------------------------------------

/// `count` within the format's `max`, as the u32 the file stores.
fn limited(count: usize, max: u32, what: impl FnOnce() -> String) -> Result<u32> {
    match u32::try_from(count) {
        Ok(n) if n <= max => Ok(n),
        _ => Err(Error::limit(format!(
            "{}: {count} is over the format's limit of {max}",
            what()
        ))),
    }
}

fn file_size(size: u64) -> Result<u32> {
    match u32::try_from(size) {
        Ok(n) if n <= MAX_FILESIZE => Ok(n),
        _ => Err(Error::limit(format!(
            "the file would be {size} bytes, over the format's limit of {MAX_FILESIZE}"
        ))),
    }
}

/// The bones a mesh lists: the file's own list when it came with one, else the sorted set of
/// the bones its influences use.
fn references_of(mesh: &Mesh) -> Vec<u32> {
    if let Some(r) = mesh.references() {
        return r.to_vec();
    }
    let mut r: Vec<u32> = mesh.all_influences().iter().map(|i| i.bone).collect();
    r.sort_unstable();
    r.dedup();
    r
}

/// Writes a model's meshes as SKM, in the order the Warsow tools do: header, mesh headers, then
/// each mesh's vertices, texcoords, indices and references. The model is bound to a skeleton,
/// or meshes waiting for one by bone index.
pub fn write_skm(model: &Model) -> Result<Vec<u8>> {
    let num_bones = match model.unbound() {
        None => model.bones().len(),
        Some(BoneSlots::ByIndex(n)) => *n as usize,
        Some(BoneSlots::ByName(_)) => {
            return Err(Error::unsupported(
                "meshes that name their bones cannot be saved as SKM, which numbers them: bind \
                 them to a skeleton first",
            ));
        }
    };
    let meshes = model.meshes();
    if num_bones == 0 || meshes.is_empty() {
        return Err(Error::invalid_argument(
            "an SKM needs at least one bone and one mesh",
        ));
    }
    let num_bones = limited(num_bones, MAX_BONES, || "bone count".to_owned())?;
    let num_meshes = limited(meshes.len(), MAX_MESHES, || "mesh count".to_owned())?;

    struct Planned {
        verts: u32,
        tris: u32,
        references: Vec<u32>,
        offsets: [u64; 4],
    }
    // Sizes saturate while planning; the file size check below refuses any that did.
    let mut pos = SKM_HEADER_SIZE.saturating_add(records_len(meshes.len(), MESH_SIZE));
    let mut planned = Vec::with_capacity(meshes.len());
    for (m, mesh) in meshes.iter().enumerate() {
        let verts = limited(mesh.vertex_count(), MAX_VERTS, || {
            format!("mesh {m}: vertex count")
        })?;
        let tris = limited(mesh.triangle_count(), MAX_TRIS, || {
            format!("mesh {m}: triangle count")
        })?;
        let references = references_of(mesh);
        limited(references.len(), MAX_BONES, || {
            format!("mesh {m}: reference count")
        })?;
        if let Some(r) = references.iter().find(|&&r| r >= num_bones) {
            return Err(Error::invalid_argument(format!(
                "mesh {m}: reference to bone {r}, but the model has {num_bones} bones"
            )));
        }
        let ofs_verts = pos;
        let vbytes = vertex_bytes(mesh);
        let ofs_texcoords = ofs_verts.saturating_add(vbytes);
        let ofs_indices = ofs_texcoords.saturating_add(records_len(verts as usize, 8));
        let ofs_references = ofs_indices.saturating_add(records_len(tris as usize, 12));
        pos = ofs_references.saturating_add(records_len(references.len(), 4));
        planned.push(Planned {
            verts,
            tris,
            references,
            offsets: [ofs_verts, ofs_texcoords, ofs_indices, ofs_references],
        });
    }
    let filesize = file_size(pos)?;

    let mut out = Vec::with_capacity(filesize as usize);
    out.extend_from_slice(MAGIC);
    put_u32::<Le>(&mut out, TYPE);
    put_u32::<Le>(&mut out, filesize);
    put_u32::<Le>(&mut out, num_bones);
    put_u32::<Le>(&mut out, num_meshes);
    put_u32::<Le>(&mut out, SKM_HEADER_SIZE as u32);
    for (m, (mesh, p)) in meshes.iter().zip(&planned).enumerate() {
        put_name(&mut out, mesh.shader(), NAME_SIZE, NAME_SIZE - 1, || {
            format!("mesh {m} shader")
        })?;
        put_name(&mut out, mesh.name(), NAME_SIZE, NAME_SIZE - 1, || {
            format!("mesh {m} name")
        })?;
        put_u32::<Le>(&mut out, p.verts);
        put_u32::<Le>(&mut out, p.tris);
        put_u32::<Le>(&mut out, p.references.len() as u32);
        // Below the file size, which fits u32.
        p.offsets
            .iter()
            .for_each(|&o| put_u32::<Le>(&mut out, o as u32));
    }
    for (mesh, p) in meshes.iter().zip(&planned) {
        put_vertices::<Le>(&mut out, mesh);
        match mesh.texcoords() {
            Some(tc) => tc
                .iter()
                .flatten()
                .for_each(|&v| put_f32::<Le>(&mut out, v)),
            None => put_zeros(&mut out, mesh.vertex_count().saturating_mul(8)),
        }
        // Back to the file's clockwise front faces.
        for tri in mesh.indices().as_chunks::<3>().0 {
            let [a, b, c] = *tri;
            [a, c, b].iter().for_each(|&i| put_u32::<Le>(&mut out, i));
        }
        p.references
            .iter()
            .for_each(|&r| put_u32::<Le>(&mut out, r));
    }
    debug_assert_eq!(out.len(), filesize as usize);
    Ok(out)
}

/// The quaternion to store for a pose without scale. Its sign is the classic matrix-to-quaternion
/// conversion's (w > 0 when the trace is positive, else the component of the largest diagonal
/// entry), which is the sign of every pose in the Warsow SDK's files. Its floats are, among those
/// within one step of the exact conversion, the first that the reader turns back into exactly
/// this matrix: then saving a loaded file gives back the quaternions it had (where the
/// conversion to a matrix kept them apart), and saving again what was saved changes nothing.
fn stored_quat(pose: &Mat3x4) -> [f32; 4] {
    let [m00, m01, m02, _, m10, m11, m12, _, m20, m21, m22, _] = pose.m.map(f64::from);
    // The columns' lengths are within the scale tolerance of 1; dividing by them keeps the
    // estimate to f64 rounding.
    let len = |a: f64, b: f64, c: f64| (a * a + b * b + c * c).sqrt().max(f64::MIN_POSITIVE);
    let (l0, l1, l2) = (len(m00, m10, m20), len(m01, m11, m21), len(m02, m12, m22));
    let (m00, m10, m20) = (m00 / l0, m10 / l0, m20 / l0);
    let (m01, m11, m21) = (m01 / l1, m11 / l1, m21 / l1);
    let (m02, m12, m22) = (m02 / l2, m12 / l2, m22 / l2);
    let trace = m00 + m11 + m22;
    let q = if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        [(m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, s / 4.0]
    } else if m00 >= m11 && m00 >= m22 {
        let s = (1.0 + m00 - m11 - m22).sqrt() * 2.0;
        [s / 4.0, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s]
    } else if m11 >= m22 {
        let s = (1.0 + m11 - m00 - m22).sqrt() * 2.0;
        [(m01 + m10) / s, s / 4.0, (m12 + m21) / s, (m02 - m20) / s]
    } else {
        let s = (1.0 + m22 - m00 - m11).sqrt() * 2.0;
        [(m02 + m20) / s, (m12 + m21) / s, s / 4.0, (m10 - m01) / s]
    };
    let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    let estimate = q.map(|c| (c / n) as f32);
    let rebuilds = |c: [f32; 4]| {
        unit_quat(c).is_some_and(|(u, _)| {
            let m = Mat3x4::from_rotation_translation(u, pose.translation());
            m.m.iter()
                .zip(&pose.m)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        })
    };
    STEPS
        .iter()
        .map(|d| {
            let mut c = estimate;
            for (v, &s) in c.iter_mut().zip(d) {
                *v = next_float(*v, s);
            }
            c
        })
        .find(|&c| rebuilds(c))
        .unwrap_or(estimate)
}

/// Steps of -1, 0 or 1 on each of a quaternion's four floats, nearest first: none, then one,
/// two, three and four floats a step away.
const STEPS: [[i8; 4]; 81] = {
    let mut out = [[0i8; 4]; 81];
    let mut n = 0;
    let mut level = 0;
    while level <= 4 {
        let mut i = 0i8;
        while i < 81 {
            let d @ [a, b, c, e] = [i % 3 - 1, i / 3 % 3 - 1, i / 9 % 3 - 1, i / 27 - 1];
            if a.abs() + b.abs() + c.abs() + e.abs() == level {
                if let Some(slot) = out.split_at_mut(n).1.first_mut() {
                    *slot = d;
                }
                n += 1;
            }
            i += 1;
        }
        level += 1;
    }
    out
};

/// The float one representable value above (`step` 1) or below (-1) `v`, or `v` itself (0).
fn next_float(v: f32, step: i8) -> f32 {
    if step == 0 {
        return v;
    }
    if v == 0.0 {
        let tiny = f32::from_bits(1);
        return if step > 0 { tiny } else { -tiny };
    }
    // Away from zero grows the bit pattern, whatever the sign.
    let away = (step > 0) == (v > 0.0);
    let bits = v.to_bits();
    // `v` is finite and not zero: the step stays within the u32 patterns (to infinity at most).
    f32::from_bits(if away {
        bits.wrapping_add(1)
    } else {
        bits.wrapping_sub(1)
    })
}

/// Writes a model's skeleton and frames as SKP, in the order the Warsow tools do: header,
/// bones, frame headers, then each frame's poses. Poses kept as rotations and origins (a loaded
/// SKP's) are written as they are; a matrix pose is split into a quaternion and an origin, and
/// one with scale has no such form and is refused.
pub fn write_skp(model: &Model) -> Result<Vec<u8>> {
    if model.unbound().is_some() {
        return Err(Error::invalid_argument(
            "the model's meshes wait for a skeleton: it has no SKP to write",
        ));
    }
    let bones = model.bones();
    let frames = model.frames();
    if bones.is_empty() || frames.is_empty() {
        return Err(Error::invalid_argument(
            "an SKP needs at least one bone and one frame",
        ));
    }
    let num_bones = limited(bones.len(), MAX_BONES, || "bone count".to_owned())?;
    let num_frames = limited(frames.len(), MAX_FRAMES, || "frame count".to_owned())?;
    let ofs_bones = SKP_HEADER_SIZE;
    // Counts within the format's limits: these sizes are far from overflowing, and
    // saturating keeps the file size check the one that refuses.
    let ofs_frames = ofs_bones.saturating_add(records_len(num_bones as usize, BONE_SIZE));
    let ofs_poses = ofs_frames.saturating_add(records_len(num_frames as usize, FRAME_SIZE));
    let frame_bytes = records_len(num_bones as usize, POSE_SIZE);
    let filesize =
        file_size(ofs_poses.saturating_add(frame_bytes.saturating_mul(num_frames.into())))?;

    let mut out = Vec::with_capacity(filesize as usize);
    out.extend_from_slice(MAGIC);
    put_u32::<Le>(&mut out, TYPE);
    put_u32::<Le>(&mut out, filesize);
    put_u32::<Le>(&mut out, num_bones);
    put_u32::<Le>(&mut out, num_frames);
    put_u32::<Le>(&mut out, ofs_bones as u32);
    put_u32::<Le>(&mut out, ofs_frames as u32);
    for (i, b) in bones.iter().enumerate() {
        put_name(&mut out, &b.name, NAME_SIZE, NAME_SIZE - 1, || {
            format!("bone {i}")
        })?;
        out.extend_from_slice(&b.parent.to_le_bytes());
        put_u32::<Le>(&mut out, b.flags);
    }
    for (f, frame) in frames.iter().enumerate() {
        put_name(&mut out, &frame.name, NAME_SIZE, NAME_SIZE - 1, || {
            format!("frame {f}")
        })?;
        // Below the file size, which fits u32.
        put_u32::<Le>(
            &mut out,
            ofs_poses.saturating_add(frame_bytes.saturating_mul(f as u64)) as u32,
        );
    }
    // Poses kept as an SKP has them are written as they are: the quaternion the file gave (made
    // unit length at load), which a matrix would give back only to rounding and up to its sign.
    if let Poses::Rigid(rigid) = model.skeleton().poses() {
        for p in rigid {
            p.rotation
                .iter()
                .chain(&p.translation)
                .for_each(|&v| put_f32::<Le>(&mut out, v));
        }
        debug_assert_eq!(out.len(), filesize as usize);
        return Ok(out);
    }
    for (f, frame) in frames.iter().enumerate() {
        let poses = model.skeleton().frame_poses(f).unwrap_or_default();
        for (b, (pose, bone)) in poses.iter().zip(bones).enumerate() {
            let d = pose.decompose();
            if d.scale.iter().any(|s| (s - 1.0).abs() > SCALE_TOLERANCE) {
                return Err(Error::unsupported(format!(
                    "frame {f} ({}) bone {b} ({}): the pose has scale {:?}, and an SKP pose is a \
                     rotation and an origin only",
                    frame.name, bone.name, d.scale
                )));
            }
            stored_quat(pose)
                .iter()
                .chain(&d.translation)
                .for_each(|&v| put_f32::<Le>(&mut out, v));
        }
    }
    debug_assert_eq!(out.len(), filesize as usize);
    Ok(out)
}
