//! Reading IQM versions 2 and 1. Pass one locates and checks every table against the file;
//! pass two decodes what the model keeps, after the memory it needs has been charged.

use std::sync::Arc;

use byteorder::{ByteOrder, LittleEndian as Le};
use glam::Quat;

use super::bind::{BindSpace, Finite};
use crate::cursor::{field_at, record_at, span, table_bytes};
use crate::error::{Error, Result, ResultExt};
use crate::format::binary::{SUM_EXACT, SUM_TOLERATED};
use crate::format::{Checker, Format, total, try_filled, try_vec};
use crate::math::{Decomposed, MAX_MAGNITUDE, Mat3x4, in_range};
use crate::model::{
    Animation, AnimationEvent, BONE_SYNTHETIC, Bone, Frame, Influence, Kept, KeptExtension,
    MeshParts, MeshSkin, ModelParts, Name, SkinFrame, concat_into,
};
use crate::poses::{
    Fixed, PoseChannels, Poses, QuantisedPoses, complete_w, has_direction, squared_length,
    unit_or_identity,
};

pub const MAGIC: &[u8; 16] = b"INTERQUAKEMODEL\0";
pub(super) const HEADER_SIZE: u64 = 124;
pub(super) const MESH_SIZE: u64 = 24;
pub(super) const ARRAY_SIZE: u64 = 20;
pub(super) const TRIANGLE_SIZE: u64 = 12;
pub(super) const ANIM_SIZE: u64 = 20;
pub(super) const BOUNDS_SIZE: u64 = 32;
pub(super) const EXTENSION_SIZE: u64 = 16;
const NO_NEIGHBOUR: u32 = u32::MAX;

/// Vertex array types.
pub(crate) const POSITION: u32 = 0;
pub(crate) const TEXCOORD: u32 = 1;
pub(crate) const NORMAL: u32 = 2;
pub(crate) const TANGENT: u32 = 3;
pub(crate) const BLEND_INDEXES: u32 = 4;
pub(crate) const BLEND_WEIGHTS: u32 = 5;
pub(crate) const COLOR: u32 = 6;
/// Types from here on are custom arrays, named by the text at `type - CUSTOM`.
pub(crate) const CUSTOM: u32 = 0x10;

/// Component formats, numbered as the spec does.
pub(super) const FORMAT_NAMES: [&str; 9] = [
    "byte", "ubyte", "short", "ushort", "int", "uint", "half", "float", "double",
];
pub(super) const FLOAT: u32 = 7;

/// DarkPlaces and FTE play an anim without a usable rate at FTE's default.
const DEFAULT_FPS: f32 = 10.0;

/// Header fields after the magic, in file order.
#[derive(Clone, Copy)]
#[repr(usize)]
#[allow(dead_code)] // Every field is named for its place; not all are read.
pub(super) enum H {
    Version,
    Filesize,
    Flags,
    NumText,
    OfsText,
    NumMeshes,
    OfsMeshes,
    NumVertexArrays,
    NumVertexes,
    OfsVertexArrays,
    NumTriangles,
    OfsTriangles,
    OfsAdjacency,
    NumJoints,
    OfsJoints,
    NumPoses,
    OfsPoses,
    NumAnims,
    OfsAnims,
    NumFrames,
    NumFrameChannels,
    OfsFrames,
    OfsBounds,
    NumComment,
    OfsComment,
    NumExtensions,
    OfsExtensions,
}
const HEADER_WORDS: usize = 27;

pub(super) struct Header([u32; HEADER_WORDS]);

impl Header {
    /// The header of `data`, an IQM file: None when the data is shorter than a header (the
    /// magic is not looked at). For the engines' checks, which read the raw layout.
    pub(super) fn of(data: &[u8]) -> Option<Header> {
        let head = data.get(..HEADER_SIZE as usize)?;
        let mut words = [0u32; HEADER_WORDS];
        for (k, w) in words.iter_mut().enumerate() {
            *w = u32_of(head, 16usize.saturating_add(k.saturating_mul(4)));
        }
        Some(Header(words))
    }
    pub(super) fn get(&self, f: H) -> u32 {
        self.0.get(f as usize).copied().unwrap_or_default()
    }
    /// The block offsets not at a multiple of 4 bytes, as the spec asks: field, name, value.
    pub(super) fn unaligned(&self) -> Vec<(H, &'static str, u32)> {
        [
            (H::OfsText, "text"),
            (H::OfsMeshes, "meshes"),
            (H::OfsVertexArrays, "vertex arrays"),
            (H::OfsTriangles, "triangles"),
            (H::OfsAdjacency, "adjacency"),
            (H::OfsJoints, "joints"),
            (H::OfsPoses, "poses"),
            (H::OfsAnims, "anims"),
            (H::OfsFrames, "frames"),
            (H::OfsBounds, "bounds"),
            (H::OfsComment, "comment"),
            (H::OfsExtensions, "extensions"),
        ]
        .into_iter()
        .map(|(f, what)| (f, what, self.get(f)))
        .filter(|(_, _, v)| !v.is_multiple_of(4))
        .collect()
    }
    /// The byte where field `f` is stored.
    pub(super) fn at(f: H) -> u64 {
        record_at(16, f as usize, 4)
    }
}

/// The sizes of the records that differ between versions.
pub(super) struct Version {
    pub(super) number: u32,
    pub(super) joint: u64,
    pub(super) pose: u64,
    /// Channels a pose stores: 10 in version 2 (translation, quaternion, scale), 9 in version
    /// 1, whose quaternions have no w.
    channels: usize,
}

pub(super) const V2: Version = Version {
    number: 2,
    joint: 48,
    pose: 88,
    channels: 10,
};
pub(super) const V1: Version = Version {
    number: 1,
    joint: 44,
    pose: 80,
    channels: 9,
};

/// The bytes of `count` records of `size` at `ofs`, checked against the file; empty when the
/// count is 0, whatever the offset says.
fn block<'a>(data: &'a [u8], ofs: u32, count: u64, size: u64, what: &str) -> Result<&'a [u8]> {
    if count == 0 {
        return Ok(&[]);
    }
    let len = table_bytes(count, size).within(|| what.to_owned())?;
    let (start, end) = span(ofs.into(), len, data.len())
        .map_err(|e| e.within(format!("{what} ({count} of {size} bytes at {ofs:#x})")))?;
    Ok(data.get(start..end).unwrap_or_default())
}

fn f32s<const N: usize>(bytes: &[u8], from: usize) -> [f32; N] {
    let mut v = [0.0f32; N];
    for (k, x) in v.iter_mut().enumerate() {
        let at = from.saturating_add(k.saturating_mul(4));
        *x = bytes
            .get(at..at.saturating_add(4))
            .map_or(0.0, Le::read_f32);
    }
    v
}

fn u32_of(bytes: &[u8], at: usize) -> u32 {
    bytes.get(at..at.saturating_add(4)).map_or(0, Le::read_u32)
}

/// The text block: names are byte offsets into it, each ending at a NUL inside it.
struct Text<'a> {
    bytes: &'a [u8],
}

impl Text<'_> {
    /// The name at `offset`; a problem (the empty name standing in) when it lies outside the
    /// block or runs to its end without a NUL.
    fn name(
        &self,
        offset: u32,
        at: u64,
        ck: &mut Checker,
        what: impl Fn() -> String,
    ) -> Result<Name> {
        let Some(rest) = self.bytes.get(offset as usize..).filter(|r| !r.is_empty()) else {
            if offset == 0 {
                // No text block at all: offset 0 is the empty name, as in a file the compiler
                // writes without names.
                return Ok(Name::empty());
            }
            ck.problem(
                Error::malformed(format!(
                    "{}: name offset {offset} is outside the text block ({} bytes)",
                    what(),
                    self.bytes.len()
                ))
                .at(at),
            )?;
            return Ok(Name::empty());
        };
        match rest.iter().position(|&b| b == 0) {
            Some(end) => Ok(Name::new(rest.get(..end).unwrap_or_default())),
            None => {
                ck.problem(
                    Error::malformed(format!(
                        "{}: the name at text offset {offset} has no NUL before the text block ends",
                        what()
                    ))
                    .at(at),
                )?;
                Ok(Name::empty())
            }
        }
    }
}

/// One vertex array as its record and the file lay it out.
struct Array<'a> {
    index: usize,
    kind: u32,
    format: u32,
    size: u32,
    bytes: &'a [u8],
}

pub(super) fn component_size(format: u32) -> Option<u64> {
    Some(match format {
        0 | 1 => 1,
        2 | 3 | 6 => 2,
        4 | 5 | 7 => 4,
        8 => 8,
        _ => return None,
    })
}

fn half(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let frac = f32::from(bits & 0x3ff);
    match exp {
        0 => sign * frac * (2.0f32).powi(-24),
        31 if frac == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        e => sign * (1.0 + frac / 1024.0) * (2.0f32).powi(e.saturating_sub(15)),
    }
}

impl<'a> Array<'a> {
    fn name(&self) -> String {
        let kind = match self.kind {
            POSITION => "position",
            TEXCOORD => "texcoord",
            NORMAL => "normal",
            TANGENT => "tangent",
            BLEND_INDEXES => "blend indexes",
            BLEND_WEIGHTS => "blend weights",
            COLOR => "color",
            _ => "custom",
        };
        format!("vertex array {} ({kind})", self.index)
    }

    /// Component `c` of vertex `v` as a number; `unit` maps the integer formats onto [0, 1] or
    /// [-1, 1] as normalised data is (colours and weights).
    #[inline]
    fn component(&self, v: usize, c: usize, unit: bool) -> f64 {
        let Some(size) = component_size(self.format) else {
            return 0.0;
        };
        let i = v
            .saturating_mul(self.size as usize)
            .saturating_add(c)
            .saturating_mul(size as usize);
        let Some(b) = self.bytes.get(i..i.saturating_add(size as usize)) else {
            return 0.0;
        };
        let scale = |x: f64, max: f64| if unit { x / max } else { x };
        match self.format {
            0 => scale(
                f64::from(b.first().copied().unwrap_or_default() as i8),
                127.0,
            ),
            1 => scale(f64::from(b.first().copied().unwrap_or_default()), 255.0),
            2 => scale(f64::from(Le::read_i16(b)), 32767.0),
            3 => scale(f64::from(Le::read_u16(b)), 65535.0),
            4 => scale(f64::from(Le::read_i32(b)), 2147483647.0),
            5 => scale(f64::from(Le::read_u32(b)), 4294967295.0),
            6 => f64::from(half(Le::read_u16(b))),
            7 => f64::from(Le::read_f32(b)),
            _ => Le::read_f64(b),
        }
    }

