//! A skeleton's stored poses: every frame's parent-relative pose of every bone, in the form the
//! file gives them. Most formats store 3x4 matrices; SKP stores a unit quaternion and an origin
//! (28 bytes where a matrix takes 48), kept so: frames are most of an SKP, and as matrices they
//! took 1.7 times the file in memory. A rigid pose becomes its matrix when asked, through the
//! same function the reader used, so that its bits are what they were when stored as a matrix.

use std::borrow::Cow;

use glam::Quat;

use crate::math::{Decomposed, Mat3x4};

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

    /// Bytes of heap the poses take.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Poses::Matrices(m) => size_of_val(m.as_slice()),
            Poses::Rigid(r) => size_of_val(r.as_slice()),
        }
    }
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
