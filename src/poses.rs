//! A skeleton's stored poses: every frame's parent-relative pose of every bone, in the form the
//! file gives them. Most formats store 3x4 matrices; SKP stores a unit quaternion and an origin
//! (28 bytes where a matrix takes 48), kept so: frames are most of an SKP, and as matrices they
//! took 1.7 times the file in memory. A rigid pose becomes its matrix when asked, through the
//! same function the reader used, so that its bits are what they were when stored as a matrix.
//! An IQM's frames stay the file's 2-byte channels ([`QuantisedPoses`]): as matrices they took
//! up to five times the file, and making them most of a load's time. A pose is decoded when
//! asked, by the steps the reader took, so that its bits are what they were when decoded at load.

use std::borrow::Cow;
use std::sync::Arc;

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
#[derive(Clone, Debug)]
pub enum Poses {
    Matrices(Vec<Mat3x4>),
    Rigid(Vec<RigidPose>),
    /// An IQM's frames as the file stores them, decoded when read.
    Quantised(QuantisedPoses),
}

/// Poses in one form equal as their lists; quantised poses equal any poses with the same
/// matrices.
impl PartialEq for Poses {
    fn eq(&self, other: &Poses) -> bool {
        match (self, other) {
            (Poses::Matrices(a), Poses::Matrices(b)) => a == b,
            (Poses::Rigid(a), Poses::Rigid(b)) => a == b,
            (Poses::Quantised(_), _) | (_, Poses::Quantised(_)) => {
                self.len() == other.len() && (0..self.len()).all(|i| self.get(i) == other.get(i))
            }
            _ => false,
        }
    }
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
            other => other.to_matrices(),
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
            Poses::Quantised(q) => q.len(),
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
            Poses::Quantised(q) => q.get(i),
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
            Poses::Quantised(q) => q.range(from, end),
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
            Poses::Quantised(q) => q.write(from, end, out),
        }
    }

    /// Every pose as a matrix.
    pub fn to_matrices(&self) -> Vec<Mat3x4> {
        match self {
            Poses::Matrices(m) => m.clone(),
            Poses::Rigid(r) => r.iter().map(RigidPose::matrix).collect(),
            Poses::Quantised(q) => q.range(0, q.len()).map(Cow::into_owned).unwrap_or_default(),
        }
    }

    /// Keeps the poses whose index `keep` accepts, in order (quantised poses become matrices).
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
            Poses::Quantised(_) => {
                let mut m = self.to_matrices();
                retain(&mut m, keep);
                *self = Poses::Matrices(m);
            }
        }
    }

    /// Keeps the bones `keep` accepts, in every frame of `nb` bones: as
    /// [`Poses::retain_indices`] by the bone of each index, quantised poses staying so.
    pub(crate) fn retain_bones(&mut self, nb: usize, keep: &[bool]) {
        match self {
            Poses::Quantised(q) if q.bones() == nb => q.retain_bones(keep),
            _ => self.retain_indices(|i| {
                keep.get(i.checked_rem(nb).unwrap_or_default())
                    .copied()
                    .unwrap_or_default()
            }),
        }
    }

    /// Puts the bones of every frame in the order `order` gives (`order[new] = old`).
    pub(crate) fn permute_bones(&mut self, order: &[u32]) {
        // Frame-major poses: each frame's run of bones is permuted alike.
        fn permute<T: Clone>(v: &mut Vec<T>, order: &[u32]) {
            let nb = order.len();
            if nb == 0 {
                return;
            }
            *v = v
                .chunks(nb)
                .flat_map(|frame| {
                    order
                        .iter()
                        .filter_map(|&old| frame.get(old as usize).cloned())
                })
                .collect();
        }
        match self {
            Poses::Matrices(m) => permute(m, order),
            Poses::Rigid(r) => permute(r, order),
            Poses::Quantised(q) if q.bones() == order.len() => q.permute_bones(order),
            Poses::Quantised(_) => {
                let mut m = self.to_matrices();
                permute(&mut m, order);
                *self = Poses::Matrices(m);
            }
        }
    }

    /// The index of the first pose with a NaN or infinity (or, rigid, a rotation that is not a
    /// unit quaternion).
    pub(crate) fn first_invalid(&self) -> Option<usize> {
        match self {
            Poses::Matrices(m) => m.iter().position(|p| !p.is_finite()),
            Poses::Rigid(r) => r.iter().position(|p| !p.is_valid()),
            Poses::Quantised(q) => {
                (0..q.len()).position(|i| !q.get(i).is_some_and(|p| p.is_finite()))
            }
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
    /// shallow skeleton without a pass over the poses. Quantised poses bound each bone from its
    /// channels' ranges, without decoding a frame (see [`QuantisedPoses::most_bounds`]).
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
        if let Poses::Quantised(q) = self
            && q.bones() == nb
        {
            let bounds = q.most_bounds();
            if all_pose_bounds_hold(bones, |b| bounds.get(b).copied().unwrap_or_default()).is_none()
            {
                return Ok(());
            }
        }
        // Per bone: the largest squared stretch and origin over the frames.
        let mut most = vec![(0.0f32, 0.0f32); nb];
        match self {
            Poses::Matrices(m) => scan_most(m, &mut most, |m| *m),
            Poses::Rigid(r) => scan_most(r, &mut most, RigidPose::matrix),
            Poses::Quantised(q) => q.scan_most(&mut most),
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

    /// Bytes of heap the poses take, less the file quantised poses share (see
    /// [`Poses::shared_file`]).
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Poses::Matrices(m) => size_of_val(m.as_slice()),
            Poses::Rigid(r) => size_of_val(r.as_slice()),
            Poses::Quantised(q) => q.heap_bytes(),
        }
    }

    /// The file whose frames quantised poses read.
    pub(crate) fn shared_file(&self) -> Option<&Arc<[u8]>> {
        match self {
            Poses::Quantised(q) => Some(&q.data),
            _ => None,
        }
    }
}

