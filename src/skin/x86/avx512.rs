//! The AVX-512 kernel (F and VL, with AVX2 and FMA): AVX2's arithmetic in AVX2's order, so
//! AVX2's bits, with the work that suits 512-bit registers done in them.
//!
//! A run (consecutive vertices under one matrix) is skinned sixteen vertices a step. The
//! step loads its sixteen 32-byte records `(o, f, n, _)` as eight 64-byte registers, two
//! records each, and turns them into lanes with in-lane operations only (the 4x4 transposition
//! SSE2 does, in the four 128-bit lanes at once): for records 0 to 7, three registers hold the
//! x, y and z of `[o0 o2 o4 o6 | n0 n2 n4 n6 | o1 o3 o5 o7 | n1 n3 n5 n7]`, and three more
//! records 8 to 15. Positions and normals then share each multiply-add: with the run's
//! matrix broadcast once for the run, row `r` of a result is `((t f + c0 x) + c1 y) + c2 z`
//! where `t` is the translation in the positions' lanes and zero in the normals', which is
//! AVX2's chain for a position and for a normal (its normal starts from `+0`), lane for lane.
//! Normals made unit length take AVX2's `unit4` operations in sixteen lanes.
//!
//! The six result registers go out in the caller's layout: packed positions or normals (12-byte
//! elements) as three 64-byte stores each, position and normal side by side in 24-byte elements
//! as six, each made by two permutes (the three coordinates of the vertices it covers); for
//! 32-byte elements, position and normal at 0 and 16 either way round, the in-lane transposition
//! back gives each record's `(p, n)` in 256 bits, stored two elements at a time under a mask
//! that skips their fourth floats; any other stride, each 12 bytes under a mask. A step with
//! fewer than sixteen vertices left loads its records and stores its elements under masks: no
//! byte outside the run's records is read, none outside its elements written.
//!
//! Stretches (each vertex with its own matrix) and vertices skinned influence by influence are
//! AVX2's code. A palette set's blend `sum f_k (pose_k inverse_bind_k)` keeps the matrix's four
//! columns in one register: one multiply-add per member where AVX2 takes two, the same bits.

// Built only where the compiler has AVX-512's intrinsics (Rust 1.89, which build.rs checks for):
// older compilers, down to the crate's rust-version, leave this module out.
#![allow(clippy::incompatible_msrv)]

use std::arch::x86_64::*;

use super::super::plan::{Group, Member};
use super::super::{Backend, RawTarget, Slot, blend_each, overlaps};
use super::{Avx2, Shape};
use crate::math::Mat3x4;
use crate::model::Influence;

/// The kernel; made only by [`super::avx512`], which runs where the CPU has AVX-512 F and VL,
/// AVX2 and FMA, so its methods may use them.
pub(super) struct Avx512<'t>(pub(super) Avx2<'t>);

/// A run's matrix for [`Avx512::run`]: `k[r][j]` holds row `r` of column `j` in every lane, and
/// for `j = 3` (the translation) in the positions' lanes only, zero in the normals'.
pub(super) struct Wide16 {
    k: [[__m512; 4]; 3],
}

/// The lanes that hold positions after the transposition (128-bit lanes 0 and 2).
const POSITIONS: __mmask16 = 0x0F0F;
/// The lanes that hold normals (128-bit lanes 1 and 3).
const NORMAL_LANES: __mmask16 = 0xF0F0;

/// Vertices a step.
const STEP: usize = 16;

/// Where record `i` (0 to 15) of a step lies after the transposition: which of the two sets of
/// three registers (records 0 to 7, 8 to 15), and the lane of its position (`normal` false) or
/// its normal.
const fn lane_of(i: usize, normal: bool) -> (usize, usize) {
    let w = i % 8;
    let l = 2 * (w % 2) + normal as usize;
    (i / 8, 4 * l + w / 2)
}

