//! Inter-Quake Model (`.iqm`, versions 1 and 2) read again for the tests, straight from
//! FORMATS.md §9 and the SDK's `iqm.txt`, without ossa's reader, types or math (so that a
//! misreading of the format cannot hide in both, and files ossa writes can be checked by code
//! that shares nothing with it):
//!
//! - [`parse`] reads every block the header names and checks what the format asks: the magic,
//!   version 1 or 2, `filesize` equal to the length, every table (`ofs_*` + count x size) inside
//!   the file and past the header, string offsets inside the text block, joint and pose parents
//!   before their child (or negative: a root), mesh ranges inside the vertex and triangle
//!   arrays, triangle indices below `num_vertexes`, adjacency below `num_triangles` (or
//!   `0xFFFFFFFF`), blend indexes below `num_joints`, anims inside the frames, and
//!   `num_framechannels` equal to the set mask bits over all poses;
//! - the standard vertex arrays (position, texcoord, normal, tangent, blendindexes,
//!   blendweights, color) are read in any of the nine component formats, converted to f64;
//! - the poses' channels are decoded per frame into local (translate, rotate, scale) of f64;
//! - [`bind_matrices`], [`frame_matrices`] and [`skin`] are the spec's meaning written out
//!   plainly: a local transform is `v' = R(q) (s ⊙ v) + t`, model space is the parent's matrix
//!   times the child's, and a vertex at a frame is `p' = Σ_k w_k A_{i_k} B_{i_k}^-1 p`.
//!
//! Version 1 files are read as version 2 would say the same: a v1 joint keeps `x, y, z` of its
//! rotation and `w = -sqrt(max(1 - (x² + y² + z²), 0))`; a v1 pose has nine channels (bits 0-2
//! translation, 3-5 rotation x, y, z, 6-8 scale) and `w` is derived the same way from each
//! frame's decoded `x, y, z`.
//!
//! Malformed input is an `Err` saying where the reader gave up, never a panic.
//!
//! The test crate declares `mod ref_math` next to this module. Each test binary uses a different
//! subset of it.
#![allow(dead_code)]

use std::collections::HashSet;

// The textbook quaternion matrix the other reference readers use.
use crate::ref_math;

// ---------------------------------------------------------------------------------------------
// Little-endian reads
// ---------------------------------------------------------------------------------------------

fn bytes_at(d: &[u8], at: usize, n: usize) -> Result<&[u8], String> {
    at.checked_add(n)
        .and_then(|end| d.get(at..end))
        .ok_or_else(|| format!("{n} bytes at {at} run past the end ({})", d.len()))
}

fn u16_at(d: &[u8], at: usize) -> Result<u16, String> {
    bytes_at(d, at, 2).map(|b| u16::from_le_bytes([b[0], b[1]]))
}

fn u32_at(d: &[u8], at: usize) -> Result<u32, String> {
    bytes_at(d, at, 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn i32_at(d: &[u8], at: usize) -> Result<i32, String> {
    u32_at(d, at).map(|v| v as i32)
}

fn u64_at(d: &[u8], at: usize) -> Result<u64, String> {
    bytes_at(d, at, 8).map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
}

fn f32_at(d: &[u8], at: usize) -> Result<f64, String> {
    u32_at(d, at).map(|v| f64::from(f32::from_bits(v)))
}

fn f32s<const N: usize>(d: &[u8], at: usize) -> Result<[f64; N], String> {
    let mut out = [0.0; N];
    for (k, x) in out.iter_mut().enumerate() {
        *x = f32_at(d, at + 4 * k)?;
    }
    Ok(out)
}

/// An IEEE 754 half (binary16) as f64: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
pub fn half_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x3ff);
    sign * match exp {
        0 => mant * 2f64.powi(-24),
        31 if mant == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + mant / 1024.0) * 2f64.powi(exp - 15),
    }
}

// ---------------------------------------------------------------------------------------------
// Header (FORMATS.md §9.1)
// ---------------------------------------------------------------------------------------------

pub const MAGIC: &[u8; 16] = b"INTERQUAKEMODEL\0";
pub const HEADER_SIZE: usize = 124;

/// The header's 27 `u32`s after the magic, as stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub version: u32,
    pub filesize: u32,
    pub flags: u32,
    pub num_text: u32,
    pub ofs_text: u32,
    pub num_meshes: u32,
    pub ofs_meshes: u32,
    pub num_vertexarrays: u32,
    pub num_vertexes: u32,
    pub ofs_vertexarrays: u32,
    pub num_triangles: u32,
    pub ofs_triangles: u32,
    pub ofs_adjacency: u32,
    pub num_joints: u32,
    pub ofs_joints: u32,
    pub num_poses: u32,
    pub ofs_poses: u32,
    pub num_anims: u32,
    pub ofs_anims: u32,
    pub num_frames: u32,
    pub num_framechannels: u32,
    pub ofs_frames: u32,
    pub ofs_bounds: u32,
    pub num_comment: u32,
    pub ofs_comment: u32,
    pub num_extensions: u32,
    pub ofs_extensions: u32,
}