/// What every frame gives a bone in place of its channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fixed {
    /// Nothing: the channels give its pose.
    No,
    /// Its rest pose (frame 0's): where a channel can reach past [`MAX_MAGNITUDE`].
    Rest,
    /// The identity: the file has no pose for the bone.
    Identity,
}

/// One pose's channels in each frame of an IQM: translation, rotation (a quaternion, x y z w)
/// and scale, a value `offset + u16 * scale` where `mask` has the channel's bit, else `offset`.
/// The stored ones are a frame's values from number `first` on, in channel order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PoseChannels {
    pub first: u32,
    pub mask: u16,
    pub fixed: Fixed,
    /// Each channel's value's number after `first` (for a channel not stored, the next
    /// stored one's, not read): the stored channels below it.
    pub after: [u8; 10],
    pub offset: [f32; 10],
    pub scale: [f32; 10],
}

impl PoseChannels {
    /// A pose's channels: `mask`'s stored from value `first` of a frame on.
    pub(crate) fn new(
        first: u32,
        mask: u16,
        fixed: Fixed,
        offset: [f32; 10],
        scale: [f32; 10],
    ) -> PoseChannels {
        let mut after = [0u8; 10];
        let mut n = 0u8;
        for (c, a) in after.iter_mut().enumerate() {
            *a = n;
            n = n.saturating_add(u8::from(mask & (1 << c) != 0));
        }
        PoseChannels {
            first,
            mask,
            fixed,
            after,
            offset,
            scale,
        }
    }

    /// The channels' values in a frame's values, version 1's w derived from x, y and z.
    #[inline(always)]
    pub(crate) fn values(&self, frame: &[u8], v1: bool) -> [f32; 10] {
        // The ten values from the pose's first on (fewer, the rest 0, where the frame ends):
        // its stored ones are among them. Read in one bounded pass, so that picking each
        // channel's needs no check.
        let mut stored = [0u16; 16];
        let base = (self.first as usize).saturating_mul(2);
        let bytes = frame.get(base..).unwrap_or_default();
        for (r, b) in stored.iter_mut().take(10).zip(bytes.chunks_exact(2)) {
            *r = u16::from_le_bytes([b[0], b[1]]);
        }
        let mut v = self.offset;
        for (c, ((x, &s), &after)) in v.iter_mut().zip(&self.scale).zip(&self.after).enumerate() {
            // `after` is at most 9 (a channel not stored has at most 9 stored below it).
            let raw = stored[usize::from(after) & 15];
            // A select, not a branch: which channels a pose stores is the file's choice.
            *x = if self.mask & (1 << c) != 0 {
                *x + f32::from(raw) * s
            } else {
                *x
            };
        }
        if v1 {
            v[6] = complete_w(v[3], v[4], v[5]);
        }
        v
    }

    /// The pose in a frame's values; `rest` is the bone's rest pose.
    #[inline]
    pub(crate) fn pose(&self, frame: &[u8], v1: bool, rest: &Mat3x4) -> Mat3x4 {
        match self.fixed {
            Fixed::No => pose_of_channels(self.values(frame, v1)),
            Fixed::Rest => *rest,
            Fixed::Identity => Mat3x4::IDENTITY,
        }
    }

    /// The value channel `c` has at each end of the stored u16's range: it is monotonic in the
    /// u16, so they bound every frame's.
    fn ends(&self, c: usize) -> (f32, f32) {
        let o = self.offset.get(c).copied().unwrap_or_default();
        let s = self.scale.get(c).copied().unwrap_or_default();
        let far = if self.mask & (1 << c) != 0 {
            o + 65535.0 * s
        } else {
            o
        };
        (o, far)
    }