/// How one 64-byte register of output is gathered from a set's three result registers `v`:
/// `permutex2var(v[0], xy, v[1])` gives the lanes of x and y, lanes `z_lanes[g]` then take
/// `v[2]`'s lane `z` (for set `g`), and the lanes in `second` come from the second set.
#[derive(Clone, Copy)]
struct Gather {
    xy: [i32; 16],
    z: [i32; 16],
    z_lanes: [u16; 2],
    second: u16,
}

/// The [`Gather`] of output register `o` of a stream holding `per_vertex` floats a vertex: 3
/// (packed positions, or normals when `normal_first`) or 6 (a position and its normal side by
/// side; the normal first when `normal_first`).
const fn gather(o: usize, per_vertex: usize, normal_first: bool) -> Gather {
    let mut g = Gather {
        xy: [0; 16],
        z: [0; 16],
        z_lanes: [0; 2],
        second: 0,
    };
    let mut j = 0;
    while j < 16 {
        let at = 16 * o + j;
        let (i, within) = (at / per_vertex, at % per_vertex);
        let normal = (within < 3) == normal_first;
        let c = within % 3;
        let (set, q) = lane_of(i, normal);
        g.xy[j] = if c == 1 { 16 + q as i32 } else { q as i32 };
        g.z[j] = q as i32;
        if c == 2 {
            g.z_lanes[set] |= 1 << j;
        }
        if set == 1 {
            g.second |= 1 << j;
        }
        j += 1;
    }
    g
}

const fn gathers<const N: usize>(per_vertex: usize, normal_first: bool) -> [Gather; N] {
    let mut out = [gather(0, per_vertex, normal_first); N];
    let mut o = 1;
    while o < N {
        out[o] = gather(o, per_vertex, normal_first);
        o += 1;
    }
    out
}

const PACKED_POSITIONS: [Gather; 3] = gathers(3, false);
const PACKED_NORMALS: [Gather; 3] = gathers(3, true);
const PAIR_POSITION_FIRST: [Gather; 6] = gathers(6, false);
const PAIR_NORMAL_FIRST: [Gather; 6] = gathers(6, true);

/// The first `n` (at most 16) lanes.
#[inline(always)]
fn first_lanes(n: usize) -> __mmask16 {
    if n >= 16 {
        0xFFFF
    } else {
        ((1u32 << n) - 1) as __mmask16
    }
}

/// The lanes of output register `g` that set `s` of the results `v` fills (and others).
///
/// # Safety
/// AVX-512 F is present.
#[inline(always)]
unsafe fn gathered_from(g: &Gather, v: &[[__m512; 3]; 2], s: usize) -> __m512 {
    // SAFETY: the caller's contract; each index load reads sixteen i32s of a constant.
    unsafe {
        let xy = _mm512_loadu_epi32(g.xy.as_ptr());
        let z = _mm512_loadu_epi32(g.z.as_ptr());
        let t = _mm512_permutex2var_ps(v[s][0], xy, v[s][1]);
        _mm512_mask_permutexvar_ps(t, g.z_lanes[s], z, v[s][2])
    }
}

/// The output register `g` describes, from the results `v` of the step's two sets.
///
/// # Safety
/// AVX-512 F is present.
#[inline(always)]
unsafe fn gathered(g: &Gather, v: &[[__m512; 3]; 2]) -> __m512 {
    // SAFETY: the caller's contract.
    unsafe {
        match g.second {
            0 => gathered_from(g, v, 0),
            0xFFFF => gathered_from(g, v, 1),
            second => _mm512_mask_mov_ps(gathered_from(g, v, 0), second, gathered_from(g, v, 1)),
        }
    }
}

/// Stores the output registers `gathers` describe from `at`, 64 bytes each: the first
/// `floats` floats of them (all, when `FULL`).
///
/// # Safety
/// The `floats` floats from `at` are writable (all of the registers' when `FULL`); AVX-512 F
/// is present.
#[inline(always)]
unsafe fn put_gathered<const FULL: bool, const N: usize>(
    at: *mut f32,
    gathers: &[Gather; N],
    v: &[[__m512; 3]; 2],
    floats: usize,
) {
    // SAFETY: the caller's contract: whole registers only when FULL, else under a mask of the
    // floats below `floats`.
    unsafe {
        for (o, g) in gathers.iter().enumerate() {
            if FULL {
                _mm512_storeu_ps(at.add(16 * o), gathered(g, v));
            } else if floats > 16 * o {
                let mask = first_lanes(floats - 16 * o);
                _mm512_mask_storeu_ps(at.add(16 * o), mask, gathered(g, v));
            }
        }
    }
}

