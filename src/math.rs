//! The 3x4 affine matrix every format's poses become, and the conversions blending needs.

use glam::{Mat3, Quat, Vec3};

/// The largest magnitude a model may hold in a model-space pose (of any frame, or of any blend
/// of its frames), an inverse bind matrix or an influence, and a caller may give as a root
/// matrix. Posing and skinning multiply at most three such values (a root, a pose or an inverse
/// bind, an influence) and sum a handful of those products: (3 x 1e9)^3 is about 3e28, ten
/// orders of magnitude below `f32::MAX` (3.4e38), room for any sum over influences and its
/// rounding. A bound of 1e18 would let two of them multiply to 1e36 and a third overflow. Real
/// models stay below 1e5 units.
pub const MAX_MAGNITUDE: f32 = 1e9;

/// Whether `v` is finite and within [`MAX_MAGNITUDE`].
#[inline]
pub fn in_range(v: f64) -> bool {
    v.abs() <= f64::from(MAX_MAGNITUDE)
}

/// `a * b` for the rows of two 3x4 affine matrices (as [`Mat3x4`] holds them), in any float
/// type: f32 for posing, f64 where a check must not overflow.
#[inline]
pub(crate) fn mul_rows<T>(a: &[T; 12], b: &[T; 12]) -> [T; 12]
where
    T: Copy + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11] = *a;
    let [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11] = *b;
    [
        a0 * b0 + a1 * b4 + a2 * b8,
        a0 * b1 + a1 * b5 + a2 * b9,
        a0 * b2 + a1 * b6 + a2 * b10,
        a0 * b3 + a1 * b7 + a2 * b11 + a3,
        a4 * b0 + a5 * b4 + a6 * b8,
        a4 * b1 + a5 * b5 + a6 * b9,
        a4 * b2 + a5 * b6 + a6 * b10,
        a4 * b3 + a5 * b7 + a6 * b11 + a7,
        a8 * b0 + a9 * b4 + a10 * b8,
        a8 * b1 + a9 * b5 + a10 * b9,
        a8 * b2 + a9 * b6 + a10 * b10,
        a8 * b3 + a9 * b7 + a10 * b11 + a11,
    ]
}

/// Rows of a 3x4 affine matrix acting on column vectors (DPM's layout):
/// `x' = m[0]x + m[1]y + m[2]z + m[3]`, `y' = m[4]x + ... + m[7]`, `z' = m[8]x + ... + m[11]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mat3x4 {
    pub m: [f32; 12],
}

impl Default for Mat3x4 {
    fn default() -> Self {
        Mat3x4::IDENTITY
    }
}

