//! A skeleton's stored poses: every frame's parent-relative pose of every bone, in the form the
//! file gives them. Most formats store 3x4 matrices; SKP stores a unit quaternion and an origin
//! (28 bytes where a matrix takes 48), kept so: frames are most of an SKP, and as matrices they
//! took 1.7 times the file in memory. A rigid pose becomes its matrix when asked, through the
//! same function the reader used, so that its bits are what they were when stored as a matrix.

use std::borrow::Cow;

use glam::Quat;

use crate::error::{Error, Result};
use crate::math::{Decomposed, MAX_MAGNITUDE, Mat3x4, in_range, mul_rows};
use crate::model::{Bone, Frame};

/// A rotation and a translation: `rotation` a unit quaternion `(x, y, z, w)`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RigidPose {
    pub rotation: [f32; 4],
    pub translation: [f32; 3],
}

impl RigidPose {
    /// [`Mat3x4::from_rotation_translation`] of the pose.
    #[inline]
    pub fn matrix(&self) -> Mat3x4 {
        Mat3x4::from_rotation_translation(Quat::from_array(self.rotation), self.translation)
    }

    /// The pose split for blending: its own rotation and translation, unscaled (which its
    /// matrix would give back only to rounding).
    #[inline]
    pub fn parts(&self) -> Decomposed {
        Decomposed {
            rotation: Quat::from_array(self.rotation),
            translation: self.translation,
            scale: [1.0; 3],
        }
    }

    /// Whether its floats are finite and its rotation of unit length (to `Quat::is_normalized`'s
    /// tolerance): a matrix made of it then is a finite rotation.
    pub fn is_valid(&self) -> bool {
        let finite = self
            .rotation
            .iter()
            .chain(&self.translation)
            .all(|x| x.is_finite());
        finite && Quat::from_array(self.rotation).is_normalized()
    }
}

/// Parent-relative poses, frame-major: pose `frame * bones + bone`.
#[derive(Clone, Debug, PartialEq)]
pub enum Poses {
    Matrices(Vec<Mat3x4>),
    Rigid(Vec<RigidPose>),
}

impl Default for Poses {
    fn default() -> Poses {
        Poses::Matrices(Vec::new())
    }
}

impl From<Vec<Mat3x4>> for Poses {
    fn from(poses: Vec<Mat3x4>) -> Poses {
        Poses::Matrices(poses)
    }
}

impl FromIterator<Mat3x4> for Poses {
    fn from_iter<I: IntoIterator<Item = Mat3x4>>(poses: I) -> Poses {
        Poses::Matrices(poses.into_iter().collect())
    }
}

/// Appends matrices (rigid poses become matrices first).
impl Extend<Mat3x4> for Poses {
    fn extend<I: IntoIterator<Item = Mat3x4>>(&mut self, poses: I) {
        let mut matrices = match std::mem::take(self) {
            Poses::Matrices(m) => m,
            Poses::Rigid(r) => r.iter().map(RigidPose::matrix).collect(),
        };
        matrices.extend(poses);
        *self = Poses::Matrices(matrices);
    }
}

impl From<Vec<RigidPose>> for Poses {
    fn from(poses: Vec<RigidPose>) -> Poses {
        Poses::Rigid(poses)
    }
}

