//! Meshes, their textures and materials, and vertex colours.

use crate::model::Model;
use std::ffi::c_char;
use std::ptr;

use super::bones::ossa_model;
use super::checks::{c_name, count_u32, get_found, get_indexed, guard_value, model_ref, nth};

#[repr(C)]
pub struct ossa_mesh_info {
    /// "" where the format has none
    pub name: *const c_char,
    /// shader, material or texture name; "" where none
    pub shader: *const c_char,
    pub vertex_count: u32,
    pub triangle_count: u32,
    /// 3 * triangle_count, each < vertex_count
    pub indices: *const u32,
    /// 2 * vertex_count, as stored in the file; NULL where none
    pub texcoords: *const f32,
    /// triangle_count (DPM); NULL where none
    pub group_ids: *const u32,
}

/// A texture carried inside the model's file (DMF).
#[repr(C)]
pub struct ossa_texture_info {
    pub name: *const c_char,
    pub width: u32,
    pub height: u32,
    /// 1: the image is flipped vertically when uploaded
    pub flip_y: u32,
    /// 0 clamp, 1 mirror, 2 repeat
    pub wrap_s: u32,
    pub wrap_t: u32,
    /// the image file's bytes as stored (PNG), valid as long as the model; NULL when empty
    pub image: *const u8,
    pub image_size: usize,
}

/// A material the model's meshes refer to (DMF); the numbers are the DMF 1.5 constants.
#[repr(C)]
pub struct ossa_material_info {
    pub name: *const c_char,
    /// the diffuse texture's index, or -1
    pub texture: i32,
    /// 1: alpha blending with the three fields after it
    pub use_blending: u32,
    /// 0 normal, 1 additive, 2 subtract, 3 multiply
    pub blend_equation: u32,
    /// 0 zero, 1 one, 2 src colour, 3 one minus src colour, 4 src alpha, 5 one minus src alpha,
    /// 6 dst alpha, 7 one minus dst alpha, 8 dst colour, 9 one minus dst colour, 10 src alpha
    /// saturate
    pub blend_src: u32,
    pub blend_dst: u32,
    pub skinning: u32,
    /// 0 basic, 1 lambert, 2 phong
    pub shader_type: u32,
    /// 0 front, 1 back, 2 double
    pub face_side: u32,
    pub shadow_side: u32,
    pub ignore_lights: u32,
    pub vertex_color: u32,
    pub use_alpha: u32,
    pub skip_render: u32,
    pub alpha_test: f32,
    /// red, green, blue, alpha
    pub diffuse: [f32; 4],
    /// red, green, blue, intensity
    pub emissive: [f32; 4],
    /// red, green, blue, shininess
    pub specular: [f32; 4],
}

/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_mesh(
    model: *const ossa_model,
    mesh: u32,
    out: *mut ossa_mesh_info,
) -> u32 {
    get_indexed(model, mesh, out, "mesh", Model::meshes, |m| {
        ossa_mesh_info {
            name: c_name(m.name().as_bytes_with_nul()),
            shader: c_name(m.shader().as_bytes_with_nul()),
            vertex_count: m.vertex_count() as u32,
            triangle_count: m.triangle_count() as u32,
            indices: m.indices().as_ptr(),
            texcoords: m.texcoords().map_or(ptr::null(), |t| t.as_ptr().cast()),
            group_ids: m.group_ids().map_or(ptr::null(), |g| g.as_ptr()),
        }
    })
}

/// How many textures the model carries (DMF); 0 for NULL.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_texture_count(model: *const ossa_model) -> u32 {
    guard_value(0, || {
        model_ref(model).map_or(0, |m| count_u32(m.textures().len()))
    })
}

/// Texture `texture`: its name, size, sampling and the image file's bytes (PNG).
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_texture(
    model: *const ossa_model,
    texture: u32,
    out: *mut ossa_texture_info,
) -> u32 {
    get_indexed(model, texture, out, "texture", Model::textures, |t| {
        ossa_texture_info {
            name: c_name(t.name.as_bytes_with_nul()),
            width: u32::from(t.width),
            height: u32::from(t.height),
            flip_y: u32::from(t.flip_y),
            wrap_s: u32::from(t.wrap_s),
            wrap_t: u32::from(t.wrap_t),
            image: if t.image.is_empty() {
                ptr::null()
            } else {
                t.image.as_ptr()
            },
            image_size: t.image.len(),
        }
    })
}