impl Header {
    fn read(d: &[u8]) -> Result<Header, String> {
        if d.len() < HEADER_SIZE {
            return Err(format!(
                "{} bytes: shorter than the {HEADER_SIZE}-byte header",
                d.len()
            ));
        }
        let mut v = [0u32; 27];
        for (k, x) in v.iter_mut().enumerate() {
            *x = u32_at(d, 16 + 4 * k)?;
        }
        Ok(Header {
            version: v[0],
            filesize: v[1],
            flags: v[2],
            num_text: v[3],
            ofs_text: v[4],
            num_meshes: v[5],
            ofs_meshes: v[6],
            num_vertexarrays: v[7],
            num_vertexes: v[8],
            ofs_vertexarrays: v[9],
            num_triangles: v[10],
            ofs_triangles: v[11],
            ofs_adjacency: v[12],
            num_joints: v[13],
            ofs_joints: v[14],
            num_poses: v[15],
            ofs_poses: v[16],
            num_anims: v[17],
            ofs_anims: v[18],
            num_frames: v[19],
            num_framechannels: v[20],
            ofs_frames: v[21],
            ofs_bounds: v[22],
            num_comment: v[23],
            ofs_comment: v[24],
            num_extensions: v[25],
            ofs_extensions: v[26],
        })
    }

    /// Every `ofs_*` field with its name, in header order.
    pub fn offsets(&self) -> [(&'static str, u32); 12] {
        [
            ("ofs_text", self.ofs_text),
            ("ofs_meshes", self.ofs_meshes),
            ("ofs_vertexarrays", self.ofs_vertexarrays),
            ("ofs_triangles", self.ofs_triangles),
            ("ofs_adjacency", self.ofs_adjacency),
            ("ofs_joints", self.ofs_joints),
            ("ofs_poses", self.ofs_poses),
            ("ofs_anims", self.ofs_anims),
            ("ofs_frames", self.ofs_frames),
            ("ofs_bounds", self.ofs_bounds),
            ("ofs_comment", self.ofs_comment),
            ("ofs_extensions", self.ofs_extensions),
        ]
    }
}

// ---------------------------------------------------------------------------------------------
// The model as read
// ---------------------------------------------------------------------------------------------

/// Vertex array types (`iqm.txt`); `>= CUSTOM` names its type by text offset `type - CUSTOM`.
pub const POSITION: u32 = 0;
pub const TEXCOORD: u32 = 1;
pub const NORMAL: u32 = 2;
pub const TANGENT: u32 = 3;
pub const BLENDINDEXES: u32 = 4;
pub const BLENDWEIGHTS: u32 = 5;
pub const COLOR: u32 = 6;
pub const CUSTOM: u32 = 0x10;

/// Component formats.
pub const BYTE: u32 = 0;
pub const UBYTE: u32 = 1;
pub const SHORT: u32 = 2;
pub const USHORT: u32 = 3;
pub const INT: u32 = 4;
pub const UINT: u32 = 5;
pub const HALF: u32 = 6;
pub const FLOAT: u32 = 7;
pub const DOUBLE: u32 = 8;

/// `anim.flags` bit 0.
pub const IQM_LOOP: u32 = 1;

/// The bytes of one component of `format`, `None` for a format the spec does not list.
pub fn format_size(format: u32) -> Option<usize> {
    match format {
        BYTE | UBYTE => Some(1),
        SHORT | USHORT | HALF => Some(2),
        INT | UINT | FLOAT => Some(4),
        DOUBLE => Some(8),
        _ => None,
    }
}

/// The value an integer format's largest value stands for when it carries a fraction of 1
/// (blend weights, colors); `None` for half, float and double, which are taken as they are.
fn unit_divisor(format: u32) -> Option<f64> {
    match format {
        BYTE => Some(127.0),
        UBYTE => Some(255.0),
        SHORT => Some(32767.0),
        USHORT => Some(65535.0),
        INT => Some(2147483647.0),
        UINT => Some(4294967295.0),
        _ => None,
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    pub name: String,
    pub material: String,
    pub first_vertex: u32,
    pub num_vertexes: u32,
    pub first_triangle: u32,
    pub num_triangles: u32,
}

/// A vertex array's descriptor as stored (20 bytes), with a custom type's name.
#[derive(Clone, Debug, PartialEq)]
pub struct VertexArray {
    pub kind: u32,
    pub flags: u32,
    pub format: u32,
    pub size: u32,
    pub offset: u32,
    /// The name of a custom type (`kind >= CUSTOM`).
    pub custom_name: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    pub name: String,
    /// Negative: a root.
    pub parent: i32,
    pub translate: [f64; 3],
    /// `(x, y, z, w)`, normalised (a v1 joint's `w` derived first).
    pub rotate: [f64; 4],
    pub scale: [f64; 3],
}

/// A pose's channel description as stored: `offset.len() == scale.len()` is 10 in version 2
/// (0-2 translation, 3-6 rotation x, y, z, w, 7-9 scale) and 9 in version 1 (no w).
#[derive(Clone, Debug, PartialEq)]
pub struct Pose {
    /// Negative: a root.
    pub parent: i32,
    pub mask: u32,
    pub offset: Vec<f64>,
    pub scale: Vec<f64>,
}

/// A local transform: `v' = R(rotate) (scale ⊙ v) + translate`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trs {
    pub translate: [f64; 3],
    /// `(x, y, z, w)`, normalised.
    pub rotate: [f64; 4],
    pub scale: [f64; 3],
}

#[derive(Clone, Debug, PartialEq)]
pub struct Anim {
    pub name: String,
    pub first_frame: u32,
    pub num_frames: u32,
    pub framerate: f64,
    pub flags: u32,
}

impl Anim {
    pub fn looping(&self) -> bool {
        self.flags & IQM_LOOP != 0
    }
}

/// One frame's bounds; radii are measured from the model origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub bbmin: [f64; 3],
    pub bbmax: [f64; 3],
    pub xyradius: f64,
    pub radius: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Extension {
    pub name: String,
    pub data: Vec<u8>,
    /// Where its 16-byte node is.
    pub node: u32,
}

/// An IQM file as read by [`parse`]. Per-vertex arrays are in the file's (global) vertex order,
/// `None` when the file has no such array; their components are the stored values converted to
/// f64 (a short normal of 7 reads 7.0), except colors and blend weights, which integer formats
/// store as a fraction of their largest value.
#[derive(Clone, Debug)]
pub struct Iqm {
    pub header: Header,
    /// 1 or 2.
    pub version: u32,
    /// The text block, as stored.
    pub text: Vec<u8>,
    pub meshes: Vec<Mesh>,
    /// Every descriptor, in file order (custom ones too, whose data is not read).
    pub vertex_arrays: Vec<VertexArray>,
    pub num_vertexes: usize,
    pub positions: Option<Vec<[f64; 3]>>,
    pub texcoords: Option<Vec<[f64; 2]>>,
    pub normals: Option<Vec<[f64; 3]>>,
    /// `w` is the bitangent's sign.
    pub tangents: Option<Vec<[f64; 4]>>,
    /// Integer formats as a fraction of their largest value (ubyte / 255).
    pub colors: Option<Vec<[f64; 4]>>,
    pub blend_indexes: Option<Vec<[u32; 4]>>,
    /// Integer formats as a fraction of their largest value (ubyte / 255), floats as stored.
    pub blend_weights: Option<Vec<[f64; 4]>>,
    /// Indices into the whole vertex arrays.
    pub triangles: Vec<[u32; 3]>,
    /// Per triangle, the neighbour across edge k (vertex k to vertex k + 1), `0xFFFFFFFF` none.
    pub adjacency: Option<Vec<[u32; 3]>>,
    pub joints: Vec<Joint>,
    pub poses: Vec<Pose>,
    /// The frames block as stored: `num_frames * num_framechannels` values, frame f's from
    /// index `f * num_framechannels`.
    pub frame_data: Vec<u16>,
    /// `frames[f][j]`: pose `j`'s local transform at frame `f`.
    pub frames: Vec<Vec<Trs>>,
    pub anims: Vec<Anim>,
    /// One per frame, when `ofs_bounds != 0`.
    pub bounds: Option<Vec<Bounds>>,
    pub comment: Vec<u8>,
    /// In list order.
    pub extensions: Vec<Extension>,
    /// Where the furthest block read ends: cutting the file below it loses data.
    pub extent: usize,
}

/// The most pose values (frames x poses, a frame without poses counting one) this reader
/// decodes: a file with no frame channels names any number of frames in no bytes at all.
pub const MAX_DECODED_POSES: usize = 1 << 22;

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/// The bytes with the furthest end of any block read so far.
struct Reader<'a> {
    d: &'a [u8],
    extent: usize,
}