    /// The largest magnitude channel `c` reaches in any frame.
    fn reach(&self, c: usize) -> f64 {
        let (o, far) = self.ends(c);
        f64::from(o.abs().max(far.abs()))
    }

    /// Whether some frame can give a rotation of squared length at most 1e-24 (which
    /// [`pose_of_channels`] does not normalise in f32): every rotation channel (x, y and z in
    /// version 1, where w is derived) can come within 1e-11 of 0. Otherwise one of them stays
    /// farther from 0, and its square alone exceeds 1e-24.
    pub(crate) fn may_lose_rotation(&self, v1: bool) -> bool {
        let near_zero = |c: usize| {
            let (o, far) = self.ends(c);
            let (lo, hi) = (o.min(far), o.max(far));
            (lo <= 1e-11 && hi >= -1e-11) || lo.is_nan() || hi.is_nan()
        };
        self.fixed == Fixed::No && (3..if v1 { 6 } else { 7 }).all(near_zero)
    }

    /// `(squared stretch, squared origin)` bounds of the pose in every frame, at least what
    /// [`stretch_squared`] and [`origin_squared`] give for any of them (`rest` the bone's rest
    /// pose). A pose's 3x3 part is `R diag(s)`, `R` made of a unit quaternion (to f32
    /// rounding: its columns' lengths and angles are within 1e-5 of a rotation's), so its
    /// Gershgorin bound is within a small factor of the largest scale squared; the origin is
    /// the translation channels.
    fn most_bound(&self, rest: &Mat3x4) -> (f32, f32) {
        match self.fixed {
            Fixed::Rest => return (stretch_squared(rest), origin_squared(rest)),
            Fixed::Identity => {
                let m = Mat3x4::IDENTITY;
                return (stretch_squared(&m), origin_squared(&m));
            }
            Fixed::No => {}
        }
        let s = self.reach(7).max(self.reach(8)).max(self.reach(9));
        let t = [self.reach(0), self.reach(1), self.reach(2)];
        let o = t.iter().map(|t| t * t).sum::<f64>();
        (
            (s * s * (1.0 + 1e-3) + 1e-30) as f32,
            (o * (1.0 + 1e-5) + 1e-30) as f32,
        )
    }
}

/// A pose from its channels (translation, quaternion x y z w, scale): the quaternion made unit
/// length (where it has a length: else as [`unit_or_identity`] makes it), then the matrix of
/// `Mat3::from_quat` with its columns scaled, as
/// [`Mat3x4::from_rotation_translation_scale`] lays them out.
#[inline(always)]
pub(crate) fn pose_of_channels(v: [f32; 10]) -> Mat3x4 {
    let [tx, ty, tz, qx, qy, qz, qw, sx, sy, sz] = v;
    let length2 = squared_length([qx, qy, qz, qw]);
    if !has_direction(length2) {
        return Mat3x4::from_rotation_translation_scale(
            unit_or_identity([qx, qy, qz, qw]),
            [tx, ty, tz],
            [sx, sy, sz],
        );
    }
    let inv = length2.sqrt().recip();
    let (x, y, z, w) = (qx * inv, qy * inv, qz * inv, qw * inv);
    let (x2, y2, z2) = (x + x, y + y, z + z);
    let (xx, xy, xz) = (x * x2, x * y2, x * z2);
    let (yy, yz, zz) = (y * y2, y * z2, z * z2);
    let (wx, wy, wz) = (w * x2, w * y2, w * z2);
    Mat3x4 {
        m: [
            (1.0 - (yy + zz)) * sx,
            (xy - wz) * sy,
            (xz + wy) * sz,
            tx,
            (xy + wz) * sx,
            (1.0 - (xx + zz)) * sy,
            (yz - wx) * sz,
            ty,
            (xz - wy) * sx,
            (yz + wx) * sy,
            (1.0 - (xx + yy)) * sz,
            tz,
        ],
    }
}

/// Bones decoded together: their channels' values laid out as arrays of one quantity each, so
/// that the compiler makes the normalising and the quaternion-to-matrix arithmetic vector code.
const LANES: usize = 8;

