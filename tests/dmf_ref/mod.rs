//! DashGL DMF 1.5 binary read again for the tests, straight from FORMATS.md §6.1 and without
//! ossa's cursor, types or math (so that a misreading of the format cannot hide in both): the
//! header and attribute table, every record as its table lays it out, and the spec's meaning in
//! f64 written out plainly:
//!
//! - a bone's matrix is its local (parent-relative) transform, column-major (translation in
//!   elements 12, 13, 14); the bind pose is each bone's matrix concatenated down its parent chain
//!   (parents come first), and a vertex's position is in model space at that bind pose;
//! - a vertex at a pose is `p = sum_j w_j A_j B_j^-1 pos` over its influences with a bone index
//!   of 0 or more and a weight other than 0 (`A` the posed absolute matrix, `B` the bind one), a
//!   corner's normal the same with the matrices' 3x3 parts;
//! - an animation's tracks are keys of one bone with channel flags (bit 0 position, bit 1
//!   rotation (x, y, z, w), bit 2 scale) at a time in seconds; between two keys of a channel
//!   positions and scales are mixed linearly and rotations by slerp along the shorter arc,
//!   before the first key the first holds and after the last the last; a channel without keys
//!   keeps the bone's matrix's own value, and a bone without keys its matrix.
//!
//! Malformed input is an `Err` saying where the reader gave up, never a panic.
//!
//! Each test binary uses a different subset of this module.
#![allow(dead_code)]

// The textbook quaternion matrix the other reference readers use; the test crate declares
// `mod ref_math`.
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

fn i16_at(d: &[u8], at: usize) -> Result<i16, String> {
    u16_at(d, at).map(|v| v as i16)
}