impl Poses {
    pub fn len(&self) -> usize {
        match self {
            Poses::Matrices(m) => m.len(),
            Poses::Rigid(r) => r.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pose `i` as a matrix.
    #[inline]
    pub fn get(&self, i: usize) -> Option<Mat3x4> {
        match self {
            Poses::Matrices(m) => m.get(i).copied(),
            Poses::Rigid(r) => r.get(i).map(RigidPose::matrix),
        }
    }

    /// Poses `[from, from + n)` as matrices: borrowed where they are stored so, made otherwise.
    pub fn range(&self, from: usize, n: usize) -> Option<Cow<'_, [Mat3x4]>> {
        let end = from.checked_add(n)?;
        match self {
            Poses::Matrices(m) => m.get(from..end).map(Cow::Borrowed),
            Poses::Rigid(r) => r
                .get(from..end)
                .map(|r| Cow::Owned(r.iter().map(RigidPose::matrix).collect())),
        }
    }

    /// Writes poses `[from, from + out.len())` into `out`; false, leaving `out` alone, when they
    /// are not all there.
    pub fn write(&self, from: usize, out: &mut [Mat3x4]) -> bool {
        let Some(end) = from.checked_add(out.len()) else {
            return false;
        };
        match self {
            Poses::Matrices(m) => m.get(from..end).map(|m| out.copy_from_slice(m)).is_some(),
            Poses::Rigid(r) => r
                .get(from..end)
                .map(|r| {
                    for (o, r) in out.iter_mut().zip(r) {
                        *o = r.matrix();
                    }
                })
                .is_some(),
        }
    }

    /// Every pose as a matrix.
    pub fn to_matrices(&self) -> Vec<Mat3x4> {
        match self {
            Poses::Matrices(m) => m.clone(),
            Poses::Rigid(r) => r.iter().map(RigidPose::matrix).collect(),
        }
    }

    /// Keeps the poses whose index `keep` accepts, in order.
    pub fn retain_indices(&mut self, keep: impl Fn(usize) -> bool) {
        fn retain<T>(v: &mut Vec<T>, keep: impl Fn(usize) -> bool) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                keep(i - 1)
            });
        }
        match self {
            Poses::Matrices(m) => retain(m, keep),
            Poses::Rigid(r) => retain(r, keep),
        }
    }

    /// The index of the first pose with a NaN or infinity (or, rigid, a rotation that is not a
    /// unit quaternion).
    pub(crate) fn first_invalid(&self) -> Option<usize> {
        match self {
            Poses::Matrices(m) => m.iter().position(|p| !p.is_finite()),
            Poses::Rigid(r) => r.iter().position(|p| !p.is_valid()),
        }
    }

    /// Checks that no frame's model-space pose, nor any blend of frames, holds a value beyond
    /// [`MAX_MAGNITUDE`] (see there why), so that posing and skinning a model that loaded never
    /// overflow; an error names the frame and the bone.
    ///
    /// A blend's parent-relative pose is `R diag(s)` (a unit rotation, the frames' scales
    /// blended) and the frames' translations blended, with weights that sum 1: it stretches a
    /// vector by at most the most any of the frames' poses does, and moves it at most as far as
    /// the farthest of their origins. Chained, a bone's model-space pose in any blend (a single
    /// frame is one) then stretches by at most `stretch(parent) * stretch(bone)` and moves at
    /// most `reach(parent) + stretch(parent) * origin(bone)`. One pass over the poses finds
    /// each bone's largest stretch and origin; the chain of bounds is then per bone, in f64
    /// (where f32 would hide an overflow as an infinity). Only a model that fails it is chained
    /// frame by frame, to name the first frame and bone out of range.
    ///
    /// `magnitudes`, where the reader found them, are each element's largest magnitude over
    /// every pose: a pose then stretches by at most `3 a` (its Frobenius norm, `a` the largest
    /// magnitude of the 3x3 part) and moves by at most `sqrt(3) t`, which bounds every bone of a
    /// shallow skeleton without a pass over the poses.
    pub(crate) fn check_chained(
        &self,
        bones: &[Bone],
        frames: &[Frame],
        magnitudes: Option<[f32; 12]>,
    ) -> Result<()> {
        let nb = bones.len();
        if nb == 0 {
            return Ok(());
        }
        if let Some(m) = magnitudes
            && m.iter().all(|v| v.is_finite())
            && all_pose_bounds_hold(bones, |_| {
                let [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11] = m;
                let a = [m0, m1, m2, m4, m5, m6, m8, m9, m10]
                    .into_iter()
                    .fold(0.0, f32::max);
                let t = m3.max(m7).max(m11);
                (9.0 * a * a, 3.0 * t * t)
            })
            .is_none()
        {
            return Ok(());
        }
        // Per bone: the largest squared stretch and origin over the frames.
        let mut most = vec![(0.0f32, 0.0f32); nb];
        match self {
            Poses::Matrices(m) => scan_most(m, &mut most, |m| *m),
            Poses::Rigid(r) => scan_most(r, &mut most, RigidPose::matrix),
        }
        match all_pose_bounds_hold(bones, |b| most.get(b).copied().unwrap_or_default()) {
            None => Ok(()),
            Some((b, v)) => Err(self.first_out_of_range(bones, frames).unwrap_or_else(|| {
                Error::limit(format!(
                    "bone {b} ({}): a blend of frames can give it a model-space pose that \
                     holds {v:e}, beyond {MAX_MAGNITUDE:e}",
                    bones.get(b).map(|b| b.name.clone()).unwrap_or_default(),
                ))
            })),
        }
    }

    /// The first frame and bone whose model-space pose, chained in f64, holds a value beyond
    /// [`MAX_MAGNITUDE`], as an error.
    fn first_out_of_range(&self, bones: &[Bone], frames: &[Frame]) -> Option<Error> {
        let nb = bones.len();
        let mut model = vec![[0.0f64; 12]; nb];
        for (f, frame) in frames.iter().enumerate() {
            let first = f.checked_mul(nb)?;
            let local = |b: usize| self.get(first.checked_add(b)?);
            if let Some((b, v)) = first_chained_out_of_range(bones, local, &mut model) {
                return Some(Error::limit(format!(
                    "frame {f} ({}) bone {b} ({}): its model-space pose (chained through the \
                     parents) holds {v:e}, beyond {MAX_MAGNITUDE:e}",
                    frame.name,
                    bones.get(b).map(|b| b.name.clone()).unwrap_or_default(),
                )));
            }
        }
        None
    }

    /// Bytes of heap the poses take.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Poses::Matrices(m) => size_of_val(m.as_slice()),
            Poses::Rigid(r) => size_of_val(r.as_slice()),
        }
    }
}

