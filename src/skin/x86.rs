//! x86-64 kernels. SSE2 (part of x86-64, so always there) keeps a matrix's four columns in four
//! registers and a vertex's position and normal in two, doing the portable kernel's operations in
//! its order. AVX2 with FMA keeps each column twice in one 8-lane register, `[c | c]`, so that a
//! vertex's position and normal come out of the same three fused multiply-adds.
//!
//! A vector's lanes hold `(x, y, y, z)`, the middle row computed twice, so that a 12-byte
//! element is stored as two overlapping 8-byte stores, `x y` at its start and `y z` four bytes on,
//! with no shuffle: nothing is written outside the element, and a target's last element may end
//! exactly where the caller's buffer does.
//!
//! Runs of consecutive vertices ([`super::plan::Lanes`]) go four (SSE2) or eight (AVX2) at a time,
//! one lane per vertex, each lane doing what the one-vertex code does in the same order. Where the
//! target's elements are packed (12-byte positions or normals, or both side by side in 24 bytes)
//! the results are interleaved in registers and stored whole: exactly the bytes of those
//! elements. A run's last block overlaps the one before it rather than running past the run, and
//! writes the same bits again.
//!
//! Code the AVX2 kernel reaches has no closures: a closure is compiled without the kernel's CPU
//! features, and the intrinsics inside it would become calls.

use std::arch::x86_64::*;
use std::marker::PhantomData;

use super::plan::{Lanes, Member, Point};
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

const E3: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

/// Where a target's elements lie, for storing several at once.
#[derive(Clone, Copy)]
struct Shape {
    packed_positions: bool,
    packed_normals: bool,
    /// 24-byte elements holding the position and the normal side by side: where the first of
    /// the two starts, and whether it is the position.
    pair: Option<(*mut u8, bool)>,
}

impl Shape {
    fn of(out: &RawTarget, normals: bool) -> Shape {
        let side_by_side = normals && out.position_stride == 24 && out.normal_stride == 24;
        let pair = if !side_by_side {
            None
        } else if out.normals == out.positions.wrapping_add(12) {
            Some((out.positions, true))
        } else if out.positions == out.normals.wrapping_add(12) {
            Some((out.normals, false))
        } else {
            None
        };
        Shape {
            packed_positions: out.position_stride == 12,
            packed_normals: out.normal_stride == 12,
            pair,
        }
    }
}

/// A run's lanes from entry `at`, `width` entries of each: the first lane's address and the
/// distance between lanes, when all seven lie inside the lanes' data.
#[inline(always)]
fn lane_block(lanes: &Lanes, at: usize, width: usize) -> Option<(*const f32, usize)> {
    (at + width <= lanes.stride && lanes.data.len() >= 7 * lanes.stride)
        .then(|| (lanes.data.as_ptr().wrapping_add(at), lanes.stride))
}

/// Four vertices' x, y, z (one vertex per lane) as three registers of packed 12-byte elements.
#[inline(always)]
fn pack3([x, y, z]: [__m128; 3]) -> [__m128; 3] {
    // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
    unsafe {
        let a = _mm_unpacklo_ps(x, y); // x0 y0 x1 y1
        let b = _mm_unpackhi_ps(x, y); // x2 y2 x3 y3
        let t = _mm_shuffle_ps(z, a, 0xA0); // z0 z0 x1 x1
        let u = _mm_shuffle_ps(a, z, 0x5F); // y1 y1 z1 z1
        let w = _mm_shuffle_ps(z, b, 0xAA); // z2 z2 x3 x3
        let v = _mm_shuffle_ps(b, z, 0xFF); // y3 y3 z3 z3
        [
            _mm_shuffle_ps(a, t, 0x84), // x0 y0 z0 x1
            _mm_shuffle_ps(u, b, 0x48), // y1 z1 x2 y2
            _mm_shuffle_ps(w, v, 0x88), // z2 x3 y3 z3
        ]
    }
}