impl Mat3x4 {
    pub const IDENTITY: Mat3x4 = Mat3x4 {
        m: [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
    };

    pub fn from_translation(t: [f32; 3]) -> Mat3x4 {
        let mut r = Mat3x4::IDENTITY;
        r.m[3] = t[0];
        r.m[7] = t[1];
        r.m[11] = t[2];
        r
    }

    /// `T(t) * R(q) * S(s)`: the textbook rotation of a unit quaternion (x, y, z, w).
    pub fn from_rotation_translation_scale(q: Quat, t: [f32; 3], s: [f32; 3]) -> Mat3x4 {
        let r = Mat3::from_quat(q);
        let (c0, c1, c2) = (r.x_axis * s[0], r.y_axis * s[1], r.z_axis * s[2]);
        Mat3x4 {
            m: [
                c0.x, c1.x, c2.x, t[0], c0.y, c1.y, c2.y, t[1], c0.z, c1.z, c2.z, t[2],
            ],
        }
    }

    pub fn from_rotation_translation(q: Quat, t: [f32; 3]) -> Mat3x4 {
        Mat3x4::from_rotation_translation_scale(q, t, [1.0; 3])
    }

    pub fn translation(&self) -> [f32; 3] {
        [self.m[3], self.m[7], self.m[11]]
    }

    /// Column `j` of the 3x3 part.
    fn column(&self, j: usize) -> Vec3 {
        Vec3::new(self.m[j], self.m[4 + j], self.m[8 + j])
    }

    /// `self * other`: apply `other` first, as a parent concatenated with a child.
    #[inline]
    pub fn mul(&self, other: &Mat3x4) -> Mat3x4 {
        Mat3x4 {
            m: mul_rows(&self.m, &other.m),
        }
    }

    #[inline]
    pub fn transform_point(&self, p: [f32; 3]) -> [f32; 3] {
        let m = &self.m;
        [
            m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + m[3],
            m[4] * p[0] + m[5] * p[1] + m[6] * p[2] + m[7],
            m[8] * p[0] + m[9] * p[1] + m[10] * p[2] + m[11],
        ]
    }

    #[inline]
    pub fn transform_vector(&self, v: [f32; 3]) -> [f32; 3] {
        let m = &self.m;
        [
            m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
            m[4] * v[0] + m[5] * v[1] + m[6] * v[2],
            m[8] * v[0] + m[9] * v[1] + m[10] * v[2],
        ]
    }

    /// Splits into rotation, translation and per-axis scale, so poses can be blended.
    /// A mirroring matrix carries its reflection in a negative x scale; a degenerate axis
    /// gets scale 0 and the rotation of what remains.
    pub fn decompose(&self) -> Decomposed {
        let [m0, m1, m2, _, m4, m5, m6, _, m8, m9, m10, _] = self.m;
        let (x, y, z) = (
            Vec3::new(m0, m4, m8),
            Vec3::new(m1, m5, m9),
            Vec3::new(m2, m6, m10),
        );
        let mut scale = [robust_length(x), robust_length(y), robust_length(z)];
        let mut ux = unit(x, scale[0], Vec3::X);
        let (uy, uz) = (unit(y, scale[1], Vec3::Y), unit(z, scale[2], Vec3::Z));
        // A reflection is carried by a negative x scale, leaving a proper rotation.
        if ux.dot(uy.cross(uz)) < 0.0 {
            scale[0] = -scale[0];
            ux = -ux;
        }
        let rotation = quat_from_axes(ux, uy, uz);
        Decomposed {
            rotation,
            translation: self.translation(),
            scale,
        }
    }

    /// The inverse of an affine matrix; `None` when it is singular.
    pub fn inverse(&self) -> Option<Mat3x4> {
        let r = Mat3::from_cols(self.column(0), self.column(1), self.column(2));
        let det = r.determinant();
        if det == 0.0 || !det.is_finite() {
            return None;
        }
        let inv = r.inverse();
        let t = -(inv * Vec3::from(self.translation()));
        // A determinant near zero gives an inverse beyond f32: that is no inverse either.
        let m = Mat3x4 {
            m: [
                inv.x_axis.x,
                inv.y_axis.x,
                inv.z_axis.x,
                t.x,
                inv.x_axis.y,
                inv.y_axis.y,
                inv.z_axis.y,
                t.y,
                inv.x_axis.z,
                inv.y_axis.z,
                inv.z_axis.z,
                t.z,
            ],
        };
        m.is_finite().then_some(m)
    }

    pub fn is_finite(&self) -> bool {
        self.m.iter().all(|v| v.is_finite())
    }

    /// The first element that is not finite or is beyond [`MAX_MAGNITUDE`], if any.
    pub fn first_out_of_range(&self) -> Option<f32> {
        self.m.iter().copied().find(|&v| !in_range(v.into()))
    }
}

/// Squared lengths in this range are exact enough in f32; outside it squaring overflows
/// (above 1.8e19) or underflows (below 1e-19), so the vector is scaled first.
const SAFE_SQUARED: std::ops::Range<f32> = 1e-30..1e30;

/// The length of `v`, for any finite `v`.
fn robust_length(v: Vec3) -> f32 {
    let sq = v.length_squared();
    if SAFE_SQUARED.contains(&sq) {
        return sq.sqrt();
    }
    let big = v.abs().max_element();
    if big == 0.0 || !big.is_finite() {
        big
    } else {
        big * (v / big).length()
    }
}

/// `v` scaled to unit length, or `fallback` for a zero vector.
fn unit(v: Vec3, length: f32, fallback: Vec3) -> Vec3 {
    if length == 0.0 || !length.is_finite() {
        return fallback;
    }
    let w = v / length;
    // Division by a tiny length can still leave w off unit length by rounding; one more pass fixes it.
    if SAFE_SQUARED.contains(&v.length_squared()) {
        w
    } else {
        w / w.length()
    }
}

/// The unit quaternion of a rotation given by its column axes (Shepperd's method: the largest of
/// the four candidates keeps the division well away from zero).
fn quat_from_axes(x: Vec3, y: Vec3, z: Vec3) -> Quat {
    let (m00, m10, m20) = (x.x, x.y, x.z);
    let (m01, m11, m21) = (y.x, y.y, y.z);
    let (m02, m12, m22) = (z.x, z.y, z.z);
    let q = if m22 <= 0.0 {
        if m00 >= m11 {
            let t = 1.0 + m00 - m11 - m22;
            Quat::from_xyzw(t, m10 + m01, m02 + m20, m21 - m12)
        } else {
            let t = 1.0 - m00 + m11 - m22;
            Quat::from_xyzw(m10 + m01, t, m21 + m12, m02 - m20)
        }
    } else if m00 <= -m11 {
        let t = 1.0 - m00 - m11 + m22;
        Quat::from_xyzw(m02 + m20, m21 + m12, t, m10 - m01)
    } else {
        let t = 1.0 + m00 + m11 + m22;
        Quat::from_xyzw(m21 - m12, m02 - m20, m10 - m01, t)
    };
    let len = q.length();
    if len > 0.0 && len.is_finite() {
        q / len
    } else {
        Quat::IDENTITY
    }
}

/// A pose split into parts that blend linearly (translation, scale) or on the sphere (rotation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decomposed {
    pub rotation: Quat,
    pub translation: [f32; 3],
    pub scale: [f32; 3],
}

