//! Influences in their joints' bind space, as an IQM load makes one for every weighted slot of
//! every vertex: the vertex's position and normal through the joint's inverse bind matrix,
//! scaled by the weight. Where the target has 128-bit registers everywhere (SSE2 on x86-64,
//! WebAssembly built with SIMD128) the matrix is applied by columns, four lanes at a time; the
//! products and sums are the scalar formula's, in its order and without fused multiply-add, so
//! the bits are those of [`Mat3x4::transform_point`] and [`Mat3x4::transform_vector`] times
//! the weight, on every target.

#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
pub(super) use lanes::{BindSpace, Finite};
#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
pub(super) use scalar::{BindSpace, Finite};

#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod lanes {
    use crate::math::Mat3x4;
    use crate::model::Influence;
    use crate::skin::Lanes;

    #[cfg(target_arch = "x86_64")]
    type F4 = std::arch::x86_64::__m128;
    #[cfg(target_arch = "wasm32")]
    type F4 = std::arch::wasm32::v128;

    /// A joint's inverse bind matrix by columns: the translation last, with 1 in lane 3 where
    /// the rotation's columns have 0, so that a point's lane 3 comes out 1 (and, times the
    /// weight, the influence's weight) while a normal's stays 0.
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    struct Columns([[f32; 4]; 4]);

    const IDENTITY: Columns = Columns([
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ]);

    /// The model's joints, ready to put vertices into their bind space.
    pub(in crate::format::iqm) struct BindSpace {
        columns: Vec<Columns>,
    }

    /// Whether every influence made so far is finite: gathered without a branch, read once a
    /// mesh. A lane is NaN once some result there was an infinity or a NaN (each result times 0).
    pub(in crate::format::iqm) struct Finite(F4);

    impl Finite {
        pub(in crate::format::iqm) fn new() -> Finite {
            Finite(F4::zero())
        }

        /// Every influence given to [`BindSpace::influence`] with this was finite.
        pub(in crate::format::iqm) fn all(&self) -> bool {
            let mut lanes = [0.0f32; 4];
            // SAFETY: `lanes` is 16 writable bytes.
            unsafe { self.0.store(lanes.as_mut_ptr().cast()) };
            !lanes.iter().any(|x| x.is_nan())
        }
    }

    impl BindSpace {
        pub(in crate::format::iqm) fn new(inverse_bind: &[Mat3x4]) -> BindSpace {
            let columns = inverse_bind
                .iter()
                .map(|m| {
                    let m = &m.m;
                    Columns([
                        [m[0], m[4], m[8], 0.0],
                        [m[1], m[5], m[9], 0.0],
                        [m[2], m[6], m[10], 0.0],
                        [m[3], m[7], m[11], 1.0],
                    ])
                })
                .collect();
            BindSpace { columns }
        }

        /// The influence of joint `b` (the identity where the model has no such joint; callers
        /// pass only joints it has) with weight `w` on the vertex at `p` with normal `n`, both
        /// finite; whether it is finite goes into `finite`.
        #[inline(always)]
        pub(in crate::format::iqm) fn influence(
            &self,
            b: u32,
            w: f32,
            p: [f32; 3],
            n: [f32; 3],
            finite: &mut Finite,
        ) -> Influence {
            let c = self.columns.get(b as usize).unwrap_or(&IDENTITY);
            // SAFETY: each column is 16 readable bytes, 16-byte aligned (`Columns`' alignment).
            let [c0, c1, c2, c3] = c.0.each_ref().map(|c| unsafe { F4::load(c.as_ptr()) });
            let w4 = F4::splat(w);
            // ((m0 p0 + m1 p1) + m2 p2) + m3, as the scalar formula sums; lane 3 is 1.
            let origin = c0
                .mul(F4::splat(p[0]))
                .add(c1.mul(F4::splat(p[1])))
                .add(c2.mul(F4::splat(p[2])))
                .add(c3)
                .mul(w4);
            let normal = c0
                .mul(F4::splat(n[0]))
                .add(c1.mul(F4::splat(n[1])))
                .add(c2.mul(F4::splat(n[2])))
                .mul(w4);
            // One add a call on the chain through the calls. Two finite results can sum to an
            // infinity: then the mesh is made again the slow way, which finds them finite.
            finite.0 = finite.0.add(origin.add(normal).mul(F4::zero()));
            let mut made = Influence::default();
            let at = std::ptr::from_mut(&mut made).cast::<u8>();
            // SAFETY: an `Influence` is 32 bytes, `repr(C)`: origin and weight in the first 16,
            // normal in the next 12 (the store's lane 3 lands on `bone`, set below).
            unsafe {
                origin.store(at);
                normal.store(at.add(16));
            }
            made.bone = b;
            made
        }
    }
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
mod scalar {
    use crate::math::Mat3x4;
    use crate::model::Influence;

