//! Animations (scenes, skills) with their events and travel, and The Sims' suits and their
//! skins and properties.

use crate::error::Result;
use crate::model::{self, Model};
use std::ffi::c_char;
use std::ptr;

use super::bones::ossa_model;
use super::checks::{
    c_name, count_u32, get_found, get_indexed, guard, guard_value, model_ref, nth, null, put,
};
use super::pose::ossa_frame_blend;

/// An animation scene: a named run of frames played at a rate.
#[repr(C)]
pub struct ossa_animation_info {
    pub name: *const c_char,
    pub first_frame: u32,
    pub frame_count: u32,
    /// frames per second
    pub fps: f32,
    /// 1: plays round from its last frame to its first; 0: holds its last frame
    pub looping: u32,
}

/// Something that happens at a time of an animation scene (a Sims skill's time property:
/// `footstep`, `anchor`, `xevt`...).
#[repr(C)]
pub struct ossa_animation_event {
    /// seconds from the scene's start
    pub time: f32,
    /// the bone whose motion carries it; -1 where the skeleton has no such bone
    pub bone: i32,
    pub key: *const c_char,
    pub value: *const c_char,
}

/// How far a scene moves the character, where the file says (a Sims skill's distance and
/// moving flag); 0 and 0 elsewhere.
#[repr(C)]
pub struct ossa_animation_travel {
    /// model units per play
    pub distance: f32,
    /// 1: the scene moves the character
    pub moving: u32,
}

/// An outfit a character file lists (Sims CMX suit): which meshes go on which bones.
#[repr(C)]
pub struct ossa_suit_info {
    pub name: *const c_char,
    /// the file's suit type (0 normal, 1 censor in the game's files)
    pub kind: u32,
    pub skin_count: u32,
    pub property_count: u32,
}

/// One mesh of a suit.
#[repr(C)]
pub struct ossa_suit_skin {
    /// the bone the mesh hangs on
    pub bone: *const c_char,
    /// the mesh's file name without its extension (.skn or .bmf)
    pub mesh: *const c_char,
    /// the body parts a censor mesh covers
    pub censor_flags: u32,
    pub property_count: u32,
}

/// A key and its value from one of a file's property lists; keys need not be unique.
#[repr(C)]
pub struct ossa_property {
    /// which of the owner's property lists it is in, from 0
    pub list: u32,
    pub key: *const c_char,
    pub value: *const c_char,
}

fn c_property(p: &model::Property) -> ossa_property {
    ossa_property {
        list: p.list,
        key: c_name(p.key.as_bytes_with_nul()),
        value: c_name(p.value.as_bytes_with_nul()),
    }
}

/// Animation scene `animation`: from DPM's `.framegroups` file, or one per frame without it.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_animation(
    model: *const ossa_model,
    animation: u32,
    out: *mut ossa_animation_info,
) -> u32 {
    get_indexed(model, animation, out, "animation", Model::animations, |a| {
        ossa_animation_info {
            name: c_name(a.name.as_bytes_with_nul()),
            first_frame: a.first_frame,
            frame_count: a.frame_count,
            fps: a.fps,
            looping: u32::from(a.looping),
        }
    })
}

/// How many events scene `animation` has; 0 for NULL or past the last scene.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_animation_event_count(
    model: *const ossa_model,
    animation: u32,
) -> u32 {
    guard_value(0, || {
        model_ref(model).map_or(0, |m| count_u32(m.animation_events(animation).len()))
    })
}

/// Event `event` of scene `animation`; a scene's events come in order of time (file order
/// among equal times).
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_animation_get_event(
    model: *const ossa_model,
    animation: u32,
    event: u32,
    out: *mut ossa_animation_event,
) -> u32 {
    get_found(
        model,
        out,
        |m| {
            nth(m.animations(), animation, "animation", &|| {
                "the model".to_owned()
            })?;
            nth(m.animation_events(animation), event, "event", &|| {
                format!("animation {animation}")
            })
        },
        |e| ossa_animation_event {
            time: e.time,
            bone: e.bone,
            key: c_name(e.key.as_bytes_with_nul()),
            value: c_name(e.value.as_bytes_with_nul()),
        },
    )
}