    /// The portable layout's bytes (blend indexes and weights, colours): four unsigned bytes a
    /// vertex, read as they lie.
    fn ubytes4(&self) -> Option<&'a [[u8; 4]]> {
        (self.format == 1 && self.size == 4).then_some(self.bytes.as_chunks::<4>().0)
    }

    /// Every vertex's first `N` components as floats (missing ones from `fill`); NaN and
    /// infinity are reported by the caller.
    fn floats<const N: usize>(&self, count: usize, fill: [f32; N], unit: bool) -> Vec<[f32; N]> {
        let have = (self.size as usize).min(N);
        if self.format == FLOAT && self.size as usize == N {
            // The portable layout: decoded straight from the bytes.
            return self
                .bytes
                .chunks_exact(N.saturating_mul(4))
                .take(count)
                .map(|c| f32s::<N>(c, 0))
                .collect();
        }
        (0..count)
            .map(|v| {
                let mut out = fill;
                for (c, o) in out.iter_mut().enumerate().take(have) {
                    *o = self.component(v, c, unit) as f32;
                }
                out
            })
            .collect()
    }
}

/// A float array as the model reads it, by vertex: straight from the file where it holds
/// exactly `N` floats a vertex, all finite (as the tools write them), else decoded.
enum Column<'a, const N: usize> {
    File(&'a [[u8; 4]]),
    Decoded(Vec<[f32; N]>),
}

impl<const N: usize> Default for Column<'_, N> {
    fn default() -> Self {
        Column::Decoded(Vec::new())
    }
}

impl<const N: usize> Column<'_, N> {
    #[inline]
    fn get(&self, v: usize) -> Option<[f32; N]> {
        match self {
            Column::File(words) => {
                let start = v.checked_mul(N)?;
                let w: &[[u8; 4]; N] = words.get(start..start.checked_add(N)?)?.try_into().ok()?;
                Some(w.map(f32::from_le_bytes))
            }
            Column::Decoded(values) => values.get(v).copied(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Column::File(words) => words.len().checked_div(N).unwrap_or_default(),
            Column::Decoded(values) => values.len(),
        }
    }
}

/// Each vertex's four joints: the file's bytes, or decoded from another format.
enum Joints<'a> {
    Bytes(&'a [[u8; 4]]),
    Decoded(Vec<[u32; 4]>),
}

impl Joints<'_> {
    #[inline]
    fn get(&self, v: usize) -> [u32; 4] {
        match self {
            Joints::Bytes(b) => b.get(v).map(|b| b.map(u32::from)),
            Joints::Decoded(d) => d.get(v).copied(),
        }
        .unwrap_or_default()
    }
}

/// Each vertex's four weights: the file's bytes (255 is 1), or decoded from another format.
enum Weights<'a> {
    Bytes(&'a [[u8; 4]]),
    Decoded(Vec<[f32; 4]>),
}

impl Weights<'_> {
    #[inline]
    fn get(&self, v: usize) -> [f32; 4] {
        match self {
            Weights::Bytes(b) => b.get(v).map(|b| b.map(|x| f32::from(x) / 255.0)),
            Weights::Decoded(d) => d.get(v).copied(),
        }
        .unwrap_or_default()
    }
}

/// The decoded vertex arrays, in the file's vertex numbering.
#[derive(Default)]
struct Vertices<'a> {
    positions: Column<'a, 3>,
    normals: Option<Column<'a, 3>>,
    texcoords: Option<Column<'a, 2>>,
    colors: Option<Vec<[u8; 4]>>,
    blends: Option<(Joints<'a>, Weights<'a>)>,
}

struct MeshRecord {
    name: Name,
    material: Name,
    first_vertex: u32,
    num_vertexes: u32,
    first_triangle: u32,
    num_triangles: u32,
}

struct Joint {
    name: Name,
    parent: i32,
    local: Mat3x4,
}

struct Pose {
    /// A channel can reach past [`MAX_MAGNITUDE`]: FTE's tools write 1e16 in every channel of
    /// a joint an animation does not move (Nuclide's `.vvm` files).
    wild: bool,
    parent: i32,
    mask: u32,
    offset: [f32; 10],
    scale: [f32; 10],
}

/// Reads an IQM file.
pub(crate) fn read(data: &[u8], ck: &mut Checker) -> Result<ModelParts> {
    let id_len = data.len().min(MAGIC.len());
    if data.get(..id_len) != MAGIC.get(..id_len) {
        return Err(Error::unknown_format(
            "header: id is not \"INTERQUAKEMODEL\" (not an IQM file)",
        )
        .at(0));
    }
    let head = data.get(..HEADER_SIZE as usize).ok_or_else(|| {
        Error::truncated(format!(
            "header: needs {HEADER_SIZE} bytes, the data has {}",
            data.len()
        ))
        .at(0)
    })?;
    let mut words = [0u32; HEADER_WORDS];
    for (k, w) in words.iter_mut().enumerate() {
        *w = u32_of(head, 16usize.saturating_add(k.saturating_mul(4)));
    }
    let h = Header(words);
    let version = match h.get(H::Version) {
        2 => V2,
        1 => V1,
        v => {
            return Err(Error::unsupported(format!(
                "header: version {v} (IQM versions are 1 and 2)"
            ))
            .at(Header::at(H::Version)));
        }
    };
    if h.get(H::Filesize) as usize != data.len() {
        ck.tolerate(
            Error::malformed(format!(
                "header: filesize says {} bytes, the data has {} (FTE refuses such a file)",
                h.get(H::Filesize),
                data.len()
            ))
            .at(Header::at(H::Filesize)),
        )?;
    }
    check_alignment(&h, ck)?;

    let text = Text {
        bytes: block(
            data,
            h.get(H::OfsText),
            h.get(H::NumText).into(),
            1,
            "text block",
        )?,
    };
    if text.bytes.first().is_some_and(|&b| b != 0) {
        ck.tolerate(
            Error::malformed("text block: does not start with the empty name (a NUL)")
                .at(h.get(H::OfsText).into()),
        )?;
    }
    let nv = h.get(H::NumVertexes);
    let nt = h.get(H::NumTriangles);
    let meshes = read_mesh_records(data, &h, &text, ck)?;
    let arrays = read_arrays(data, &h, &text, ck)?;
    let triangles = block(
        data,
        h.get(H::OfsTriangles),
        nt.into(),
        TRIANGLE_SIZE,
        "triangle table",
    )?;
    if h.get(H::OfsAdjacency) != 0 {
        check_adjacency(data, &h, ck)?;
    }
    let joints = read_joints(data, &h, &version, &text, ck)?;
    let poses = read_pose_records(data, &h, &version, ck)?;
    // Without poses the frames hold nothing but the rest pose, which is frame 0 already: as
    // DarkPlaces, the model keeps that one pose.
    let file_frames = if poses.is_empty() {
        0
    } else {
        h.get(H::NumFrames)
    };
    if poses.is_empty() && (h.get(H::NumFrames) > 0 || h.get(H::NumAnims) > 0) {
        ck.tolerate(Error::malformed(format!(
            "{} frames and {} anims but no poses: the rest pose is the only frame, and the \
             anims are left out",
            h.get(H::NumFrames),
            h.get(H::NumAnims)
        )))?;
    }
    let anims = if poses.is_empty() {
        Vec::new()
    } else {
        read_anims(data, &h, &text, ck)?
    };
    let bounds = if h.get(H::OfsBounds) != 0 {
        block(
            data,
            h.get(H::OfsBounds),
            h.get(H::NumFrames).into(),
            BOUNDS_SIZE,
            "bounds table",
        )?
    } else {
        &[]
    };
    block(
        data,
        h.get(H::OfsComment),
        h.get(H::NumComment).into(),
        1,
        "comment",
    )?;

    // The model's size, charged before anything is made for it. Meshes may each claim every
    // vertex (and triangles may reach into other meshes' vertices), so the vertices the model
    // holds are counted by mesh, not taken from the header.
    let nb = u64::from(joints.len().max(poses.len()).max(1) as u32);
    let frames = u64::from(file_frames).saturating_add(1);
    let mesh_vertices = total(meshes.iter().map(|m| {
        u64::from(m.num_vertexes).saturating_add(u64::from(m.num_triangles).saturating_mul(3))
    }));
    ck.reserve_parts(
        &[
            (u64::from(nv), 12 + 12 + 8 + 4 + 32),
            (mesh_vertices, 4 * 32 + 12 + 12 + 8 + 4 + 8),
            (u64::from(nt), 12),
            // Frame 0's poses, split for blending too, and each pose's channels: later frames
            // stay the file's.
            (nb, size_of::<Mat3x4>() as u64),
            (nb, size_of::<Decomposed>() as u64),
            (nb, size_of::<PoseChannels>() as u64),
            (frames, 96),
            (nb, 160),
            // The file itself, kept for saving it unchanged.
            (data.len() as u64, 1),
        ],
        "the model",
    )?;

    let vertices = decode_vertices(&arrays, nv, &h, ck)?;
    let skel = skeleton(&joints, &poses, !meshes.is_empty(), ck)?;
    let nb = skel.bones.len();
    let file_frames = file_frames as usize;
    let source: Arc<[u8]> = data.into();
    let quantised = check_frames(data, &h, &version, &poses, &skel, ck)?;
    let Skeleton {
        bones,
        local,
        animation_only,
    } = skel;
    let all_poses = match quantised {
        Some((channels, layout)) => {
            // An animation-only file has no rest pose: its first frame stands in.
            let first = if animation_only {
                let values = data
                    .get(layout.0..layout.0.saturating_add(layout.1))
                    .unwrap_or_default();
                let v1 = version.number == 1;
                channels
                    .iter()
                    .zip(&local)
                    .map(|(c, rest)| c.pose(values, v1, rest))
                    .collect()
            } else {
                local
            };
            let q = QuantisedPoses::new(
                first,
                channels,
                Arc::clone(&source),
                layout,
                version.number == 1,
            )
            .ok_or_else(|| Error::malformed("frame data: poses read past it"))?;
            Poses::Quantised(q)
        }
        None => Poses::Matrices(local),
    };
    let inverse_bind = inverse_binds(&bones, &all_poses.range(0, nb).unwrap_or_default());

    let mut parts = ModelParts::new(Format::Iqm);
    parts.source_version = Some(version.number);
    parts.source = Some(source);
    parts.meshes = build_meshes(&meshes, triangles, &vertices, &inverse_bind, &h, ck)?;
    // Without bones there is nothing to pose: the file's frames and anims, if any, are empty.
    let (frames, animations, scene_of_anim) = if bones.is_empty() {
        (Vec::new(), Vec::new(), Vec::new())
    } else {
        scenes(&anims, bounds, file_frames, ck)?
    };
    read_extensions(data, &h, &text, &scene_of_anim, &mut parts, ck)?;
    parts.bones = bones;
    parts.frames = frames;
    parts.poses = all_poses;
    parts.animations = animations;
    parts.up_axis = 2;
    parts.handedness = 1;
    if animation_only {
        ck.note(
            "an animation-only file: its bones have no names and no rest pose, and its first \
             frame stands in for the bind pose"
                .to_owned(),
        );
    }
    Ok(parts)
}