/// Where the AVX-512 run path stores a step's elements: a constant of the step loop, so that
/// the loop holds no branch on the layout.
/// Positions packed, and normals too when there are normals.
const PACKED: u8 = 0;
/// 24-byte elements, the position first ([`PAIR_NP`]: the normal first).
const PAIR_PN: u8 = 1;
const PAIR_NP: u8 = 2;
/// 32-byte elements, the position at 0 and the normal at 16 ([`QUAD_NP`]: the other way).
const QUAD_PN: u8 = 3;
const QUAD_NP: u8 = 4;
/// Each 12-byte field where the target's strides put it.
const EACH: u8 = 5;

/// How `out` is stored ([`PACKED`] to [`EACH`]), and where its side-by-side elements start.
fn layout_of(out: &RawTarget, normals: bool) -> (u8, *mut u8) {
    let shape = Shape::of(out, normals);
    if shape.packed_positions && (!normals || shape.packed_normals) {
        return (PACKED, out.positions);
    }
    if let (true, Some((base, position_first))) = (normals, shape.pair) {
        return (if position_first { PAIR_PN } else { PAIR_NP }, base);
    }
    if normals && out.position_stride == 32 && out.normal_stride == 32 {
        if out.normals == out.positions.wrapping_add(16) {
            return (QUAD_PN, out.positions);
        }
        if out.positions == out.normals.wrapping_add(16) {
            return (QUAD_NP, out.normals);
        }
    }
    (EACH, out.positions)
}

