//! Writes IQM version 2 as the reference compiler (`iqm.cpp`) lays it out: header, text, meshes,
//! vertex arrays, the vertex data (from an 8-byte boundary), triangles, adjacency, joints, poses,
//! anims, frames and bounds, every table on a 4-byte boundary and every empty one at offset 0;
//! then the comment and the extensions (records, then their data), which FTE's tools add there.
//!
//! The model's coordinates are written as they are: IQM is Z-up as DPM is. The joints hold frame
//! 0, the bind pose; the file's frames are the model's from frame 1 when frame 0 is only the bind
//! pose (the model has other frames and no scene plays it), else from frame 0. Vertices are the
//! bind pose's (the file's own positions and normals where the model keeps them), each with at
//! most four bones, in bytes summing to 255; triangles are turned back to IQM's clockwise front
//! faces. Where a choice is the compiler's, its function is named.

use std::collections::HashMap;
use std::ops::Range;

use byteorder::LittleEndian;

use super::MAGIC;
use super::read::inverse_binds;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::format::binary::{put_f32, put_u32, put_zeros};
use crate::math::{Decomposed, MAX_MAGNITUDE, Mat3x4};
use crate::model::{Bone, Influence, Mesh, Model, Name};
use crate::pose::FrameBlend;
use crate::poses::{Poses, unit_or_identity};
use crate::skin::{SKIN_NORMALIZE, Strided};

type Le = LittleEndian;

const VERSION: u32 = 2;
const HEADER_SIZE: u64 = 124;
const MESH_SIZE: u64 = 24;
const VERTEX_ARRAY_SIZE: u64 = 20;
/// A triangle, or a triangle's three neighbours.
const TRIANGLE_SIZE: u64 = 12;
const JOINT_SIZE: u64 = 48;
const POSE_SIZE: u64 = 88;
const ANIM_SIZE: u64 = 20;
const BOUNDS_SIZE: u64 = 32;
const EXTENSION_SIZE: u64 = 16;

/// Vertex array types.
const POSITION: u32 = 0;
const TEXCOORD: u32 = 1;
const NORMAL: u32 = 2;
const TANGENT: u32 = 3;
const BLEND_INDEXES: u32 = 4;
const BLEND_WEIGHTS: u32 = 5;
const COLOR: u32 = 6;
/// Vertex array formats.
const UBYTE: u32 = 1;
const FLOAT: u32 = 7;

/// The rate of an anim the writer makes (`anim_for_frames`), DarkPlaces' and FTE's default.
const DEFAULT_FPS: f32 = 10.0;
/// Anim flag: the anim loops.
const LOOP: u32 = 1;
/// An adjacency slot with no neighbour.
const NO_NEIGHBOUR: u32 = u32::MAX;

/// A decomposed scale this close to 1 (or -1) is 1 (-1): a rotation matrix's columns come out
/// within rounding of unit length, and a bone that never scales must not get scale channels
/// that vary by that rounding (three more values a frame).
const SCALE_ROUNDING: f32 = 1e-6;
/// A pose's channels: translation x y z, rotation x y z w, scale x y z.
const CHANNELS: usize = 10;
/// Bones a vertex's blend holds.
const BLEND_SLOTS: usize = 4;
/// A blend index is a byte.
const MAX_JOINTS: usize = 256;
/// Weights of this much or less are dropped, as the compiler drops them.
const MIN_WEIGHT: f64 = 1e-3;
/// A channel that varies by less than this over the frames is stored as a constant.
const MIN_RANGE: f32 = 1e-10;

/// How [`write()`] writes. The defaults write what the reference compiler would, with the
/// model's events (`FTE_EVENT`), skins (`FTE_SKINS`), and the comment and extensions kept from
/// an IQM it was read from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// The file's frames are the model's from frame 0, whether or not a scene plays it: the
    /// file numbers its frames as the model does, and a model whose only frame is its bind pose
    /// gets that one frame (by default frame 0 is left out where it is only the bind pose the
    /// joints hold). For configurations that count frames from the file's first, and engines
    /// that need frames: qfusion's and Warfork's `animation.cfg`.
    pub keep_frame_zero: bool,
    /// A file of frames and no anim (a model without scenes) gets one anim over all its frames
    /// (`bind` for a lone bind pose, else `all`, at 10 frames a second, looping): qfusion and
    /// Warfork refuse a file of frames without anims.
    pub anim_for_frames: bool,
}

/// The model frames [`write()`] makes the file's frames: the file's frame 0 is the model's
/// frame `start`.
pub fn written_frame_range(model: &Model, options: &WriteOptions) -> Range<usize> {
    written_frames(model, options)
}

/// Whether `bytes`, an IQM ossa read, is version 2 with every block at a multiple of 4 bytes.
fn spec_layout(bytes: &[u8]) -> bool {
    super::read::Header::of(bytes)
        .is_some_and(|h| h.get(super::read::H::Version) == 2 && h.unaligned().is_empty())
}

/// The name a mesh is written under: its own, or its shader where it has none (a DPM's meshes),
/// so that `.skin` lines, which DarkPlaces and FTE match against an IQM's mesh names, name it
/// as they named it by its shader in the DPM.
pub fn written_mesh_name(mesh: &Mesh) -> &Name {
    if mesh.name().is_empty() {
        mesh.shader()
    } else {
        mesh.name()
    }
}

fn to_u32(n: usize, what: impl FnOnce() -> String) -> Result<u32> {
    u32::try_from(n)
        .map_err(|_| Error::limit(format!("{}: {n} does not fit IQM's 32-bit fields", what())))
}

/// The text block: NUL-terminated names, each once, after an empty one at offset 0 (as the
/// compiler shares them). Empty until the first name.
#[derive(Default)]
struct Text {
    bytes: Vec<u8>,
    offsets: HashMap<Vec<u8>, u32>,
}

impl Text {
    /// A text block that begins with `kept`, a file's own (kept extensions may point into it),
    /// its strings found again by their first offsets.
    fn starting_with(kept: &[u8]) -> Text {
        let mut text = Text::default();
        if kept.first() != Some(&0) {
            return text;
        }
        let mut at = 0usize;
        for s in kept.split(|&b| b == 0) {
            text.offsets.entry(s.to_vec()).or_insert(at as u32);
            at = at.saturating_add(s.len()).saturating_add(1);
        }
        // A block not ending in NUL keeps its last bytes, unnamed.
        text.bytes = kept.to_vec();
        if text.bytes.last() != Some(&0) {
            text.offsets
                .remove(kept.rsplit(|&b| b == 0).next().unwrap_or_default());
            text.bytes.push(0);
        }
        text
    }

    fn add(&mut self, name: &Name) -> Result<u32> {
        if self.bytes.is_empty() {
            self.bytes.push(0);
            self.offsets.insert(Vec::new(), 0);
        }
        if let Some(&at) = self.offsets.get(name.as_bytes()) {
            return Ok(at);
        }
        let at = to_u32(self.bytes.len(), || "text size".to_owned())?;
        self.bytes.extend_from_slice(name.as_bytes_with_nul());
        self.offsets.insert(name.as_bytes().to_vec(), at);
        Ok(at)
    }
}

struct MeshRecord {
    name: u32,
    material: u32,
    first_vertex: u32,
    num_vertexes: u32,
    first_triangle: u32,
    num_triangles: u32,
}

struct VertexArray {
    kind: u32,
    format: u32,
    /// Components per vertex.
    size: u32,
    /// Bytes of one component.
    component: u64,
    data: Vec<u8>,
}

impl VertexArray {
    fn floats<const N: usize>(kind: u32, values: &[[f32; N]]) -> VertexArray {
        VertexArray {
            kind,
            format: FLOAT,
            size: N as u32,
            component: 4,
            data: values
                .iter()
                .flatten()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        }
    }

    fn bytes(kind: u32, values: impl Iterator<Item = [u8; 4]>) -> VertexArray {
        VertexArray {
            kind,
            format: UBYTE,
            size: 4,
            component: 1,
            data: values.flatten().collect(),
        }
    }

    /// Where the array may start inside the vertex block (`iqm.txt`): a multiple of its
    /// component's size, and of 4.
    fn align(&self) -> u64 {
        self.component.max(4)
    }
}

/// One vertex's bones and weights as the file stores them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Blend {
    bones: [u8; BLEND_SLOTS],
    weights: [u8; BLEND_SLOTS],
}

