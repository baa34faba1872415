//! The savers' optimisations: unused bones go (attachments and ancestors stay), triangles are
//! ordered for the vertex cache, vertices renumbered by first use; what a model draws is unchanged.

mod corpus;

use corpus::corpus_dir;

use ossa::optimize::{
    OPTIMIZE_ALL, OPTIMIZE_TRIANGLE_ORDER, OPTIMIZE_UNUSED_BONES, OPTIMIZE_VERTEX_ORDER,
    cache_misses,
};
use ossa::synth::TubeRig;
use std::time::{Duration, Instant};

use ossa::{BONE_ATTACHMENT, Bone, FrameBlend, Influence, Mat3x4, Model, Name, Strided};

/// Each triangle's three skinned corners at a blended pose, sorted: what the model draws,
/// whatever the order of its vertices and triangles.
fn drawn(model: &Model) -> Vec<[[u32; 3]; 3]> {
    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    let last = model.frames().len() as u32 - 1;
    model
        .pose_frames(
            &[
                FrameBlend {
                    frame: 1.min(last),
                    weight: 0.5,
                },
                FrameBlend {
                    frame: last,
                    weight: 0.5,
                },
            ],
            None,
            &mut bones,
        )
        .unwrap();
    let mut out = Vec::new();
    for (m, mesh) in model.meshes().iter().enumerate() {
        let n = mesh.vertex_count();
        let mut p = vec![0.0f32; 3 * n];
        model
            .skin_mesh(m, &bones, 0, n, 0, &mut Strided::new(&mut p, 3).unwrap())
            .unwrap();
        let corner = |i: u32| {
            [
                p[3 * i as usize].to_bits(),
                p[3 * i as usize + 1].to_bits(),
                p[3 * i as usize + 2].to_bits(),
            ]
        };
        out.extend(
            mesh.indices()
                .chunks_exact(3)
                .map(|t| [corner(t[0]), corner(t[1]), corner(t[2])]),
        );
    }
    out.sort_unstable();
    out
}

/// A tube whose skeleton also has an unused leaf bone, an unused attachment bone, and an unused
/// bone below the attachment (a descendant, not an ancestor, so it goes).
fn rig_with_spare_bones() -> Model {
    let mut parts = TubeRig::default().parts();
    let nb = parts.bones.len();
    let extra = [
        Bone {
            name: Name::from("spare"),
            parent: 2,
            flags: 0,
        },
        Bone {
            name: Name::from("tag"),
            parent: 4,
            flags: BONE_ATTACHMENT,
        },
        Bone {
            name: Name::from("under_tag"),
            parent: nb as i32 + 1,
            flags: 0,
        },
    ];
    let frames = parts.frames.len();
    let mut poses = Vec::new();
    for f in 0..frames {
        poses.extend_from_slice(&parts.poses.range(f * nb, nb).unwrap());
        poses.extend(std::iter::repeat_n(
            Mat3x4::from_translation([1.0, 2.0, 3.0]),
            extra.len(),
        ));
    }
    parts.bones.extend(extra);
    parts.poses = poses.into();
    Model::from_parts(parts).unwrap()
}

#[test]
fn unused_bones_go_attachments_and_ancestors_stay() {
    let model = rig_with_spare_bones();
    let (optimized, report) = model.optimized(OPTIMIZE_UNUSED_BONES).unwrap();
    let names: Vec<String> = optimized
        .bones()
        .iter()
        .map(|b| b.name.to_string())
        .collect();
    assert_eq!(names, ["bone0", "bone1", "bone2", "bone3", "bone4", "tag"]);
    assert_eq!(optimized.bones()[5].parent, 4);
    assert_eq!((report.bones_before, report.bones_after), (8, 6));
    assert_eq!((report.triangles_moved, report.vertices_moved), (0, 0));
    assert_eq!(drawn(&optimized), drawn(&model));
    // The kept bones' poses are the same matrices.
    assert_eq!(
        optimized.skeleton().frame_poses(2).unwrap()[..5],
        model.skeleton().frame_poses(2).unwrap()[..5]
    );
}

#[test]
fn triangle_and_vertex_order_improve_the_cache_and_draw_the_same() {
    let model = TubeRig {
        rings_per_bone: 12,
        sides: 24,
        ..TubeRig::default()
    }
    .build()
    .unwrap();
    let (ordered, report) = model
        .optimized(OPTIMIZE_TRIANGLE_ORDER | OPTIMIZE_VERTEX_ORDER)
        .unwrap();
    assert!(report.acmr_after < report.acmr_before, "{report:?}");
    assert!(
        report.triangles_moved > 0 && report.vertices_moved > 0,
        "{report:?}"
    );
    assert_eq!(drawn(&ordered), drawn(&model));
    // First use order: each index is at most one past the largest seen before it.
    let mut next = 0;
    for &i in ordered.meshes()[0].indices() {
        assert!(i <= next, "vertex {i} used before {next}");
        next = next.max(i + 1);
    }
    let before = cache_misses(model.meshes()[0].indices(), 16);
    let after = cache_misses(ordered.meshes()[0].indices(), 16);
    assert!(after < before, "{after} misses after, {before} before");
}

