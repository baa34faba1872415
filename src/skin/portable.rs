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

/// A matrix as its four columns, rows 0 to 2 and a zero: the form the kernel transforms with,
/// so that each step of [`transform`] is one operation on four lanes where the compiler has
/// vectors (it took the rows element by element).
#[derive(Clone, Copy)]
pub(super) struct Columns([[f32; 4]; 4]);

impl Columns {
    #[inline(always)]
    fn of(m: &Mat3x4) -> Columns {
        let [r0, r1, r2] = [row(m, 0), row(m, 1), row(m, 2)];
        Columns(std::array::from_fn(|j| [r0[j], r1[j], r2[j], 0.0]))
    }
}

/// `m (x, y, z, w)` and `m (nx, ny, nz, 0)` in the order of [`Backend::point`]: per row,
/// `((c3 w + c0 x) + c1 y) + c2 z` and `(c0 nx + c1 ny) + c2 nz`.
#[inline(always)]
fn transform(m: &Columns, x: [f32; 4], n: [f32; 3]) -> ([f32; 3], [f32; 3]) {
    let [c0, c1, c2, c3] = m.0;
    let mut p = [0.0f32; 4];
    let mut q = [0.0f32; 4];
    for r in 0..4 {
        p[r] = ((c3[r] * x[3] + c0[r] * x[0]) + c1[r] * x[1]) + c2[r] * x[2];
        q[r] = (c0[r] * n[0] + c1[r] * n[1]) + c2[r] * n[2];
    }
    ([p[0], p[1], p[2]], [q[0], q[1], q[2]])
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
    type Mat = Columns;
    type Rel = Columns;

    #[inline(always)]
    fn zero_rel(&self) -> Columns {
        Columns([[0.0; 4]; 4])
    }

    #[inline(always)]
    fn relative(&self, a: &Mat3x4, i: &Mat3x4) -> Columns {
        let [i0, i1, i2] = [row(i, 0), row(i, 1), row(i, 2)];
        let e = [0.0, 0.0, 0.0, 1.0];
        let mut out = Mat3x4 { m: [0.0; 12] };
        for (r, out) in out.m.chunks_exact_mut(4).enumerate() {
            let [a0, a1, a2, a3] = row(a, r);
            for (j, o) in out.iter_mut().enumerate() {
                *o = ((a0 * i0[j] + a1 * i1[j]) + a2 * i2[j]) + a3 * e[j];
            }
        }
        Columns::of(&out)
    }

    #[inline(always)]
    fn bone(&self, m: &Mat3x4) -> Columns {
        Columns::of(m)
    }

    type Wide = Columns;

    #[inline(always)]
    fn widen(&self, m: &Columns) -> Columns {
        *m
    }

    #[inline(always)]
    fn blend(&self, members: &[Member], rel: &[Columns]) -> Columns {
        let mut s = [[0.0f32; 4]; 4];
        let Some((first, rest)) = members.split_first() else {
            return Columns(s);
        };
        // The first product alone, then the others added in member order.
        if let Some(r) = rel.get(first.slot as usize) {
            for (s, r) in s.as_flattened_mut().iter_mut().zip(r.0.as_flattened()) {
                *s = first.weight * r;
            }
        }
        for member in rest {
            let Some(r) = rel.get(member.slot as usize) else {
                continue;
            };
            for (s, r) in s.as_flattened_mut().iter_mut().zip(r.0.as_flattened()) {
                *s += member.weight * r;
            }
        }
        Columns(s)
    }

    #[inline(always)]
    fn save(&self, m: &Columns, slot: &mut Slot) {
        for (s, x) in slot.0.iter_mut().zip(m.0.as_flattened()) {
            *s = *x;
        }
    }

    #[inline(always)]
    fn load(&self, slot: &Slot) -> Columns {
        let mut c = [[0.0f32; 4]; 4];
        for (c, s) in c.as_flattened_mut().iter_mut().zip(&slot.0) {
            *c = *s;
        }
        Columns(c)
    }

    #[inline(always)]
    fn point<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        m: Columns,
        x: &Influence,
        out: &mut T,
        e: usize,
    ) {
        operand::<T, NORMALS, UNIT>(&m, x, out, e);
    }

    #[inline(always)]
    fn run<const NORMALS: bool, const UNIT: bool, const ONE: bool>(
        &self,
        m: &Columns,
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
    m: &Columns,
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
    drive(&b, job, table, normals, unit, target);
}
