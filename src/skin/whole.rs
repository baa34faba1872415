//! Every mesh of a model skinned in one call: the checks made once, then each mesh whole into
//! its own target.

use super::{Kernel, SKIN_NORMALIZE, SkinTarget};
use crate::error::{Error, Result};
use crate::math::Mat3x4;
use crate::model::Model;

impl Model {
    /// Skins every mesh of the model, whole, with model-space bone matrices from
    /// [`Model::pose_frames`] or [`Model::pose_concat`]: mesh `m`'s vertex `v` lands at element
    /// `v` of `targets[m]`. `targets` has one target per mesh, each with room for its mesh's
    /// vertices; the model, the bones and the flags are checked once, before any is written.
    pub fn skin_model<T: SkinTarget>(
        &self,
        bones: &[Mat3x4],
        flags: u32,
        targets: &mut [T],
    ) -> Result<()> {
        self.skin_model_with(Kernel::selected(), bones, flags, targets)
    }

    /// [`Model::skin_model`] with a chosen kernel; one this CPU does not run is an
    /// `InvalidArgument` error.
    pub fn skin_model_with<T: SkinTarget>(
        &self,
        kernel: Kernel,
        bones: &[Mat3x4],
        flags: u32,
        targets: &mut [T],
    ) -> Result<()> {
        let meshes = self.meshes();
        if targets.len() != meshes.len() {
            return Err(Error::invalid_argument(format!(
                "{} targets given, the model has {} meshes",
                targets.len(),
                meshes.len()
            )));
        }
        if flags & !SKIN_NORMALIZE != 0 {
            return Err(Error::invalid_argument(format!(
                "unknown skin flags {flags:#x}"
            )));
        }
        for (m, (mesh, target)) in meshes.iter().zip(targets.iter()).enumerate() {
            if target.capacity() < mesh.vertex_count() {
                return Err(Error::invalid_argument(format!(
                    "target {m} holds {} vertices, mesh {m} has {}",
                    target.capacity(),
                    mesh.vertex_count()
                )));
            }
        }
        // What skin_mesh checks besides (a bound model, the bone count, the kernel) holds for
        // every mesh alike: the first mesh's call finds it before anything is written.
        for (m, (mesh, target)) in meshes.iter().zip(targets.iter_mut()).enumerate() {
            self.skin_mesh_with(kernel, m, bones, 0, mesh.vertex_count(), flags, target)?;
        }
        Ok(())
    }
}
