//! How each format's coordinates map onto glTF's: +Y up, right-handed, the front facing +Z and
//! the model's left along +X. The mapping is a signed permutation of the axes (a rotation, or a
//! reflection for the left-handed Sims), applied to the data itself so that bones and animations
//! come out clean, then multiplied by the caller's scale.

use glam::Quat;

use crate::format::Format;
use crate::math::{Decomposed, Mat3x4};

/// A signed permutation of the axes: glTF axis `i` takes `sign[i] * native[from[i]]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axes {
    pub from: [usize; 3],
    pub sign: [f32; 3],
}

impl Axes {
    pub const IDENTITY: Axes = Axes {
        from: [0, 1, 2],
        sign: [1.0, 1.0, 1.0],
    };

    /// The mapping for a model of `format`: Quake's formats (DPM, SKM/SKP) are Z-up with the
    /// front along +X and the left along +Y; the Sims are Y-up, left-handed, the front along +Z
    /// and the left along -X (checked on the retail adult skeleton: toes at +Z of the feet,
    /// `L_LEG` at -X); MM2 faces -Z in its right-handed Y-up frame (the Blender importer's
    /// `(-x, z, y)` followed by Blender's own glTF export); DMF is drawn with three.js, whose
    /// frame is glTF's.
    pub fn for_format(format: Format) -> Axes {
        match format {
            Format::Dpm | Format::Skm | Format::Skp | Format::Iqm => Axes {
                from: [1, 2, 0],
                sign: [1.0, 1.0, 1.0],
            },
            Format::SimsSkn
            | Format::SimsBmf
            | Format::SimsMsh
            | Format::SimsCmx
            | Format::SimsBcf => Axes {
                from: [0, 1, 2],
                sign: [-1.0, 1.0, 1.0],
            },
            Format::Mm2Skel | Format::Mm2Mod => Axes {
                from: [0, 1, 2],
                sign: [-1.0, 1.0, -1.0],
            },
            _ => Axes::IDENTITY,
        }
    }

    /// +1 for a rotation, -1 for a reflection (which reverses triangle winding).
    pub fn determinant(&self) -> f32 {
        // The parity of the permutation times the signs.
        let [a, b, _] = self.from;
        let even = matches!((a, b), (0, 1) | (1, 2) | (2, 0));
        let parity = if even { 1.0 } else { -1.0 };
        parity * self.sign[0] * self.sign[1] * self.sign[2]
    }

    pub fn vector(&self, v: [f32; 3]) -> [f32; 3] {
        let [f0, f1, f2] = self.from;
        [
            self.sign[0] * v[f0],
            self.sign[1] * v[f1],
            self.sign[2] * v[f2],
        ]
    }

    /// The mapping as a matrix, times `scale`.
    pub fn matrix(&self, scale: f32) -> Mat3x4 {
        let mut m = [0.0f32; 12];
        for (i, (&f, &s)) in self.from.iter().zip(&self.sign).enumerate() {
            m[i * 4 + f] = s * scale;
        }
        Mat3x4 { m }
    }

    /// Its inverse, times `1 / scale`.
    pub fn inverse_matrix(&self, scale: f32) -> Mat3x4 {
        let mut m = [0.0f32; 12];
        for (i, (&f, &s)) in self.from.iter().zip(&self.sign).enumerate() {
            m[f * 4 + i] = s / scale;
        }
        Mat3x4 { m }
    }

    /// A rotation seen in glTF's frame: `C R C^T` is the quaternion whose vector part is
    /// mapped and, for a reflection, negated.
    pub fn rotation(&self, q: [f32; 4]) -> [f32; 4] {
        let [x, y, z] = self.vector([q[0], q[1], q[2]]);
        let d = self.determinant();
        [d * x, d * y, d * z, q[3]]
    }

    /// Per-axis scale factors follow their axes, without signs.
    pub fn scale(&self, s: [f32; 3]) -> [f32; 3] {
        let [f0, f1, f2] = self.from;
        [s[f0], s[f1], s[f2]]
    }