impl Avx512<'_> {
    /// Sixteen records from `at` (the first `r` of them when `FULL` is false, the others read as
    /// zeros) skinned with `k`: for each set of eight records, the x, y and z registers of
    /// their positions and normals, lanes as [`lane_of`] says.
    ///
    /// # Safety
    /// The `r` records from `at` are readable (all sixteen when `FULL`).
    #[inline(always)]
    unsafe fn step<const UNIT: bool, const ONE: bool, const FULL: bool>(
        &self,
        k: &Wide16,
        at: *const f32,
        r: usize,
    ) -> [[__m512; 3]; 2] {
        // SAFETY: the caller's contract: unmasked loads read whole records, masked ones only
        // the records below `r`; AVX-512 F is present (see Avx512).
        unsafe {
            let zero = _mm512_setzero_ps();
            let mut out = [[zero; 3]; 2];
            for (s, out) in out.iter_mut().enumerate() {
                let mut l = [zero; 4];
                for (m, l) in l.iter_mut().enumerate() {
                    let i = 8 * s + 2 * m;
                    let from = at.add(8 * i);
                    *l = if FULL {
                        _mm512_loadu_ps(from)
                    } else {
                        let mask =
                            (if i < r { 0x00FF } else { 0 }) | (if i + 1 < r { 0xFF00 } else { 0 });
                        _mm512_maskz_loadu_ps(mask, from)
                    };
                }
                // Lane by lane, the 4x4 transposition of the four registers' 128-bit lanes.
                let (t0, t1) = (
                    _mm512_unpacklo_ps(l[0], l[1]),
                    _mm512_unpackhi_ps(l[0], l[1]),
                );
                let (t2, t3) = (
                    _mm512_unpacklo_ps(l[2], l[3]),
                    _mm512_unpackhi_ps(l[2], l[3]),
                );
                let x = _mm512_shuffle_ps(t0, t2, 0x44);
                let y = _mm512_shuffle_ps(t0, t2, 0xEE);
                let z = _mm512_shuffle_ps(t1, t3, 0x44);
                for (o, &[c0, c1, c2, t]) in out.iter_mut().zip(&k.k) {
                    let acc = if ONE {
                        t
                    } else {
                        // The weights in the positions' lanes; the normals' start from +0.
                        let f = _mm512_shuffle_ps(t1, t3, 0xEE);
                        _mm512_maskz_mul_ps(POSITIONS, t, f)
                    };
                    let acc = _mm512_fmadd_ps(c0, x, acc);
                    let acc = _mm512_fmadd_ps(c1, y, acc);
                    *o = _mm512_fmadd_ps(c2, z, acc);
                }
                if UNIT {
                    // `unit4`'s operations: n / sqrt((x x + y y) + z z) where that is above 0.
                    let [x, y, z] = *out;
                    let len = _mm512_sqrt_ps(_mm512_add_ps(
                        _mm512_add_ps(_mm512_mul_ps(x, x), _mm512_mul_ps(y, y)),
                        _mm512_mul_ps(z, z),
                    ));
                    let keep = _mm512_cmp_ps_mask(len, zero, _CMP_GT_OQ) & NORMAL_LANES;
                    for o in out.iter_mut() {
                        *o = _mm512_mask_div_ps(*o, keep, *o, len);
                    }
                }
            }
            out
        }
    }

    /// Stores the step's elements `[e, e + r)` (all sixteen when `FULL`) as `LAYOUT` says,
    /// side-by-side elements from `base`.
    ///
    /// # Safety
    /// Elements `[e, e + r)` lie in the target's buffers (its capacity), as [`layout_of`]
    /// found them.
    #[inline(always)]
    unsafe fn put<const NORMALS: bool, const FULL: bool, const LAYOUT: u8>(
        &self,
        v: &[[__m512; 3]; 2],
        out: &mut RawTarget,
        base: *mut u8,
        e: usize,
        r: usize,
    ) {
        // SAFETY: the caller's contract: every store covers only floats of elements below
        // e + r (whole registers only when all sixteen are asked for); AVX-512 F and VL are
        // present (see Avx512).
        unsafe {
            match LAYOUT {
                PACKED => {
                    let at: *mut f32 = out.positions.add(12 * e).cast();
                    put_gathered::<FULL, 3>(at, &PACKED_POSITIONS, v, 3 * r);
                    if NORMALS {
                        let at: *mut f32 = out.normals.add(12 * e).cast();
                        put_gathered::<FULL, 3>(at, &PACKED_NORMALS, v, 3 * r);
                    }
                }
                PAIR_PN | PAIR_NP => {
                    let at: *mut f32 = base.add(24 * e).cast();
                    if LAYOUT == PAIR_PN {
                        put_gathered::<FULL, 6>(at, &PAIR_POSITION_FIRST, v, 6 * r);
                    } else {
                        put_gathered::<FULL, 6>(at, &PAIR_NORMAL_FIRST, v, 6 * r);
                    }
                }
                QUAD_PN | QUAD_NP => {
                    for (s, v) in v.iter().enumerate() {
                        for (m, q) in self.records(v).into_iter().enumerate() {
                            // Records i and i + 1: (p, n, p, n), or (n, p, n, p).
                            let i = 8 * s + 2 * m;
                            let q = if LAYOUT == QUAD_PN {
                                q
                            } else {
                                _mm512_shuffle_f32x4(q, q, 0xB1)
                            };
                            let mask = (if FULL || i < r { 0x0077 } else { 0 })
                                | (if FULL || i + 1 < r { 0x7700 } else { 0 });
                            if mask != 0 {
                                _mm512_mask_storeu_ps(base.add(32 * (e + i)).cast(), mask, q);
                            }
                        }
                    }
                }
                _ => {
                    let (p, ps) = (out.positions, out.position_stride);
                    let (n, ns) = (out.normals, out.normal_stride);
                    for (s, v) in v.iter().enumerate() {
                        for (m, q) in self.records(v).into_iter().enumerate() {
                            let i = 8 * s + 2 * m;
                            let lanes = [
                                _mm512_castps512_ps128(q),
                                _mm512_extractf32x4_ps(q, 1),
                                _mm512_extractf32x4_ps(q, 2),
                                _mm512_extractf32x4_ps(q, 3),
                            ];
                            for (h, pair) in lanes.chunks_exact(2).enumerate() {
                                let i = i + h;
                                if !FULL && i >= r {
                                    break;
                                }
                                let e = e + i;
                                _mm_mask_storeu_ps(p.add(e * ps).cast(), 0b0111, pair[0]);
                                if NORMALS {
                                    _mm_mask_storeu_ps(n.add(e * ns).cast(), 0b0111, pair[1]);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Skins the run `x` into elements `[e, e + x.len())`, sixteen a step, the last step's
    /// records and elements under masks.
    ///
    /// # Safety
    /// As [`Avx512::put`], for the elements `[e, e + x.len())`; the CPU has AVX-512 F and VL,
    /// AVX2 and FMA.
    ///
    /// A function of its own, with the kernel's features, rather than inlined into the one
    /// that walks the plan: unoptimised builds give every temporary of a function its own
    /// stack slot, and with the loop's every layout inlined there the walk's frame outgrew a
    /// test thread's 2 MiB stack.
    #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
    unsafe fn steps<const NORMALS: bool, const UNIT: bool, const ONE: bool, const LAYOUT: u8>(
        &self,
        k: &Wide16,
        x: &[Influence],
        out: &mut RawTarget,
        base: *mut u8,
        e: usize,
    ) {
        let mut blocks = x.chunks_exact(STEP);
        let mut at = e;
        for block in &mut blocks {
            let from: *const f32 = block.as_ptr().cast();
            // SAFETY: `block` holds sixteen records; the caller's contract for the elements.
            unsafe {
                let v = self.step::<UNIT, ONE, true>(k, from, STEP);
                self.put::<NORMALS, true, LAYOUT>(&v, out, base, at, STEP);
            }
            at += STEP;
        }
        let rest = blocks.remainder();
        if !rest.is_empty() {
            let from: *const f32 = rest.as_ptr().cast();
            let r = rest.len();
            // SAFETY: as above, for the `r` records of `rest` and their elements.
            unsafe {
                let v = self.step::<UNIT, ONE, false>(k, from, r);
                self.put::<NORMALS, false, LAYOUT>(&v, out, base, at, r);
            }
        }
    }

    /// A set's results `[x, y, z]` back as records: register `m` holds `(p, n)` of its records
    /// `2m` and `2m + 1`, each `(x, y, z, 0)`.
    #[inline(always)]
    fn records(&self, [x, y, z]: &[__m512; 3]) -> [__m512; 4] {
        // SAFETY: AVX-512 F is present (see Avx512).
        unsafe {
            let zero = _mm512_setzero_ps();
            let (a, b) = (_mm512_unpacklo_ps(*x, *y), _mm512_unpackhi_ps(*x, *y));
            let (c, d) = (_mm512_unpacklo_ps(*z, zero), _mm512_unpackhi_ps(*z, zero));
            [
                _mm512_shuffle_ps(a, c, 0x44),
                _mm512_shuffle_ps(a, c, 0xEE),
                _mm512_shuffle_ps(b, d, 0x44),
                _mm512_shuffle_ps(b, d, 0xEE),
            ]
        }
    }

    /// [`Backend::blend_list`] for lists of sets of `K` members: the members' matrices loaded
    /// once, then each set's weights times them in member order.
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
        // SAFETY: AVX-512 F is present (see Avx512).
        let mut m = [unsafe { _mm512_setzero_ps() }; K];
        for (m, member) in m.iter_mut().zip(common) {
            if let Some(r) = rel.get(member.slot as usize) {
                *m = whole(r);
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
            // SAFETY: AVX-512 F is present (see Avx512).
            unsafe {
                let mut sum = _mm512_mul_ps(_mm512_set1_ps(weights[0].weight), m[0]);
                for j in 1..K {
                    sum = _mm512_fmadd_ps(_mm512_set1_ps(weights[j].weight), m[j], sum);
                }
                save16(sum, slot);
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
            // SAFETY: AVX-512 F is present (see Avx512); every member's slot is below the
            // palette's bone count, which `rel` has room for (SkinPlan::build numbers them so,
            // and palette() sizes `rel`).
            unsafe {
                let m = whole(rel.get_unchecked(set[0].slot as usize));
                let mut sum = _mm512_mul_ps(_mm512_set1_ps(set[0].weight), m);
                for member in &set[1..] {
                    let m = whole(rel.get_unchecked(member.slot as usize));
                    sum = _mm512_fmadd_ps(_mm512_set1_ps(member.weight), m, sum);
                }
                save16(sum, slot);
            }
        }
    }
}

/// A matrix's four columns in one register.
#[inline(always)]
fn whole(m: &[__m128; 4]) -> __m512 {
    // SAFETY: AVX-512 F is present (see Avx512); the load reads the 64 bytes of `m`.
    unsafe { _mm512_loadu_ps(m.as_ptr().cast()) }
}

/// Keeps a blend's four columns in `slot`, as [`Backend::save`] of [`columns16`] would.
#[inline(always)]
fn save16(m: __m512, slot: &mut Slot) {
    // SAFETY: AVX-512 F is present (see Avx512); the store writes the slot's 16 floats, 64-byte
    // aligned.
    unsafe { _mm512_store_ps(slot.0.as_mut_ptr(), m) }
}

/// A register's four columns.
#[inline(always)]
fn columns16(m: __m512) -> [__m128; 4] {
    // SAFETY: AVX-512 F is present (see Avx512).
    unsafe {
        [
            _mm512_castps512_ps128(m),
            _mm512_extractf32x4_ps(m, 1),
            _mm512_extractf32x4_ps(m, 2),
            _mm512_extractf32x4_ps(m, 3),
        ]
    }
}

impl<'t> Backend for Avx512<'t> {
    type Out = RawTarget<'t>;
    type Mat = [__m128; 4];
    type Rel = [__m128; 4];
    type Wide = Wide16;

    #[inline(always)]
    fn zero_rel(&self) -> [__m128; 4] {
        self.0.zero_rel()
    }

    #[inline(always)]
    fn relative(&self, a: &Mat3x4, i: &Mat3x4) -> [__m128; 4] {
        self.0.relative(a, i)
    }

    #[inline(always)]
    fn bone(&self, m: &Mat3x4) -> [__m128; 4] {
        self.0.bone(m)
    }

    #[inline(always)]
    fn blend(&self, members: &[Member], rel: &[[__m128; 4]]) -> [__m128; 4] {
        debug_assert!(members.iter().all(|m| (m.slot as usize) < rel.len()));
        // SAFETY: AVX-512 F is present (see Avx512); every member's slot is below the palette's
        // bone count, which `rel` has room for (as in blend_alone_of).
        unsafe {
            let mut sum = _mm512_setzero_ps();
            // The first product alone, then one fused multiply-add per member, as AVX2 does.
            if let Some((first, rest)) = members.split_first() {
                let m = whole(rel.get_unchecked(first.slot as usize));
                sum = _mm512_mul_ps(_mm512_set1_ps(first.weight), m);
                for member in rest {
                    let m = whole(rel.get_unchecked(member.slot as usize));
                    sum = _mm512_fmadd_ps(_mm512_set1_ps(member.weight), m, sum);
                }
            }
            columns16(sum)
        }
    }

    blends_by_member_count!();

    #[inline(always)]
    fn widen(&self, m: &[__m128; 4]) -> Wide16 {
        // Columns hold rows 0, 1, 2 in their first three lanes.
        let mut c = [[0.0f32; 4]; 4];
        for (c, &m) in c.iter_mut().zip(m) {
            // SAFETY: SSE is part of x86-64; the store writes the four floats of `c`.
            unsafe { _mm_storeu_ps(c.as_mut_ptr(), m) };
        }
        // SAFETY: AVX-512 F is present (see Avx512).
        unsafe {
            let mut k = [[_mm512_setzero_ps(); 4]; 3];
            for (r, k) in k.iter_mut().enumerate() {
                *k = [
                    _mm512_set1_ps(c[0][r]),
                    _mm512_set1_ps(c[1][r]),
                    _mm512_set1_ps(c[2][r]),
                    _mm512_maskz_mov_ps(POSITIONS, _mm512_set1_ps(c[3][r])),
                ];
            }
            Wide16 { k }
        }
    }

    #[inline(always)]
    fn save(&self, m: &[__m128; 4], slot: &mut Slot) {
        self.0.save(m, slot);
    }

    #[inline(always)]
    fn load(&self, slot: &Slot) -> [__m128; 4] {
        self.0.load(slot)
    }

    #[inline(always)]
    fn point<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        m: [__m128; 4],
        x: &Influence,
        out: &mut RawTarget<'t>,
        e: usize,
    ) {
        self.0.point::<NORMALS, UNIT, ONE>(m, x, out, e);
    }

    #[inline(always)]
    fn stretch<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        table: &[Slot],
        x: &[Influence],
        out: &mut RawTarget<'t>,
        e: usize,
    ) {
        self.0.stretch::<NORMALS, UNIT, ONE>(table, x, out, e);
    }

    #[inline(always)]
    fn run<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        k: &Wide16,
        x: &[Influence],
        out: &mut RawTarget,
        e: usize,
    ) {
        debug_assert!(e + x.len() <= out.capacity);
        let (layout, base) = layout_of(out, NORMALS);
        // SAFETY: drive() hands over elements below count, which skin_mesh checked against the
        // capacity, and layout_of read the target's layout.
        unsafe {
            match layout {
                PACKED => self.steps::<NORMALS, UNIT, ONE, PACKED>(k, x, out, base, e),
                PAIR_PN => self.steps::<NORMALS, UNIT, ONE, PAIR_PN>(k, x, out, base, e),
                PAIR_NP => self.steps::<NORMALS, UNIT, ONE, PAIR_NP>(k, x, out, base, e),
                QUAD_PN => self.steps::<NORMALS, UNIT, ONE, QUAD_PN>(k, x, out, base, e),
                QUAD_NP => self.steps::<NORMALS, UNIT, ONE, QUAD_NP>(k, x, out, base, e),
                _ => self.steps::<NORMALS, UNIT, ONE, EACH>(k, x, out, base, e),
            }
        }
    }

    #[inline(always)]
    fn direct<const NORMALS: bool, const UNIT: bool>(
        &self,
        infl: &[Influence],
        bones: &[Mat3x4],
        out: &mut RawTarget<'t>,
        e: usize,
    ) {
        self.0.direct::<NORMALS, UNIT>(infl, bones, out, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every output float of every layout comes from exactly one lane, and together the lanes
    /// name each record's position and normal coordinates once.
    #[test]
    fn gathers_name_each_coordinate_once() {
        for (per_vertex, normal_first, gathers) in [
            (3, false, &PACKED_POSITIONS[..]),
            (3, true, &PACKED_NORMALS[..]),
            (6, false, &PAIR_POSITION_FIRST[..]),
            (6, true, &PAIR_NORMAL_FIRST[..]),
        ] {
            let mut seen = std::collections::HashSet::new();
            for (o, g) in gathers.iter().enumerate() {
                for j in 0..16 {
                    let at = 16 * o + j;
                    let (i, within) = (at / per_vertex, at % per_vertex);
                    let normal = (within < 3) == normal_first;
                    let (set, q) = lane_of(i, normal);
                    assert_eq!(g.second >> j & 1, set as u16);
                    let is_z = g.z_lanes[set] >> j & 1 == 1;
                    assert_eq!(is_z, within % 3 == 2);
                    let lane = if is_z { g.z[j] } else { g.xy[j] % 16 };
                    assert_eq!(lane as usize, q);
                    assert!(seen.insert((set, lane, within % 3)));
                }
            }
            assert_eq!(seen.len(), 16 * per_vertex);
        }
    }
}
