//! Posing (frames, blends, concatenation into model space) and skinning into the caller's
//! buffers.

use crate::error::{Error, Result, amount};
use crate::math::Mat3x4;
use crate::model::Model;
use crate::pose::FrameBlend;
use crate::skin::{RawTarget, SkinTarget};
use std::ptr;

use super::bones::ossa_model;
use super::checks::{guard, model_ref, null};

/// Rows of a 3x4 affine matrix acting on column vectors:
/// x' = m[0]x + m[1]y + m[2]z + m[3], y' = m[4]x + ... + m[7], z' = m[8]x + ... + m[11]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ossa_mat3x4 {
    pub m: [f32; 12],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ossa_frame_blend {
    pub frame: u32,
    pub weight: f32,
}

/// Strides in bytes, >= 12 and multiples of 4; a buffer for n vertices must hold
/// stride * (n - 1) + 12 bytes. Positions and normals may interleave in one caller buffer.
#[repr(C)]
pub struct ossa_skin_target {
    /// required
    pub positions: *mut f32,
    pub position_stride: usize,
    pub position_bytes: usize,
    /// NULL = not wanted
    pub normals: *mut f32,
    pub normal_stride: usize,
    pub normal_bytes: usize,
}

/// The caller's bone matrices, once their count is known to be the model's.
pub(super) fn bones_out<'a>(
    model: &Model,
    bones: *mut ossa_mat3x4,
    bone_count: usize,
) -> Result<&'a mut [Mat3x4]> {
    if bones.is_null() {
        return Err(null("bones_out"));
    }
    if bone_count != model.bones().len() {
        return Err(Error::invalid_argument(format!(
            "bone_count is {bone_count}, the model has {}",
            amount(model.bones().len() as u64, "bone", "bones")
        )));
    }
    // SAFETY: non-null, `bone_count` matrices long by the contract; ossa_mat3x4 and Mat3x4 share
    // a layout (checked at compile time above).
    Ok(unsafe { std::slice::from_raw_parts_mut(bones.cast::<Mat3x4>(), bone_count) })
}

pub(super) fn bones_in<'a>(
    model: &Model,
    bones: *const ossa_mat3x4,
    bone_count: usize,
    what: &str,
) -> Result<&'a [Mat3x4]> {
    if bones.is_null() {
        return Err(null(what));
    }
    if bone_count != model.bones().len() {
        return Err(Error::invalid_argument(format!(
            "bone_count is {bone_count}, the model has {}",
            amount(model.bones().len() as u64, "bone", "bones")
        )));
    }
    // SAFETY: as in bones_out, read-only.
    Ok(unsafe { std::slice::from_raw_parts(bones.cast::<Mat3x4>(), bone_count) })
}

fn blends_in<'a>(blends: *const ossa_frame_blend, count: usize) -> Result<&'a [FrameBlend]> {
    if blends.is_null() {
        return Err(null("blends"));
    }
    if count == 0 || count > crate::pose::MAX_BLENDS {
        return Err(Error::invalid_argument(format!(
            "blend_count {count} is not 1 to 8"
        )));
    }
    // SAFETY: `count` blends are readable by the contract; the layouts match (checked above).
    Ok(unsafe { std::slice::from_raw_parts(blends.cast::<FrameBlend>(), count) })
}

/// A copy of the caller's root matrix, taken before any output is written, so that a root
/// inside the output buffer is read as the caller passed it.
fn root_in(root: *const ossa_mat3x4) -> Option<Mat3x4> {
    // SAFETY: a non-null root points to one matrix; the layouts match.
    (!root.is_null()).then(|| unsafe { root.cast::<Mat3x4>().read_unaligned() })
}

/// The bytes `[start, start + len)` of a caller's buffer.
#[derive(Clone, Copy)]
pub(super) struct Span {
    start: usize,
    len: usize,
    what: &'static str,
}

impl Span {
    pub(super) fn of<T>(ptr: *const T, count: usize, what: &'static str) -> Span {
        Span {
            start: ptr as usize,
            len: count.saturating_mul(size_of::<T>()),
            what,
        }
    }

    fn end(self) -> usize {
        self.start.saturating_add(self.len)
    }

    fn overlaps(self, other: Span) -> bool {
        self.len > 0 && other.len > 0 && self.start < other.end() && other.start < self.end()
    }
}

/// Refuses an input that shares bytes with an output: ossa would read what it already wrote.
pub(super) fn disjoint(input: Span, output: Span) -> Result<()> {
    if input.overlaps(output) {
        return Err(Error::invalid_argument(format!(
            "{} overlaps {}: an output may not share memory with an input",
            input.what, output.what
        )));
    }
    Ok(())
}