impl Reader<'_> {
    /// The start of `count` records of `size` bytes named `what` at `ofs`, once the whole table
    /// is known to lie in the file past the header. An empty table may be anywhere (its `ofs`
    /// should be 0).
    fn table(&mut self, what: &str, ofs: u32, count: usize, size: usize) -> Result<usize, String> {
        let len = count
            .checked_mul(size)
            .ok_or_else(|| format!("{what}: {count} x {size} bytes overflow"))?;
        if len == 0 {
            return Ok(ofs as usize);
        }
        let at = ofs as usize;
        if at < HEADER_SIZE {
            return Err(format!("{what}: {len} bytes at {at}, inside the header"));
        }
        let end = at
            .checked_add(len)
            .filter(|&e| e <= self.d.len())
            .ok_or_else(|| {
                format!(
                    "{what}: {count} x {size} bytes at {at} run past the end ({})",
                    self.d.len()
                )
            })?;
        self.extent = self.extent.max(end);
        Ok(at)
    }
}

/// A range `(first, count)` of `items` (vertices, triangles, frames) of `what` ends within the
/// header's count `(limit_name, limit)`, else an error naming it.
fn ends_within(
    what: &str,
    items: &str,
    (first, count): (u32, u32),
    (limit_name, limit): (&str, usize),
) -> Result<(), String> {
    let end = u64::from(first) + u64::from(count);
    if end > limit as u64 {
        return Err(format!(
            "{what}: {items} {first}..{end} past {limit_name} {limit}"
        ));
    }
    Ok(())
}