/// Four vertices' triples `a` and `b` as six registers of 24-byte elements `a b`.
#[inline(always)]
fn pack6([ax, ay, az]: [__m128; 3], [bx, by, bz]: [__m128; 3]) -> [__m128; 6] {
    // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
    unsafe {
        let (a, a2) = (_mm_unpacklo_ps(ax, ay), _mm_unpackhi_ps(ax, ay));
        let (b, b2) = (_mm_unpacklo_ps(az, bx), _mm_unpackhi_ps(az, bx));
        let (c, c2) = (_mm_unpacklo_ps(by, bz), _mm_unpackhi_ps(by, bz));
        [
            _mm_shuffle_ps(a, b, 0x44),
            _mm_shuffle_ps(c, a, 0xE4),
            _mm_shuffle_ps(b, c, 0xEE),
            _mm_shuffle_ps(a2, b2, 0x44),
            _mm_shuffle_ps(c2, a2, 0xE4),
            _mm_shuffle_ps(b2, c2, 0xEE),
        ]
    }
}

/// [`super::normalize`] of four normals given as x, y, z lanes.
#[inline(always)]
fn unit4([x, y, z]: [__m128; 3]) -> [__m128; 3] {
    // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
    unsafe {
        let len = _mm_sqrt_ps(_mm_add_ps(
            _mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)),
            _mm_mul_ps(z, z),
        ));
        let keep = _mm_cmpgt_ps(len, _mm_setzero_ps());
        let mut n = [x, y, z];
        for c in &mut n {
            *c = _mm_or_ps(
                _mm_and_ps(keep, _mm_div_ps(*c, len)),
                _mm_andnot_ps(keep, *c),
            );
        }
        n
    }
}

/// Stores elements `[e, e + r)` (`r <= 4`) of one stream, positions or normals, given as x, y,
/// z lanes: whole registers where the stream is packed and all four are asked for.
///
/// # Safety
/// The 12 bytes at `base + i * stride` are writable for every element `i` in `[e, e + r)`.
#[inline(always)]
unsafe fn put4(base: *mut u8, stride: usize, packed: bool, e: usize, r: usize, v: [__m128; 3]) {
    // SAFETY: packed, the four elements are the 48 bytes from `base + 12 e`; else each element
    // gets its own 12 bytes (the caller's contract).
    unsafe {
        if packed && r == 4 {
            let at = base.add(e * 12);
            for (k, o) in pack3(v).into_iter().enumerate() {
                _mm_storeu_ps(at.add(16 * k).cast(), o);
            }
        } else {
            let [x, y, z] = v;
            for (i, c) in columns(x, y, z).into_iter().enumerate().take(r) {
                store3(base.add((e + i) * stride), c);
            }
        }
    }
}

/// Writes elements `[e, e + r)` (`r <= 4`) of `out` from four vertices' positions and normals.
#[inline(always)]
fn store4<const NORMALS: bool, const UNIT: bool>(
    out: &mut RawTarget,
    shape: &Shape,
    e: usize,
    r: usize,
    p: [__m128; 3],
    n: [__m128; 3],
) {
    debug_assert!(e + r <= out.capacity);
    let n = if NORMALS && UNIT { unit4(n) } else { n };
    // SAFETY: drive() hands over only elements below count, and skin_mesh checked count <=
    // capacity, so both 12-byte fields of each lie in the caller's buffers (RawTarget's
    // contract); side by side, an element's 24 bytes start at the first field.
    unsafe {
        if NORMALS
            && r == 4
            && let Some((base, position_first)) = shape.pair
        {
            let (a, b) = if position_first { (p, n) } else { (n, p) };
            let at = base.add(e * 24);
            for (k, o) in pack6(a, b).into_iter().enumerate() {
                _mm_storeu_ps(at.add(16 * k).cast(), o);
            }
            return;
        }
        put4(
            out.positions,
            out.position_stride,
            shape.packed_positions,
            e,
            r,
            p,
        );
        if NORMALS {
            put4(
                out.normals,
                out.normal_stride,
                shape.packed_normals,
                e,
                r,
                n,
            );
        }
    }
}

/// A matrix's elements, each in every lane: `k[r][j]` is row `r`, column `j`.
type Spread<V> = [[V; 4]; 3];

/// A kernel's roundings for four lanes: `a b + c` (SSE2 rounds twice, AVX2 once) and the first
/// term of a normal.
trait Madd {
    fn madd(a: __m128, b: __m128, c: __m128) -> __m128;
    fn first(a: __m128, b: __m128) -> __m128;
}

