//! The C boundary: every `extern "C"` function, every pointer check and the panic catching live
//! here, over the safe Rust API, in one module per section of `include/ossa.h` (which cbindgen
//! makes from these files). The names, types and rules are those of `API.md`.
#![allow(non_camel_case_types)]

use crate::math::Mat3x4;
use crate::model::{BONE_ATTACHMENT, BONE_SYNTHETIC};
use crate::optimize;
use crate::pose::FrameBlend;
use crate::skin::SKIN_NORMALIZE;

mod bones;
mod checks;
mod gpu;
mod load;
mod meshes;
mod pose;
mod render;
mod save;
mod scenes;
mod validate;

// After the engine checks in the header, as the next section of the checks.
mod character;

pub use bones::*;
pub use character::*;
pub use checks::*;
pub use gpu::*;
pub use load::*;
pub use meshes::*;
pub use pose::*;
pub use render::*;
pub use save::*;
pub use scenes::*;
pub use validate::*;

pub const OSSA_VERSION_MAJOR: u32 = 0;
pub const OSSA_VERSION_MINOR: u32 = 1;
pub const OSSA_VERSION_PATCH: u32 = 0;

/// Load flag: reject what the default mode tolerates and repairs.
pub const OSSA_LOAD_STRICT: u32 = 1;
/// Model flag: the meshes wait for `ossa_model_bind`.
pub const OSSA_MODEL_UNBOUND: u32 = 1;
/// Bone flag: an attachment point, protected from removal.
pub const OSSA_BONE_ATTACHMENT: u32 = 1;
/// Bone flag: not in the file; added so that vertices the file binds to no bone (DMF) keep
/// their place. It stays at the origin in every frame.
pub const OSSA_BONE_SYNTHETIC: u32 = 2;
/// Skin flag: make normals unit length.
pub const OSSA_SKIN_NORMALIZE: u32 = 1;
/// Save/optimise flag: remove bones no vertex uses, keeping attachments and ancestors of kept bones.
pub const OSSA_OPTIMIZE_UNUSED_BONES: u32 = 1;
/// Save/optimise flag: order each mesh's triangles for the post-transform vertex cache.
pub const OSSA_OPTIMIZE_TRIANGLE_ORDER: u32 = 2;
/// Save/optimise flag: renumber each mesh's vertices by first use (unused ones last).
pub const OSSA_OPTIMIZE_VERTEX_ORDER: u32 = 4;
/// Save/optimise flag: renumber bones by first use by the vertices, parents before children (a
/// pre-order: each bone's subtree stays together), after the vertex and triangle orders; a model
/// whose vertices use no bone keeps its order.
pub const OSSA_OPTIMIZE_BONE_ORDER: u32 = 8;
/// Save/optimise flag: renumber each mesh's vertices so that those of one influence set (the
/// same bones and weights, skinned alike) are contiguous, sets and their vertices in the order
/// the triangles first use them; triangles keep their order. Skinning then meets long runs
/// under one matrix. After the vertex and triangle orders.
pub const OSSA_OPTIMIZE_SKIN_ORDER: u32 = 16;
/// Save option flag (`ossa_save_options.save_flags`), IQM: write the sidecars even where the
/// engine does not need them (`NAME.framegroups`; `animation.cfg` for qfusion and Warfork), as
/// `ossa convert --sidecars` does; needs `beside`.
pub const OSSA_SAVE_SIDECARS: u32 = 1;
/// Save option flag, IQM for qfusion or Warfork: a player model (`tris.iqm`), with its
/// `animation.cfg` (made from the scenes), as `ossa convert --player` writes it; needs `beside`.
pub const OSSA_SAVE_PLAYER: u32 = 2;