/// The NUL-terminated string at `ofs` in the text block (lossy UTF-8). Offset 0 of an empty
/// text block is the empty string.
fn string(text: &[u8], ofs: u32, what: &str) -> Result<String, String> {
    let at = ofs as usize;
    if text.is_empty() && at == 0 {
        return Ok(String::new());
    }
    let rest = text.get(at..).filter(|r| !r.is_empty()).ok_or_else(|| {
        format!(
            "{what}: string offset {at} outside the text ({} bytes)",
            text.len()
        )
    })?;
    let n = rest.iter().position(|&b| b == 0).ok_or_else(|| {
        format!("{what}: string at {at} runs to the end of the text unterminated")
    })?;
    Ok(String::from_utf8_lossy(&rest[..n]).into_owned())
}

/// Component `k` of a packed array of `format` at `base`, as f64.
fn component(d: &[u8], base: usize, k: usize, format: u32) -> Result<f64, String> {
    let size = format_size(format).ok_or_else(|| format!("component format {format} unknown"))?;
    let at = base + k * size;
    Ok(match format {
        BYTE => f64::from(bytes_at(d, at, 1)?[0] as i8),
        UBYTE => f64::from(bytes_at(d, at, 1)?[0]),
        SHORT => f64::from(u16_at(d, at)? as i16),
        USHORT => f64::from(u16_at(d, at)?),
        INT => f64::from(i32_at(d, at)?),
        UINT => f64::from(u32_at(d, at)?),
        HALF => half_to_f64(u16_at(d, at)?),
        FLOAT => f32_at(d, at)?,
        _ => f64::from_bits(u64_at(d, at)?),
    })
}

/// A standard array's components per vertex, converted to f64.
fn read_array<const N: usize>(
    d: &[u8],
    va: &VertexArray,
    num_vertexes: usize,
) -> Result<Vec<[f64; N]>, String> {
    if va.size as usize != N {
        return Err(format!(
            "vertex array of type {}: {} components, not {N}",
            va.kind, va.size
        ));
    }
    let base = va.offset as usize;
    (0..num_vertexes)
        .map(|v| {
            let mut out = [0.0; N];
            for (k, x) in out.iter_mut().enumerate() {
                *x = component(d, base, v * N + k, va.format)?;
            }
            Ok(out)
        })
        .collect()
}

