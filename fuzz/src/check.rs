//! The checks every load must pass, shared by the fuzz targets and `tests/hostile_all.rs`
//! (which includes this file): a load ends in a model that keeps its invariants or in an error
//! of a clean kind, holds no more memory at once than it is allowed, agrees with the validator
//! and with strict mode, and gives a model that saves in its own format to bytes that validate
//! clean. Each includer has `samples` and `counting_alloc` modules at its root.

use ossa::{ErrorCode, Format, FrameBlend, LoadOptions, Mat3x4, Model, Strided};

use crate::counting_alloc::peak_of;
use crate::samples::WRITERS;

/// What loading bytes may fail with: the data's own fault, never the caller's.
pub const CLEAN_LOAD: [ErrorCode; 5] = [
    ErrorCode::UnknownFormat,
    ErrorCode::Unsupported,
    ErrorCode::Truncated,
    ErrorCode::Malformed,
    ErrorCode::Limit,
];

pub fn options(format: Format, strict: bool) -> LoadOptions<'static> {
    LoadOptions {
        format,
        strict,
        ..LoadOptions::default()
    }
}

/// Fails unless `result` is a model or an error of one of the `clean` kinds with a message.
#[track_caller]
pub fn model_or_clean(
    result: ossa::Result<Model>,
    clean: &[ErrorCode],
    what: &str,
) -> Option<Model> {
    match result {
        Ok(model) => Some(model),
        Err(e) => {
            assert!(clean.contains(&e.code()), "{what}: {:?}: {e}", e.code());
            assert!(!e.detail().message.is_empty(), "{what}: an empty message");
            None
        }
    }
}

/// `data` loaded as `format`: the load holds at most `max_peak` bytes at once, plus the frames
/// of a model whose animations are sampled from keys (DMF: a few bytes of keys ask for up to
/// `MAX_FRAMES` frames at the animation's rate, within the library's own memory ceiling); the
/// validator agrees with it; a strict load succeeds only where the default one
/// does; a model keeps its invariants and, where its format has a writer, saves to bytes that
/// validate clean and load back the same shape.
pub fn load(data: &[u8], format: Format, max_peak: usize) -> Option<Model> {
    let default = options(format, false);
    let (result, peak) = peak_of(|| Model::load(data, &default));
    let sampled = match &result {
        Ok(model) if !model.keyframes().is_empty() => sampled_frame_bytes(model),
        _ => 0,
    };
    assert!(
        peak <= max_peak + sampled,
        "loading {} bytes held {peak} bytes at once ({sampled} of them sampled frames)",
        data.len()
    );
    assert!(
        peak as u64 <= default.max_bytes_for(data.len()),
        "loading {} bytes held {peak} bytes at once, past the library's ceiling",
        data.len()
    );
    let report = ossa::validate(data, &default);
    let strict = Model::load(data, &options(format, true));
    let Some(model) = model_or_clean(result, &CLEAN_LOAD, "load") else {
        assert!(
            !report.problems.is_empty(),
            "the load fails, the validator finds no problem"
        );
        assert!(report.model.is_none());
        assert!(
            strict.is_err(),
            "strict mode loads what the default refuses"
        );
        return None;
    };
    assert!(
        report.problems.is_empty(),
        "the model loads, yet the validator finds {:?}",
        report.problems
    );
    assert!(report.model.is_some());
    if format != Format::Auto {
        assert_eq!(model.format(), format);
    }
    model_or_clean(strict, &CLEAN_LOAD, "strict load");
    check_model(&model);
    save_and_reload(&model);
    Some(model)
}

/// What a model's sampled frames hold: each frame's name and bounds, and a pose of every bone.
fn sampled_frame_bytes(model: &Model) -> usize {
    let per_frame =
        std::mem::size_of::<ossa::Frame>() + model.bones().len() * std::mem::size_of::<Mat3x4>();
    2 * model.frames().len() * per_frame
}

