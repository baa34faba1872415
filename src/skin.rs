//! Skinning: every stored influence of a vertex, none dropped:
//! `p = sum_k (R_k o_k + f_k t_k)`, `n = sum_k R_k n_k`, with `[R_k | t_k]` the bone's
//! model-space matrix. Indices were checked at load, so the loop only walks.

use crate::error::{Error, Result};
use crate::math::Mat3x4;
use crate::model::{Influence, Model};

/// Skin flag: make normals unit length.
pub const SKIN_NORMALIZE: u32 = 1;

/// Where skinned vertices go: vertex `first + i` of a range is handed over as element `i`.
pub trait SkinTarget {
    /// How many vertices fit.
    fn capacity(&self) -> usize;
    fn wants_normals(&self) -> bool;
    /// Stores element `i`; `normal` is meaningful only when [`SkinTarget::wants_normals`].
    fn put(&mut self, i: usize, position: [f32; 3], normal: [f32; 3]);
}

fn strided_capacity(len: usize, stride: usize) -> usize {
    if len < 3 || stride < 3 {
        0
    } else {
        (len - 3) / stride + 1
    }
}

#[inline(always)]
fn store(buf: &mut [f32], at: usize, v: [f32; 3]) {
    if let Some(slot) = buf.get_mut(at..at + 3) {
        slot.copy_from_slice(&v);
    }
}

/// Positions (and optionally normals) in separate float buffers, each with its own stride in floats.
pub struct Strided<'a> {
    positions: &'a mut [f32],
    position_stride: usize,
    normals: Option<(&'a mut [f32], usize)>,
}

impl<'a> Strided<'a> {
    /// Packed or strided positions; `stride` counts floats and is at least 3.
    pub fn new(positions: &'a mut [f32], stride: usize) -> Result<Strided<'a>> {
        if stride < 3 {
            return Err(Error::invalid_argument(format!(
                "position stride {stride} floats is below 3"
            )));
        }
        Ok(Strided {
            positions,
            position_stride: stride,
            normals: None,
        })
    }

    pub fn with_normals(mut self, normals: &'a mut [f32], stride: usize) -> Result<Strided<'a>> {
        if stride < 3 {
            return Err(Error::invalid_argument(format!(
                "normal stride {stride} floats is below 3"
            )));
        }
        self.normals = Some((normals, stride));
        Ok(self)
    }
}

impl SkinTarget for Strided<'_> {
    fn capacity(&self) -> usize {
        let p = strided_capacity(self.positions.len(), self.position_stride);
        match &self.normals {
            Some((n, s)) => p.min(strided_capacity(n.len(), *s)),
            None => p,
        }
    }
    fn wants_normals(&self) -> bool {
        self.normals.is_some()
    }
    #[inline]
    fn put(&mut self, i: usize, position: [f32; 3], normal: [f32; 3]) {
        store(self.positions, i * self.position_stride, position);
        if let Some((n, s)) = &mut self.normals {
            store(n, i * *s, normal);
        }
    }
}

/// Positions and normals interleaved in one buffer: `stride` floats per vertex, the position at
/// float `position_at` and the normal at `normal_at` of each vertex's run.
pub struct Interleaved<'a> {
    buffer: &'a mut [f32],
    stride: usize,
    position_at: usize,
    normal_at: Option<usize>,
}

impl<'a> Interleaved<'a> {
    pub fn new(
        buffer: &'a mut [f32],
        stride: usize,
        position_at: usize,
        normal_at: Option<usize>,
    ) -> Result<Self> {
        let fits = |at: usize| at + 3 <= stride;
        let apart = normal_at.is_none_or(|n| n + 3 <= position_at || position_at + 3 <= n);
        if !fits(position_at) || !normal_at.is_none_or(fits) || !apart {
            return Err(Error::invalid_argument(format!(
                "position at {position_at} and normal at {normal_at:?} do not fit apart in {stride} floats"
            )));
        }
        Ok(Interleaved {
            buffer,
            stride,
            position_at,
            normal_at,
        })
    }
}

impl SkinTarget for Interleaved<'_> {
    fn capacity(&self) -> usize {
        let last = self
            .normal_at
            .map_or(self.position_at, |n| n.max(self.position_at))
            + 3;
        if self.buffer.len() < last {
            0
        } else {
            (self.buffer.len() - last) / self.stride + 1
        }
    }
    fn wants_normals(&self) -> bool {
        self.normal_at.is_some()
    }
    #[inline]
    fn put(&mut self, i: usize, position: [f32; 3], normal: [f32; 3]) {
        let base = i * self.stride;
        store(self.buffer, base + self.position_at, position);
        if let Some(n) = self.normal_at {
            store(self.buffer, base + n, normal);
        }
    }
}