/// Reads an IQM file (version 1 or 2), checking what the module documentation lists.
pub fn parse(d: &[u8]) -> Result<Iqm, String> {
    if d.get(..16) != Some(&MAGIC[..]) {
        return Err("no INTERQUAKEMODEL magic".into());
    }
    let h = Header::read(d)?;
    let version = h.version;
    if version != 1 && version != 2 {
        return Err(format!("version {version}, not 1 or 2"));
    }
    if h.filesize as usize != d.len() {
        return Err(format!("filesize {} but {} bytes", h.filesize, d.len()));
    }
    let mut r = Reader {
        d,
        extent: HEADER_SIZE,
    };

    // Text.
    let at = r.table("text", h.ofs_text, h.num_text as usize, 1)?;
    let text = bytes_at(d, at, h.num_text as usize)?.to_vec();
    let s = |ofs: u32, what: &str| string(&text, ofs, what);

    // Meshes.
    let nv = h.num_vertexes as usize;
    let nt = h.num_triangles as usize;
    let at = r.table("meshes", h.ofs_meshes, h.num_meshes as usize, 24)?;
    let mut meshes = Vec::new();
    for m in 0..h.num_meshes as usize {
        let a = at + 24 * m;
        let what = format!("mesh {m}");
        let u = |k: usize| u32_at(d, a + 4 * k);
        let mesh = Mesh {
            name: s(u(0)?, &what)?,
            material: s(u(1)?, &what)?,
            first_vertex: u(2)?,
            num_vertexes: u(3)?,
            first_triangle: u(4)?,
            num_triangles: u(5)?,
        };
        let vertices = (mesh.first_vertex, mesh.num_vertexes);
        ends_within(&what, "vertices", vertices, ("num_vertexes", nv))?;
        let triangles = (mesh.first_triangle, mesh.num_triangles);
        ends_within(&what, "triangles", triangles, ("num_triangles", nt))?;
        meshes.push(mesh);
    }

    // Vertex arrays.
    let at = r.table(
        "vertexarrays",
        h.ofs_vertexarrays,
        h.num_vertexarrays as usize,
        20,
    )?;
    let mut vertex_arrays = Vec::new();
    for i in 0..h.num_vertexarrays as usize {
        let a = at + 20 * i;
        let u = |k: usize| u32_at(d, a + 4 * k);
        let kind = u(0)?;
        let format = u(2)?;
        let size = u(3)?;
        let what = format!("vertex array {i} (type {kind})");
        let comp = format_size(format).ok_or_else(|| format!("{what}: format {format} unknown"))?;
        let comps = nv
            .checked_mul(size as usize)
            .ok_or_else(|| format!("{what}: {nv} x {size} components overflow"))?;
        r.table(&what, u(4)?, comps, comp)?;
        let custom_name = if kind >= CUSTOM {
            Some(s(kind - CUSTOM, &what)?)
        } else {
            None
        };
        if kind < CUSTOM && vertex_arrays.iter().any(|v: &VertexArray| v.kind == kind) {
            return Err(format!("{what}: a second array of type {kind}"));
        }
        vertex_arrays.push(VertexArray {
            kind,
            flags: u(1)?,
            format,
            size,
            offset: u(4)?,
            custom_name,
        });
    }
    let find = |kind: u32| vertex_arrays.iter().find(|v| v.kind == kind);
    let positions = find(POSITION).map(|va| read_array(d, va, nv)).transpose()?;
    let texcoords = find(TEXCOORD).map(|va| read_array(d, va, nv)).transpose()?;
    let normals = find(NORMAL).map(|va| read_array(d, va, nv)).transpose()?;
    let tangents = find(TANGENT).map(|va| read_array(d, va, nv)).transpose()?;
    let unit = |va: &VertexArray, v: Vec<[f64; 4]>| match unit_divisor(va.format) {
        Some(div) => v.into_iter().map(|c| c.map(|x| x / div)).collect(),
        None => v,
    };
    let colors = find(COLOR)
        .map(|va| read_array::<4>(d, va, nv).map(|v| unit(va, v)))
        .transpose()?;
    let blend_weights = find(BLENDWEIGHTS)
        .map(|va| read_array::<4>(d, va, nv).map(|v| unit(va, v)))
        .transpose()?;
    let nj = h.num_joints as usize;
    let blend_indexes = match find(BLENDINDEXES) {
        None => None,
        Some(va) => {
            if unit_divisor(va.format).is_none() {
                return Err(format!(
                    "blend indexes in format {}, not an integer",
                    va.format
                ));
            }
            let raw = read_array::<4>(d, va, nv)?;
            let mut out = Vec::with_capacity(nv);
            for (v, idx) in raw.iter().enumerate() {
                let mut four = [0u32; 4];
                for (k, (&x, o)) in idx.iter().zip(four.iter_mut()).enumerate() {
                    if x < 0.0 || x >= nj as f64 {
                        return Err(format!(
                            "vertex {v}: blend index {x} in slot {k} not below num_joints {nj}"
                        ));
                    }
                    *o = x as u32;
                }
                out.push(four);
            }
            Some(out)
        }
    };

    // Triangles and adjacency.
    let at = r.table("triangles", h.ofs_triangles, nt, 12)?;
    let mut triangles = Vec::new();
    for t in 0..nt {
        let a = at + 12 * t;
        let tri = [u32_at(d, a)?, u32_at(d, a + 4)?, u32_at(d, a + 8)?];
        if let Some(&i) = tri.iter().find(|&&i| i as usize >= nv) {
            return Err(format!(
                "triangle {t}: vertex {i} not below num_vertexes {nv}"
            ));
        }
        triangles.push(tri);
    }
    let adjacency = if h.ofs_adjacency != 0 {
        let at = r.table("adjacency", h.ofs_adjacency, nt, 12)?;
        let mut out = Vec::new();
        for t in 0..nt {
            let mut n = [0u32; 3];
            for (k, x) in n.iter_mut().enumerate() {
                *x = u32_at(d, at + 12 * t + 4 * k)?;
                if *x != u32::MAX && *x as usize >= nt {
                    return Err(format!("adjacency {t}: triangle {x} not below {nt}"));
                }
            }
            out.push(n);
        }
        Some(out)
    } else {
        None
    };

    // Joints.
    let jsize = if version == 2 { 48 } else { 44 };
    let at = r.table("joints", h.ofs_joints, nj, jsize)?;
    let mut joints = Vec::new();
    for j in 0..nj {
        let a = at + jsize * j;
        let what = format!("joint {j}");
        let parent = i32_at(d, a + 4)?;
        if parent >= 0 && parent as usize >= j {
            return Err(format!("{what}: parent {parent} does not come before it"));
        }
        let (rotate, scale) = if version == 2 {
            (f32s::<4>(d, a + 20)?, f32s::<3>(d, a + 36)?)
        } else {
            let [x, y, z] = f32s::<3>(d, a + 20)?;
            ([x, y, z, derived_w(x, y, z)], f32s::<3>(d, a + 32)?)
        };
        joints.push(Joint {
            name: s(u32_at(d, a)?, &what)?,
            parent,
            translate: f32s(d, a + 8)?,
            rotate: unit_quat(rotate)
                .ok_or_else(|| format!("{what}: rotation {rotate:?} has no direction"))?,
            scale,
        });
    }

    // Poses.
    let (psize, channels) = if version == 2 { (88, 10) } else { (80, 9) };
    let np = h.num_poses as usize;
    let at = r.table("poses", h.ofs_poses, np, psize)?;
    let mut poses = Vec::new();
    let mut set_bits = 0u64;
    for p in 0..np {
        let a = at + psize * p;
        let parent = i32_at(d, a)?;
        if parent >= 0 && parent as usize >= p {
            return Err(format!("pose {p}: parent {parent} does not come before it"));
        }
        let mask = u32_at(d, a + 4)?;
        if mask >> channels != 0 {
            return Err(format!(
                "pose {p}: mask {mask:#x} has bits past channel {}",
                channels - 1
            ));
        }
        set_bits += u64::from(mask.count_ones());
        let read = |from: usize| {
            (0..channels)
                .map(|c| f32_at(d, a + from + 4 * c))
                .collect::<Result<Vec<f64>, String>>()
        };
        poses.push(Pose {
            parent,
            mask,
            offset: read(8)?,
            scale: read(8 + 4 * channels)?,
        });
    }
    let nc = h.num_framechannels as usize;
    if set_bits != nc as u64 {
        return Err(format!(
            "num_framechannels {nc} but the poses' masks set {set_bits} bits"
        ));
    }

    // Anims.
    let nf = h.num_frames as usize;
    let at = r.table("anims", h.ofs_anims, h.num_anims as usize, 20)?;
    let mut anims = Vec::new();
    for i in 0..h.num_anims as usize {
        let a = at + 20 * i;
        let what = format!("anim {i}");
        let anim = Anim {
            name: s(u32_at(d, a)?, &what)?,
            first_frame: u32_at(d, a + 4)?,
            num_frames: u32_at(d, a + 8)?,
            framerate: f32_at(d, a + 12)?,
            flags: u32_at(d, a + 16)?,
        };
        let frames = (anim.first_frame, anim.num_frames);
        ends_within(&what, "frames", frames, ("num_frames", nf))?;
        anims.push(anim);
    }

    // Frames: u16 values, frame f's from index f * num_framechannels.
    let values = nf
        .checked_mul(nc)
        .ok_or_else(|| format!("{nf} frames x {nc} channels overflow"))?;
    let at = r.table("frames", h.ofs_frames, values, 2)?;
    if nf.saturating_mul(np.max(1)) > MAX_DECODED_POSES {
        return Err(format!(
            "{nf} frames x {np} poses: more than this reader decodes ({MAX_DECODED_POSES})"
        ));
    }
    let frame_data = (0..values)
        .map(|i| u16_at(d, at + 2 * i))
        .collect::<Result<Vec<u16>, String>>()?;
    let mut frames = Vec::with_capacity(nf);
    for f in 0..nf {
        let raw = decode_channels(&poses, &frame_data, nc, f);
        let mut frame = Vec::with_capacity(np);
        for (p, v) in raw.iter().enumerate() {
            let (q, sc) = if version == 2 {
                ([v[3], v[4], v[5], v[6]], [v[7], v[8], v[9]])
            } else {
                (
                    [v[3], v[4], v[5], derived_w(v[3], v[4], v[5])],
                    [v[6], v[7], v[8]],
                )
            };
            frame.push(Trs {
                translate: [v[0], v[1], v[2]],
                rotate: unit_quat(q).ok_or_else(|| {
                    format!("frame {f}, pose {p}: rotation {q:?} has no direction")
                })?,
                scale: sc,
            });
        }
        frames.push(frame);
    }

    // Bounds.
    let bounds = if h.ofs_bounds != 0 {
        let at = r.table("bounds", h.ofs_bounds, nf, 32)?;
        let mut out = Vec::with_capacity(nf);
        for f in 0..nf {
            let a = at + 32 * f;
            out.push(Bounds {
                bbmin: f32s(d, a)?,
                bbmax: f32s(d, a + 12)?,
                xyradius: f32_at(d, a + 24)?,
                radius: f32_at(d, a + 28)?,
            });
        }
        Some(out)
    } else {
        None
    };

    // Comment.
    let at = r.table("comment", h.ofs_comment, h.num_comment as usize, 1)?;
    let comment = bytes_at(d, at, h.num_comment as usize)?.to_vec();

    // Extensions: a linked list of `num_extensions` nodes from `ofs_extensions`.
    let mut extensions = Vec::new();
    let mut node = h.ofs_extensions;
    let mut seen = HashSet::new();
    for k in 0..h.num_extensions as usize {
        if node == 0 {
            return Err(format!(
                "the extension list ends after {k} of {} nodes",
                h.num_extensions
            ));
        }
        if !seen.insert(node) {
            return Err(format!("extension {k}: node {node} again (the list loops)"));
        }
        let what = format!("extension {k}");
        let a = r.table(&what, node, 1, 16)?;
        let name = s(u32_at(d, a)?, &what)?;
        let num_data = u32_at(d, a + 4)? as usize;
        let data_at = r.table(&format!("{what} data"), u32_at(d, a + 8)?, num_data, 1)?;
        extensions.push(Extension {
            name,
            data: bytes_at(d, data_at, num_data)?.to_vec(),
            node,
        });
        node = u32_at(d, a + 12)?;
    }

    Ok(Iqm {
        header: h,
        version,
        text,
        meshes,
        vertex_arrays,
        num_vertexes: nv,
        positions,
        texcoords,
        normals,
        tangents,
        colors,
        blend_indexes,
        blend_weights,
        triangles,
        adjacency,
        joints,
        poses,
        frame_data,
        frames,
        anims,
        bounds,
        comment,
        extensions,
        extent: r.extent,
    })
}