impl Decomposed {
    pub fn compose(&self) -> Mat3x4 {
        Mat3x4::from_rotation_translation_scale(self.rotation, self.translation, self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &Mat3x4, b: &Mat3x4, eps: f32) -> bool {
        a.m.iter().zip(&b.m).all(|(x, y)| (x - y).abs() <= eps)
    }

    #[test]
    fn mul_applies_right_operand_first() {
        let t = Mat3x4::from_translation([1.0, 2.0, 3.0]);
        let r = Mat3x4::from_rotation_translation(
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            [0.0; 3],
        );
        // Rotating (1,0,0) by 90 degrees about z gives (0,1,0); then translate.
        let p = t.mul(&r).transform_point([1.0, 0.0, 0.0]);
        assert!(
            (p[0] - 1.0).abs() < 1e-6 && (p[1] - 3.0).abs() < 1e-6 && (p[2] - 3.0).abs() < 1e-6
        );
    }

    #[test]
    fn decompose_round_trips_rotation_scale_and_mirror() {
        let q = Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 0.7);
        for s in [[1.0, 1.0, 1.0], [2.0, 0.5, 3.0], [-1.5, 1.0, 1.0]] {
            let m = Mat3x4::from_rotation_translation_scale(q, [4.0, -5.0, 6.0], s);
            let d = m.decompose();
            assert!(close(&d.compose(), &m, 1e-5), "{s:?}");
        }
    }

    #[test]
    fn decompose_keeps_huge_and_tiny_scales() {
        for s in [1e30f32, 1e-30] {
            let m =
                Mat3x4::from_rotation_translation_scale(Quat::IDENTITY, [0.0, 0.0, 10.0], [s; 3]);
            let d = m.decompose();
            assert!(
                d.scale.iter().all(|&x| (x / s - 1.0).abs() < 1e-6),
                "{s}: {:?}",
                d.scale
            );
            assert!((d.rotation.w.abs() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn inverse_undoes() {
        let q = Quat::from_axis_angle(Vec3::new(0.0, 1.0, 1.0).normalize(), 1.1);
        let m = Mat3x4::from_rotation_translation_scale(q, [1.0, 2.0, 3.0], [2.0, 2.0, 2.0]);
        let i = m.inverse().unwrap();
        assert!(close(&m.mul(&i), &Mat3x4::IDENTITY, 1e-5));
        let zero = Mat3x4 { m: [0.0; 12] };
        assert!(zero.inverse().is_none());
        // A determinant that f32 holds, an inverse that it does not.
        let mut thin = Mat3x4::IDENTITY;
        thin.m[0] = 1e-40;
        assert!(thin.inverse().is_none());
    }
}
