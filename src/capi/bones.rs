//! A model's summary, its bones and frames, and its load warnings.

use crate::model::Model;
use std::ffi::c_char;
use std::ptr;

use super::OSSA_MODEL_UNBOUND;
use super::checks::{
    c_name, c_str, count_u32, get_indexed, guard, guard_value, model_ref, null, put,
};

/// A loaded model; opaque.
pub struct ossa_model {
    pub(super) model: Model,
}

#[repr(C)]
pub struct ossa_model_info {
    pub format: u32,
    pub bone_count: u32,
    pub mesh_count: u32,
    pub frame_count: u32,
    pub animation_count: u32,
    /// totals over all meshes
    pub vertex_count: u32,
    pub triangle_count: u32,
    /// most bones influencing one vertex
    pub max_influences: u32,
    /// OSSA_MODEL_UNBOUND = 1: meshes wait for ossa_model_bind
    pub flags: u32,
    /// 0 = x, 1 = y, 2 = z, in the file's own coordinates
    pub up_axis: u32,
    /// +1 right-handed, -1 left-handed
    pub handedness: i32,
    /// bounds of the bind pose
    pub mins: [f32; 3],
    pub maxs: [f32; 3],
}

#[repr(C)]
pub struct ossa_bone_info {
    pub name: *const c_char,
    /// < own index, or -1
    pub parent: i32,
    /// OSSA_BONE_ATTACHMENT = 1
    pub flags: u32,
}

#[repr(C)]
pub struct ossa_frame_info {
    pub name: *const c_char,
    pub mins: [f32; 3],
    pub maxs: [f32; 3],
    pub yaw_radius: f32,
    pub radius: f32,
}

/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_info(
    model: *const ossa_model,
    out: *mut ossa_model_info,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        if out.is_null() {
            return Err(null("out"));
        }
        let i = model.info();
        put(
            out,
            ossa_model_info {
                format: i.format as u32,
                bone_count: i.bone_count,
                mesh_count: i.mesh_count,
                frame_count: i.frame_count,
                animation_count: i.animation_count,
                vertex_count: i.vertex_count,
                triangle_count: i.triangle_count,
                max_influences: i.max_influences,
                flags: if model.unbound().is_some() {
                    OSSA_MODEL_UNBOUND
                } else {
                    0
                },
                up_axis: i.up_axis,
                handedness: i.handedness,
                mins: i.mins,
                maxs: i.maxs,
            },
        );
        Ok(())
    })
}

/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_bone(
    model: *const ossa_model,
    bone: u32,
    out: *mut ossa_bone_info,
) -> u32 {
    get_indexed(model, bone, out, "bone", Model::bones, |b| ossa_bone_info {
        name: c_name(b.name.as_bytes_with_nul()),
        parent: b.parent,
        flags: b.flags,
    })
}

fn find(
    model: *const ossa_model,
    name: *const c_char,
    lookup: impl Fn(&Model, &[u8]) -> Option<u32>,
) -> i32 {
    guard_value(-1, || {
        let (Ok(model), Some(name)) = (model_ref(model), c_str(name)) else {
            return -1;
        };
        lookup(model, name.to_bytes()).map_or(-1, |i| i32::try_from(i).unwrap_or(-1))
    })
}

/// Exact match; -1 if absent; O(1).
///
/// # Safety
/// `model` is NULL or a live handle; `name` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_find_bone(
    model: *const ossa_model,
    name: *const c_char,
) -> i32 {
    find(model, name, |m, n| m.find_bone(n))
}

/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_frame(
    model: *const ossa_model,
    frame: u32,
    out: *mut ossa_frame_info,
) -> u32 {
    get_indexed(model, frame, out, "frame", Model::frames, |f| {
        ossa_frame_info {
            name: c_name(f.name.as_bytes_with_nul()),
            mins: f.mins,
            maxs: f.maxs,
            yaw_radius: f.yaw_radius,
            radius: f.radius,
        }
    })
}

/// Exact match; -1 if absent; O(1).
///
/// # Safety
/// `model` is NULL or a live handle; `name` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_find_frame(
    model: *const ossa_model,
    name: *const c_char,
) -> i32 {
    find(model, name, |m, n| m.find_frame(n))
}

/// # Safety
/// `model` is NULL (answers 0) or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_warning_count(model: *const ossa_model) -> u32 {
    guard_value(0, || {
        model_ref(model).map_or(0, |m| count_u32(m.warnings().len()))
    })
}

/// NULL past the end.
///
/// # Safety
/// `model` is NULL (answers NULL) or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_warning(model: *const ossa_model, index: u32) -> *const c_char {
    guard_value(ptr::null(), || {
        model_ref(model)
            .ok()
            .and_then(|m| m.warnings().get(index as usize))
            .map_or(ptr::null(), |w| c_name(w.as_bytes_with_nul()))
    })
}