/// Frame `f`'s channel values per pose as decoded, before anything is made of them:
/// `value[c] = offset[c] + (mask bit c ? next u16 * scale[c] : 0)`, the u16s taken in channel
/// order for set bits only. `data` holds every frame (checked by `parse` to be long enough).
fn decode_channels(poses: &[Pose], data: &[u16], nc: usize, f: usize) -> Vec<Vec<f64>> {
    let mut next = f * nc;
    let mut out = Vec::with_capacity(poses.len());
    for pose in poses {
        let mut v = pose.offset.clone();
        for (c, x) in v.iter_mut().enumerate() {
            if pose.mask & (1 << c) != 0 {
                *x += f64::from(data.get(next).copied().unwrap_or(0)) * pose.scale[c];
                next += 1;
            }
        }
        out.push(v);
    }
    out
}

/// Frame `frame`'s raw channel values per pose (10 in version 2, 9 in version 1), as stored
/// and decoded: neither normalised nor with a version 1 `w` derived. For checking how a file
/// was quantised.
pub fn pose_channels(iqm: &Iqm, frame: usize) -> Result<Vec<Vec<f64>>, String> {
    if frame >= iqm.frames.len() {
        return Err(format!("no frame {frame} of {}", iqm.frames.len()));
    }
    let nc = iqm.header.num_framechannels as usize;
    Ok(decode_channels(&iqm.poses, &iqm.frame_data, nc, frame))
}