/// The poses of a run of bones in a frame's `values`: [`PoseChannels::pose`] of each, to the
/// same bits, `LANES` bones at a time (the few left over one by one, which a skeleton of a
/// handful of bones decodes faster than a part-filled set of lanes). `channels`, `rest` and
/// `out` are as long.
#[inline]
fn decode_run(
    values: &[u8],
    v1: bool,
    channels: &[PoseChannels],
    rest: &[Mat3x4],
    out: &mut [Mat3x4],
) {
    let (mut c8, mut r8, mut o8) = (
        channels.chunks_exact(LANES),
        rest.chunks_exact(LANES),
        out.chunks_exact_mut(LANES),
    );
    for ((c8, r8), o8) in c8.by_ref().zip(r8.by_ref()).zip(o8.by_ref()) {
        let mut lanes = [[0.0f32; LANES]; 10];
        for (l, c) in (0..LANES).zip(c8) {
            let v = c.values(values, v1);
            for (lane, x) in lanes.iter_mut().zip(v) {
                lane[l] = x;
            }
        }
        let (m, direction) = poses_of_lanes(&lanes);
        for (l, ((o, c), r)) in (0..LANES).zip(o8.iter_mut().zip(c8).zip(r8)) {
            *o = match c.fixed {
                Fixed::No if direction[l] => Mat3x4 {
                    m: std::array::from_fn(|e| m[e][l]),
                },
                _ => c.pose(values, v1, r),
            };
        }
    }
    let left = c8.remainder().iter().zip(r8.remainder());
    for (o, (c, r)) in o8.into_remainder().iter_mut().zip(left) {
        *o = c.pose(values, v1, r);
    }
}

/// [`pose_of_channels`] of `LANES` poses' channels, each quantity an array over the poses, the
/// same operations in the same order; with whether each pose's rotation has a direction (where
/// it has none, its matrix here is not the pose's).
#[inline(always)]
fn poses_of_lanes(v: &[[f32; LANES]; 10]) -> ([[f32; LANES]; 12], [bool; LANES]) {
    let [tx, ty, tz, qx, qy, qz, qw, sx, sy, sz] = v;
    let mut m = [[0.0f32; LANES]; 12];
    let mut direction = [false; LANES];
    for l in 0..LANES {
        let length2 = squared_length([qx[l], qy[l], qz[l], qw[l]]);
        direction[l] = has_direction(length2);
        let inv = length2.sqrt().recip();
        let (x, y, z, w) = (qx[l] * inv, qy[l] * inv, qz[l] * inv, qw[l] * inv);
        let (x2, y2, z2) = (x + x, y + y, z + z);
        let (xx, xy, xz) = (x * x2, x * y2, x * z2);
        let (yy, yz, zz) = (y * y2, y * z2, z * z2);
        let (wx, wy, wz) = (w * x2, w * y2, w * z2);
        m[0][l] = (1.0 - (yy + zz)) * sx[l];
        m[1][l] = (xy - wz) * sy[l];
        m[2][l] = (xz + wy) * sz[l];
        m[3][l] = tx[l];
        m[4][l] = (xy + wz) * sx[l];
        m[5][l] = (1.0 - (xx + zz)) * sy[l];
        m[6][l] = (yz - wx) * sz[l];
        m[7][l] = ty[l];
        m[8][l] = (xz - wy) * sx[l];
        m[9][l] = (yz + wx) * sy[l];
        m[10][l] = (1.0 - (xx + yy)) * sz[l];
        m[11][l] = tz[l];
    }
    (m, direction)
}

/// A quaternion's squared length in f32, as decoding a frame takes it.
#[inline(always)]
pub(crate) fn squared_length([x, y, z, w]: [f32; 4]) -> f32 {
    x * x + y * y + z * z + w * w
}

/// Whether a rotation of squared length `length2` (f32) is normalised in f32 when decoded;
/// one of 1e-24 or less (or a NaN) is normalised as [`unit_or_identity`] does.
#[inline(always)]
pub(crate) fn has_direction(length2: f32) -> bool {
    length2 > 1e-24
}

/// `q` made unit length in f64; the identity where it has no direction (a length of 1e-12 or
/// less, or not finite).
pub(crate) fn unit_or_identity(q: [f32; 4]) -> Quat {
    // The square of an f32 is far inside an f64's range.
    let len = q
        .iter()
        .map(|&c| f64::from(c) * f64::from(c))
        .sum::<f64>()
        .sqrt();
    if !(len.is_finite() && len > 1e-12) {
        return Quat::IDENTITY;
    }
    let inv = 1.0 / len;
    Quat::from_xyzw(
        (f64::from(q[0]) * inv) as f32,
        (f64::from(q[1]) * inv) as f32,
        (f64::from(q[2]) * inv) as f32,
        (f64::from(q[3]) * inv) as f32,
    )
}

/// IQM version 1 stores x, y, z of a unit quaternion; w is the negative root, as the SDK's
/// `upgrade` tool, DarkPlaces and FTE complete it.
pub(crate) fn complete_w(x: f32, y: f32, z: f32) -> f32 {
    let (x, y, z) = (f64::from(x), f64::from(y), f64::from(z));
    -(1.0 - (x * x + y * y + z * z)).max(0.0).sqrt() as f32
}

