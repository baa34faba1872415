//! Four `f32` lanes in one 128-bit register, for the kernel [`super::simd4`] writes once for both
//! instruction sets that have such registers everywhere: SSE2 on x86-64 (`__m128`) and
//! WebAssembly's SIMD128 (`v128`, where the module is built with it). Each operation is one
//! instruction of either set (a shuffle may be two in WebAssembly's engines) and rounds once per
//! lane as IEEE 754 says, with no fused multiply-add, so both give the portable kernel's bits.

/// Four `f32` lanes. Shuffles follow SSE's `shufps` and unpack instructions, whose names the
/// kernel was first written with.
pub(super) trait Lanes: Copy {
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