/// The spec asks for every block at a multiple of 4 bytes; real files (Red Eclipse's, Nuclide's)
/// break it and every engine reads them on x86, as ossa does.
fn check_alignment(h: &Header, ck: &mut Checker) -> Result<()> {
    let odd = h.unaligned();
    if let Some(first) = odd.first() {
        let list: Vec<String> = odd
            .iter()
            .map(|(_, what, at)| format!("{what} at {at:#x}"))
            .collect();
        ck.tolerate(
            Error::malformed(format!(
                "header: offsets not at a multiple of 4 bytes as the spec asks ({}); read where \
                 they lie",
                list.join(", ")
            ))
            .at(Header::at(first.0)),
        )?;
    }
    Ok(())
}

fn read_mesh_records(
    data: &[u8],
    h: &Header,
    text: &Text,
    ck: &mut Checker,
) -> Result<Vec<MeshRecord>> {
    let ofs = h.get(H::OfsMeshes);
    let bytes = block(
        data,
        ofs,
        h.get(H::NumMeshes).into(),
        MESH_SIZE,
        "mesh table",
    )?;
    let (nv, nt) = (h.get(H::NumVertexes), h.get(H::NumTriangles));
    let mut out = Vec::with_capacity(h.get(H::NumMeshes) as usize);
    for (m, rec) in bytes.chunks_exact(MESH_SIZE as usize).enumerate() {
        let at = record_at(ofs.into(), m, MESH_SIZE);
        let mut r = MeshRecord {
            name: text.name(u32_of(rec, 0), at, ck, || format!("mesh {m} name"))?,
            material: text.name(u32_of(rec, 4), field_at(at, 4), ck, || {
                format!("mesh {m} material")
            })?,
            first_vertex: u32_of(rec, 8),
            num_vertexes: u32_of(rec, 12),
            first_triangle: u32_of(rec, 16),
            num_triangles: u32_of(rec, 20),
        };
        if u64::from(r.first_vertex).saturating_add(u64::from(r.num_vertexes)) > u64::from(nv) {
            ck.problem(
                Error::malformed(format!(
                    "mesh {m} ({}): vertices {}+{} past the file's {nv}",
                    r.name, r.first_vertex, r.num_vertexes
                ))
                .at(field_at(at, 8)),
            )?;
            r.num_vertexes = 0;
            r.first_vertex = 0;
        }
        if u64::from(r.first_triangle).saturating_add(u64::from(r.num_triangles)) > u64::from(nt) {
            ck.problem(
                Error::malformed(format!(
                    "mesh {m} ({}): triangles {}+{} past the file's {nt}",
                    r.name, r.first_triangle, r.num_triangles
                ))
                .at(field_at(at, 16)),
            )?;
            r.num_triangles = 0;
            r.first_triangle = 0;
        }
        out.push(r);
    }
    Ok(out)
}

fn read_arrays<'a>(
    data: &'a [u8],
    h: &Header,
    text: &Text,
    ck: &mut Checker,
) -> Result<Vec<Array<'a>>> {
    let ofs = h.get(H::OfsVertexArrays);
    let bytes = block(
        data,
        ofs,
        h.get(H::NumVertexArrays).into(),
        ARRAY_SIZE,
        "vertex array table",
    )?;
    let nv = u64::from(h.get(H::NumVertexes));
    let mut out: Vec<Array<'a>> = Vec::new();
    for (i, rec) in bytes.chunks_exact(ARRAY_SIZE as usize).enumerate() {
        let at = record_at(ofs.into(), i, ARRAY_SIZE);
        let (kind, format, size, offset) = (
            u32_of(rec, 0),
            u32_of(rec, 8),
            u32_of(rec, 12),
            u32_of(rec, 16),
        );
        let Some(csize) = component_size(format) else {
            ck.problem(
                Error::unsupported(format!(
                    "vertex array {i}: component format {format} is none of the spec's (0 byte \
                     to 8 double)"
                ))
                .at(field_at(at, 8)),
            )?;
            continue;
        };
        if (7..CUSTOM).contains(&kind) {
            ck.tolerate(
                Error::malformed(format!(
                    "vertex array {i}: type {kind} is reserved by the spec; the array is not used"
                ))
                .at(at),
            )?;
        }
        if kind >= CUSTOM {
            text.name(kind.saturating_sub(CUSTOM), at, ck, || {
                format!("vertex array {i} custom name")
            })?;
        }
        if size == 0 {
            ck.problem(
                Error::malformed(format!("vertex array {i}: 0 components a vertex"))
                    .at(field_at(at, 12)),
            )?;
            continue;
        }
        let what = format!(
            "vertex array {i} ({nv} vertices of {size} {})",
            FORMAT_NAMES.get(format as usize).copied().unwrap_or("?")
        );
        let bytes = block(data, offset, nv.saturating_mul(size.into()), csize, &what)?;
        out.push(Array {
            index: i,
            kind,
            format,
            size,
            bytes,
        });
    }
    Ok(out)
}

/// Whether every value of a float array is a finite number: the first that is not is a
/// problem at its vertex, and 0 stands in for it.
fn finite<const N: usize>(values: &mut [[f32; N]], a: &Array, ck: &mut Checker) -> Result<()> {
    if all_finite(values.as_flattened().iter().map(|x| x.to_bits())) {
        return Ok(());
    }
    for (v, x) in values.iter_mut().enumerate() {
        if let Some(c) = x.iter().position(|c| !c.is_finite()) {
            ck.problem(Error::malformed(format!(
                "{} vertex {v}: component {c} is {}, not a finite number",
                a.name(),
                x.get(c).copied().unwrap_or_default()
            )))?;
            *x = [0.0; N];
        }
    }
    Ok(())
}

/// Whether every float (by its bits) is a finite number: one pass without branches, as an
/// infinity or NaN has every exponent bit set.
fn all_finite(bits: impl Iterator<Item = u32>) -> bool {
    bits.fold(0u32, |bad, b| {
        bad | u32::from(b & 0x7f80_0000 == 0x7f80_0000)
    }) == 0
}

/// The file's floats where the array holds exactly `N` finite floats a vertex; else every
/// vertex's first `N` components decoded, a value that is not finite reported and 0.
fn column<'a, const N: usize>(
    a: &Array<'a>,
    n: usize,
    fill: [f32; N],
    ck: &mut Checker,
) -> Result<Column<'a, N>> {
    if a.format == FLOAT && a.size as usize == N {
        let words = a.bytes.as_chunks::<4>().0;
        if all_finite(words.iter().map(|w| u32::from_le_bytes(*w))) {
            return Ok(Column::File(words));
        }
    }
    let mut values = a.floats::<N>(n, fill, false);
    finite(&mut values, a, ck)?;
    Ok(Column::Decoded(values))
}

fn decode_vertices<'a>(
    arrays: &[Array<'a>],
    nv: u32,
    h: &Header,
    ck: &mut Checker,
) -> Result<Vertices<'a>> {
    let n = nv as usize;
    for (k, a) in arrays.iter().enumerate() {
        let earlier = arrays.get(..k).unwrap_or_default();
        if a.kind < CUSTOM && earlier.iter().any(|b| b.kind == a.kind) {
            ck.tolerate(Error::malformed(format!(
                "{}: a second array of its type; the first is used",
                a.name()
            )))?;
        }
    }
    // The first array of each type is the one used.
    let find = |kind: u32| arrays.iter().find(|a| a.kind == kind);
    let mut v = Vertices::default();
    match find(POSITION) {
        Some(a) => v.positions = column(a, n, [0.0; 3], ck)?,
        None if n > 0 && h.get(H::NumMeshes) > 0 => {
            ck.problem(
                Error::malformed(format!("the file has {n} vertices but no position array"))
                    .at(Header::at(H::NumVertexArrays)),
            )?;
            v.positions = Column::Decoded(vec![[0.0; 3]; n]);
        }
        None => {}
    }
    if let Some(a) = find(NORMAL) {
        v.normals = Some(column(a, n, [0.0; 3], ck)?);
    }
    if let Some(a) = find(TEXCOORD) {
        v.texcoords = Some(column(a, n, [0.0; 2], ck)?);
    }
    if let Some(a) = find(COLOR) {
        let to_byte = |x: f32| (x.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
        v.colors = Some(match a.ubytes4() {
            // Each byte through the same steps as any other format, once per value.
            Some(b) => {
                let table: [u8; 256] =
                    std::array::from_fn(|x| to_byte((f64::from(x as u8) / 255.0) as f32));
                b.iter()
                    .take(n)
                    .map(|c| c.map(|x| table.get(usize::from(x)).copied().unwrap_or_default()))
                    .collect()
            }
            None => {
                let mut c = a.floats::<4>(n, [1.0; 4], true);
                finite(&mut c, a, ck)?;
                c.iter().map(|c| c.map(to_byte)).collect()
            }
        });
    }
    if let Some(a) = find(TANGENT) {
        // Tangents are checked; the model derives its own where it needs them. Floats that are
        // all finite need no decoding to say so.
        let words = a.bytes.as_chunks::<4>().0;
        if !(a.format == FLOAT && all_finite(words.iter().map(|w| u32::from_le_bytes(*w)))) {
            let mut t = a.floats::<4>(n, [0.0, 0.0, 0.0, 1.0], false);
            finite(&mut t, a, ck)?;
        }
    }
    match (find(BLEND_INDEXES), find(BLEND_WEIGHTS)) {
        (Some(ia), Some(wa)) => {
            let indexes = match ia.ubytes4() {
                Some(b) => Joints::Bytes(b.get(..n).unwrap_or(b)),
                None => Joints::Decoded(
                    (0..n)
                        .map(|vtx| {
                            let mut out = [0u32; 4];
                            for (c, o) in out.iter_mut().enumerate().take(ia.size as usize) {
                                let x = ia.component(vtx, c, false);
                                *o = if (0.0..4294967296.0).contains(&x) {
                                    x as u32
                                } else {
                                    u32::MAX
                                };
                            }
                            out
                        })
                        .collect(),
                ),
            };
            let weight_unit = wa.format != FLOAT && wa.format != 6 && wa.format != 8;
            // Bytes over 255 are finite weights: nothing to check.
            let weights = match wa.ubytes4() {
                Some(b) => Weights::Bytes(b.get(..n).unwrap_or(b)),
                None => {
                    let mut w = wa.floats::<4>(n, [0.0; 4], weight_unit);
                    finite(&mut w, wa, ck)?;
                    Weights::Decoded(w)
                }
            };
            if ia.size > 4 || wa.size > 4 {
                ck.tolerate(Error::malformed(format!(
                    "blend arrays of {} indexes and {} weights a vertex: the first 4 are used",
                    ia.size, wa.size
                )))?;
            }
            v.blends = Some((indexes, weights));
        }
        (Some(a), None) | (None, Some(a)) => {
            ck.tolerate(Error::malformed(format!(
                "{}: blend indexes and weights come in pairs; the array is not used",
                a.name()
            )))?;
        }
        (None, None) => {}
    }
    Ok(v)
}

