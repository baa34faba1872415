//! Moving a rest pose's rotations and scales into the vertices, so that a skeleton that rotates
//! or scales its bones at rest becomes one of offsets alone, as MM2's `.skel` holds.

use super::skel::is_translation;
use crate::error::{Error, Result};
use crate::math::Mat3x4;
use crate::model::Model;
use crate::pose::FrameBlend;
use crate::poses::Poses;

/// What [`bake_rest_pose`] changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BakeReport {
    /// Bones whose frame 0 pose rotated or scaled.
    pub bones: u32,
}

/// A copy whose frame 0 moves each bone by an offset alone: each bone's model-space joint stays
/// where frame 0 put it, its rotation and scale at rest go into the origins and normals of the
/// influences on it (`M b` for a bone-space `b`, `M` the bone's frame 0 model-space matrix), and
/// every other frame is re-expressed so that it poses and skins the vertices as before (`P M⁻¹
/// N`, `N` the new rest pose). The skinned mesh is unchanged in every frame up to rounding; what
/// goes is the bones' own orientation, which a skeleton of offsets cannot hold. Keyframes (DMF)
/// go too, as they are relative to the old rest pose; the sampled frames stay.
///
/// A model whose frame 0 is offsets already, or whose meshes wait for a skeleton, comes back
/// unchanged. A bone whose frame 0 matrix cannot be inverted is `OSSA_ERR_UNSUPPORTED`.
pub fn bake_rest_pose(model: &Model) -> Result<(Model, BakeReport)> {
    let mut report = BakeReport::default();
    let nb = model.bones().len();
    let rest_local = model.skeleton().frame_poses(0).unwrap_or_default();
    let moved = rest_local.iter().filter(|p| !is_translation(p)).count();
    if model.unbound().is_some() || nb == 0 || moved == 0 {
        return Ok((Model::from_parts(model.to_parts())?, report));
    }
    report.bones = u32::try_from(moved).unwrap_or(u32::MAX);
    let posed = |frame: u32| -> Result<Vec<Mat3x4>> {
        let mut out = vec![Mat3x4::IDENTITY; nb];
        model.pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, &mut out)?;
        Ok(out)
    };
    let rest = posed(0)?;
    // The new rest pose: each joint where it was, unrotated.
    let new_rest: Vec<Mat3x4> = rest
        .iter()
        .map(|m| Mat3x4::from_translation(m.translation()))
        .collect();
    let mut to_new = Vec::with_capacity(nb);
    for (b, (m, n)) in rest.iter().zip(&new_rest).enumerate() {
        let Some(inverse) = m.inverse() else {
            return Err(Error::unsupported(format!(
                "bone {b} ({}): its rest pose cannot be inverted, so its vertices cannot be \
                 moved out of it",
                model
                    .bones()
                    .get(b)
                    .map(|x| x.name.to_string())
                    .unwrap_or_default()
            )));
        };
        to_new.push(inverse.mul(n));
    }
    let mut parts = model.to_parts();
    let frames = parts.frames.len();
    let mut poses: Vec<Mat3x4> = Vec::with_capacity(frames.saturating_mul(nb));
    for f in 0..frames {
        let model_space: Vec<Mat3x4> = if f == 0 {
            new_rest.clone()
        } else {
            posed(u32::try_from(f).unwrap_or(u32::MAX))?
                .iter()
                .zip(&to_new)
                .map(|(p, t)| p.mul(t))
                .collect()
        };
        for (b, (pose, bone)) in model_space.iter().zip(&parts.bones).enumerate() {
            let local = match usize::try_from(bone.parent)
                .ok()
                .and_then(|p| model_space.get(p))
            {
                None => *pose,
                // Offsets exactly, at rest.
                Some(parent) if f == 0 => {
                    Mat3x4::from_translation(sub(pose.translation(), parent.translation()))
                }
                Some(parent) => match parent.inverse() {
                    Some(inverse) => inverse.mul(pose),
                    None => {
                        return Err(Error::unsupported(format!(
                            "frame {f} bone {b}: its parent's pose cannot be inverted once the \
                             rest pose is moved out of it"
                        )));
                    }
                },
            };
            poses.push(local);
        }
    }
    parts.poses = Poses::Matrices(poses);
    parts.keyframes.clear();
    for mesh in &mut parts.meshes {
        for i in &mut mesh.influences {
            if let Some(m) = rest.get(i.bone as usize) {
                i.origin = m.transform_vector(i.origin);
                i.normal = m.transform_vector(i.normal);
            }
        }
    }
    Ok((Model::from_parts(parts)?, report))
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
