//! Animation samplers evaluated as the glTF 2.0 specification defines them (Appendix C):
//! STEP holds a key, LINEAR interpolates (rotations by slerp along the shorter arc), CUBICSPLINE
//! is a Hermite spline whose tangents are scaled by the key interval, its rotations normalised
//! after. Before the first key the first value holds, after the last the last.

#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

/// How a sampler interpolates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Interpolation {
    Step,
    Linear,
    CubicSpline,
}

/// One sampler: strictly increasing key `times` and their `values`, `width` floats a key (three
/// such groups a key for CUBICSPLINE: in-tangent, value, out-tangent).
pub(crate) struct Track<'a> {
    pub times: &'a [f32],
    pub values: &'a [f32],
    pub width: usize,
    pub interpolation: Interpolation,
    pub rotation: bool,
}

impl Track<'_> {
    /// Floats `i` of key `k`'s value (the middle group for CUBICSPLINE).
    fn value(&self, k: usize) -> &[f32] {
        let (group, at) = match self.interpolation {
            Interpolation::CubicSpline => (3, 1),
            _ => (1, 0),
        };
        let start = k
            .wrapping_mul(group)
            .wrapping_add(at)
            .wrapping_mul(self.width);
        self.values
            .get(start..start.wrapping_add(self.width))
            .unwrap_or(&[])
    }

    fn tangent(&self, k: usize, out: bool) -> &[f32] {
        let start = k
            .wrapping_mul(3)
            .wrapping_add(if out { 2 } else { 0 })
            .wrapping_mul(self.width);
        self.values
            .get(start..start.wrapping_add(self.width))
            .unwrap_or(&[])
    }

    /// The value at time `t`, into `out` (`width` floats).
    pub fn sample(&self, t: f32, out: &mut [f32]) {
        let n = self.times.len();
        if n == 0 {
            return;
        }
        let copy = |out: &mut [f32], v: &[f32]| {
            for (o, x) in out.iter_mut().zip(v) {
                *o = *x;
            }
        };
        let first = self.times.first().copied().unwrap_or(0.0);
        let last = self.times.last().copied().unwrap_or(0.0);
        if n == 1 || t <= first {
            copy(out, self.value(0));
            return;
        }
        if t >= last {
            copy(out, self.value(n.saturating_sub(1)));
            return;
        }
        // The key interval holding t: times[k] <= t < times[k + 1].
        let k = self
            .times
            .partition_point(|&x| x <= t)
            .saturating_sub(1)
            .min(n.saturating_sub(2));
        let k1 = k.saturating_add(1);
        let (Some(&t0), Some(&t1)) = (self.times.get(k), self.times.get(k1)) else {
            return;
        };
        let td = f64::from(t1) - f64::from(t0);
        let s = if td > 0.0 {
            ((f64::from(t) - f64::from(t0)) / td).clamp(0.0, 1.0)
        } else {
            0.0
        };
        match self.interpolation {
            Interpolation::Step => copy(out, self.value(k)),
            Interpolation::Linear if self.rotation => {
                let q = slerp(quat(self.value(k)), quat(self.value(k1)), s);
                copy(out, &q.map(|c| c as f32));
            }
            Interpolation::Linear => {
                for ((o, a), b) in out.iter_mut().zip(self.value(k)).zip(self.value(k1)) {
                    *o = (f64::from(*a) + (f64::from(*b) - f64::from(*a)) * s) as f32;
                }
            }
            Interpolation::CubicSpline => {
                let (s2, s3) = (s * s, s * s * s);
                let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
                let h10 = s3 - 2.0 * s2 + s;
                let h01 = -2.0 * s3 + 3.0 * s2;
                let h11 = s3 - s2;
                let (v0, b0) = (self.value(k), self.tangent(k, true));
                let (v1, a1) = (self.value(k1), self.tangent(k1, false));
                let mut acc = [0.0f64; 4];
                for (i, slot) in acc.iter_mut().enumerate().take(self.width) {
                    let g = |v: &[f32]| v.get(i).copied().map_or(0.0, f64::from);
                    *slot = h00 * g(v0) + h10 * td * g(b0) + h01 * g(v1) + h11 * td * g(a1);
                }
                if self.rotation {
                    acc = normalize(acc);
                }
                let acc = acc.map(|c| c as f32);
                copy(out, acc.get(..self.width.min(4)).unwrap_or(&[]));
            }
        }
    }
}