fn check_adjacency(data: &[u8], h: &Header, ck: &mut Checker) -> Result<()> {
    let nt = h.get(H::NumTriangles);
    let ofs = h.get(H::OfsAdjacency);
    let bytes = block(data, ofs, nt.into(), TRIANGLE_SIZE, "adjacency table")?;
    // One pass without branches finds whether any entry is out of range; only then is the
    // first looked for.
    let words = bytes.as_chunks::<4>().0;
    let bad = words.iter().fold(false, |bad, w| {
        let t = u32::from_le_bytes(*w);
        bad | (t != NO_NEIGHBOUR && t >= nt)
    });
    if !bad {
        return Ok(());
    }
    for (k, w) in bytes.chunks_exact(4).enumerate() {
        let t = Le::read_u32(w);
        if t != NO_NEIGHBOUR && t >= nt {
            ck.tolerate(
                Error::malformed(format!(
                    "adjacency of triangle {} edge {}: triangle {t} out of range ({nt} \
                     triangles); adjacency is not used",
                    k / 3,
                    k % 3
                ))
                .at(record_at(ofs.into(), k, 4)),
            )?;
            break;
        }
    }
    Ok(())
}

/// A joint's or pose's rotation made a unit quaternion; a problem (the identity standing in)
/// when it has no direction.
fn unit_rotation(
    q: [f32; 4],
    at: u64,
    ck: &mut Checker,
    what: impl Fn() -> String,
) -> Result<Quat> {
    // The square of an f32 is far inside an f64's range.
    let len = q
        .iter()
        .map(|&c| f64::from(c) * f64::from(c))
        .sum::<f64>()
        .sqrt();
    if !(len.is_finite() && len > 1e-12) {
        ck.problem(
            Error::malformed(format!("{}: rotation {q:?} is not a rotation", what())).at(at),
        )?;
    }
    Ok(unit_or_identity(q))
}

fn read_joints(
    data: &[u8],
    h: &Header,
    version: &Version,
    text: &Text,
    ck: &mut Checker,
) -> Result<Vec<Joint>> {
    let ofs = h.get(H::OfsJoints);
    let bytes = block(
        data,
        ofs,
        h.get(H::NumJoints).into(),
        version.joint,
        "joint table",
    )?;
    let mut out: Vec<Joint> = Vec::with_capacity(h.get(H::NumJoints) as usize);
    for (j, rec) in bytes.chunks_exact(version.joint as usize).enumerate() {
        let at = record_at(ofs.into(), j, version.joint);
        let name = text.name(u32_of(rec, 0), at, ck, || format!("joint {j} name"))?;
        let mut parent = u32_of(rec, 4) as i32;
        let earlier = parent == -1 || (parent >= 0 && (parent as usize) < j);
        if !earlier {
            ck.problem(
                Error::malformed(format!(
                    "joint {j} ({name}): parent {parent} is not an earlier joint or -1 \
                     (DarkPlaces stops with an error, QF refuses the file)"
                ))
                .at(field_at(at, 4)),
            )?;
            parent = -1;
        }
        let t = f32s::<3>(rec, 8);
        let (q, s) = if version.number == 2 {
            (f32s::<4>(rec, 20), f32s::<3>(rec, 36))
        } else {
            let [x, y, z] = f32s::<3>(rec, 20);
            ([x, y, z, complete_w(x, y, z)], f32s::<3>(rec, 32))
        };
        if let Some(k) = t.iter().chain(&q).chain(&s).position(|v| !v.is_finite()) {
            ck.problem(
                Error::malformed(format!(
                    "joint {j} ({name}): value {k} of its transform is not a finite number"
                ))
                .at(field_at(at, 8)),
            )?;
            out.push(Joint {
                name,
                parent,
                local: Mat3x4::IDENTITY,
            });
            continue;
        }
        let q = unit_rotation(q, field_at(at, 20), ck, || format!("joint {j} ({name})"))?;
        out.push(Joint {
            name,
            parent,
            local: Mat3x4::from_rotation_translation_scale(q, t, s),
        });
    }
    Ok(out)
}

fn read_pose_records(
    data: &[u8],
    h: &Header,
    version: &Version,
    ck: &mut Checker,
) -> Result<Vec<Pose>> {
    let ofs = h.get(H::OfsPoses);
    let bytes = block(
        data,
        ofs,
        h.get(H::NumPoses).into(),
        version.pose,
        "pose table",
    )?;
    let nc = version.channels;
    let mut out = Vec::with_capacity(h.get(H::NumPoses) as usize);
    for (p, rec) in bytes.chunks_exact(version.pose as usize).enumerate() {
        let at = record_at(ofs.into(), p, version.pose);
        let mut parent = u32_of(rec, 0) as i32;
        if parent < -1 || (parent >= 0 && parent as usize >= p) {
            ck.problem(
                Error::malformed(format!(
                    "pose {p}: parent {parent} is not an earlier pose or -1"
                ))
                .at(at),
            )?;
            parent = -1;
        }
        let stored_mask = u32_of(rec, 4);
        // Version 1's scale bits (6-8) are version 2's 7-9: bit 6 is w, which it derives.
        let mask = if version.number == 1 {
            (stored_mask & 0x3f) | ((stored_mask & 0x1c0) << 1) | (stored_mask & !0x1ff)
        } else {
            stored_mask
        };
        let mut offset = [0.0f32; 10];
        let mut scale = [0.0f32; 10];
        let base_scale = 8usize.saturating_add(nc.saturating_mul(4));
        for c in 0..nc {
            let at_o = 8usize.saturating_add(c.saturating_mul(4));
            let at_s = base_scale.saturating_add(c.saturating_mul(4));
            let o = rec
                .get(at_o..at_o.saturating_add(4))
                .map_or(0.0, Le::read_f32);
            let s = rec
                .get(at_s..at_s.saturating_add(4))
                .map_or(0.0, Le::read_f32);
            if !(o.is_finite() && s.is_finite()) {
                ck.problem(
                    Error::malformed(format!(
                        "pose {p}: channel {c}'s offset or scale is not a finite number"
                    ))
                    .at(field_at(at, at_o as u64)),
                )?;
            }
            // Version 1's channels 6-8 (scale) are version 2's 7-9: w (6) is derived.
            let slot = if version.number == 1 && c >= 6 {
                c.saturating_add(1)
            } else {
                c
            };
            if let (Some(os), Some(ss)) = (offset.get_mut(slot), scale.get_mut(slot)) {
                *os = if o.is_finite() { o } else { 0.0 };
                *ss = if s.is_finite() { s } else { 0.0 };
            }
        }
        let used = 0x3ff & !(if version.number == 1 { 1 << 6 } else { 0 });
        if mask & !used != 0 {
            ck.tolerate(
                Error::malformed(format!(
                    "pose {p}: channel mask {stored_mask:#x} sets bits past the {nc} channels; \
                     they are not read"
                ))
                .at(field_at(at, 4)),
            )?;
        }
        let wild = (0..10).any(|c| {
            let o = f64::from(offset.get(c).copied().unwrap_or_default());
            let s = f64::from(scale.get(c).copied().unwrap_or_default());
            !(in_range(o) && in_range(o + 65535.0 * s))
        });
        out.push(Pose {
            wild,
            parent,
            mask: mask & used,
            offset,
            scale,
        });
    }
    Ok(out)
}

struct Skeleton {
    bones: Vec<Bone>,
    /// Each bone's rest pose, parent-relative.
    local: Vec<Mat3x4>,
    /// No joints, only poses: the bones come from the poses.
    animation_only: bool,
}

fn skeleton(
    joints: &[Joint],
    poses: &[Pose],
    has_meshes: bool,
    ck: &mut Checker,
) -> Result<Skeleton> {
    if !joints.is_empty() {
        if !poses.is_empty() && poses.len() != joints.len() {
            ck.problem(
                Error::malformed(format!(
                    "{} poses for {} joints: an animated file has one pose a joint (FTE and QF \
                 refuse it)",
                    poses.len(),
                    joints.len()
                ))
                .at(Header::at(H::NumPoses)),
            )?;
        }
        for (j, (joint, pose)) in joints.iter().zip(poses).enumerate() {
            if joint.parent != pose.parent {
                ck.tolerate(Error::malformed(format!(
                    "pose {j}: parent {} differs from joint {j}'s ({}); the joint's is used, as \
                     DarkPlaces, FTE and QF do",
                    pose.parent, joint.parent
                )))?;
                break;
            }
        }
        return Ok(Skeleton {
            bones: joints
                .iter()
                .map(|j| Bone {
                    name: j.name.clone(),
                    parent: j.parent,
                    flags: 0,
                })
                .collect(),
            local: joints.iter().map(|j| j.local).collect(),
            animation_only: false,
        });
    }
    if !poses.is_empty() {
        return Ok(Skeleton {
            bones: poses
                .iter()
                .map(|p| Bone {
                    name: Name::empty(),
                    parent: p.parent,
                    flags: 0,
                })
                .collect(),
            local: vec![Mat3x4::IDENTITY; poses.len()],
            animation_only: true,
        });
    }
    // Neither joints nor poses: a static mesh, whose vertices stay where the file puts them.
    let bones = if has_meshes {
        vec![Bone {
            name: Name::empty(),
            parent: -1,
            flags: BONE_SYNTHETIC,
        }]
    } else {
        Vec::new()
    };
    let n = bones.len();
    Ok(Skeleton {
        bones,
        local: vec![Mat3x4::IDENTITY; n],
        animation_only: false,
    })
}

