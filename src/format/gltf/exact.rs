//! How far the exported file, skinned as glTF defines it (linear blend skinning of the bind-pose
//! positions with the nodes' TRS and the inverse bind matrices), lands from ossa's own skinning
//! of the model. They agree wherever a vertex's influences agree on one bind point and its
//! weights sum to 1; stored normals that disagree, Sims blend vertices, weight sums that are off
//! and influences dropped by a cap are where they part.

use crate::math::Mat3x4;
use crate::model::Model;
use crate::pose::FrameBlend;
use crate::skin::Strided;

use super::axes::{Axes, trs};

/// A vertex is reported when the export moves it further than this, relative to the model's
/// size (the diagonal of its bind-pose bounds).
pub const EXACT_TOLERANCE: f32 = 1e-4;

/// At most this many vertex-frames are compared; past it the frames checked are spread evenly.
const MAX_VERTEX_FRAMES: usize = 20_000_000;

/// What the export could not express exactly, relative to the model's size.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exactness {
    /// The diagonal of the bind pose's bounds, in the exported units.
    pub size: f32,
    /// Vertices moved by more than [`EXACT_TOLERANCE`] at the bind pose or any frame checked.
    pub inexact_vertices: usize,
    /// Those vertices, per mesh.
    pub inexact: Vec<Vec<u32>>,
    /// The largest move at the bind pose, relative to the size.
    pub bind_max: f32,
    /// The largest move at any frame checked, relative to the size.
    pub animated_max: f32,
    /// Frames compared, and how many the model has.
    pub frames_checked: usize,
    pub frames: usize,
    /// Vertices that lost influences to the cap, and the most one lost.
    pub capped_vertices: usize,
    pub most_dropped: usize,
    /// Vertices whose own weights did not sum to 1 (to 1e-6), and the largest such error.
    pub unnormalised_vertices: usize,
    pub worst_weight_sum: f32,
}

/// One mesh as written: glTF-space bind positions and each vertex's (joint, weight) list.
pub(crate) struct Written {
    pub positions: Vec<[f32; 3]>,
    pub starts: Vec<usize>,
    pub influences: Vec<(u32, f32)>,
}