fn quat(v: &[f32]) -> [f64; 4] {
    let g = |i: usize| v.get(i).copied().map_or(0.0, f64::from);
    [g(0), g(1), g(2), g(3)]
}

fn normalize(q: [f64; 4]) -> [f64; 4] {
    let len = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    if len > 0.0 && len.is_finite() {
        q.map(|c| c / len)
    } else {
        [0.0, 0.0, 0.0, 1.0]
    }
}

/// Spherical interpolation along the shorter arc, normalised.
pub(crate) fn slerp(a: [f64; 4], b: [f64; 4], s: f64) -> [f64; 4] {
    let (a, mut b) = (normalize(a), normalize(b));
    let mut dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    if dot < 0.0 {
        b = b.map(|c| -c);
        dot = -dot;
    }
    let (wa, wb) = if dot > 0.9995 {
        // Nearly parallel: the arc is a line to double precision.
        (1.0 - s, s)
    } else {
        let theta = dot.clamp(-1.0, 1.0).acos();
        let sin = theta.sin();
        (((1.0 - s) * theta).sin() / sin, (s * theta).sin() / sin)
    };
    let mut r = [0.0f64; 4];
    for ((r, x), y) in r.iter_mut().zip(a).zip(b) {
        *r = wa * x + wb * y;
    }
    normalize(r)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn at(track: &Track, t: f32) -> Vec<f32> {
        let mut out = vec![0.0; track.width];
        track.sample(t, &mut out);
        out
    }

    #[test]
    fn step_and_linear_hold_the_ends() {
        let times = [1.0, 2.0, 4.0];
        let values = [0.0, 10.0, 30.0];
        let mut t = Track {
            times: &times,
            values: &values,
            width: 1,
            interpolation: Interpolation::Linear,
            rotation: false,
        };
        assert_eq!(at(&t, 0.0), [0.0]);
        assert_eq!(at(&t, 1.5), [5.0]);
        assert_eq!(at(&t, 3.0), [20.0]);
        assert_eq!(at(&t, 9.0), [30.0]);
        t.interpolation = Interpolation::Step;
        assert_eq!(at(&t, 1.99), [0.0]);
        assert_eq!(at(&t, 2.0), [10.0]);
        assert_eq!(at(&t, 3.9), [10.0]);
    }

    #[test]
    fn cubic_spline_follows_the_hermite_formula_with_scaled_tangents() {
        // Keys at 0 and 2, values 1 and 3, out-tangent of key 0 = 0.5, in-tangent of key 1 = -1.
        let times = [0.0, 2.0];
        let values = [9.0, 1.0, 0.5, -1.0, 3.0, 9.0];
        let t = Track {
            times: &times,
            values: &values,
            width: 1,
            interpolation: Interpolation::CubicSpline,
            rotation: false,
        };
        let s: f64 = 0.25;
        let td = 2.0;
        let expect = (2.0 * s.powi(3) - 3.0 * s * s + 1.0) * 1.0
            + (s.powi(3) - 2.0 * s * s + s) * td * 0.5
            + (-2.0 * s.powi(3) + 3.0 * s * s) * 3.0
            - (s.powi(3) - s * s) * td;
        assert!((f64::from(at(&t, 0.5)[0]) - expect).abs() < 1e-6);
        assert_eq!(at(&t, 0.0), [1.0]);
        assert_eq!(at(&t, 2.0), [3.0]);
    }

    #[test]
    fn rotations_slerp_along_the_shorter_arc() {
        let h = std::f32::consts::FRAC_1_SQRT_2;
        // 0 and 90 degrees about z; the second given on the far hemisphere.
        let times = [0.0, 1.0];
        let values = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -h, -h];
        let t = Track {
            times: &times,
            values: &values,
            width: 4,
            interpolation: Interpolation::Linear,
            rotation: true,
        };
        let q = at(&t, 0.5);
        let half = (std::f32::consts::PI / 8.0).sin();
        assert!((q[2] - half).abs() < 1e-6, "{q:?}");
        assert!((q[3] - (std::f32::consts::PI / 8.0).cos()).abs() < 1e-6);
    }
}
