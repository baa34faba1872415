//! Rendering a posed model into the caller's RGBA8 buffer. The handle does not keep where the
//! model was read, so the textures are the caller's: an engine has them decoded already.

use crate::error::{Error, Result};
use crate::render::{self, RenderOptions, View};
use std::ptr;

use super::bones::ossa_model;
use super::checks::{guard, model_ref, null, put};
use super::pose::{Span, bones_in, disjoint, ossa_mat3x4};

/// View: yaw 45 degrees toward the model's right, pitch 20 degrees up.
pub const OSSA_VIEW_THREE_QUARTER: u32 = 0;
/// View: looking at the model's front.
pub const OSSA_VIEW_FRONT: u32 = 1;
/// View: looking at the model's right side (its front to the right of the picture).
pub const OSSA_VIEW_SIDE: u32 = 2;
/// View: looking down from above (its front at the bottom of the picture).
pub const OSSA_VIEW_TOP: u32 = 3;
/// Render flag: triangle edges over the shaded mesh.
pub const OSSA_RENDER_WIREFRAME: u32 = 1;
/// Render flag: the skeleton over everything, joints as dots, lines to their parents.
pub const OSSA_RENDER_BONES: u32 = 2;
/// Render flag: 2x2 supersampling, box-filtered down.
pub const OSSA_RENDER_ANTIALIAS: u32 = 4;

/// A mesh's texture for ossa_render: `width * height` RGBA8 pixels, rows top to bottom.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ossa_render_texture {
    /// 1 to 16384 each, at most 2^26 pixels: beyond, OSSA_ERR_LIMIT
    pub width: u32,
    pub height: u32,
    /// width * height * 4 bytes; NULL = the mesh is drawn untextured
    pub rgba: *const u8,
}

/// The most pixels one texture of `ossa_render` may have.
const MAX_TEXTURE_PIXELS: u64 = 1 << 26;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ossa_render_options {
    /// sizeof(ossa_render_options), set by ossa_render_options_init; any other value is
    /// OSSA_ERR_INVALID_ARGUMENT
    pub size: u32,
    /// pixels, 1 to 16384 each, at most 2^26 pixels (2^24 with OSSA_RENDER_ANTIALIAS): beyond,
    /// OSSA_ERR_LIMIT; 0 is OSSA_ERR_INVALID_ARGUMENT
    pub width: u32,
    pub height: u32,
    /// an OSSA_VIEW_* constant
    pub view: u32,
    /// degrees from the front toward the model's right; NaN = the view's
    pub yaw_degrees: f32,
    /// degrees upward; NaN = the view's
    pub pitch_degrees: f32,
    /// red, green, blue, alpha of the pixels the model does not cover
    pub background: [u8; 4],
    /// OSSA_RENDER_* flags
    pub flags: u32,
    /// per mesh (index = mesh), sampled with the mesh's texture coordinates; NULL = none
    pub textures: *const ossa_render_texture,
    /// entries in `textures`, at most the model's mesh count; meshes past it are untextured
    pub texture_count: usize,
}

/// Fills in the defaults and size: 256x256, three-quarter view, opaque dark grey, no flags.
///
/// # Safety
/// `options` is NULL (a no-op) or points to a writable `ossa_render_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_render_options_init(options: *mut ossa_render_options) {
    if options.is_null() {
        return;
    }
    let d = RenderOptions::default();
    put(
        options,
        ossa_render_options {
            size: size_of::<ossa_render_options>() as u32,
            width: d.width,
            height: d.height,
            view: OSSA_VIEW_THREE_QUARTER,
            yaw_degrees: f32::NAN,
            pitch_degrees: f32::NAN,
            background: d.background,
            flags: 0,
            textures: ptr::null(),
            texture_count: 0,
        },
    );
}

/// The caller's textures, checked and borrowed for the call (entries may share one buffer; none
/// is copied): each within the limits, none overlapping `out`.
fn read_textures<'a>(
    o: &ossa_render_options,
    mesh_count: usize,
    out: Span,
) -> Result<Vec<Option<render::TextureView<'a>>>> {
    if o.texture_count == 0 {
        return Ok(Vec::new());
    }
    if o.textures.is_null() {
        return Err(null("options->textures"));
    }
    if o.texture_count > mesh_count {
        return Err(Error::invalid_argument(format!(
            "options->texture_count is {}, more than the model's {mesh_count} meshes",
            o.texture_count
        )));
    }
    // SAFETY: the caller promised `texture_count` entries at non-null `textures`.
    let entries = unsafe { std::slice::from_raw_parts(o.textures, o.texture_count) };
    let mut images = Vec::with_capacity(entries.len());
    for (k, t) in entries.iter().enumerate() {
        if t.rgba.is_null() {
            images.push(None);
            continue;
        }
        let pixels = u64::from(t.width) * u64::from(t.height);
        if t.width == 0 || t.height == 0 {
            return Err(Error::invalid_argument(format!(
                "options->textures[{k}] is {}x{}: a texture has pixels",
                t.width, t.height
            )));
        }
        if t.width > render::MAX_SIDE || t.height > render::MAX_SIDE || pixels > MAX_TEXTURE_PIXELS
        {
            return Err(Error::limit(format!(
                "options->textures[{k}] is {}x{}: at most {} a side and {MAX_TEXTURE_PIXELS} \
                 pixels",
                t.width,
                t.height,
                render::MAX_SIDE
            )));
        }
        let bytes = (pixels * 4) as usize;
        disjoint(Span::of(t.rgba, bytes, "a texture's rgba"), out)
            .map_err(|e| e.within(format!("options->textures[{k}]")))?;
        // SAFETY: the caller promised width * height * 4 readable bytes at non-null `rgba`, left
        // unchanged for the call, which is as long as the view lives; `out` does not overlap it.
        let rgba = unsafe { std::slice::from_raw_parts(t.rgba, bytes) };
        images.push(Some(render::TextureView {
            width: t.width,
            height: t.height,
            rgba,
        }));
    }
    Ok(images)
}

