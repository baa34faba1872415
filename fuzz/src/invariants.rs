//! The invariants every model ossa hands out keeps, whatever bytes it came from: checked by the
//! fuzz targets (through `check.rs`) and by the hostile-input sweeps of `tests/` (through
//! `tests/sweep`), so that both hold a model to the same rules.

use ossa::{FrameBlend, Mat3x4, Model, Strided};

/// A bound on every number of the model-space matrices posing can make of the model's frames,
/// alone or blended: each bone's largest local row sum and translation over all frames, and the
/// same carried down the hierarchy. A blend's local pose (unit rotation, blended scale) may exceed its
/// frames' row sums by a factor of 3 * sqrt(3); 6 per level covers it.
fn pose_bound(model: &Model) -> f64 {
    let bones = model.bones();
    let mut local = vec![(0.0f64, 0.0f64); bones.len()];
    for f in 0..model.frames().len() {
        let poses = model.skeleton().frame_poses(f).unwrap_or_default();
        for (bound, pose) in local.iter_mut().zip(poses.iter()) {
            let m = pose.m.map(|x| f64::from(x.abs()));
            let rows = (0..3).map(|r| m[4 * r] + m[4 * r + 1] + m[4 * r + 2]);
            bound.0 = bound.0.max(6.0 * rows.fold(0.0, f64::max));
            bound.1 = bound.1.max(m[3].max(m[7]).max(m[11]));
        }
    }
    let mut chain: Vec<(f64, f64)> = Vec::with_capacity(bones.len());
    let mut worst = 0.0f64;
    for (bone, &(rotation, translation)) in bones.iter().zip(&local) {
        let (r, t) = usize::try_from(bone.parent)
            .ok()
            .and_then(|p| chain.get(p).copied())
            .unwrap_or((1.0, 0.0));
        let here = (r * rotation, t + 3.0 * r * translation);
        // A local pose counts on its own too: a parent scaled to nothing times a huge local
        // pose is NaN, not small.
        worst = worst.max(here.0).max(here.1).max(rotation).max(translation);
        chain.push(here);
    }
    worst
}

