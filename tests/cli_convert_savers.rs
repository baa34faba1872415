//! `ossa convert` into DPM, SKM, DMF and MM2, run as the built binary: the savers'
//! optimisations (unused bones removed, bones, vertices and triangles by first use) unless
//! `--keep-order`, refusals that name what does not fit, and the lossy options
//! (`--max-influences`, `--bake-scale`) saying what they changed. Every model is built in code.

#![cfg(feature = "cli")]

mod cli_support;
mod corpus;

use cli_support::{TempDir, ossa};
use ossa::synth::TubeRig;
use ossa::{
    BONE_ATTACHMENT, Bone, Format, Frame, FrameBlend, Influence, LoadOptions, Mat3x4, MeshParts,
    Model, ModelParts, Name, Strided,
};

// ---------------------------------------------------------------------------------------------
// Models built in code
// ---------------------------------------------------------------------------------------------

/// A rotation of `a` radians about z, then a move by `t`.
fn turn(a: f32, t: [f32; 3]) -> Mat3x4 {
    let (s, c) = a.sin_cos();
    Mat3x4 {
        m: [c, -s, 0.0, t[0], s, c, 0.0, t[1], 0.0, 0.0, 1.0, t[2]],
    }
}

fn bone(name: &str, parent: i32, flags: u32) -> Bone {
    Bone {
        name: Name::from(name),
        parent,
        flags,
    }
}

fn influence(bone: u32, weight: f32, p: [f32; 3]) -> Influence {
    Influence {
        origin: p.map(|x| x * weight),
        weight,
        normal: [0.0, 0.0, weight],
        bone,
    }
}

/// The tube with three bones no vertex uses: a leaf, an attachment (kept) and one below the
/// attachment; their poses move in every frame.
fn tube_with_spare_bones() -> Model {
    let mut parts = TubeRig::default().parts();
    let nb = parts.bones.len();
    let extra = [
        bone("spare", 2, 0),
        bone("tag", 4, BONE_ATTACHMENT),
        bone("under_tag", nb as i32 + 1, 0),
    ];
    let mut poses = Vec::new();
    for f in 0..parts.frames.len() {
        poses.extend_from_slice(&parts.poses.range(f * nb, nb).unwrap());
        poses.extend((0..3).map(|b| turn(0.2 * (f + b) as f32, [1.0, 2.0, 3.0])));
    }
    parts.bones.extend(extra);
    parts.poses = poses.into();
    Model::from_parts(parts).unwrap()
}

/// root; a and b under root; a1 under a; tag (an attachment, unused) under b; c (unused) under
/// root. The triangle's vertices use b, then a1 and a, then root: by first use the bones are
/// root, b, tag, a, a1 (c removed).
fn small_rig() -> Model {
    let mut parts = ModelParts::new(Format::Dpm);
    parts.bones = vec![
        bone("root", -1, 0),
        bone("a", 0, 0),
        bone("b", 0, 0),
        bone("a1", 1, 0),
        bone("tag", 2, BONE_ATTACHMENT),
        bone("c", 0, 0),
    ];
    parts.frames = (0..3).map(|f| Frame::named(&format!("f{f}"))).collect();
    parts.poses = (0..3)
        .flat_map(|f| (0..6).map(move |b| turn(0.3 * (f * (b + 1)) as f32, [b as f32, 1.0, 0.0])))
        .collect::<Vec<_>>()
        .into();
    parts.meshes = vec![MeshParts {
        name: Name::from("m"),
        shader: Name::from("m"),
        influence_start: vec![0, 1, 3, 4],
        influences: vec![
            influence(2, 1.0, [1.0, 0.0, 0.0]),
            influence(3, 0.75, [0.0, 1.0, 0.0]),
            // At rest a1's joint is at (4, 3, 0) and a's at (1, 2, 0): both put it at (4, 4, 0).
            influence(1, 0.25, [3.0, 2.0, 0.0]),
            influence(0, 1.0, [0.0, 0.0, 1.0]),
        ],
        indices: vec![0, 1, 2],
        ..Default::default()
    }];
    Model::from_parts(parts).unwrap()
}