/// Four consecutive entries of a run from lane address `at`: positions and normals, lane `i`
/// the vertex of entry `i`, in the order of the one-vertex code.
///
/// # Safety
/// Seven lanes of four floats each, `stride` apart from `at`, are readable.
#[inline(always)]
unsafe fn four<M: Madd>(k: &Spread<__m128>, at: *const f32, stride: usize) -> [[__m128; 3]; 2] {
    // SAFETY: the caller's contract; the loads are unaligned ones.
    unsafe {
        let mut x = [_mm_setzero_ps(); 7];
        for (j, x) in x.iter_mut().enumerate() {
            *x = _mm_loadu_ps(at.add(j * stride));
        }
        let [ox, oy, oz, f, nx, ny, nz] = x;
        let mut out = [[_mm_setzero_ps(); 3]; 2];
        for (r, &[c0, c1, c2, c3]) in k.iter().enumerate() {
            out[0][r] = M::madd(c2, oz, M::madd(c1, oy, M::madd(c0, ox, _mm_mul_ps(c3, f))));
            out[1][r] = M::madd(c2, nz, M::madd(c1, ny, M::first(c0, nx)));
        }
        out
    }
}

/// Skins a run four vertices at a time (the last four overlapping when `len` is not a multiple
/// of four; fewer than four computed four wide, stored one by one).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn run4<M: Madd, const NORMALS: bool, const UNIT: bool>(
    k: &Spread<__m128>,
    lanes: &Lanes,
    at: usize,
    len: usize,
    out: &mut RawTarget,
    shape: &Shape,
    e: usize,
) {
    if len < 4 {
        block4::<M, NORMALS, UNIT>(k, lanes, at, len, out, shape, e);
        return;
    }
    let mut i = 0;
    while i + 4 < len {
        block4::<M, NORMALS, UNIT>(k, lanes, at + i, 4, out, shape, e + i);
        i += 4;
    }
    block4::<M, NORMALS, UNIT>(k, lanes, at + len - 4, 4, out, shape, e + len - 4);
}

/// Four entries from `at`, of which the first `r` are stored as elements from `e`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn block4<M: Madd, const NORMALS: bool, const UNIT: bool>(
    k: &Spread<__m128>,
    lanes: &Lanes,
    at: usize,
    r: usize,
    out: &mut RawTarget,
    shape: &Shape,
    e: usize,
) {
    if let Some((ptr, stride)) = lane_block(lanes, at, 4) {
        // SAFETY: lane_block checked that four entries of each lane lie in the data.
        let [p, n] = unsafe { four::<M>(k, ptr, stride) };
        store4::<NORMALS, UNIT>(out, shape, e, r, p, n);
    }
}

struct Twice;

impl Madd for Twice {
    #[inline(always)]
    fn madd(a: __m128, b: __m128, c: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_add_ps(_mm_mul_ps(a, b), c) }
    }
    #[inline(always)]
    fn first(a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_mul_ps(a, b) }
    }
}

/// SSE2, which every x86-64 CPU has, writing into a `RawTarget<'t>`.
struct Sse2<'t>(PhantomData<fn(&'t ())>);

impl<'t> Backend for Sse2<'t> {
    type Out = RawTarget<'t>;
    type Mat = [__m128; 4];
    type Rel = [__m128; 4];
    type Wide = Spread<__m128>;

    #[inline(always)]
    fn zero_rel(&self) -> [__m128; 4] {
        // SAFETY: SSE2 is part of x86-64.
        [unsafe { _mm_setzero_ps() }; 4]
    }

