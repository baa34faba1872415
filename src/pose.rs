//! Posing: frame blends on parent-relative poses, then concatenation down the hierarchy.
//!
//! Rotations blend as hemisphere-aligned, normalised quaternions; translations and scale
//! linearly. A single frame is copied, so weight 1 reproduces the file's own matrices exactly.

use std::cell::Cell;

use glam::Quat;

use crate::error::{Error, Result};
use crate::math::{Decomposed, MAX_MAGNITUDE, Mat3x4};
use crate::model::{Model, concat_in_place, concat_into};
use crate::poses::{Poses, RigidPose, first_chained_out_of_range};

/// One frame of a blend and its weight.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameBlend {
    pub frame: u32,
    pub weight: f32,
}

/// Most frames one blend may mix.
pub const MAX_BLENDS: usize = 8;

fn check_bone_count(model: &Model, got: usize, what: &str) -> Result<()> {
    let want = model.bones().len();
    if got != want {
        return Err(Error::invalid_argument(format!(
            "{what} has room for {got} bones, the model has {want}"
        )));
    }
    Ok(())
}

thread_local! {
    /// Each thread's f64 model-space poses for checking caller-made local poses, kept from call
    /// to call as skinning keeps its table, so that posing allocates only when a thread first
    /// meets a skeleton larger than it has room for.
    static CHAIN_WORK: Cell<Vec<[f64; 12]>> = const { Cell::new(Vec::new()) };
}

thread_local! {
    /// Each thread's decoded frames for blending quantised poses, kept from call to call.
    static BLEND_WORK: Cell<Vec<Mat3x4>> = const { Cell::new(Vec::new()) };
}

/// Refuses a caller's root matrix with a value that is not finite or beyond [`MAX_MAGNITUDE`]:
/// within it, posing and skinning a model that loaded stay finite.
fn check_root(root: Option<&Mat3x4>) -> Result<()> {
    if let Some(v) = root.and_then(Mat3x4::first_out_of_range) {
        return Err(Error::invalid_argument(format!(
            "the root matrix holds {v:e}, beyond {MAX_MAGNITUDE:e}"
        )));
    }
    Ok(())
}

/// The blend's frames with weights normalised to sum 1, after checking every entry.
fn normalised(model: &Model, blends: &[FrameBlend]) -> Result<([FrameBlend; MAX_BLENDS], usize)> {
    if blends.is_empty() || blends.len() > MAX_BLENDS {
        return Err(Error::invalid_argument(format!(
            "a blend mixes 1 to {MAX_BLENDS} frames, not {}",
            blends.len()
        )));
    }
    let frames = model.frames().len();
    let mut total = 0.0f64;
    for (i, b) in blends.iter().enumerate() {
        if b.frame as usize >= frames {
            return Err(Error::invalid_argument(format!(
                "blend {i}: frame {} out of range (model has {frames} frames)",
                b.frame
            )));
        }
        if !(b.weight.is_finite() && b.weight > 0.0) {
            return Err(Error::invalid_argument(format!(
                "blend {i}: weight {} is not a positive finite number",
                b.weight
            )));
        }
        total += b.weight as f64;
    }
    let mut out = [FrameBlend {
        frame: 0,
        weight: 0.0,
    }; MAX_BLENDS];
    for (o, b) in out.iter_mut().zip(blends) {
        *o = FrameBlend {
            frame: b.frame,
            weight: (b.weight as f64 / total) as f32,
        };
    }
    Ok((out, blends.len()))
}

fn blend_local(model: &Model, blends: &[FrameBlend], out: &mut [Mat3x4]) {
    let skeleton = model.skeleton();
    if let [single] = blends {
        skeleton.write_frame_poses(single.frame as usize, out);
        return;
    }
    // The poses' form is matched once, outside the loops.
    let nb = skeleton.bones().len();
    match skeleton.poses() {
        Poses::Matrices(m) => {
            let frames = frames_of(m, blends, nb);
            blend_parts(blends, out, |k, bone| {
                frames.get(k)?.get(bone).map(Mat3x4::decompose)
            });
        }
        Poses::Rigid(r) => {
            let frames = frames_of(r, blends, nb);
            blend_parts(blends, out, |k, bone| {
                frames.get(k)?.get(bone).map(RigidPose::parts)
            });
        }
        // Each frame but the rest pose decoded whole into the thread's work space (a small
        // skeleton's on the stack, which is quicker to reach), then split as matrices are; the
        // rest pose's split is kept (None below).
        Poses::Quantised(q) => {
            const SMALL: usize = 16;
            let need = nb.saturating_mul(blends.len());
            let mut small = [Mat3x4::IDENTITY; SMALL];
            let mut work = Vec::new();
            let space = if need <= SMALL {
                small.get_mut(..need).unwrap_or_default()
            } else {
                work = BLEND_WORK.try_with(Cell::take).unwrap_or_default();
                work.resize(need, Mat3x4::IDENTITY);
                work.as_mut_slice()
            };
            for (b, frame) in blends.iter().zip(space.chunks_mut(nb.max(1))) {
                if b.frame != 0 {
                    q.write_frame(b.frame as usize, frame);
                }
            }
            let mut frames: [Option<&[Mat3x4]>; MAX_BLENDS] = [None; MAX_BLENDS];
            for ((f, b), decoded) in frames.iter_mut().zip(blends).zip(space.chunks(nb.max(1))) {
                *f = (b.frame != 0).then_some(decoded);
            }
            let rest = q.rest_parts();
            blend_parts(blends, out, |k, bone| match frames.get(k)? {
                Some(decoded) => decoded.get(bone).map(Mat3x4::decompose),
                None => rest.get(bone).copied(),
            });
            if need > SMALL {
                let _ = BLEND_WORK.try_with(|c| c.set(work));
            }
        }
    }
}

