//! Four `f32` lanes in one 128-bit register, for the kernel [`super::simd4`] writes once for both
//! instruction sets that have such registers everywhere: SSE2 on x86-64 (`__m128`) and
//! WebAssembly's SIMD128 (`v128`, where the module is built with it). Each operation is one
//! instruction of either set (a shuffle may be two in WebAssembly's engines) and rounds once per
//! lane as IEEE 754 says, with no fused multiply-add, so both give the portable kernel's bits.

/// Four `f32` lanes. Shuffles follow SSE's `shufps` and unpack instructions, whose names the
/// kernel was first written with.
pub(crate) trait Lanes: Copy {
    fn zero() -> Self;
    fn splat(x: f32) -> Self;
    /// The 16 bytes at `at`.
    ///
    /// # Safety
    /// They are readable, and `at` is 16-byte aligned.
    unsafe fn load(at: *const f32) -> Self;
    /// The 16 bytes at `at`.
    ///
    /// # Safety
    /// They are readable.
    unsafe fn load_unaligned(at: *const f32) -> Self;
    /// Writes the four lanes to the 16 bytes at `at`.
    ///
    /// # Safety
    /// They are writable.
    unsafe fn store(self, at: *mut u8);
    /// Writes lanes 0 and 1 to the 8 bytes at `at`.
    ///
    /// # Safety
    /// They are writable.
    unsafe fn store_low(self, at: *mut u8);
    /// Writes lanes 2 and 3 to the 8 bytes at `at`.
    ///
    /// # Safety
    /// They are writable.
    unsafe fn store_high(self, at: *mut u8);
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn sqrt(self) -> Self;
    /// Lane 0.
    fn first(self) -> f32;
    /// All ones in the lanes where `self > o`, zeros elsewhere (and where either is NaN).
    fn gt(self, o: Self) -> Self;
    /// `yes` where `mask` (from [`Lanes::gt`]) is all ones, `no` where it is zeros.
    fn select(mask: Self, yes: Self, no: Self) -> Self;
    /// Lanes 0 to 2 kept, lane 3 zero.
    fn clear3(self) -> Self;
    /// `shufps`: `(a[M0], a[M1], b[M2], b[M3])`, `Mi` the two bits `2i` and `2i + 1` of `M`.
    /// WebAssembly takes the masks the kernel uses (listed in its implementation; another
    /// fails to build).
    fn shuffle<const M: i32>(a: Self, b: Self) -> Self;
    /// `(a0, b0, a1, b1)`.
    fn unpack_low(a: Self, b: Self) -> Self;
    /// `(a2, b2, a3, b3)`.
    fn unpack_high(a: Self, b: Self) -> Self;
    /// `(a0, a1, b0, b1)`.
    fn low_halves(a: Self, b: Self) -> Self;
    /// `(b2, b3, a2, a3)`.
    fn high_halves(a: Self, b: Self) -> Self;
}