/// Writes the model in its own format, where that has a writer; what is written must validate
/// clean as that format and load back with the same bones, frames and meshes. A writer may
/// refuse a model its format cannot hold, as an unsupported feature or a limit.
fn save_and_reload(model: &Model) {
    let Some(&(format, write)) = WRITERS.iter().find(|(f, _)| *f == model.format()) else {
        return;
    };
    let bytes = match write(model) {
        Ok(bytes) => bytes,
        Err(e) => {
            assert!(
                matches!(e.code(), ErrorCode::Unsupported | ErrorCode::Limit),
                "saving the loaded {} model: {:?}: {e}",
                format.name(),
                e.code()
            );
            return;
        }
    };
    let report = ossa::validate(&bytes, &options(format, false));
    assert!(
        report.problems.is_empty(),
        "the saved {} model does not validate: {:?}",
        format.name(),
        report.problems
    );
    let again = report.model.expect("a model without problems");
    assert_eq!(again.bones().len(), model.bones().len());
    assert_eq!(again.frames().len(), model.frames().len());
    assert_eq!(again.meshes().len(), model.meshes().len());
    for (a, b) in again.meshes().iter().zip(model.meshes()) {
        assert_eq!(a.vertex_count(), b.vertex_count());
        assert_eq!(a.triangle_count(), b.triangle_count());
    }
}

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
pub fn check_model(model: &Model) {
    let nb = model.bones().len();
    let nf = model.frames().len();
    for (i, b) in model.bones().iter().enumerate() {
        assert!(
            b.parent == -1 || (0..i as i32).contains(&b.parent),
            "bone {i}: parent {}",
            b.parent
        );
        let found = model
            .find_bone(b.name.as_bytes())
            .expect("every bone's name is found");
        assert_eq!(model.bones()[found as usize].name, b.name);
        assert!(found as usize <= i);
    }
    let slots = match model.unbound() {
        Some(slots) => {
            assert!(
                nb == 0 && nf == 0,
                "unbound meshes with bones or frames of their own"
            );
            slots.count()
        }
        None => {
            assert_eq!(nb == 0, nf == 0, "{nb} bones, {nf} frames");
            nb
        }
    };
    for f in 0..nf {
        let poses = model
            .skeleton()
            .frame_poses(f)
            .expect("every frame has poses");
        assert_eq!(poses.len(), nb);
        for p in poses.iter() {
            assert!(p.is_finite(), "frame {f}: {p:?}");
        }
    }
    let mut moderate = pose_bound(model) < 1e20;
    for (i, a) in model.animations().iter().enumerate() {
        assert!(a.frame_count > 0, "scene {i} is empty");
        assert!(
            a.first_frame as u64 + a.frame_count as u64 <= nf as u64,
            "scene {i}"
        );
        assert!(a.fps.is_finite() && a.fps > 0.0, "scene {i}: {} fps", a.fps);
    }
    let info = model.info();
    assert_eq!(info.bone_count as usize, nb);
    assert_eq!(info.frame_count as usize, nf);
    assert_eq!(info.mesh_count as usize, model.meshes().len());
    let vertices: usize = model.meshes().iter().map(|m| m.vertex_count()).sum();
    assert_eq!(info.vertex_count as usize, vertices.min(u32::MAX as usize));
    for (m, mesh) in model.meshes().iter().enumerate() {
        let vc = mesh.vertex_count();
        assert!(mesh.indices().len().is_multiple_of(3), "mesh {m}");
        assert!(
            mesh.indices().iter().all(|&i| (i as usize) < vc),
            "mesh {m}: a corner out of range"
        );
        for v in 0..vc {
            for inf in mesh.influences(v) {
                assert!(
                    (inf.bone as usize) < slots,
                    "mesh {m} vertex {v}: bone {}",
                    inf.bone
                );
                let numbers = inf.origin.iter().chain(&inf.normal).chain([&inf.weight]);
                for x in numbers {
                    assert!(x.is_finite(), "mesh {m} vertex {v}: {inf:?}");
                    moderate &= x.abs() < 1e6;
                }
            }
        }
        if let Some(t) = mesh.texcoords() {
            assert_eq!(t.len(), vc, "mesh {m}");
            assert!(t.iter().flatten().all(|x| x.is_finite()), "mesh {m}");
        }
        if let Some(g) = mesh.group_ids() {
            assert_eq!(g.len(), mesh.triangle_count(), "mesh {m}");
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
            .expect("posing a valid blend");
        if moderate {
            assert!(
                bones.iter().all(Mat3x4::is_finite),
                "{blend:?} poses {bones:?}"
            );
        }
        for (m, mesh) in model.meshes().iter().enumerate() {
            let vc = mesh.vertex_count();
            let mut positions = vec![0.0f32; vc * 3];
            let mut normals = vec![0.0f32; vc * 3];
            let mut target = Strided::new(&mut positions, 3)
                .and_then(|t| t.with_normals(&mut normals, 3))
                .expect("packed strides");
            model
                .skin_mesh(m, &bones, 0, vc, ossa::SKIN_NORMALIZE, &mut target)
                .expect("skinning a whole mesh");
            if moderate {
                assert!(
                    positions.iter().chain(&normals).all(|x| x.is_finite()),
                    "mesh {m} skinned with {blend:?}"
                );
            }
        }
    }
}
