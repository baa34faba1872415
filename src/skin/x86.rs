//! x86-64 kernels. SSE2 (part of x86-64, so always there) is the four-lane kernel of
//! [`super::simd4`], which WebAssembly's SIMD128 runs too, over `__m128`.
//!
//! AVX2 with FMA keeps columns with lanes `(x, y, z, 0)`, 16 bytes each. A vertex skinned alone
//! (in a stretch, each with its own matrix) takes each coordinate of its operand broadcast
//! from memory, a load rather than a shuffle, and its results are stored 16 bytes at a time in
//! vertex order, each store's fourth float overwritten by the next element's; the last element
//! of a stretch is stored as exactly its 12 bytes. On CPUs that split 256-bit operations in two
//! (AMD before Zen 2) that halves the vector work of the eight-lane form it replaced, and a
//! blend is kept as 64 bytes rather than 128.
//!
//! Runs of consecutive vertices read their operands, 32-byte records `(o, f, n, _)`, where they
//! lie (a bone group's in the mesh's influences). AVX2 skins a run of eight or more into packed
//! or side-by-side targets eight vertices a step: two blocks of four records turned into
//! `[p | n]` rows as below, packed into 16-byte chunks lane by lane (positions in the lower
//! lanes, normals in the upper) and stored as 32-byte pairs of chunks; the last step overlaps
//! the one before it. Shorter runs there go as a stretch does, one vertex at a time, the run's
//! matrix kept in registers. For other targets, runs turn four records at a time into lanes in
//! registers, one vertex per lane, as the four-lane kernel does, but transposing the records'
//! two halves at once into `[ox | nx]`, `[oy | ny]`, `[oz | nz]` (and the weights when they are
//! not all 1), and storing through the four-lane kernel's code.
//!
//! Code the AVX2 kernel reaches has no closures: a closure is compiled without the kernel's CPU
//! features, and the intrinsics inside it would become calls.

use std::arch::x86_64::*;
use std::marker::PhantomData;

use super::plan::{Group, Member};
use super::simd4::{E3, Four, Shape, Simd4, Spread, emit, row, run4};
use super::{
    Backend, Job, Kernel, RawTarget, Slot, blend_each, drive, overlaps, stretch_by_vertex,
};
use crate::math::Mat3x4;
use crate::model::Influence;

/// `$self.$method::<K>(args)` for a set size of 1 to [`LIST_MAX`](super::plan::LIST_MAX)
/// members, `$other(self, args)` for any other.
macro_rules! by_member_count {
    ($size:expr, $other:ident, $self:ident . $method:ident ($($arg:expr),*)) => {
        match $size {
            1 => $self.$method::<1>($($arg),*),
            2 => $self.$method::<2>($($arg),*),
            3 => $self.$method::<3>($($arg),*),
            4 => $self.$method::<4>($($arg),*),
            5 => $self.$method::<5>($($arg),*),
            6 => $self.$method::<6>($($arg),*),
            7 => $self.$method::<7>($($arg),*),
            8 => $self.$method::<8>($($arg),*),
            _ => $other($self, $($arg),*),
        }
    };
}

/// [`Backend::blend_list`] and [`Backend::blend_alone`] for a kernel whose `blend_list_of::<K>`
/// and `blend_alone_of::<K>` blend sets of `K` members: up to [`LIST_MAX`](super::plan::LIST_MAX)
/// (8) members' matrices, as `plan::list_key` allows (with AVX2 the last few spill from sixteen
/// registers, still faster than a load per member and set).
macro_rules! blends_by_member_count {
    () => {
        #[inline(always)]
        fn blend_list(
            &self,
            list: &[Group],
            members: &[Member],
            rel: &[[__m128; 4]],
            table: &mut [Slot],
            range: (u32, u32),
        ) {
            let size = list
                .first()
                .map_or(0, |s| s.members_end.saturating_sub(s.key));
            by_member_count!(
                size,
                blend_each,
                self.blend_list_of(list, members, rel, table, range)
            )
        }

        #[inline(always)]
        fn blend_alone(
            &self,
            sets: &[Group],
            members: &[Member],
            rel: &[[__m128; 4]],
            table: &mut [Slot],
            range: (u32, u32),
        ) {
            let size = sets
                .first()
                .map_or(0, |s| s.members_end.saturating_sub(s.key));
            by_member_count!(
                size,
                blend_each,
                self.blend_alone_of(sets, members, rel, table, range)
            )
        }
    };
}

// After the macros above, which it uses.
#[cfg(ossa_avx512)]
mod avx512;

/// Columns `(r0[j], r1[j], r2[j], 0)` of the rows `r0`, `r1`, `r2`: a matrix whose products
/// come out as `(x, y, z, 0)`, which a 16-byte store writes whole.
#[inline(always)]
fn columns3(r0: __m128, r1: __m128, r2: __m128) -> [__m128; 4] {
    // SAFETY: SSE2 is part of x86-64: these intrinsics run on every CPU this code is built for.
    unsafe {
        let zero = _mm_setzero_ps();
        let (t0, t1) = (_mm_unpacklo_ps(r0, r1), _mm_unpacklo_ps(r2, zero));
        let (t2, t3) = (_mm_unpackhi_ps(r0, r1), _mm_unpackhi_ps(r2, zero));
        [
            _mm_movelh_ps(t0, t1),
            _mm_movehl_ps(t1, t0),
            _mm_movelh_ps(t2, t3),
            _mm_movehl_ps(t3, t2),
        ]
    }
}

