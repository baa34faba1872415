//! x86-64 kernels. SSE2 (part of x86-64, so always there) keeps a matrix's four columns in four
//! registers and a vertex's position and normal in two, doing the portable kernel's operations in
//! its order. AVX2 with FMA keeps each column twice in one 8-lane register, `[c | c]`, so that a
//! vertex's position and normal come out of the same three fused multiply-adds.
//!
//! A vector's lanes hold `(x, y, y, z)`, the middle row computed twice, so that a 12-byte
//! element is stored as two overlapping 8-byte stores, `x y` at its start and `y z` four bytes on,
//! with no shuffle: nothing is written outside the element, and a target's last element may end
//! exactly where the caller's buffer does.

use std::arch::x86_64::*;
use std::marker::PhantomData;

use super::plan::{BindPoint, Member};
use super::{Backend, Job, RawTarget, drive};
use crate::math::Mat3x4;
use crate::model::Influence;

/// Stores `(x, y, y, z)` as the 12 bytes `x y z` at `at`.
///
/// # Safety
/// The 12 bytes at `at` are writable.
#[inline(always)]
unsafe fn store3(at: *mut u8, v: __m128) {
    // SAFETY: the caller hands over 12 writable bytes; the stores cover bytes 0..8 and 4..12,
    // both unaligned ones.
    unsafe {
        _mm_storel_epi64(at.cast(), _mm_castps_si128(v));
        _mm_storeh_pd(at.add(4).cast(), _mm_castps_pd(v));
    }
}

/// `n / sqrt((x x + y y) + z z)` as [`super::normalize`] computes it, `n = (x, y, y, z)` left
/// alone when zero.
#[inline(always)]
fn unit(n: __m128) -> __m128 {
    // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
    unsafe {
        let sq = _mm_mul_ps(n, n);
        let sum = _mm_add_ss(
            _mm_add_ss(sq, _mm_shuffle_ps(sq, sq, 0b01)),
            _mm_shuffle_ps(sq, sq, 0b11),
        );
        let len = _mm_sqrt_ss(sum);
        if _mm_cvtss_f32(len) > 0.0 {
            _mm_div_ps(n, _mm_shuffle_ps(len, len, 0))
        } else {
            n
        }
    }
}

/// Writes element `e` of `out`.
#[inline(always)]
fn emit<const NORMALS: bool, const UNIT: bool>(
    out: &mut RawTarget,
    e: usize,
    p: __m128,
    n: __m128,
) {
    debug_assert!(e < out.capacity);
    // SAFETY: drive() hands over only e < count, and skin_mesh checked count <= capacity, so
    // both 12-byte fields of element e lie in the caller's buffers (RawTarget's contract); a
    // target that wants normals has them (NORMALS is wants_normals()).
    unsafe {
        store3(out.positions.add(e * out.position_stride), p);
        if NORMALS {
            let n = if UNIT { unit(n) } else { n };
            store3(out.normals.add(e * out.normal_stride), n);
        }
    }
}

/// Columns `(r0[j], r1[j], r1[j], r2[j])` of the rows `r0`, `r1`, `r2`: a matrix whose products
/// come out as `(x, y, y, z)`.
#[inline(always)]
fn columns(r0: __m128, r1: __m128, r2: __m128) -> [__m128; 4] {
    // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
    unsafe {
        let t0 = _mm_unpacklo_ps(r0, r1);
        let u0 = _mm_unpacklo_ps(r1, r2);
        let t2 = _mm_unpackhi_ps(r0, r1);
        let u2 = _mm_unpackhi_ps(r1, r2);
        [
            _mm_movelh_ps(t0, u0),
            _mm_movehl_ps(u0, t0),
            _mm_movelh_ps(t2, u2),
            _mm_movehl_ps(u2, t2),
        ]
    }
}

/// Row `r` of `m`.
#[inline(always)]
fn row(m: &Mat3x4, r: usize) -> __m128 {
    let r = &m.m[4 * r..4 * r + 4];
    // SAFETY: `r` is four floats; the load is an unaligned one.
    unsafe { _mm_loadu_ps(r.as_ptr()) }
}

