//! The portable kernel: plain Rust in the order [`super::Backend`] states, which the SSE2 kernel
//! repeats operation for operation. Rust never fuses a multiply and an add on its own, so these
//! are the same roundings on every CPU.

use std::marker::PhantomData;

use super::plan::Member;
use super::{Backend, Job, SkinTarget, Slot, drive, normalize};
use crate::math::Mat3x4;
use crate::model::Influence;

/// The portable backend, writing through a target of type `T`.
pub(super) struct Portable<T: ?Sized>(PhantomData<*const T>);

/// Row `r` of `m`, as four floats.
#[inline(always)]
fn row(m: &Mat3x4, r: usize) -> [f32; 4] {
    let b = 4 * r;
    [m.m[b], m.m[b + 1], m.m[b + 2], m.m[b + 3]]
}

/// `m (x, y, z, w)` and `m (nx, ny, nz, 0)` in the order of [`Backend::influence`].
#[inline(always)]
fn transform(m: &Mat3x4, x: [f32; 4], n: [f32; 3]) -> ([f32; 3], [f32; 3]) {
    let mut p = [0.0f32; 3];
    let mut q = [0.0f32; 3];
    for r in 0..3 {
        let [c0, c1, c2, c3] = row(m, r);
        p[r] = ((c3 * x[3] + c0 * x[0]) + c1 * x[1]) + c2 * x[2];
        q[r] = (c0 * n[0] + c1 * n[1]) + c2 * n[2];
    }
    (p, q)
}

#[inline(always)]
fn put<T: SkinTarget + ?Sized, const NORMALS: bool, const UNIT: bool>(
    out: &mut T,
    e: usize,
    p: [f32; 3],
    n: [f32; 3],
) {
    let n = if NORMALS && UNIT { normalize(n) } else { n };
    out.put(e, p, n);
}

impl<T: SkinTarget + ?Sized> Backend for Portable<T> {
    type Out = T;
    type Mat = Mat3x4;
    type Rel = Mat3x4;

    #[inline(always)]
    fn zero_rel(&self) -> Mat3x4 {
        Mat3x4 { m: [0.0; 12] }
    }

    #[inline(always)]
    fn relative(&self, a: &Mat3x4, i: &Mat3x4) -> Mat3x4 {
        let [i0, i1, i2] = [row(i, 0), row(i, 1), row(i, 2)];
        let e = [0.0, 0.0, 0.0, 1.0];
        let mut out = Mat3x4 { m: [0.0; 12] };
        for (r, out) in out.m.chunks_exact_mut(4).enumerate() {
            let [a0, a1, a2, a3] = row(a, r);
            for (j, o) in out.iter_mut().enumerate() {
                *o = ((a0 * i0[j] + a1 * i1[j]) + a2 * i2[j]) + a3 * e[j];
            }
        }
        out
    }

    #[inline(always)]
    fn bone(&self, m: &Mat3x4) -> Mat3x4 {
        *m
    }

    type Wide = Mat3x4;

    #[inline(always)]
    fn widen(&self, m: &Mat3x4) -> Mat3x4 {
        *m
    }

    #[inline(always)]
    fn blend(&self, members: &[Member], rel: &[Mat3x4]) -> Mat3x4 {
        let mut s = Mat3x4 { m: [0.0; 12] };
        for (k, member) in members.iter().enumerate() {
            let Some(r) = rel.get(member.slot as usize) else {
                continue;
            };
            for (s, r) in s.m.iter_mut().zip(&r.m) {
                *s = if k == 0 {
                    member.weight * r
                } else {
                    *s + member.weight * r
                };
            }
        }
        s
    }

    #[inline(always)]
    fn save(&self, m: &Mat3x4, slot: &mut Slot) {
        for (s, x) in slot.0.iter_mut().zip(m.m) {
            *s = x;
        }
    }

    #[inline(always)]
    fn load(&self, slot: &Slot) -> Mat3x4 {
        Mat3x4 {
            m: slot.0.first_chunk().copied().unwrap_or([0.0; 12]),
        }
    }

    #[inline(always)]
    fn point<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        m: Mat3x4,
        x: &Influence,
        out: &mut T,
        e: usize,
    ) {
        operand::<T, NORMALS, UNIT>(&m, x, out, e);
    }

    #[inline(always)]
    fn run<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        m: &Mat3x4,
        x: &[Influence],
        out: &mut T,
        e: usize,
    ) {
        for (i, x) in x.iter().enumerate() {
            operand::<T, NORMALS, UNIT>(m, x, out, e + i);
        }
    }

    #[inline(always)]
    fn direct<const NORMALS: bool, const UNIT: bool>(
        &self,
        infl: &[Influence],
        bones: &[Mat3x4],
        out: &mut T,
        e: usize,
    ) {
        let mut acc = [[0.0f32; 8]; 3];
        for i in infl {
            let Some(m) = bones.get(i.bone as usize) else {
                continue;
            };
            let [ox, oy, oz] = i.origin;
            let [nx, ny, nz] = i.normal;
            let x = [ox, oy, oz, i.weight, nx, ny, nz, 0.0];
            for (r, acc) in acc.iter_mut().enumerate() {
                let rr = row(m, r);
                for (j, a) in acc.iter_mut().enumerate() {
                    *a += rr[j % 4] * x[j];
                }
            }
        }
        let half = |a: &[f32; 8], h: usize| (a[h] + a[h + 1]) + (a[h + 2] + a[h + 3]);
        let p = [half(&acc[0], 0), half(&acc[1], 0), half(&acc[2], 0)];
        let n = [half(&acc[0], 4), half(&acc[1], 4), half(&acc[2], 4)];
        put::<T, NORMALS, UNIT>(out, e, p, n);
    }
}

/// Element `e` from the operand `x = (o, f, n, _)`.
#[inline(always)]
fn operand<T: SkinTarget + ?Sized, const NORMALS: bool, const UNIT: bool>(
    m: &Mat3x4,
    x: &Influence,
    out: &mut T,
    e: usize,
) {
    let [ox, oy, oz] = x.origin;
    let (p, n) = transform(m, [ox, oy, oz, x.weight], x.normal);
    put::<T, NORMALS, UNIT>(out, e, p, n);
}

/// Skins `job` into `target` through [`SkinTarget::put`].
pub(super) fn run<T: SkinTarget + ?Sized>(
    job: &Job,
    table: &mut [Slot],
    normals: bool,
    unit: bool,
    target: &mut T,
) {
    let b = Portable::<T>(PhantomData);
    match (normals, unit) {
        (true, true) => drive::<_, true, true>(&b, job, table, target),
        (true, false) => drive::<_, true, false>(&b, job, table, target),
        _ => drive::<_, false, false>(&b, job, table, target),
    }
}
