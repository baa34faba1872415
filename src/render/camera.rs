//! The camera: which way the model faces and is up, the view's direction, and an orthographic
//! framing of a set of points.
//!
//! Every model is first seen in one right-handed frame (glTF's): x = the model's left, y = up,
//! z = the model's front. The format's up axis is [`Model::up_axis`]; its front is the next
//! axis in x, y, z order (Quake's Z-up formats face +X, Y-up formats +Z), except MM2, which
//! faces -Z (as the glTF export maps it); its left follows from the two and
//! [`Model::handedness`], so a left-handed model (the Sims) is seen unmirrored.

use crate::format::Format;
use crate::model::Model;

use super::View;

/// Where the camera looks from and how the frame is filled. Orthographic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Unit vectors in the model's own coordinates: the screen's right, the screen's up, and
    /// the direction from the model toward the viewer.
    pub right: [f32; 3],
    pub up: [f32; 3],
    pub toward: [f32; 3],
    /// The model's frame is left-handed: seen through `right`, `up` and `toward`, its
    /// triangles' windings are reversed.
    pub mirrored: bool,
    /// The view-space point (along `right`, along `up`) at the centre of the image.
    pub center: [f32; 2],
    /// Pixels per model unit.
    pub scale: f32,
    pub width: u32,
    pub height: u32,
}

/// The share of each side of the image left empty around the framed points.
pub const MARGIN: f32 = 0.05;

/// (yaw, pitch) of each view in degrees: yaw turns the camera about the up axis from the
/// model's front toward its right side, pitch raises it toward the top.
pub fn view_angles(view: View) -> (f32, f32) {
    match view {
        View::Front => (0.0, 0.0),
        View::Side => (90.0, 0.0),
        View::Top => (0.0, 90.0),
        View::ThreeQuarter => (45.0, 20.0),
    }
}

/// The model's (left, up, front) as signed unit axes of its own coordinates.
pub fn model_axes(model: &Model) -> [[f32; 3]; 3] {
    model_axes_of(model.frame_format(), model.up_axis(), model.handedness())
}

fn model_axes_of(format: Format, up_axis: u32, handedness: i32) -> [[f32; 3]; 3] {
    let u = (up_axis as usize).min(2);
    let f = (u + 1) % 3;
    let mut up = [0.0f32; 3];
    up[u] = 1.0;
    let mut front = [0.0f32; 3];
    front[f] = if matches!(format, Format::Mm2Skel | Format::Mm2Mod) {
        -1.0
    } else {
        1.0
    };
    // left = up x front in a right-handed frame; a left-handed one's left is the other way.
    let mut left = cross(up, front);
    if handedness < 0 {
        left = left.map(|v| -v);
    }
    [left, up, front]
}

pub(super) fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub(super) fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn det(m: [[f32; 3]; 3]) -> f32 {
    dot(m[0], cross(m[1], m[2]))
}

/// sin and cos of `degrees`, from a series in f64: the platform's `sin` may differ in its last
/// bit between machines, and the picture must not.
pub fn sin_cos_degrees(degrees: f32) -> (f32, f32) {
    if !degrees.is_finite() {
        return (0.0, 1.0);
    }
    // Exact multiples of 90 degrees give exact results, as a front or top view should.
    let d = f64::from(degrees).rem_euclid(360.0);
    match d {
        0.0 => return (0.0, 1.0),
        90.0 => return (1.0, 0.0),
        180.0 => return (0.0, -1.0),
        270.0 => return (-1.0, 0.0),
        _ => {}
    }
    // Into (-180, 180], then radians: the series below converges for |x| <= pi.
    let d = if d > 180.0 { d - 360.0 } else { d };
    let x = d * (std::f64::consts::PI / 180.0);
    let (mut s, mut c) = (0.0f64, 0.0f64);
    let (mut ts, mut tc) = (x, 1.0f64);
    for k in 0..30 {
        s += ts;
        c += tc;
        let n = 2.0 * k as f64;
        ts *= -x * x / ((n + 2.0) * (n + 3.0));
        tc *= -x * x / ((n + 1.0) * (n + 2.0));
    }
    (s as f32, c as f32)
}