/// A vertex's blend the compiler's way (`blendcombo`): influences on one bone merged (at the
/// bone's first place), weights of 1e-3 or less dropped, the rest strongest first (ties in the
/// model's order), scaled to sum 1 and rounded half up to bytes, then made to sum 255 by taking
/// one from (or giving one to) each slot in turn. Unused slots are bone 0, weight 0; a vertex
/// with no weight left has all weights 0. `Err` gives how many bones weigh on a vertex that
/// has more than four. `scratch` is reused from vertex to vertex.
fn blend(
    influences: &[Influence],
    scratch: &mut Vec<(u32, usize, f64)>,
) -> std::result::Result<Blend, usize> {
    scratch.clear();
    scratch.extend(
        influences
            .iter()
            .enumerate()
            .map(|(k, i)| (i.bone, k, f64::from(i.weight))),
    );
    // Sorted by bone, merged, then back in the model's order: n log n for a vertex of many.
    scratch.sort_unstable_by_key(|&(bone, k, _)| (bone, k));
    scratch.dedup_by(|later, kept| {
        if later.0 == kept.0 {
            kept.2 += later.2;
            true
        } else {
            false
        }
    });
    scratch.retain(|&(_, _, w)| w > MIN_WEIGHT);
    if scratch.len() > BLEND_SLOTS {
        return Err(scratch.len());
    }
    scratch.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.1.cmp(&b.1)));
    let mut out = Blend::default();
    if scratch.is_empty() {
        return Ok(out);
    }
    let total: f64 = scratch.iter().map(|&(_, _, w)| w).sum();
    let scale = 1.0 / total;
    for ((bone, weight), &(b, _, w)) in out
        .bones
        .iter_mut()
        .zip(out.weights.iter_mut())
        .zip(scratch.iter())
    {
        // Fewer bones than joints (checked by the caller): the index fits a byte.
        *bone = b as u8;
        *weight = (0.5 + w * scale * 255.0) as u8;
    }
    let mut sum: u32 = out.weights.iter().map(|&w| u32::from(w)).sum();
    while sum > 255 {
        for w in &mut out.weights {
            if *w > 0 && sum > 255 {
                *w = w.wrapping_sub(1);
                sum = sum.wrapping_sub(1);
            }
        }
    }
    while sum < 255 {
        for w in &mut out.weights {
            if *w < 255 && sum < 255 {
                *w = w.wrapping_add(1);
                sum = sum.wrapping_add(1);
            }
        }
    }
    Ok(out)
}

/// Every mesh's vertices, numbered across the meshes as the file numbers them.
struct Vertices {
    positions: Vec<[f32; 3]>,
    texcoords: Vec<[f32; 2]>,
    normals: Vec<[f32; 3]>,
    /// Empty for a model without bones.
    blends: Vec<Blend>,
    /// Where some mesh has colours; white for the vertices of the others.
    colors: Option<Vec<[u8; 4]>>,
    /// Whether some mesh has texture coordinates (the others get zeros).
    textured: bool,
}

fn gather_vertices(model: &Model, total: usize) -> Result<Vertices> {
    let meshes = model.meshes();
    let with_blends = !model.bones().is_empty();
    let with_colors = meshes.iter().any(|m| m.colors().is_some());
    let mut v = Vertices {
        positions: vec![[0.0; 3]; total],
        texcoords: Vec::with_capacity(total),
        normals: vec![[0.0; 3]; total],
        blends: Vec::with_capacity(if with_blends { total } else { 0 }),
        colors: with_colors.then(|| Vec::with_capacity(total)),
        textured: meshes.iter().any(|m| m.texcoords().is_some()),
    };
    let mut scratch = Vec::new();
    let mut first = 0usize;
    for (m, mesh) in meshes.iter().enumerate() {
        let n = mesh.vertex_count();
        let end = first.saturating_add(n);
        let (Some(positions), Some(normals)) = (
            v.positions.get_mut(first..end),
            v.normals.get_mut(first..end),
        ) else {
            return Err(Error::invalid_argument(format!(
                "mesh {m}: vertices {first}..{end} past the {total} counted"
            )));
        };
        if let (Some(stored_p), Some(stored_n)) = (mesh.bind_positions(), mesh.bind_normals()) {
            // The file's own bits, where the model keeps them (DMF), as the DMF saver writes them.
            positions
                .iter_mut()
                .zip(stored_p)
                .for_each(|(d, s)| *d = *s);
            normals.iter_mut().zip(stored_n).for_each(|(d, s)| *d = *s);
        } else {
            let mut target = Strided::new(positions.as_flattened_mut(), 3)?
                .with_normals(normals.as_flattened_mut(), 3)?;
            model.bind_vertices(m, 0, n, SKIN_NORMALIZE, &mut target)?;
        }
        match mesh.texcoords() {
            Some(tc) => v.texcoords.extend_from_slice(tc),
            None => v.texcoords.resize(end, [0.0; 2]),
        }
        if let Some(colors) = &mut v.colors {
            match mesh.colors() {
                Some(c) => colors.extend_from_slice(c),
                None => colors.resize(end, [255; 4]),
            }
        }
        if with_blends {
            for k in 0..n {
                let b = blend(mesh.influences(k), &mut scratch).map_err(|count| {
                    Error::unsupported(format!(
                        "mesh {m} vertex {k}: {count} bones weigh on it, an IQM vertex holds \
                         {BLEND_SLOTS}; keep each vertex's strongest with --max-influences \
                         {BLEND_SLOTS} (Model::with_max_influences)"
                    ))
                })?;
                v.blends.push(b);
            }
        }
        first = end;
    }
    Ok(v)
}