/// How many materials the model's meshes refer to (DMF); 0 for NULL.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_material_count(model: *const ossa_model) -> u32 {
    guard_value(0, || {
        model_ref(model).map_or(0, |m| count_u32(m.materials().len()))
    })
}

/// Material `material`, every field the file gives.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_material(
    model: *const ossa_model,
    material: u32,
    out: *mut ossa_material_info,
) -> u32 {
    get_indexed(model, material, out, "material", Model::materials, |m| {
        ossa_material_info {
            name: c_name(m.name.as_bytes_with_nul()),
            texture: m.texture.map_or(-1, |t| i32::try_from(t).unwrap_or(-1)),
            use_blending: u32::from(m.use_blending),
            blend_equation: u32::from(m.blend_equation),
            blend_src: u32::from(m.blend_src),
            blend_dst: u32::from(m.blend_dst),
            skinning: u32::from(m.skinning),
            shader_type: u32::from(m.shader_type),
            face_side: u32::from(m.face_side),
            shadow_side: u32::from(m.shadow_side),
            ignore_lights: u32::from(m.ignore_lights),
            vertex_color: u32::from(m.vertex_color),
            use_alpha: u32::from(m.use_alpha),
            skip_render: u32::from(m.skip_render),
            alpha_test: m.alpha_test,
            diffuse: m.diffuse,
            emissive: m.emissive,
            specular: m.specular,
        }
    })
}

/// The material of mesh `mesh`; -1 where it has none (other formats), for NULL, or past the
/// last mesh.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_mesh_material(model: *const ossa_model, mesh: u32) -> i32 {
    guard_value(-1, || {
        model_ref(model)
            .ok()
            .and_then(|m| m.meshes().get(mesh as usize))
            .and_then(|m| m.material())
            .map_or(-1, |k| i32::try_from(k).unwrap_or(-1))
    })
}

/// The vertex colours of mesh `mesh`: 4 bytes (red, green, blue, alpha) per vertex, living as
/// long as the model (DMF's, and the `c` records of an MM2 `.mod`); NULL where it has none
/// (other formats, a `.mod` without `c` records), for NULL, or past the last mesh.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_mesh_colors(model: *const ossa_model, mesh: u32) -> *const u8 {
    guard_value(ptr::null(), || {
        model_ref(model)
            .ok()
            .and_then(|m| m.meshes().get(mesh as usize))
            .and_then(|m| m.colors())
            .map_or(ptr::null(), |c| c.as_flattened().as_ptr())
    })
}

/// One texture of one of a mesh's own skins (IQM's `FTE_SKINS`).
#[repr(C)]
pub struct ossa_skin_frame {
    /// the texture, named as mesh shaders are
    pub material: *const c_char,
    /// shader text FTE compiles for it; "" where none
    pub shader_text: *const c_char,
    /// how many textures the skin shows one after another
    pub frame_count: u32,
    /// seconds each shows
    pub interval: f32,
}

/// How many skins of its own mesh `mesh` has (IQM's `FTE_SKINS`: skin `k` of the model draws
/// the mesh with its skin `k`, or with its shader past the last); 0 for other formats, for NULL,
/// or past the last mesh.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_mesh_skin_count(model: *const ossa_model, mesh: u32) -> u32 {
    guard_value(0, || {
        model_ref(model)
            .ok()
            .and_then(|m| m.meshes().get(mesh as usize))
            .map_or(0, |m| count_u32(m.skins().len()))
    })
}

/// Texture `frame` of skin `skin` of mesh `mesh`, with the skin's frame count and interval;
/// every skin has at least one. The strings live as long as the model.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_mesh_get_skin_frame(
    model: *const ossa_model,
    mesh: u32,
    skin: u32,
    frame: u32,
    out: *mut ossa_skin_frame,
) -> u32 {
    get_found(
        model,
        out,
        |m| {
            let found = nth(m.meshes(), mesh, "mesh", &|| "the model".to_owned())?;
            let s = nth(found.skins(), skin, "skin", &|| format!("mesh {mesh}"))?;
            let f = nth(&s.frames, frame, "frame", &|| {
                format!("mesh {mesh} skin {skin}")
            })?;
            Ok((s, f))
        },
        |(s, f)| ossa_skin_frame {
            material: c_name(f.material.as_bytes_with_nul()),
            shader_text: c_name(f.shader_text.as_bytes_with_nul()),
            frame_count: count_u32(s.frames.len()),
            interval: s.interval,
        },
    )
}
