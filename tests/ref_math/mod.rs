//! Reference math in f64 for the tests that check ossa against formulas written out by hand:
//! vectors, 3x3 matrices (row-major, acting on column vectors) and quaternions `(x, y, z, w)`
//! with the Hamilton product (FORMATS.md §3.4). Textbook forms, never ossa's own code.
//!
//! Each test binary uses a different subset of this module.
#![allow(dead_code)]

pub type V3 = [f64; 3];
pub type Q4 = [f64; 4];
pub type M3 = [[f64; 3]; 3];

pub const IDENTITY: M3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

pub fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub fn transpose(m: M3) -> M3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| m[j][i]))
}

pub fn mul(a: M3, b: M3) -> M3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

pub fn apply(a: M3, v: V3) -> V3 {
    [0, 1, 2].map(|i| (0..3).map(|k| a[i][k] * v[k]).sum())
}

/// The dot product of two quaternions (negative: they lie in opposite hemispheres).
pub fn qdot(a: Q4, b: Q4) -> f64 {
    (0..4).map(|k| a[k] * b[k]).sum()
}

/// `q` scaled to unit length.
pub fn qnorm(q: Q4) -> Q4 {
    let l = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    q.map(|c| c / l)
}

/// The Hamilton product `a b`: rotating by `b`, then by `a`.
pub fn qmul(a: Q4, b: Q4) -> Q4 {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// The textbook rotation matrix of the quaternion `q`, normalised first.
pub fn rot(q: Q4) -> M3 {
    let [x, y, z, w] = qnorm(q);
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - z * w),
            2.0 * (x * z + y * w),
        ],
        [
            2.0 * (x * y + z * w),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - x * w),
        ],
        [
            2.0 * (x * z - y * w),
            2.0 * (y * z + x * w),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

/// `v` rotated by `q`.
pub fn qrot(q: Q4, v: V3) -> V3 {
    apply(rot(q), v)
}
