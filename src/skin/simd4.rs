//! The four-lane kernel, written once over [`Lanes`]: SSE2 on x86-64 (always there) and
//! WebAssembly's SIMD128 run this same code, doing the portable kernel's operations in its
//! order, so both give its bits. It keeps a matrix's four columns in four registers and a
//! vertex's position and normal in two. Its lanes hold `(x, y, y, z)`, the middle row computed
//! twice, so that a 12-byte element is stored as two overlapping 8-byte stores, `x y` at its
//! start and `y z` four bytes on, with no shuffle: nothing is written outside the element, and a
//! target's last element may end exactly where the caller's buffer does.
//!
//! Runs of consecutive vertices read their operands, 32-byte records `(o, f, n, _)`, where they
//! lie (a bone group's in the mesh's influences), four records at a time, transposed into
//! lanes, one vertex per lane, each lane doing what the one-vertex code does in the same order.
//! Where the target's elements are packed (12-byte positions or normals, or both side by side in
//! 24 bytes) the results are interleaved in registers and stored whole: exactly the bytes of
//! those elements. A run's last block overlaps the one before it rather than running past the
//! run, and writes the same bits again.
//!
//! The x86-64 AVX2 kernel shares the storing half ([`Four`], [`run4`], which stores through
//! [`store4`], and [`emit`]), so nothing the AVX2 kernel reaches from here has a closure: a
//! closure is compiled without the kernel's CPU features, and the intrinsics inside it would
//! become calls.

use std::marker::PhantomData;

use super::lanes::Lanes;
use super::plan::Member;
use super::{Backend, RawTarget, Slot};
use crate::math::Mat3x4;
use crate::model::Influence;

/// Stores `(x, y, y, z)` as the 12 bytes `x y z` at `at`.
///
/// # Safety
/// The 12 bytes at `at` are writable.
#[inline(always)]
unsafe fn store3<V: Lanes>(at: *mut u8, v: V) {
    // SAFETY: the caller hands over 12 writable bytes; the stores cover bytes 0..8 and 4..12.
    unsafe {
        v.store_low(at);
        v.store_high(at.add(4));
    }
}

/// `n / sqrt((x x + y y) + z z)` as [`super::normalize`] computes it, `n = (x, y, y, z)` left
/// alone when zero.
#[inline(always)]
fn unit<V: Lanes>(n: V) -> V {
    // Lane 0 of the sum is `(x x + y y) + z z`; the other lanes are not read.
    let sq = n.mul(n);
    let sum = sq
        .add(V::shuffle::<0x55>(sq, sq))
        .add(V::shuffle::<0xFF>(sq, sq));
    let len = sum.sqrt();
    if len.first() > 0.0 {
        n.div(V::shuffle::<0x00>(len, len))
    } else {
        n
    }
}

/// Writes element `e` of `out`.
#[inline(always)]
pub(super) fn emit<V: Lanes, const NORMALS: bool, const UNIT: bool>(
    out: &mut RawTarget,
    e: usize,
    p: V,
    n: V,
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
fn columns<V: Lanes>(r0: V, r1: V, r2: V) -> [V; 4] {
    let t0 = V::unpack_low(r0, r1);
    let u0 = V::unpack_low(r1, r2);
    let t2 = V::unpack_high(r0, r1);
    let u2 = V::unpack_high(r1, r2);
    [
        V::low_halves(t0, u0),
        V::high_halves(u0, t0),
        V::low_halves(t2, u2),
        V::high_halves(u2, t2),
    ]
}

/// Row `r` of `m`.
#[inline(always)]
pub(super) fn row<V: Lanes>(m: &Mat3x4, r: usize) -> V {
    let r = &m.m[4 * r..4 * r + 4];
    // SAFETY: `r` is four floats.
    unsafe { V::load_unaligned(r.as_ptr()) }
}

/// The low four floats of an influence (origin, weight) and the high four (normal, bone bits).
#[inline(always)]
fn halves<V: Lanes>(i: &Influence) -> (V, V) {
    let p: *const f32 = std::ptr::from_ref(i).cast();
    // SAFETY: Influence is repr(C, align(32)), 32 bytes: origin, weight, normal, bone; both
    // loads stay inside it, at 16-byte aligned addresses.
    unsafe { (V::load(p), V::load(p.add(4))) }
}

/// `(0, 0, 0, 1)`: the fourth row of an affine matrix.
pub(super) const E3: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

/// Where a target's elements lie, for storing several at once.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    pub packed_positions: bool,
    pub packed_normals: bool,
    /// 24-byte elements holding the position and the normal side by side: where the first of
    /// the two starts, and whether it is the position.
    pub pair: Option<(*mut u8, bool)>,
}