/// One triangle on six bones at the identity in frame 0; vertex 0 has six influences, weights
/// 0.3 0.25 0.15 0.12 0.1 0.08 (all at the point (1, 2, 3)), the others one each. The triangle
/// uses it last, so that optimising numbers it 2: a refusal still names it as the input does.
fn six_influences() -> Model {
    let mut parts = ModelParts::new(Format::Dpm);
    parts.bones = (0..6).map(|b| bone(&format!("b{b}"), -1, 0)).collect();
    parts.frames = vec![Frame::named("rest"), Frame::named("moved")];
    let mut poses = vec![Mat3x4::IDENTITY; 6];
    poses.extend((0..6).map(|b| turn(0.1 * b as f32, [b as f32, 0.0, 0.0])));
    parts.poses = poses.into();
    let mut influences: Vec<Influence> = [0.3, 0.25, 0.15, 0.12, 0.1, 0.08f32]
        .iter()
        .enumerate()
        .map(|(b, &w)| influence(b as u32, w, [1.0, 2.0, 3.0]))
        .collect();
    influences.push(influence(1, 1.0, [1.0, 0.0, 0.0]));
    influences.push(influence(2, 1.0, [0.0, 1.0, 0.0]));
    parts.meshes = vec![MeshParts {
        name: Name::from("m"),
        shader: Name::from("m"),
        influence_start: vec![0, 6, 7, 8],
        influences,
        indices: vec![1, 2, 0],
        ..Default::default()
    }];
    Model::from_parts(parts).unwrap()
}

/// Two bones; at rest the child is turned a quarter about z and scaled by 2 (in frame 0, the
/// rest pose MM2 writes), and frame 1 bends it further. Each vertex follows one bone.
fn turned_rest_pose() -> Model {
    let mut parts = ModelParts::new(Format::Dpm);
    parts.bones = vec![bone("hip", -1, 0), bone("leg", 0, 0)];
    parts.frames = vec![Frame::named("rest"), Frame::named("bent")];
    let mut leg = turn(std::f32::consts::FRAC_PI_2, [0.0, 0.0, -5.0]);
    for k in [0, 1, 2, 4, 5, 6, 8, 9, 10] {
        leg.m[k] *= 2.0;
    }
    parts.poses = vec![
        Mat3x4::from_translation([0.0, 0.0, 10.0]),
        leg,
        Mat3x4::from_translation([0.0, 0.0, 10.0]),
        turn(2.0, [0.0, 0.0, -5.0]),
    ]
    .into();
    parts.meshes = vec![MeshParts {
        name: Name::from("legs"),
        shader: Name::from("legs"),
        influence_start: vec![0, 1, 2, 3],
        influences: vec![
            influence(0, 1.0, [1.0, 0.0, 0.0]),
            influence(1, 1.0, [0.0, 1.0, 0.0]),
            influence(1, 1.0, [0.5, 0.0, -1.0]),
        ],
        indices: vec![0, 1, 2],
        ..Default::default()
    }];
    Model::from_parts(parts).unwrap()
}

