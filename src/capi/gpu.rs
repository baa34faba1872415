//! What a GPU skinning shader needs: bind-pose vertices, four weights per vertex, inverse binds
//! and skinning matrices.

use std::ptr;

use super::bones::ossa_model;
use super::checks::{guard, model_ref, null, put};
use super::pose::{CTarget, Span, bones_in, bones_out, disjoint, ossa_mat3x4, ossa_skin_target};

/// The bind-pose (frame 0) positions and normals of vertices [first, first + count) of `mesh`,
/// laid out as ossa_skin_mesh lays them: the vertices a GPU skins.
///
/// # Safety
/// `model` is a live handle; `target` describes writable buffers of the sizes it states.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_mesh_bind_vertices(
    model: *const ossa_model,
    mesh: u32,
    first: u32,
    count: u32,
    flags: u32,
    target: *const ossa_skin_target,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        // SAFETY: a non-null target points to one ossa_skin_target.
        let target = unsafe { target.as_ref() }.ok_or_else(|| null("target"))?;
        let mut target = CTarget::new(target)?;
        model.bind_vertices(
            mesh as usize,
            first as usize,
            count as usize,
            flags,
            &mut target,
        )
    })
}

/// Each vertex's `per_vertex` (1 to 8) strongest influences, strongest first: bone indices into
/// `bones_out` and weights summing to 1 into `weights_out`, `per_vertex` entries per vertex
/// (`capacity` entries each at least vertex_count * per_vertex); unused slots are bone 0 weight
/// 0. `*dropped` (may be NULL) gets the most influences any vertex had beyond `per_vertex`.
///
/// # Safety
/// `model` is a live handle; `bones_out` and `weights_out` hold `capacity` entries each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_mesh_gpu_weights(
    model: *const ossa_model,
    mesh: u32,
    per_vertex: u32,
    bones_out: *mut u16,
    weights_out: *mut f32,
    capacity: usize,
    dropped: *mut u32,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        if bones_out.is_null() {
            return Err(null("bones_out"));
        }
        if weights_out.is_null() {
            return Err(null("weights_out"));
        }
        // SAFETY: both buffers hold `capacity` entries by the contract and are distinct arrays.
        let (bones, weights) = unsafe {
            (
                std::slice::from_raw_parts_mut(bones_out, capacity),
                std::slice::from_raw_parts_mut(weights_out, capacity),
            )
        };
        let most = model.gpu_weights(mesh as usize, per_vertex as usize, bones, weights)?;
        if !dropped.is_null() {
            put(dropped, u32::try_from(most).unwrap_or(u32::MAX));
        }
        Ok(())
    })
}

/// The inverse of every bone's bind-pose matrix; the zero matrix for a bone whose bind pose is
/// singular (collapsed to a point), so that it contributes its pose's translation alone.
///
/// # Safety
/// `model` is a live handle; `out` holds `bone_count` matrices.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_inverse_bind(
    model: *const ossa_model,
    out: *mut ossa_mat3x4,
    bone_count: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let out = bones_out(model, out, bone_count)?;
        model.inverse_bind(out)
    })
}

/// The matrices a vertex shader multiplies bind-pose vertices with: `bones[i] * inverse bind[i]`,
/// from the model-space matrices of ossa_pose_frames. `bones` and `out` sharing memory is
/// OSSA_ERR_INVALID_ARGUMENT.
///
/// # Safety
/// `model` is a live handle; `bones` and `out` hold `bone_count` matrices.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_skinning_matrices(
    model: *const ossa_model,
    bones: *const ossa_mat3x4,
    out: *mut ossa_mat3x4,
    bone_count: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let bones = bones_in(model, bones, bone_count, "bones")?;
        disjoint(
            Span::of(bones.as_ptr(), bones.len(), "bones"),
            Span::of(out, bone_count, "out"),
        )?;
        let out = bones_out(model, out, bone_count)?;
        model.skinning_matrices(bones, out)
    })
}
