//! ossa loads the skeletal model formats of older game engines, checks every byte it uses, and
//! poses and skins them into buffers the caller owns.
//!
//! The Rust API: [`Model::load`] a file, look inside it, [`Model::pose_frames`] a blend of frames
//! into model-space bone matrices, and [`Model::skin_mesh`] a mesh with them. The C ABI in
//! [`capi`] (header `include/ossa.h`) is a thin layer over the same functions.

pub mod animation;
pub mod assemble;
mod attach;
pub mod capi;
pub mod character;
pub mod convert;
mod cursor;
pub mod error;
pub mod format;
pub mod gpu;
pub mod io;
pub mod math;
pub mod model;
mod name_index;
pub mod optimize;
pub mod pose;
pub mod poses;
pub mod render;
mod sidecar;
mod skills;
pub mod skin;
pub mod synth;
#[cfg(feature = "gltf")]
pub mod textures;

pub use error::{Detail, Error, ErrorCode, Result};
pub use format::{
    Format, LoadOptions, Report, cfp, cmx, dmf, dpm, iqm, mm2, sims_mesh, sims_msh, skm, validate,
    validate_file,
};
pub use math::Mat3x4;
pub use model::{
    Animation, BONE_ATTACHMENT, BONE_SYNTHETIC, Bone, BoneSlots, Extent, Frame, Influence,
    KEY_POSITION, KEY_ROTATION, KEY_SCALE, Kept, KeptExtension, KeyedAnimation, Keyframe, Material,
    Mesh, MeshParts, MeshSkin, Model, ModelInfo, ModelParts, MshLayout, Name, SkinFrame, Texture,
};
pub use pose::{FrameBlend, MAX_BLENDS};
pub use poses::{Poses, RigidPose};
pub use skin::{Interleaved, Kernel, RawTarget, SKIN_NORMALIZE, SkinLayout, SkinTarget, Strided};

impl Model {
    /// Loads a model from bytes.
    pub fn load(data: &[u8], options: &LoadOptions) -> Result<Model> {
        format::load(data, options)
    }

    /// Loads a model from a file; the path names it in messages and for format detection.
    pub fn load_file(path: impl AsRef<std::path::Path>, options: &LoadOptions) -> Result<Model> {
        format::load_file(path.as_ref(), options)
    }

    /// Writes the model in `format`.
    pub fn save(&self, format: Format) -> Result<Vec<u8>> {
        match format {
            Format::Dpm => dpm::write(self),
            Format::Skm => skm::write_skm(self),
            Format::Skp => skm::write_skp(self),
            Format::SimsSkn => format::sims_mesh::write_skn(self),
            Format::SimsBmf => format::sims_mesh::write_bmf(self),
            Format::SimsMsh => format::sims_msh::write_msh(self),
            Format::SimsCmx => cmx::write_cmx(self),
            Format::SimsBcf => cmx::write_bcf(self),
            Format::Mm2Skel => mm2::write_skel(self),
            Format::Mm2Mod => mm2::write_mod(self),
            Format::Dmf => dmf::write_binary(self),
            Format::DmfJson => dmf::write_json(self),
            Format::Iqm => iqm::write(self, &iqm::WriteOptions::default()),
            #[cfg(feature = "gltf")]
            Format::Glb | Format::Gltf => {
                // Without the file's place only what the model carries (DMF's PNGs) is embedded.
                let textures = textures::find_textures(self, None, 0);
                Ok(self
                    .export_gltf(&format::gltf::ExportOptions {
                        binary: format == Format::Glb,
                        textures: Some(&textures),
                        ..Default::default()
                    })?
                    .bytes)
            }
            other => Err(Error::unsupported(format!(
                "saving as {} is not supported",
                other.name()
            ))),
        }
    }
}