/// A model's invariants: parents earlier, frames and poses for every bone, scenes inside the
/// frames, influence bones and triangle corners in range, per-vertex and per-triangle arrays of
/// the mesh's length, the summary agreeing, names found by lookup; and posing and skinning
/// frame 0, the last frame and a blend of the two without an error, giving finite numbers where
/// the poses cannot grow past the range of a float ([`pose_bound`]) and the influences are
/// moderate.
pub fn check_model(model: &Model, what: &str) {
    let nb = model.bones().len();
    let nf = model.frames().len();
    for (i, b) in model.bones().iter().enumerate() {
        assert!(
            b.parent == -1 || (0..i as i32).contains(&b.parent),
            "{what}: bone {i}: parent {}",
            b.parent
        );
        let found = model
            .find_bone(b.name.as_bytes())
            .unwrap_or_else(|| panic!("{what}: bone {i}'s name is not found"));
        assert_eq!(model.bones()[found as usize].name, b.name, "{what}");
        assert!(found as usize <= i, "{what}: bone {i}");
    }
    let slots = match model.unbound() {
        Some(slots) => {
            assert!(
                nb == 0 && nf == 0,
                "{what}: unbound meshes with bones or frames of their own"
            );
            slots.count()
        }
        None => {
            assert_eq!(nb == 0, nf == 0, "{what}: {nb} bones, {nf} frames");
            nb
        }
    };
    for f in 0..nf {
        let poses = model
            .skeleton()
            .frame_poses(f)
            .unwrap_or_else(|| panic!("{what}: frame {f} has no poses"));
        assert_eq!(poses.len(), nb, "{what}: frame {f}");
        for p in poses.iter() {
            assert!(p.is_finite(), "{what}: frame {f}: {p:?}");
        }
    }
    let mut moderate = pose_bound(model) < 1e20;
    for (i, a) in model.animations().iter().enumerate() {
        assert!(a.frame_count > 0, "{what}: scene {i} is empty");
        assert!(
            a.first_frame as u64 + a.frame_count as u64 <= nf as u64,
            "{what}: scene {i}"
        );
        assert!(
            a.fps.is_finite() && a.fps > 0.0,
            "{what}: scene {i}: {} fps",
            a.fps
        );
    }
    for (i, a) in model.animations().iter().enumerate() {
        assert!(a.distance.is_finite(), "{what}: scene {i}: {}", a.distance);
    }
    // Events: each of a scene in range, on a bone or none, by scene and time; a scene's own are
    // exactly its share of them.
    let events = model.events();
    for (i, e) in events.iter().enumerate() {
        assert!(
            (e.animation as usize) < model.animations().len(),
            "{what}: event {i}: scene {}",
            e.animation
        );
        assert!(
            e.bone == -1 || (0..nb as i64).contains(&i64::from(e.bone)),
            "{what}: event {i}: bone {}",
            e.bone
        );
        assert!(e.time.is_finite(), "{what}: event {i}: {} s", e.time);
    }
    assert!(
        events
            .windows(2)
            .all(|w| (w[0].animation, w[0].time) <= (w[1].animation, w[1].time)),
        "{what}: events out of order"
    );
    let per_scene: usize = (0..model.animations().len())
        .map(|a| model.animation_events(a as u32).len())
        .sum();
    assert_eq!(
        per_scene,
        events.len(),
        "{what}: events outside their scenes"
    );
    let info = model.info();
    assert_eq!(info.bone_count as usize, nb, "{what}");
    assert_eq!(info.frame_count as usize, nf, "{what}");
    assert_eq!(info.mesh_count as usize, model.meshes().len(), "{what}");
    let vertices: usize = model.meshes().iter().map(|m| m.vertex_count()).sum();
    assert_eq!(
        info.vertex_count as usize,
        vertices.min(u32::MAX as usize),
        "{what}"
    );
    for (m, mesh) in model.meshes().iter().enumerate() {
        let vc = mesh.vertex_count();
        assert!(mesh.indices().len().is_multiple_of(3), "{what}: mesh {m}");
        assert!(
            mesh.indices().iter().all(|&i| (i as usize) < vc),
            "{what}: mesh {m}: a corner out of range"
        );
        for v in 0..vc {
            for inf in mesh.influences(v) {
                assert!(
                    (inf.bone as usize) < slots,
                    "{what}: mesh {m} vertex {v}: bone {}",
                    inf.bone
                );
                let numbers = inf.origin.iter().chain(&inf.normal).chain([&inf.weight]);
                for x in numbers {
                    assert!(x.is_finite(), "{what}: mesh {m} vertex {v}: {inf:?}");
                    moderate &= x.abs() < 1e6;
                }
            }
        }
        if let Some(t) = mesh.texcoords() {
            assert_eq!(t.len(), vc, "{what}: mesh {m}");
            assert!(
                t.iter().flatten().all(|x| x.is_finite()),
                "{what}: mesh {m}"
            );
        }
        if let Some(g) = mesh.group_ids() {
            assert_eq!(g.len(), mesh.triangle_count(), "{what}: mesh {m}");
        }
    }
    if model.unbound().is_some() || nf == 0 {
        return;
    }
    let last = nf as u32 - 1;
    let blends: [&[FrameBlend]; 3] = [
        &[FrameBlend {
            frame: 0,
            weight: 1.0,
        }],
        &[FrameBlend {
            frame: last,
            weight: 1.0,
        }],
        &[
            FrameBlend {
                frame: 0,
                weight: 0.5,
            },
            FrameBlend {
                frame: last,
                weight: 0.5,
            },
        ],
    ];
    for blend in blends {
        let mut bones = vec![Mat3x4::IDENTITY; nb];
        model
            .pose_frames(blend, None, &mut bones)
            .unwrap_or_else(|e| panic!("{what}: posing {blend:?}: {e}"));
        if moderate {
            assert!(
                bones.iter().all(Mat3x4::is_finite),
                "{what}: {blend:?} poses {bones:?}"
            );
        }
        for (m, mesh) in model.meshes().iter().enumerate() {
            let vc = mesh.vertex_count();
            let mut positions = vec![0.0f32; vc * 3];
            let mut normals = vec![0.0f32; vc * 3];
            let mut target = Strided::new(&mut positions, 3)
                .and_then(|t| t.with_normals(&mut normals, 3))
                .unwrap_or_else(|e| panic!("{what}: packed strides: {e}"));
            model
                .skin_mesh(m, &bones, 0, vc, ossa::SKIN_NORMALIZE, &mut target)
                .unwrap_or_else(|e| panic!("{what}: skinning mesh {m}: {e}"));
            if moderate {
                assert!(
                    positions.iter().chain(&normals).all(|x| x.is_finite()),
                    "{what}: mesh {m} skinned with {blend:?}"
                );
            }
        }
    }
}