impl Camera {
    /// The camera's directions for `view` (with the given yaw and pitch in degrees, where
    /// given), not yet framing anything: centred on the origin, one pixel per unit, no size.
    pub fn oriented(model: &Model, view: View, yaw: Option<f32>, pitch: Option<f32>) -> Camera {
        let (view_yaw, view_pitch) = view_angles(view);
        let yaw = yaw.filter(|v| v.is_finite()).unwrap_or(view_yaw);
        let pitch = pitch.filter(|v| v.is_finite()).unwrap_or(view_pitch);
        let (sy, cy) = sin_cos_degrees(yaw);
        let (sp, cp) = sin_cos_degrees(pitch);
        // In the (left, up, front) frame: the camera starts in front (+z), yaw swings it toward
        // the model's right (-x), pitch raises it toward +y. (right, up, toward) stays right-handed.
        let horizontal = [-sy, 0.0, cy];
        let right_c = [cy, 0.0, sy];
        let up_c = [-sp * horizontal[0], cp, -sp * horizontal[2]];
        let toward_c = [cp * horizontal[0], sp, cp * horizontal[2]];
        let axes = model_axes(model);
        // A model-space vector v has (left, up, front) components axes . v, so a direction
        // given in that frame is sum_k c_k axes[k] in model space.
        let to_model = |c: [f32; 3]| -> [f32; 3] {
            let mut v = [0.0f32; 3];
            for (k, axis) in axes.iter().enumerate() {
                for (vi, ai) in v.iter_mut().zip(axis) {
                    *vi += c[k] * ai;
                }
            }
            v
        };
        Camera {
            right: to_model(right_c),
            up: to_model(up_c),
            toward: to_model(toward_c),
            mirrored: det(axes) < 0.0,
            center: [0.0, 0.0],
            scale: 1.0,
            width: 0,
            height: 0,
        }
    }

    /// A model-space point in view space: along the screen's right, its up, and toward the viewer.
    pub fn view_point(&self, p: [f32; 3]) -> [f32; 3] {
        [dot(p, self.right), dot(p, self.up), dot(p, self.toward)]
    }

    /// Centres and scales the camera so that `points` fill a `width` x `height` image, less
    /// [`MARGIN`] on each side, keeping the aspect. No points, or points that are not finite,
    /// leave it centred on the origin; a single point is centred at one pixel per unit.
    pub fn fit(&mut self, points: impl IntoIterator<Item = [f32; 3]>, width: u32, height: u32) {
        let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
        for p in points {
            let v = self.view_point(p);
            if !(v[0].is_finite() && v[1].is_finite()) {
                continue;
            }
            for k in 0..2 {
                lo[k] = lo[k].min(v[k]);
                hi[k] = hi[k].max(v[k]);
            }
        }
        self.width = width;
        self.height = height;
        if lo[0] > hi[0] {
            self.center = [0.0, 0.0];
            self.scale = 1.0;
            return;
        }
        self.center = [lo[0] * 0.5 + hi[0] * 0.5, lo[1] * 0.5 + hi[1] * 0.5];
        let room = 1.0 - 2.0 * MARGIN;
        let sx = width as f32 * room / (hi[0] - lo[0]);
        let sy = height as f32 * room / (hi[1] - lo[1]);
        // A flat extent (0 wide) divides to infinity: the other side decides.
        let scale = sx.min(sy);
        self.scale = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
    }

    /// A model-space point on the image: x in pixels from the left, y in pixels from the top
    /// (pixel (i, j) covers [i, i+1) x [j, j+1)), and its depth (larger is nearer the viewer).
    pub fn project(&self, p: [f32; 3]) -> [f32; 3] {
        let v = self.view_point(p);
        [
            (v[0] - self.center[0]) * self.scale + self.width as f32 * 0.5,
            self.height as f32 * 0.5 - (v[1] - self.center[1]) * self.scale,
            v[2],
        ]
    }

    /// The same framing at `factor` times the resolution (for supersampling).
    pub fn scaled(&self, factor: u32) -> Camera {
        Camera {
            scale: self.scale * factor as f32,
            width: self.width * factor,
            height: self.height * factor,
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quake_sims_and_mm2_axes() {
        // Quake: left +Y, up +Z, front +X.
        assert_eq!(
            model_axes_of(Format::Dpm, 2, 1),
            [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
        );
        // Sims: left -X, up +Y, front +Z, left-handed.
        let sims = model_axes_of(Format::SimsCmx, 1, -1);
        assert_eq!(sims, [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
        assert!(det(sims) < 0.0);
        // MM2: front -Z, left -X.
        assert_eq!(
            model_axes_of(Format::Mm2Skel, 1, 1),
            [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]
        );
    }

    #[test]
    fn series_matches_exact_angles() {
        for (deg, s, c) in [(30.0, 0.5, 0.866_025_4), (45.0, 0.707_106_77, 0.707_106_77)] {
            let (ss, cc) = sin_cos_degrees(deg);
            assert!((ss - s).abs() < 1e-6 && (cc - c).abs() < 1e-6, "{deg}");
        }
        assert_eq!(sin_cos_degrees(-90.0), (-1.0, 0.0));
        assert_eq!(sin_cos_degrees(f32::NAN), (0.0, 1.0));
    }
}