/// Checks the frames and each pose's channels, returning the channels of each bone's pose
/// (see [`PoseChannels`]) and where the frames lie (first byte, bytes a frame, frames); None
/// when the file has no poses or no frames. A frame's pose whose rotation has no direction is a
/// problem (the identity stands in), found without decoding frames where the pose's channels
/// cannot give one.
#[allow(clippy::type_complexity)]
fn check_frames(
    data: &[u8],
    h: &Header,
    version: &Version,
    poses: &[Pose],
    skel: &Skeleton,
    ck: &mut Checker,
) -> Result<Option<(Vec<PoseChannels>, (usize, usize, usize))>> {
    let nf = h.get(H::NumFrames) as usize;
    if poses.is_empty() || nf == 0 {
        return Ok(None);
    }
    let channels = h.get(H::NumFrameChannels) as usize;
    let stored: usize = poses.iter().map(|p| p.mask.count_ones() as usize).sum();
    if stored > channels {
        return Err(Error::malformed(format!(
            "the poses' channel masks set {stored} channels a frame, the header says {channels}"
        ))
        .at(Header::at(H::NumFrameChannels)));
    }
    if stored < channels {
        ck.tolerate(
            Error::malformed(format!(
                "the header says {channels} channels a frame, the poses' masks set {stored}; \
                 the rest are not read"
            ))
            .at(Header::at(H::NumFrameChannels)),
        )?;
    }
    let values = block(
        data,
        h.get(H::OfsFrames),
        (nf as u64).saturating_mul(channels as u64),
        2,
        "frame data",
    )?;
    let bones = &skel.bones;
    let nb = bones.len();
    let wild: Vec<String> = poses
        .iter()
        .enumerate()
        .filter(|(_, p)| p.wild)
        .map(|(j, _)| match bones.get(j) {
            Some(b) if !b.name.is_empty() => format!("{j} ({})", b.name),
            _ => j.to_string(),
        })
        .collect();
    if !wild.is_empty() {
        ck.tolerate(
            Error::malformed(format!(
                "poses {}: channels reach past {MAX_MAGNITUDE:e} (FTE's tools write 1e16 for a \
                 joint an animation leaves alone); those joints keep their rest pose",
                wild.join(", ")
            ))
            .at(Header::at(H::OfsPoses)),
        )?;
    }
    let v1 = version.number == 1;
    // Poses past the skeleton's bones are not part of the model, and bones past the poses stay
    // at the identity.
    let mut table = pose_tables(poses, nb);
    table.resize(
        nb,
        PoseChannels::new(0, 0, Fixed::Identity, [0.0; 10], [0.0; 10]),
    );
    // A rotation without direction is a problem in the frame where it lies, in frame order:
    // only poses whose channels can give one are looked at.
    let step = channels.saturating_mul(2);
    let suspects: Vec<(usize, &PoseChannels)> = table
        .iter()
        .enumerate()
        .filter(|(_, t)| t.may_lose_rotation(v1))
        .collect();
    if !suspects.is_empty() {
        for f in 0..nf {
            let frame = values
                .get(f.saturating_mul(step)..f.saturating_add(1).saturating_mul(step))
                .unwrap_or_default();
            for &(j, t) in &suspects {
                let [_, _, _, qx, qy, qz, qw, ..] = t.values(frame, v1);
                if !has_direction(squared_length([qx, qy, qz, qw])) {
                    let at = record_at(h.get(H::OfsFrames).into(), f.saturating_mul(channels), 2);
                    unit_rotation([qx, qy, qz, qw], at, ck, || format!("frame {f} pose {j}"))?;
                }
            }
        }
    }
    let start = h.get(H::OfsFrames) as usize;
    Ok(Some((table, (start, step, nf))))
}

/// The first `nb` poses' channels: a pose's stored channels follow the earlier poses' in a
/// frame, in channel order. A pose whose channels reach past [`MAX_MAGNITUDE`] keeps its
/// joint's rest pose.
fn pose_tables(poses: &[Pose], nb: usize) -> Vec<PoseChannels> {
    let mut next = 0u32;
    poses
        .iter()
        .take(nb)
        .map(|p| {
            let first = next;
            next = next.saturating_add(p.mask.count_ones());
            PoseChannels::new(
                first,
                // Ten channels: the mask holds no other bit.
                (p.mask & 0x3ff) as u16,
                if p.wild { Fixed::Rest } else { Fixed::No },
                p.offset,
                p.scale,
            )
        })
        .collect()
}

fn read_anims(data: &[u8], h: &Header, text: &Text, ck: &mut Checker) -> Result<Vec<Animation>> {
    let ofs = h.get(H::OfsAnims);
    let bytes = block(
        data,
        ofs,
        h.get(H::NumAnims).into(),
        ANIM_SIZE,
        "anim table",
    )?;
    let nf = u64::from(h.get(H::NumFrames));
    let mut out = Vec::with_capacity(h.get(H::NumAnims) as usize);
    for (a, rec) in bytes.chunks_exact(ANIM_SIZE as usize).enumerate() {
        let at = record_at(ofs.into(), a, ANIM_SIZE);
        let name = text.name(u32_of(rec, 0), at, ck, || format!("anim {a} name"))?;
        let mut first = u32_of(rec, 4);
        let mut count = u32_of(rec, 8);
        let rate = rec.get(12..16).map_or(0.0, Le::read_f32);
        let flags = u32_of(rec, 16);
        if u64::from(first).saturating_add(u64::from(count)) > nf {
            ck.problem(
                Error::malformed(format!(
                    "anim {a} ({name}): frames {first}+{count} past the file's {nf}"
                ))
                .at(field_at(at, 4)),
            )?;
            first = 0;
            count = 0;
        }
        let fps = if rate.is_finite() && rate > 0.0 {
            rate
        } else {
            ck.tolerate(
                Error::malformed(format!(
                    "anim {a} ({name}): frame rate {rate}; played at {DEFAULT_FPS} fps as FTE \
                     does (DarkPlaces holds its first frame)"
                ))
                .at(field_at(at, 12)),
            )?;
            DEFAULT_FPS
        };
        out.push(Animation {
            name,
            // After the bind pose, frame 0 of the model.
            first_frame: first.saturating_add(1),
            frame_count: count,
            fps,
            looping: flags & 1 != 0,
            ..Animation::default()
        });
    }
    Ok(out)
}

/// The model's frames, its scenes, and the scene each anim became (None: left out).
type Scenes = (Vec<Frame>, Vec<Animation>, Vec<Option<u32>>);

/// The model's frames (the bind pose, then the file's frames, named by the anim that plays
/// them first, with their bounds) and its scenes.
fn scenes(
    anims: &[Animation],
    bounds: &[u8],
    file_frames: usize,
    ck: &mut Checker,
) -> Result<Scenes> {
    // Charged to the caller's limit already, but a limit may allow more than the machine has:
    // a failed allocation is an error, not an abort.
    let count = file_frames.saturating_add(1);
    let mut frames: Vec<Frame> = try_vec(count, || "the frames".to_string())?;
    frames.push(Frame::named("bind"));
    for f in 0..file_frames {
        let mut frame = Frame::named(&format!("frame {f}"));
        if let Some(b) = bounds.get(f.saturating_mul(32)..f.saturating_mul(32).saturating_add(32)) {
            let v = f32s::<8>(b, 0);
            if v.iter().all(|x| x.is_finite()) {
                frame.mins = [v[0], v[1], v[2]];
                frame.maxs = [v[3], v[4], v[5]];
                frame.yaw_radius = v[6];
                frame.radius = v[7];
            } else {
                ck.problem(Error::malformed(format!(
                    "bounds of frame {f}: a value is not a finite number"
                )))?;
            }
        }
        frames.push(frame);
    }
    let mut named = try_filled(frames.len(), false, || "the frames' names".to_string())?;
    for a in anims {
        for k in 0..a.frame_count {
            let f = a.first_frame.saturating_add(k) as usize;
            if let (Some(frame), Some(done)) = (frames.get_mut(f), named.get_mut(f))
                && !*done
            {
                frame.name = Name::from(format!("{} {k}", a.name).as_str());
                *done = true;
            }
        }
    }
    // An anim without frames has nothing to play: it is left out, and the scenes renumbered.
    let mut animations = Vec::with_capacity(anims.len());
    let mut scene_of_anim = Vec::with_capacity(anims.len());
    for (i, a) in anims.iter().enumerate() {
        if a.frame_count == 0 {
            ck.tolerate(Error::malformed(format!(
                "anim {i} ({}): no frames; it is left out",
                a.name
            )))?;
            scene_of_anim.push(None);
        } else {
            scene_of_anim.push(Some(animations.len() as u32));
            animations.push(a.clone());
        }
    }
    if anims.is_empty() && file_frames > 0 {
        // Frames without anims: one scene over them all, as FTE plays such a file.
        animations.push(Animation {
            name: Name::from("base"),
            first_frame: 1,
            frame_count: file_frames as u32,
            fps: DEFAULT_FPS,
            looping: true,
            ..Animation::default()
        });
    }
    Ok((frames, animations, scene_of_anim))
}

/// Each joint's inverse bind matrix, from the joints' parent-relative rest poses chained
/// through their parents; the identity where a bind pose has no inverse. What the reader puts
/// vertices in bind space with, and what the writer checks a file it writes against.
pub(super) fn inverse_binds(bones: &[Bone], local: &[Mat3x4]) -> Vec<Mat3x4> {
    let mut world = vec![Mat3x4::IDENTITY; local.len()];
    concat_into(bones, local, None, &mut world);
    world
        .iter()
        .map(|m| m.inverse().unwrap_or(Mat3x4::IDENTITY))
        .collect()
}

