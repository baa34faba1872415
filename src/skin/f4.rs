//! Four floats, lane by lane, for the layout's survey: SSE2 on x86-64 (part of every x86-64 CPU,
//! and what the compiler does not reliably produce from plain code here), plain Rust elsewhere.
//! Each operation rounds once per lane, so both give the same bits.

#[cfg(target_arch = "x86_64")]
mod imp {
    use std::arch::x86_64::*;

    use crate::model::Influence;

    #[derive(Clone, Copy)]
    pub(crate) struct F4(__m128);

    // SAFETY (every block below): SSE2 is part of x86-64, so these intrinsics run on every CPU
    // this code is built for; loads and stores go through references to four floats.
    impl F4 {
        #[inline(always)]
        pub fn new(v: [f32; 4]) -> F4 {
            F4(unsafe { _mm_loadu_ps(v.as_ptr()) })
        }
        #[inline(always)]
        pub fn get(self) -> [f32; 4] {
            let mut v = [0.0; 4];
            unsafe { _mm_storeu_ps(v.as_mut_ptr(), self.0) };
            v
        }
        /// An influence's `(o, f)` and `(n, 0)`, loaded straight from the record (assembling
        /// them from fields would go through memory and stall the loads).
        #[inline(always)]
        pub fn influence(i: &Influence) -> (F4, F4) {
            let at: *const f32 = std::ptr::from_ref(i).cast();
            // Influence is repr(C), 32 bytes: origin, weight, normal, bone; both loads stay
            // inside it. The bone's lane is cleared.
            unsafe {
                let keep3 = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
                (
                    F4(_mm_loadu_ps(at)),
                    F4(_mm_and_ps(_mm_loadu_ps(at.add(4)), keep3)),
                )
            }
        }
        #[inline(always)]
        pub fn zero() -> F4 {
            F4(unsafe { _mm_setzero_ps() })
        }
        #[inline(always)]
        pub fn splat(x: f32) -> F4 {
            F4(unsafe { _mm_set1_ps(x) })
        }
        /// Lane `L` in every lane.
        #[inline(always)]
        pub fn lane<const L: i32>(self) -> F4 {
            F4(unsafe { _mm_shuffle_ps::<L>(self.0, self.0) })
        }
        #[inline(always)]
        pub fn add(self, o: F4) -> F4 {
            F4(unsafe { _mm_add_ps(self.0, o.0) })
        }
        #[inline(always)]
        pub fn mul(self, o: F4) -> F4 {
            F4(unsafe { _mm_mul_ps(self.0, o.0) })
        }
        /// `|self - o|`.
        #[inline(always)]
        pub fn dist(self, o: F4) -> F4 {
            F4(unsafe { _mm_andnot_ps(_mm_set1_ps(-0.0), _mm_sub_ps(self.0, o.0)) })
        }
        /// `|self|`.
        #[inline(always)]
        pub fn abs(self) -> F4 {
            F4(unsafe { _mm_andnot_ps(_mm_set1_ps(-0.0), self.0) })
        }
        /// `o` where it is below `self`, else `self` (no NaN reaches here).
        #[inline(always)]
        pub fn min(self, o: F4) -> F4 {
            F4(unsafe { _mm_min_ps(o.0, self.0) })
        }
        /// `o` where it is above `self`, else `self`.
        #[inline(always)]
        pub fn max(self, o: F4) -> F4 {
            F4(unsafe { _mm_max_ps(o.0, self.0) })
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    use crate::model::Influence;

    #[derive(Clone, Copy)]
    pub(crate) struct F4([f32; 4]);

    impl F4 {
        #[inline(always)]
        pub fn new(v: [f32; 4]) -> F4 {
            F4(v)
        }
        #[inline(always)]
        pub fn get(self) -> [f32; 4] {
            self.0
        }
        #[inline(always)]
        pub fn influence(i: &Influence) -> (F4, F4) {
            let ([x, y, z], [a, b, c]) = (i.origin, i.normal);
            (F4([x, y, z, i.weight]), F4([a, b, c, 0.0]))
        }
        #[inline(always)]
        pub fn zero() -> F4 {
            F4([0.0; 4])
        }
        #[inline(always)]
        pub fn splat(x: f32) -> F4 {
            F4([x; 4])
        }
        #[inline(always)]
        pub fn lane<const L: i32>(self) -> F4 {
            F4([self.0[(L & 3) as usize]; 4])
        }
        #[inline(always)]
        fn zip(self, o: F4, f: impl Fn(f32, f32) -> f32) -> F4 {
            let (a, b) = (self.0, o.0);
            F4([f(a[0], b[0]), f(a[1], b[1]), f(a[2], b[2]), f(a[3], b[3])])
        }
        #[inline(always)]
        pub fn add(self, o: F4) -> F4 {
            self.zip(o, |a, b| a + b)
        }
        #[inline(always)]
        pub fn mul(self, o: F4) -> F4 {
            self.zip(o, |a, b| a * b)
        }
        #[inline(always)]
        pub fn dist(self, o: F4) -> F4 {
            self.zip(o, |a, b| (a - b).abs())
        }
        #[inline(always)]
        pub fn abs(self) -> F4 {
            self.zip(self, |a, _| a.abs())
        }
        #[inline(always)]
        pub fn min(self, o: F4) -> F4 {
            self.zip(o, |a, b| if b < a { b } else { a })
        }
        #[inline(always)]
        pub fn max(self, o: F4) -> F4 {
            self.zip(o, |a, b| if b > a { b } else { a })
        }
    }
}

pub(crate) use imp::F4;

use crate::model::Influence;

impl F4 {
    /// `(x + y) + z`.
    #[inline(always)]
    pub fn sum3(self) -> f32 {
        let [x, y, z, _] = self.get();
        (x + y) + z
    }
}

impl Default for F4 {
    fn default() -> F4 {
        F4::zero()
    }
}

/// A point and a normal side by side, `[a | b]`, each four lanes: eight lanes where the CPU has
/// AVX ([`F8`]), two [`F4`]s elsewhere ([`F4x2`]). Lane by lane both round alike, so a survey
/// gives the same bits on either.
pub(crate) trait Pair: Copy {
    fn zero() -> Self;
    fn join(a: F4, b: F4) -> Self;
    fn halves(self) -> (F4, F4);
    /// An influence's `[(o, f) | (n, 0)]`.
    fn influence(i: &Influence) -> Self;
    fn splat(x: f32) -> Self;
    /// Lane `L` of each half in every lane of that half.
    fn lane<const L: i32>(self) -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// `|self - o|`.
    fn dist(self, o: Self) -> Self;
    fn abs(self) -> Self;
}

#[derive(Clone, Copy)]
pub(crate) struct F4x2(F4, F4);

impl Pair for F4x2 {
    #[inline(always)]
    fn zero() -> Self {
        F4x2(F4::zero(), F4::zero())
    }
    #[inline(always)]
    fn join(a: F4, b: F4) -> Self {
        F4x2(a, b)
    }
    #[inline(always)]
    fn halves(self) -> (F4, F4) {
        (self.0, self.1)
    }
    #[inline(always)]
    fn influence(i: &Influence) -> Self {
        let (a, b) = F4::influence(i);
        F4x2(a, b)
    }
    #[inline(always)]
    fn splat(x: f32) -> Self {
        F4x2(F4::splat(x), F4::splat(x))
    }
    #[inline(always)]
    fn lane<const L: i32>(self) -> Self {
        F4x2(self.0.lane::<L>(), self.1.lane::<L>())
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        F4x2(self.0.add(o.0), self.1.add(o.1))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        F4x2(self.0.mul(o.0), self.1.mul(o.1))
    }
    #[inline(always)]
    fn dist(self, o: Self) -> Self {
        F4x2(self.0.dist(o.0), self.1.dist(o.1))
    }
    #[inline(always)]
    fn abs(self) -> Self {
        F4x2(self.0.abs(), self.1.abs())
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use avx::F8;

#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    use super::{F4, Pair};
    use crate::model::Influence;

    /// Eight lanes in one AVX register. Only code compiled with AVX enabled, and run where the
    /// CPU has it, makes and uses one (the survey's AVX entry), so its methods may use AVX.
    #[derive(Clone, Copy)]
    pub(crate) struct F8(__m256);

    // SAFETY (every block below): AVX is present (see F8); loads read inside the references
    // they are given.
    impl Pair for F8 {
        #[inline(always)]
        fn zero() -> Self {
            F8(unsafe { _mm256_setzero_ps() })
        }
        #[inline(always)]
        fn join(a: F4, b: F4) -> Self {
            let (a, b) = (a.get(), b.get());
            F8(unsafe { _mm256_set_m128(_mm_loadu_ps(b.as_ptr()), _mm_loadu_ps(a.as_ptr())) })
        }
        #[inline(always)]
        fn halves(self) -> (F4, F4) {
            let mut v = [0.0f32; 8];
            unsafe { _mm256_storeu_ps(v.as_mut_ptr(), self.0) };
            let [a, b, c, d, e, f, g, h] = v;
            (F4::new([a, b, c, d]), F4::new([e, f, g, h]))
        }
        #[inline(always)]
        fn influence(i: &Influence) -> Self {
            let at: *const f32 = std::ptr::from_ref(i).cast();
            // Influence is repr(C), 32 bytes: origin, weight, normal, bone; the bone's lane
            // is cleared.
            unsafe {
                let keep7 = _mm256_castsi256_ps(_mm256_set_epi32(0, -1, -1, -1, -1, -1, -1, -1));
                F8(_mm256_and_ps(_mm256_loadu_ps(at), keep7))
            }
        }
        #[inline(always)]
        fn splat(x: f32) -> Self {
            F8(unsafe { _mm256_set1_ps(x) })
        }
        #[inline(always)]
        fn lane<const L: i32>(self) -> Self {
            F8(unsafe { _mm256_permute_ps::<L>(self.0) })
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            F8(unsafe { _mm256_add_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            F8(unsafe { _mm256_mul_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn dist(self, o: Self) -> Self {
            F8(unsafe { _mm256_andnot_ps(_mm256_set1_ps(-0.0), _mm256_sub_ps(self.0, o.0)) })
        }
        #[inline(always)]
        fn abs(self) -> Self {
            F8(unsafe { _mm256_andnot_ps(_mm256_set1_ps(-0.0), self.0) })
        }
    }
}