/// A version 1 rotation's `w` from its `x, y, z`: `-sqrt(max(1 - (x² + y² + z²), 0))`.
pub fn derived_w(x: f64, y: f64, z: f64) -> f64 {
    -(1.0 - (x * x + y * y + z * z)).max(0.0).sqrt()
}

/// `q` scaled to unit length, `None` when it has none (or is not finite).
fn unit_quat(q: [f64; 4]) -> Option<[f64; 4]> {
    let len = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    (len > 0.0 && len.is_finite()).then(|| q.map(|c| c / len))
}

// ---------------------------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------------------------

/// Where the file is not laid out as `iqm.txt` asks, one line each; empty when it is:
/// every `ofs_*` of the header and every extension node a multiple of 4, every vertex array's
/// offset a multiple of max(component size, 4), the arrays in type order (custom ones last),
/// and the text starting with the empty string.
pub fn layout_problems(iqm: &Iqm) -> Vec<String> {
    let mut out = Vec::new();
    for (name, ofs) in iqm.header.offsets() {
        if !ofs.is_multiple_of(4) {
            out.push(format!("{name} {ofs} is not a multiple of 4"));
        }
    }
    for (k, e) in iqm.extensions.iter().enumerate() {
        if !e.node.is_multiple_of(4) {
            out.push(format!(
                "extension {k}'s node {} is not a multiple of 4",
                e.node
            ));
        }
    }
    for (i, va) in iqm.vertex_arrays.iter().enumerate() {
        let align = format_size(va.format).unwrap_or(1).max(4) as u32;
        if !va.offset.is_multiple_of(align) {
            out.push(format!(
                "vertex array {i} (type {}) at {} is not a multiple of {align}",
                va.kind, va.offset
            ));
        }
    }
    for (i, pair) in iqm.vertex_arrays.windows(2).enumerate() {
        let (a, b) = (pair[0].kind, pair[1].kind);
        // A standard type after a later or a custom one (custom types are all above the standard).
        if b < CUSTOM && b < a {
            out.push(format!("vertex array {} (type {b}) after type {a}", i + 1));
        }
    }
    if iqm.text.first().is_some_and(|&b| b != 0) {
        out.push("the text does not start with the empty string".into());
    }
    out
}

/// Whether the file is laid out as the spec asks (see [`layout_problems`]).
pub fn laid_out_as_spec(iqm: &Iqm) -> bool {
    layout_problems(iqm).is_empty()
}

/// The triangles of mesh `mesh` (indices into the whole vertex arrays). Panics when the model
/// has no such mesh (the caller's mistake: `parse` has checked every mesh's range).
pub fn mesh_triangles(iqm: &Iqm, mesh: usize) -> &[[u32; 3]] {
    let m = &iqm.meshes[mesh];
    let first = m.first_triangle as usize;
    &iqm.triangles[first..first + m.num_triangles as usize]
}

/// The largest `channelscale` of the translation channels (0-2) over all poses: one step of
/// the quantised translations, 0 when nothing moves. A decoded translation is within half a
/// step of the value the writer quantised.
pub fn quantisation_step(iqm: &Iqm) -> f64 {
    iqm.poses
        .iter()
        .flat_map(|p| p.scale.iter().take(3).copied())
        .fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------------------------
// Poses and skinning in f64 (FORMATS.md §9.2): 3x4 row-major affine matrices acting on column
// vectors, `m[row] = [r0, r1, r2, t]`
// ---------------------------------------------------------------------------------------------

pub type M34 = [[f64; 4]; 3];

pub const IDENTITY34: M34 = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
];

/// The local transform `v' = R(q) (s ⊙ v) + t`: rows of `R diag(s) | t`.
pub fn compose(t: [f64; 3], q: [f64; 4], s: [f64; 3]) -> M34 {
    let r = ref_math::rot(q);
    [0, 1, 2].map(|row| [r[row][0] * s[0], r[row][1] * s[1], r[row][2] * s[2], t[row]])
}

/// `a b` (b applied first), both with an implied last row `0 0 0 1`.
pub fn mul(a: &M34, b: &M34) -> M34 {
    [0, 1, 2].map(|row| {
        let mut out = [0.0; 4];
        for (c, o) in out.iter_mut().enumerate() {
            *o = (0..3).map(|k| a[row][k] * b[k][c]).sum();
        }
        out[3] += a[row][3];
        out
    })
}

/// `m p` for a point.
pub fn transform(m: &M34, p: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|row| m[row][0] * p[0] + m[row][1] * p[1] + m[row][2] * p[2] + m[row][3])
}

