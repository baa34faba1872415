//! The savers' optimisations: unused bones go (attachments and ancestors stay), triangles are
//! ordered for the vertex cache, vertices renumbered by first use; what a model draws is unchanged.

mod corpus;

use corpus::corpus_dir;

use ossa::optimize::{
    OPTIMIZE_ALL, OPTIMIZE_BONE_ORDER, OPTIMIZE_SKIN_ORDER, OPTIMIZE_TRIANGLE_ORDER,
    OPTIMIZE_UNUSED_BONES, OPTIMIZE_VERTEX_ORDER, cache_misses,
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

/// The generated tube, `rings` rings a bone of `sides` vertices each.
fn tube(rings: u32, sides: u32) -> Model {
    TubeRig {
        rings_per_bone: rings,
        sides,
        ..TubeRig::default()
    }
    .build()
    .unwrap()
}

#[test]
fn triangle_and_vertex_order_improve_the_cache_and_draw_the_same() {
    let model = tube(12, 24);
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
fn orders_that_leave_the_bones_share_the_skeleton_and_the_rest_copy_it() {
    let model = tube(6, 12);
    for flags in [
        OPTIMIZE_TRIANGLE_ORDER,
        OPTIMIZE_VERTEX_ORDER | OPTIMIZE_SKIN_ORDER,
        OPTIMIZE_SKIN_ORDER,
    ] {
        let (ordered, report) = model.optimized(flags).unwrap();
        assert!(ordered.shares_skeleton(&model), "flags {flags:#x}");
        assert_eq!(report.bones_before, report.bones_after);
        assert_eq!(drawn(&ordered), drawn(&model), "flags {flags:#x}");
        assert_eq!(
            (ordered.format(), ordered.up_axis(), ordered.frames().len()),
            (model.format(), model.up_axis(), model.frames().len())
        );
    }
    for flags in [OPTIMIZE_UNUSED_BONES, OPTIMIZE_BONE_ORDER, OPTIMIZE_ALL] {
        let (ordered, _) = model.optimized(flags).unwrap();
        assert!(!ordered.shares_skeleton(&model), "flags {flags:#x}");
        assert_eq!(drawn(&ordered), drawn(&model), "flags {flags:#x}");
    }
}

/// A model in skin order already gets its own meshes back, layouts and all, with a report that
/// nothing moved and the cache misses it has, whichever path found it so: the skin order alone
/// (found from the model's meshes, nothing copied) or with the vertex order (copied, renumbered).
#[test]
fn a_model_in_skin_order_already_keeps_its_meshes() {
    let tube = tube(6, 12);
    let (model, first) = tube.optimized(OPTIMIZE_SKIN_ORDER).unwrap();
    assert!(first.vertices_moved > 0, "{first:?}");
    let (again, report) = model.optimized(OPTIMIZE_SKIN_ORDER).unwrap();
    assert_eq!((report.vertices_moved, report.triangles_moved), (0, 0));
    assert_eq!(
        (report.acmr_before, report.acmr_after),
        (first.acmr_after, first.acmr_after)
    );
    assert_eq!(
        (report.bones_before, report.bones_after),
        (model.bones().len() as u32, model.bones().len() as u32)
    );
    assert!(again.shares_skeleton(&model));
    assert_eq!(drawn(&again), drawn(&model));
    assert_eq!(again.heap_bytes(), model.heap_bytes());
    assert_eq!(again.bounds(), model.bounds());
    for (a, b) in again.meshes().iter().zip(model.meshes()) {
        assert_eq!(a.indices(), b.indices());
        assert_eq!(a.all_influences(), b.all_influences());
        assert_eq!(a.texcoords(), b.texcoords());
        assert_eq!(a.skin_layout(), b.skin_layout());
    }
    // The same model by the path that copies and renumbers (the tube's vertices are in the
    // order of first use once in skin order, so the vertex order moves none of them either).
    let (copied, both) = model
        .optimized(OPTIMIZE_VERTEX_ORDER | OPTIMIZE_SKIN_ORDER)
        .unwrap();
    assert_eq!(both.vertices_moved, 0, "{both:?}");
    assert_eq!(drawn(&copied), drawn(&again));
    let layouts = |m: &Model| {
        m.meshes()
            .iter()
            .map(|m| m.skin_layout())
            .collect::<Vec<_>>()
    };
    assert_eq!(layouts(&copied), layouts(&again));
    assert_eq!(copied.heap_bytes(), again.heap_bytes());
    assert_eq!(copied.bounds(), again.bounds());
    assert_eq!(
        (copied.up_axis(), copied.format(), copied.frames().len()),
        (again.up_axis(), again.format(), again.frames().len())
    );
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

// ---------------------------------------------------------------------------------------------
// Bones by first use
// ---------------------------------------------------------------------------------------------

/// A rotation of `a` radians about z, then a move by `t`.
fn turn(a: f32, t: [f32; 3]) -> Mat3x4 {
    let (s, c) = a.sin_cos();
    Mat3x4 {
        m: [c, -s, 0.0, t[0], s, c, 0.0, t[1], 0.0, 0.0, 1.0, t[2]],
    }
}

/// root; a and b under root; a1 under a; tag (an attachment, unused) under b; c (unused) under
/// root. The one triangle's vertices use b, then a1, then root: by first use the bones go
/// root, b, tag, a, a1, c.
fn hand_rig() -> Model {
    let mut parts = ossa::ModelParts::new(ossa::Format::Dpm);
    let bone = |name: &str, parent: i32, flags: u32| Bone {
        name: Name::from(name),
        parent,
        flags,
    };
    parts.bones = vec![
        bone("root", -1, 0),
        bone("a", 0, 0),
        bone("b", 0, 0),
        bone("a1", 1, 0),
        bone("tag", 2, BONE_ATTACHMENT),
        bone("c", 0, 0),
    ];
    parts.frames = (0..3)
        .map(|f| ossa::Frame::named(&format!("f{f}")))
        .collect();
    let mut poses = Vec::new();
    for f in 0..3 {
        for b in 0..6 {
            let a = 0.3 * f as f32 * (b as f32 + 1.0);
            poses.push(turn(a, [b as f32, 1.0 + f as f32, 0.5 * b as f32]));
        }
    }
    parts.poses = poses.into();
    let influence = |bone: u32, weight: f32, p: [f32; 3]| Influence {
        origin: p.map(|x| x * weight),
        weight,
        normal: [0.0, 0.0, weight],
        bone,
    };
    parts.meshes = vec![ossa::MeshParts {
        name: Name::from("m"),
        influence_start: vec![0, 1, 3, 4],
        influences: vec![
            influence(2, 1.0, [1.0, 0.0, 0.0]),
            influence(3, 0.75, [0.0, 1.0, 0.0]),
            influence(1, 0.25, [0.0, 1.0, 2.0]),
            influence(0, 1.0, [0.0, 0.0, 1.0]),
        ],
        indices: vec![0, 1, 2],
        ..Default::default()
    }];
    Model::from_parts(parts).unwrap()
}

fn bone_names(model: &Model) -> Vec<String> {
    model.bones().iter().map(|b| b.name.to_string()).collect()
}

/// Each bone's model-space pose in `frame`, by name.
fn poses_by_name(model: &Model, frame: u32) -> Vec<(String, Mat3x4)> {
    let mut out = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, &mut out)
        .unwrap();
    let mut named: Vec<(String, Mat3x4)> = bone_names(model).into_iter().zip(out).collect();
    named.sort_by(|a, b| a.0.cmp(&b.0));
    named
}

#[test]
fn bones_go_in_order_of_first_use_parents_first() {
    let model = hand_rig();
    let (ordered, report) = model.optimized(OPTIMIZE_BONE_ORDER).unwrap();
    assert_eq!(bone_names(&ordered), ["root", "b", "tag", "a", "a1", "c"]);
    let parents: Vec<i32> = ordered.bones().iter().map(|b| b.parent).collect();
    assert_eq!(parents, [-1, 0, 1, 0, 3, 0]);
    assert_eq!(ordered.bones()[2].flags, BONE_ATTACHMENT);
    assert_eq!(report.bones_moved, 4, "{report:?}");
    assert_eq!((report.bones_before, report.bones_after), (6, 6));
    // The influences follow their bones, so the first vertex's is now bone 1 (b).
    let bones: Vec<u32> = ordered.meshes()[0]
        .all_influences()
        .iter()
        .map(|i| i.bone)
        .collect();
    assert_eq!(bones, [1, 4, 3, 0]);
    for frame in 0..3 {
        assert_eq!(poses_by_name(&ordered, frame), poses_by_name(&model, frame));
    }
    assert_eq!(drawn(&ordered), drawn(&model));
    // In order already: nothing moves.
    let (again, report) = ordered.optimized(OPTIMIZE_BONE_ORDER).unwrap();
    assert_eq!(report.bones_moved, 0);
    assert_eq!(bone_names(&again), bone_names(&ordered));
}

#[test]
fn all_optimisations_drop_unused_bones_keep_attachments_and_order_the_rest() {
    let model = hand_rig();
    let (ordered, report) = model.optimized(OPTIMIZE_ALL).unwrap();
    assert_eq!(bone_names(&ordered), ["root", "b", "tag", "a", "a1"]);
    assert_eq!((report.bones_before, report.bones_after), (6, 5));
    assert_eq!(drawn(&ordered), drawn(&model));
    // Every parent comes before its child, and the result is a pre-order: a bone's parent is the
    // bone before it or one of that bone's ancestors.
    let bones = ordered.bones();
    for (i, b) in bones.iter().enumerate().skip(1) {
        let mut up = i as i32 - 1;
        while up >= 0 && up != b.parent {
            up = bones[up as usize].parent;
        }
        assert_eq!(up, b.parent, "bone {i} is not in pre-order");
    }
}

#[test]
fn bone_order_keeps_a_generated_rig_drawn_the_same() {
    // The tube's bones are a chain used in order: nothing to move; with the spare bones, the
    // unused ones stay after the used ones among their siblings.
    let model = rig_with_spare_bones();
    let (ordered, report) = model.optimized(OPTIMIZE_BONE_ORDER).unwrap();
    assert_eq!(
        bone_names(&ordered),
        [
            "bone0",
            "bone1",
            "bone2",
            "bone3",
            "bone4",
            "tag",
            "under_tag",
            "spare"
        ]
    );
    assert_eq!(report.bones_moved, 3);
    assert_eq!(drawn(&ordered), drawn(&model));
}

// ---------------------------------------------------------------------------------------------
// At most N influences a vertex
// ---------------------------------------------------------------------------------------------

/// One triangle; vertex 0 has six influences of weights 0.3 0.25 0.15 0.12 0.1 0.08 on bones 0
/// to 5, the others one each. Every bone is the identity in frame 0, so each influence puts
/// vertex 0 at (1, 2, 3).
fn six_influences() -> Model {
    let mut parts = ossa::ModelParts::new(ossa::Format::Dpm);
    parts.bones = (0..6)
        .map(|b| Bone {
            name: Name::from(format!("b{b}").as_str()),
            parent: -1,
            flags: 0,
        })
        .collect();
    parts.frames = vec![ossa::Frame::named("rest"), ossa::Frame::named("moved")];
    let mut poses = vec![Mat3x4::IDENTITY; 6];
    poses.extend((0..6).map(|b| turn(0.1 * b as f32, [b as f32, 0.0, 0.0])));
    parts.poses = poses.into();
    let weights = [0.3, 0.25, 0.15, 0.12, 0.1, 0.08f32];
    let p = [1.0, 2.0, 3.0f32];
    let mut influences: Vec<Influence> = weights
        .iter()
        .enumerate()
        .map(|(b, &w)| Influence {
            origin: p.map(|x| x * w),
            weight: w,
            normal: [0.0, 0.0, w],
            bone: b as u32,
        })
        .collect();
    for b in [1, 2] {
        influences.push(Influence {
            origin: [b as f32, 0.0, 0.0],
            weight: 1.0,
            normal: [0.0, 0.0, 1.0],
            bone: b,
        });
    }
    parts.meshes = vec![ossa::MeshParts {
        influence_start: vec![0, 6, 7, 8],
        influences,
        indices: vec![0, 1, 2],
        ..Default::default()
    }];
    Model::from_parts(parts).unwrap()
}

#[test]
fn max_influences_keeps_the_strongest_renormalised_and_says_what_went() {
    let model = six_influences();
    let (capped, report) = model.with_max_influences(4).unwrap();
    assert_eq!((report.vertices, report.most_dropped), (1, 2));
    assert!((report.most_weight - 0.18).abs() < 1e-6, "{report:?}");
    assert_eq!(
        report.describe(),
        "dropped influences: 1 vertex, at most 0.18 of a vertex's weight"
    );
    let mesh = &capped.meshes()[0];
    let kept = mesh.influences(0);
    let bones: Vec<u32> = kept.iter().map(|i| i.bone).collect();
    assert_eq!(bones, [0, 1, 2, 3]);
    let sum: f32 = kept.iter().map(|i| i.weight).sum();
    assert!((sum - 1.0).abs() < 1e-6, "weights sum to {sum}");
    // Each kept bone still carries the vertex to (1, 2, 3): the bind mesh is unchanged.
    for i in kept {
        for (o, p) in i.origin.iter().zip([1.0, 2.0, 3.0]) {
            assert!((o / i.weight - p).abs() < 1e-5, "{i:?}");
        }
    }
    assert_eq!(mesh.influences(1), model.meshes()[0].influences(1));
    // Within the cap, or no cap: nothing changes.
    for n in [0, 6, 9] {
        let (same, report) = model.with_max_influences(n).unwrap();
        assert_eq!(report, Default::default());
        assert_eq!(drawn(&same), drawn(&model));
    }
}

#[test]
fn max_influences_merges_one_bone_named_twice_before_counting() {
    let mut parts = six_influences().to_parts();
    // Vertex 0's last two influences both on bone 4: five bones, merged weight 0.18.
    parts.meshes[0].influences[5].bone = 4;
    let model = Model::from_parts(parts).unwrap();
    let (capped, report) = model.with_max_influences(5).unwrap();
    assert_eq!(report.vertices, 0, "{report:?}");
    let kept = capped.meshes()[0].influences(0);
    assert_eq!(kept.len(), 5);
    assert!((kept[4].weight - 0.18).abs() < 1e-6, "{kept:?}");
    // Adding the two influences rounds once: the same corners to a float's last bit.
    for (a, b) in drawn(&capped).iter().zip(&drawn(&model)) {
        for (x, y) in a.iter().flatten().zip(b.iter().flatten()) {
            let (x, y) = (f32::from_bits(*x), f32::from_bits(*y));
            assert!((x - y).abs() <= 1e-6 * (1.0 + y.abs()), "{x} against {y}");
        }
    }
}

#[test]
fn a_skeleton_alone_keeps_its_bone_order() {
    // root, a, b, a1: not a pre-order, but without vertices nothing says which comes first.
    let mut parts = hand_rig().to_parts();
    parts.meshes.clear();
    let model = Model::from_parts(parts).unwrap();
    let (same, report) = model.optimized(OPTIMIZE_ALL).unwrap();
    assert_eq!(report.bones_moved, 0);
    assert_eq!(bone_names(&same), bone_names(&model));
}

/// A vertex's influence set: its bones and weights, bit for bit.
type InfluenceSet = Vec<(u32, u32)>;

fn influence_set(mesh: &ossa::Mesh, v: usize) -> InfluenceSet {
    mesh.influences(v)
        .iter()
        .map(|i| (i.bone, i.weight.to_bits()))
        .collect()
}

/// Per triangle of every mesh, in order, its corners' influence sets and bind positions: what
/// a triangle is, whatever its vertices' numbers.
fn triangles_in_order(model: &Model) -> Vec<Vec<(InfluenceSet, [u32; 3])>> {
    let bones: Vec<Mat3x4> = (0..model.bones().len()).map(|_| Mat3x4::IDENTITY).collect();
    let mut posed = bones.clone();
    model
        .pose_frames(
            &[FrameBlend {
                frame: 0,
                weight: 1.0,
            }],
            None,
            &mut posed,
        )
        .unwrap();
    let mut out = Vec::new();
    for (m, mesh) in model.meshes().iter().enumerate() {
        let n = mesh.vertex_count();
        let mut p = vec![0.0f32; 3 * n];
        model
            .skin_mesh(m, &posed, 0, n, 0, &mut Strided::new(&mut p, 3).unwrap())
            .unwrap();
        out.push(
            mesh.indices()
                .iter()
                .map(|&i| {
                    let i = i as usize;
                    (
                        influence_set(mesh, i),
                        [
                            p[3 * i].to_bits(),
                            p[3 * i + 1].to_bits(),
                            p[3 * i + 2].to_bits(),
                        ],
                    )
                })
                .collect(),
        );
    }
    out
}

/// Checks what OPTIMIZE_SKIN_ORDER promises of `ordered`, made from `model`: the triangles in
/// their order, each set's vertices contiguous, sets and their vertices in the order the
/// triangles first use them (a set's blended vertices before those skinned influence by
/// influence, each part in that order); and returns the sets and the vertices in runs before
/// and after.
fn check_skin_order(model: &Model, ordered: &Model, what: &str) -> (usize, usize, usize) {
    assert_eq!(
        triangles_in_order(model),
        triangles_in_order(ordered),
        "{what}: a triangle changed"
    );
    let mut sets = 0;
    for mesh in ordered.meshes() {
        let n = mesh.vertex_count();
        // First use by the triangles, then the unused in their order.
        let mut first_use = vec![usize::MAX; n];
        let mut k = 0;
        for &i in mesh
            .indices()
            .iter()
            .chain(&(0..n as u32).collect::<Vec<_>>())
        {
            if first_use[i as usize] == usize::MAX {
                first_use[i as usize] = k;
                k += 1;
            }
        }
        // Blocks of consecutive vertices of one set: each set one block, blocks in the order of
        // their first use, each block ascending in first use in at most two parts.
        let mut blocks: Vec<(InfluenceSet, Vec<usize>)> = Vec::new();
        for (v, &used) in first_use.iter().enumerate() {
            let set = influence_set(mesh, v);
            match blocks.last_mut() {
                Some((s, uses)) if *s == set => uses.push(used),
                _ => blocks.push((set, vec![used])),
            }
        }
        let mut seen = std::collections::HashSet::new();
        let mut last = None;
        for (set, uses) in &blocks {
            assert!(seen.insert(set.clone()), "{what}: set {set:?} is split");
            let descents = uses.windows(2).filter(|w| w[1] < w[0]).count();
            assert!(descents <= 1, "{what}: set {set:?} out of order: {uses:?}");
            let first = *uses.iter().min().unwrap();
            assert!(
                last < Some(first),
                "{what}: set {set:?} before one used earlier"
            );
            last = Some(first);
        }
        sets += blocks.len();
    }
    let in_runs = |m: &Model| -> usize { m.meshes().iter().map(|x| x.skin_layout().in_runs).sum() };
    (sets, in_runs(model), in_runs(ordered))
}

#[test]
fn skin_order_puts_each_influence_set_together_and_keeps_the_triangles() {
    let rig = TubeRig::default().build().unwrap();
    let (ordered, report) = rig.optimized(OPTIMIZE_SKIN_ORDER).unwrap();
    let (sets, before, after) = check_skin_order(&rig, &ordered, "tube rig");
    assert!(sets > 1);
    assert!(after >= before, "{before} -> {after} vertices in runs");
    assert_eq!(report.triangles_moved, 0);
    // The count of vertices that moved is the count whose number changed.
    let moved = (0..rig.meshes()[0].vertex_count())
        .filter(|&v| influence_set(&rig.meshes()[0], v) != influence_set(&ordered.meshes()[0], v))
        .count() as u32;
    assert!(report.vertices_moved >= moved, "{report:?} {moved}");
    assert_eq!(drawn(&rig), drawn(&ordered));

    // With the saver's orders first, the triangles are the cache's order and the sets follow it.
    let (cached, _) = rig
        .optimized(OPTIMIZE_TRIANGLE_ORDER | OPTIMIZE_VERTEX_ORDER)
        .unwrap();
    let (both, _) = rig.optimized(OPTIMIZE_ALL | OPTIMIZE_SKIN_ORDER).unwrap();
    check_skin_order(&cached, &both, "tube rig, all orders");
}

#[test]
fn skin_order_groups_the_corpus_models_sets_into_runs() {
    for name in ["xon_zombie.dpm", "xon_wyvern_lod2.dpm", "xon_okrobot1.dpm"] {
        let path = corpus_dir().join("dpm").join(name);
        let Ok(bytes) = std::fs::read(&path) else {
            eprintln!("corpus not found at {}; skipping {name}", path.display());
            continue;
        };
        let model = Model::load(&bytes, &Default::default()).unwrap();
        let (ordered, report) = model.optimized(OPTIMIZE_SKIN_ORDER).unwrap();
        let (sets, before, after) = check_skin_order(&model, &ordered, name);
        eprintln!(
            "{name}: {sets} influence sets, {} vertices renumbered, in runs {before} -> {after}",
            report.vertices_moved
        );
        assert!(
            after > before,
            "{name}: {before} -> {after} vertices in runs"
        );
        assert_eq!(drawn(&model), drawn(&ordered), "{name}");
    }
}