    #[inline(always)]
    fn relative(&self, a: &Mat3x4, i: &Mat3x4) -> [__m128; 4] {
        let (i0, i1, i2) = (row(i, 0), row(i, 1), row(i, 2));
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
            columns(rows[0], rows[1], rows[2])
        }
    }

    #[inline(always)]
    fn bone(&self, m: &Mat3x4) -> [__m128; 4] {
        columns(row(m, 0), row(m, 1), row(m, 2))
    }

    #[inline(always)]
    fn blend(&self, members: &[Member], rel: &[[__m128; 4]]) -> [__m128; 4] {
        // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
        unsafe {
            let mut s = [_mm_setzero_ps(); 4];
            for (k, member) in members.iter().enumerate() {
                let Some(m) = rel.get(member.slot as usize) else {
                    continue;
                };
                let f = _mm_set1_ps(member.weight);
                for (s, &c) in s.iter_mut().zip(m) {
                    let t = _mm_mul_ps(f, c);
                    *s = if k == 0 { t } else { _mm_add_ps(*s, t) };
                }
            }
            s
        }
    }

    #[inline(always)]
    fn widen(&self, m: &[__m128; 4]) -> Spread<__m128> {
        // SAFETY: SSE2 is part of x86-64. Columns hold rows 0, 1, 1, 2 in their lanes.
        unsafe {
            let mut k = [[_mm_setzero_ps(); 4]; 3];
            for (j, &c) in m.iter().enumerate() {
                k[0][j] = _mm_shuffle_ps(c, c, 0x00);
                k[1][j] = _mm_shuffle_ps(c, c, 0x55);
                k[2][j] = _mm_shuffle_ps(c, c, 0xFF);
            }
            k
        }
    }

    #[inline(always)]
    fn point<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        [c0, c1, c2, c3]: [__m128; 4],
        p: &Point,
        out: &mut RawTarget,
        e: usize,
    ) {
        // SAFETY: SSE2 is part of x86-64; a Point is eight 32-byte aligned floats, so both
        // aligned loads read inside it.
        unsafe {
            let (x, n) = (_mm_load_ps(p.0.as_ptr()), _mm_load_ps(p.0.as_ptr().add(4)));
            let t = if ONE {
                c3
            } else {
                _mm_mul_ps(c3, _mm_shuffle_ps(x, x, 0xFF))
            };
            let p = _mm_add_ps(
                _mm_add_ps(
                    _mm_add_ps(t, _mm_mul_ps(c0, _mm_shuffle_ps(x, x, 0x00))),
                    _mm_mul_ps(c1, _mm_shuffle_ps(x, x, 0x55)),
                ),
                _mm_mul_ps(c2, _mm_shuffle_ps(x, x, 0xAA)),
            );
            emit::<NORMALS, UNIT>(out, e, p, sse2_normal([c0, c1, c2], n));
        }
    }

    #[inline(always)]
    fn run<const NORMALS: bool, const UNIT: bool>(
        &self,
        k: &Spread<__m128>,
        lanes: &Lanes,
        at: usize,
        len: usize,
        out: &mut RawTarget,
        e: usize,
    ) {
        let shape = Shape::of(out, NORMALS);
        run4::<Twice, NORMALS, UNIT>(k, lanes, at, len, out, &shape, e);
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
///
/// Its normals start from `+0` (`fma(c0, nx, 0)`), as the eight-lane one-vertex code's upper
/// half does, so that every path gives the same bits, zeros' signs included.
struct Avx2<'t>(PhantomData<fn(&'t ())>);

impl Madd for Avx2<'_> {
    #[inline(always)]
    fn madd(a: __m128, b: __m128, c: __m128) -> __m128 {
        // SAFETY: FMA is present (see Avx2).
        unsafe { _mm_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    fn first(a: __m128, b: __m128) -> __m128 {
        // SAFETY: FMA is present (see Avx2); SSE2 is part of x86-64.
        unsafe { _mm_fmadd_ps(a, b, _mm_setzero_ps()) }
    }
}

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

    /// Eight consecutive entries of a run: [`four`]'s work eight lanes wide, then stored.
    ///
    /// # Safety
    /// Seven lanes of eight floats each, `stride` apart from `at`, are readable.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn eight<const NORMALS: bool, const UNIT: bool>(
        &self,
        k: &Spread<__m256>,
        at: *const f32,
        stride: usize,
        out: &mut RawTarget,
        shape: &Shape,
        e: usize,
    ) {
        // SAFETY: the caller's contract; AVX and FMA are present (see Avx2); the loads are
        // unaligned ones.
        unsafe {
            let mut x = [_mm256_setzero_ps(); 7];
            for (j, x) in x.iter_mut().enumerate() {
                *x = _mm256_loadu_ps(at.add(j * stride));
            }
            let [ox, oy, oz, f, nx, ny, nz] = x;
            let zero = _mm256_setzero_ps();
            let (mut p, mut n) = ([zero; 3], [zero; 3]);
            for (r, &[c0, c1, c2, c3]) in k.iter().enumerate() {
                let t = _mm256_fmadd_ps(c0, ox, _mm256_mul_ps(c3, f));
                p[r] = _mm256_fmadd_ps(c2, oz, _mm256_fmadd_ps(c1, oy, t));
                let t = _mm256_fmadd_ps(c1, ny, _mm256_fmadd_ps(c0, nx, zero));
                n[r] = _mm256_fmadd_ps(c2, nz, t);
            }
            self.store8::<NORMALS, UNIT>(out, shape, e, p, n);
        }
    }

    /// Writes elements `[e, e + 8)` of `out`.
    #[inline(always)]
    fn store8<const NORMALS: bool, const UNIT: bool>(
        &self,
        out: &mut RawTarget,
        shape: &Shape,
        e: usize,
        p: [__m256; 3],
        n: [__m256; 3],
    ) {
        debug_assert!(e + 8 <= out.capacity);
        // SAFETY: AVX is present (see Avx2). Elements [e, e + 8) lie in the caller's buffers as
        // in store4; packed, they are the 96 (or, side by side, 192) bytes from element e.
        unsafe {
            let n = if NORMALS && UNIT { unit8(n) } else { n };
            if NORMALS && let Some((base, position_first)) = shape.pair {
                let (a, b) = if position_first { (p, n) } else { (n, p) };
                store_all(base.add(e * 24), &pack6x2(a, b));
                return;
            }
            put8(
                out.positions,
                out.position_stride,
                shape.packed_positions,
                e,
                p,
            );
            if NORMALS {
                put8(out.normals, out.normal_stride, shape.packed_normals, e, n);
            }
        }
    }
}