/// AVX2 with FMA, writing into a `RawTarget<'t>`; made only by [`avx2`], which runs where the
/// CPU has both, so its methods may use them.
///
/// Its normals start from `+0` (`fma(c0, nx, 0)`) in the one-vertex code and in the runs'
/// upper halves alike, so that every path gives the same bits, zeros' signs included.
struct Avx2<'t>(PhantomData<fn(&'t ())>);

impl Avx2<'_> {
    /// `[lo | hi]`.
    #[inline(always)]
    fn pair(&self, lo: __m128, hi: __m128) -> __m256 {
        // SAFETY: AVX is present (see Avx2).
        unsafe { _mm256_set_m128(hi, lo) }
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
        emit::<__m128, NORMALS, UNIT>(out, e, p, n);
    }
}

impl Avx2<'_> {
    /// [`Backend::blend_list`] for lists of sets of `K` members: the members' matrices loaded
    /// once, then each set's weights times them in member order, as [`Backend::blend`] does.
    #[inline(always)]
    fn blend_list_of<const K: usize>(
        &self,
        list: &[Group],
        members: &[Member],
        rel: &[[__m128; 4]],
        table: &mut [Slot],
        (first, end): (u32, u32),
    ) {
        let Some(common) = list
            .first()
            .and_then(|s| members.get(s.key as usize..)?.get(..K))
        else {
            return;
        };
        // SAFETY: AVX is present (see Avx2).
        let zero = unsafe { _mm256_setzero_ps() };
        let (mut lo, mut hi) = ([zero; K], [zero; K]);
        for (j, member) in common.iter().enumerate() {
            if let Some(r) = rel.get(member.slot as usize) {
                (lo[j], hi[j]) = halves_of(r);
            }
        }
        for (s, slot) in list.iter().zip(table) {
            if s.has_runs() || !overlaps(s, first, end) {
                continue;
            }
            let Some(weights) = members.get(s.key as usize..).and_then(|m| m.get(..K)) else {
                continue;
            };
            debug_assert!(weights.iter().zip(common).all(|(a, b)| a.slot == b.slot));
            // SAFETY: FMA and AVX are present (see Avx2).
            unsafe {
                let f = _mm256_set1_ps(weights[0].weight);
                let (mut s01, mut s23) = (_mm256_mul_ps(f, lo[0]), _mm256_mul_ps(f, hi[0]));
                for j in 1..K {
                    let f = _mm256_set1_ps(weights[j].weight);
                    s01 = _mm256_fmadd_ps(f, lo[j], s01);
                    s23 = _mm256_fmadd_ps(f, hi[j], s23);
                }
                save_halves(s01, s23, slot);
            }
        }
    }

    /// [`Backend::blend_alone`] for sets of `K` members each: [`Backend::blend`] with the
    /// member loop unrolled.
    #[inline(always)]
    fn blend_alone_of<const K: usize>(
        &self,
        sets: &[Group],
        members: &[Member],
        rel: &[[__m128; 4]],
        table: &mut [Slot],
        (first, end): (u32, u32),
    ) {
        for (s, slot) in sets.iter().zip(table) {
            if s.has_runs() || !overlaps(s, first, end) {
                continue;
            }
            let Some(set) = members.get(s.key as usize..).and_then(|m| m.get(..K)) else {
                continue;
            };
            debug_assert!(set.iter().all(|m| (m.slot as usize) < rel.len()));
            // SAFETY: FMA and AVX are present (see Avx2); every member's slot is below the
            // palette's bone count, which `rel` has room for (as in blend()).
            unsafe {
                let m = rel.get_unchecked(set[0].slot as usize);
                let f = _mm256_set1_ps(set[0].weight);
                let (mut s01, mut s23) = (
                    _mm256_mul_ps(f, halves_of(m).0),
                    _mm256_mul_ps(f, halves_of(m).1),
                );
                for member in &set[1..] {
                    let m = rel.get_unchecked(member.slot as usize);
                    let f = _mm256_set1_ps(member.weight);
                    s01 = _mm256_fmadd_ps(f, halves_of(m).0, s01);
                    s23 = _mm256_fmadd_ps(f, halves_of(m).1, s23);
                }
                save_halves(s01, s23, slot);
            }
        }
    }

    /// The position and normal `(x, y, z, 0)` of the operand `x = (o, f, n, _)` with the matrix
    /// of columns `c`: `((c3 f + c0 ox) + c1 oy) + c2 oz` and `((0 + c0 nx) + c1 ny) + c2 nz`
    /// (the sum from `+0`, as the runs' upper halves do). Each coordinate is broadcast from
    /// memory: a load, where a shuffle would take the vector units that do the arithmetic.
    #[inline(always)]
    fn transform<const NORMALS: bool, const ONE: bool>(
        &self,
        [c0, c1, c2, c3]: &[__m128; 4],
        x: &Influence,
    ) -> (__m128, __m128) {
        let at: *const f32 = std::ptr::from_ref(x).cast();
        // SAFETY: AVX and FMA are present (see Avx2); each load reads one of the record's
        // first seven floats.
        unsafe {
            let acc = if ONE {
                *c3
            } else {
                _mm_mul_ps(*c3, _mm_broadcast_ss(&*at.add(3)))
            };
            let acc = _mm_fmadd_ps(*c0, _mm_broadcast_ss(&*at), acc);
            let acc = _mm_fmadd_ps(*c1, _mm_broadcast_ss(&*at.add(1)), acc);
            let p = _mm_fmadd_ps(*c2, _mm_broadcast_ss(&*at.add(2)), acc);
            if !NORMALS {
                return (p, _mm_setzero_ps());
            }
            let acc = _mm_fmadd_ps(*c0, _mm_broadcast_ss(&*at.add(4)), _mm_setzero_ps());
            let acc = _mm_fmadd_ps(*c1, _mm_broadcast_ss(&*at.add(5)), acc);
            (p, _mm_fmadd_ps(*c2, _mm_broadcast_ss(&*at.add(6)), acc))
        }
    }

    /// Skins the consecutive operands `x`, each with the matrix `from` gives it, into elements
    /// `[e, e + x.len())` of a target whose positions (and normals, when `NORMALS`) are packed:
    /// each result `(x, y, z, 0)` stored as 16 bytes, whose last 4 the next element's store
    /// writes again, the last element as exactly its 12 bytes.
    ///
    /// # Safety
    /// `e + x.len()` is at most the target's capacity; `from` has a matrix for every operand.
    #[inline(always)]
    unsafe fn lanes_packed<S: MatrixSource, const NORMALS: bool, const ONE: bool>(
        &self,
        from: &S,
        x: &[Influence],
        out: &mut RawTarget,
        e: usize,
    ) {
        debug_assert!(e + x.len() <= out.capacity);
        let Some((last, most)) = x.split_last() else {
            return;
        };
        // SAFETY: the caller's contract; elements [e, e + x.len()) are 12 bytes each from
        // element e of each packed stream (RawTarget's contract), and every 16-byte store but
        // the last element's ends inside the next element; AVX is present (see Avx2).
        unsafe {
            let (p, n) = (out.positions.add(e * 12), out.normals.add(e * 12));
            for (i, x) in most.iter().enumerate() {
                let (a, b) = self.transform::<NORMALS, ONE>(&from.matrix(x), x);
                _mm_storeu_ps(p.add(12 * i).cast(), a);
                if NORMALS {
                    _mm_storeu_ps(n.add(12 * i).cast(), b);
                }
            }
            let (a, b) = self.transform::<NORMALS, ONE>(&from.matrix(last), last);
            store_xyz(p.add(12 * most.len()), a);
            if NORMALS {
                store_xyz(n.add(12 * most.len()), b);
            }
        }
    }

    /// [`Avx2::lanes_packed`] for a target whose 24-byte elements hold a position and its
    /// normal side by side (the position first when `position_first`): the first triple and
    /// then the second stored as 16 bytes each, the second overwriting the first's fourth
    /// float and the next element's first overwriting the second's; the last element's second
    /// triple stored as exactly its 12 bytes.
    ///
    /// # Safety
    /// The `24 * x.len()` bytes from `base + 24 e` are the elements; `from` has a matrix for
    /// every operand.
    #[inline(always)]
    unsafe fn lanes_pair<S: MatrixSource, const ONE: bool>(
        &self,
        from: &S,
        x: &[Influence],
        base: *mut u8,
        position_first: bool,
        e: usize,
    ) {
        // The order as a constant: chosen per vertex, it cost okmale1.dpm 8% (2.57 against
        // 2.36 ns a vertex).
        // SAFETY: the caller's contract.
        unsafe {
            if position_first {
                self.lanes_pair_of::<S, ONE, true>(from, x, base, e);
            } else {
                self.lanes_pair_of::<S, ONE, false>(from, x, base, e);
            }
        }
    }

    /// [`Avx2::lanes_pair`] with the order fixed.
    ///
    /// # Safety
    /// As [`Avx2::lanes_pair`].
    #[inline(always)]
    unsafe fn lanes_pair_of<S: MatrixSource, const ONE: bool, const POSITION_FIRST: bool>(
        &self,
        from: &S,
        x: &[Influence],
        base: *mut u8,
        e: usize,
    ) {
        let Some((last, most)) = x.split_last() else {
            return;
        };
        // SAFETY: the caller's contract; each store stays inside the elements (the last one
        // exactly 12 bytes); AVX is present (see Avx2).
        unsafe {
            let at = base.add(24 * e);
            for (i, x) in most.iter().enumerate() {
                let (a, b) = self.transform::<true, ONE>(&from.matrix(x), x);
                let (first, second) = if POSITION_FIRST { (a, b) } else { (b, a) };
                _mm_storeu_ps(at.add(24 * i).cast(), first);
                _mm_storeu_ps(at.add(24 * i + 12).cast(), second);
            }
            let (a, b) = self.transform::<true, ONE>(&from.matrix(last), last);
            let (first, second) = if POSITION_FIRST { (a, b) } else { (b, a) };
            let end = at.add(24 * most.len());
            _mm_storeu_ps(end.cast(), first);
            store_xyz(end.add(12), second);
        }
    }

    /// Four operands from `at` spread across lanes: `[ox | nx]`, `[oy | ny]`, `[oz | nz]` and
    /// the weights `[f | 0]`, lane `i` of each half from record `i` (a record's halves are
    /// `(o, f)` and `(n, _)`): a 4x4 transposition in each half, from four loads.
    ///
    /// # Safety
    /// `at` is the first of four consecutive `Influence` records (32-byte aligned).
    #[inline(always)]
    unsafe fn spread4(&self, at: *const f32) -> [__m256; 4] {
        // SAFETY: the caller's contract: each load reads one of the four records, aligned; AVX
        // is present (see Avx2).
        unsafe {
            let (a, b) = (_mm256_load_ps(at), _mm256_load_ps(at.add(8)));
            let (c, d) = (_mm256_load_ps(at.add(16)), _mm256_load_ps(at.add(24)));
            // [a0 b0 a1 b1 | a4 b4 a5 b5] and [a2 b2 a3 b3 | a6 b6 a7 b7], and c with d.
            let (ab01, cd01) = (_mm256_unpacklo_ps(a, b), _mm256_unpacklo_ps(c, d));
            let (ab23, cd23) = (_mm256_unpackhi_ps(a, b), _mm256_unpackhi_ps(c, d));
            // The weights' upper half holds the records' last floats (the bones): cleared.
            let f = _mm256_shuffle_ps(ab23, cd23, 0xEE);
            [
                _mm256_shuffle_ps(ab01, cd01, 0x44),
                _mm256_shuffle_ps(ab01, cd01, 0xEE),
                _mm256_shuffle_ps(ab23, cd23, 0x44),
                _mm256_blend_ps(f, _mm256_setzero_ps(), 0xF0),
            ]
        }
    }

    /// Four operands from `at` as rows `[p | n]`: the one-vertex code's `[c | c]` products
    /// with a vertex per lane, in its order. `ONE`: every weight is 1.
    ///
    /// # Safety
    /// `at` is the first of four consecutive `Influence` records (32-byte aligned).
    #[inline(always)]
    unsafe fn rows4<const ONE: bool>(&self, k: &Spread<__m256>, at: *const f32) -> [__m256; 3] {
        // SAFETY: the caller's contract; AVX and FMA are present (see Avx2).
        unsafe {
            let [x, y, z, f] = self.spread4(at);
            let mut acc = [x; 3];
            for (acc, &[c0, c1, c2, c3]) in acc.iter_mut().zip(k) {
                let t = if ONE { c3 } else { _mm256_mul_ps(c3, f) };
                let t = _mm256_fmadd_ps(c0, x, t);
                let t = _mm256_fmadd_ps(c1, y, t);
                *acc = _mm256_fmadd_ps(c2, z, t);
            }
            acc
        }
    }
}