/// Each blend's frame of the frame-major `poses`, `nb` poses each.
fn frames_of<'a, T>(poses: &'a [T], blends: &[FrameBlend], nb: usize) -> [&'a [T]; MAX_BLENDS] {
    let mut frames: [&[T]; MAX_BLENDS] = [&[]; MAX_BLENDS];
    for (f, b) in frames.iter_mut().zip(blends) {
        let at = (b.frame as usize).saturating_mul(nb);
        *f = poses.get(at..at.saturating_add(nb)).unwrap_or_default();
    }
    frames
}

/// Blends each bone's poses, `part(k, bone)` splitting blend `k`'s pose of the bone.
#[inline(always)]
fn blend_parts(
    blends: &[FrameBlend],
    out: &mut [Mat3x4],
    part: impl Fn(usize, usize) -> Option<Decomposed>,
) {
    for (bone, slot) in out.iter_mut().enumerate() {
        let mut rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        let mut first = Quat::IDENTITY;
        let mut translation = [0.0f32; 3];
        let mut scale = [0.0f32; 3];
        for (k, b) in blends.iter().enumerate() {
            let Some(d) = part(k, bone) else {
                continue;
            };
            let mut q = d.rotation;
            if k == 0 {
                first = q;
            } else if first.dot(q) < 0.0 {
                q = -q;
            }
            rotation += q * b.weight;
            for a in 0..3 {
                translation[a] += d.translation[a] * b.weight;
                scale[a] += d.scale[a] * b.weight;
            }
        }
        let len = rotation.length();
        let rotation = if len > 0.0 && len.is_finite() {
            rotation / len
        } else {
            first
        };
        *slot = Decomposed {
            rotation,
            translation,
            scale,
        }
        .compose();
    }
}

impl Model {
    /// Model-space bone matrices for a weighted blend of 1 to 8 frames. `root` (None = identity)
    /// is the matrix parentless bones are concatenated with. `out` holds one matrix per bone.
    pub fn pose_frames(
        &self,
        blends: &[FrameBlend],
        root: Option<&Mat3x4>,
        out: &mut [Mat3x4],
    ) -> Result<()> {
        check_bone_count(self, out.len(), "the output")?;
        check_root(root)?;
        let (norm, n) = normalised(self, blends)?;
        blend_local(self, norm.get(..n).unwrap_or_default(), out);
        concat_in_place(self.bones(), root, out);
        Ok(())
    }

    /// The same blend, left parent-relative, for callers that edit bones before concatenating.
    pub fn pose_frames_local(&self, blends: &[FrameBlend], out: &mut [Mat3x4]) -> Result<()> {
        check_bone_count(self, out.len(), "the output")?;
        let (norm, n) = normalised(self, blends)?;
        blend_local(self, norm.get(..n).unwrap_or_default(), out);
        Ok(())
    }

    /// Concatenates caller-made parent-relative poses into model-space matrices.
    pub fn pose_concat(
        &self,
        local: &[Mat3x4],
        root: Option<&Mat3x4>,
        out: &mut [Mat3x4],
    ) -> Result<()> {
        check_bone_count(self, local.len(), "the local poses")?;
        check_bone_count(self, out.len(), "the output")?;
        check_root(root)?;
        // The local poses are the caller's: held to the rule a file's frames are, so that
        // skinning with the result stays finite; checked before `out` is written, in the
        // thread's work space (see CHAIN_WORK).
        let mut work = CHAIN_WORK.try_with(Cell::take).unwrap_or_default();
        work.resize(local.len(), [0.0; 12]);
        let at = |b: usize| local.get(b).copied();
        let found = first_chained_out_of_range(self.bones(), at, &mut work);
        // After the thread's destructors the space is dropped with the call.
        let _ = CHAIN_WORK.try_with(|c| c.set(work));
        if let Some((b, v)) = found {
            return Err(Error::invalid_argument(format!(
                "bone {b}: the local poses chained through the parents hold {v:e}, beyond \
                 {MAX_MAGNITUDE:e}"
            )));
        }
        concat_into(self.bones(), local, root, out);
        Ok(())
    }
}