/// The low four floats of an influence (origin, weight) and the high four (normal, bone bits).
#[inline(always)]
fn halves(i: &Influence) -> (__m128, __m128) {
    let p: *const f32 = i.origin.as_ptr();
    // SAFETY: Influence is repr(C), 32 bytes: origin, weight, normal, bone; both loads stay
    // inside it and are unaligned ones.
    unsafe { (_mm_loadu_ps(p), _mm_loadu_ps(p.add(4))) }
}

fn store_rows(out: &mut Mat3x4, rows: [__m128; 3]) {
    for (r, v) in rows.into_iter().enumerate() {
        let slot = &mut out.m[4 * r..4 * r + 4];
        // SAFETY: `slot` is four floats; the store is an unaligned one.
        unsafe { _mm_storeu_ps(slot.as_mut_ptr(), v) };
    }
}

const E3: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

/// SSE2, which every x86-64 CPU has, writing into a `RawTarget<'t>`.
struct Sse2<'t>(PhantomData<fn(&'t ())>);

impl<'t> Backend for Sse2<'t> {
    type Out = RawTarget<'t>;
    type Mat = [__m128; 4];

    #[inline(always)]
    fn relative(&self, a: &Mat3x4, i: &Mat3x4) -> Mat3x4 {
        let (i0, i1, i2) = (row(i, 0), row(i, 1), row(i, 2));
        let mut out = Mat3x4 { m: [0.0; 12] };
        // SAFETY: SSE2 is part of x86-64; E3 is four floats.
        unsafe {
            let e = _mm_loadu_ps(E3.as_ptr());
            let mut rows = [row(a, 0), row(a, 1), row(a, 2)];
            for a in &mut rows {
                let x = *a;
                *a = _mm_add_ps(
                    _mm_add_ps(
                        _mm_add_ps(
                            _mm_mul_ps(_mm_shuffle_ps(x, x, 0x00), i0),
                            _mm_mul_ps(_mm_shuffle_ps(x, x, 0x55), i1),
                        ),
                        _mm_mul_ps(_mm_shuffle_ps(x, x, 0xAA), i2),
                    ),
                    _mm_mul_ps(_mm_shuffle_ps(x, x, 0xFF), e),
                );
            }
            store_rows(&mut out, rows);
        }
        out
    }

    #[inline(always)]
    fn bone(&self, m: &Mat3x4) -> [__m128; 4] {
        columns(row(m, 0), row(m, 1), row(m, 2))
    }

    #[inline(always)]
    fn blend(&self, members: &[Member], rel: &[Mat3x4]) -> [__m128; 4] {
        // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
        unsafe {
            let mut s = [_mm_setzero_ps(); 3];
            for (k, member) in members.iter().enumerate() {
                let Some(m) = rel.get(member.slot as usize) else {
                    continue;
                };
                let f = _mm_set1_ps(member.weight);
                for (r, s) in s.iter_mut().enumerate() {
                    let t = _mm_mul_ps(f, row(m, r));
                    *s = if k == 0 { t } else { _mm_add_ps(*s, t) };
                }
            }
            columns(s[0], s[1], s[2])
        }
    }

    #[inline(always)]
    fn influence<const NORMALS: bool, const UNIT: bool>(
        &self,
        [c0, c1, c2, c3]: [__m128; 4],
        i: &Influence,
        out: &mut RawTarget,
        e: usize,
    ) {
        // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
        unsafe {
            let (x, n) = halves(i);
            let p = _mm_add_ps(
                _mm_add_ps(
                    _mm_add_ps(
                        _mm_mul_ps(c3, _mm_shuffle_ps(x, x, 0xFF)),
                        _mm_mul_ps(c0, _mm_shuffle_ps(x, x, 0x00)),
                    ),
                    _mm_mul_ps(c1, _mm_shuffle_ps(x, x, 0x55)),
                ),
                _mm_mul_ps(c2, _mm_shuffle_ps(x, x, 0xAA)),
            );
            emit::<NORMALS, UNIT>(out, e, p, sse2_normal([c0, c1, c2], n));
        }
    }