    /// In words, for `extras` and the docs.
    pub fn describe(&self) -> String {
        let names = ["x", "y", "z"];
        let part = |i: usize| {
            let sign = if self.sign[i] < 0.0 { "-" } else { "" };
            format!("{sign}{}", names[self.from[i]])
        };
        format!("({}, {}, {})", part(0), part(1), part(2))
    }
}

/// A native affine matrix (a pose) seen in glTF's frame: `S M S^-1` with `S` the scaled mapping.
pub fn conjugate(axes: &Axes, scale: f32, m: &Mat3x4) -> Mat3x4 {
    axes.matrix(scale).mul(m).mul(&axes.inverse_matrix(scale))
}

/// A pose as glTF writes it: translation, unit rotation, scale.
#[derive(Clone, Copy, PartialEq)]
pub struct Trs {
    pub t: [f32; 3],
    pub r: [f32; 4],
    pub s: [f32; 3],
}

impl Trs {
    /// The matrix a glTF reader builds from it.
    pub fn matrix(&self) -> Mat3x4 {
        Mat3x4::from_rotation_translation_scale(Quat::from_array(self.r), self.t, self.s)
    }
}

/// `local` seen in glTF's frame, split into TRS.
pub fn trs(axes: &Axes, scale: f32, local: &Mat3x4) -> Trs {
    let Decomposed {
        rotation,
        translation,
        scale: s,
    } = conjugate(axes, scale, local).decompose();
    Trs {
        t: translation,
        r: unit_quat(rotation).to_array(),
        s,
    }
}

/// Normalised in f64, so that validators' unit-length checks hold to the last bit they look at.
pub fn unit_quat(q: Quat) -> Quat {
    let v = q.to_array().map(f64::from);
    let len = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if len > 0.0 && len.is_finite() {
        let [x, y, z, w] = v.map(|c| (c / len) as f32);
        Quat::from_xyzw(x, y, z, w)
    } else {
        Quat::IDENTITY
    }
}

/// A unit quaternion, kept on the hemisphere of `previous` (so that LINEAR keys take the short way).
pub fn same_hemisphere(q: Quat, previous: Option<Quat>) -> Quat {
    match previous {
        Some(p) if p.dot(q) < 0.0 => -q,
        _ => q,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quake_front_left_and_up_land_on_gltf_front_left_and_up() {
        let a = Axes::for_format(Format::Dpm);
        assert_eq!(a.vector([1.0, 0.0, 0.0]), [0.0, 0.0, 1.0]);
        assert_eq!(a.vector([0.0, 1.0, 0.0]), [1.0, 0.0, 0.0]);
        assert_eq!(a.vector([0.0, 0.0, 1.0]), [0.0, 1.0, 0.0]);
        assert_eq!(a.determinant(), 1.0);
        assert_eq!(a.describe(), "(y, z, x)");
    }

    #[test]
    fn sims_mirror_is_a_reflection() {
        let a = Axes::for_format(Format::SimsCmx);
        assert_eq!(a.determinant(), -1.0);
        assert_eq!(a.vector([-0.24, 3.0, 0.35]), [0.24, 3.0, 0.35]);
    }

    #[test]
    fn matrices_and_quaternions_agree() {
        for format in [Format::Dpm, Format::SimsCmx, Format::Mm2Skel, Format::Dmf] {
            let a = Axes::for_format(format);
            let q = Quat::from_axis_angle(glam::Vec3::new(0.3, -0.5, 0.8).normalize(), 0.9);
            let m = Mat3x4::from_rotation_translation(q, [1.0, 2.0, 3.0]);
            let seen = conjugate(&a, 2.0, &m);
            let expect = Mat3x4::from_rotation_translation(
                Quat::from_array(a.rotation(q.to_array())),
                a.vector([2.0, 4.0, 6.0]),
            );
            for (x, y) in seen.m.iter().zip(&expect.m) {
                assert!((x - y).abs() < 1e-5, "{format:?}: {seen:?} vs {expect:?}");
            }
            let p = [0.5, -1.5, 2.5];
            let back = a
                .inverse_matrix(2.0)
                .transform_point(a.matrix(2.0).transform_point(p));
            assert_eq!(back, p, "{format:?}");
        }
    }
}