fn read_options(options: *const ossa_render_options) -> Result<RenderOptions> {
    // SAFETY: a non-null options pointer points to at least its `size` field.
    let size = unsafe { options.cast::<u32>().read_unaligned() } as usize;
    if size != size_of::<ossa_render_options>() {
        return Err(Error::invalid_argument(format!(
            "options->size is {size}, not sizeof(ossa_render_options) ({}); call \
             ossa_render_options_init first",
            size_of::<ossa_render_options>()
        )));
    }
    // SAFETY: the caller's struct holds `size` bytes, which is all of it.
    let o = unsafe { options.read_unaligned() };
    let view = match o.view {
        OSSA_VIEW_THREE_QUARTER => View::ThreeQuarter,
        OSSA_VIEW_FRONT => View::Front,
        OSSA_VIEW_SIDE => View::Side,
        OSSA_VIEW_TOP => View::Top,
        v => {
            return Err(Error::invalid_argument(format!(
                "options->view {v} is no OSSA_VIEW_*"
            )));
        }
    };
    let known = OSSA_RENDER_WIREFRAME | OSSA_RENDER_BONES | OSSA_RENDER_ANTIALIAS;
    if o.flags & !known != 0 {
        return Err(Error::invalid_argument(format!(
            "unknown render flags {:#x}",
            o.flags & !known
        )));
    }
    let angle = |v: f32, what: &str| -> Result<Option<f32>> {
        if v.is_nan() {
            Ok(None)
        } else if v.is_finite() {
            Ok(Some(v))
        } else {
            Err(Error::invalid_argument(format!(
                "options->{what} is infinite"
            )))
        }
    };
    Ok(RenderOptions {
        width: o.width,
        height: o.height,
        view,
        yaw_degrees: angle(o.yaw_degrees, "yaw_degrees")?,
        pitch_degrees: angle(o.pitch_degrees, "pitch_degrees")?,
        background: o.background,
        wireframe: o.flags & OSSA_RENDER_WIREFRAME != 0,
        bones: o.flags & OSSA_RENDER_BONES != 0,
        antialias: o.flags & OSSA_RENDER_ANTIALIAS != 0,
    })
}

/// Renders the model posed by `bones` (model-space matrices as ossa_pose_frames writes them,
/// `bone_count` = the model's bone count; NULL = frame 0, the bind pose, and `bone_count` is
/// ignored) into `rgba`: `width * height * 4` bytes, RGBA8, rows top to bottom (any other
/// `rgba_size` is OSSA_ERR_INVALID_ARGUMENT). Orthographic; the camera frames the skinned
/// vertices of this pose. A matrix element that is not finite or beyond 1e9 is
/// OSSA_ERR_INVALID_ARGUMENT; so is an `rgba` that overlaps `bones`, `options` or a texture.
/// Meshes are textured with `options->textures` (the handle does not know where the model's
/// own images are; `ossa_model_get_texture` gives a DMF's or glTF's). The same input gives the
/// same bytes on every machine. `options` NULL = the defaults of ossa_render_options_init.
///
/// # Safety
/// `model` is a live handle; `bones` is NULL or holds `bone_count` matrices; `options` is NULL
/// or initialised, its `textures` NULL or holding `texture_count` entries, each `rgba` NULL or
/// holding `width * height * 4` bytes; `rgba` holds `rgba_size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_render(
    model: *const ossa_model,
    bones: *const ossa_mat3x4,
    bone_count: usize,
    options: *const ossa_render_options,
    rgba: *mut u8,
    rgba_size: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        if rgba.is_null() {
            return Err(null("rgba"));
        }
        let out_span = Span::of(rgba.cast_const(), rgba_size, "rgba");
        let (options, textures) = if options.is_null() {
            (RenderOptions::default(), Vec::new())
        } else {
            disjoint(Span::of(options, 1, "options"), out_span)?;
            let parsed = read_options(options)?;
            // SAFETY: read_options checked that the caller's struct is all there.
            let raw = unsafe { options.read_unaligned() };
            (parsed, read_textures(&raw, model.meshes().len(), out_span)?)
        };
        let poses = if bones.is_null() {
            model.skeleton().bind_pose()
        } else {
            let poses = bones_in(model, bones, bone_count, "bones")?;
            disjoint(Span::of(poses.as_ptr(), poses.len(), "bones"), out_span)?;
            poses
        };
        // SAFETY: non-null, `rgba_size` writable bytes by the contract, and shared with no input
        // (checked above).
        let out = unsafe { std::slice::from_raw_parts_mut(rgba, rgba_size) };
        render::render(model, poses, &textures, &options, out)
    })
}