fn build_meshes(
    records: &[MeshRecord],
    triangles: &[u8],
    v: &Vertices,
    inverse_bind: &[Mat3x4],
    h: &Header,
    ck: &mut Checker,
) -> Result<Vec<MeshParts>> {
    let nv = h.get(H::NumVertexes);
    let nb = inverse_bind.len() as u32;
    let computed;
    let normals = match &v.normals {
        Some(n) => n,
        None => {
            computed = Column::Decoded(vertex_normals(&v.positions, triangles));
            &computed
        }
    };
    let mut reached_out = 0usize;
    let mut counts = WeightCounts::default();
    let space = BindSpace::new(inverse_bind);
    let mut out = Vec::with_capacity(records.len());
    // Each file vertex's number in the mesh being built, where a triangle reached it outside
    // the mesh's range (u32::MAX: not yet); made at the first such vertex, and charged with
    // the vertices at load.
    let mut copies: Vec<u32> = Vec::new();
    for (m, r) in records.iter().enumerate() {
        // The mesh's vertices: its own range, then any vertex of another mesh its triangles use.
        let mut order: Vec<u32> =
            (r.first_vertex..r.first_vertex.saturating_add(r.num_vertexes)).collect();
        let own = order.len();
        let mut indices = Vec::with_capacity((r.num_triangles as usize).saturating_mul(3));
        let first = r.first_triangle as usize;
        // The mesh's records lie inside the table (checked when its record was read).
        let own_triangles = triangles
            .get(first.saturating_mul(12)..)
            .unwrap_or_default()
            .as_chunks::<12>()
            .0
            .iter()
            .take(r.num_triangles as usize);
        for (t, rec) in (first..).zip(own_triangles) {
            let [a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3] = *rec;
            let file =
                [[a0, a1, a2, a3], [b0, b1, b2, b3], [c0, c1, c2, c3]].map(u32::from_le_bytes);
            // Most triangles use the mesh's own vertices only: taken without a branch a corner.
            let own = file.map(|i| i.wrapping_sub(r.first_vertex));
            if own.iter().all(|&l| l < r.num_vertexes) & file.iter().all(|&i| i < nv) {
                // IQM's front faces wind clockwise; ossa's counter-clockwise.
                indices.extend_from_slice(&[own[0], own[2], own[1]]);
                continue;
            }
            let mut corner = [0u32; 3];
            for (k, (c, mut i)) in corner.iter_mut().zip(file).enumerate() {
                if let Some(local) = i
                    .checked_sub(r.first_vertex)
                    .filter(|&l| l < r.num_vertexes && i < nv)
                {
                    *c = local;
                    continue;
                }
                if i >= nv {
                    ck.problem(
                        Error::malformed(format!(
                            "mesh {m} ({}) triangle {t} corner {k}: vertex {i} out of range \
                             (the file has {nv})",
                            r.name
                        ))
                        .at(record_at(
                            h.get(H::OfsTriangles).into(),
                            t.saturating_mul(3).saturating_add(k),
                            4,
                        )),
                    )?;
                    i = r.first_vertex;
                }
                *c = match i
                    .checked_sub(r.first_vertex)
                    .filter(|&l| l < r.num_vertexes)
                {
                    Some(local) => local,
                    None => {
                        if copies.is_empty() {
                            copies = vec![u32::MAX; nv as usize];
                        }
                        match copies.get_mut(i as usize) {
                            Some(slot) if *slot != u32::MAX => *slot,
                            Some(slot) => {
                                *slot = order.len() as u32;
                                order.push(i);
                                reached_out = reached_out.saturating_add(1);
                                *slot
                            }
                            None => 0,
                        }
                    }
                };
            }
            // IQM's front faces wind clockwise; ossa's counter-clockwise.
            let [a, b, c] = corner;
            indices.extend_from_slice(&[a, c, b]);
        }
        for &g in order.get(own..).unwrap_or_default() {
            if let Some(slot) = copies.get_mut(g as usize) {
                *slot = u32::MAX;
            }
        }
        let mesh = MeshVertices {
            m,
            name: &r.name,
            order: &order,
            own,
            positions: &v.positions,
            normals,
            inverse_bind,
        };
        let (influence_start, influences) = match &v.blends {
            // The tools' arrays: the weighted slots known from the bytes, no float compared.
            Some((Joints::Bytes(idx), Weights::Bytes(wts))) => {
                match mesh.byte_influences(&space, idx, wts, &mut counts) {
                    Some(made) => Ok(made),
                    None => mesh.influences(ck, &mut counts, |g| {
                        let (ix, w) = (idx.get(g).copied(), wts.get(g).copied());
                        byte_slots(ix.unwrap_or_default(), w.unwrap_or_default(), nb)
                    }),
                }
            }
            Some((idx, wts)) => {
                mesh.influences(ck, &mut counts, |g| float_slots(idx.get(g), wts.get(g), nb))
            }
            // Without blend arrays every vertex follows joint 0 alone.
            None => mesh.influences(ck, &mut counts, |_| Slots {
                ix: [0; 4],
                w: [1.0, 0.0, 0.0, 0.0],
                keep: 1,
                outside: false,
            }),
        }?;
        out.push(MeshParts {
            name: r.name.clone(),
            shader: r.material.clone(),
            influence_start,
            influences,
            indices,
            texcoords: v.texcoords.as_ref().map(|t| {
                order
                    .iter()
                    .map(|&g| t.get(g as usize).unwrap_or_default())
                    .collect()
            }),
            colors: pick(&v.colors, &order),
            ..MeshParts::default()
        });
    }
    if reached_out > 0 {
        ck.tolerate(Error::malformed(format!(
            "triangles use {reached_out} vertices of other meshes: each such mesh gets its own \
             copies (DarkPlaces indexes the whole file, FTE, QF and Red Eclipse read another \
             mesh's slice)"
        )))?;
    }
    let WeightCounts {
        zero: zero_weights,
        off: off_weights,
    } = counts;
    if zero_weights > 0 {
        ck.tolerate(Error::malformed(format!(
            "{zero_weights} vertices have blend weights summing to 0: each follows its first \
             joint alone, as DarkPlaces' CPU path and QF skin it"
        )))?;
    }
    if off_weights > 0 {
        ck.tolerate(Error::malformed(format!(
            "{off_weights} vertices have blend weights not summing to 1 (255): they are scaled \
             to 1"
        )))?;
    }
    Ok(out)
}

/// The number of bits set in each 4-bit mask (a table: `count_ones` is a loop of shifts on
/// processors the crate is built for by default).
const KEPT: [u8; 16] = [0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4];

/// The number of slots a 4-bit mask keeps.
#[inline(always)]
fn kept(keep: u32) -> u8 {
    KEPT.get(keep as usize & 15).copied().unwrap_or_default()
}

/// Each weight byte as a float, the bits `byte as f32 / 255.0` gives.
// Evaluated at compile time: an index past the table would not build.
#[allow(clippy::indexing_slicing)]
const BYTE_WEIGHTS: [f32; 256] = {
    let mut t = [0.0f32; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i as f32 / 255.0;
        i += 1;
    }
    t
};

/// A vertex's four blend slots, and which of them it keeps: weighted (`!(w <= 0)`, so a NaN
/// would count; none survives the finite check) and on a joint of the model.
#[derive(Clone, Copy)]
struct Slots {
    ix: [u32; 4],
    w: [f32; 4],
    /// Bit `k`: slot `k` is kept.
    keep: u32,
    /// A weighted slot names a joint past the model's.
    outside: bool,
}

/// The joint a vertex without weight follows alone: its first slot's, where the model has
/// that joint, else the first joint (DarkPlaces' CPU path and QF make it rigid so).
fn rigid_joint(first_slot: u32, nb: u32) -> u32 {
    if first_slot < nb { first_slot } else { 0 }
}

/// What a vertex's weights, summing to `sum`, are scaled by (1 within the rounding
/// `SUM_EXACT` allows), and whether they were off by more than `SUM_TOLERATED` (a warning).
fn scale_to_one(sum: f32) -> (f32, bool) {
    let off_by = (sum - 1.0).abs();
    let scale = if off_by > SUM_EXACT { 1.0 / sum } else { 1.0 };
    (scale, off_by > SUM_TOLERATED)
}

/// A vertex's influences from its weighted slots (some, not all the weight on slot 0, none
/// on a joint past the model's), pushed onto `influences`: the weights scaled to sum to 1 where
/// they do not. Whether they were off by more than the tolerated rounding.
#[inline(never)]
fn blend_bytes(
    space: &BindSpace,
    ix: [u8; 4],
    w: [u8; 4],
    p: [f32; 3],
    n: [f32; 3],
    influences: &mut Vec<Influence>,
    finite: &mut Finite,
) -> bool {
    let mut chosen = [(0u32, 0u8); 4];
    let mut used = 0usize;
    for (&b, &wk) in ix.iter().zip(&w) {
        if let Some(slot) = chosen.get_mut(used) {
            *slot = (u32::from(b), wk);
        }
        used = used.saturating_add(usize::from(wk != 0));
    }
    let chosen = chosen.get(..used).unwrap_or_default();
    let bytes: u32 = chosen.iter().map(|s| u32::from(s.1)).sum();
    // Byte weights summing to 255 sum to 1 within far less than `SUM_EXACT` as floats.
    let (scale, off) = if bytes == 255 {
        (1.0, false)
    } else {
        scale_to_one(chosen.iter().map(|s| byte_weight(s.1)).sum())
    };
    for &(b, wb) in chosen {
        let w = byte_weight(wb) * scale;
        influences.push(space.influence(b, w, p, n, finite));
    }
    off
}

/// The influences of vertices with joint bytes `ix` and weight bytes `w` (each weighted slot,
/// or the first joint alone where none is), and whether a weighted slot names a joint at or
/// past `nb`: loops the compiler vectorises, for most of the vertices of a load.
fn tally_slots(ix: &[[u8; 4]], w: &[[u8; 4]], nb: u32) -> (usize, bool) {
    let weighted = w
        .as_flattened()
        .iter()
        .map(|&b| usize::from(b != 0))
        .sum::<usize>();
    let unweighted = w.iter().map(|w| usize::from(*w == [0; 4])).sum::<usize>();
    let outside = match u8::try_from(nb) {
        // Every joint byte names a joint of a model of 256 or more.
        Err(_) => false,
        Ok(limit) => {
            let pairs = ix.as_flattened().iter().zip(w.as_flattened());
            pairs.fold(0u8, |bad, (&i, &wk)| {
                bad | u8::from((wk != 0) & (i >= limit))
            }) != 0
        }
    };
    (weighted.saturating_add(unweighted), outside)
}

/// A weight byte as a float: `byte as f32 / 255.0`.
#[inline(always)]
fn byte_weight(b: u8) -> f32 {
    BYTE_WEIGHTS
        .get(usize::from(b))
        .copied()
        .unwrap_or_default()
}

#[inline(always)]
fn byte_slots(ix: [u8; 4], w: [u8; 4], nb: u32) -> Slots {
    let (mut keep, mut outside) = (0u32, false);
    for (k, (&b, &wk)) in ix.iter().zip(&w).enumerate() {
        let (weighted, inside) = (wk != 0, u32::from(b) < nb);
        keep |= u32::from(weighted & inside) << k;
        outside |= weighted & !inside;
    }
    Slots {
        ix: ix.map(u32::from),
        w: w.map(|x| {
            BYTE_WEIGHTS
                .get(usize::from(x))
                .copied()
                .unwrap_or_default()
        }),
        keep,
        outside,
    }
}

#[inline(always)]
fn float_slots(ix: [u32; 4], w: [f32; 4], nb: u32) -> Slots {
    let (mut keep, mut outside) = (0u32, false);
    for (k, (&b, &wk)) in ix.iter().zip(&w).enumerate() {
        let weighted = wk > 0.0 || wk.is_nan();
        keep |= u32::from(weighted && b < nb) << k;
        outside |= weighted && b >= nb;
    }
    Slots {
        ix,
        w,
        keep,
        outside,
    }
}

/// Vertices whose weights were tolerated, over all meshes, for the load's warnings.
#[derive(Default)]
struct WeightCounts {
    /// Summing to 0.
    zero: usize,
    /// Not summing to 1.
    off: usize,
}

/// One mesh's vertices in the file's arrays, for making its influences.
struct MeshVertices<'a> {
    m: usize,
    name: &'a Name,
    order: &'a [u32],
    /// The first `own` of `order` are the mesh's own vertices, consecutive in the file.
    own: usize,
    positions: &'a Column<'a, 3>,
    normals: &'a Column<'a, 3>,
    inverse_bind: &'a [Mat3x4],
}