/// Stores `v` at `base`, one register after another.
///
/// # Safety
/// `32 * v.len()` bytes at `base` are writable; AVX is present.
#[inline(always)]
unsafe fn store_all(base: *mut u8, v: &[__m256]) {
    for (k, &o) in v.iter().enumerate() {
        // SAFETY: the caller's contract; the store is an unaligned one.
        unsafe { _mm256_storeu_ps(base.add(32 * k).cast(), o) };
    }
}

/// [`put4`] for elements `[e, e + 8)`.
///
/// # Safety
/// As for [`put4`]; AVX is present.
#[inline(always)]
unsafe fn put8(base: *mut u8, stride: usize, packed: bool, e: usize, v: [__m256; 3]) {
    // SAFETY: the caller's contract: packed, the eight elements are the 96 bytes from element e.
    unsafe {
        if packed {
            store_all(base.add(e * 12), &pack3x2(v));
            return;
        }
        let mut low = [_mm_setzero_ps(); 3];
        let mut high = [_mm_setzero_ps(); 3];
        for ((l, h), &x) in low.iter_mut().zip(&mut high).zip(&v) {
            *l = _mm256_castps256_ps128(x);
            *h = _mm256_extractf128_ps(x, 1);
        }
        put4(base, stride, false, e, 4, low);
        put4(base, stride, false, e + 4, 4, high);
    }
}

/// A palette slot's columns 0 and 1, and 2 and 3, eight floats each.
#[inline(always)]
fn halves_of(m: &[__m128; 4]) -> (__m256, __m256) {
    let at: *const f32 = m.as_ptr().cast();
    // SAFETY: runs only inside avx2(), where AVX is present; both loads read inside the slot's
    // 64 bytes.
    unsafe { (_mm256_loadu_ps(at), _mm256_loadu_ps(at.add(8))) }
}

/// [`pack3`] eight lanes wide: eight vertices as three registers of packed 12-byte elements.
#[inline(always)]
fn pack3x2([x, y, z]: [__m256; 3]) -> [__m256; 3] {
    // SAFETY: runs only inside avx2(), where AVX is present.
    unsafe {
        let a = _mm256_unpacklo_ps(x, y);
        let b = _mm256_unpackhi_ps(x, y);
        let t = _mm256_shuffle_ps(z, a, 0xA0);
        let u = _mm256_shuffle_ps(a, z, 0x5F);
        let w = _mm256_shuffle_ps(z, b, 0xAA);
        let v = _mm256_shuffle_ps(b, z, 0xFF);
        // Each half holds its four vertices' three registers; memory wants the low halves first.
        let o0 = _mm256_shuffle_ps(a, t, 0x84);
        let o1 = _mm256_shuffle_ps(u, b, 0x48);
        let o2 = _mm256_shuffle_ps(w, v, 0x88);
        [
            _mm256_permute2f128_ps(o0, o1, 0x20),
            _mm256_permute2f128_ps(o2, o0, 0x30),
            _mm256_permute2f128_ps(o1, o2, 0x31),
        ]
    }
}