/// How far scene `animation` moves the character, where the file says.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_animation_get_travel(
    model: *const ossa_model,
    animation: u32,
    out: *mut ossa_animation_travel,
) -> u32 {
    get_indexed(model, animation, out, "animation", Model::animations, |a| {
        ossa_animation_travel {
            distance: a.distance,
            moving: u32::from(a.moving),
        }
    })
}

/// How many suits the model's character file lists (Sims CMX); 0 for NULL.
///
/// # Safety
/// `model` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_suit_count(model: *const ossa_model) -> u32 {
    guard_value(0, || {
        model_ref(model).map_or(0, |m| count_u32(m.suits().len()))
    })
}

/// Suit `suit`: its name, type and how many skins and properties it has.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_model_get_suit(
    model: *const ossa_model,
    suit: u32,
    out: *mut ossa_suit_info,
) -> u32 {
    get_indexed(model, suit, out, "suit", Model::suits, |s| ossa_suit_info {
        name: c_name(s.name.as_bytes_with_nul()),
        kind: s.kind,
        skin_count: count_u32(s.skins.len()),
        property_count: count_u32(s.properties.len()),
    })
}

fn find_suit(m: &Model, suit: u32) -> Result<&model::Suit> {
    nth(m.suits(), suit, "suit", &|| "the model".to_owned())
}

fn find_skin(m: &Model, suit: u32, skin: u32) -> Result<&model::SuitSkin> {
    nth(&find_suit(m, suit)?.skins, skin, "skin", &|| {
        format!("suit {suit}")
    })
}

/// Skin `skin` of suit `suit`: the mesh and the bone it hangs on.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_suit_get_skin(
    model: *const ossa_model,
    suit: u32,
    skin: u32,
    out: *mut ossa_suit_skin,
) -> u32 {
    get_found(
        model,
        out,
        |m| find_skin(m, suit, skin),
        |k| ossa_suit_skin {
            bone: c_name(k.bone.as_bytes_with_nul()),
            mesh: c_name(k.mesh.as_bytes_with_nul()),
            censor_flags: k.censor_flags,
            property_count: count_u32(k.properties.len()),
        },
    )
}

/// Property `property` of suit `suit`, in file order.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_suit_get_property(
    model: *const ossa_model,
    suit: u32,
    property: u32,
    out: *mut ossa_property,
) -> u32 {
    get_found(
        model,
        out,
        |m| {
            let owner = || format!("suit {suit}");
            nth(
                &find_suit(m, suit)?.properties,
                property,
                "property",
                &owner,
            )
        },
        c_property,
    )
}

/// Property `property` of skin `skin` of suit `suit`, in file order.
///
/// # Safety
/// `model` is a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_suit_skin_get_property(
    model: *const ossa_model,
    suit: u32,
    skin: u32,
    property: u32,
    out: *mut ossa_property,
) -> u32 {
    get_found(
        model,
        out,
        |m| {
            let owner = || format!("suit {suit} skin {skin}");
            nth(
                &find_skin(m, suit, skin)?.properties,
                property,
                "property",
                &owner,
            )
        },
        c_property,
    )
}

/// The frames to pose for `animation` at `seconds` since it started: one or two blends with
/// weights summing to 1, ready for ossa_pose_frames. A looping scene wraps round; another holds
/// its first frame before its start and its last after its end. A time that is not finite is
/// OSSA_ERR_INVALID_ARGUMENT.
///
/// # Safety
/// `model` is a live handle; `blends_out` holds 2 entries; `blend_count` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_animation_blend(
    model: *const ossa_model,
    animation: u32,
    seconds: f64,
    blends_out: *mut ossa_frame_blend,
    blend_count: *mut usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        if blends_out.is_null() {
            return Err(null("blends_out"));
        }
        if blend_count.is_null() {
            return Err(null("blend_count"));
        }
        let (blends, n) = model.animation_blend(animation as usize, seconds)?;
        for (i, b) in blends.iter().take(n).enumerate() {
            // SAFETY: `blends_out` holds two entries by the contract and n <= 2.
            unsafe {
                blends_out.add(i).write_unaligned(ossa_frame_blend {
                    frame: b.frame,
                    weight: b.weight,
                })
            };
        }
        put(blend_count, n);
        Ok(())
    })
}