impl Avx2<'_> {
    /// A run of eight operands or more into packed streams (`LAYOUT` 0; positions alone, or
    /// positions and normals) or side-by-side 24-byte elements from `base` (1: the position
    /// first, 2: the normal first), eight a step, the last step overlapping the one before it
    /// (writing the same bits again). Each step is [`Avx2::rows4`] twice (four records as
    /// `[p | n]` rows, in-lane operations only); the rows are packed into 16-byte chunks lane
    /// by lane and the chunks paired into 32-byte stores.
    ///
    /// # Safety
    /// `x.len() >= 8`; elements `[e, e + x.len())` lie in the target's buffers as `LAYOUT`
    /// says; the CPU has AVX2 and FMA.
    ///
    /// A function of its own, with the kernel's features, rather than inlined into the one that
    /// walks the plan: unoptimised builds give every temporary of a function its own stack
    /// slot, and with each layout's loop inlined there the walk's frame took 1.8 of a test
    /// thread's 2 MiB.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run8<const NORMALS: bool, const UNIT: bool, const ONE: bool, const LAYOUT: u8>(
        &self,
        k: &Spread<__m256>,
        x: &[Influence],
        out: &mut RawTarget,
        base: *mut u8,
        e: usize,
    ) {
        let len = x.len();
        debug_assert!(len >= 8 && e + len <= out.capacity);
        let at: *const f32 = x.as_ptr().cast();
        let mut i = 0;
        loop {
            // The last step ends where the run does.
            let from = i.min(len - 8);
            // SAFETY: records [from, from + 8) are in `x`; the caller's contract for the
            // elements; AVX and FMA are present (see Avx2).
            unsafe {
                let lo = self.rows4::<ONE>(k, at.add(8 * from));
                let hi = self.rows4::<ONE>(k, at.add(8 * from + 32));
                let (lo, hi) = if NORMALS && UNIT {
                    (unit_upper(lo), unit_upper(hi))
                } else {
                    (lo, hi)
                };
                if LAYOUT == 0 {
                    let (a, b) = (pack3_256(lo), pack3_256(hi));
                    let p: *mut f32 = out.positions.add(12 * (e + from)).cast();
                    _mm256_storeu_ps(p, _mm256_permute2f128_ps(a[0], a[1], 0x20));
                    _mm256_storeu_ps(p.add(8), _mm256_permute2f128_ps(a[2], b[0], 0x20));
                    _mm256_storeu_ps(p.add(16), _mm256_permute2f128_ps(b[1], b[2], 0x20));
                    if NORMALS {
                        let n: *mut f32 = out.normals.add(12 * (e + from)).cast();
                        _mm256_storeu_ps(n, _mm256_permute2f128_ps(a[0], a[1], 0x31));
                        _mm256_storeu_ps(n.add(8), _mm256_permute2f128_ps(a[2], b[0], 0x31));
                        _mm256_storeu_ps(n.add(16), _mm256_permute2f128_ps(b[1], b[2], 0x31));
                    }
                } else {
                    // Eight vertices a register: positions, then normals, records in order.
                    let mut p = [_mm256_setzero_ps(); 3];
                    let mut n = [_mm256_setzero_ps(); 3];
                    for c in 0..3 {
                        p[c] = _mm256_permute2f128_ps(lo[c], hi[c], 0x20);
                        n[c] = _mm256_permute2f128_ps(lo[c], hi[c], 0x31);
                    }
                    let o = if LAYOUT == 1 {
                        pack6_256(p, n)
                    } else {
                        pack6_256(n, p)
                    };
                    let to: *mut f32 = base.add(24 * (e + from)).cast();
                    for (j, pair) in o.chunks_exact(2).enumerate() {
                        let (a, b) = (pair[0], pair[1]);
                        _mm256_storeu_ps(to.add(8 * j), _mm256_permute2f128_ps(a, b, 0x20));
                        _mm256_storeu_ps(to.add(24 + 8 * j), _mm256_permute2f128_ps(a, b, 0x31));
                    }
                }
            }
            if from == len - 8 {
                break;
            }
            i += 8;
        }
    }
}