/// [`pack6`] eight lanes wide: six registers of 24-byte elements `a b`.
#[inline(always)]
fn pack6x2([ax, ay, az]: [__m256; 3], [bx, by, bz]: [__m256; 3]) -> [__m256; 6] {
    // SAFETY: runs only inside avx2(), where AVX is present.
    unsafe {
        let (a, a2) = (_mm256_unpacklo_ps(ax, ay), _mm256_unpackhi_ps(ax, ay));
        let (b, b2) = (_mm256_unpacklo_ps(az, bx), _mm256_unpackhi_ps(az, bx));
        let (c, c2) = (_mm256_unpacklo_ps(by, bz), _mm256_unpackhi_ps(by, bz));
        // Vertices 0-1 | 4-5 and 2-3 | 6-7, three registers each.
        let o = [
            _mm256_shuffle_ps(a, b, 0x44),
            _mm256_shuffle_ps(c, a, 0xE4),
            _mm256_shuffle_ps(b, c, 0xEE),
            _mm256_shuffle_ps(a2, b2, 0x44),
            _mm256_shuffle_ps(c2, a2, 0xE4),
            _mm256_shuffle_ps(b2, c2, 0xEE),
        ];
        [
            _mm256_permute2f128_ps(o[0], o[1], 0x20),
            _mm256_permute2f128_ps(o[2], o[3], 0x20),
            _mm256_permute2f128_ps(o[4], o[5], 0x20),
            _mm256_permute2f128_ps(o[0], o[1], 0x31),
            _mm256_permute2f128_ps(o[2], o[3], 0x31),
            _mm256_permute2f128_ps(o[4], o[5], 0x31),
        ]
    }
}

/// [`unit4`] eight lanes wide.
#[inline(always)]
fn unit8([x, y, z]: [__m256; 3]) -> [__m256; 3] {
    // SAFETY: runs only inside avx2(), where AVX is present.
    unsafe {
        let len = _mm256_sqrt_ps(_mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(x, x), _mm256_mul_ps(y, y)),
            _mm256_mul_ps(z, z),
        ));
        let keep = _mm256_cmp_ps(len, _mm256_setzero_ps(), _CMP_GT_OQ);
        let mut n = [x, y, z];
        for c in &mut n {
            *c = _mm256_blendv_ps(*c, _mm256_div_ps(*c, len), keep);
        }
        n
    }
}

impl<'t> Backend for Avx2<'t> {
    type Out = RawTarget<'t>;
    type Mat = [__m256; 4];
    type Rel = [__m128; 4];
    type Wide = Spread<__m256>;

    #[inline(always)]
    fn zero_rel(&self) -> [__m128; 4] {
        // SAFETY: SSE2 is part of x86-64.
        [unsafe { _mm_setzero_ps() }; 4]
    }