/// The inverse of an affine matrix by cofactors; `None` when singular.
pub fn inverse(m: &M34) -> Option<M34> {
    let a = |r: usize, c: usize| m[r][c];
    let cof = |r: usize, c: usize| {
        let (r0, r1) = ((r + 1) % 3, (r + 2) % 3);
        let (c0, c1) = ((c + 1) % 3, (c + 2) % 3);
        a(r0, c0) * a(r1, c1) - a(r0, c1) * a(r1, c0)
    };
    let det = a(0, 0) * cof(0, 0) + a(0, 1) * cof(0, 1) + a(0, 2) * cof(0, 2);
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    // inverse[r][c] = cofactor[c][r] / det; translation -inverse3 t.
    let mut out = [0, 1, 2].map(|r| [cof(0, r) / det, cof(1, r) / det, cof(2, r) / det, 0.0]);
    let t = [m[0][3], m[1][3], m[2][3]];
    for row in out.iter_mut() {
        row[3] = -(row[0] * t[0] + row[1] * t[1] + row[2] * t[2]);
    }
    Some(out)
}

/// Model-space matrices from local ones: `A_i = A_parent L_i` (`parse` has checked that a
/// parent comes before its child).
fn concatenate(parents: impl Iterator<Item = i32>, local: &[M34]) -> Vec<M34> {
    let mut out: Vec<M34> = Vec::with_capacity(local.len());
    for (l, p) in local.iter().zip(parents) {
        let m = match usize::try_from(p).ok().and_then(|p| out.get(p)) {
            Some(parent) => mul(parent, l),
            None => *l,
        };
        out.push(m);
    }
    out
}

/// The bind pose in model space: `B_i = B_parent M(q_i, t_i, s_i)` over the joints.
pub fn bind_matrices(iqm: &Iqm) -> Vec<M34> {
    let local: Vec<M34> = (iqm.joints.iter())
        .map(|j| compose(j.translate, j.rotate, j.scale))
        .collect();
    concatenate(iqm.joints.iter().map(|j| j.parent), &local)
}

/// Frame `frame` in model space: `A_i = A_parent P_i` with `P_i` pose `i`'s decoded local
/// transform and the joints' parents. An error when there is no such frame or the poses do not
/// pair with the joints one for one.
pub fn frame_matrices(iqm: &Iqm, frame: usize) -> Result<Vec<M34>, String> {
    let poses = iqm
        .frames
        .get(frame)
        .ok_or_else(|| format!("no frame {frame} of {}", iqm.frames.len()))?;
    if poses.len() != iqm.joints.len() {
        return Err(format!(
            "{} poses for {} joints",
            poses.len(),
            iqm.joints.len()
        ));
    }
    let local: Vec<M34> = (poses.iter())
        .map(|p| compose(p.translate, p.rotate, p.scale))
        .collect();
    Ok(concatenate(iqm.joints.iter().map(|j| j.parent), &local))
}

/// Every vertex's position (global vertex order) by linear blend skinning at frame `frame`, or
/// at the bind pose for `None`: `p' = Σ_k w_k A_{i_k} B_{i_k}^-1 p` over the four slots whose
/// weight is above 0, weights as stored (not renormalised). A vertex with no weight above 0,
/// and every vertex of a file without blend indexes or weights, stays where it is (rigid on
/// the identity), which is how the compiler's all-zero weights read most plainly; engines
/// differ (FORMATS.md §9.6). An error without positions, at a frame [`frame_matrices`] refuses,
/// or when a bind matrix cannot be inverted.
pub fn skin(iqm: &Iqm, frame: Option<usize>) -> Result<Vec<[f64; 3]>, String> {
    let Some(positions) = &iqm.positions else {
        return if iqm.num_vertexes == 0 {
            Ok(Vec::new())
        } else {
            Err(format!("{} vertices without positions", iqm.num_vertexes))
        };
    };
    let (Some(indexes), Some(weights)) = (&iqm.blend_indexes, &iqm.blend_weights) else {
        return Ok(positions.clone());
    };
    let bind = bind_matrices(iqm);
    let posed = match frame {
        None => bind.clone(),
        Some(f) => frame_matrices(iqm, f)?,
    };
    let skinning = (bind.iter().zip(&posed).enumerate())
        .map(|(j, (b, a))| {
            inverse(b)
                .map(|ib| mul(a, &ib))
                .ok_or_else(|| format!("joint {j}'s bind matrix cannot be inverted"))
        })
        .collect::<Result<Vec<M34>, String>>()?;
    let mut out = Vec::with_capacity(positions.len());
    for (v, ((p, idx), w)) in positions.iter().zip(indexes).zip(weights).enumerate() {
        let mut sum = [0.0; 3];
        let mut any = false;
        for (&j, &wk) in idx.iter().zip(w) {
            if wk <= 0.0 {
                continue;
            }
            let m = skinning
                .get(j as usize)
                .ok_or_else(|| format!("vertex {v}: joint {j} out of range"))?;
            let q = transform(m, *p);
            for k in 0..3 {
                sum[k] += wk * q[k];
            }
            any = true;
        }
        out.push(if any { sum } else { *p });
    }
    Ok(out)
}