/// An IQM's poses: frame 0 (the rest pose) as matrices, every later frame as the file stores
/// it, each pose's channels 2-byte values scaled and offset ([`PoseChannels`]), read from the
/// file the model keeps. A pose is decoded when asked, to the bits the reader's decoding gave.
#[derive(Clone)]
pub struct QuantisedPoses {
    /// Frame 0, one matrix per bone.
    first: Vec<Mat3x4>,
    /// Frame 0 split for blending, one per bone: the same every blend with the rest pose,
    /// where a frame decoded is one more step than the matrices it once was.
    first_parts: Vec<Decomposed>,
    /// One per bone.
    channels: Vec<PoseChannels>,
    /// The file: `frames` frames of `step` bytes from byte `start`, the model's frames 1 on.
    data: Arc<[u8]>,
    start: usize,
    step: usize,
    frames: usize,
    v1: bool,
}

impl std::fmt::Debug for QuantisedPoses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuantisedPoses")
            .field("bones", &self.first.len())
            .field("frames", &self.frames.saturating_add(1))
            .field("version", &if self.v1 { 1 } else { 2 })
            .finish_non_exhaustive()
    }
}

impl QuantisedPoses {
    /// Frame 0's poses and each bone's channels (as many of both), over `frames` frames of
    /// `step` bytes at `start` in `data` (all of which lie within it); None otherwise.
    pub(crate) fn new(
        first: Vec<Mat3x4>,
        channels: Vec<PoseChannels>,
        data: Arc<[u8]>,
        (start, step, frames): (usize, usize, usize),
        v1: bool,
    ) -> Option<QuantisedPoses> {
        let end = start.checked_add(step.checked_mul(frames)?)?;
        let fits = end <= data.len()
            && first.len() == channels.len()
            && channels.iter().all(|c| {
                let stored = (c.first as usize).saturating_add(c.mask.count_ones() as usize);
                c.fixed != Fixed::No || stored.saturating_mul(2) <= step
            });
        fits.then(|| QuantisedPoses {
            first_parts: first.iter().map(Mat3x4::decompose).collect(),
            first,
            channels,
            data,
            start,
            step,
            frames,
            v1,
        })
    }

    fn bones(&self) -> usize {
        self.first.len()
    }

    /// Frame 0's poses split for blending ([`Mat3x4::decompose`] of each).
    pub(crate) fn rest_parts(&self) -> &[Decomposed] {
        &self.first_parts
    }

    /// The poses of frame `f` (not 0) into `out`, one per bone; false, leaving `out` alone,
    /// when the frame or the length is out of range.
    pub(crate) fn write_frame(&self, f: usize, out: &mut [Mat3x4]) -> bool {
        match self.frame_values(f) {
            Some(values) if out.len() == self.bones() => {
                decode_run(values, self.v1, &self.channels, &self.first, out);
                true
            }
            _ => false,
        }
    }

    fn len(&self) -> usize {
        self.bones().saturating_mul(self.frames.saturating_add(1))
    }

    /// The values of model frame `f`: None for frame 0, which is kept as matrices, and for a
    /// frame past the last.
    #[inline]
    fn frame_values(&self, f: usize) -> Option<&[u8]> {
        if f == 0 || f > self.frames {
            return None;
        }
        let at = self
            .start
            .saturating_add(f.saturating_sub(1).saturating_mul(self.step));
        self.data.get(at..at.saturating_add(self.step))
    }

    /// Bone `b`'s pose in a frame whose values are `values` (None: frame 0).
    #[inline(always)]
    fn pose_in(&self, values: Option<&[u8]>, b: usize) -> Option<Mat3x4> {
        let rest = self.first.get(b)?;
        Some(match values {
            None => *rest,
            Some(v) => self.channels.get(b)?.pose(v, self.v1, rest),
        })
    }

    /// Bone `b`'s pose in frame `f`.
    #[inline]
    pub(crate) fn pose(&self, f: usize, b: usize) -> Option<Mat3x4> {
        if f > self.frames {
            return None;
        }
        self.pose_in(self.frame_values(f), b)
    }

    fn get(&self, i: usize) -> Option<Mat3x4> {
        let nb = self.bones();
        self.pose(i.checked_div(nb)?, i.checked_rem(nb)?)
    }