/// `simd4::pack3` in both 128-bit lanes: four vertices' x, y, z a lane as three registers of
/// packed 12-byte elements, each lane's 48 bytes.
#[inline(always)]
fn pack3_256([x, y, z]: [__m256; 3]) -> [__m256; 3] {
    // SAFETY: runs only inside avx2(), where AVX is present.
    unsafe {
        let a = _mm256_unpacklo_ps(x, y);
        let b = _mm256_unpackhi_ps(x, y);
        let t = _mm256_shuffle_ps(z, a, 0xA0);
        let u = _mm256_shuffle_ps(a, z, 0x5F);
        let w = _mm256_shuffle_ps(z, b, 0xAA);
        let v = _mm256_shuffle_ps(b, z, 0xFF);
        [
            _mm256_shuffle_ps(a, t, 0x84),
            _mm256_shuffle_ps(u, b, 0x48),
            _mm256_shuffle_ps(w, v, 0x88),
        ]
    }
}

/// `simd4::pack6` in both 128-bit lanes: four vertices' triples `a` and `b` a lane as six
/// registers of 24-byte elements `a b`, each lane's 96 bytes.
#[inline(always)]
fn pack6_256([ax, ay, az]: [__m256; 3], [bx, by, bz]: [__m256; 3]) -> [__m256; 6] {
    // SAFETY: runs only inside avx2(), where AVX is present.
    unsafe {
        let (a, a2) = (_mm256_unpacklo_ps(ax, ay), _mm256_unpackhi_ps(ax, ay));
        let (b, b2) = (_mm256_unpacklo_ps(az, bx), _mm256_unpackhi_ps(az, bx));
        let (c, c2) = (_mm256_unpacklo_ps(by, bz), _mm256_unpackhi_ps(by, bz));
        [
            _mm256_shuffle_ps(a, b, 0x44),
            _mm256_shuffle_ps(c, a, 0xE4),
            _mm256_shuffle_ps(b, c, 0xEE),
            _mm256_shuffle_ps(a2, b2, 0x44),
            _mm256_shuffle_ps(c2, a2, 0xE4),
            _mm256_shuffle_ps(b2, c2, 0xEE),
        ]
    }
}