/// Model-space bone matrices for a weighted blend of 1 to 8 frames. A root with an element that
/// is not finite or is beyond 1e9 in magnitude is OSSA_ERR_INVALID_ARGUMENT: within that, the
/// poses and skinning of a model that loaded stay finite. `root` may lie inside `bones_out` (it
/// is read before anything is written); `blends` may not (OSSA_ERR_INVALID_ARGUMENT).
///
/// # Safety
/// `model` is a live handle; `blends` holds `blend_count` entries; `root` is NULL or one matrix;
/// `bones_out` holds `bone_count` matrices.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_pose_frames(
    model: *const ossa_model,
    blends: *const ossa_frame_blend,
    blend_count: usize,
    root: *const ossa_mat3x4,
    bones_out: *mut ossa_mat3x4,
    bone_count: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let blends = blends_in(blends, blend_count)?;
        let root = root_in(root);
        let out_span = Span::of(bones_out, bone_count, "bones_out");
        disjoint(Span::of(blends.as_ptr(), blends.len(), "blends"), out_span)?;
        let out = self::bones_out(model, bones_out, bone_count)?;
        model.pose_frames(blends, root.as_ref(), out)
    })
}

/// The same blend, left parent-relative.
///
/// # Safety
/// As for `ossa_pose_frames`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_pose_frames_local(
    model: *const ossa_model,
    blends: *const ossa_frame_blend,
    blend_count: usize,
    local_out: *mut ossa_mat3x4,
    bone_count: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let blends = blends_in(blends, blend_count)?;
        disjoint(
            Span::of(blends.as_ptr(), blends.len(), "blends"),
            Span::of(local_out, bone_count, "local_out"),
        )?;
        let out = bones_out(model, local_out, bone_count)?;
        model.pose_frames_local(blends, out)
    })
}

/// Concatenates caller-made parent-relative poses. They are held to the rule a file's frames
/// are: chained through the parents, every element finite and within 1e9 in magnitude (and the
/// root as for ossa_pose_frames), else OSSA_ERR_INVALID_ARGUMENT with `bones_out` untouched.
/// `root` may lie inside `bones_out`; `local` sharing memory with `bones_out` is
/// OSSA_ERR_INVALID_ARGUMENT.
///
/// # Safety
/// `model` is a live handle; `local` and `bones_out` hold `bone_count` matrices and do not
/// overlap; `root` is NULL or one matrix.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_pose_concat(
    model: *const ossa_model,
    local: *const ossa_mat3x4,
    root: *const ossa_mat3x4,
    bones_out: *mut ossa_mat3x4,
    bone_count: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let local = bones_in(model, local, bone_count, "local")?;
        let root = root_in(root);
        disjoint(
            Span::of(local.as_ptr(), local.len(), "local"),
            Span::of(bones_out, bone_count, "bones_out"),
        )?;
        let out = self::bones_out(model, bones_out, bone_count)?;
        model.pose_concat(local, root.as_ref(), out)
    })
}

/// A caller's buffers, written through raw pointers because positions and normals may
/// interleave in one buffer (two `&mut` slices over it would alias).
pub(super) struct CTarget {
    positions: *mut u8,
    position_stride: usize,
    normals: *mut u8,
    normal_stride: usize,
    capacity: usize,
}

fn stride_capacity(stride: usize, bytes: usize, what: &str) -> Result<usize> {
    if stride < 12 || !stride.is_multiple_of(4) {
        return Err(Error::invalid_argument(format!(
            "{what} stride {stride} is not a multiple of 4 of at least 12"
        )));
    }
    Ok(if bytes < 12 {
        0
    } else {
        (bytes - 12) / stride + 1
    })
}

impl CTarget {
    pub(super) fn new(t: &ossa_skin_target) -> Result<CTarget> {
        if t.positions.is_null() {
            return Err(null("target->positions"));
        }
        let mut capacity = stride_capacity(t.position_stride, t.position_bytes, "position")?;
        if !t.normals.is_null() {
            capacity = capacity.min(stride_capacity(t.normal_stride, t.normal_bytes, "normal")?);
        }
        let target = CTarget {
            positions: t.positions.cast(),
            position_stride: t.position_stride,
            normals: t.normals.cast(),
            normal_stride: t.normal_stride,
            capacity,
        };
        target.check_interleaving()?;
        Ok(target)
    }

    /// The bytes the first `count` positions (or normals) take.
    fn span(base: *mut u8, stride: usize, count: usize, what: &'static str) -> Span {
        Span {
            start: base as usize,
            len: match count {
                0 => 0,
                n => (n - 1).saturating_mul(stride).saturating_add(12),
            },
            what,
        }
    }

    fn positions_span(&self, count: usize) -> Span {
        Self::span(
            self.positions,
            self.position_stride,
            count,
            "target->positions",
        )
    }

    fn normals_span(&self, count: usize) -> Option<Span> {
        (!self.normals.is_null())
            .then(|| Self::span(self.normals, self.normal_stride, count, "target->normals"))
    }

    /// Positions and normals may share one buffer, interleaved, but no normal may be written
    /// over a position: with one stride, each normal must start at least 12 bytes after a
    /// position and end before the next.
    fn check_interleaving(&self) -> Result<()> {
        let positions = self.positions_span(self.capacity);
        let Some(normals) = self.normals_span(self.capacity) else {
            return Ok(());
        };
        if !positions.overlaps(normals) {
            return Ok(());
        }
        let stride = self.position_stride;
        let apart =
            (normals.start.wrapping_sub(positions.start) as isize).rem_euclid(stride as isize);
        if self.normal_stride == stride && (12..=stride as isize - 12).contains(&apart) {
            return Ok(());
        }
        Err(Error::invalid_argument(format!(
            "target->normals overlap target->positions: a normal would be written over a \
             position (strides {} and {}, normals {apart} bytes after a position)",
            self.position_stride, self.normal_stride
        )))
    }