/// Refuses a model whose IQM would be written but not load: a reader puts each vertex in its
/// joints' bind space (the inverse of the bind pose the joints' channels make, times the
/// weight), and every loader refuses an influence past [`MAX_MAGNITUDE`]. A joint that shrinks
/// to nearly nothing, or a bind pose the channels cannot hold (a shear), can take a vertex the
/// model holds in range there. Judged against half the limit: the reader's arithmetic is not
/// this one's to the bit.
fn check_read_back(
    vertices: &Vertices,
    channels: &[[f32; CHANNELS]],
    bones: &[Bone],
    records: &[MeshRecord],
) -> Result<()> {
    if vertices.blends.is_empty() {
        return Ok(());
    }
    let local: Vec<Mat3x4> = channels
        .iter()
        .map(|&[tx, ty, tz, x, y, z, w, sx, sy, sz]| {
            let q = unit_or_identity([x, y, z, w]);
            Mat3x4::from_rotation_translation_scale(q, [tx, ty, tz], [sx, sy, sz])
        })
        .collect();
    let inverse = inverse_binds(bones, &local);
    let limit = f64::from(MAX_MAGNITUDE) / 2.0;
    let all = vertices.positions.iter().zip(&vertices.normals);
    for (v, ((p, n), blend)) in all.zip(&vertices.blends).enumerate() {
        let weighted = blend
            .bones
            .iter()
            .zip(&blend.weights)
            .filter(|(_, w)| **w > 0);
        // No weight at all: a reader makes the vertex rigid on its first joint.
        let rigid = (blend.weights == [0; BLEND_SLOTS]).then_some((&blend.bones[0], &255u8));
        for (&b, &w) in weighted.chain(rigid) {
            let inv = inverse.get(usize::from(b)).unwrap_or(&Mat3x4::IDENTITY);
            let (o, r) = (inv.transform_point(*p), inv.transform_vector(*n));
            let most = o
                .iter()
                .chain(&r)
                .map(|x| f64::from(x.abs()))
                .fold(0.0, f64::max);
            let most = most * f64::from(w) / 255.0;
            if most.partial_cmp(&limit) != Some(std::cmp::Ordering::Less) {
                let (m, first) = records
                    .iter()
                    .enumerate()
                    .rev()
                    .find(|(_, r)| r.first_vertex as usize <= v)
                    .map_or((0, 0), |(m, r)| (m, r.first_vertex as usize));
                return Err(Error::limit(format!(
                    "mesh {m} vertex {}: in joint {b}'s bind space, as the joints are written, it \
                     would be {most:.3e} from the origin, and a reader refuses an influence \
                     past {MAX_MAGNITUDE:e}",
                    v.saturating_sub(first)
                )));
            }
        }
    }
    Ok(())
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn scaled(a: [f64; 3], s: f64) -> [f64; 3] {
    a.map(|x| x * s)
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn add_to(sum: &mut [f64; 3], a: [f64; 3]) {
    for (s, x) in sum.iter_mut().zip(a) {
        *s += x;
    }
}

fn wide<const N: usize>(a: [f32; N]) -> [f64; N] {
    a.map(f64::from)
}

/// `t` at unit length; for a vertex whose triangles give no tangent (no texture coordinates, or
/// none in any triangle), a unit vector square to the normal `n` instead (the axis least along
/// it, made square), where the compiler's division would leave NaNs.
fn unit_tangent(t: [f64; 3], n: [f64; 3]) -> [f64; 3] {
    let len = dot(t, t).sqrt();
    if len > 0.0 && len.is_finite() {
        return scaled(t, 1.0 / len);
    }
    let [x, y, z] = n.map(f64::abs);
    let axis = if x <= y && x <= z {
        [1.0, 0.0, 0.0]
    } else if y <= z {
        [0.0, 1.0, 0.0]
    } else {
        [0.0, 0.0, 1.0]
    };
    let t = sub(axis, scaled(n, dot(n, axis)));
    let len = dot(t, t).sqrt();
    if len > 0.0 && len.is_finite() {
        scaled(t, 1.0 / len)
    } else {
        axis
    }
}

/// Tangents as the compiler computes them (`calctangents`), over the triangles in the order they
/// are written: each triangle's texture-space axes, weighted by its area, added to its corners;
/// a vertex's sum made square to its normal and unit length, w the sign of its bitangent.
fn tangents(v: &Vertices, triangles: &[[u32; 3]]) -> Vec<[f32; 4]> {
    let n = v.positions.len();
    let mut tangent = vec![[0.0f64; 3]; n];
    let mut bitangent = vec![[0.0f64; 3]; n];
    let position = |i: u32| v.positions.get(i as usize).copied().map(wide);
    let texcoord = |i: u32| v.texcoords.get(i as usize).copied().map(wide);
    for &[a, b, c] in triangles {
        let (Some(p0), Some(p1), Some(p2), Some(t0), Some(t1), Some(t2)) = (
            position(a),
            position(b),
            position(c),
            texcoord(a),
            texcoord(b),
            texcoord(c),
        ) else {
            continue;
        };
        let (e1, e2) = (sub(p1, p0), sub(p2, p0));
        let (u1, v1) = (t1[0] - t0[0], t1[1] - t0[1]);
        let (u2, v2) = (t2[0] - t0[0], t2[1] - t0[1]);
        let mut s = sub(scaled(e2, v1), scaled(e1, v2));
        let mut t = sub(scaled(e2, u1), scaled(e1, u2));
        if dot(cross(e2, e1), cross(t, s)) < 0.0 {
            s = scaled(s, -1.0);
            t = scaled(t, -1.0);
        }
        for i in [a, b, c] {
            if let Some(sum) = tangent.get_mut(i as usize) {
                add_to(sum, s);
            }
            if let Some(sum) = bitangent.get_mut(i as usize) {
                add_to(sum, t);
            }
        }
    }
    v.normals
        .iter()
        .zip(tangent)
        .zip(bitangent)
        .map(|((&normal, t), bt)| {
            let normal = wide(normal);
            let u = unit_tangent(sub(t, scaled(normal, dot(normal, t))), normal);
            let w = if dot(cross(normal, t), bt) < 0.0 {
                -1.0
            } else {
                1.0
            };
            [u[0] as f32, u[1] as f32, u[2] as f32, w]
        })
        .collect()
}

/// What an edge's end is matched by: its position (bits, with -0 as 0) and its blend.
type EdgeEnd = ([u32; 3], Blend);

/// The compiler's record of the triangles on an edge (`neighborval`): the first two; both
/// dropped when a third comes.
struct OnEdge([u32; 2]);

impl OnEdge {
    fn add(&mut self, t: u32) {
        let [first, second] = &mut self.0;
        if *second != NO_NEIGHBOUR {
            *first = NO_NEIGHBOUR;
            *second = NO_NEIGHBOUR;
        } else if *first != NO_NEIGHBOUR {
            *second = t;
        }
    }

    fn opposite(&self, t: u32) -> u32 {
        let [first, second] = self.0;
        if first == t { second } else { first }
    }
}

/// Each triangle's neighbour across each edge (slot k: from corner k to corner k + 1), as the
/// compiler finds them (`makeneighbors`): edges match by their ends' positions and blends, in
/// either direction; an edge of one triangle, or of three or more, has none.
fn adjacency(v: &Vertices, triangles: &[[u32; 3]]) -> Vec<[u32; 3]> {
    let end = |i: u32| -> EdgeEnd {
        let p = v.positions.get(i as usize).copied().unwrap_or_default();
        let b = v.blends.get(i as usize).copied().unwrap_or_default();
        // Adding 0 makes -0 into +0, which the compiler's comparison takes as equal.
        (p.map(|x| (x + 0.0).to_bits()), b)
    };
    let key = |a: u32, b: u32| {
        let (a, b) = (end(a), end(b));
        if a <= b { (a, b) } else { (b, a) }
    };
    let edges = |t: &[u32; 3]| {
        let [a, b, c] = *t;
        [(a, b), (b, c), (c, a)]
    };
    let mut on_edge: HashMap<(EdgeEnd, EdgeEnd), OnEdge> =
        HashMap::with_capacity(triangles.len().saturating_mul(3));
    for (i, t) in triangles.iter().enumerate() {
        // Fewer triangles than u32 holds: counted before.
        let i = i as u32;
        for (a, b) in edges(t) {
            on_edge
                .entry(key(a, b))
                .and_modify(|e| e.add(i))
                .or_insert(OnEdge([i, NO_NEIGHBOUR]));
        }
    }
    triangles
        .iter()
        .enumerate()
        .map(|(i, t)| {
            edges(t).map(|(a, b)| {
                on_edge
                    .get(&key(a, b))
                    .map_or(NO_NEIGHBOUR, |e| e.opposite(i as u32))
            })
        })
        .collect()
}

/// A pose's channels as the compiler stores them: the rotation with w <= 0 (`flip`).
fn channels(d: &Decomposed) -> [f32; CHANNELS] {
    let [mut x, mut y, mut z, mut w] = d.rotation.to_array();
    if w > 0.0 {
        [x, y, z, w] = [-x, -y, -z, -w];
    }
    let [tx, ty, tz] = d.translation;
    let [sx, sy, sz] = d.scale;
    [tx, ty, tz, x, y, z, w, sx, sy, sz]
}

/// Appends frame `f`'s parent-relative poses as channels: a rigid pose's own rotation (at unit
/// length) and translation, a matrix decomposed (its scale within [`SCALE_ROUNDING`] of 1
/// made 1).
fn frame_channels(model: &Model, f: usize, out: &mut Vec<[f32; CHANNELS]>) {
    let nb = model.bones().len();
    let at = f.saturating_mul(nb);
    let range = at..at.saturating_add(nb);
    match model.skeleton().poses() {
        Poses::Rigid(r) => out.extend(r.get(range).unwrap_or_default().iter().map(|p| {
            let mut d = p.parts();
            let len = d.rotation.length();
            if len > 0.0 && len.is_finite() {
                d.rotation = d.rotation.normalize();
            }
            channels(&d)
        })),
        poses => out.extend(poses.range(at, nb).unwrap_or_default().iter().map(|m| {
            let mut d = m.decompose();
            for s in &mut d.scale {
                if (s.abs() - 1.0).abs() <= SCALE_ROUNDING {
                    *s = s.signum();
                }
            }
            channels(&d)
        })),
    }
}

/// The model frames the file's frames are: from 1 when frame 0 is only the bind pose the joints
/// hold (no scene plays it; with no other frame, none), else all of them. None for a model
/// without bones: the file's frames are its poses'.
fn written_frames(model: &Model, options: &WriteOptions) -> Range<usize> {
    let frames = model.frames().len();
    if model.bones().is_empty() {
        return 0..0;
    }
    if options.keep_frame_zero {
        return 0..frames;
    }
    let plays_bind = model
        .animations()
        .iter()
        .any(|a| a.first_frame == 0 && a.frame_count > 0);
    match (plays_bind, frames) {
        (true, _) => 0..frames,
        (false, 0 | 1) => 0..0,
        (false, _) => 1..frames,
    }
}

struct Joint {
    name: u32,
    parent: i32,
    channels: [f32; CHANNELS],
}

struct Pose {
    parent: i32,
    mask: u32,
    offset: [f32; CHANNELS],
    scale: [f32; CHANNELS],
}

struct Anim {
    name: u32,
    first_frame: u32,
    num_frames: u32,
    fps: f32,
    flags: u32,
}

/// A frame's bounds: mins, maxs, the largest distance from the z axis and from the origin.
type Bounds = [f32; 8];

/// The compiler's quantisation (`QUANTIZE`), in `float`: half up from the channel's minimum.
fn quantize(v: f32, offset: f32, scale: f32) -> u16 {
    (0.5f32 + (v - offset) / scale) as u16
}

/// Poses and frames as the compiler builds them (`calcanimdata`): per pose and channel, over all
/// frames, offset = the minimum and range = maximum - minimum in `float`; a channel whose range
/// is at least 1e-10 gets its mask bit, scale = range / 65535 and one value per frame, the
/// others scale 0. Returns the poses, the channels a frame stores and the values, frame by
/// frame and then pose by pose, padded to an even count.
fn quantised(model: &Model, frames: Range<usize>) -> (Vec<Pose>, u32, Vec<u16>) {
    let nb = model.bones().len();
    if frames.is_empty() {
        return (Vec::new(), 0, Vec::new());
    }
    let mut values = Vec::with_capacity(frames.len().saturating_mul(nb));
    for f in frames.clone() {
        frame_channels(model, f, &mut values);
    }
    let mut poses: Vec<Pose> = model
        .bones()
        .iter()
        .map(|b| Pose {
            parent: b.parent,
            mask: 0,
            offset: [f32::INFINITY; CHANNELS],
            scale: [f32::NEG_INFINITY; CHANNELS],
        })
        .collect();
    // `scale` holds the maximum until the ranges are taken.
    for frame in values.chunks(nb.max(1)) {
        for (pose, v) in poses.iter_mut().zip(frame) {
            for ((lo, hi), &x) in pose.offset.iter_mut().zip(&mut pose.scale).zip(v) {
                *lo = lo.min(x);
                *hi = hi.max(x);
            }
        }
    }
    let mut per_frame = 0u32;
    for pose in &mut poses {
        for (k, (lo, s)) in pose.offset.iter().zip(&mut pose.scale).enumerate() {
            let range = *s - *lo;
            if range >= MIN_RANGE {
                *s = range / 65535.0;
                pose.mask |= 1u32.wrapping_shl(k as u32);
                per_frame = per_frame.wrapping_add(1);
            } else {
                *s = 0.0;
            }
        }
    }
    let total = (per_frame as usize).saturating_mul(frames.len());
    let mut data = Vec::with_capacity(total.saturating_add(1));
    for frame in values.chunks(nb.max(1)) {
        for (pose, v) in poses.iter().zip(frame) {
            for (k, ((&x, &lo), &s)) in v.iter().zip(&pose.offset).zip(&pose.scale).enumerate() {
                if pose.mask & 1u32.wrapping_shl(k as u32) != 0 {
                    data.push(quantize(x, lo, s));
                }
            }
        }
    }
    if !data.len().is_multiple_of(2) {
        data.push(0);
    }
    (poses, per_frame, data)
}

/// Frame `f`'s bounds (`makebounds`): every vertex skinned with the frame's model-space bones.
/// Radii are taken in f64, from the origin; all zero without vertices.
fn frame_bounds(
    model: &Model,
    f: usize,
    bones: &mut [Mat3x4],
    points: &mut Vec<f32>,
) -> Result<Bounds> {
    let frame = to_u32(f, || "frame".to_owned())?;
    model.pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, bones)?;
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    let (mut xy, mut r) = (0.0f64, 0.0f64);
    for (m, mesh) in model.meshes().iter().enumerate() {
        let n = mesh.vertex_count();
        points.clear();
        points.resize(n.saturating_mul(3), 0.0);
        let mut target = Strided::new(points, 3)?;
        model.skin_mesh(m, bones, 0, n, 0, &mut target)?;
        for p in points.as_chunks::<3>().0 {
            for ((l, h), &x) in lo.iter_mut().zip(&mut hi).zip(p) {
                *l = l.min(x);
                *h = h.max(x);
            }
            let [x, y, z] = wide(*p);
            let d = x * x + y * y;
            xy = xy.max(d);
            r = r.max(d + z * z);
        }
    }
    if lo[0] > hi[0] {
        return Ok([0.0; 8]);
    }
    Ok([
        lo[0],
        lo[1],
        lo[2],
        hi[0],
        hi[1],
        hi[2],
        xy.sqrt() as f32,
        r.sqrt() as f32,
    ])
}

/// Where the blocks go: each after the last, at 0 when empty.
struct Planner {
    pos: u64,
}

impl Planner {
    fn place(&mut self, len: u64) -> u64 {
        if len == 0 {
            return 0;
        }
        let at = self.pos;
        self.pos = self.pos.saturating_add(len);
        at
    }
}

/// Zeros up to byte `at` of the file.
fn pad_to(out: &mut Vec<u8>, at: u64) {
    let at = at as usize;
    if out.len() < at {
        out.resize(at, 0);
    }
}

fn records_len(count: usize, size: u64) -> u64 {
    (count as u64).saturating_mul(size)
}

/// Writes a model as IQM version 2 (see the module's introduction). A model whose meshes wait
/// for a skeleton is refused, as is a vertex more than four bones weigh on (after merging
/// influences on one bone and dropping weights of 1e-3 or less) and a model of vertices with
/// more than 256 bones (a blend index is a byte). A model without meshes gives an animation
/// file: joints, poses, anims and frames.
pub fn write(model: &Model, options: &WriteOptions) -> Result<Vec<u8>> {
    // A model read from an IQM and not changed since is its file: written again, it keeps the
    // quantised channels, bounds, tangents, comment and extensions the model does not hold.
    // Files whose offsets break the spec's alignment are written anew, aligned, as is any file
    // written with options that change what it holds.
    if *options == WriteOptions::default()
        && model.format() == Format::Iqm
        && let Some(bytes) = model.source_bytes()
        && spec_layout(bytes)
    {
        return Ok(bytes.to_vec());
    }
    if model.unbound().is_some() {
        return Err(Error::invalid_argument(
            "the model's meshes wait for a skeleton: bind them to one before saving as IQM",
        ));
    }
    let bones = model.bones();
    let nb = bones.len();
    let meshes = model.meshes();
    let kept = model.kept();
    let mut text = if kept.extensions.is_empty() {
        Text::default()
    } else {
        Text::starting_with(&kept.text)
    };

    // Meshes, their vertices and triangles numbered across all of them.
    let mut mesh_records = Vec::with_capacity(meshes.len());
    let (mut num_vertexes, mut num_triangles) = (0u32, 0u32);
    for (m, mesh) in meshes.iter().enumerate() {
        let verts = to_u32(mesh.vertex_count(), || format!("mesh {m}: vertex count"))?;
        let tris = to_u32(mesh.triangle_count(), || {
            format!("mesh {m}: triangle count")
        })?;
        mesh_records.push(MeshRecord {
            name: text.add(written_mesh_name(mesh))?,
            material: text.add(mesh.shader())?,
            first_vertex: num_vertexes,
            num_vertexes: verts,
            first_triangle: num_triangles,
            num_triangles: tris,
        });
        num_vertexes = num_vertexes
            .checked_add(verts)
            .ok_or_else(|| Error::limit("the meshes' vertices do not fit IQM's 32-bit count"))?;
        num_triangles = num_triangles
            .checked_add(tris)
            .ok_or_else(|| Error::limit("the meshes' triangles do not fit IQM's 32-bit count"))?;
    }
    if num_vertexes > 0 && nb > MAX_JOINTS {
        return Err(Error::limit(format!(
            "the model has {nb} bones; an IQM blend index is a byte, for {MAX_JOINTS} joints"
        )));
    }

    let vertices = gather_vertices(model, num_vertexes as usize)?;
    // Global indices, turned back to the file's clockwise front faces.
    let mut triangles: Vec<[u32; 3]> = Vec::with_capacity(num_triangles as usize);
    for (mesh, record) in meshes.iter().zip(&mesh_records) {
        for &[a, b, c] in mesh.indices().as_chunks::<3>().0 {
            // Below the mesh's vertex count, and the sum below the total: no overflow.
            triangles.push([a, c, b].map(|i| record.first_vertex.wrapping_add(i)));
        }
    }
    let neighbours = adjacency(&vertices, &triangles);
    let mut arrays = Vec::new();
    if num_vertexes > 0 {
        arrays.push(VertexArray::floats(POSITION, &vertices.positions));
        arrays.push(VertexArray::floats(TEXCOORD, &vertices.texcoords));
        arrays.push(VertexArray::floats(NORMAL, &vertices.normals));
        if vertices.textured {
            arrays.push(VertexArray::floats(
                TANGENT,
                &tangents(&vertices, &triangles),
            ));
        }
        if nb > 0 {
            let blends = &vertices.blends;
            arrays.push(VertexArray::bytes(
                BLEND_INDEXES,
                blends.iter().map(|b| b.bones),
            ));
            arrays.push(VertexArray::bytes(
                BLEND_WEIGHTS,
                blends.iter().map(|b| b.weights),
            ));
        }
        if let Some(colors) = &vertices.colors {
            arrays.push(VertexArray::bytes(COLOR, colors.iter().copied()));
        }
    }

    // Joints: frame 0, the bind pose.
    let mut bind = Vec::with_capacity(nb);
    if nb > 0 {
        frame_channels(model, 0, &mut bind);
    }
    check_read_back(&vertices, &bind, bones, &mesh_records)?;
    let mut joints = Vec::with_capacity(nb);
    for (b, channels) in bones.iter().zip(bind) {
        joints.push(Joint {
            name: text.add(&b.name)?,
            parent: b.parent,
            channels,
        });
    }

    let frames = written_frames(model, options);
    let num_frames = to_u32(frames.len(), || "frame count".to_owned())?;
    let mut anims = Vec::new();
    // Per scene: its anim, where it is written.
    let mut anim_of_scene = vec![None; model.animations().len()];
    if num_frames > 0 {
        for (s, scene) in (model.animations().iter().enumerate()).filter(|(_, a)| a.frame_count > 0)
        {
            if let Some(slot) = anim_of_scene.get_mut(s) {
                *slot = Some(anims.len() as u32);
            }
            anims.push(Anim {
                name: text.add(&scene.name)?,
                first_frame: scene.first_frame.saturating_sub(frames.start as u32),
                num_frames: scene.frame_count,
                fps: scene.fps,
                flags: if scene.looping { LOOP } else { 0 },
            });
        }
        if anims.is_empty() && options.anim_for_frames {
            let name = if num_frames == 1 { "bind" } else { "all" };
            anims.push(Anim {
                name: text.add(&Name::from(name))?,
                first_frame: 0,
                num_frames,
                fps: DEFAULT_FPS,
                flags: LOOP,
            });
        }
    }
    let (poses, num_framechannels, frame_data) = quantised(model, frames.clone());
    let mut bounds = Vec::new();
    if num_frames > 0 && num_vertexes > 0 {
        bounds.reserve(frames.len());
        let mut matrices = vec![Mat3x4::IDENTITY; nb];
        let mut points = Vec::new();
        for f in frames.clone() {
            bounds.push(frame_bounds(model, f, &mut matrices, &mut points)?);
        }
    }
    let extensions = extensions(model, &anim_of_scene, &mut text)?;
    let comment = &kept.comment;
    let mut text = text.bytes;
    text.resize(text.len().next_multiple_of(4), 0);

    // The layout, in `writeiqm`'s order. Sizes saturate; the file size check refuses any that
    // did.
    let mut plan = Planner { pos: HEADER_SIZE };
    let ofs_text = plan.place(text.len() as u64);
    let ofs_meshes = plan.place(records_len(mesh_records.len(), MESH_SIZE));
    let ofs_vertexarrays = plan.place(records_len(arrays.len(), VERTEX_ARRAY_SIZE));
    // The vertex block starts on an 8-byte boundary, padded with zeros (with or without arrays).
    let vertex_pad = plan.pos.next_multiple_of(8).saturating_sub(plan.pos);
    plan.pos = plan.pos.saturating_add(vertex_pad);
    let vertex_start = plan.pos;
    let mut array_offsets = Vec::with_capacity(arrays.len());
    let mut vertex_len = 0u64;
    for a in &arrays {
        vertex_len = vertex_len.next_multiple_of(a.align());
        array_offsets.push(vertex_start.saturating_add(vertex_len));
        vertex_len = vertex_len.saturating_add(a.data.len() as u64);
    }
    let vertex_len = vertex_len.next_multiple_of(4);
    plan.pos = plan.pos.saturating_add(vertex_len);
    let ofs_triangles = plan.place(records_len(triangles.len(), TRIANGLE_SIZE));
    let ofs_adjacency = plan.place(records_len(neighbours.len(), TRIANGLE_SIZE));
    let ofs_joints = plan.place(records_len(joints.len(), JOINT_SIZE));
    let ofs_poses = plan.place(records_len(poses.len(), POSE_SIZE));
    let ofs_anims = plan.place(records_len(anims.len(), ANIM_SIZE));
    let ofs_frames = plan.place(records_len(frame_data.len(), 2));
    let ofs_bounds = plan.place(records_len(bounds.len(), BOUNDS_SIZE));
    let ofs_comment = plan.place((comment.len() as u64).next_multiple_of(4));
    let ofs_extensions = plan.place(records_len(extensions.len(), EXTENSION_SIZE));
    let ext_data: Vec<u64> = (extensions.iter())
        .map(|x| plan.place((x.data.len() as u64).next_multiple_of(4)))
        .collect();
    let filesize = u32::try_from(plan.pos).map_err(|_| {
        Error::limit(format!(
            "the file would be {} bytes, past IQM's 32-bit sizes",
            plan.pos
        ))
    })?;
    // Every offset is below the file size, which fits.
    let ofs = |o: u64| o as u32;

    let mut out = Vec::with_capacity(filesize as usize);
    out.extend_from_slice(MAGIC);
    for v in [
        VERSION,
        filesize,
        0, // flags
        text.len() as u32,
        ofs(ofs_text),
        mesh_records.len() as u32,
        ofs(ofs_meshes),
        arrays.len() as u32,
        num_vertexes,
        ofs(ofs_vertexarrays),
        num_triangles,
        ofs(ofs_triangles),
        ofs(ofs_adjacency),
        joints.len() as u32,
        ofs(ofs_joints),
        poses.len() as u32,
        ofs(ofs_poses),
        anims.len() as u32,
        ofs(ofs_anims),
        num_frames,
        num_framechannels,
        ofs(ofs_frames),
        ofs(ofs_bounds),
        comment.len() as u32,
        ofs(ofs_comment),
        extensions.len() as u32,
        ofs(ofs_extensions),
    ] {
        put_u32::<Le>(&mut out, v);
    }
    debug_assert_eq!(out.len() as u64, HEADER_SIZE);
    out.extend_from_slice(&text);
    for m in &mesh_records {
        for v in [
            m.name,
            m.material,
            m.first_vertex,
            m.num_vertexes,
            m.first_triangle,
            m.num_triangles,
        ] {
            put_u32::<Le>(&mut out, v);
        }
    }
    for (a, &at) in arrays.iter().zip(&array_offsets) {
        for v in [a.kind, 0, a.format, a.size, ofs(at)] {
            put_u32::<Le>(&mut out, v);
        }
    }
    put_zeros(&mut out, vertex_pad as usize);
    for (a, &at) in arrays.iter().zip(&array_offsets) {
        pad_to(&mut out, at);
        out.extend_from_slice(&a.data);
    }
    pad_to(&mut out, vertex_start.saturating_add(vertex_len));
    for t in triangles.iter().chain(&neighbours) {
        t.iter().for_each(|&i| put_u32::<Le>(&mut out, i));
    }
    for j in &joints {
        put_u32::<Le>(&mut out, j.name);
        out.extend_from_slice(&j.parent.to_le_bytes());
        j.channels.iter().for_each(|&v| put_f32::<Le>(&mut out, v));
    }
    for p in &poses {
        out.extend_from_slice(&p.parent.to_le_bytes());
        put_u32::<Le>(&mut out, p.mask);
        p.offset
            .iter()
            .chain(&p.scale)
            .for_each(|&v| put_f32::<Le>(&mut out, v));
    }
    for a in &anims {
        put_u32::<Le>(&mut out, a.name);
        put_u32::<Le>(&mut out, a.first_frame);
        put_u32::<Le>(&mut out, a.num_frames);
        put_f32::<Le>(&mut out, a.fps);
        put_u32::<Le>(&mut out, a.flags);
    }
    frame_data
        .iter()
        .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    bounds
        .iter()
        .flatten()
        .for_each(|&v| put_f32::<Le>(&mut out, v));
    out.extend_from_slice(comment);
    pad_to(
        &mut out,
        ofs_comment.saturating_add((comment.len() as u64).next_multiple_of(4)),
    );
    for (k, (x, &at)) in extensions.iter().zip(&ext_data).enumerate() {
        // The records follow each other; the last ends the list.
        let next = (k as u64).saturating_add(1);
        let next = if next < extensions.len() as u64 {
            next.saturating_mul(EXTENSION_SIZE)
                .saturating_add(ofs_extensions)
        } else {
            0
        };
        for v in [x.name, x.data.len() as u32, ofs(at), ofs(next)] {
            put_u32::<Le>(&mut out, v);
        }
    }
    for (x, &at) in extensions.iter().zip(&ext_data) {
        pad_to(&mut out, at);
        out.extend_from_slice(&x.data);
    }
    pad_to(&mut out, u64::from(filesize));
    debug_assert_eq!(out.len(), filesize as usize);
    Ok(out)
}

/// An extension to write: its name in the text block and its data.
struct Extension {
    name: u32,
    data: Vec<u8>,
}

/// The extensions the model holds: its events as `FTE_EVENT` (on the scenes written as anims; a
/// key that is a number is the event code, any other is code 0 with `key=value` as the data), its
/// meshes' skins as `FTE_SKINS`, and the extensions kept from the file it was read from.
fn extensions(
    model: &Model,
    anim_of_scene: &[Option<u32>],
    text: &mut Text,
) -> Result<Vec<Extension>> {
    let mut out = Vec::new();
    let mut events = Vec::new();
    for e in model.events() {
        let Some(anim) = anim_of_scene.get(e.animation as usize).copied().flatten() else {
            continue;
        };
        let key = e.key.to_string();
        let (code, data) = match key.parse::<u32>() {
            Ok(code) => (code, text.add(&e.value)?),
            Err(_) => (
                0,
                text.add(&Name::from(format!("{key}={}", e.value).as_str()))?,
            ),
        };
        put_u32::<Le>(&mut events, anim);
        put_f32::<Le>(&mut events, e.time);
        put_u32::<Le>(&mut events, code);
        put_u32::<Le>(&mut events, data);
    }
    if !events.is_empty() {
        out.push(Extension {
            name: text.add(&Name::from("FTE_EVENT"))?,
            data: events,
        });
    }
    let meshes = model.meshes();
    if meshes.iter().any(|m| !m.skins().is_empty()) {
        let (mut counts, mut frames, mut skins) = (Vec::new(), Vec::new(), Vec::new());
        let (mut num_frames, mut num_skins) = (0u32, 0u32);
        for m in meshes {
            put_u32::<Le>(
                &mut counts,
                to_u32(m.skins().len(), || "FTE_SKINS".to_owned())?,
            );
            for skin in m.skins() {
                let n = to_u32(skin.frames.len(), || "FTE_SKINS".to_owned())?;
                put_u32::<Le>(&mut skins, num_frames);
                put_u32::<Le>(&mut skins, n);
                put_f32::<Le>(&mut skins, skin.interval);
                for f in &skin.frames {
                    put_u32::<Le>(&mut frames, text.add(&f.material)?);
                    put_u32::<Le>(&mut frames, text.add(&f.shader_text)?);
                }
                num_frames = num_frames.saturating_add(n);
                num_skins = num_skins.saturating_add(1);
            }
        }
        let mut data = Vec::new();
        put_u32::<Le>(&mut data, num_frames);
        put_u32::<Le>(&mut data, num_skins);
        data.extend(counts);
        data.extend(frames);
        data.extend(skins);
        out.push(Extension {
            name: text.add(&Name::from("FTE_SKINS"))?,
            data,
        });
    }
    for x in &model.kept().extensions {
        out.push(Extension {
            name: text.add(&x.name)?,
            data: x.data.clone(),
        });
    }
    Ok(out)
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::error::ErrorCode;
    use crate::format::Format;
    use crate::model::{Animation, Bone, BoneSlots, Frame, MeshParts, ModelParts};
    use crate::poses::RigidPose;
    use crate::synth::TubeRig;

    // Header fields, by their byte offsets.
    const FILESIZE: usize = 20;
    const NUM_TEXT: usize = 28;
    const OFS_TEXT: usize = 32;
    const NUM_MESHES: usize = 36;
    const OFS_MESHES: usize = 40;
    const NUM_VERTEXARRAYS: usize = 44;
    const NUM_VERTEXES: usize = 48;
    const OFS_VERTEXARRAYS: usize = 52;
    const NUM_TRIANGLES: usize = 56;
    const OFS_TRIANGLES: usize = 60;
    const OFS_ADJACENCY: usize = 64;
    const NUM_JOINTS: usize = 68;
    const OFS_JOINTS: usize = 72;
    const NUM_POSES: usize = 76;
    const OFS_POSES: usize = 80;
    const NUM_ANIMS: usize = 84;
    const OFS_ANIMS: usize = 88;
    const NUM_FRAMES: usize = 92;
    const NUM_FRAMECHANNELS: usize = 96;
    const OFS_FRAMES: usize = 100;
    const OFS_BOUNDS: usize = 104;

    fn u32_at(d: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(d[at..at + 4].try_into().unwrap())
    }

    fn f32_at(d: &[u8], at: usize) -> f32 {
        f32::from_bits(u32_at(d, at))
    }

    fn u16_at(d: &[u8], at: usize) -> u16 {
        u16::from_le_bytes(d[at..at + 2].try_into().unwrap())
    }

    fn h(d: &[u8], field: usize) -> usize {
        u32_at(d, field) as usize
    }

    fn text_at(d: &[u8], at: usize) -> &str {
        let start = h(d, OFS_TEXT) + at;
        let end = start + d[start..].iter().position(|&b| b == 0).unwrap();
        std::str::from_utf8(&d[start..end]).unwrap()
    }

    fn rz(angle: f32, t: [f32; 3]) -> RigidPose {
        RigidPose {
            rotation: Quat::from_rotation_z(angle).to_array(),
            translation: t,
        }
    }

    /// One vertex share of a bone: the bones are unrotated in the bind pose, bone 0 at the
    /// origin and bone 1 at z = 10.
    fn share(bone: u32, weight: f32, p: [f32; 3]) -> Influence {
        let joint = if bone == 1 { 10.0 } else { 0.0 };
        Influence {
            origin: [weight * p[0], weight * p[1], weight * (p[2] - joint)],
            weight,
            normal: [0.0, -weight, 0.0],
            bone,
        }
    }

    /// A quad in the x-z plane facing -y (two triangles sharing the edge 0-2) on a root and an
    /// arm; frame 0 the bind pose, frames 1 to 3 the arm turned about z, scene `wave` over
    /// them and an empty scene.
    fn quad_parts() -> ModelParts {
        let p = [
            [0.0, 0.0, 0.0],
            [4.0, 0.0, 0.0],
            [4.0, 0.0, 12.0],
            [0.0, 0.0, 12.0],
        ];
        let vertices: [&[(u32, f32)]; 4] = [
            &[(0, 1.0)],
            &[(0, 0.5), (1, 0.5)],
            &[(1, 1.0)],
            &[(1, 0.75), (0, 0.25)],
        ];
        let mut influence_start = vec![0];
        let mut influences = Vec::new();
        for (v, shares) in vertices.iter().enumerate() {
            influences.extend(shares.iter().map(|&(b, w)| share(b, w, p[v])));
            influence_start.push(influences.len() as u32);
        }
        let mut parts = ModelParts::new(Format::Dpm);
        parts.bones = vec![
            Bone {
                name: Name::from("root"),
                parent: -1,
                flags: 0,
            },
            Bone {
                name: Name::from("arm"),
                parent: 0,
                flags: 0,
            },
        ];
        parts.frames = ["bind", "a", "b", "c"].map(Frame::named).to_vec();
        let root = rz(0.0, [0.0; 3]);
        parts.poses = [0.0, 0.5, -0.3, 0.1]
            .iter()
            .flat_map(|&a| [root, rz(a, [0.0, 0.0, 10.0])])
            .collect::<Vec<_>>()
            .into();
        parts.animations = vec![
            Animation {
                name: Name::from("wave"),
                first_frame: 1,
                frame_count: 3,
                fps: 10.0,
                looping: true,
                ..Animation::default()
            },
            Animation {
                name: Name::from("none"),
                first_frame: 0,
                frame_count: 0,
                fps: 10.0,
                ..Animation::default()
            },
        ];
        parts.meshes = vec![MeshParts {
            name: Name::from("quad"),
            shader: Name::from("skin"),
            influence_start,
            influences,
            indices: vec![0, 1, 2, 0, 2, 3],
            texcoords: Some(vec![[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]]),
            ..MeshParts::default()
        }];
        parts
    }

    fn save(parts: ModelParts) -> Vec<u8> {
        write(&Model::from_parts(parts).unwrap(), &WriteOptions::default()).unwrap()
    }

    fn saving(parts: ModelParts) -> Error {
        write(&Model::from_parts(parts).unwrap(), &WriteOptions::default()).unwrap_err()
    }

    fn blend_of(shares: &[(u32, f32)]) -> std::result::Result<Blend, usize> {
        let influences: Vec<Influence> = shares
            .iter()
            .map(|&(bone, weight)| Influence {
                bone,
                weight,
                ..Influence::default()
            })
            .collect();
        blend(&influences, &mut Vec::new())
    }

    #[test]
    fn header_counts_and_offsets_follow_the_compiler_layout() {
        let d = save(quad_parts());
        assert_eq!(&d[..16], MAGIC);
        assert_eq!(u32_at(&d, 16), 2);
        assert_eq!(h(&d, FILESIZE), d.len());
        assert_eq!(u32_at(&d, 24), 0, "flags");
        // "", quad, skin, root, arm, wave: 25 bytes, padded to 28.
        assert_eq!((h(&d, NUM_TEXT), h(&d, OFS_TEXT)), (28, 124));
        assert_eq!((h(&d, NUM_MESHES), h(&d, OFS_MESHES)), (1, 152));
        // Position, texcoord, normal, tangent, blend indexes and weights; no colours.
        assert_eq!((h(&d, NUM_VERTEXARRAYS), h(&d, OFS_VERTEXARRAYS)), (6, 176));
        assert_eq!(h(&d, NUM_VERTEXES), 4);
        // The vertex block at 296 (8-aligned): 48 + 32 + 48 + 64 + 16 + 16 bytes.
        assert_eq!((h(&d, NUM_TRIANGLES), h(&d, OFS_TRIANGLES)), (2, 520));
        assert_eq!(h(&d, OFS_ADJACENCY), 544);
        assert_eq!((h(&d, NUM_JOINTS), h(&d, OFS_JOINTS)), (2, 568));
        assert_eq!((h(&d, NUM_POSES), h(&d, OFS_POSES)), (2, 664));
        assert_eq!((h(&d, NUM_ANIMS), h(&d, OFS_ANIMS)), (1, 840));
        // Frames 1 to 3 (frame 0 is only the bind pose); two channels vary, the arm's qz, qw.
        assert_eq!((h(&d, NUM_FRAMES), h(&d, NUM_FRAMECHANNELS)), (3, 2));
        assert_eq!(h(&d, OFS_FRAMES), 860);
        assert_eq!(h(&d, OFS_BOUNDS), 872);
        assert_eq!(d.len(), 872 + 3 * 32);
        assert_eq!(&d[108..124], &[0; 16], "no comment, no extensions");
        for field in [
            OFS_TEXT,
            OFS_MESHES,
            OFS_VERTEXARRAYS,
            OFS_TRIANGLES,
            OFS_ADJACENCY,
            OFS_JOINTS,
            OFS_POSES,
            OFS_ANIMS,
            OFS_FRAMES,
            OFS_BOUNDS,
        ] {
            assert_eq!(h(&d, field) % 4, 0, "field at {field}");
        }

        let mesh = h(&d, OFS_MESHES);
        assert_eq!(text_at(&d, h(&d, mesh)), "quad");
        assert_eq!(text_at(&d, h(&d, mesh + 4)), "skin");
        assert_eq!(&d[h(&d, OFS_TEXT)..h(&d, OFS_TEXT) + 1], &[0]);
        let arrays: Vec<[u32; 5]> = (0..6)
            .map(|i| std::array::from_fn(|k| u32_at(&d, 176 + i * 20 + k * 4)))
            .collect();
        assert_eq!(
            arrays,
            [
                [POSITION, 0, FLOAT, 3, 296],
                [TEXCOORD, 0, FLOAT, 2, 344],
                [NORMAL, 0, FLOAT, 3, 376],
                [TANGENT, 0, FLOAT, 4, 424],
                [BLEND_INDEXES, 0, UBYTE, 4, 488],
                [BLEND_WEIGHTS, 0, UBYTE, 4, 504],
            ]
        );
        assert_eq!(f32_at(&d, 296 + 2 * 12 + 8), 12.0, "vertex 2 z");
        assert_eq!(
            &d[488..504],
            &[0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]
        );
        // 0.5 and 0.5 round to 128 each; the first gives one back.
        assert_eq!(
            &d[504..520],
            &[255, 0, 0, 0, 127, 128, 0, 0, 255, 0, 0, 0, 191, 64, 0, 0]
        );
        let anim = h(&d, OFS_ANIMS);
        assert_eq!(text_at(&d, h(&d, anim)), "wave");
        assert_eq!(u32_at(&d, anim + 4), 0, "first frame, counted from frame 1");
        assert_eq!(u32_at(&d, anim + 8), 3);
        assert_eq!(f32_at(&d, anim + 12), 10.0);
        assert_eq!(u32_at(&d, anim + 16), LOOP);
    }

    #[test]
    fn triangles_are_written_clockwise_and_neighbours_found_across_shared_edges() {
        let d = save(quad_parts());
        let tris: Vec<u32> = (0..6).map(|k| u32_at(&d, 520 + 4 * k)).collect();
        assert_eq!(tris, [0, 2, 1, 0, 3, 2]);
        let adjacency: Vec<u32> = (0..6).map(|k| u32_at(&d, 544 + 4 * k)).collect();
        // Triangle 0's edge 0 -> 2 (slot 0) and triangle 1's edge 2 -> 0 (slot 2) are shared.
        let n = NO_NEIGHBOUR;
        assert_eq!(adjacency, [1, n, n, n, n, 0]);
    }

    #[test]
    fn an_edge_of_three_triangles_has_no_neighbour() {
        let v = Vertices {
            positions: vec![
                [0.0; 3],
                [1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, -1.0, 0.0],
                [0.0, 0.0, 1.0],
            ],
            texcoords: Vec::new(),
            normals: Vec::new(),
            blends: Vec::new(),
            colors: None,
            textured: false,
        };
        let n = NO_NEIGHBOUR;
        let two = adjacency(&v, &[[0, 1, 2], [1, 0, 3]]);
        assert_eq!(two, [[1, n, n], [0, n, n]]);
        let three = adjacency(&v, &[[0, 1, 2], [1, 0, 3], [0, 1, 4]]);
        assert_eq!(three, [[n; 3]; 3]);
    }

    #[test]
    fn weights_round_to_bytes_summing_to_255_as_the_compiler_rounds_them() {
        let bytes = |s: &[(u32, f32)]| {
            let b = blend_of(s).unwrap();
            (b.bones, b.weights)
        };
        // 127.5, 95.625 and 31.875 round to 128 + 96 + 32 = 256: the first slot gives one back.
        assert_eq!(
            bytes(&[(2, 0.5), (7, 0.375), (1, 0.125)]),
            ([2, 7, 1, 0], [127, 96, 32, 0])
        );
        // 100.4, 100.3 and 54.3 round to 254: the first slot takes one more.
        assert_eq!(
            bytes(&[(0, 100.4 / 255.0), (1, 100.3 / 255.0), (2, 54.3 / 255.0)]),
            ([0, 1, 2, 0], [101, 100, 54, 0])
        );
        // As floats 0.3 and 0.2 are a little over, their sum a little over 1: scaled by it,
        // 0.5 x 255 falls just under 127.5 (127), 0.3 x 255 stays just over 76.5 (77) and
        // 0.2 x 255 rounds to 51.0 (51): 255 as they are.
        assert_eq!(
            bytes(&[(0, 0.5), (1, 0.3), (2, 0.2)]),
            ([0, 1, 2, 0], [127, 77, 51, 0])
        );
        // One bone twice is one influence; ties keep the model's order; below 1e-3 is dropped;
        // the rest is scaled to the whole.
        assert_eq!(
            bytes(&[(3, 0.25), (5, 0.5), (3, 0.25), (9, 0.0009)]),
            ([3, 5, 0, 0], [127, 128, 0, 0])
        );
        assert_eq!(bytes(&[(4, 0.2)]), ([4, 0, 0, 0], [255, 0, 0, 0]));
        assert_eq!(bytes(&[(4, 0.0005)]), ([0; 4], [0; 4]));
        assert_eq!(
            blend_of(&[(0, 0.2), (1, 0.2), (2, 0.2), (3, 0.2), (4, 0.2)]),
            Err(5)
        );
        // Four after a tiny one is dropped.
        assert!(blend_of(&[(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25), (4, 0.0001)]).is_ok());
    }

    /// A joint sheared and flattened: its x axis all but nothing, its y axis leaning along x.
    /// The model holds its vertices' influences in range, but IQM's channels (translation,
    /// rotation, scale) cannot hold the shear, and in the bind space of the joint as written a
    /// vertex's lean along x becomes a distance past what a reader takes. Refused, naming the
    /// vertex, rather than written and then refused at load.
    #[test]
    fn a_model_whose_iqm_would_not_load_back_is_refused_naming_the_vertex() {
        let mut parts = quad_parts();
        let sheared = Mat3x4 {
            m: [2e-9, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 10.0],
        };
        parts.poses = [Mat3x4::IDENTITY, sheared].repeat(4).into();
        // In the arm's plane (x = 0 in its space): 4 from its origin along y, 1 along z.
        for inf in &mut parts.meshes[0].influences {
            if inf.bone == 1 {
                inf.origin = [0.0, 4.0 * inf.weight, inf.weight];
            }
        }
        let model = Model::from_parts(parts).unwrap();
        let e = write(&model, &WriteOptions::default()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Limit, "{e}");
        let text = e.to_string();
        assert!(
            text.contains("mesh 0 vertex 1: in joint 1's bind space"),
            "{text}"
        );
    }

    #[test]
    fn a_vertex_of_five_bones_is_refused_naming_it() {
        let mut parts = quad_parts();
        parts.bones.extend((2..5).map(|i| Bone {
            name: Name::from(format!("b{i}").as_str()),
            parent: 0,
            flags: 0,
        }));
        parts.poses = (0..parts.frames.len())
            .flat_map(|_| {
                [
                    rz(0.0, [0.0; 3]),
                    rz(0.0, [0.0, 0.0, 10.0]),
                    rz(0.0, [0.0; 3]),
                    rz(0.0, [0.0; 3]),
                    rz(0.0, [0.0; 3]),
                ]
            })
            .collect::<Vec<_>>()
            .into();
        let mesh = &mut parts.meshes[0];
        mesh.influences
            .splice(1..3, (0..5).map(|b| share(b, 0.2, [4.0, 0.0, 0.0])));
        mesh.influence_start = vec![0, 1, 6, 7, 9];
        let e = saving(parts);
        assert_eq!(e.code(), ErrorCode::Unsupported);
        let message = e.to_string();
        assert!(message.contains("mesh 0 vertex 1"), "{message}");
        assert!(message.contains("--max-influences 4"), "{message}");
    }

    #[test]
    fn constant_channels_are_offsets_and_varying_ones_decode_within_half_a_step() {
        let d = save(quad_parts());
        let pose = |p: usize| h(&d, OFS_POSES) + p * 88;
        // The root does not move: every channel constant, its value the offset.
        assert_eq!(u32_at(&d, pose(0)) as i32, -1);
        assert_eq!(u32_at(&d, pose(0) + 4), 0);
        for k in 0..10 {
            assert_eq!(f32_at(&d, pose(0) + 48 + 4 * k), 0.0);
        }
        assert_eq!(
            f32_at(&d, pose(0) + 8 + 4 * 6),
            -1.0,
            "w of the identity, flipped"
        );
        // The arm turns about z: qz and qw vary, its translation (z = 10) does not.
        assert_eq!(u32_at(&d, pose(1)), 0);
        assert_eq!(u32_at(&d, pose(1) + 4), 1 << 5 | 1 << 6);
        assert_eq!(f32_at(&d, pose(1) + 8 + 4 * 2), 10.0);
        assert_eq!(f32_at(&d, pose(1) + 48 + 4 * 2), 0.0);
        let frames = h(&d, OFS_FRAMES);
        for (f, angle) in [0.5f32, -0.3, 0.1].into_iter().enumerate() {
            let q = Quat::from_rotation_z(angle);
            // Stored with w <= 0.
            let want = if q.w > 0.0 { -q } else { q };
            for (slot, k, v) in [(0, 5, want.z), (1, 6, want.w)] {
                let offset = f32_at(&d, pose(1) + 8 + 4 * k);
                let scale = f32_at(&d, pose(1) + 48 + 4 * k);
                let got = offset + f32::from(u16_at(&d, frames + 2 * (2 * f + slot))) * scale;
                assert!(scale > 0.0);
                assert!(
                    (got - v).abs() <= scale * 0.5 + 1e-7,
                    "frame {f} channel {k}"
                );
            }
        }
        // The joints hold frame 0, unquantised.
        let joint = h(&d, OFS_JOINTS) + 48;
        assert_eq!(text_at(&d, h(&d, joint)), "arm");
        assert_eq!(u32_at(&d, joint + 4), 0);
        let floats: Vec<f32> = (0..10).map(|k| f32_at(&d, joint + 8 + 4 * k)).collect();
        assert_eq!(floats, [0.0, 0.0, 10.0, 0.0, 0.0, 0.0, -1.0, 1.0, 1.0, 1.0]);
    }

    #[test]
    fn tangents_follow_the_texture_u_axis() {
        let d = save(quad_parts());
        for v in 0..4 {
            let t: Vec<f32> = (0..4).map(|k| f32_at(&d, 424 + 16 * v + 4 * k)).collect();
            assert_eq!(t, [1.0, 0.0, 0.0, 1.0], "vertex {v}");
            let n: Vec<f32> = (0..3).map(|k| f32_at(&d, 376 + 12 * v + 4 * k)).collect();
            assert_eq!(n, [0.0, -1.0, 0.0], "vertex {v}");
        }
    }

    #[test]
    fn bounds_are_each_written_frames_skinned_vertices() {
        let parts = quad_parts();
        let model = Model::from_parts(parts).unwrap();
        let d = write(&model, &WriteOptions::default()).unwrap();
        for (k, frame) in (1..4).enumerate() {
            let mut bones = vec![Mat3x4::IDENTITY; 2];
            model
                .pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, &mut bones)
                .unwrap();
            let mut p = vec![0.0f32; 12];
            let mut target = Strided::new(&mut p, 3).unwrap();
            model.skin_mesh(0, &bones, 0, 4, 0, &mut target).unwrap();
            let at = h(&d, OFS_BOUNDS) + 32 * k;
            for a in 0..3 {
                let lo = p
                    .iter()
                    .skip(a)
                    .step_by(3)
                    .copied()
                    .fold(f32::MAX, f32::min);
                let hi = p
                    .iter()
                    .skip(a)
                    .step_by(3)
                    .copied()
                    .fold(f32::MIN, f32::max);
                assert_eq!(f32_at(&d, at + 4 * a), lo);
                assert_eq!(f32_at(&d, at + 12 + 4 * a), hi);
            }
            let radius = p
                .chunks(3)
                .map(|c| Vec3::from_slice(c).length())
                .fold(0.0, f32::max);
            assert!((f32_at(&d, at + 28) - radius).abs() < 1e-5);
        }
        // The arm at frame 1 turns vertex 2 (4, 0, 12) about z by 0.5 at z = 10.
        let xy = f32_at(&d, h(&d, OFS_BOUNDS) + 24);
        assert!((xy - 4.0).abs() < 1e-5, "{xy}");
    }

    #[test]
    fn a_static_mesh_has_joints_but_no_frames() {
        let mut parts = quad_parts();
        parts.frames.truncate(1);
        if let Poses::Rigid(r) = &mut parts.poses {
            r.truncate(2);
        }
        parts.animations.retain(|a| a.frame_count == 0);
        let d = save(parts);
        assert_eq!(h(&d, NUM_JOINTS), 2);
        for field in [NUM_POSES, OFS_POSES, NUM_ANIMS, OFS_ANIMS, NUM_FRAMES] {
            assert_eq!(h(&d, field), 0, "field at {field}");
        }
        for field in [NUM_FRAMECHANNELS, OFS_FRAMES, OFS_BOUNDS] {
            assert_eq!(h(&d, field), 0, "field at {field}");
        }
        assert_eq!(h(&d, OFS_JOINTS) + 2 * 48, d.len());
    }

    #[test]
    fn for_qfusion_a_static_mesh_gets_its_bind_pose_as_a_one_frame_anim_with_bounds() {
        let mut parts = quad_parts();
        parts.frames.truncate(1);
        if let Poses::Rigid(r) = &mut parts.poses {
            r.truncate(2);
        }
        parts.animations.retain(|a| a.frame_count == 0);
        let options = WriteOptions {
            keep_frame_zero: true,
            anim_for_frames: true,
        };
        let d = write(&Model::from_parts(parts).unwrap(), &options).unwrap();
        assert_eq!(h(&d, NUM_FRAMES), 1);
        assert_eq!(h(&d, NUM_POSES), h(&d, NUM_JOINTS));
        assert_eq!(h(&d, NUM_ANIMS), 1);
        let anim = h(&d, OFS_ANIMS);
        assert_eq!(text_at(&d, u32_at(&d, anim) as usize), "bind");
        assert_eq!((u32_at(&d, anim + 4), u32_at(&d, anim + 8)), (0, 1));
        assert_ne!(h(&d, OFS_BOUNDS), 0);
    }

    #[test]
    fn keeping_frame_zero_numbers_the_files_frames_as_the_models() {
        let mut parts = quad_parts();
        parts
            .animations
            .retain(|a| a.first_frame > 0 && a.frame_count > 0);
        let model = Model::from_parts(parts).unwrap();
        let first = model.animations()[0].first_frame;
        let options = WriteOptions {
            keep_frame_zero: true,
            ..WriteOptions::default()
        };
        assert_eq!(
            written_frame_range(&model, &options),
            0..model.frames().len()
        );
        let d = write(&model, &options).unwrap();
        assert_eq!(h(&d, NUM_FRAMES), model.frames().len());
        assert_eq!(u32_at(&d, h(&d, OFS_ANIMS) + 4), first);
        // By default frame 0, the bind pose no scene plays, is left out.
        assert_eq!(
            written_frame_range(&model, &WriteOptions::default()).start,
            1
        );
    }

    #[test]
    fn frames_without_a_scene_skip_the_bind_pose() {
        let mut parts = quad_parts();
        parts.animations.clear();
        let d = save(parts);
        assert_eq!((h(&d, NUM_FRAMES), h(&d, NUM_ANIMS)), (3, 0));
        assert_eq!(h(&d, NUM_POSES), 2);
    }

    #[test]
    fn a_scene_that_plays_the_bind_pose_keeps_it_as_frame_0() {
        let d = save(TubeRig::default().parts());
        // The tube's scene runs over all four frames, bind pose included.
        assert_eq!((h(&d, NUM_FRAMES), h(&d, NUM_ANIMS)), (4, 1));
        assert_eq!(u32_at(&d, h(&d, OFS_ANIMS) + 4), 0);
        assert_eq!(u32_at(&d, h(&d, OFS_ANIMS) + 8), 4);
        assert_eq!(h(&d, FILESIZE), d.len());
        // The bind pose quantised is the joints' pose.
        let nb = h(&d, NUM_JOINTS);
        let mut at = h(&d, OFS_FRAMES);
        for j in 0..nb {
            let pose = h(&d, OFS_POSES) + 88 * j;
            let mask = u32_at(&d, pose + 4);
            for k in 0..10 {
                let offset = f32_at(&d, pose + 8 + 4 * k);
                let scale = f32_at(&d, pose + 48 + 4 * k);
                let mut value = offset;
                if mask & 1 << k != 0 {
                    value += f32::from(u16_at(&d, at)) * scale;
                    at += 2;
                }
                let joint = f32_at(&d, h(&d, OFS_JOINTS) + 48 * j + 8 + 4 * k);
                assert!((value - joint).abs() <= scale * 0.5 + 1e-6, "joint {j}");
            }
        }
    }

    #[test]
    fn a_model_without_meshes_is_an_animation_file() {
        let mut parts = quad_parts();
        parts.meshes.clear();
        let d = save(parts);
        for field in [
            NUM_MESHES,
            OFS_MESHES,
            NUM_VERTEXARRAYS,
            OFS_VERTEXARRAYS,
            NUM_VERTEXES,
            NUM_TRIANGLES,
            OFS_TRIANGLES,
            OFS_ADJACENCY,
            OFS_BOUNDS,
        ] {
            assert_eq!(h(&d, field), 0, "field at {field}");
        }
        assert_eq!((h(&d, NUM_JOINTS), h(&d, NUM_POSES)), (2, 2));
        assert_eq!((h(&d, NUM_FRAMES), h(&d, NUM_ANIMS)), (3, 1));
        // "", root, arm, wave: 15 bytes of text, padded to 16; then the (empty) vertex block's
        // padding to 8.
        assert_eq!(h(&d, NUM_TEXT), 16);
        assert_eq!(h(&d, OFS_JOINTS), 144);
        assert_eq!(&d[140..144], &[0; 4]);
        assert_eq!(h(&d, FILESIZE), d.len());
    }

    #[test]
    fn colours_are_written_where_a_mesh_has_them() {
        let mut parts = quad_parts();
        parts.meshes[0].colors = Some(vec![[1, 2, 3, 4]; 4]);
        let mut second = parts.meshes[0].clone();
        second.colors = None;
        second.texcoords = None;
        parts.meshes.push(second);
        let d = save(parts);
        assert_eq!(h(&d, NUM_VERTEXARRAYS), 7);
        assert_eq!((h(&d, NUM_VERTEXES), h(&d, NUM_TRIANGLES)), (8, 4));
        let color = h(&d, OFS_VERTEXARRAYS) + 6 * 20;
        assert_eq!(u32_at(&d, color), COLOR);
        let at = h(&d, color + 16);
        assert_eq!(&d[at..at + 4], &[1, 2, 3, 4]);
        assert_eq!(&d[at + 16..at + 20], &[255; 4]);
        let mesh = h(&d, OFS_MESHES) + 24;
        let record: Vec<u32> = (2..6).map(|k| u32_at(&d, mesh + 4 * k)).collect();
        assert_eq!(record, [4, 4, 2, 2]);
        let tri = h(&d, OFS_TRIANGLES) + 2 * 12;
        assert_eq!(
            u32_at(&d, tri + 4),
            6,
            "the second mesh's vertex 2, written second"
        );
    }

    #[test]
    fn meshes_waiting_for_a_skeleton_are_refused() {
        let mut parts = quad_parts();
        parts.bones.clear();
        parts.frames.clear();
        parts.poses = Poses::default();
        parts.animations.clear();
        parts.unbound = Some(BoneSlots::ByIndex(2));
        assert_eq!(saving(parts).code(), ErrorCode::InvalidArgument);
    }

    #[test]
    fn more_bones_than_a_byte_indexes_are_refused() {
        let mut parts = quad_parts();
        parts.bones.extend((2..257).map(|i| Bone {
            name: Name::from(format!("b{i}").as_str()),
            parent: 0,
            flags: 0,
        }));
        parts.poses = (0..parts.frames.len())
            .flat_map(|_| (0..257).map(|b| rz(0.0, [0.0, 0.0, if b == 1 { 10.0 } else { 0.0 }])))
            .collect::<Vec<_>>()
            .into();
        assert_eq!(saving(parts.clone()).code(), ErrorCode::Limit);
        // Without vertices there is no blend index to hold them.
        parts.meshes.clear();
        assert_eq!(h(&save(parts), NUM_JOINTS), 257);
    }
}