/// `simd4::unit4` of the normals in the upper lanes of rows `[p | n]`, the positions left alone.
#[inline(always)]
fn unit_upper([x, y, z]: [__m256; 3]) -> [__m256; 3] {
    // SAFETY: runs only inside avx2(), where AVX is present.
    unsafe {
        let len = _mm256_sqrt_ps(_mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(x, x), _mm256_mul_ps(y, y)),
            _mm256_mul_ps(z, z),
        ));
        let upper = _mm256_castsi256_ps(_mm256_set_epi32(-1, -1, -1, -1, 0, 0, 0, 0));
        let keep = _mm256_and_ps(_mm256_cmp_ps(len, _mm256_setzero_ps(), _CMP_GT_OQ), upper);
        let mut n = [x, y, z];
        for c in &mut n {
            *c = _mm256_blendv_ps(*c, _mm256_div_ps(*c, len), keep);
        }
        n
    }
}

impl Four for Avx2<'_> {
    type Wide = Spread<__m256>;
    type Lane = __m128;

    #[inline(always)]
    unsafe fn four<const ONE: bool>(
        &self,
        k: &Spread<__m256>,
        at: *const f32,
    ) -> ([__m128; 3], [__m128; 3]) {
        // SAFETY: the caller's contract; AVX is present (see Avx2).
        unsafe {
            let acc = self.rows4::<ONE>(k, at);
            let mut p = [_mm_setzero_ps(); 3];
            let mut n = [_mm_setzero_ps(); 3];
            for ((p, n), &v) in p.iter_mut().zip(&mut n).zip(&acc) {
                *p = _mm256_castps256_ps128(v);
                *n = _mm256_extractf128_ps(v, 1);
            }
            (p, n)
        }
    }
}