/// The first bone whose model-space pose in some blend of frames may hold a value beyond
/// [`MAX_MAGNITUDE`], with that bound, given each bone's `most(bone)`: the largest squared
/// stretch and squared origin of its parent-relative poses (see [`Poses::check_chained`]).
fn all_pose_bounds_hold(
    bones: &[Bone],
    most: impl Fn(usize) -> (f32, f32),
) -> Option<(usize, f32)> {
    let limit = f64::from(MAX_MAGNITUDE);
    // (stretch, reach) of each bone's model-space pose in any blend, parents first. The factor
    // covers f32 rounding in the bounds, in blending and in composing.
    let margin = 1.0 + 1e-5;
    let mut chain = vec![(1.0f64, 0.0f64); bones.len()];
    for (b, bone) in bones.iter().enumerate() {
        let (ps, pr) = usize::try_from(bone.parent)
            .ok()
            .and_then(|p| chain.get(p).copied())
            .unwrap_or((1.0, 0.0));
        let (s, o) = most(b);
        let bound = (
            ps * f64::from(s).sqrt() * margin,
            pr + ps * f64::from(o).sqrt() * margin,
        );
        if !(bound.0 <= limit && bound.1 <= limit) {
            return Some((b, bound.0.max(bound.1) as f32));
        }
        *chain.get_mut(b)? = bound;
    }
    None
}

/// The first bone whose model-space pose, its parent-relative `local(bone)` chained through the
/// parents in f64 (`model` holds one matrix per bone, for the work), holds a value beyond
/// [`MAX_MAGNITUDE`]; with that value, rounded to f32 for messages.
pub(crate) fn first_chained_out_of_range(
    bones: &[Bone],
    local: impl Fn(usize) -> Option<Mat3x4>,
    model: &mut [[f64; 12]],
) -> Option<(usize, f32)> {
    for (b, bone) in bones.iter().enumerate() {
        let local = local(b)?.m.map(f64::from);
        let chained = match usize::try_from(bone.parent).ok().and_then(|p| model.get(p)) {
            Some(parent) => mul_rows(parent, &local),
            None => local,
        };
        if let Some(&v) = chained.iter().find(|&&v| !in_range(v)) {
            return Some((b, v as f32));
        }
        *model.get_mut(b)? = chained;
    }
    None
}

/// Raises each bone's `most` (squared stretch, squared origin) to its poses' in the frame-major
/// `poses`, one frame of `most.len()` poses after another.
#[inline(always)]
fn scan_most<T>(poses: &[T], most: &mut [(f32, f32)], matrix: impl Fn(&T) -> Mat3x4) {
    for frame in poses.chunks(most.len().max(1)) {
        for (pose, slot) in frame.iter().zip(most.iter_mut()) {
            let pose = matrix(pose);
            let (s, o) = (stretch_squared(&pose), origin_squared(&pose));
            // A NaN (never in a checked model) counts as out of range.
            slot.0 = if s <= slot.0 {
                slot.0
            } else if s.is_nan() {
                f32::INFINITY
            } else {
                s
            };
            slot.1 = if o <= slot.1 {
                slot.1
            } else if o.is_nan() {
                f32::INFINITY
            } else {
                o
            };
        }
    }
}