impl MeshVertices<'_> {
    /// [`MeshVertices::influences`] for the portable layout's blend bytes, in loops without an
    /// error path: the slots are counted over the mesh's bytes as they lie, the weights' byte
    /// sum tells whether they sum to 1, and finiteness is checked once for the mesh. `None` where
    /// a vertex needs [`MeshVertices::influences`] to report it (a weighted slot on a joint past
    /// the model's, a result that is not finite), which then runs instead; `counts` is only
    /// added to when this gives the influences.
    #[inline(never)]
    fn byte_influences(
        &self,
        space: &BindSpace,
        idx: &[[u8; 4]],
        wts: &[[u8; 4]],
        counts: &mut WeightCounts,
    ) -> Option<(Vec<u32>, Vec<Influence>)> {
        let nb = self.inverse_bind.len() as u32;
        if nb == 0 {
            return None;
        }
        // The influences counted (a vertex's weighted slots, or its first joint alone) before
        // any is made: over the bytes of the mesh's own vertices as they lie, then one by one
        // the vertices of other meshes its triangles use.
        let (own, others) = self.order.split_at(self.own.min(self.order.len()));
        let first = own.first().map_or(0, |&g| g as usize);
        let mut tally = tally_slots(
            idx.get(first..first.checked_add(own.len())?)?,
            wts.get(first..first.checked_add(own.len())?)?,
            nb,
        );
        for &g in others {
            let g = g as usize;
            let one = tally_slots(idx.get(g..=g)?, wts.get(g..=g)?, nb);
            tally = (tally.0.saturating_add(one.0), tally.1 | one.1);
        }
        let (count, outside) = tally;
        if outside {
            return None;
        }
        let mut influence_start = Vec::with_capacity(self.order.len().saturating_add(1));
        influence_start.push(0u32);
        let mut influences: Vec<Influence> = Vec::with_capacity(count);
        let (mut zero, mut off, mut finite) = (0usize, 0usize, Finite::new());
        for &g in self.order {
            let g = g as usize;
            let p = self.positions.get(g).unwrap_or_default();
            let n = self.normals.get(g).unwrap_or_default();
            let (ix, w) = (
                idx.get(g).copied().unwrap_or_default(),
                wts.get(g).copied().unwrap_or_default(),
            );
            let weights = u32::from_le_bytes(w);
            if weights == 0xff || weights == 0 {
                // One joint, all the weight (most vertices of most models), or no weight at
                // all: rigid on the first joint, as DarkPlaces' CPU path and QF do.
                zero = zero.saturating_add(usize::from(weights == 0));
                let b = rigid_joint(u32::from(ix[0]), nb);
                influences.push(space.influence(b, 1.0, p, n, &mut finite));
                influence_start.push(influences.len() as u32);
                continue;
            }
            let blend_off = usize::from(blend_bytes(
                space,
                ix,
                w,
                p,
                n,
                &mut influences,
                &mut finite,
            ));
            off = off.saturating_add(blend_off);
            influence_start.push(influences.len() as u32);
        }
        if !finite.all() {
            return None;
        }
        counts.zero = counts.zero.saturating_add(zero);
        counts.off = counts.off.saturating_add(off);
        Some((influence_start, influences))
    }

    /// Every vertex's influences in bind space, and where each vertex's start; `slots` reads
    /// a file vertex's blend slots (one function a kind of blend array, so that the loop is
    /// made for each).
    #[inline(always)]
    fn influences(
        &self,
        ck: &mut Checker,
        counts: &mut WeightCounts,
        slots: impl Fn(usize) -> Slots,
    ) -> Result<(Vec<u32>, Vec<Influence>)> {
        let nb = self.inverse_bind.len() as u32;
        // Counted first, so that the influences are made in room reserved exactly.
        let count = total(
            self.order
                .iter()
                .map(|&g| u64::from(kept(slots(g as usize).keep).max(1))),
        );
        let mut influence_start = Vec::with_capacity(self.order.len().saturating_add(1));
        influence_start.push(0u32);
        let mut influences: Vec<Influence> =
            Vec::with_capacity(usize::try_from(count).unwrap_or_default());
        for (local, &g) in self.order.iter().enumerate() {
            let g = g as usize;
            let p = self.positions.get(g).unwrap_or_default();
            let n = self.normals.get(g).unwrap_or_default();
            let Slots {
                ix,
                w,
                keep,
                outside,
            } = slots(g);
            if outside {
                let at = || {
                    format!(
                        "mesh {} ({}) vertex {local} (file vertex {g})",
                        self.m, self.name
                    )
                };
                joints_out_of_range(ix, w, nb, at, ck)?;
            }
            let mut chosen = [(ix[0], w[0]), (ix[1], w[1]), (ix[2], w[2]), (ix[3], w[3])];
            let mut used = usize::from(kept(keep));
            if keep & keep.wrapping_add(1) != 0 {
                // A kept slot after one that is not (the tools put the weighted first): the
                // kept ones moved down, in slot order.
                let mut n = 0usize;
                for (k, slot) in [(ix[0], w[0]), (ix[1], w[1]), (ix[2], w[2]), (ix[3], w[3])]
                    .into_iter()
                    .enumerate()
                {
                    if keep & (1 << k) != 0
                        && let Some(s) = chosen.get_mut(n)
                    {
                        *s = slot;
                        n = n.saturating_add(1);
                    }
                }
            }
            if used == 0 {
                counts.zero = counts.zero.saturating_add(1);
                chosen[0] = (rigid_joint(ix[0], nb), 1.0);
                used = 1;
            }
            let chosen = chosen.get(..used).unwrap_or_default();
            let (scale, off) = scale_to_one(chosen.iter().map(|s| s.1).sum());
            counts.off = counts.off.saturating_add(usize::from(off));
            for &(b, w) in chosen {
                let w = w * scale;
                let inv = self
                    .inverse_bind
                    .get(b as usize)
                    .copied()
                    .unwrap_or(Mat3x4::IDENTITY);
                let origin = inv.transform_point(p).map(|x| x * w);
                let normal = inv.transform_vector(n).map(|x| x * w);
                if !all_finite(origin.iter().chain(&normal).map(|x| x.to_bits())) {
                    return Err(not_finite_in_bind_space(self.m, self.name, local, b));
                }
                influences.push(Influence {
                    origin,
                    weight: w,
                    normal,
                    bone: b,
                });
            }
            influence_start.push(influences.len() as u32);
        }
        Ok((influence_start, influences))
    }
}

