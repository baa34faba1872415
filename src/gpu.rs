//! Data for skinning on the GPU: bind-pose vertices, each vertex's strongest influences as bone
//! indices and weights summing to 1, inverse bind matrices, and the matrices a vertex shader
//! multiplies with (`pose * inverse bind`). Linear blend skinning with these equals
//! [`Model::skin_mesh`] wherever a vertex has no more influences than are kept and its
//! influences agree on its bind position (true of real files to about 1e-6).

use crate::error::{Error, Result};
use crate::math::Mat3x4;
use crate::model::Model;
use crate::skin::SkinTarget;

/// Most influences per vertex a GPU layout keeps.
pub const MAX_GPU_INFLUENCES: usize = 8;

impl Model {
    /// The bind-pose (frame 0) positions and normals of vertices `[first, first + count)`.
    pub fn bind_vertices<T: SkinTarget + ?Sized>(
        &self,
        mesh: usize,
        first: usize,
        count: usize,
        flags: u32,
        target: &mut T,
    ) -> Result<()> {
        self.skin_mesh(
            mesh,
            self.skeleton().bind_pose(),
            first,
            count,
            flags,
            target,
        )
    }

    /// The inverse of every bone's bind-pose matrix; the zero matrix for a bone whose bind pose
    /// is singular.
    pub fn inverse_bind(&self, out: &mut [Mat3x4]) -> Result<()> {
        let inverse = self.skeleton().inverse_bind();
        if out.len() != inverse.len() {
            return Err(Error::invalid_argument(format!(
                "the output has room for {} bones, the model has {}",
                out.len(),
                inverse.len()
            )));
        }
        out.copy_from_slice(inverse);
        Ok(())
    }

    /// The matrices a vertex shader multiplies bind-pose vertices with: `bones[i] * inverse
    /// bind[i]`, from model-space bone matrices of [`Model::pose_frames`].
    pub fn skinning_matrices(&self, bones: &[Mat3x4], out: &mut [Mat3x4]) -> Result<()> {
        let n = self.bones().len();
        if bones.len() != n || out.len() != n {
            return Err(Error::invalid_argument(format!(
                "{} bone matrices in and room for {} out, the model has {n} bones",
                bones.len(),
                out.len()
            )));
        }
        for ((o, b), i) in out
            .iter_mut()
            .zip(bones)
            .zip(self.skeleton().inverse_bind())
        {
            *o = b.mul(i);
        }
        Ok(())
    }

    /// Each vertex's `per_vertex` (1 to 8) strongest influences: `bones_out` and `weights_out`
    /// get `per_vertex` entries per vertex, strongest first (ties keep the file's order), the
    /// weights scaled to sum 1 and unused slots bone 0 weight 0. Returns the most influences any
    /// vertex had to drop.
    pub fn gpu_weights(
        &self,
        mesh: usize,
        per_vertex: usize,
        bones_out: &mut [u16],
        weights_out: &mut [f32],
    ) -> Result<usize> {
        if self.unbound().is_some() {
            return Err(Error::invalid_argument(
                "the model's meshes wait for a skeleton: bind them with ossa_model_bind first",
            ));
        }
        let m = self.meshes().get(mesh).ok_or_else(|| {
            Error::invalid_argument(format!(
                "mesh {mesh} out of range (model has {} meshes)",
                self.meshes().len()
            ))
        })?;
        if !(1..=MAX_GPU_INFLUENCES).contains(&per_vertex) {
            return Err(Error::invalid_argument(format!(
                "{per_vertex} influences per vertex asked for; 1 to {MAX_GPU_INFLUENCES} are kept"
            )));
        }
        if self.bones().len() > u16::MAX as usize + 1 {
            return Err(Error::limit(format!(
                "{} bones do not fit 16-bit bone indices",
                self.bones().len()
            )));
        }
        let want = m.vertex_count() * per_vertex;
        if bones_out.len() < want || weights_out.len() < want {
            return Err(Error::invalid_argument(format!(
                "{} vertices of {per_vertex} influences need {want} entries; the outputs hold {} and {}",
                m.vertex_count(),
                bones_out.len(),
                weights_out.len()
            )));
        }
        let mut dropped = 0;
        let mut order = Vec::new();
        for v in 0..m.vertex_count() {
            let influences = m.influences(v);
            order.clear();
            order.extend(0..influences.len());
            order.sort_by(|&a, &b| {
                let (wa, wb) = (
                    influences.get(a).map_or(0.0, |i| i.weight),
                    influences.get(b).map_or(0.0, |i| i.weight),
                );
                wb.total_cmp(&wa)
            });
            dropped = dropped.max(influences.len().saturating_sub(per_vertex));
            let kept: f32 = order
                .iter()
                .take(per_vertex)
                .filter_map(|&k| influences.get(k))
                .map(|i| i.weight)
                .sum();
            let scale = if kept != 0.0 { 1.0 / kept } else { 0.0 };
            let slots = v * per_vertex..(v + 1) * per_vertex;
            let (Some(bones), Some(weights)) =
                (bones_out.get_mut(slots.clone()), weights_out.get_mut(slots))
            else {
                continue;
            };
            for (slot, (b, w)) in bones.iter_mut().zip(weights.iter_mut()).enumerate() {
                match order.get(slot).and_then(|&k| influences.get(k)) {
                    Some(i) => {
                        *b = i.bone as u16;
                        *w = i.weight * scale;
                    }
                    None => {
                        *b = 0;
                        *w = 0.0;
                    }
                }
            }
        }
        Ok(dropped)
    }
}