/// [`Lanes::unpack_low`], [`Lanes::unpack_high`], [`Lanes::low_halves`] and
/// [`Lanes::high_halves`] as the four given functions of `(a, b)`, in that order.
macro_rules! two_lane_pairs {
    ($unpack_low:expr, $unpack_high:expr, $low_halves:expr, $high_halves:expr $(,)?) => {
        two_lane_pairs!(@one unpack_low $unpack_low);
        two_lane_pairs!(@one unpack_high $unpack_high);
        two_lane_pairs!(@one low_halves $low_halves);
        two_lane_pairs!(@one high_halves $high_halves);
    };
    (@one $name:ident $f:expr) => {
        #[inline(always)]
        #[allow(unused_unsafe)]
        fn $name(a: Self, b: Self) -> Self {
            // SAFETY: the instruction set is there (the implementation's own comment says why);
            // no memory is touched.
            unsafe { $f(a, b) }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::*;

    use super::Lanes;

    // SAFETY (every block below that does not say otherwise): SSE2 is part of x86-64, so these
    // intrinsics run on every CPU this code is built for.
    impl Lanes for __m128 {
        #[inline(always)]
        fn zero() -> Self {
            unsafe { _mm_setzero_ps() }
        }
        #[inline(always)]
        fn splat(x: f32) -> Self {
            unsafe { _mm_set1_ps(x) }
        }
        #[inline(always)]
        unsafe fn load(at: *const f32) -> Self {
            // SAFETY: the caller's contract: 16 readable bytes, 16-byte aligned.
            unsafe { _mm_load_ps(at) }
        }
        #[inline(always)]
        unsafe fn load_unaligned(at: *const f32) -> Self {
            // SAFETY: the caller's contract: 16 readable bytes; the load is an unaligned one.
            unsafe { _mm_loadu_ps(at) }
        }
        #[inline(always)]
        unsafe fn store(self, at: *mut u8) {
            // SAFETY: the caller's contract: 16 writable bytes; the store is an unaligned one.
            unsafe { _mm_storeu_ps(at.cast(), self) }
        }
        #[inline(always)]
        unsafe fn store_low(self, at: *mut u8) {
            // SAFETY: the caller's contract: 8 writable bytes; the store is an unaligned one.
            unsafe { _mm_storel_epi64(at.cast(), _mm_castps_si128(self)) }
        }
        #[inline(always)]
        unsafe fn store_high(self, at: *mut u8) {
            // SAFETY: the caller's contract: 8 writable bytes; the store is an unaligned one.
            unsafe { _mm_storeh_pd(at.cast(), _mm_castps_pd(self)) }
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            unsafe { _mm_add_ps(self, o) }
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            unsafe { _mm_mul_ps(self, o) }
        }
        #[inline(always)]
        fn div(self, o: Self) -> Self {
            unsafe { _mm_div_ps(self, o) }
        }
        #[inline(always)]
        fn sqrt(self) -> Self {
            unsafe { _mm_sqrt_ps(self) }
        }
        #[inline(always)]
        fn first(self) -> f32 {
            unsafe { _mm_cvtss_f32(self) }
        }
        #[inline(always)]
        fn gt(self, o: Self) -> Self {
            unsafe { _mm_cmpgt_ps(self, o) }
        }
        #[inline(always)]
        fn select(mask: Self, yes: Self, no: Self) -> Self {
            unsafe { _mm_or_ps(_mm_and_ps(mask, yes), _mm_andnot_ps(mask, no)) }
        }
        #[inline(always)]
        fn clear3(self) -> Self {
            unsafe { _mm_and_ps(self, _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1))) }
        }
        #[inline(always)]
        fn shuffle<const M: i32>(a: Self, b: Self) -> Self {
            unsafe { _mm_shuffle_ps::<M>(a, b) }
        }
        two_lane_pairs!(
            _mm_unpacklo_ps,
            _mm_unpackhi_ps,
            _mm_movelh_ps,
            _mm_movehl_ps
        );
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use std::arch::wasm32::*;

    use super::Lanes;

    // The module is built with SIMD128 (`target_feature = "simd128"`), which every engine that
    // instantiates it has: a module using instructions an engine lacks fails to compile there.
    impl Lanes for v128 {
        #[inline(always)]
        fn zero() -> Self {
            f32x4_splat(0.0)
        }
        #[inline(always)]
        fn splat(x: f32) -> Self {
            f32x4_splat(x)
        }
        #[inline(always)]
        unsafe fn load(at: *const f32) -> Self {
            // SAFETY: the caller's contract: 16 readable bytes (WebAssembly's loads need no
            // alignment).
            unsafe { v128_load(at.cast()) }
        }
        #[inline(always)]
        unsafe fn load_unaligned(at: *const f32) -> Self {
            // SAFETY: the caller's contract: 16 readable bytes.
            unsafe { v128_load(at.cast()) }
        }
        #[inline(always)]
        unsafe fn store(self, at: *mut u8) {
            // SAFETY: the caller's contract: 16 writable bytes.
            unsafe { v128_store(at.cast(), self) }
        }
        #[inline(always)]
        unsafe fn store_low(self, at: *mut u8) {
            // SAFETY: the caller's contract: 8 writable bytes.
            unsafe { v128_store64_lane::<0>(self, at.cast()) }
        }
        #[inline(always)]
        unsafe fn store_high(self, at: *mut u8) {
            // SAFETY: the caller's contract: 8 writable bytes.
            unsafe { v128_store64_lane::<1>(self, at.cast()) }
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            f32x4_add(self, o)
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            f32x4_mul(self, o)
        }
        #[inline(always)]
        fn div(self, o: Self) -> Self {
            f32x4_div(self, o)
        }
        #[inline(always)]
        fn sqrt(self) -> Self {
            f32x4_sqrt(self)
        }
        #[inline(always)]
        fn first(self) -> f32 {
            f32x4_extract_lane::<0>(self)
        }
        #[inline(always)]
        fn gt(self, o: Self) -> Self {
            f32x4_gt(self, o)
        }
        #[inline(always)]
        fn select(mask: Self, yes: Self, no: Self) -> Self {
            v128_bitselect(yes, no, mask)
        }
        #[inline(always)]
        fn clear3(self) -> Self {
            i32x4_replace_lane::<3>(self, 0)
        }
        #[inline(always)]
        fn shuffle<const M: i32>(a: Self, b: Self) -> Self {
            // Lane indices cannot be computed from `M` in a generic (a const argument may only
            // name it), so each mask the kernel uses is spelled out; `b`'s lanes are 4 to 7.
            const {
                assert!(
                    matches!(
                        M,
                        0x00 | 0x55
                            | 0xAA
                            | 0xFF
                            | 0xA0
                            | 0x5F
                            | 0x84
                            | 0x48
                            | 0x88
                            | 0x44
                            | 0xE4
                            | 0xEE
                    ),
                    "a shuffle mask the SIMD128 lanes do not spell out"
                )
            };
            match M {
                0x00 => i32x4_shuffle::<0, 0, 4, 4>(a, b),
                0x55 => i32x4_shuffle::<1, 1, 5, 5>(a, b),
                0xAA => i32x4_shuffle::<2, 2, 6, 6>(a, b),
                0xFF => i32x4_shuffle::<3, 3, 7, 7>(a, b),
                0xA0 => i32x4_shuffle::<0, 0, 6, 6>(a, b),
                0x5F => i32x4_shuffle::<3, 3, 5, 5>(a, b),
                0x84 => i32x4_shuffle::<0, 1, 4, 6>(a, b),
                0x48 => i32x4_shuffle::<0, 2, 4, 5>(a, b),
                0x88 => i32x4_shuffle::<0, 2, 4, 6>(a, b),
                0x44 => i32x4_shuffle::<0, 1, 4, 5>(a, b),
                0xE4 => i32x4_shuffle::<0, 1, 6, 7>(a, b),
                _ => i32x4_shuffle::<2, 3, 6, 7>(a, b), // 0xEE, as the assertion leaves
            }
        }
        two_lane_pairs!(
            i32x4_shuffle::<0, 4, 1, 5>,
            i32x4_shuffle::<2, 6, 3, 7>,
            i32x4_shuffle::<0, 1, 4, 5>,
            i32x4_shuffle::<6, 7, 2, 3>
        );
    }
}