fn load(path: std::path::PathBuf) -> Model {
    Model::load_file(&path, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn bone_names(model: &Model) -> Vec<String> {
    model.bones().iter().map(|b| b.name.to_string()).collect()
}

/// Each triangle's skinned corners in `frame`, sorted: what the model draws whatever the order
/// of its vertices, triangles and bones.
fn drawn(model: &Model, frame: u32) -> Vec<[[f32; 3]; 3]> {
    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, &mut bones)
        .unwrap();
    let mut out = Vec::new();
    for (m, mesh) in model.meshes().iter().enumerate() {
        let n = mesh.vertex_count();
        let mut p = vec![0.0f32; 3 * n];
        model
            .skin_mesh(m, &bones, 0, n, 0, &mut Strided::new(&mut p, 3).unwrap())
            .unwrap();
        let corner = |i: u32| {
            let i = 3 * i as usize;
            [p[i], p[i + 1], p[i + 2]]
        };
        out.extend(
            mesh.indices()
                .chunks_exact(3)
                .map(|t| [corner(t[0]), corner(t[1]), corner(t[2])]),
        );
    }
    // Sorted by the corners to a thousandth, so that the rounding of a saved and loaded model
    // does not change the order.
    out.sort_by_key(|t| t.map(|c| c.map(|x| (x * 1000.0).round() as i64)));
    out
}

/// The two models draw the same triangles in `frame`, within 1e-5 of the model's size.
fn assert_drawn_alike(a: &Model, b: &Model, frame: u32) {
    let (x, y) = (drawn(a, frame), drawn(b, frame));
    assert_eq!(x.len(), y.len());
    let size = y
        .iter()
        .flatten()
        .flatten()
        .fold(1.0f32, |m, v| m.max(v.abs()));
    for (s, t) in x.iter().zip(&y) {
        for (p, q) in s.iter().flatten().zip(t.iter().flatten()) {
            assert!(
                (p - q).abs() <= 1e-5 * size,
                "frame {frame}: {s:?} against {t:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Optimised unless --keep-order
// ---------------------------------------------------------------------------------------------

#[test]
fn unused_bones_go_and_the_rig_skins_the_same_in_every_frame() {
    let dir = TempDir::new("convert-savers", "unused");
    let model = tube_with_spare_bones();
    dir.write("spare.dpm", ossa::dpm::write(&model).unwrap());
    let run = ossa(&dir.0, &["convert", "spare.dpm", "-o", "out.dpm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let line = run.line("out.dpm: DPM, ");
    assert!(
        line.contains("; optimised: 2 unused bones removed, "),
        "{line}"
    );
    let out = load(dir.path("out.dpm"));
    assert_eq!(
        bone_names(&out),
        ["bone0", "bone1", "bone2", "bone3", "bone4", "tag"]
    );
    assert_eq!(out.bones()[5].flags & BONE_ATTACHMENT, BONE_ATTACHMENT);
    for frame in 0..4 {
        assert_drawn_alike(&out, &model, frame);
    }
    // Into DMF alike (its own bind pose, so compared at rest).
    let run = ossa(&dir.0, &["convert", "spare.dpm", "-o", "out.dmf"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let dmf = load(dir.path("out.dmf"));
    assert_eq!(
        bone_names(&dmf),
        ["bone0", "bone1", "bone2", "bone3", "bone4", "tag"]
    );
    assert_drawn_alike(&dmf, &model, 0);
}

#[test]
fn bones_follow_first_use_and_keep_order_keeps_the_models() {
    let dir = TempDir::new("convert-savers", "order");
    let model = small_rig();
    dir.write("rig.dpm", ossa::dpm::write(&model).unwrap());
    let run = ossa(&dir.0, &["convert", "rig.dpm", "-o", "out.dpm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.line("out.dpm:").split("; ").nth(1).unwrap(),
        "optimised: 1 unused bone removed, 4 bones renumbered"
    );
    let out = load(dir.path("out.dpm"));
    assert_eq!(bone_names(&out), ["root", "b", "tag", "a", "a1"]);
    let parents: Vec<i32> = out.bones().iter().map(|b| b.parent).collect();
    assert_eq!(parents, [-1, 0, 1, 0, 3]);
    for frame in 0..3 {
        assert_drawn_alike(&out, &model, frame);
    }

    let run = ossa(
        &dir.0,
        &["convert", "rig.dpm", "-o", "kept.dpm", "--keep-order"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("optimised"), "{}", run.stdout);
    let kept = load(dir.path("kept.dpm"));
    assert_eq!(bone_names(&kept), ["root", "a", "b", "a1", "tag", "c"]);
    // The model's own bytes: a DPM written as loaded.
    assert_eq!(
        std::fs::read(dir.path("kept.dpm")).unwrap(),
        std::fs::read(dir.path("rig.dpm")).unwrap()
    );

    // Written again, the optimised file has nothing left to change.
    let run = ossa(&dir.0, &["convert", "out.dpm", "-o", "again.dpm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("optimised"), "{}", run.stdout);

    // glTF is written in the model's order, and --keep-order says it has no order to keep.
    let run = ossa(
        &dir.0,
        &["convert", "rig.dpm", "-o", "x.skn", "--keep-order"],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--keep-order is for DPM, SKM, SKP, DMF and MM2 output"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_skm_and_its_skp_converted_alike_fit_together() {
    let dir = TempDir::new("convert-savers", "skm-skp");
    let model = small_rig();
    dir.write("rig.dpm", ossa::dpm::write(&model).unwrap());
    std::fs::create_dir_all(dir.path("out")).unwrap();
    for out in ["rig.skm", "rig.skp"] {
        let run = ossa(&dir.0, &["convert", "rig.dpm", "-o", &format!("out/{out}")]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let out = load(dir.path("out/rig.skm"));
    assert_eq!(bone_names(&out), ["root", "b", "tag", "a", "a1"]);
    for frame in 0..3 {
        assert_drawn_alike(&out, &model, frame);
    }
}

// ---------------------------------------------------------------------------------------------
// Refusals, and the lossy options
// ---------------------------------------------------------------------------------------------

#[test]
fn six_influences_are_refused_by_dmf_unless_capped() {
    let dir = TempDir::new("convert-savers", "influences");
    let model = six_influences();
    dir.write("six.dpm", ossa::dpm::write(&model).unwrap());
    let run = ossa(&dir.0, &["convert", "six.dpm", "-o", "six.dmf"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr.trim_end(),
        "ossa: six.dpm: OSSA_ERR_UNSUPPORTED: mesh 0 vertex 0 has 6 influences; a DMF vertex \
         holds 4"
    );
    assert!(!dir.path("six.dmf").exists());

    let run = ossa(
        &dir.0,
        &[
            "convert",
            "six.dpm",
            "-o",
            "six.dmf",
            "--max-influences",
            "4",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.line("six.dmf:").split("; ").nth(1).unwrap(),
        "dropped influences: 1 vertex, at most 0.18 of a vertex's weight"
    );
    let out = load(dir.path("six.dmf"));
    let most = out.meshes()[0].max_influences();
    assert_eq!(most, 4);
    // Every kept influence still puts the vertex where it was at rest.
    assert_drawn_alike(&out, &model, 0);

    // Within the cap nothing is dropped, and nothing said.
    let run = ossa(
        &dir.0,
        &[
            "convert",
            "six.dpm",
            "-o",
            "all.dpm",
            "--max-influences",
            "6",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("dropped"), "{}", run.stdout);

    let run = ossa(
        &dir.0,
        &["convert", "six.dpm", "-o", "x.skn", "--max-influences", "4"],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(
            "--max-influences is for glTF, DPM, SKM, SKP, DMF, MM2 and IQM output, not Sims SKN"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn mm2_refuses_a_turned_rest_pose_and_bakes_it_when_asked() {
    let dir = TempDir::new("convert-savers", "mm2");
    let model = turned_rest_pose();
    dir.write("legs.dpm", ossa::dpm::write(&model).unwrap());
    for (out, what) in [
        ("legs.skel", "an MM2 bone is an offset only"),
        (
            "legs.mod",
            "an MM2 vertex is an offset from its bone's joint",
        ),
    ] {
        let run = ossa(&dir.0, &["convert", "legs.dpm", "-o", out]);
        assert_eq!(run.code, 1);
        assert_eq!(
            run.stderr.trim_end(),
            format!(
                "ossa: legs.dpm: OSSA_ERR_UNSUPPORTED: bone 1 (leg): its rest pose rotates or \
                 scales, and {what}"
            )
        );
    }
    std::fs::create_dir_all(dir.path("mm2")).unwrap();
    for out in ["mm2/legs.skel", "mm2/legs.mod"] {
        let run = ossa(&dir.0, &["convert", "legs.dpm", "-o", out, "--bake-scale"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains(
                "; rest pose baked: 1 bone rotated or scaled at rest, now offsets (the skinned \
                 mesh is unchanged)"
            ),
            "{}",
            run.stdout
        );
    }
    let run = ossa(
        &dir.0,
        &["convert", "legs.dpm", "-o", "mm2/legs.skel", "--bake-scale"],
    );
    assert!(
        run.stdout
            .contains("; 1 frame after the first not written (a .skel holds the rest pose)"),
        "{}",
        run.stdout
    );
    // The .mod finds its .skel beside it: the mesh at rest is where the DPM put it.
    let out = load(dir.path("mm2/legs.mod"));
    assert_eq!(bone_names(&out), ["hip", "leg"]);
    assert_drawn_alike(&out, &model, 0);

    // The library's bake keeps every frame skinned alike.
    let (baked, report) = ossa::mm2::bake_rest_pose(&model).unwrap();
    assert_eq!(report.bones, 1);
    for frame in 0..2 {
        assert_drawn_alike(&baked, &model, frame);
    }

    let run = ossa(
        &dir.0,
        &["convert", "legs.dpm", "-o", "x.dpm", "--bake-scale"],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--bake-scale is for MM2 output (.skel, .mod), not DPM"),
        "{}",
        run.stderr
    );
}

#[test]
fn mm2_takes_one_bone_a_vertex_after_max_influences_1() {
    let dir = TempDir::new("convert-savers", "mm2-one");
    dir.write(
        "tube.dpm",
        ossa::dpm::write(&TubeRig::default().build().unwrap()).unwrap(),
    );
    let run = ossa(&dir.0, &["convert", "tube.dpm", "-o", "tube.mod"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "OSSA_ERR_UNSUPPORTED: mesh 0 vertex 24: 2 influences; an MM2 vertex follows \
             exactly one bone with weight 1"
        ),
        "{}",
        run.stderr
    );
    let run = ossa(
        &dir.0,
        &[
            "convert",
            "tube.dpm",
            "-o",
            "tube.mod",
            "--max-influences",
            "1",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("; dropped influences: "),
        "{}",
        run.stdout
    );
}

#[test]
fn skm_limits_name_what_does_not_fit() {
    let dir = TempDir::new("convert-savers", "skm-limits");
    let many_bones = TubeRig {
        bones: 257,
        rings_per_bone: 1,
        sides: 3,
        frames: 1,
        ..TubeRig::default()
    };
    dir.write(
        "bones.dpm",
        ossa::dpm::write(&many_bones.build().unwrap()).unwrap(),
    );
    let mut parts = TubeRig::default().parts();
    let mesh = parts.meshes[0].clone();
    parts.meshes = vec![mesh.clone(); 33];
    dir.write(
        "meshes.dpm",
        ossa::dpm::write(&Model::from_parts(parts).unwrap()).unwrap(),
    );
    let mut parts = TubeRig::default().parts();
    parts.meshes.truncate(1);
    parts.meshes[0].indices = [0, 1, 2].repeat(65537);
    parts.meshes[0].group_ids = None;
    dir.write(
        "triangles.dpm",
        ossa::dpm::write(&Model::from_parts(parts).unwrap()).unwrap(),
    );
    for (input, message) in [
        (
            "bones.dpm",
            "bone count: 257 is over the format's limit of 256",
        ),
        (
            "meshes.dpm",
            "mesh count: 33 is over the format's limit of 32",
        ),
        (
            "triangles.dpm",
            "mesh 0: triangle count: 65537 is over the format's limit of 65536",
        ),
    ] {
        let run = ossa(&dir.0, &["convert", input, "-o", "out.skm"]);
        assert_eq!(run.code, 1, "{input}");
        assert!(
            run.stderr.contains("OSSA_ERR_LIMIT: ") && run.stderr.contains(message),
            "{input}: {}",
            run.stderr
        );
    }
}

#[test]
fn keep_order_keeps_a_dmf_s_bytes_through_json() {
    let dir = TempDir::new("convert-savers", "dmf-json");
    dir.write("rig.dmf", small_rig().save(Format::Dmf).unwrap());
    let run = ossa(
        &dir.0,
        &[
            "convert",
            "rig.dmf",
            "-o",
            "rig.json",
            "--to",
            "dmf-json",
            "--keep-order",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = ossa(
        &dir.0,
        &["convert", "rig.json", "-o", "back.dmf", "--keep-order"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        std::fs::read(dir.path("back.dmf")).unwrap(),
        std::fs::read(dir.path("rig.dmf")).unwrap()
    );
    // Optimised, the unused bones go: a DMF keeps no bone flags, so `tag` is no attachment
    // once read from one (a bone named `tag_...` would stay).
    let run = ossa(&dir.0, &["convert", "rig.json", "-o", "opt.dmf"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        bone_names(&load(dir.path("opt.dmf"))),
        ["root", "b", "a", "a1"]
    );
}