pub(crate) fn measure(
    model: &Model,
    axes: &Axes,
    scale: f32,
    inverse_binds: &[Mat3x4],
    meshes: &[Written],
    exactness: &mut Exactness,
) {
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for p in meshes.iter().flat_map(|m| &m.positions) {
        for i in 0..3 {
            lo[i] = lo[i].min(p[i]);
            hi[i] = hi[i].max(p[i]);
        }
    }
    let diagonal = (0..3)
        .map(|i| f64::from(hi[i] - lo[i]).powi(2))
        .sum::<f64>()
        .sqrt() as f32;
    exactness.size = if diagonal.is_finite() { diagonal } else { 0.0 };
    exactness.inexact = vec![Vec::new(); meshes.len()];
    let nb = model.bones().len();
    let frames = model.frames().len();
    exactness.frames = frames;
    let vertices: usize = meshes.iter().map(|m| m.positions.len()).sum();
    if nb == 0 || vertices == 0 || frames == 0 {
        return;
    }
    let size = if exactness.size > 0.0 {
        exactness.size
    } else {
        1.0
    };
    let tolerance = EXACT_TOLERANCE * size;
    let stride = (frames.saturating_mul(vertices) / MAX_VERTEX_FRAMES).max(1);
    let to_gltf = axes.matrix(scale);

    let mut flagged: Vec<Vec<bool>> = meshes
        .iter()
        .map(|m| vec![false; m.positions.len()])
        .collect();
    let mut local = vec![Mat3x4::IDENTITY; nb];
    let mut world = vec![Mat3x4::IDENTITY; nb];
    let mut skinning = vec![Mat3x4::IDENTITY; nb];
    let mut posed = vec![Mat3x4::IDENTITY; nb];
    let mut native = Vec::new();
    // The bind pose first (frame 0), then every `stride`-th frame.
    for frame in (0..frames).step_by(stride) {
        if !model.skeleton().write_frame_poses(frame, &mut local) {
            continue;
        }
        for (b, bone) in model.bones().iter().enumerate() {
            let l = trs(axes, scale, &local[b]).matrix();
            world[b] = match usize::try_from(bone.parent) {
                Ok(p) => world[p].mul(&l),
                Err(_) => l,
            };
            skinning[b] = world[b].mul(&inverse_binds[b]);
        }
        let blend = [FrameBlend {
            frame: frame as u32,
            weight: 1.0,
        }];
        if model.pose_frames(&blend, None, &mut posed).is_err() {
            continue;
        }
        exactness.frames_checked += 1;
        for (m, (written, flags)) in meshes.iter().zip(flagged.iter_mut()).enumerate() {
            let n = written.positions.len();
            native.clear();
            native.resize(n * 3, 0.0f32);
            let skinned = Strided::new(&mut native, 3)
                .and_then(|mut t| model.skin_mesh(m, &posed, 0, n, 0, &mut t));
            if skinned.is_err() {
                continue;
            }
            for (v, flag) in flags.iter_mut().enumerate() {
                let p = written.positions[v];
                let mut lbs = [0.0f32; 3];
                for &(joint, weight) in
                    &written.influences[written.starts[v]..written.starts[v + 1]]
                {
                    let q = skinning[joint as usize].transform_point(p);
                    for i in 0..3 {
                        lbs[i] += weight * q[i];
                    }
                }
                let expect =
                    to_gltf.transform_point([native[v * 3], native[v * 3 + 1], native[v * 3 + 2]]);
                let distance = (0..3)
                    .map(|i| (lbs[i] - expect[i]).powi(2))
                    .sum::<f32>()
                    .sqrt();
                let relative = relative_to(distance, size);
                if frame == 0 {
                    exactness.bind_max = exactness.bind_max.max(relative);
                } else {
                    exactness.animated_max = exactness.animated_max.max(relative);
                }
                if distance > tolerance {
                    *flag = true;
                }
            }
        }
    }
    for (list, flags) in exactness.inexact.iter_mut().zip(&flagged) {
        list.extend(
            flags
                .iter()
                .enumerate()
                .filter(|(_, f)| **f)
                .map(|(v, _)| v as u32),
        );
    }
    exactness.inexact_vertices = exactness.inexact.iter().map(Vec::len).sum();
}

/// `distance` over the model's `size`, held to f32's range: a model of almost no size (every
/// vertex at one point in the bind pose) would make the quotient an infinity, and a distance past
/// f32's range is one already. Taken in f64, whose `min` passes over a NaN.
fn relative_to(distance: f32, size: f32) -> f32 {
    (f64::from(distance) / f64::from(size)).min(f64::from(f32::MAX)) as f32
}

impl Exactness {
    /// A line or two for a person: what moved, by how much.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        if self.inexact_vertices == 0 {
            out.push_str(&format!(
                "exact: every vertex within {EXACT_TOLERANCE:e} of the model's size at the bind pose and {} of {} frames",
                self.frames_checked, self.frames
            ));
        } else {
            out.push_str(&format!(
                "{} vertices cannot be reproduced by linear blend skinning: they move by up to {:.3e} of the model's size at the bind pose and {:.3e} across {} of {} frames",
                self.inexact_vertices, self.bind_max, self.animated_max, self.frames_checked, self.frames
            ));
        }
        if self.unnormalised_vertices > 0 {
            out.push_str(&format!(
                "; {} vertices' weights did not sum to 1 (off by up to {:.3e}) and were renormalised",
                self.unnormalised_vertices, self.worst_weight_sum
            ));
        }
        if self.capped_vertices > 0 {
            out.push_str(&format!(
                "; {} vertices kept only their strongest influences (up to {} dropped)",
                self.capped_vertices, self.most_dropped
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::relative_to;

    #[test]
    fn a_distance_over_almost_no_size_stays_a_finite_number() {
        assert_eq!(relative_to(2.0, 4.0), 0.5);
        assert_eq!(relative_to(1.0, 1e-40), f32::MAX);
        assert_eq!(relative_to(f32::INFINITY, 1.0), f32::MAX);
        assert_eq!(relative_to(f32::NAN, 1.0), f32::MAX);
        assert_eq!(relative_to(0.0, 1e-40), 0.0);
    }
}