    #[inline(always)]
    fn point<const NORMALS: bool, const UNIT: bool>(
        &self,
        [c0, c1, c2, c3]: [__m128; 4],
        p: &BindPoint,
        out: &mut RawTarget,
        e: usize,
    ) {
        // SAFETY: SSE2 is part of x86-64; a BindPoint is eight 32-byte aligned floats, so both
        // aligned loads read inside it.
        unsafe {
            let (x, n) = (_mm_load_ps(p.0.as_ptr()), _mm_load_ps(p.0.as_ptr().add(4)));
            // The weight is 1: c3 * 1 is c3, bit for bit.
            let p = _mm_add_ps(
                _mm_add_ps(
                    _mm_add_ps(c3, _mm_mul_ps(c0, _mm_shuffle_ps(x, x, 0x00))),
                    _mm_mul_ps(c1, _mm_shuffle_ps(x, x, 0x55)),
                ),
                _mm_mul_ps(c2, _mm_shuffle_ps(x, x, 0xAA)),
            );
            emit::<NORMALS, UNIT>(out, e, p, sse2_normal([c0, c1, c2], n));
        }
    }

    #[inline(always)]
    fn direct<const NORMALS: bool, const UNIT: bool>(
        &self,
        infl: &[Influence],
        bones: &[Mat3x4],
        out: &mut RawTarget,
        e: usize,
    ) {
        // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
        unsafe {
            let keep3 = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
            let mut p = [_mm_setzero_ps(); 3];
            let mut n = [_mm_setzero_ps(); 3];
            for i in infl {
                let Some(m) = bones.get(i.bone as usize) else {
                    continue;
                };
                let (x, nb) = halves(i);
                let nv = _mm_and_ps(nb, keep3);
                for r in 0..3 {
                    let rr = row(m, r);
                    p[r] = _mm_add_ps(p[r], _mm_mul_ps(rr, x));
                    n[r] = _mm_add_ps(n[r], _mm_mul_ps(rr, nv));
                }
            }
            emit::<NORMALS, UNIT>(out, e, sse2_sum_lanes(p), sse2_sum_lanes(n));
        }
    }
}

/// `(c0 nx + c1 ny) + c2 nz`.
#[inline(always)]
fn sse2_normal([c0, c1, c2]: [__m128; 3], n: __m128) -> __m128 {
    // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
    unsafe {
        _mm_add_ps(
            _mm_add_ps(
                _mm_mul_ps(c0, _mm_shuffle_ps(n, n, 0x00)),
                _mm_mul_ps(c1, _mm_shuffle_ps(n, n, 0x55)),
            ),
            _mm_mul_ps(c2, _mm_shuffle_ps(n, n, 0xAA)),
        )
    }
}

/// `((a[r]0 + a[r]1) + (a[r]2 + a[r]3))` for rows `r` = 0, 1, 1, 2.
#[inline(always)]
fn sse2_sum_lanes(a: [__m128; 3]) -> __m128 {
    // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
    unsafe {
        let [c0, c1, c2, c3] = columns(a[0], a[1], a[2]);
        _mm_add_ps(_mm_add_ps(c0, c1), _mm_add_ps(c2, c3))
    }
}

/// AVX2 with FMA, writing into a `RawTarget<'t>`; made only by [`avx2`], which runs where the
/// CPU has both, so its methods may use them.
struct Avx2<'t>(PhantomData<fn(&'t ())>);