/// Where the AVX2 kernel's one-vertex loops find each operand's matrix: a run's own, or the
/// table slot a stretch operand names.
trait MatrixSource {
    /// The columns of `x`'s matrix.
    ///
    /// # Safety
    /// For a [`Table`], `x`'s slot is below its length.
    unsafe fn matrix(&self, x: &Influence) -> [__m128; 4];
}

/// One matrix for every operand: a run's.
struct Fixed([__m128; 4]);

impl MatrixSource for Fixed {
    #[inline(always)]
    unsafe fn matrix(&self, _: &Influence) -> [__m128; 4] {
        self.0
    }
}

/// The per-call table of stretch matrices, the slot in each operand's last field.
struct Table<'a>(&'a [Slot]);

impl MatrixSource for Table<'_> {
    #[inline(always)]
    unsafe fn matrix(&self, x: &Influence) -> [__m128; 4] {
        debug_assert!((x.bone as usize) < self.0.len());
        // SAFETY: the caller's contract: the slot is in the table; SSE2 is part of x86-64, and
        // the loads read the slot's 16 floats, aligned.
        unsafe {
            let at: *const f32 = self.0.get_unchecked(x.bone as usize).0.as_ptr();
            [
                _mm_load_ps(at),
                _mm_load_ps(at.add(4)),
                _mm_load_ps(at.add(8)),
                _mm_load_ps(at.add(12)),
            ]
        }
    }
}

/// A blend's columns 0 and 1 (`s01`) and 2 and 3 (`s23`) as four columns.
#[inline(always)]
fn split_columns(s01: __m256, s23: __m256) -> [__m128; 4] {
    // SAFETY: runs only inside avx2(), where AVX is present.
    unsafe {
        [
            _mm256_castps256_ps128(s01),
            _mm256_extractf128_ps(s01, 1),
            _mm256_castps256_ps128(s23),
            _mm256_extractf128_ps(s23, 1),
        ]
    }
}

/// Keeps a blend's columns 0 and 1 (`s01`) and 2 and 3 (`s23`) in `slot`, as
/// [`Backend::save`] of [`split_columns`] would.
#[inline(always)]
fn save_halves(s01: __m256, s23: __m256, slot: &mut Slot) {
    let at: *mut f32 = slot.0.as_mut_ptr();
    // SAFETY: runs only inside avx2(), where AVX is present; the stores write the slot's 16
    // floats, 32-byte aligned.
    unsafe {
        _mm256_store_ps(at, s01);
        _mm256_store_ps(at.add(8), s23);
    }
}