impl Shape {
    pub fn of(out: &RawTarget, normals: bool) -> Shape {
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

/// Four vertices' x, y, z (one vertex per lane) as three registers of packed 12-byte elements.
#[inline(always)]
fn pack3<V: Lanes>([x, y, z]: [V; 3]) -> [V; 3] {
    let a = V::unpack_low(x, y); // x0 y0 x1 y1
    let b = V::unpack_high(x, y); // x2 y2 x3 y3
    let t = V::shuffle::<0xA0>(z, a); // z0 z0 x1 x1
    let u = V::shuffle::<0x5F>(a, z); // y1 y1 z1 z1
    let w = V::shuffle::<0xAA>(z, b); // z2 z2 x3 x3
    let v = V::shuffle::<0xFF>(b, z); // y3 y3 z3 z3
    [
        V::shuffle::<0x84>(a, t), // x0 y0 z0 x1
        V::shuffle::<0x48>(u, b), // y1 z1 x2 y2
        V::shuffle::<0x88>(w, v), // z2 x3 y3 z3
    ]
}

/// Four vertices' triples `a` and `b` as six registers of 24-byte elements `a b`.
#[inline(always)]
fn pack6<V: Lanes>([ax, ay, az]: [V; 3], [bx, by, bz]: [V; 3]) -> [V; 6] {
    let (a, a2) = (V::unpack_low(ax, ay), V::unpack_high(ax, ay));
    let (b, b2) = (V::unpack_low(az, bx), V::unpack_high(az, bx));
    let (c, c2) = (V::unpack_low(by, bz), V::unpack_high(by, bz));
    [
        V::shuffle::<0x44>(a, b),
        V::shuffle::<0xE4>(c, a),
        V::shuffle::<0xEE>(b, c),
        V::shuffle::<0x44>(a2, b2),
        V::shuffle::<0xE4>(c2, a2),
        V::shuffle::<0xEE>(b2, c2),
    ]
}

/// [`super::normalize`] of four normals given as x, y, z lanes.
#[inline(always)]
fn unit4<V: Lanes>([x, y, z]: [V; 3]) -> [V; 3] {
    let len = x.mul(x).add(y.mul(y)).add(z.mul(z)).sqrt();
    let keep = len.gt(V::zero());
    let mut n = [x, y, z];
    for c in &mut n {
        *c = V::select(keep, c.div(len), *c);
    }
    n
}

/// Stores elements `[e, e + r)` (`r <= 4`) of one stream, positions or normals, given as x, y,
/// z lanes: whole registers where the stream is packed and all four are asked for.
///
/// # Safety
/// The 12 bytes at `base + i * stride` are writable for every element `i` in `[e, e + r)`.
#[inline(always)]
unsafe fn put4<V: Lanes>(
    base: *mut u8,
    stride: usize,
    packed: bool,
    e: usize,
    r: usize,
    v: [V; 3],
) {
    // SAFETY: packed, the four elements are the 48 bytes from `base + 12 e`; else each element
    // gets its own 12 bytes (the caller's contract).
    unsafe {
        if packed && r == 4 {
            let at = base.add(e * 12);
            for (k, o) in pack3(v).into_iter().enumerate() {
                o.store(at.add(16 * k));
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
fn store4<V: Lanes, const NORMALS: bool, const UNIT: bool>(
    out: &mut RawTarget,
    shape: &Shape,
    e: usize,
    r: usize,
    p: [V; 3],
    n: [V; 3],
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
                o.store(at.add(16 * k));
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
pub(super) type Spread<V> = [[V; 4]; 3];

/// How a kernel skins four consecutive operands.
pub(super) trait Four {
    type Wide;
    /// What [`store4`] stores.
    type Lane: Lanes;
    /// The four operands from `at`, each exactly as the kernel's one-vertex code computes it:
    /// their positions' and their normals' x, y and z, one vertex per lane. `ONE`: every weight
    /// is 1.
    ///
    /// # Safety
    /// `at` is the first of four consecutive `Influence` records (32-byte aligned).
    unsafe fn four<const ONE: bool>(
        &self,
        k: &Self::Wide,
        at: *const f32,
    ) -> ([Self::Lane; 3], [Self::Lane; 3]);
}

/// Skins a run four vertices at a time (the last four overlapping when its length is not a
/// multiple of four; fewer than four copied next to zeros, computed four wide and stored one by
/// one).
#[inline(always)]
pub(super) fn run4<F: Four, const NORMALS: bool, const UNIT: bool, const ONE: bool>(
    kernel: &F,
    k: &F::Wide,
    x: &[Influence],
    out: &mut RawTarget,
    e: usize,
) {
    let shape = Shape::of(out, NORMALS);
    let len = x.len();
    if len < 4 {
        let mut padded = [Influence::default(); 4];
        if let (Some(to), Some(from)) = (padded.get_mut(..len), x.get(..len)) {
            to.copy_from_slice(from);
        }
        let at: *const f32 = padded.as_ptr().cast();
        // SAFETY: `padded` holds four records.
        let (p, n) = unsafe { kernel.four::<ONE>(k, at) };
        store4::<F::Lane, NORMALS, UNIT>(out, &shape, e, len, p, n);
        return;
    }
    let mut i = 0;
    loop {
        // The last block ends where the run does.
        let from = i.min(len - 4);
        if let Some(block) = x.get(from..from + 4) {
            let at: *const f32 = block.as_ptr().cast();
            // SAFETY: `block` holds four records.
            let (p, n) = unsafe { kernel.four::<ONE>(k, at) };
            store4::<F::Lane, NORMALS, UNIT>(out, &shape, e + from, 4, p, n);
        }
        if from == len - 4 {
            break;
        }
        i += 4;
    }
}

/// Rows to columns: lane `j` of result `i` is lane `i` of argument `j`.
#[inline(always)]
fn transpose4<V: Lanes>([a, b, c, d]: [V; 4]) -> [V; 4] {
    let (t0, t1) = (V::unpack_low(a, b), V::unpack_low(c, d));
    let (t2, t3) = (V::unpack_high(a, b), V::unpack_high(c, d));
    [
        V::low_halves(t0, t1),
        V::high_halves(t1, t0),
        V::low_halves(t2, t3),
        V::high_halves(t3, t2),
    ]
}

/// The four-lane kernel over `V`, writing into a `RawTarget<'t>`.
pub(super) struct Simd4<'t, V>(PhantomData<fn(&'t ()) -> V>);

impl<V: Lanes> Simd4<'_, V> {
    pub fn new() -> Self {
        Simd4(PhantomData)
    }
}

impl<V: Lanes> Four for Simd4<'_, V> {
    type Wide = Spread<V>;
    type Lane = V;

    /// The records are loaded as they lie, `(o, f)` and `(n, _)`, and transposed, lane `i` the
    /// vertex of record `i`; the last float of each record is never read into a result.
    #[inline(always)]
    unsafe fn four<const ONE: bool>(&self, k: &Spread<V>, at: *const f32) -> ([V; 3], [V; 3]) {
        let mut a = [V::zero(); 4];
        let mut b = [V::zero(); 4];
        for (i, (a, b)) in a.iter_mut().zip(&mut b).enumerate() {
            // SAFETY: the caller's contract: each load reads 16 bytes of one of the four
            // records, at a 16-byte aligned address.
            unsafe {
                *a = V::load(at.add(8 * i));
                *b = V::load(at.add(8 * i + 4));
            }
        }
        let [ox, oy, oz, f] = transpose4(a);
        let [nx, ny, nz, _] = transpose4(b);
        let (mut p, mut n) = ([f; 3], [f; 3]);
        for (row, &[c0, c1, c2, c3]) in k.iter().enumerate() {
            let t = if ONE { c3 } else { c3.mul(f) };
            let t = t.add(c0.mul(ox));
            let t = t.add(c1.mul(oy));
            p[row] = t.add(c2.mul(oz));
            let t = c0.mul(nx).add(c1.mul(ny));
            n[row] = t.add(c2.mul(nz));
        }
        (p, n)
    }
}

impl<'t, V: Lanes> Backend for Simd4<'t, V> {
    type Out = RawTarget<'t>;
    type Mat = [V; 4];
    type Rel = [V; 4];
    type Wide = Spread<V>;

    #[inline(always)]
    fn zero_rel(&self) -> [V; 4] {
        [V::zero(); 4]
    }

    #[inline(always)]
    fn relative(&self, a: &Mat3x4, i: &Mat3x4) -> [V; 4] {
        let (i0, i1, i2) = (row::<V>(i, 0), row::<V>(i, 1), row::<V>(i, 2));
        // SAFETY: E3 is four floats.
        let e = unsafe { V::load_unaligned(E3.as_ptr()) };
        let [r0, r1, r2] = [0, 1, 2].map(|r| {
            let x = row::<V>(a, r);
            V::shuffle::<0x00>(x, x)
                .mul(i0)
                .add(V::shuffle::<0x55>(x, x).mul(i1))
                .add(V::shuffle::<0xAA>(x, x).mul(i2))
                .add(V::shuffle::<0xFF>(x, x).mul(e))
        });
        columns(r0, r1, r2)
    }

    #[inline(always)]
    fn bone(&self, m: &Mat3x4) -> [V; 4] {
        columns(row(m, 0), row(m, 1), row(m, 2))
    }

    #[inline(always)]
    fn blend(&self, members: &[Member], rel: &[[V; 4]]) -> [V; 4] {
        // Four named sums rather than an array, which the compiler may leave in memory; the
        // first member's products start them.
        let (mut s0, mut s1, mut s2, mut s3) = (V::zero(), V::zero(), V::zero(), V::zero());
        let mut members = members.iter();
        if let Some(first) = members.next()
            && let Some(&[c0, c1, c2, c3]) = rel.get(first.slot as usize)
        {
            let f = V::splat(first.weight);
            (s0, s1, s2, s3) = (f.mul(c0), f.mul(c1), f.mul(c2), f.mul(c3));
        }
        for member in members {
            let Some(&[c0, c1, c2, c3]) = rel.get(member.slot as usize) else {
                continue;
            };
            let f = V::splat(member.weight);
            s0 = s0.add(f.mul(c0));
            s1 = s1.add(f.mul(c1));
            s2 = s2.add(f.mul(c2));
            s3 = s3.add(f.mul(c3));
        }
        [s0, s1, s2, s3]
    }

    #[inline(always)]
    fn widen(&self, m: &[V; 4]) -> Spread<V> {
        // Columns hold rows 0, 1, 1, 2 in their lanes.
        let mut k = [[V::zero(); 4]; 3];
        for (j, &c) in m.iter().enumerate() {
            k[0][j] = V::shuffle::<0x00>(c, c);
            k[1][j] = V::shuffle::<0x55>(c, c);
            k[2][j] = V::shuffle::<0xFF>(c, c);
        }
        k
    }

    #[inline(always)]
    fn save(&self, m: &[V; 4], slot: &mut Slot) {
        let at: *mut f32 = slot.0.as_mut_ptr();
        for (k, &c) in m.iter().enumerate() {
            // SAFETY: the stores write the slot's first 16 floats.
            unsafe { c.store(at.add(4 * k).cast()) };
        }
    }

    #[inline(always)]
    fn load(&self, slot: &Slot) -> [V; 4] {
        let at: *const f32 = slot.0.as_ptr();
        // SAFETY: the loads read the slot's first 16 floats, at 16-byte aligned addresses (a
        // slot is 64-byte aligned).
        [0, 4, 8, 12].map(|k| unsafe { V::load(at.add(k)) })
    }

    #[inline(always)]
    fn point<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        [c0, c1, c2, c3]: [V; 4],
        x: &Influence,
        out: &mut RawTarget,
        e: usize,
    ) {
        // The normal's fourth lane (the record's last) is not read: normal() takes three.
        let (x, n) = halves::<V>(x);
        let t = if ONE {
            c3
        } else {
            c3.mul(V::shuffle::<0xFF>(x, x))
        };
        let p = t
            .add(c0.mul(V::shuffle::<0x00>(x, x)))
            .add(c1.mul(V::shuffle::<0x55>(x, x)))
            .add(c2.mul(V::shuffle::<0xAA>(x, x)));
        emit::<V, NORMALS, UNIT>(out, e, p, normal([c0, c1, c2], n));
    }

    #[inline(always)]
    fn run<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        k: &Spread<V>,
        x: &[Influence],
        out: &mut RawTarget,
        e: usize,
    ) {
        run4::<Self, NORMALS, UNIT, ONE>(self, k, x, out, e);
    }

    #[inline(always)]
    fn direct<const NORMALS: bool, const UNIT: bool>(
        &self,
        infl: &[Influence],
        bones: &[Mat3x4],
        out: &mut RawTarget,
        e: usize,
    ) {
        let mut p = [V::zero(); 3];
        let mut n = [V::zero(); 3];
        for i in infl {
            let Some(m) = bones.get(i.bone as usize) else {
                continue;
            };
            let (x, nb) = halves::<V>(i);
            let nv = nb.clear3();
            for r in 0..3 {
                let rr = row::<V>(m, r);
                p[r] = p[r].add(rr.mul(x));
                n[r] = n[r].add(rr.mul(nv));
            }
        }
        emit::<V, NORMALS, UNIT>(out, e, sum_lanes(p), sum_lanes(n));
    }
}

/// `(c0 nx + c1 ny) + c2 nz`.
#[inline(always)]
fn normal<V: Lanes>([c0, c1, c2]: [V; 3], n: V) -> V {
    c0.mul(V::shuffle::<0x00>(n, n))
        .add(c1.mul(V::shuffle::<0x55>(n, n)))
        .add(c2.mul(V::shuffle::<0xAA>(n, n)))
}

/// `((a[r]0 + a[r]1) + (a[r]2 + a[r]3))` for rows `r` = 0, 1, 1, 2.
#[inline(always)]
fn sum_lanes<V: Lanes>(a: [V; 3]) -> V {
    let [c0, c1, c2, c3] = columns(a[0], a[1], a[2]);
    c0.add(c1).add(c2.add(c3))
}