fn normalize(n: [f32; 3]) -> [f32; 3] {
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len > 0.0 {
        [n[0] / len, n[1] / len, n[2] / len]
    } else {
        n
    }
}

#[inline(always)]
fn skin_vertex<const NORMALS: bool>(
    influences: &[Influence],
    bones: &[Mat3x4],
) -> ([f32; 3], [f32; 3]) {
    let mut p = [0.0f32; 3];
    let mut n = [0.0f32; 3];
    for inf in influences {
        let Some(bone) = bones.get(inf.bone as usize) else {
            continue;
        };
        let m = &bone.m;
        let [ox, oy, oz] = inf.origin;
        let f = inf.weight;
        p[0] += m[0] * ox + m[1] * oy + m[2] * oz + f * m[3];
        p[1] += m[4] * ox + m[5] * oy + m[6] * oz + f * m[7];
        p[2] += m[8] * ox + m[9] * oy + m[10] * oz + f * m[11];
        if NORMALS {
            let [nx, ny, nz] = inf.normal;
            n[0] += m[0] * nx + m[1] * ny + m[2] * nz;
            n[1] += m[4] * nx + m[5] * ny + m[6] * nz;
            n[2] += m[8] * nx + m[9] * ny + m[10] * nz;
        }
    }
    (p, n)
}

fn skin_range<const NORMALS: bool, T: SkinTarget + ?Sized>(
    starts: &[u32],
    influences: &[Influence],
    bones: &[Mat3x4],
    normalize_normals: bool,
    target: &mut T,
) {
    for (i, w) in starts.windows(2).enumerate() {
        let infl = influences.get(w[0] as usize..w[1] as usize).unwrap_or(&[]);
        let (p, mut n) = skin_vertex::<NORMALS>(infl, bones);
        if NORMALS && normalize_normals {
            n = normalize(n);
        }
        target.put(i, p, n);
    }
}

impl Model {
    /// Skins vertices `[first, first + count)` of `mesh` with model-space bone matrices from
    /// [`Model::pose_frames`] or [`Model::pose_concat`]; vertex `first + i` lands at element `i`.
    pub fn skin_mesh<T: SkinTarget + ?Sized>(
        &self,
        mesh: usize,
        bones: &[Mat3x4],
        first: usize,
        count: usize,
        flags: u32,
        target: &mut T,
    ) -> Result<()> {
        let m = self.meshes().get(mesh).ok_or_else(|| {
            Error::invalid_argument(format!(
                "mesh {mesh} out of range (model has {} meshes)",
                self.meshes().len()
            ))
        })?;
        if self.unbound().is_some() {
            return Err(Error::invalid_argument(
                "the model's meshes wait for a skeleton: bind them with ossa_model_bind first",
            ));
        }
        if bones.len() != self.bones().len() {
            return Err(Error::invalid_argument(format!(
                "{} bone matrices given, the model has {} bones",
                bones.len(),
                self.bones().len()
            )));
        }
        if flags & !SKIN_NORMALIZE != 0 {
            return Err(Error::invalid_argument(format!(
                "unknown skin flags {flags:#x}"
            )));
        }
        let vc = m.vertex_count();
        let end = first
            .checked_add(count)
            .filter(|&e| e <= vc)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "vertices {first}..{first}+{count} out of range (mesh {mesh} has {vc} vertices)"
                ))
            })?;
        if count > target.capacity() {
            return Err(Error::invalid_argument(format!(
                "the target holds {} vertices, {count} asked for",
                target.capacity()
            )));
        }
        let normalize_normals = flags & SKIN_NORMALIZE != 0;
        let wants_normals = target.wants_normals();

        // A static model in its own pose is its precomputed mesh.
        if let Some(rest) = m.rest()
            && bones == self.skeleton().bind_pose()
        {
            let positions = rest.positions.get(first..end).unwrap_or_default();
            let normals = rest.normals.get(first..end).unwrap_or_default();
            for (i, (p, n)) in positions.iter().zip(normals).enumerate() {
                let n = if normalize_normals { normalize(*n) } else { *n };
                target.put(i, *p, n);
            }
            return Ok(());
        }

        let starts = m.influence_start().get(first..=end).unwrap_or_default();
        let influences = m.all_influences();
        if wants_normals {
            skin_range::<true, T>(starts, influences, bones, normalize_normals, target);
        } else {
            skin_range::<false, T>(starts, influences, bones, false, target);
        }
        Ok(())
    }
}