impl Avx2<'_> {
    /// `[lo | hi]`.
    #[inline(always)]
    fn pair(&self, lo: __m128, hi: __m128) -> __m256 {
        // SAFETY: AVX is present (see Avx2).
        unsafe { _mm256_set_m128(hi, lo) }
    }

    /// `[c0 | c0], [c1 | c1], [c2 | c2], [c3 | 0]`: a matrix for positions (low half, with the
    /// translation) and normals (high half, without) at once.
    #[inline(always)]
    fn matrix(&self, [c0, c1, c2, c3]: [__m128; 4]) -> [__m256; 4] {
        // SAFETY: AVX is present (see Avx2); SSE2 is part of x86-64.
        unsafe {
            [
                self.pair(c0, c0),
                self.pair(c1, c1),
                self.pair(c2, c2),
                self.pair(c3, _mm_setzero_ps()),
            ]
        }
    }

    #[inline(always)]
    fn emit<const NORMALS: bool, const UNIT: bool>(
        &self,
        out: &mut RawTarget,
        e: usize,
        acc: __m256,
    ) {
        // SAFETY: AVX is present (see Avx2).
        let (p, n) = unsafe { (_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1)) };
        emit::<NORMALS, UNIT>(out, e, p, n);
    }
}

impl<'t> Backend for Avx2<'t> {
    type Out = RawTarget<'t>;
    type Mat = [__m256; 4];

    #[inline(always)]
    fn relative(&self, a: &Mat3x4, i: &Mat3x4) -> Mat3x4 {
        let (i0, i1, i2) = (row(i, 0), row(i, 1), row(i, 2));
        let mut out = Mat3x4 { m: [0.0; 12] };
        // SAFETY: FMA is present (see Avx2); E3 is four floats.
        unsafe {
            let e = _mm_loadu_ps(E3.as_ptr());
            let mut rows = [row(a, 0), row(a, 1), row(a, 2)];
            for a in &mut rows {
                let x = *a;
                let t = _mm_mul_ps(_mm_shuffle_ps(x, x, 0x00), i0);
                let t = _mm_fmadd_ps(_mm_shuffle_ps(x, x, 0x55), i1, t);
                let t = _mm_fmadd_ps(_mm_shuffle_ps(x, x, 0xAA), i2, t);
                *a = _mm_fmadd_ps(_mm_shuffle_ps(x, x, 0xFF), e, t);
            }
            store_rows(&mut out, rows);
        }
        out
    }

    #[inline(always)]
    fn bone(&self, m: &Mat3x4) -> [__m256; 4] {
        self.matrix(columns(row(m, 0), row(m, 1), row(m, 2)))
    }

    #[inline(always)]
    fn blend(&self, members: &[Member], rel: &[Mat3x4]) -> [__m256; 4] {
        // SAFETY: FMA and AVX are present (see Avx2); each load reads inside one Mat3x4.
        unsafe {
            let mut s01 = _mm256_setzero_ps();
            let mut s2 = _mm_setzero_ps();
            for (k, member) in members.iter().enumerate() {
                let Some(m) = rel.get(member.slot as usize) else {
                    continue;
                };
                let r01 = _mm256_loadu_ps(m.m.as_ptr());
                let r2 = row(m, 2);
                let f = _mm256_set1_ps(member.weight);
                if k == 0 {
                    s01 = _mm256_mul_ps(f, r01);
                    s2 = _mm_mul_ps(_mm256_castps256_ps128(f), r2);
                } else {
                    s01 = _mm256_fmadd_ps(f, r01, s01);
                    s2 = _mm_fmadd_ps(_mm256_castps256_ps128(f), r2, s2);
                }
            }
            self.matrix(columns(
                _mm256_castps256_ps128(s01),
                _mm256_extractf128_ps(s01, 1),
                s2,
            ))
        }
    }

    #[inline(always)]
    fn influence<const NORMALS: bool, const UNIT: bool>(
        &self,
        [c0, c1, c2, c3]: [__m256; 4],
        i: &Influence,
        out: &mut RawTarget,
        e: usize,
    ) {
        // SAFETY: AVX and FMA are present (see Avx2); the loads read inside the 32-byte
        // Influence (repr(C): origin, weight, normal, bone).
        unsafe {
            let x = _mm256_loadu_ps(i.origin.as_ptr());
            let acc = _mm256_mul_ps(c3, _mm256_broadcast_ss(&i.weight));
            let acc = _mm256_fmadd_ps(c0, _mm256_permute_ps(x, 0x00), acc);
            let acc = _mm256_fmadd_ps(c1, _mm256_permute_ps(x, 0x55), acc);
            let acc = _mm256_fmadd_ps(c2, _mm256_permute_ps(x, 0xAA), acc);
            self.emit::<NORMALS, UNIT>(out, e, acc);
        }
    }