fn u32_at(d: &[u8], at: usize) -> Result<u32, String> {
    bytes_at(d, at, 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn f32_at(d: &[u8], at: usize) -> Result<f32, String> {
    u32_at(d, at).map(f32::from_bits)
}

fn f32s<const N: usize>(d: &[u8], at: usize) -> Result<[f32; N], String> {
    let mut out = [0.0f32; N];
    for (k, x) in out.iter_mut().enumerate() {
        *x = f32_at(d, at + 4 * k)?;
    }
    Ok(out)
}

/// A 32-byte name field: the bytes before the first NUL, or all 32.
fn name32(d: &[u8], at: usize) -> Result<Vec<u8>, String> {
    let f = bytes_at(d, at, 32)?;
    Ok(f[..f.iter().position(|&b| b == 0).unwrap_or(32)].to_vec())
}

// ---------------------------------------------------------------------------------------------
// Records (FORMATS.md §6.1)
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct RawTexture {
    pub name: Vec<u8>,
    pub id: i16,
    pub flip_y: u16,
    pub image: Vec<u8>,
    pub width: u16,
    pub height: u16,
    pub wrap_s: u16,
    pub wrap_t: u16,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RawMaterial {
    pub name: Vec<u8>,
    pub id: i16,
    /// -1: none.
    pub texture: i16,
    /// use_blending, blend_equation, blend_src, blend_dst, skinning, shader_type, face_side,
    /// shadow_side, ignore_lights, vertex_color, use_alpha, skip_render.
    pub flags: [u16; 12],
    pub alpha_test: f32,
    pub diffuse: [f32; 4],
    pub emissive: [f32; 4],
    pub specular: [f32; 4],
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RawVertex {
    pub pos: [f32; 3],
    pub skin_index: [i16; 4],
    pub skin_weight: [f32; 4],
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RawFace {
    pub material: u16,
    pub indices: [u32; 3],
    pub colors: [[u8; 4]; 3],
    pub normals: [[f32; 3]; 3],
    pub uvs: [[f32; 2]; 3],
}

#[derive(Clone, Debug, PartialEq)]
pub struct RawBone {
    pub name: Vec<u8>,
    pub id: i16,
    /// -1: a root.
    pub parent: i16,
    /// Local transform, column-major.
    pub matrix: [f32; 16],
}

pub const POSITION: i16 = 1;
pub const ROTATION: i16 = 2;
pub const SCALE: i16 = 4;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RawTrack {
    pub bone: i16,
    pub flags: i16,
    pub time: f32,
    pub pos: [f32; 3],
    /// x, y, z, w.
    pub rot: [f32; 4],
    pub scl: [f32; 3],
}

#[derive(Clone, Debug, PartialEq)]
pub struct RawAnimation {
    pub name: Vec<u8>,
    pub id: i16,
    pub fps: u16,
    pub duration: f32,
    pub tracks: Vec<RawTrack>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RawDmf {
    pub major: u16,
    pub minor: u16,
    pub textures: Vec<RawTexture>,
    pub materials: Vec<RawMaterial>,
    pub vertices: Vec<RawVertex>,
    pub faces: Vec<RawFace>,
    pub bones: Vec<RawBone>,
    pub animations: Vec<RawAnimation>,
}

/// The attribute labels in table order, as little-endian u32s are the bytes.
const LABELS: [&[u8; 4]; 6] = [b"tex\0", b"mat\0", b"vert", b"face", b"bone", b"anim"];

/// `count` records of `size` bytes from `offset`, each read by `read` from its first byte.
fn records<T>(
    d: &[u8],
    (offset, count): (usize, usize),
    size: usize,
    read: impl Fn(usize) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    // The whole table must lie in the file before anything is reserved for it.
    let len = count
        .checked_mul(size)
        .ok_or_else(|| format!("{count} records of {size} bytes overflow"))?;
    bytes_at(d, offset, len)?;
    (0..count).map(|i| read(offset + i * size)).collect()
}

impl RawDmf {
    pub fn parse(d: &[u8]) -> Result<RawDmf, String> {
        if d.get(..4) != Some(&b"DASH"[..]) {
            return Err("no DASH magic".into());
        }
        let (major, minor) = (u16_at(d, 4)?, u16_at(d, 6)?);
        if (major, minor) != (1, 5) {
            return Err(format!("version {major}.{minor}, not 1.5"));
        }
        let table = u32_at(d, 8)? as usize;
        let count = u32_at(d, 12)? as usize;
        if count != 6 {
            return Err(format!("{count} attributes, not 6"));
        }
        // Each attribute: label, flags, offset, count.
        let mut at = [(0usize, 0usize); 6];
        for (i, (label, slot)) in LABELS.iter().zip(at.iter_mut()).enumerate() {
            let row = table + 16 * i;
            if bytes_at(d, row, 4)? != &label[..] {
                return Err(format!(
                    "attribute {i} is not {:?}",
                    String::from_utf8_lossy(*label)
                ));
            }
            *slot = (u32_at(d, row + 8)? as usize, u32_at(d, row + 12)? as usize);
        }
        let textures = records(d, at[0], 0x40, |r| {
            let (img, len) = (u32_at(d, r + 0x24)? as usize, u32_at(d, r + 0x28)? as usize);
            Ok(RawTexture {
                name: name32(d, r)?,
                id: i16_at(d, r + 0x20)?,
                flip_y: u16_at(d, r + 0x22)?,
                image: bytes_at(d, img, len)?.to_vec(),
                width: u16_at(d, r + 0x2c)?,
                height: u16_at(d, r + 0x2e)?,
                wrap_s: u16_at(d, r + 0x30)?,
                wrap_t: u16_at(d, r + 0x32)?,
            })
        })?;
        let materials = records(d, at[1], 0x70, |r| {
            let mut flags = [0u16; 12];
            for (k, f) in flags.iter_mut().enumerate() {
                *f = u16_at(d, r + 0x24 + 2 * k)?;
            }
            Ok(RawMaterial {
                name: name32(d, r)?,
                id: i16_at(d, r + 0x20)?,
                texture: i16_at(d, r + 0x22)?,
                flags,
                alpha_test: f32_at(d, r + 0x3c)?,
                diffuse: f32s(d, r + 0x40)?,
                emissive: f32s(d, r + 0x50)?,
                specular: f32s(d, r + 0x60)?,
            })
        })?;
        let vertices = records(d, at[2], 0x24, |r| {
            let mut skin_index = [0i16; 4];
            for (k, s) in skin_index.iter_mut().enumerate() {
                *s = i16_at(d, r + 12 + 2 * k)?;
            }
            Ok(RawVertex {
                pos: f32s(d, r)?,
                skin_index,
                skin_weight: f32s(d, r + 20)?,
            })
        })?;
        let faces = records(d, at[3], 0x58, |r| {
            let mut colors = [[0u8; 4]; 3];
            for (k, c) in colors.iter_mut().enumerate() {
                c.copy_from_slice(bytes_at(d, r + 16 + 4 * k, 4)?);
            }
            let mut normals = [[0.0f32; 3]; 3];
            for (k, n) in normals.iter_mut().enumerate() {
                *n = f32s(d, r + 28 + 12 * k)?;
            }
            let mut uvs = [[0.0f32; 2]; 3];
            for (k, uv) in uvs.iter_mut().enumerate() {
                *uv = f32s(d, r + 64 + 8 * k)?;
            }
            Ok(RawFace {
                material: u16_at(d, r)?,
                indices: [u32_at(d, r + 4)?, u32_at(d, r + 8)?, u32_at(d, r + 12)?],
                colors,
                normals,
                uvs,
            })
        })?;
        let bones = records(d, at[4], 0x70, |r| {
            Ok(RawBone {
                name: name32(d, r)?,
                id: i16_at(d, r + 0x20)?,
                parent: i16_at(d, r + 0x22)?,
                matrix: f32s(d, r + 0x30)?,
            })
        })?;
        let animations = records(d, at[5], 0x30, |r| {
            let tracks_at = (u32_at(d, r + 0x24)? as usize, u32_at(d, r + 0x28)? as usize);
            Ok(RawAnimation {
                name: name32(d, r)?,
                id: i16_at(d, r + 0x20)?,
                fps: u16_at(d, r + 0x22)?,
                duration: f32_at(d, r + 0x2c)?,
                tracks: records(d, tracks_at, 0x30, |t| {
                    Ok(RawTrack {
                        bone: i16_at(d, t)?,
                        flags: i16_at(d, t + 2)?,
                        time: f32_at(d, t + 4)?,
                        pos: f32s(d, t + 8)?,
                        rot: f32s(d, t + 20)?,
                        scl: f32s(d, t + 36)?,
                    })
                })?,
            })
        })?;
        Ok(RawDmf {
            major,
            minor,
            textures,
            materials,
            vertices,
            faces,
            bones,
            animations,
        })
    }

    pub fn parents(&self) -> Vec<i16> {
        self.bones.iter().map(|b| b.parent).collect()
    }

    /// Each bone's own matrix, in f64.
    pub fn rest_local(&self) -> Vec<M4> {
        self.bones.iter().map(|b| b.matrix.map(f64::from)).collect()
    }

    /// The bind pose: every bone's matrix concatenated down its parent chain.
    pub fn bind(&self) -> Result<Vec<M4>, String> {
        absolute(&self.parents(), &self.rest_local())
    }

    /// Every bone's local matrix at `time` seconds into animation `a`, by the tracks.
    pub fn local_at(&self, a: usize, time: f64) -> Result<Vec<M4>, String> {
        let anim = self
            .animations
            .get(a)
            .ok_or_else(|| format!("no animation {a}"))?;
        let mut out = self.rest_local();
        for (b, local) in out.iter_mut().enumerate() {
            // Each channel's keys of this bone, sorted by time (stable: of keys at one time,
            // the last in the file wins).
            let keys = |flag: i16| {
                let mut k: Vec<&RawTrack> = (anim.tracks.iter())
                    .filter(|t| t.bone as usize == b && t.bone >= 0 && t.flags & flag != 0)
                    .collect();
                k.sort_by(|x, y| x.time.total_cmp(&y.time));
                k
            };
            let (pos, rot, scl) = (keys(POSITION), keys(ROTATION), keys(SCALE));
            if pos.is_empty() && rot.is_empty() && scl.is_empty() {
                continue;
            }
            let (t0, q0, s0) = decompose(local);
            let t = sample(&pos, time, |k| k.pos.map(f64::from), lerp).unwrap_or(t0);
            let s = sample(&scl, time, |k| k.scl.map(f64::from), lerp).unwrap_or(s0);
            let q = sample(&rot, time, |k| unit(k.rot.map(f64::from)), slerp).unwrap_or(q0);
            *local = compose(t, q, s);
        }
        Ok(out)
    }

    /// Vertex `v` posed by the absolute matrices `posed`, with `inverse_bind` the inverses of
    /// the bind pose's.
    pub fn skin(&self, v: usize, posed: &[M4], inverse_bind: &[M4]) -> Result<[f64; 3], String> {
        let vx = self
            .vertices
            .get(v)
            .ok_or_else(|| format!("no vertex {v}"))?;
        let pos = vx.pos.map(f64::from);
        let mut p = [0.0f64; 3];
        for (&b, &w) in vx.skin_index.iter().zip(&vx.skin_weight) {
            if b < 0 || w == 0.0 {
                continue;
            }
            let (a, i) = posed
                .get(b as usize)
                .zip(inverse_bind.get(b as usize))
                .ok_or_else(|| format!("vertex {v}: bone {b} out of range"))?;
            let q = point(a, point(i, pos));
            for k in 0..3 {
                p[k] += f64::from(w) * q[k];
            }
        }
        Ok(p)
    }

    /// A corner's normal `n` of vertex `v`, posed as [`RawDmf::skin`] poses the vertex.
    pub fn skin_normal(
        &self,
        v: usize,
        n: [f32; 3],
        posed: &[M4],
        inverse_bind: &[M4],
    ) -> Result<[f64; 3], String> {
        let vx = self
            .vertices
            .get(v)
            .ok_or_else(|| format!("no vertex {v}"))?;
        let mut out = [0.0f64; 3];
        for (&b, &w) in vx.skin_index.iter().zip(&vx.skin_weight) {
            if b < 0 || w == 0.0 {
                continue;
            }
            let (a, i) = posed
                .get(b as usize)
                .zip(inverse_bind.get(b as usize))
                .ok_or_else(|| format!("vertex {v}: bone {b} out of range"))?;
            let q = vector(a, vector(i, n.map(f64::from)));
            for k in 0..3 {
                out[k] += f64::from(w) * q[k];
            }
        }
        Ok(out)
    }

    /// Every vertex at the bind pose (`None`) or at `time` seconds into an animation.
    pub fn skin_all(&self, at: Option<(usize, f64)>) -> Result<Vec<[f64; 3]>, String> {
        let bind = self.bind()?;
        let inverse = bind
            .iter()
            .enumerate()
            .map(|(b, m)| inverse(m).ok_or_else(|| format!("bone {b}'s bind cannot be inverted")))
            .collect::<Result<Vec<_>, String>>()?;
        let posed = match at {
            None => bind,
            Some((a, t)) => absolute(&self.parents(), &self.local_at(a, t)?)?,
        };
        (0..self.vertices.len())
            .map(|v| self.skin(v, &posed, &inverse))
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Math in f64: 4x4 matrices column-major (element `4 * column + row`), quaternions (x, y, z, w)
// ---------------------------------------------------------------------------------------------

pub type M4 = [f64; 16];

pub const IDENTITY4: M4 = [
    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

/// `a b` (b applied first).
pub fn mul(a: &M4, b: &M4) -> M4 {
    let mut r = [0.0f64; 16];
    for c in 0..4 {
        for row in 0..4 {
            r[4 * c + row] = (0..4).map(|k| a[4 * k + row] * b[4 * c + k]).sum();
        }
    }
    r
}

pub fn point(m: &M4, p: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|r| m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r])
}

pub fn vector(m: &M4, v: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|r| m[r] * v[0] + m[4 + r] * v[1] + m[8 + r] * v[2])
}

/// The inverse of an affine matrix (last row 0 0 0 1), by cofactors; `None` when singular.
pub fn inverse(m: &M4) -> Option<M4> {
    let a = |r: usize, c: usize| m[4 * c + r];
    let cof = |r: usize, c: usize| {
        let (r0, r1) = ((r + 1) % 3, (r + 2) % 3);
        let (c0, c1) = ((c + 1) % 3, (c + 2) % 3);
        a(r0, c0) * a(r1, c1) - a(r0, c1) * a(r1, c0)
    };
    let det = a(0, 0) * cof(0, 0) + a(0, 1) * cof(0, 1) + a(0, 2) * cof(0, 2);
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let mut r = IDENTITY4;
    // inverse[r][c] = cofactor[c][r] / det
    for row in 0..3 {
        for c in 0..3 {
            r[4 * c + row] = cof(c, row) / det;
        }
    }
    let t = [m[12], m[13], m[14]];
    let it = vector(&r, t);
    for k in 0..3 {
        r[12 + k] = -it[k];
    }
    Some(r)
}

/// Absolute matrices: each local matrix concatenated down its parent chain; a parent must come
/// before its child.
pub fn absolute(parents: &[i16], local: &[M4]) -> Result<Vec<M4>, String> {
    let mut out: Vec<M4> = Vec::with_capacity(local.len());
    for (b, l) in local.iter().enumerate() {
        let p = parents.get(b).copied().unwrap_or(-1);
        out.push(if p < 0 {
            *l
        } else {
            let pm = out
                .get(p as usize)
                .ok_or_else(|| format!("bone {b}: parent {p} does not come before it"))?;
            mul(pm, l)
        });
    }
    Ok(out)
}

fn unit(q: [f64; 4]) -> [f64; 4] {
    let len = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    if len > 0.0 {
        q.map(|v| v / len)
    } else {
        [0.0, 0.0, 0.0, 1.0]
    }
}

fn lerp(a: [f64; 3], b: [f64; 3], f: f64) -> [f64; 3] {
    [0, 1, 2].map(|k| a[k] + (b[k] - a[k]) * f)
}

/// Along the shorter arc; nearly equal quaternions are mixed linearly.
fn slerp(a: [f64; 4], b: [f64; 4], f: f64) -> [f64; 4] {
    let mut d: f64 = (0..4).map(|k| a[k] * b[k]).sum();
    let b = if d < 0.0 {
        d = -d;
        b.map(|v| -v)
    } else {
        b
    };
    let (wa, wb) = if d > 1.0 - 1e-9 {
        (1.0 - f, f)
    } else {
        let th = d.acos();
        (((1.0 - f) * th).sin() / th.sin(), (f * th).sin() / th.sin())
    };
    unit([0, 1, 2, 3].map(|k| wa * a[k] + wb * b[k]))
}

/// A channel's value at `time`: its keys sorted by time.
fn sample<T: Copy>(
    keys: &[&RawTrack],
    time: f64,
    value: impl Fn(&RawTrack) -> T,
    mix: impl Fn(T, T, f64) -> T,
) -> Option<T> {
    let first = keys.first()?;
    let last = keys.last()?;
    if time <= f64::from(first.time) {
        return Some(value(first));
    }
    if time >= f64::from(last.time) {
        return Some(value(last));
    }
    // The last key at or before `time`, and the one after it.
    let j = keys.iter().rposition(|k| f64::from(k.time) <= time)?;
    let (a, b) = (keys[j], keys[j + 1]);
    let span = f64::from(b.time) - f64::from(a.time);
    let f = (time - f64::from(a.time)) / span;
    Some(mix(value(a), value(b), f))
}

/// `T R S`.
pub fn compose(t: [f64; 3], q: [f64; 4], s: [f64; 3]) -> M4 {
    let r = ref_math::rot(q);
    let mut m = IDENTITY4;
    for c in 0..3 {
        for row in 0..3 {
            m[4 * c + row] = r[row][c] * s[c];
        }
        m[12 + c] = t[c];
    }
    m
}

/// Translation, rotation and scale of a matrix without shear (a negative determinant puts the
/// reflection in the x scale).
pub fn decompose(m: &M4) -> ([f64; 3], [f64; 4], [f64; 3]) {
    let t = [m[12], m[13], m[14]];
    let mut s = [0, 1, 2].map(|c| (0..3).map(|r| m[4 * c + r].powi(2)).sum::<f64>().sqrt());
    let det = {
        let a = |r: usize, c: usize| m[4 * c + r];
        a(0, 0) * (a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1))
            - a(0, 1) * (a(1, 0) * a(2, 2) - a(1, 2) * a(2, 0))
            + a(0, 2) * (a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0))
    };
    if det < 0.0 {
        s[0] = -s[0];
    }
    let r = |row: usize, c: usize| {
        if s[c] != 0.0 {
            m[4 * c + row] / s[c]
        } else {
            0.0
        }
    };
    // Shepperd: from the largest of the trace and the diagonal.
    let tr = r(0, 0) + r(1, 1) + r(2, 2);
    let q = if tr > 0.0 {
        let k = 0.5 / (tr + 1.0).sqrt();
        [
            (r(2, 1) - r(1, 2)) * k,
            (r(0, 2) - r(2, 0)) * k,
            (r(1, 0) - r(0, 1)) * k,
            0.25 / k,
        ]
    } else if r(0, 0) > r(1, 1) && r(0, 0) > r(2, 2) {
        let k = 2.0 * (1.0 + r(0, 0) - r(1, 1) - r(2, 2)).sqrt();
        [
            0.25 * k,
            (r(0, 1) + r(1, 0)) / k,
            (r(0, 2) + r(2, 0)) / k,
            (r(2, 1) - r(1, 2)) / k,
        ]
    } else if r(1, 1) > r(2, 2) {
        let k = 2.0 * (1.0 + r(1, 1) - r(0, 0) - r(2, 2)).sqrt();
        [
            (r(0, 1) + r(1, 0)) / k,
            0.25 * k,
            (r(1, 2) + r(2, 1)) / k,
            (r(0, 2) - r(2, 0)) / k,
        ]
    } else {
        let k = 2.0 * (1.0 + r(2, 2) - r(0, 0) - r(1, 1)).sqrt();
        [
            (r(0, 2) + r(2, 0)) / k,
            (r(1, 2) + r(2, 1)) / k,
            0.25 * k,
            (r(1, 0) - r(0, 1)) / k,
        ]
    };
    (t, unit(q), s)
}