    #[inline(always)]
    fn relative(&self, a: &Mat3x4, i: &Mat3x4) -> [__m128; 4] {
        let (i0, i1, i2) = (row(i, 0), row(i, 1), row(i, 2));
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
            columns(rows[0], rows[1], rows[2])
        }
    }

    #[inline(always)]
    fn bone(&self, m: &Mat3x4) -> [__m256; 4] {
        self.matrix(columns(row(m, 0), row(m, 1), row(m, 2)))
    }

    #[inline(always)]
    fn blend(&self, members: &[Member], rel: &[[__m128; 4]]) -> [__m256; 4] {
        // SAFETY: FMA and AVX are present (see Avx2); each load reads 32 of a slot's 64 bytes.
        unsafe {
            let mut members = members
                .iter()
                .filter_map(|member| Some((member.weight, rel.get(member.slot as usize)?)));
            let (mut s01, mut s23) = (_mm256_setzero_ps(), _mm256_setzero_ps());
            // The first product alone, then one fused multiply-add per member.
            if let Some((w, m)) = members.next() {
                let f = _mm256_set1_ps(w);
                s01 = _mm256_mul_ps(f, halves_of(m).0);
                s23 = _mm256_mul_ps(f, halves_of(m).1);
            }
            for (w, m) in members {
                let f = _mm256_set1_ps(w);
                s01 = _mm256_fmadd_ps(f, halves_of(m).0, s01);
                s23 = _mm256_fmadd_ps(f, halves_of(m).1, s23);
            }
            [
                _mm256_permute2f128_ps(s01, s01, 0x00),
                _mm256_permute2f128_ps(s01, s01, 0x11),
                _mm256_permute2f128_ps(s23, s23, 0x00),
                // The translation, and zero above it.
                _mm256_permute2f128_ps(s23, s23, 0x81),
            ]
        }
    }

    #[inline(always)]
    fn widen(&self, m: &[__m256; 4]) -> Spread<__m256> {
        // SAFETY: AVX is present (see Avx2). The low half of each column holds rows 0, 1, 1, 2.
        unsafe {
            let mut k = [[_mm256_setzero_ps(); 4]; 3];
            for (j, &c) in m.iter().enumerate() {
                let low = _mm256_permute2f128_ps(c, c, 0x00);
                k[0][j] = _mm256_permute_ps(low, 0x00);
                k[1][j] = _mm256_permute_ps(low, 0x55);
                k[2][j] = _mm256_permute_ps(low, 0xFF);
            }
            k
        }
    }

    #[inline(always)]
    fn point<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        [c0, c1, c2, c3]: [__m256; 4],
        p: &Point,
        out: &mut RawTarget,
        e: usize,
    ) {
        // SAFETY: AVX and FMA are present (see Avx2); a Point is eight 32-byte aligned floats.
        // Its last float is 0, so the upper half of the first term is +0 (as is c3's).
        unsafe {
            let x = _mm256_load_ps(p.0.as_ptr());
            let acc = if ONE {
                c3
            } else {
                _mm256_mul_ps(c3, _mm256_permute_ps(x, 0xFF))
            };
            let acc = _mm256_fmadd_ps(c0, _mm256_permute_ps(x, 0x00), acc);
            let acc = _mm256_fmadd_ps(c1, _mm256_permute_ps(x, 0x55), acc);
            let acc = _mm256_fmadd_ps(c2, _mm256_permute_ps(x, 0xAA), acc);
            self.emit::<NORMALS, UNIT>(out, e, acc);
        }
    }

    #[inline(always)]
    fn run<const NORMALS: bool, const UNIT: bool>(
        &self,
        k: &Spread<__m256>,
        lanes: &Lanes,
        at: usize,
        len: usize,
        out: &mut RawTarget,
        e: usize,
    ) {
        let shape = Shape::of(out, NORMALS);
        if len < 8 {
            // SAFETY: AVX is present (see Avx2); SSE2 is part of x86-64.
            let k4 = unsafe {
                let mut k4 = [[_mm_setzero_ps(); 4]; 3];
                for (row4, row) in k4.iter_mut().zip(k) {
                    for (c4, &c) in row4.iter_mut().zip(row) {
                        *c4 = _mm256_castps256_ps128(c);
                    }
                }
                k4
            };
            run4::<Self, NORMALS, UNIT>(&k4, lanes, at, len, out, &shape, e);
            return;
        }
        let mut i = 0;
        loop {
            // The last block ends where the run does.
            let from = i.min(len - 8);
            if let Some((ptr, stride)) = lane_block(lanes, at + from, 8) {
                // SAFETY: lane_block checked that eight entries of each lane lie in the data.
                unsafe { self.eight::<NORMALS, UNIT>(k, ptr, stride, out, &shape, e + from) };
            }
            if from == len - 8 {
                break;
            }
            i += 8;
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

fn sse2(job: &Job, normals: bool, unit: bool, out: &mut RawTarget) {
    let b = Sse2(PhantomData);
    match (normals, unit) {
        (true, true) => drive::<_, true, true>(&b, job, out),
        (true, false) => drive::<_, true, false>(&b, job, out),
        _ => drive::<_, false, false>(&b, job, out),
    }
}

#[target_feature(enable = "avx2,fma")]
fn avx2(job: &Job, normals: bool, unit: bool, out: &mut RawTarget) {
    let b = Avx2(PhantomData);
    match (normals, unit) {
        (true, true) => drive::<_, true, true>(&b, job, out),
        (true, false) => drive::<_, true, false>(&b, job, out),
        _ => drive::<_, false, false>(&b, job, out),
    }
}

/// Skins `job` with AVX2 (`avx2`, which the caller checked this CPU has) or SSE2.
pub(super) fn run(use_avx2: bool, job: &Job, normals: bool, unit: bool, out: &mut RawTarget) {
    if use_avx2 {
        // SAFETY: the caller checked Kernel::Avx2.is_available(): AVX2 and FMA are present.
        unsafe { avx2(job, normals, unit, out) }
    } else {
        sse2(job, normals, unit, out);
    }
}