#[test]
fn a_corpus_model_optimises_and_saves() {
    let path = corpus_dir().join("dpm/xon_zombie.dpm");
    let Ok(bytes) = std::fs::read(&path) else {
        eprintln!(
            "corpus not found at {}; skipping a_corpus_model_optimises_and_saves",
            path.display()
        );
        return;
    };
    let model = Model::load(&bytes, &Default::default()).unwrap();
    let (optimized, report) = model.optimized(OPTIMIZE_ALL).unwrap();
    assert!(report.acmr_after < report.acmr_before, "{report:?}");
    assert_eq!(drawn(&optimized), drawn(&model));
    let saved = ossa::dpm::write(&optimized).unwrap();
    let reloaded = Model::load(&saved, &Default::default()).unwrap();
    assert_eq!(drawn(&reloaded), drawn(&model));
    eprintln!("zombie: {report:?}");
}

/// The tube's skeleton with one mesh of `vertices` vertices, each on bone 0, and the triangles
/// `indices`; triangle `t` is in group `t % 5`, so that the groups' following their triangles
/// shows.
fn one_mesh(vertices: usize, indices: Vec<u32>) -> Model {
    let mut parts = TubeRig::default().parts();
    parts.meshes.truncate(1);
    let mesh = &mut parts.meshes[0];
    mesh.influence_start = (0..=vertices as u32).collect();
    mesh.influences = (0..vertices)
        .map(|v| Influence {
            origin: [v as f32, (v % 7) as f32, 1.0],
            weight: 1.0,
            normal: [0.0, 0.0, 1.0],
            bone: 0,
        })
        .collect();
    mesh.texcoords = Some((0..vertices).map(|v| [v as f32, 0.5]).collect());
    mesh.group_ids = Some((0..indices.len() as u32 / 3).map(|t| t % 5).collect());
    mesh.indices = indices;
    Model::from_parts(parts).unwrap()
}

/// Each triangle with its group, sorted: equal for two meshes whose triangles are the same
/// up to their order.
fn triangles_and_groups(model: &Model) -> Vec<([u32; 3], u32)> {
    let mesh = &model.meshes()[0];
    let mut out: Vec<([u32; 3], u32)> = mesh
        .indices()
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]])
        .zip(mesh.group_ids().unwrap().iter().copied())
        .collect();
    out.sort_unstable();
    out
}

/// Orders the triangles of `model` within `cap` and checks that the result is a permutation of
/// them, each keeping its group.
fn orders_in_time(model: &Model, cap: Duration, what: &str) -> Model {
    let start = Instant::now();
    let (ordered, report) = model.optimized(OPTIMIZE_TRIANGLE_ORDER).unwrap();
    let took = start.elapsed();
    assert!(took < cap, "{what}: ordering took {took:?}");
    assert_eq!(
        triangles_and_groups(&ordered),
        triangles_and_groups(model),
        "{what}"
    );
    assert!(
        report.acmr_after <= report.acmr_before,
        "{what}: {report:?}"
    );
    eprintln!("{what}: {took:?}, {report:?}");
    ordered
}

// Ordering looked at every live triangle of each cached vertex at every step: quadratic in a
// vertex's valence (a minute for each of these two in a release build). Now a step scores a
// bounded number of them; each takes a few seconds in a debug build, under 0.2 s in a release
// one, so the cap is one a hang trips.
const CAP: Duration = Duration::from_secs(30);

#[test]
fn one_triangle_repeated_orders_in_linear_time() {
    let n = 100_000;
    let model = one_mesh(3, [0, 1, 2].repeat(n));
    let ordered = orders_in_time(&model, CAP, "100k copies of a triangle");
    assert_eq!(cache_misses(ordered.meshes()[0].indices(), 16), 3);
}

#[test]
fn a_fan_orders_in_linear_time() {
    let n = 200_000u32;
    let indices: Vec<u32> = (0..n).flat_map(|i| [0, i + 1, i + 2]).collect();
    let model = one_mesh(n as usize + 2, indices);
    let ordered = orders_in_time(&model, CAP, "a fan of 200k triangles");
    // A fan in order is already as good as it gets; the order keeps its misses (a FIFO cache
    // loses the hub every 15 new vertices).
    let misses = cache_misses(ordered.meshes()[0].indices(), 16);
    assert_eq!(misses, cache_misses(model.meshes()[0].indices(), 16));
    assert_eq!(misses, n as usize + 2 + (n as usize + 2) / 16);
}