    /// The model's joints' inverse bind matrices.
    pub(in crate::format::iqm) struct BindSpace(Vec<Mat3x4>);

    /// Whether some influence made so far is not finite.
    pub(in crate::format::iqm) struct Finite(bool);

    impl Finite {
        pub(in crate::format::iqm) fn new() -> Finite {
            Finite(false)
        }

        pub(in crate::format::iqm) fn all(&self) -> bool {
            !self.0
        }
    }

    impl BindSpace {
        pub(in crate::format::iqm) fn new(inverse_bind: &[Mat3x4]) -> BindSpace {
            BindSpace(inverse_bind.to_vec())
        }

        pub(in crate::format::iqm) fn influence(
            &self,
            b: u32,
            w: f32,
            p: [f32; 3],
            n: [f32; 3],
            finite: &mut Finite,
        ) -> Influence {
            let m = self.0.get(b as usize).unwrap_or(&Mat3x4::IDENTITY);
            let origin = m.transform_point(p).map(|x| x * w);
            let normal = m.transform_vector(n).map(|x| x * w);
            finite.0 |= !origin.iter().chain(&normal).all(|x| x.is_finite());
            Influence {
                origin,
                weight: w,
                normal,
                bone: b,
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::math::Mat3x4;

    /// Three joints whose inverse bind matrices round: rotations, a scale and translations.
    pub(in crate::format::iqm) fn joints() -> Vec<Mat3x4> {
        vec![
            Mat3x4 {
                m: [
                    0.36, -0.48, 0.8, 1.1, 0.8, 0.6, 0.0, -2.7, -0.48, 0.64, 0.6, 0.3,
                ],
            },
            Mat3x4 {
                m: [
                    1.0 / 3.0,
                    0.7,
                    -0.1,
                    1e-3,
                    0.2,
                    1.0 / 7.0,
                    0.9,
                    5.5,
                    -0.3,
                    0.4,
                    0.11,
                    -9.25,
                ],
            },
            Mat3x4 {
                m: [
                    2.5, 0.0, 0.0, -0.75, 0.0, 2.5, 0.0, 0.125, 0.0, 0.0, 2.5, 3.0,
                ],
            },
        ]
    }

    /// The lanes give the scalar formula's bits, weight in lane 3 and the bone where it was
    /// put, on matrices and vectors whose products round.
    #[test]
    fn columns_give_the_scalar_formulas_bits() {
        let inv = joints();
        let space = BindSpace::new(&inv);
        let mut finite = Finite::new();
        for (b, m) in inv.iter().enumerate() {
            for (p, n, w) in [
                ([0.1f32, -7.3, 2.2], [0.0f32, 0.6, 0.8], 1.0f32),
                (
                    [123.456, 0.001, -55.5],
                    [-0.577, 0.577, -0.577],
                    83.0 / 255.0,
                ),
                ([-1e-3, 4e3, 1.5], [1.0, 0.0, 0.0], 0.3333),
            ] {
                let made = space.influence(b as u32, w, p, n, &mut finite);
                let origin = m.transform_point(p).map(|x| x * w);
                let normal = m.transform_vector(n).map(|x| x * w);
                assert_eq!(made.origin.map(f32::to_bits), origin.map(f32::to_bits));
                assert_eq!(made.normal.map(f32::to_bits), normal.map(f32::to_bits));
                assert_eq!(made.weight.to_bits(), w.to_bits());
                assert_eq!(made.bone, b as u32);
            }
        }
        assert!(finite.all());
    }

    #[test]
    fn a_result_too_large_for_a_float_is_caught_once_for_all() {
        let space = BindSpace::new(&[Mat3x4 {
            m: [3e38, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
        }]);
        let mut finite = Finite::new();
        space.influence(0, 1.0, [1.0, 2.0, 3.0], [0.0, 0.0, 1.0], &mut finite);
        assert!(finite.all());
        space.influence(0, 1.0, [2.0, 2.0, 3.0], [0.0, 0.0, 1.0], &mut finite);
        assert!(!finite.all(), "3e38 * 2 is an infinity");
        space.influence(0, 1.0, [1.0, 2.0, 3.0], [0.0, 0.0, 1.0], &mut finite);
        assert!(!finite.all(), "stays caught");
    }
}