    fn range(&self, from: usize, end: usize) -> Option<Cow<'_, [Mat3x4]>> {
        if end > self.len() || from > end {
            return None;
        }
        if from == 0 && end == self.bones() {
            return Some(Cow::Borrowed(&self.first));
        }
        let mut out = vec![Mat3x4::IDENTITY; end.saturating_sub(from)];
        self.write(from, end, &mut out);
        Some(Cow::Owned(out))
    }

    /// Poses `[from, end)` into `out`, a frame's run of bones at a time.
    fn write(&self, from: usize, end: usize, out: &mut [Mat3x4]) -> bool {
        let nb = self.bones();
        if end > self.len() || nb == 0 {
            return end <= self.len() && out.is_empty();
        }
        let mut i = from;
        let mut out = out;
        while !out.is_empty() {
            let (f, b) = (i / nb, i % nb);
            let n = nb.saturating_sub(b).min(out.len());
            let (head, rest) = out.split_at_mut(n);
            let bones = b..b.saturating_add(n);
            let (Some(first), Some(channels)) =
                (self.first.get(bones.clone()), self.channels.get(bones))
            else {
                return false;
            };
            match self.frame_values(f) {
                None => head.copy_from_slice(first),
                Some(values) => decode_run(values, self.v1, channels, first, head),
            }
            out = rest;
            i = i.saturating_add(n);
        }
        true
    }

    /// Keeps the bones `keep` accepts.
    fn retain_bones(&mut self, keep: &[bool]) {
        let kept = |b: usize| keep.get(b).copied().unwrap_or_default();
        let mut b = 0;
        self.first.retain(|_| {
            b += 1;
            kept(b - 1)
        });
        let mut b = 0;
        self.channels.retain(|_| {
            b += 1;
            kept(b - 1)
        });
        let mut b = 0;
        self.first_parts.retain(|_| {
            b += 1;
            kept(b - 1)
        });
    }

    /// Bone `new` takes bone `order[new]`'s poses.
    fn permute_bones(&mut self, order: &[u32]) {
        let first = &self.first;
        let channels = &self.channels;
        let (f, c): (Vec<Mat3x4>, Vec<PoseChannels>) = order
            .iter()
            .filter_map(|&old| Some((*first.get(old as usize)?, *channels.get(old as usize)?)))
            .unzip();
        self.first_parts = f.iter().map(Mat3x4::decompose).collect();
        self.first = f;
        self.channels = c;
    }

    /// Per bone, `(squared stretch, squared origin)` bounds over every frame, at least what
    /// [`Poses::check_chained`] finds scanning the decoded poses: frame 0's own, and the
    /// channels' ([`PoseChannels::most_bound`]).
    fn most_bounds(&self) -> Vec<(f32, f32)> {
        self.first
            .iter()
            .zip(&self.channels)
            .map(|(m, c)| {
                let (s, o) = (stretch_squared(m), origin_squared(m));
                // A NaN (never in a checked model) counts as out of range.
                let (s, o) = (
                    if s.is_nan() { f32::INFINITY } else { s },
                    if o.is_nan() { f32::INFINITY } else { o },
                );
                if self.frames == 0 {
                    return (s, o);
                }
                let (cs, co) = c.most_bound(m);
                (s.max(cs), o.max(co))
            })
            .collect()
    }

    /// [`scan_most`] over every frame, decoded.
    fn scan_most(&self, most: &mut [(f32, f32)]) {
        scan_most(&self.first, most, |m| *m);
        let nb = self.bones();
        let mut frame = vec![Mat3x4::IDENTITY; nb];
        for f in 1..=self.frames {
            self.write(
                f.saturating_mul(nb),
                f.saturating_add(1).saturating_mul(nb),
                &mut frame,
            );
            scan_most(&frame, most, |m| *m);
        }
    }

    /// Bytes of heap, less the file.
    fn heap_bytes(&self) -> usize {
        size_of_val(self.first.as_slice())
            + size_of_val(self.first_parts.as_slice())
            + size_of_val(self.channels.as_slice())
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

    /// Two bones over three frames of channels, the second bone's scale and rotation moving.
    fn quantised() -> QuantisedPoses {
        let moving = PoseChannels::new(
            0,
            0b00_1101_0000,
            Fixed::No,
            [1.0, -2.0, 0.5, 0.0, -1.0, 0.0, -1.0, 0.25, 1.0, 1.0],
            [0.0, 0.0, 0.0, 0.0, 3e-5, 0.0, 3e-5, 4e-5, 0.0, 0.0],
        );
        let still = PoseChannels::new(
            3,
            0,
            Fixed::No,
            [3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0],
            [0.0; 10],
        );
        let values: Vec<u8> = [[0u16, 0, 0], [65535, 20000, 65535], [33000, 33000, 1]]
            .iter()
            .flat_map(|f| f.iter().flat_map(|v| v.to_le_bytes()))
            .collect();
        let mut data = vec![0xee; 5];
        data.extend(&values);
        QuantisedPoses::new(
            vec![Mat3x4::IDENTITY, Mat3x4::from_translation([0.0, 1.0, 0.0])],
            vec![still, moving],
            data.into(),
            (5, 6, 3),
            false,
        )
        .unwrap()
    }

    #[test]
    fn quantised_poses_are_decoded_alike_wherever_read() {
        let q = quantised();
        let poses = Poses::Quantised(q.clone());
        assert_eq!(poses.len(), 8);
        let all = poses.to_matrices();
        assert_eq!(all.len(), 8);
        assert_eq!(all[1], Mat3x4::from_translation([0.0, 1.0, 0.0]));
        // Frame 2 bone 1: w = -1 + 20000 * 3e-5, y = -1 + 65535 * 3e-5, x scale 0.25 + 65535 *
        // 4e-5; the quaternion made unit length.
        let v = q.channels[1].values(q.frame_values(2).unwrap(), false);
        assert_eq!(v[6], -1.0 + 20000.0 * 3e-5);
        assert_eq!(all[5], pose_of_channels(v));
        for (i, &m) in all.iter().enumerate() {
            assert_eq!(poses.get(i), Some(m));
            let mut one = [Mat3x4::IDENTITY];
            assert!(poses.write(i, &mut one));
            assert_eq!(one[0], m);
        }
        assert_eq!(poses.get(8), None);
        assert_eq!(poses.range(3, 4).as_deref(), Some(&all[3..7]));
        assert!(matches!(poses.range(0, 2), Some(Cow::Borrowed(_))));
        assert_eq!(poses.range(5, 4), None);
        assert_eq!(poses, Poses::Matrices(all.clone()));

        // Bones reordered or removed keep the quantised form and its bits.
        let mut swapped = poses.clone();
        swapped.permute_bones(&[1, 0]);
        assert!(matches!(swapped, Poses::Quantised(_)));
        let want: Vec<Mat3x4> = all.chunks(2).flat_map(|f| [f[1], f[0]]).collect();
        assert_eq!(swapped.to_matrices(), want);
        let mut kept = poses.clone();
        kept.retain_bones(2, &[false, true]);
        assert!(matches!(kept, Poses::Quantised(_)));
        let want: Vec<Mat3x4> = all.chunks(2).map(|f| f[1]).collect();
        assert_eq!(kept.to_matrices(), want);
        let mut by_index = poses.clone();
        by_index.retain_indices(|i| i % 2 == 1);
        assert_eq!(by_index, Poses::Matrices(want));
    }

    /// `bones` poses of random channels over `frames` file frames: some fixed to the rest
    /// pose or the identity, some with a rotation of no direction, the rest random.
    fn random_quantised(bones: usize, frames: usize, v1: bool, seed: u64) -> QuantisedPoses {
        let mut state = seed;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut first_value = 0u32;
        let channels: Vec<PoseChannels> = (0..bones)
            .map(|b| {
                let (mut offset, mut scale) = ([0.0f32; 10], [0.0f32; 10]);
                for k in 0..10 {
                    offset[k] = (next() % 2001) as f32 / 1000.0 - 1.0;
                    scale[k] = ((next() % 2001) as f32 / 1000.0 - 1.0) / 30000.0;
                }
                let mut mask = (next() & 0x3ff) as u16;
                if b % 7 == 3 {
                    // No rotation stored and none offset: decoded as the identity rotation.
                    mask &= !0b111_1000;
                    offset[3..7].fill(0.0);
                }
                let fixed = match b % 5 {
                    1 => Fixed::Rest,
                    4 if b % 3 == 0 => Fixed::Identity,
                    _ => Fixed::No,
                };
                let c = PoseChannels::new(first_value, mask, fixed, offset, scale);
                first_value += mask.count_ones();
                c
            })
            .collect();
        let step = first_value as usize * 2;
        let data: Vec<u8> = (0..step * frames + 3).map(|_| next() as u8).collect();
        let first = (0..bones)
            .map(|b| Mat3x4::from_translation([b as f32, 0.5, -1.0]))
            .collect();
        QuantisedPoses::new(first, channels, data.into(), (3, step, frames), v1).unwrap()
    }

    #[test]
    fn quantised_runs_decode_to_the_bits_of_each_pose_alone() {
        let bits = |m: Mat3x4| m.m.map(f32::to_bits);
        // Runs of bones longer and shorter than the lanes, starting anywhere in a frame.
        for (bones, v1) in [(19, false), (19, true), (8, false), (3, true)] {
            let q = random_quantised(bones, 4, v1, 0x9e37_79b9_7f4a_7c15 ^ bones as u64);
            assert!(q.channels.iter().any(|c| c.fixed == Fixed::Rest));
            let quiet = q
                .channels
                .iter()
                .filter(|c| c.fixed == Fixed::No && c.mask & 0b111_1000 == 0)
                .count();
            assert!(quiet > 0 || bones < 4);
            let poses = Poses::Quantised(q.clone());
            let all = poses.to_matrices();
            assert_eq!(all.len(), bones * 5);
            for (i, &m) in all.iter().enumerate() {
                let (f, b) = (i / bones, i % bones);
                let alone = match q.frame_values(f) {
                    None => q.first[b],
                    Some(values) => q.channels[b].pose(values, v1, &q.first[b]),
                };
                assert_eq!(bits(m), bits(alone), "frame {f} bone {b}");
                assert_eq!(poses.get(i).map(bits), Some(bits(m)));
            }
            for from in [1, bones + 2, 2 * bones - 1] {
                let mut out = vec![Mat3x4::IDENTITY; 2 * bones];
                assert!(poses.write(from, &mut out));
                let want: Vec<_> = all[from..from + 2 * bones]
                    .iter()
                    .map(|&m| bits(m))
                    .collect();
                assert_eq!(out.into_iter().map(bits).collect::<Vec<_>>(), want);
            }
            let mut frame = vec![Mat3x4::IDENTITY; bones];
            assert!(q.write_frame(3, &mut frame));
            assert_eq!(frame, all[3 * bones..4 * bones]);
            assert!(!q.write_frame(0, &mut frame) && !q.write_frame(5, &mut frame));
            assert!(!q.write_frame(1, &mut frame[1..]));
        }
    }

    #[test]
    fn quantised_blends_are_the_blends_of_their_matrices() {
        let q = random_quantised(19, 4, false, 0x5851_f42d_4c95_7f2d);
        let mut parts = ModelParts::new(crate::format::Format::Iqm);
        parts.bones = (0..19)
            .map(|i| Bone {
                name: Name::from(format!("b{i}").as_str()),
                parent: if i % 4 == 0 { -1 } else { i - 1 },
                flags: 0,
            })
            .collect();
        parts.frames = (0..5).map(|f| Frame::named(&format!("f{f}"))).collect();
        let mut matrices = parts.clone();
        matrices.poses = Poses::Matrices(Poses::Quantised(q.clone()).to_matrices());
        parts.poses = Poses::Quantised(q);
        let (quantised, matrices) = (
            Model::from_parts(parts).unwrap(),
            Model::from_parts(matrices).unwrap(),
        );
        assert!(matches!(quantised.skeleton().poses(), Poses::Quantised(_)));
        let blend = |frame: u32, weight: f32| crate::pose::FrameBlend { frame, weight };
        for blends in [
            vec![blend(0, 0.5), blend(1, 0.5)],
            vec![blend(2, 0.25), blend(0, 0.75)],
            vec![blend(3, 1.0), blend(4, 2.0), blend(1, 0.5)],
            vec![blend(4, 1.0)],
        ] {
            let (mut a, mut b) = ([Mat3x4::IDENTITY; 19], [Mat3x4::IDENTITY; 19]);
            quantised.pose_frames(&blends, None, &mut a).unwrap();
            matrices.pose_frames(&blends, None, &mut b).unwrap();
            let bits = |m: &[Mat3x4]| m.iter().map(|m| m.m.map(f32::to_bits)).collect::<Vec<_>>();
            assert_eq!(bits(&a), bits(&b), "{blends:?}");
        }
    }

    #[test]
    fn quantised_bounds_hold_every_frame_the_channels_can_give() {
        // Channels at each end of their range, scaled and not, give poses within the bound.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..2000 {
            let (mut offset, mut scale) = ([0.0; 10], [0.0; 10]);
            for k in 0..10 {
                let big = [1e-3f32, 1.0, 40.0, 3e4][(next() % 4) as usize];
                offset[k] = (next() % 2001) as f32 / 1000.0 * big - big;
                scale[k] = ((next() % 2001) as f32 / 1000.0 - 1.0) * big / 65535.0;
            }
            let c = PoseChannels::new(0, (next() & 0x3ff) as u16, Fixed::No, offset, scale);
            let (s, o) = c.most_bound(&Mat3x4::IDENTITY);
            for _ in 0..8 {
                let frame: Vec<u8> = (0..10)
                    .flat_map(|_| {
                        [0u16, 65535, (next() & 0xffff) as u16][(next() % 3) as usize].to_le_bytes()
                    })
                    .collect();
                let m = c.pose(&frame, next() % 2 == 0, &Mat3x4::IDENTITY);
                assert!(stretch_squared(&m) <= s, "{c:?}: {m:?} stretches past {s}");
                assert!(origin_squared(&m) <= o, "{c:?}: {m:?} reaches past {o}");
            }
        }
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