/// Result codes: values are stable and never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ossa_result {
    OSSA_OK = 0,
    /// a required pointer was NULL
    OSSA_ERR_NULL_ARGUMENT = 1,
    /// caller misuse: index out of range, wrong count, stride or buffer too small
    OSSA_ERR_INVALID_ARGUMENT = 2,
    /// the data is none of the supported formats
    OSSA_ERR_UNKNOWN_FORMAT = 3,
    /// the data ends inside a structure it declares
    OSSA_ERR_TRUNCATED = 4,
    /// a rule of the format is broken (bad index, parent order, syntax, NaN...)
    OSSA_ERR_MALFORMED = 5,
    /// a valid file using a version or feature not supported
    OSSA_ERR_UNSUPPORTED = 6,
    /// larger than a limit of the format or of the load options
    OSSA_ERR_LIMIT = 7,
    /// reading a file (or the caller's read callback) failed
    OSSA_ERR_IO = 8,
    /// a needed sidecar file or a named bone is missing
    OSSA_ERR_NOT_FOUND = 9,
    /// a mesh and a skeleton do not fit together
    OSSA_ERR_MISMATCH = 10,
    OSSA_ERR_OUT_OF_MEMORY = 11,
    /// an internal bug, caught at the boundary
    OSSA_ERR_PANIC = 12,
}

#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ossa_format {
    /// detect from content, then from the name's extension
    OSSA_FORMAT_AUTO = 0,
    OSSA_FORMAT_DPM = 1,
    /// qfusion mesh; bones come from an SKP
    OSSA_FORMAT_SKM = 2,
    /// qfusion skeleton + frames
    OSSA_FORMAT_SKP = 3,
    /// The Sims 1 text mesh
    OSSA_FORMAT_SIMS_SKN = 4,
    /// The Sims 1 binary mesh
    OSSA_FORMAT_SIMS_BMF = 5,
    /// The Sims 1 text character file (skeletons, suits, skills)
    OSSA_FORMAT_SIMS_CMX = 6,
    /// binary CMX
    OSSA_FORMAT_SIMS_BCF = 7,
    OSSA_FORMAT_MM2_SKEL = 8,
    /// DashGL DMF 1.5, binary
    OSSA_FORMAT_DMF = 9,
    /// DashGL DMF 1.5, JSON
    OSSA_FORMAT_DMF_JSON = 10,
    /// Midtown Madness 2 text mesh; bones come from an MM2 SKEL
    OSSA_FORMAT_MM2_MOD = 11,
    /// glTF 2.0 binary (.glb): loaded (skins, animations sampled into frames) and saved
    OSSA_FORMAT_GLB = 12,
    /// glTF 2.0 JSON (.gltf): saved with its buffer and images embedded as data URIs; loaded
    /// with them embedded or in files beside it
    OSSA_FORMAT_GLTF = 13,
    /// The Sims 1998 prototype's binary mesh (.msh); its bone is named by its file name
    OSSA_FORMAT_SIMS_MSH = 14,
    /// Inter-Quake Model (`.iqm`), versions 2 and 1; saved as version 2.
    OSSA_FORMAT_IQM = 15,
}

// The C structs and the Rust ones they are read as must share a layout, and the C constants
// must be the library's own.
const _: () = {
    assert!(OSSA_BONE_ATTACHMENT == BONE_ATTACHMENT);
    assert!(OSSA_BONE_SYNTHETIC == BONE_SYNTHETIC);
    assert!(OSSA_SKIN_NORMALIZE == SKIN_NORMALIZE);
    assert!(OSSA_OPTIMIZE_UNUSED_BONES == optimize::OPTIMIZE_UNUSED_BONES);
    assert!(OSSA_OPTIMIZE_TRIANGLE_ORDER == optimize::OPTIMIZE_TRIANGLE_ORDER);
    assert!(OSSA_OPTIMIZE_VERTEX_ORDER == optimize::OPTIMIZE_VERTEX_ORDER);
    assert!(OSSA_OPTIMIZE_BONE_ORDER == optimize::OPTIMIZE_BONE_ORDER);
    assert!(OSSA_OPTIMIZE_SKIN_ORDER == optimize::OPTIMIZE_SKIN_ORDER);
    assert!(size_of::<ossa_mat3x4>() == size_of::<Mat3x4>());
    assert!(align_of::<ossa_mat3x4>() == align_of::<Mat3x4>());
    assert!(size_of::<ossa_frame_blend>() == size_of::<FrameBlend>());
    assert!(align_of::<ossa_frame_blend>() == align_of::<FrameBlend>());
};