/// Stores `(x, y, z, _)` as the 12 bytes `x y z` at `at`.
///
/// # Safety
/// The 12 bytes at `at` are writable.
#[inline(always)]
unsafe fn store_xyz(at: *mut u8, v: __m128) {
    // SAFETY: the caller hands over 12 writable bytes; an 8-byte and a 4-byte store, unaligned.
    unsafe {
        _mm_storel_epi64(at.cast(), _mm_castps_si128(v));
        _mm_store_ss(at.add(8).cast(), _mm_movehl_ps(v, v));
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

impl<'t> Backend for Avx2<'t> {
    type Out = RawTarget<'t>;
    type Mat = [__m128; 4];
    type Rel = [__m128; 4];
    type Wide = (Spread<__m256>, [__m128; 4]);

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
            columns3(rows[0], rows[1], rows[2])
        }
    }

    #[inline(always)]
    fn bone(&self, m: &Mat3x4) -> [__m128; 4] {
        columns3(row(m, 0), row(m, 1), row(m, 2))
    }

    #[inline(always)]
    fn blend(&self, members: &[Member], rel: &[[__m128; 4]]) -> [__m128; 4] {
        debug_assert!(members.iter().all(|m| (m.slot as usize) < rel.len()));
        // SAFETY: FMA and AVX are present (see Avx2); each load reads 32 of a slot's 64 bytes;
        // every member's slot is below the palette's bone count, which `rel` has room for
        // (SkinPlan::build numbers them so, and palette() sizes `rel`).
        unsafe {
            let (mut s01, mut s23) = (_mm256_setzero_ps(), _mm256_setzero_ps());
            // The first product alone, then one fused multiply-add per member.
            if let Some((first, rest)) = members.split_first() {
                let f = _mm256_set1_ps(first.weight);
                let m = rel.get_unchecked(first.slot as usize);
                s01 = _mm256_mul_ps(f, halves_of(m).0);
                s23 = _mm256_mul_ps(f, halves_of(m).1);
                for member in rest {
                    let f = _mm256_set1_ps(member.weight);
                    let m = rel.get_unchecked(member.slot as usize);
                    s01 = _mm256_fmadd_ps(f, halves_of(m).0, s01);
                    s23 = _mm256_fmadd_ps(f, halves_of(m).1, s23);
                }
            }
            split_columns(s01, s23)
        }
    }

    blends_by_member_count!();

    #[inline(always)]
    fn widen(&self, m: &[__m128; 4]) -> (Spread<__m256>, [__m128; 4]) {
        // SAFETY: AVX2 is present (see Avx2). Columns hold rows 0, 1, 2 in their lanes; the
        // spread is `[c | c]`, and `[t | 0]` for the translation, which normals do without.
        unsafe {
            let mut k = [[_mm256_setzero_ps(); 4]; 3];
            for (j, &c) in m.iter().enumerate() {
                for (r, k) in k.iter_mut().enumerate() {
                    let v = match r {
                        0 => _mm_permute_ps(c, 0x00),
                        1 => _mm_permute_ps(c, 0x55),
                        _ => _mm_permute_ps(c, 0xAA),
                    };
                    k[j] = if j == 3 {
                        _mm256_zextps128_ps256(v)
                    } else {
                        _mm256_set_m128(v, v)
                    };
                }
            }
            (k, *m)
        }
    }

    #[inline(always)]
    fn save(&self, m: &[__m128; 4], slot: &mut Slot) {
        let at: *mut f32 = slot.0.as_mut_ptr();
        // SAFETY: SSE2 is part of x86-64; the stores write the slot's 16 floats, at 16-byte
        // aligned addresses.
        unsafe {
            for (k, &c) in m.iter().enumerate() {
                _mm_store_ps(at.add(4 * k), c);
            }
        }
    }

    #[inline(always)]
    fn load(&self, slot: &Slot) -> [__m128; 4] {
        let at: *const f32 = slot.0.as_ptr();
        // SAFETY: SSE2 is part of x86-64; the loads read the slot's 16 floats, aligned.
        unsafe {
            [
                _mm_load_ps(at),
                _mm_load_ps(at.add(4)),
                _mm_load_ps(at.add(8)),
                _mm_load_ps(at.add(12)),
            ]
        }
    }

    #[inline(always)]
    fn point<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        m: [__m128; 4],
        x: &Influence,
        out: &mut RawTarget,
        e: usize,
    ) {
        let (p, n) = self.transform::<NORMALS, ONE>(&m, x);
        // SAFETY: SSE2 is part of x86-64. (x, y, z, 0) to the (x, y, y, z) emit stores.
        let (p, n) = unsafe { (_mm_permute_ps(p, 0x94), _mm_permute_ps(n, 0x94)) };
        emit::<__m128, NORMALS, UNIT>(out, e, p, n);
    }

    #[inline(always)]
    fn stretch<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        table: &[Slot],
        x: &[Influence],
        out: &mut RawTarget<'t>,
        e: usize,
    ) {
        let shape = Shape::of(out, NORMALS);
        if UNIT {
            stretch_by_vertex::<Self, NORMALS, UNIT, ONE>(self, table, x, out, e);
        } else if let (true, Some((base, position_first))) = (NORMALS, shape.pair) {
            // SAFETY: drive() hands over elements below count, which skin_mesh checked against
            // the capacity; side by side, an element's 24 bytes start at `base` plus 24 per
            // element; `table` has the plan's slots.
            unsafe { self.lanes_pair::<_, ONE>(&Table(table), x, base, position_first, e) };
        } else if shape.packed_positions && (!NORMALS || shape.packed_normals) {
            // SAFETY: as above, the streams packed.
            unsafe { self.lanes_packed::<_, NORMALS, ONE>(&Table(table), x, out, e) };
        } else {
            stretch_by_vertex::<Self, NORMALS, UNIT, ONE>(self, table, x, out, e);
        }
    }

    #[inline(always)]
    fn run<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        (k, m): &(Spread<__m256>, [__m128; 4]),
        x: &[Influence],
        out: &mut RawTarget,
        e: usize,
    ) {
        let shape = Shape::of(out, NORMALS);
        let pair = if NORMALS { shape.pair } else { None };
        let packed = shape.packed_positions && (!NORMALS || shape.packed_normals);
        if x.len() >= 8 && (pair.is_some() || packed) {
            // SAFETY: drive() hands over elements below count, which skin_mesh checked against
            // the capacity; side by side, an element's 24 bytes start at `base` plus 24 per
            // element; else the streams are packed.
            unsafe {
                match pair {
                    Some((base, true)) => self.run8::<NORMALS, UNIT, ONE, 1>(k, x, out, base, e),
                    Some((base, false)) => self.run8::<NORMALS, UNIT, ONE, 2>(k, x, out, base, e),
                    None => self.run8::<NORMALS, UNIT, ONE, 0>(k, x, out, out.positions, e),
                }
            }
        } else if UNIT {
            run4::<Self, NORMALS, UNIT, ONE>(self, k, x, out, e);
        } else if let Some((base, position_first)) = pair {
            // SAFETY: as above.
            unsafe { self.lanes_pair::<_, ONE>(&Fixed(*m), x, base, position_first, e) };
        } else if packed {
            // SAFETY: as above, the streams packed.
            unsafe { self.lanes_packed::<_, NORMALS, ONE>(&Fixed(*m), x, out, e) };
        } else {
            run4::<Self, NORMALS, UNIT, ONE>(self, k, x, out, e);
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
        // SAFETY: AVX and FMA are present (see Avx2); the loads read one Influence (aligned, as
        // its type is) or inside one row of a Mat3x4.
        unsafe {
            let keep7 = _mm256_castsi256_ps(_mm256_set_epi32(0, -1, -1, -1, -1, -1, -1, -1));
            let mut acc = [_mm256_setzero_ps(); 3];
            for i in infl {
                let Some(m) = bones.get(i.bone as usize) else {
                    continue;
                };
                let at: *const f32 = std::ptr::from_ref(i).cast();
                let x = _mm256_and_ps(_mm256_load_ps(at), keep7);
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

#[target_feature(enable = "avx2,fma")]
fn avx2(job: &Job, table: &mut [Slot], normals: bool, unit: bool, out: &mut RawTarget) {
    let b = Avx2(PhantomData);
    drive(&b, job, table, normals, unit, out);
}

#[cfg(ossa_avx512)]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
fn avx512(job: &Job, table: &mut [Slot], normals: bool, unit: bool, out: &mut RawTarget) {
    let b = avx512::Avx512(Avx2(PhantomData));
    drive(&b, job, table, normals, unit, out);
}

/// Skins `job` with `kernel` (AVX-512, AVX2 or SSE2; the caller checked this CPU runs it);
/// `table` has the plan's [`super::plan::SkinPlan::table_len`] slots.
pub(super) fn run(
    kernel: Kernel,
    job: &Job,
    table: &mut [Slot],
    normals: bool,
    unit: bool,
    out: &mut RawTarget,
) {
    match kernel {
        // SAFETY: the caller checked Kernel::Avx512.is_available(): AVX-512 F and VL, AVX2 and
        // FMA are present.
        #[cfg(ossa_avx512)]
        Kernel::Avx512 => unsafe { avx512(job, table, normals, unit, out) },
        // SAFETY: the caller checked Kernel::Avx2.is_available(): AVX2 and FMA are present.
        Kernel::Avx2 => unsafe { avx2(job, table, normals, unit, out) },
        _ => drive(&Simd4::<__m128>::new(), job, table, normals, unit, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skin::plan::LIST_MAX;

    /// `list` blended by [`Backend::blend_list`] and set by set, over vertices `range`.
    #[target_feature(enable = "avx2,fma")]
    fn both_ways(
        list: &[Group],
        members: &[Member],
        rel: &[[__m128; 4]],
        range: (u32, u32),
    ) -> (Vec<Slot>, Vec<Slot>) {
        let b = Avx2(PhantomData);
        let (mut listed, mut each) = (
            vec![Slot::default(); list.len()],
            vec![Slot::default(); list.len()],
        );
        b.blend_list(list, members, rel, &mut listed, range);
        blend_each(&b, list, members, rel, &mut each, range);
        (listed, each)
    }

    /// A list's blends, its members' matrices loaded once, have the bits of blending its sets
    /// one by one, for every member count the list code takes and one past it; a set with runs
    /// or without vertices in the range is left alone both ways.
    #[test]
    fn a_list_blends_as_its_sets_do() {
        if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
            eprintln!("a_list_blends_as_its_sets_do: skipped, this CPU lacks AVX2 or FMA");
            return;
        }
        let rel: Vec<[__m128; 4]> = (0..12)
            .map(|b| {
                let v: [f32; 16] = std::array::from_fn(|e| (b * 16 + e) as f32 * 0.173 - 7.1);
                // SAFETY: SSE2 is part of x86-64; each load reads four of the sixteen floats.
                unsafe { std::array::from_fn(|c| _mm_loadu_ps(v.as_ptr().add(4 * c))) }
            })
            .collect();
        let bits = |s: &Slot| s.0.map(f32::to_bits);
        for k in 2..=LIST_MAX + 1 {
            let mut members = Vec::new();
            let mut list = Vec::new();
            for s in 0..5u32 {
                let key = members.len() as u32;
                members.extend((0..k).map(|j| Member {
                    slot: ((j * 5 + 3) % 12) as u32,
                    weight: 0.1 + 0.37 * (s as f32 + 1.0) / (j as f32 + 1.7),
                }));
                let (lo, hi, runs) = match s {
                    3 => (200, 300, (0, 0)),
                    4 => (0, 10, (1, 2)),
                    _ => (0, 10, (0, 0)),
                };
                list.push(Group {
                    key,
                    members_end: members.len() as u32,
                    lo,
                    hi,
                    runs,
                    weight_one: true,
                });
            }
            // SAFETY: this CPU has AVX2 and FMA (checked above).
            let (listed, each) = unsafe { both_ways(&list, &members, &rel, (0, 100)) };
            for (s, (a, b)) in listed.iter().zip(&each).enumerate() {
                assert_eq!(bits(a), bits(b), "{k} members, set {s}");
                let blended = a.0.iter().any(|&x| x != 0.0);
                assert_eq!(blended, s < 3, "{k} members, set {s}");
            }
        }
    }
}