/// The problems of a vertex some of whose weighted slots name a joint past the model's `nb`,
/// in slot order; `at` names the vertex. Out of the vertex loop: it runs only for broken files.
#[cold]
#[inline(never)]
fn joints_out_of_range(
    ix: [u32; 4],
    w: [f32; 4],
    nb: u32,
    at: impl Fn() -> String,
    ck: &mut Checker,
) -> Result<()> {
    for (k, (&b, &wk)) in ix.iter().zip(&w).enumerate() {
        if (wk > 0.0 || wk.is_nan()) && b >= nb {
            ck.problem(Error::malformed(format!(
                "{} slot {k}: joint {b} out of range (the model has {nb})",
                at()
            )))?;
        }
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn not_finite_in_bind_space(m: usize, mesh: &Name, local: usize, b: u32) -> Error {
    Error::malformed(format!(
        "mesh {m} ({mesh}) vertex {local}: its position in joint {b}'s bind space is not a \
         finite float (the position or the joint's transform is too large)"
    ))
}

/// A per-vertex list in the file's numbering, taken in a mesh's vertex order.
fn pick<T: Copy + Default>(list: &Option<Vec<T>>, order: &[u32]) -> Option<Vec<T>> {
    list.as_ref().map(|l| {
        order
            .iter()
            .map(|&g| l.get(g as usize).copied().unwrap_or_default())
            .collect()
    })
}

/// Area-weighted vertex normals, for a file without a normal array.
fn vertex_normals(positions: &Column<3>, triangles: &[u8]) -> Vec<[f32; 3]> {
    let mut acc = vec![[0.0f64; 3]; positions.len()];
    for t in triangles.chunks_exact(12) {
        let ix = [u32_of(t, 0), u32_of(t, 4), u32_of(t, 8)];
        let p = |i: u32| positions.get(i as usize).unwrap_or_default().map(f64::from);
        let (a, b, c) = (p(ix[0]), p(ix[1]), p(ix[2]));
        let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let w = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        // Clockwise front faces: the normal is (c - a) x (b - a).
        let n = [
            w[1] * u[2] - w[2] * u[1],
            w[2] * u[0] - w[0] * u[2],
            w[0] * u[1] - w[1] * u[0],
        ];
        for &i in &ix {
            if let Some(s) = acc.get_mut(i as usize) {
                for (sk, nk) in s.iter_mut().zip(n) {
                    *sk += nk;
                }
            }
        }
    }
    acc.into_iter()
        .map(|n| {
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            if len > 0.0 && len.is_finite() {
                n.map(|c| (c / len) as f32)
            } else {
                [0.0; 3]
            }
        })
        .collect()
}

/// The extension list (FTE's): `FTE_EVENT` becomes the scenes' events and `FTE_SKINS` the
/// meshes' skins; the others, and the comment, are kept as bytes for saving (and named in a
/// note), with the text block where one of them may point into it.
fn read_extensions(
    data: &[u8],
    h: &Header,
    text: &Text,
    scene_of_anim: &[Option<u32>],
    parts: &mut ModelParts,
    ck: &mut Checker,
) -> Result<()> {
    let num_anims = scene_of_anim.len();
    let mut ofs = h.get(H::OfsExtensions);
    let mut kept = Kept {
        comment: block(
            data,
            h.get(H::OfsComment),
            h.get(H::NumComment).into(),
            1,
            "comment",
        )?
        .to_vec(),
        ..Kept::default()
    };
    ck.reserve(
        ck.charged().saturating_add(kept.comment.len() as u64),
        "the comment kept",
    )?;
    let mut skins_read = false;
    for e in 0..h.get(H::NumExtensions) {
        if ofs == 0 {
            break;
        }
        let rec = block(data, ofs, 1, EXTENSION_SIZE, &format!("extension {e}"))?;
        let at = u64::from(ofs);
        let name = text.name(u32_of(rec, 0), at, ck, || format!("extension {e} name"))?;
        let size = u32_of(rec, 4);
        let body = block(
            data,
            u32_of(rec, 8),
            size.into(),
            1,
            &format!("extension {e} ({name}) data"),
        )?;
        let body_at = u64::from(u32_of(rec, 8));
        match name.as_bytes() {
            b"FTE_EVENT" => {
                if body.len() % 16 != 0 {
                    ck.tolerate(Error::malformed(format!(
                        "extension {e} (FTE_EVENT): {} bytes, not a multiple of 16; FTE ignores it",
                        body.len()
                    )).at(field_at(at, 4)))?;
                } else {
                    for (k, ev) in body.chunks_exact(16).enumerate() {
                        let anim = u32_of(ev, 0);
                        let time = ev.get(4..8).map_or(0.0, Le::read_f32);
                        let code = u32_of(ev, 8);
                        let value =
                            text.name(u32_of(ev, 12), at, ck, || format!("FTE_EVENT {k} data"))?;
                        let scene = scene_of_anim.get(anim as usize).copied().flatten();
                        let Some(scene) = scene.filter(|_| time.is_finite()) else {
                            ck.tolerate(Error::malformed(format!(
                                "FTE_EVENT {k}: anim {anim} or time {time} out of range ({num_anims} anims); \
                                 the event is dropped"
                            )))?;
                            continue;
                        };
                        parts.events.push(AnimationEvent {
                            animation: scene,
                            time,
                            bone: -1,
                            key: Name::from(code.to_string().as_str()),
                            value,
                        });
                    }
                }
            }
            // FTE reads the first FTE_SKINS only.
            b"FTE_SKINS" if !skins_read => {
                skins_read = true;
                read_fte_skins(body, body_at, h, text, parts, ck)?;
            }
            _ => {
                ck.reserve(
                    ck.charged().saturating_add(body.len() as u64),
                    "the extensions kept",
                )?;
                kept.extensions.push(KeptExtension {
                    name,
                    data: body.to_vec(),
                });
            }
        }
        ofs = u32_of(rec, 12);
    }
    if !kept.extensions.is_empty() {
        ck.note(format!(
            "extensions ossa does not use, kept for saving as IQM: {}",
            (kept.extensions.iter())
                .map(|x| x.name.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        // Their data may name strings by offset into the text block.
        kept.text = text.bytes.to_vec();
    }
    parts.kept = kept;
    Ok(())
}

/// `FTE_SKINS` (FTE's `Mod_ParseIQMMeshModel`): `numskinframes`, `nummeshskins`, each mesh's
/// skin count, the skin frames (material, shader text) and the mesh skins (first frame, frame
/// count, interval), in exactly that many bytes. A mesh's skins are read up to the first that
/// FTE would stop at (no frames, or frames past the table), each frame charged as it is kept.
fn read_fte_skins(
    body: &[u8],
    body_at: u64,
    h: &Header,
    text: &Text,
    parts: &mut ModelParts,
    ck: &mut Checker,
) -> Result<()> {
    let num_meshes = u64::from(h.get(H::NumMeshes));
    let num_frames = u64::from(u32_of(body, 0));
    let num_skins = u64::from(u32_of(body, 4));
    let want = 8u64
        .saturating_add(num_meshes.saturating_mul(4))
        .saturating_add(num_frames.saturating_mul(8))
        .saturating_add(num_skins.saturating_mul(12));
    // Byte `k` of the body as an index (every one below is inside it once the size is checked).
    let word = |at: u64| u32_of(body, usize::try_from(at).unwrap_or(usize::MAX));
    let counts: Vec<u64> = (0..num_meshes.min(body.len() as u64 / 4))
        .map(|m| u64::from(word(m.saturating_mul(4).saturating_add(8))))
        .collect();
    let listed = total(counts.iter().copied());
    if body.len() < 8 || want != body.len() as u64 || listed != num_skins {
        return ck.tolerate(
            Error::malformed(format!(
                "FTE_SKINS: {} bytes, {num_frames} skin frames and {num_skins} mesh skins \
                 ({listed} listed by the meshes) for {num_meshes} meshes, which need {want} \
                 bytes; FTE ignores it, and so does ossa",
                body.len()
            ))
            .at(body_at),
        );
    }
    let frames_at = num_meshes.saturating_mul(4).saturating_add(8);
    let skins_at = num_frames.saturating_mul(8).saturating_add(frames_at);
    let mut next = 0u64;
    for (m, &count) in counts.iter().enumerate() {
        let first = next;
        next = next.saturating_add(count);
        let mut skins = Vec::new();
        for k in first..next {
            let rec = k.saturating_mul(12).saturating_add(skins_at);
            let (start, n) = (u64::from(word(rec)), u64::from(word(rec.saturating_add(4))));
            let interval = f32::from_bits(word(rec.saturating_add(8)));
            let end = start.saturating_add(n);
            if n == 0 || end > num_frames || !interval.is_finite() {
                ck.tolerate(
                    Error::malformed(format!(
                        "FTE_SKINS mesh {m} skin {}: frames {start}..{end} of {num_frames}, \
                         interval {interval}; FTE stops at it, and so does ossa",
                        k.saturating_sub(first),
                    ))
                    .at(body_at.saturating_add(rec)),
                )?;
                break;
            }
            ck.reserve(
                ck.charged()
                    .saturating_add(n.saturating_mul(size_of::<SkinFrame>() as u64)),
                "FTE_SKINS",
            )?;
            let mut frames = Vec::with_capacity(usize::try_from(n).unwrap_or_default());
            for f in start..end {
                let rec = f.saturating_mul(8).saturating_add(frames_at);
                let what = || format!("FTE_SKINS skin frame {f}");
                let frame_at = body_at.saturating_add(rec);
                frames.push(SkinFrame {
                    material: text.name(word(rec), frame_at, ck, what)?,
                    shader_text: text.name(word(rec.saturating_add(4)), frame_at, ck, what)?,
                });
            }
            skins.push(MeshSkin { frames, interval });
        }
        if let Some(mesh) = parts.meshes.get_mut(m) {
            mesh.skins = skins;
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::super::bind::tests::joints;
    use super::*;

    fn words(values: &[f32]) -> Vec<[u8; 4]> {
        values.iter().map(|v| v.to_le_bytes()).collect()
    }

    /// The fast path for blend bytes and the general loop give the same influences, bits and
    /// all, and the same counts, on every kind of slot list: one joint, no weight (on a joint
    /// of the model and past it), blends summing to 255, to less (scaled, tolerated or not),
    /// weights on later slots only, and a vertex of another mesh after the mesh's own.
    #[test]
    fn blend_bytes_give_the_general_loops_influences() {
        let slots: [([u8; 4], [u8; 4]); 9] = [
            ([1, 0, 0, 0], [255, 0, 0, 0]),
            ([2, 0, 0, 0], [0, 0, 0, 0]),
            ([7, 1, 0, 0], [0, 0, 0, 0]),
            ([0, 2, 0, 0], [128, 127, 0, 0]),
            ([1, 2, 0, 0], [100, 50, 0, 0]),
            ([9, 9, 0, 1], [0, 0, 200, 55]),
            ([0, 1, 2, 0], [85, 85, 85, 0]),
            ([2, 0, 0, 0], [254, 0, 0, 0]),
            ([1, 0, 2, 0], [3, 0, 250, 0]),
        ];
        let n = slots.len();
        let positions: Vec<f32> = (0..n * 3).map(|i| (i as f32 * 0.77).sin() * 13.0).collect();
        let normals: Vec<[f32; 3]> = (0..n)
            .map(|v| {
                let a = v as f32 * 0.9;
                [a.cos() * 0.6, 0.8, a.sin() * 0.6]
            })
            .collect();
        let (idx, wts): (Vec<[u8; 4]>, Vec<[u8; 4]>) = slots.iter().copied().unzip();
        let inverse_bind = joints();
        let position_words = words(&positions);
        let (positions, normals) = (
            Column::<3>::File(&position_words),
            Column::<3>::Decoded(normals),
        );
        let name = Name::new(b"m");
        // The mesh's own vertices 1 to 8, then vertex 0 of another mesh.
        let order: Vec<u32> = (1..9).chain([0]).collect();
        let mesh = MeshVertices {
            m: 0,
            name: &name,
            order: &order,
            own: 8,
            positions: &positions,
            normals: &normals,
            inverse_bind: &inverse_bind,
        };
        let mut fast_counts = WeightCounts::default();
        let fast = mesh
            .byte_influences(&BindSpace::new(&inverse_bind), &idx, &wts, &mut fast_counts)
            .expect("every slot is on a joint of the model");
        let mut ck = Checker::for_sidecar("m.iqm".into(), false, u64::MAX);
        let mut counts = WeightCounts::default();
        let general = mesh
            .influences(&mut ck, &mut counts, |g| {
                let (ix, w) = (idx[g], wts[g]);
                byte_slots(ix, w, inverse_bind.len() as u32)
            })
            .unwrap();
        assert_eq!(fast.0, general.0);
        let bits = |i: &Influence| {
            (
                i.origin.map(f32::to_bits),
                i.weight.to_bits(),
                i.normal.map(f32::to_bits),
                i.bone,
            )
        };
        assert_eq!(
            fast.1.iter().map(bits).collect::<Vec<_>>(),
            general.1.iter().map(bits).collect::<Vec<_>>()
        );
        assert_eq!(fast.0, [0, 1, 2, 4, 6, 8, 11, 12, 14, 15]);
        // Values worked out here rather than by either path. File vertex 1 has no weight:
        // rigid on its first slot's joint 2, which scales by 2.5 and moves by (-0.75, 0.125, 3).
        let p1: Vec<f32> = (3..6).map(|i| (i as f32 * 0.77).sin() * 13.0).collect();
        let a = 0.9f32;
        let n1 = [a.cos() * 0.6, 0.8, a.sin() * 0.6];
        let first = fast.1[0];
        assert_eq!(
            (first.bone, first.weight),
            (2, 1.0),
            "rigid on the first slot's joint"
        );
        assert_eq!(
            first.origin,
            [2.5 * p1[0] - 0.75, 2.5 * p1[1] + 0.125, 2.5 * p1[2] + 3.0]
        );
        assert_eq!(first.normal, [2.5 * n1[0], 2.5 * n1[1], 2.5 * n1[2]]);
        // File vertex 2 has no weight and its first slot names joint 7, past the model's 3:
        // joint 0 alone.
        assert_eq!((fast.1[1].bone, fast.1[1].weight), (0, 1.0));
        // File vertex 4 weighs 100 and 50 of 255 on joints 1 and 2: scaled to 2/3 and 1/3.
        let [a, b] = [fast.1[4], fast.1[5]];
        assert_eq!((a.bone, b.bone), (1, 2));
        assert!((a.weight - 2.0 / 3.0).abs() < 1e-6 && (b.weight - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!((fast_counts.zero, fast_counts.off), (2, 1));
        assert_eq!(
            (fast_counts.zero, fast_counts.off),
            (counts.zero, counts.off)
        );
    }

    /// What the general loop reports is left to it: a weighted slot past the joints, and an
    /// influence that is not finite.
    #[test]
    fn blend_bytes_leave_what_must_be_reported_to_the_general_loop() {
        let position_words = words(&[1.0, 2.0, 3.0, 2.0, 2.0, 3.0]);
        let positions = Column::<3>::File(&position_words);
        let normals = Column::<3>::Decoded(vec![[0.0, 0.0, 1.0]; 2]);
        let name = Name::new(b"m");
        let order = [0u32, 1];
        let inverse_bind = joints();
        let mesh = MeshVertices {
            m: 0,
            name: &name,
            order: &order,
            own: 2,
            positions: &positions,
            normals: &normals,
            inverse_bind: &inverse_bind,
        };
        let space = BindSpace::new(&inverse_bind);
        let mut counts = WeightCounts::default();
        let past = [[0, 3, 0, 0], [0, 0, 0, 0]];
        let weights = [[200, 55, 0, 0], [255, 0, 0, 0]];
        assert!(
            mesh.byte_influences(&space, &past, &weights, &mut counts)
                .is_none()
        );
        // Unweighted, joint 3 is no problem.
        let unweighted = [[200, 0, 0, 0], [255, 0, 0, 0]];
        assert!(
            mesh.byte_influences(&space, &past, &unweighted, &mut counts)
                .is_some()
        );
        let huge = [Mat3x4 {
            m: [3e38, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
        }];
        let mesh = MeshVertices {
            inverse_bind: &huge,
            ..mesh
        };
        let mut counts = WeightCounts::default();
        let joint_0 = [[0; 4]; 2];
        assert!(
            mesh.byte_influences(&BindSpace::new(&huge), &joint_0, &weights, &mut counts)
                .is_none(),
            "3e38 times 2 is an infinity"
        );
        assert_eq!((counts.zero, counts.off), (0, 0), "counted only on success");
    }
}