/// The square of an upper bound of the most the 3x3 part of `m` stretches a vector (its
/// spectral norm): the largest row sum of `|M^T M|` (Gershgorin's). For a rotation it is 1 to
/// rounding, so that a long chain of bones does not make it grow; it bounds every column's
/// length too, and so the scales a blend decomposes the pose into. In f32: it overflows only
/// for an element beyond 1e19, which is out of range anyway.
#[inline]
fn stretch_squared(m: &Mat3x4) -> f32 {
    let [m0, m1, m2, _, m4, m5, m6, _, m8, m9, m10, _] = m.m;
    let g00 = m0 * m0 + m4 * m4 + m8 * m8;
    let g11 = m1 * m1 + m5 * m5 + m9 * m9;
    let g22 = m2 * m2 + m6 * m6 + m10 * m10;
    let g01 = (m0 * m1 + m4 * m5 + m8 * m9).abs();
    let g02 = (m0 * m2 + m4 * m6 + m8 * m10).abs();
    let g12 = (m1 * m2 + m5 * m6 + m9 * m10).abs();
    (g00 + g01 + g02).max(g11 + g01 + g12).max(g22 + g02 + g12)
}

/// The squared length of `m`'s translation.
#[inline]
fn origin_squared(m: &Mat3x4) -> f32 {
    m.m[3] * m.m[3] + m.m[7] * m.m[7] + m.m[11] * m.m[11]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::model::{Bone, Frame, Model, ModelParts, Name};

    fn rigid(angle: f32, t: [f32; 3]) -> RigidPose {
        RigidPose {
            rotation: Quat::from_rotation_z(angle).to_array(),
            translation: t,
        }
    }

    #[test]
    fn rigid_poses_are_their_matrices_wherever_read() {
        let r = [rigid(0.5, [1.0, 2.0, 3.0]), rigid(-1.25, [0.0, 0.5, -4.0])];
        let m = r.map(|r| r.matrix());
        // A quarter turn about z moves x to y: the matrix is the rotation's, column by column.
        let q = rigid(std::f32::consts::FRAC_PI_2, [7.0, 8.0, 9.0]).matrix();
        assert!((q.m[4] - 1.0).abs() < 1e-6 && q.m[0].abs() < 1e-6);
        assert_eq!([q.m[3], q.m[7], q.m[11]], [7.0, 8.0, 9.0]);

        let poses = Poses::from(r.to_vec());
        assert_eq!((poses.len(), poses.heap_bytes()), (2, 56));
        assert_eq!(poses.get(1), Some(m[1]));
        assert_eq!(poses.get(2), None);
        assert_eq!(poses.range(0, 2).as_deref(), Some(&m[..]));
        assert_eq!(poses.range(1, 2), None);
        let mut out = [Mat3x4::IDENTITY; 1];
        assert!(poses.write(1, &mut out));
        assert_eq!(out, [m[1]]);
        assert!(!poses.write(2, &mut out));
        assert_eq!(poses.to_matrices(), m.to_vec());
        // Split for blending, a rigid pose is its own rotation and origin, unscaled.
        let d = r[0].parts();
        assert_eq!(d.rotation.to_array(), r[0].rotation);
        assert_eq!((d.translation, d.scale), ([1.0, 2.0, 3.0], [1.0; 3]));

        // Matrices appended to rigid poses make them all matrices.
        let mut more = poses.clone();
        more.extend([Mat3x4::from_translation([5.0, 0.0, 0.0])]);
        assert_eq!(
            more,
            Poses::Matrices(vec![m[0], m[1], Mat3x4::from_translation([5.0, 0.0, 0.0])])
        );
        let mut kept = poses;
        kept.retain_indices(|i| i == 1);
        assert_eq!(kept, Poses::Rigid(vec![r[1]]));
    }

    #[test]
    fn models_built_with_rigid_poses_need_unit_rotations() {
        let mut parts = ModelParts::new(crate::format::Format::Skp);
        parts.bones = (0..2)
            .map(|i| Bone {
                name: Name::from(format!("b{i}").as_str()),
                parent: i - 1,
                flags: 0,
            })
            .collect();
        parts.frames = vec![Frame::named("a"), Frame::named("b")];
        let good: Vec<RigidPose> = (0..4).map(|i| rigid(i as f32, [0.0, 0.0, 1.0])).collect();
        parts.poses = good.clone().into();
        let model = Model::from_parts(parts.clone()).unwrap();
        // The bind pose concatenates frame 0's matrices.
        let bind = good[0].matrix().mul(&good[1].matrix());
        assert_eq!(model.skeleton().bind_pose()[1], bind);

        let mut bad = good;
        bad[3].rotation = [0.0, 0.0, 0.0, 2.0];
        parts.poses = bad.into();
        let e = Model::from_parts(parts).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Malformed);
        assert!(
            e.to_string()
                .contains("frame 1 bone 1: pose has a NaN or infinity, or a rotation of other"),
            "{e}"
        );
    }
}