    #[inline(always)]
    fn point<const NORMALS: bool, const UNIT: bool>(
        &self,
        [c0, c1, c2, c3]: [__m256; 4],
        p: &BindPoint,
        out: &mut RawTarget,
        e: usize,
    ) {
        // SAFETY: AVX and FMA are present (see Avx2); a BindPoint is eight 32-byte aligned floats.
        unsafe {
            let x = _mm256_load_ps(p.0.as_ptr());
            let acc = _mm256_fmadd_ps(c0, _mm256_permute_ps(x, 0x00), c3);
            let acc = _mm256_fmadd_ps(c1, _mm256_permute_ps(x, 0x55), acc);
            let acc = _mm256_fmadd_ps(c2, _mm256_permute_ps(x, 0xAA), acc);
            self.emit::<NORMALS, UNIT>(out, e, acc);
        }
    }

    #[inline(always)]
    fn direct<const NORMALS: bool, const UNIT: bool>(
        &self,
        infl: &[Influence],
        bones: &[Mat3x4],
        out: &mut RawTarget,
        e: usize,
    ) {
        // SAFETY: AVX and FMA are present (see Avx2); the loads read inside one Influence or
        // one row of a Mat3x4.
        unsafe {
            let keep7 = _mm256_castsi256_ps(_mm256_set_epi32(0, -1, -1, -1, -1, -1, -1, -1));
            let mut acc = [_mm256_setzero_ps(); 3];
            for i in infl {
                let Some(m) = bones.get(i.bone as usize) else {
                    continue;
                };
                let x = _mm256_and_ps(_mm256_loadu_ps(i.origin.as_ptr()), keep7);
                for (r, a) in acc.iter_mut().enumerate() {
                    let rr = row(m, r);
                    *a = _mm256_fmadd_ps(self.pair(rr, rr), x, *a);
                }
            }
            // Pairs of lanes, then pairs of pairs: rows 0, 1, 1, 2 in each half.
            let h01 = _mm256_hadd_ps(acc[0], acc[1]);
            let h12 = _mm256_hadd_ps(acc[1], acc[2]);
            self.emit::<NORMALS, UNIT>(out, e, _mm256_hadd_ps(h01, h12));
        }
    }
}

fn sse2(job: &Job, normals: bool, unit: bool, rel: &mut [Mat3x4], out: &mut RawTarget) {
    let b = Sse2(PhantomData);
    match (normals, unit) {
        (true, true) => drive::<_, true, true>(&b, job, rel, out),
        (true, false) => drive::<_, true, false>(&b, job, rel, out),
        _ => drive::<_, false, false>(&b, job, rel, out),
    }
}

#[target_feature(enable = "avx2,fma")]
fn avx2(job: &Job, normals: bool, unit: bool, rel: &mut [Mat3x4], out: &mut RawTarget) {
    let b = Avx2(PhantomData);
    match (normals, unit) {
        (true, true) => drive::<_, true, true>(&b, job, rel, out),
        (true, false) => drive::<_, true, false>(&b, job, rel, out),
        _ => drive::<_, false, false>(&b, job, rel, out),
    }
}

/// Skins `job` with AVX2 (`avx2`, which the caller checked this CPU has) or SSE2.
pub(super) fn run(
    use_avx2: bool,
    job: &Job,
    normals: bool,
    unit: bool,
    rel: &mut [Mat3x4],
    out: &mut RawTarget,
) {
    if use_avx2 {
        // SAFETY: the caller checked Kernel::Avx2.is_available(): AVX2 and FMA are present.
        unsafe { avx2(job, normals, unit, rel, out) }
    } else {
        sse2(job, normals, unit, rel, out);
    }
}