    /// Refuses an input that shares bytes with the first `count` elements written.
    fn check_disjoint(&self, input: Span, count: usize) -> Result<()> {
        disjoint(input, self.positions_span(count))?;
        match self.normals_span(count) {
            Some(normals) => disjoint(input, normals),
            None => Ok(()),
        }
    }
}

impl SkinTarget for CTarget {
    fn capacity(&self) -> usize {
        self.capacity
    }
    fn wants_normals(&self) -> bool {
        !self.normals.is_null()
    }
    #[inline]
    fn put(&mut self, i: usize, position: [f32; 3], normal: [f32; 3]) {
        // SAFETY: skin_mesh calls put only for i < count <= capacity, and capacity was computed
        // from the byte sizes the caller gave, so these 12 bytes lie inside the caller's buffer.
        unsafe {
            self.positions
                .add(i * self.position_stride)
                .cast::<[f32; 3]>()
                .write_unaligned(position);
            if !self.normals.is_null() {
                self.normals
                    .add(i * self.normal_stride)
                    .cast::<[f32; 3]>()
                    .write_unaligned(normal);
            }
        }
    }
    fn raw(&mut self) -> Option<RawTarget<'_>> {
        // SAFETY: capacity was computed from the byte sizes the caller gave for each buffer, so
        // every element below it lies inside them; the caller lends the buffers for the call.
        Some(unsafe {
            RawTarget::new(
                self.positions,
                self.position_stride,
                self.normals,
                self.normal_stride,
                self.capacity,
            )
        })
    }
}

/// Skins vertices [first, first + count) of `mesh`. Positions and normals may interleave in one
/// buffer, but a normal written over a position, or `bones` inside the bytes written, is
/// OSSA_ERR_INVALID_ARGUMENT.
///
/// # Safety
/// `model` is a live handle; `bones` holds `bone_count` matrices; `target` describes writable
/// buffers of the sizes it states.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_skin_mesh(
    model: *const ossa_model,
    mesh: u32,
    bones: *const ossa_mat3x4,
    bone_count: usize,
    first: u32,
    count: u32,
    flags: u32,
    target: *const ossa_skin_target,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let bones = bones_in(model, bones, bone_count, "bones")?;
        // SAFETY: a non-null target points to one ossa_skin_target.
        let target = unsafe { target.as_ref() }.ok_or_else(|| null("target"))?;
        let mut target = CTarget::new(target)?;
        target.check_disjoint(
            Span::of(bones.as_ptr(), bones.len(), "bones"),
            count as usize,
        )?;
        model.skin_mesh(
            mesh as usize,
            bones,
            first as usize,
            count as usize,
            flags,
            &mut target,
        )
    })
}

/// Skins every mesh of the model, whole, in one call: `targets[m]` receives mesh `m` (vertex
/// `v` at element `v`), as ossa_skin_mesh would with first 0 and count its vertex count.
/// `target_count` must be the model's mesh count and each target must hold its mesh's
/// vertices; the model, bones, flags and every target are checked before anything is written.
/// Targets of different meshes may share a buffer (a later mesh's elements written over an
/// earlier's where they overlap); `bones` inside the bytes any target writes is
/// OSSA_ERR_INVALID_ARGUMENT.
///
/// # Safety
/// `model` is a live handle; `bones` holds `bone_count` matrices; `targets` holds
/// `target_count` entries, each describing writable buffers of the sizes it states.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_skin_model(
    model: *const ossa_model,
    bones: *const ossa_mat3x4,
    bone_count: usize,
    flags: u32,
    targets: *const ossa_skin_target,
    target_count: usize,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        let bones = bones_in(model, bones, bone_count, "bones")?;
        let meshes = model.meshes();
        if target_count != meshes.len() {
            return Err(Error::invalid_argument(format!(
                "{target_count} targets given, the model has {} meshes",
                meshes.len()
            )));
        }
        let entries: &[ossa_skin_target] = if target_count == 0 {
            &[]
        } else if targets.is_null() {
            return Err(null("targets"));
        } else {
            // SAFETY: the caller's contract: `targets` holds `target_count` entries.
            unsafe { std::slice::from_raw_parts(targets, target_count) }
        };
        let mut made = Vec::with_capacity(entries.len());
        for (m, (entry, mesh)) in entries.iter().zip(meshes).enumerate() {
            let target = CTarget::new(entry).map_err(|e| e.within(format!("targets[{m}]")))?;
            target
                .check_disjoint(
                    Span::of(bones.as_ptr(), bones.len(), "bones"),
                    mesh.vertex_count(),
                )
                .map_err(|e| e.within(format!("targets[{m}]")))?;
            made.push(target);
        }
        model.skin_model(bones, flags, &mut made)
    })
}
