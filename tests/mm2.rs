//! Midtown Madness 2 pedestrians, `.skel` + `.mod`. No real file is public, so everything here
//! rests on the format's documents and on files written here: the documented 4-bone skeleton,
//! small skeletons and meshes written line by line from the Mm2kiwi pages and the Blender
//! addon's readers (never with ossa's writers, so that a writer and a reader cannot share a
//! misunderstanding), humanoid and quadruped rigs built in code and saved with the writers,
//! checked at rest and posed against positions worked out here, the colour bytes each corner
//! names, round trips, every error class with its line, and the sidecar rule.

mod memory_fs;
use memory_fs::MemoryFs;

use ossa::{
    Bone, BoneSlots, Error, ErrorCode, Format, Frame, FrameBlend, Influence, LoadOptions, Mat3x4,
    MeshParts, Model, ModelParts, Strided, mm2,
};

mod mm2_fixtures;
use mm2_fixtures::{
    DOLL_MOD, DOLL_RUNS, PACKET_MOD, PACKET_TAIL, SEED, doll_mod, doll_skel, options, packet_mod,
    seed, strict, text,
};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn skel(text: &str) -> ossa::Result<Model> {
    Model::load(text.as_bytes(), &options(Format::Mm2Skel))
}

fn module(text: &str) -> ossa::Result<Model> {
    Model::load(text.as_bytes(), &options(Format::Mm2Mod))
}

/// The error of text that must not load, with its code and line checked; validation reports a
/// problem on the same line.
fn fails_on_line(r: ossa::Result<Model>, code: ErrorCode, line: u32, what: &str) -> Error {
    let e = match r {
        Ok(_) => panic!("{what}: loaded"),
        Err(e) => e,
    };
    assert_eq!(e.code(), code, "{what}: {e}");
    assert_eq!(e.line(), Some(line), "{what}: {e}");
    e
}

fn skel_fails(text: &str, code: ErrorCode, line: u32, says: &str) {
    let e = fails_on_line(skel(text), code, line, says);
    assert!(e.to_string().contains(says), "{says}: {e}");
    let report = ossa::validate(text.as_bytes(), &options(Format::Mm2Skel));
    assert!(report.model.is_none(), "{says}");
    assert!(
        report.problems.iter().any(|p| p.line() == Some(line)),
        "{says}: {:?}",
        report.problems
    );
}

fn mod_fails(text: &str, code: ErrorCode, line: u32, says: &str) {
    let e = fails_on_line(module(text), code, line, says);
    assert!(e.to_string().contains(says), "{says}: {e}");
    let report = ossa::validate(text.as_bytes(), &options(Format::Mm2Mod));
    assert!(report.model.is_none(), "{says}");
    assert!(
        report.problems.iter().any(|p| p.line() == Some(line)),
        "{says}: {:?}",
        report.problems
    );
}

/// Loads with one warning that names `says` and `line`, and fails in strict mode on that line.
fn tolerated(text: &str, format: Format, line: u32, says: &str) -> Model {
    let model =
        Model::load(text.as_bytes(), &options(format)).unwrap_or_else(|e| panic!("{says}: {e}"));
    assert_eq!(model.warnings().len(), 1, "{says}: {:?}", model.warnings());
    let w = model.warnings()[0].to_string();
    assert!(w.contains(says), "{says}: {w}");
    assert!(w.starts_with(&format!("line {line}:")), "{says}: {w}");
    let e = Model::load(text.as_bytes(), &strict(format)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{says}: {e}");
    assert_eq!(e.line(), Some(line), "{says}: {e}");
    model
}

/// Model-space positions of mesh `m` skinned with `bones`.
fn skinned(model: &Model, m: usize, bones: &[Mat3x4]) -> Vec<[f32; 3]> {
    let n = model.meshes()[m].vertex_count();
    let mut pos = vec![0f32; 3 * n];
    let mut target = Strided::new(&mut pos, 3).unwrap();
    model.skin_mesh(m, bones, 0, n, 0, &mut target).unwrap();
    pos.chunks(3).map(|c| [c[0], c[1], c[2]]).collect()
}

fn rest_bones(model: &Model) -> Vec<Mat3x4> {
    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(
            &[FrameBlend {
                frame: 0,
                weight: 1.0,
            }],
            None,
            &mut bones,
        )
        .unwrap();
    bones
}

fn near(a: [f32; 3], b: [f64; 3], tol: f64, what: &str) {
    for k in 0..3 {
        assert!(
            (a[k] as f64 - b[k]).abs() <= tol,
            "{what}: {a:?} is not {b:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The documented skeleton (seed 003, Mm2kiwi "Pedestrian skeleton")
// ---------------------------------------------------------------------------------------------

#[test]
fn the_documented_skeleton_puts_the_head_at_the_sum_of_its_four_offsets() {
    for eol in ["\n", "\r\n"] {
        let model = tolerated(
            &seed(eol),
            Format::Mm2Skel,
            1,
            "NumBones says 3, the file has 4 bones",
        );
        let names: Vec<String> = model.bones().iter().map(|b| b.name.to_string()).collect();
        assert_eq!(names, ["root", "spine", "neck", "head"]);
        let parents: Vec<i32> = model.bones().iter().map(|b| b.parent).collect();
        assert_eq!(parents, [-1, 0, 1, 2]);
        let info = model.info();
        assert_eq!(
            (info.bone_count, info.frame_count, info.mesh_count),
            (4, 1, 0)
        );
        assert_eq!((info.up_axis, info.handedness), (1, 1));
        assert_eq!(info.format, Format::Mm2Skel);
        assert_eq!(model.frames()[0].name.to_string(), "rest");

        // 1.109821 + 0.034733 + 0.329534 + 0.107686 = 1.581774.
        let head = model.find_bone("head").unwrap() as usize;
        let bind = model.skeleton().bind_pose();
        near(
            bind[head].translation(),
            [0.000570, 1.581774, 0.0],
            1e-6,
            "head",
        );
        // No rotation anywhere.
        for m in bind {
            let r = [
                m.m[0], m.m[1], m.m[2], m.m[4], m.m[5], m.m[6], m.m[8], m.m[9], m.m[10],
            ];
            assert_eq!(r, [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        }
        // Posing frame 0 is the same matrix.
        near(
            rest_bones(&model)[head].translation(),
            [0.000570, 1.581774, 0.0],
            1e-6,
            "posed head",
        );
        let local = model.skeleton().frame_poses(0).unwrap();
        assert_eq!(local[1].translation(), [0.0, 0.034733, -0.0]);
    }
    // With the right count there is nothing to say, in strict mode either.
    let right = seed("\n").replacen("NumBones 3", "NumBones 4", 1);
    let model = Model::load(right.as_bytes(), &strict(Format::Mm2Skel)).unwrap();
    assert!(model.warnings().is_empty());
}

#[test]
fn writing_the_documented_skeleton_gives_its_text_back() {
    let model = skel(&seed("\n")).unwrap();
    let written = mm2::write_skel(&model).unwrap();
    // The writer counts the bones it writes.
    let expected = seed("\r\n").replacen("NumBones 3", "NumBones 4", 1);
    assert_eq!(String::from_utf8(written.clone()).unwrap(), expected);
    assert_eq!(model.save(Format::Mm2Skel).unwrap(), written);
    let again = mm2::write_skel(&skel(&expected).unwrap()).unwrap();
    assert_eq!(again, written);
}

#[test]
fn content_and_extensions_tell_the_formats() {
    let s = seed("\n");
    assert_eq!(
        ossa::format::detect(s.as_bytes(), None),
        Some(Format::Mm2Skel)
    );
    assert_eq!(
        ossa::format::detect(b"version: 1.09\nverts: 0\n", None),
        Some(Format::Mm2Mod)
    );
    assert_eq!(
        ossa::format::detect(b"", Some("anim/pedmodel_woman.skel")),
        Some(Format::Mm2Skel)
    );
    assert_eq!(
        ossa::format::detect(b"", Some("PEDMODEL_WOMAN.MOD")),
        Some(Format::Mm2Mod)
    );
    let model = Model::load(s.as_bytes(), &LoadOptions::default()).unwrap();
    assert_eq!(model.format(), Format::Mm2Skel);
}

// ---------------------------------------------------------------------------------------------
// A skeleton and meshes written by hand
// ---------------------------------------------------------------------------------------------

/// The doll's world bone positions.
const HIPS: [f64; 3] = [0.0, 1.0, 0.0];
const CHEST: [f64; 3] = [0.0, 1.5, 0.25];

// Line numbers in DOLL_MOD + DOLL_RUNS (1-based).
const L_VERTS: u32 = 2;
const L_MATRICES: u32 = 11;
const L_V: u32 = 13;
const L_T1: u32 = 20;
const L_LEGS: u32 = 24;
const L_LEGS_PRIMS: u32 = 26;
const L_TORSO: u32 = 30;
const L_TORSO_ADJS: u32 = 31;
const L_TORSO_PRIMS: u32 = 32;
const L_ADJ: u32 = 35;
const L_TRI: u32 = 42;
const L_MTXV: u32 = 45;
const L_MTXN: u32 = 46;

/// `doll_mod` with line `n` (1-based) replaced by `with` (several lines when it holds `\n`).
fn doll_with(n: u32, with: &str) -> String {
    let mut lines: Vec<&str> = [&DOLL_MOD[..], &DOLL_RUNS[..]].concat();
    lines[n as usize - 1] = with;
    text(&lines)
}

fn doll() -> Model {
    let skeleton = tolerated(&doll_skel(), Format::Mm2Skel, 6, "`mirror`");
    let mesh = module(&doll_mod()).unwrap();
    assert!(mesh.warnings().is_empty(), "{:?}", mesh.warnings());
    Model::bind(&mesh, &skeleton).unwrap()
}

#[test]
fn a_hand_written_mod_loads_as_one_mesh_per_material() {
    let mesh = module(&doll_mod()).unwrap();
    assert_eq!(mesh.unbound(), Some(&BoneSlots::ByIndex(2)));
    let info = mesh.info();
    assert_eq!(info.format, Format::Mm2Mod);
    assert_eq!((info.mesh_count, info.vertex_count), (2, 7));
    assert_eq!((info.triangle_count, info.max_influences), (4, 1));
    assert_eq!((info.up_axis, info.handedness), (1, 1));

    let legs = &mesh.meshes()[0];
    assert_eq!(legs.name().to_string(), "doll:legs");
    // No texture: the material's name is the shader.
    assert_eq!(legs.shader().to_string(), "doll:legs");
    assert_eq!(legs.indices(), [0, 1, 2]);
    assert_eq!(
        legs.texcoords().unwrap(),
        [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    );
    let inf = |origin, normal, bone| Influence {
        origin,
        weight: 1.0,
        normal,
        bone,
    };
    assert_eq!(
        legs.influences(0),
        [inf([0.5, 0.0, 0.0], [0.0, 0.0, 1.0], 0)]
    );
    assert_eq!(
        legs.influences(1),
        [inf([-0.5, 0.0, 0.0], [0.0, 0.0, 1.0], 0)]
    );
    assert_eq!(
        legs.influences(2),
        [inf([0.0, 0.25, 0.0], [0.0, 1.0, 0.0], 1)]
    );

    let torso = &mesh.meshes()[1];
    assert_eq!(torso.name().to_string(), "doll:torso");
    assert_eq!(torso.shader().to_string(), "torso skin");
    assert_eq!(torso.vertex_count(), 4);
    // Corners 3..7 are its vertices 0..4. `str 4 3 4 5 6` is (3 4 5) then (5 4 6); `stp 3 6 5 3`
    // starts with the other winding: (5 6 3).
    assert_eq!(torso.indices(), [0, 1, 2, 2, 1, 3, 2, 3, 0]);
    assert_eq!(
        torso.influences(2),
        [inf([0.0, 0.0, 0.5], [0.0, 1.0, 0.0], 1)]
    );
    assert_eq!(
        torso.influences(3),
        [inf([-0.5, 0.0, 0.0], [0.0, 0.0, 1.0], 0)]
    );
    assert_eq!(
        torso.texcoords().unwrap(),
        [[0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]
    );
}

#[test]
fn a_bound_doll_has_its_positions_moved_by_its_bones() {
    let model = doll();
    assert!(model.unbound().is_none());
    assert_eq!(model.warnings().len(), 1, "the skeleton's `mirror`");
    let add = |a: [f64; 3], b: [f64; 3]| [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
    let bones = rest_bones(&model);
    let legs = skinned(&model, 0, &bones);
    near(legs[0], add([0.5, 0.0, 0.0], HIPS), 1e-6, "legs 0");
    near(legs[1], add([-0.5, 0.0, 0.0], HIPS), 1e-6, "legs 1");
    near(legs[2], add([0.0, 0.25, 0.0], CHEST), 1e-6, "legs 2");
    let torso = skinned(&model, 1, &bones);
    let expected = [
        [0.5, 1.0, 0.0],
        [0.0, 1.75, 0.25],
        [0.0, 1.5, 0.75],
        [-0.5, 1.0, 0.0],
    ];
    for (v, e) in torso.iter().zip(expected) {
        near(*v, e, 1e-6, "torso");
    }
    let (mins, maxs) = model.bounds();
    assert_eq!(mins, [-0.5, 1.0, 0.0]);
    assert_eq!(maxs, [0.5, 1.75, 0.75]);

    // Bend the chest by 90 degrees about x at its joint: (x, y, z) -> (x, -z, y) around it.
    let mut local: Vec<Mat3x4> = model.skeleton().frame_poses(0).unwrap().to_vec();
    local[1].m = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.5, 0.0, 1.0, 0.0, 0.25];
    let mut posed = vec![Mat3x4::IDENTITY; 2];
    model.pose_concat(&local, None, &mut posed).unwrap();
    let torso = skinned(&model, 1, &posed);
    // Chest corner (0, 0.25, 0) -> (0, 0, 0.25) from the joint; (0, 0, 0.5) -> (0, -0.5, 0).
    near(torso[1], [0.0, 1.5, 0.5], 1e-6, "bent 1");
    near(torso[2], [0.0, 1.0, 0.25], 1e-6, "bent 2");
    near(torso[0], [0.5, 1.0, 0.0], 1e-6, "hips corner stays");
}

const L_PACKET2_MTX: u32 = 39;

#[test]
fn packets_give_corners_their_bones() {
    let mesh = module(&packet_mod()).unwrap();
    assert!(mesh.warnings().is_empty(), "{:?}", mesh.warnings());
    assert_eq!(mesh.meshes().len(), 1);
    let body = &mesh.meshes()[0];
    assert_eq!(body.vertex_count(), 6);
    // The second packet's corners follow the first's.
    assert_eq!(body.indices(), [0, 1, 2, 5, 4, 3]);
    let bones: Vec<u32> = body.all_influences().iter().map(|i| i.bone).collect();
    assert_eq!(bones, [0, 0, 1, 1, 1, 1]);
    assert_eq!(body.texcoords().unwrap(), [[0.25, 0.75]; 6]);
    let skeleton = skel(&doll_skel()).unwrap();
    let model = Model::bind(&mesh, &skeleton).unwrap();
    let at_rest = skinned(&model, 0, &rest_bones(&model));
    near(at_rest[2], [0.0, 1.75, 0.25], 1e-6, "chest corner");
    near(at_rest[3], [0.0, 1.5, 0.75], 1e-6, "chest corner");

    // A packet giving a corner another bone than `mtxv` gives its position: the packet wins.
    let mut lines: Vec<&str> = [&PACKET_MOD[..], &PACKET_TAIL[..], &["mtxn 1 1"][..]].concat();
    lines[L_PACKET2_MTX as usize - 1] = "\tmtx 0";
    let text = text(&lines);
    let model = module(&text).unwrap();
    // Its normals are the chest's too (`mtxn`).
    let warnings: Vec<String> = model.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("line 35: 3 corners follow another bone"),
        "{warnings:?}"
    );
    assert!(
        warnings[0].contains("packet 1 `adj` record 0: bone 0 by its packet, bone 1 by `mtxv`")
    );
    assert!(
        warnings[1].contains("bone 0, its normal bone 1"),
        "{warnings:?}"
    );
    let e = Model::load(text.as_bytes(), &strict(Format::Mm2Mod)).unwrap_err();
    assert_eq!(e.line(), Some(35), "{e}");
    let bones: Vec<u32> = model.meshes()[0]
        .all_influences()
        .iter()
        .map(|i| i.bone)
        .collect();
    assert_eq!(bones, [0, 0, 1, 0, 0, 0]);
    mod_fails(
        &text.replace("\tmtx 0\n", "\tmtx 2\n"),
        ErrorCode::Malformed,
        L_PACKET2_MTX,
        "`mtx` entry 0 is bone 2, out of range (the mesh has 2 bones)",
    );
    mod_fails(
        &packet_mod().replace("\tadj 2 1 0 0 0 1\n", "\tadj 2 1 0 0 0 2\n"),
        ErrorCode::Malformed,
        30,
        "matrix index 2 out of range",
    );
    mod_fails(
        &packet_mod().replace("packet 3 1 2 {", "packet 4 1 2 {"),
        ErrorCode::Malformed,
        27,
        "declares 4 `adj` records and holds 3",
    );
    mod_fails(
        &packet_mod().replace("\ttri 2 1 0\n", "\ttri 2 1 3\n"),
        ErrorCode::Malformed,
        38,
        "not all among the packet's 3 `adj` records",
    );
    mod_fails(
        &packet_mod().replace("\tpackets: 2", "\tpackets: 3"),
        ErrorCode::Malformed,
        22,
        "`packets:` counts add up to 3, and the file has 2 packets",
    );
    mod_fails(
        &packet_mod().replace("}\nmtxv", "mtxv"),
        ErrorCode::Truncated,
        34,
        "packet 1 is never closed",
    );
    mod_fails(
        &packet_mod().replace("\tmtx 0 1\n}\n", "\tmtx 0 1\n"),
        ErrorCode::Malformed,
        33,
        "packet 0 (line 27) is not closed before this `packet`",
    );
    // Corners outside packets in a file whose materials use them.
    mod_fails(
        &packet_mod().replace("mtxv 2 2", "adj 0 0 0 0 0\nmtxv 2 2"),
        ErrorCode::Malformed,
        41,
        "outside a packet",
    );
}

#[test]
fn version_1_06_materials_hold_the_corners_their_primitives_use() {
    // No `adjuncts:` in the materials: the torso holds corners 3..7 because it uses them, in
    // file order, and the legs corners 0..3.
    let old = doll_mod()
        .replace("version: 1.09", "version: 1.06")
        .replace("\tadjuncts:\t3\n", "")
        .replace("\tadjuncts:\t4\n", "");
    let mesh = module(&old).unwrap();
    let reference = module(&doll_mod()).unwrap();
    for (a, b) in mesh.meshes().iter().zip(reference.meshes()) {
        assert_eq!(a.indices(), b.indices());
        assert_eq!(a.all_influences(), b.all_influences());
    }
    // A material that skips a corner of the list leaves it out.
    let skipping = old.replace("tri 0 1 2", "tri 0 2 6");
    let mesh = module(&skipping).unwrap();
    assert_eq!(mesh.meshes()[0].vertex_count(), 3);
    assert_eq!(mesh.meshes()[0].indices(), [0, 1, 2]);
    assert_eq!(mesh.meshes()[0].influences(2)[0].origin, [-0.5, 0.0, 0.0]);
}

#[test]
fn strips_leave_out_their_joining_triangles() {
    let text = doll_with(43, "str 6 3 4 5 5 6 3");
    let mesh = module(&text).unwrap();
    // (3 4 5), [4 5 5], [5 5 6], (6 5 3) after the flips: only the first and the last stay.
    assert_eq!(mesh.meshes()[1].indices(), [0, 1, 2, 3, 2, 0, 2, 3, 0]);
}

// ---------------------------------------------------------------------------------------------
// Vertex colours
// ---------------------------------------------------------------------------------------------

/// Two materials over three positions (0 and 1 the hips', 2 the chest's) and three colours:
/// `paint:red` names colour 0 at every corner, `paint:mixed` colours 2, 1 and 0. Colour 1 has a
/// half (`0.5 * 255 = 127.5`) and `0.25 * 255 = 63.75`, colour 2 values past both ends and one
/// written with six decimals (`0.501961 * 255 = 128.000055`).
const PAINT_MOD: [&str; 37] = [
    "version: 1.09",
    "verts: 3",
    "normals: 2",
    "colors: 3",
    "tex1s: 0",
    "tex2s: 0",
    "tangents: 0",
    "materials: 2",
    "adjuncts: 6",
    "primitives: 2",
    "matrices: 2",
    "v 0 0 0",
    "v 1 0 0",
    "v 0 1 0",
    "n 0 0 1",
    "n 0 0 1",
    "c 1 0 0 1",
    "c 0 0.5 1 0.25",
    "c 1.2 -0.1 0.2 0.501961",
    "mtl paint:red {",
    "\tadjuncts:\t3",
    "\tprimitives:\t1",
    "}",
    "mtl paint:mixed {",
    "\tadjuncts:\t3",
    "\tprimitives:\t1",
    "}",
    "adj 0 0 0 0 0",
    "adj 1 0 0 0 0",
    "adj 2 1 0 0 0",
    "adj 0 0 2 0 0",
    "adj 1 0 1 0 0",
    "adj 2 1 0 0 0",
    "tri 0 1 2",
    "tri 3 4 5",
    "mtxv 2 1",
    "mtxn 1 1",
];

// Line numbers in PAINT_MOD (1-based).
const L_PAINT_COLORS: u32 = 4;
const L_PAINT_C: u32 = 17;
const L_PAINT_ADJ: u32 = 28;

const RED: [u8; 4] = [255, 0, 0, 255];
/// `c 0 0.5 1 0.25`: a half rounds away from 0.
const TEAL: [u8; 4] = [0, 128, 255, 64];
/// `c 1.2 -0.1 0.2 0.501961`: clamped at both ends.
const PINK: [u8; 4] = [255, 0, 51, 128];

fn paint_with(n: u32, with: &str) -> String {
    let mut lines = PAINT_MOD.to_vec();
    lines[n as usize - 1] = with;
    text(&lines)
}

#[test]
fn each_corner_keeps_the_colour_it_names() {
    let mesh = Model::load(text(&PAINT_MOD).as_bytes(), &strict(Format::Mm2Mod)).unwrap();
    assert!(mesh.warnings().is_empty(), "{:?}", mesh.warnings());
    let red = &mesh.meshes()[0];
    assert_eq!(red.name().to_string(), "paint:red");
    assert_eq!(red.colors().unwrap(), [RED; 3]);
    assert!(red.texcoords().is_none());
    let mixed = &mesh.meshes()[1];
    assert_eq!(mixed.colors().unwrap(), [PINK, TEAL, RED]);
    assert_eq!(mixed.influences(2)[0].bone, 1);
    // Binding keeps them.
    let bound = Model::bind(&mesh, &skel(&doll_skel()).unwrap()).unwrap();
    assert_eq!(bound.meshes()[1].colors().unwrap(), [PINK, TEAL, RED]);

    // The same corners in packets: the colour index is the third number there too.
    let packets = module(
        &packet_mod()
            .replace("\tadj 2 1 0 0 0 1", "\tadj 2 1 1 0 0 1")
            .replace("c 1 1 1 1", "c 1 1 1 1\nc 0.2 0.4 0.6 0.8"),
    )
    .unwrap();
    let w = packets.warnings();
    assert!(
        w.len() == 1 && w[0].to_string().contains("`colors: 1`, and the file has 2"),
        "{w:?}"
    );
    let white = [255; 4];
    assert_eq!(
        packets.meshes()[0].colors().unwrap(),
        [white, white, [51, 102, 153, 204], white, white, white]
    );
    // The doll's one colour is white.
    assert_eq!(
        module(&doll_mod()).unwrap().meshes()[0].colors().unwrap(),
        [white; 3]
    );

    // Without `c` records there are no colours, rather than white ones; a colour index of 0
    // into the empty list is what such files write.
    let plain = paint_with(L_PAINT_COLORS, "colors: 0")
        .replace("c 1 0 0 1\n", "")
        .replace("c 0 0.5 1 0.25\n", "")
        .replace("c 1.2 -0.1 0.2 0.501961\n", "")
        .replace("adj 0 0 2 0 0", "adj 0 0 0 0 0")
        .replace("adj 1 0 1 0 0", "adj 1 0 0 0 0");
    let plain = Model::load(plain.as_bytes(), &strict(Format::Mm2Mod)).unwrap();
    assert!(plain.meshes().iter().all(|m| m.colors().is_none()));

    // A colour that is not a number, and an index past the colours.
    mod_fails(
        &paint_with(L_PAINT_C + 1, "c 0 nan 1 1"),
        ErrorCode::Malformed,
        L_PAINT_C + 1,
        "`c` record 1: NaN is not a finite number",
    );
    mod_fails(
        &paint_with(L_PAINT_C + 1, "c 0 0.5 1"),
        ErrorCode::Malformed,
        L_PAINT_C + 1,
        "`c` record 1: expected 4 fields (red green blue alpha), found 3",
    );
    mod_fails(
        &paint_with(L_PAINT_ADJ + 4, "adj 1 0 3 0 0"),
        ErrorCode::Malformed,
        L_PAINT_ADJ + 4,
        "`adj` record 4: colour index 3 out of range (the file has 3)",
    );
}

#[test]
fn colours_round_trip_as_k_over_255() {
    let mesh = module(&text(&PAINT_MOD)).unwrap();
    let written = mm2::write_mod(&mesh).unwrap();
    let lines: Vec<&str> = std::str::from_utf8(&written)
        .unwrap()
        .split("\r\n")
        .collect();
    // Distinct colours in order of first use; `k / 255` in `%f` where six decimals keep it
    // exactly (0.2 is 51 / 255), else in the shortest form that does.
    let c: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("c\t"))
        .collect();
    assert_eq!(
        c,
        [
            "c\t1.000000\t0.000000\t0.000000\t1.000000",
            "c\t1.000000\t0.000000\t0.200000\t0.5019608",
            "c\t0.000000\t0.5019608\t1.000000\t0.2509804",
        ]
    );
    assert!(lines.contains(&"colors: 3"));
    let colour_column: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("adj\t"))
        .map(|l| l.split('\t').nth(3).unwrap())
        .collect();
    assert_eq!(colour_column, ["0", "0", "0", "1", "2", "0"]);
    let again = Model::load(&written, &strict(Format::Mm2Mod)).unwrap();
    assert!(again.warnings().is_empty(), "{:?}", again.warnings());
    for (a, b) in again.meshes().iter().zip(mesh.meshes()) {
        assert_eq!(a.colors(), b.colors());
        assert_eq!(a.all_influences(), b.all_influences());
    }
    assert_eq!(mm2::write_mod(&again).unwrap(), written);

    // Every byte value reads back as itself: the skin's 76 vertices carry the 256 values over
    // their four channels; the face has no colours and is written white.
    let mut parts = rig_model(&HUMANOID).to_parts();
    let n = parts.meshes[0].influences.len();
    let colours: Vec<[u8; 4]> = (0..n)
        .map(|v| [0, 1, 2, 3].map(|ch| ((4 * v + ch) % 256) as u8))
        .collect();
    assert!(4 * n >= 256);
    parts.meshes[0].colors = Some(colours.clone());
    let (loaded, _, mod_bytes) = through_files(&Model::from_parts(parts).unwrap());
    assert_eq!(loaded.meshes()[0].colors().unwrap(), colours);
    assert_eq!(loaded.meshes()[1].colors().unwrap(), [[255; 4]; 4]);
    let text = String::from_utf8(mod_bytes).unwrap();
    // Vertices 64 on repeat the first colours: 64 distinct ones, and white.
    assert!(text.contains("\r\ncolors: 65\r\n"), "64 colours and white");
}

// ---------------------------------------------------------------------------------------------
// Errors, each with its line
// ---------------------------------------------------------------------------------------------

#[test]
fn skeleton_errors_name_their_line() {
    let name63 = "n".repeat(63);
    let ok = seed("\n").replacen("head", &name63, 1);
    assert!(skel(&ok).is_ok());
    let long = seed("\n").replacen("head", &"n".repeat(64), 1);
    skel_fails(
        &long,
        ErrorCode::Malformed,
        8,
        "is 64 bytes long; MM2 keeps at most 63",
    );

    let lines = |f: &dyn Fn(&mut Vec<&str>)| {
        let mut l: Vec<&str> = SEED.to_vec();
        l[0] = "NumBones 4";
        f(&mut l);
        l.join("\n")
    };
    // Unbalanced braces: one too many, one missing, one stray.
    skel_fails(
        &lines(&|l| l.insert(12, "}")),
        ErrorCode::Malformed,
        14,
        "`}` closes no bone",
    );
    skel_fails(
        &lines(&|l| {
            l.remove(10);
        }),
        ErrorCode::Truncated,
        2,
        "bone `root` is never closed: the data ends with 1 bone open",
    );
    skel_fails(
        &lines(&|l| l[4] = "      offset 0 0.034733 0 {"),
        ErrorCode::Malformed,
        5,
        "`{` opens no bone",
    );
    skel_fails(
        &lines(&|l| l[5] = "      bone neck"),
        ErrorCode::Malformed,
        7,
        "bone `neck`: expected `{` after its name, found `offset`",
    );
    // Non-numbers.
    for bad in ["0.0 abc 0", "0 1.#QNAN0 0", "0,5 0 0"] {
        let text = lines(&|l| l[2] = Box::leak(format!("   offset {bad}").into_boxed_str()));
        skel_fails(&text, ErrorCode::Malformed, 3, "expected a number, found");
    }
    skel_fails(
        &lines(&|l| l[2] = "   offset 0 1"),
        ErrorCode::Malformed,
        3,
        "expected three numbers (x y z) on its line, found the end of the line",
    );
    skel_fails(
        &lines(&|l| l[2] = "   offset 0 1 2 3"),
        ErrorCode::Malformed,
        3,
        "more than three numbers",
    );
    skel_fails(
        &lines(&|l| l[2] = "   offset 0 inf 0"),
        ErrorCode::Malformed,
        3,
        "inf is not a finite number",
    );
    skel_fails(
        &lines(&|l| l[0] = "NumBones four"),
        ErrorCode::Malformed,
        1,
        "NumBones: expected a whole number from 0 up, found `four`",
    );
    // A missing offset, reported on its bone's line; a second one on its own.
    skel_fails(
        &lines(&|l| {
            l.remove(6);
        }),
        ErrorCode::Malformed,
        6,
        "bone `neck` has no offset (its block ends on line 10)",
    );
    skel_fails(
        &lines(&|l| l.insert(5, "      offset 1 2 3")),
        ErrorCode::Malformed,
        6,
        "bone `spine`: a second offset (the first is on line 5)",
    );
    // What comes first, and what may stand outside a bone.
    skel_fails(
        &lines(&|l| l[0] = "Bones 4"),
        ErrorCode::Malformed,
        1,
        "expected `NumBones`",
    );
    skel_fails(
        &lines(&|l| l.push("extra")),
        ErrorCode::Malformed,
        15,
        "expected `bone` or the end of the data, found `extra`",
    );
    skel_fails(
        &lines(&|l| l[1] = "bone"),
        ErrorCode::Malformed,
        2,
        "`bone`: expected the bone's name on its line",
    );
    skel_fails(
        "",
        ErrorCode::Truncated,
        1,
        "the data ends before `NumBones`",
    );
    skel_fails(
        "NumBones 0\n",
        ErrorCode::Malformed,
        1,
        "the skeleton has no bones",
    );
    skel_fails(
        "NumBones 1\nbone a\n",
        ErrorCode::Truncated,
        2,
        "bone `a`: the data ends before its `{`",
    );
    skel_fails(
        &lines(&|l| l[7] = "         bone he\0ad {"),
        ErrorCode::Malformed,
        8,
        "holds a NUL byte",
    );
}

#[test]
fn skeleton_oddities_are_warnings_in_the_default_mode() {
    let with = |at: usize, line: &str| {
        let mut l: Vec<&str> = SEED.to_vec();
        l[0] = "NumBones 4";
        l.insert(at, line);
        l.join("\n")
    };
    // Words of a later version, skipped with their line (a brace on it still counts).
    let model = tolerated(
        &with(5, "      RotMin -1 -1 -1"),
        Format::Mm2Skel,
        6,
        "1 word inside bones that the format does not know",
    );
    assert_eq!(model.bones().len(), 4);
    let text = "NumBones 3\nbone root {\noffset 0 1 0\nbone a {\noffset 1 0 0\nRotMax 1 1 1 }\n\
                bone b {\noffset 0 0 1\n}\n}\n";
    let model = tolerated(text, Format::Mm2Skel, 6, "`RotMax`");
    // The brace closed `a`: `b` is the root's child.
    let parents: Vec<i32> = model.bones().iter().map(|b| b.parent).collect();
    assert_eq!(parents, [-1, 0, 0]);
    // Two bones of one name.
    let text =
        seed("\n")
            .replacen("NumBones 3", "NumBones 4", 1)
            .replacen("bone neck", "bone spine", 1);
    tolerated(
        &text,
        Format::Mm2Skel,
        6,
        "bone 2 `spine` has the name of bone 1",
    );
    // A count off for a single bone says `1 bone`: the warning is read by people.
    let model = tolerated(
        "NumBones 2\nbone a {\noffset 1 0 0\n}\n",
        Format::Mm2Skel,
        1,
        "NumBones says 2, the file has 1 bone",
    );
    assert_eq!(model.bones().len(), 1);
    let w = model.warnings()[0].to_string();
    assert!(w.ends_with("the file has 1 bone"), "{w}");
    // Several roots are kept as they are.
    let two = "NumBones 2\nbone a {\noffset 1 0 0\n}\nbone b {\noffset 0 2 0\n}\n";
    let model = Model::load(two.as_bytes(), &strict(Format::Mm2Skel)).unwrap();
    let parents: Vec<i32> = model.bones().iter().map(|b| b.parent).collect();
    assert_eq!(parents, [-1, -1]);
    // Offsets may follow children; words flow over lines except a name and an offset's numbers.
    let late = "NumBones 2 bone a\n{ bone b { offset 0 1 0 } offset 2 0 0 }";
    let model = Model::load(late.as_bytes(), &strict(Format::Mm2Skel)).unwrap();
    near(
        model.skeleton().bind_pose()[1].translation(),
        [2.0, 1.0, 0.0],
        0.0,
        "late offset",
    );
}

#[test]
fn mesh_errors_name_their_line() {
    // The version comes first, and is a text one.
    mod_fails(
        &doll_with(1, "version: 1.07"),
        ErrorCode::Unsupported,
        1,
        "version `1.07`",
    );
    mod_fails(
        "version: 2.00\0\x01\x02",
        ErrorCode::Unsupported,
        1,
        "a binary .mod",
    );
    mod_fails(
        &doll_with(1, "verts: 4"),
        ErrorCode::Malformed,
        1,
        "expected `version:` first",
    );
    mod_fails(
        "",
        ErrorCode::Truncated,
        1,
        "the data ends before `version:`",
    );
    mod_fails(
        &doll_with(L_MATRICES, ""),
        ErrorCode::Malformed,
        1,
        "the header has no `matrices:` line",
    );
    mod_fails(
        &doll_with(L_MATRICES, "matrices: 0"),
        ErrorCode::Malformed,
        L_MATRICES,
        "the mesh needs 1 to",
    );
    // Non-numbers and wrong field counts.
    mod_fails(
        &doll_with(L_V + 1, "v -0.5 zero 0"),
        ErrorCode::Malformed,
        L_V + 1,
        "`v` record 1: expected a number, found `zero`",
    );
    mod_fails(
        &doll_with(L_V, "v 0.5 0"),
        ErrorCode::Malformed,
        L_V,
        "`v` record 0: expected 3 fields (x y z), found 2",
    );
    mod_fails(
        &doll_with(L_T1, "t1 nan 0"),
        ErrorCode::Malformed,
        L_T1,
        "`t1` record 0: NaN is not a finite number",
    );
    mod_fails(
        &doll_with(L_ADJ, "adj 0 0 0 0"),
        ErrorCode::Malformed,
        L_ADJ,
        "`adj` record 0: expected 5 fields",
    );
    mod_fails(
        &doll_with(L_VERTS, "verts: -4"),
        ErrorCode::Malformed,
        L_VERTS,
        "verts:: expected a whole number from 0 up, found `-4`",
    );
    mod_fails(
        &doll_with(L_VERTS, "verts: 4 5"),
        ErrorCode::Malformed,
        L_VERTS,
        "one number expected",
    );
    // Indices out of range.
    mod_fails(
        &doll_with(L_ADJ + 1, "adj 4 0 0 1 0"),
        ErrorCode::Malformed,
        L_ADJ + 1,
        "`adj` record 1: position index 4 out of range (the file has 4)",
    );
    mod_fails(
        &doll_with(L_ADJ + 1, "adj 1 2 0 1 0"),
        ErrorCode::Malformed,
        L_ADJ + 1,
        "normal index 2 out of range",
    );
    mod_fails(
        &doll_with(L_ADJ + 1, "adj 1 0 1 1 0"),
        ErrorCode::Malformed,
        L_ADJ + 1,
        "colour index 1 out of range",
    );
    mod_fails(
        &doll_with(L_ADJ + 1, "adj 1 0 0 1 -1"),
        ErrorCode::Malformed,
        L_ADJ + 1,
        "tex2 index -1 out of range",
    );
    // A primitive reaching into another material's corners.
    mod_fails(
        &doll_with(L_TRI, "tri 0 1 3"),
        ErrorCode::Malformed,
        L_TRI,
        "a primitive's corner 3 is not one of material 0's adjuncts 0..3",
    );
    mod_fails(
        &doll_with(L_TRI + 1, "str 4 3 4 5"),
        ErrorCode::Malformed,
        L_TRI + 1,
        "`str` primitive 1: says 4 indices, the line holds 3",
    );
    // Counts that cut the lists must add up.
    mod_fails(
        &doll_with(L_TORSO_PRIMS, "\tprimitives:\t3"),
        ErrorCode::Malformed,
        L_TORSO_PRIMS,
        "the materials' `primitives:` counts add up to 4, and the file has 3 primitives",
    );
    mod_fails(
        &doll_with(L_TORSO_ADJS, "\tadjuncts:\t3"),
        ErrorCode::Malformed,
        L_TORSO_ADJS,
        "`adjuncts:` counts add up to 6, and the file has 7 `adj` records",
    );
    mod_fails(
        &doll_with(L_LEGS_PRIMS, ""),
        ErrorCode::Malformed,
        L_LEGS,
        "material `doll:legs` has no `primitives:` line",
    );
    mod_fails(
        &doll_with(L_TORSO_ADJS, ""),
        ErrorCode::Malformed,
        L_TORSO,
        "material `doll:torso` has no `adjuncts:` line",
    );
    mod_fails(
        &doll_with(L_MTXV, "mtxv 2 1 1"),
        ErrorCode::Malformed,
        L_MTXV,
        "`mtxv` holds 3 counts, one per bone, and `matrices:` says 2 bones",
    );
    mod_fails(
        &doll_with(L_MTXV, "mtxv 2 1"),
        ErrorCode::Malformed,
        L_MTXV,
        "`mtxv` counts add up to 3, the file has 4 positions",
    );
    mod_fails(
        &doll_with(L_MTXN, "mtxn 2 1"),
        ErrorCode::Malformed,
        L_MTXN,
        "`mtxn` counts add up to 3, the file has 2 normals",
    );
    mod_fails(
        &doll_with(L_MTXV, ""),
        ErrorCode::Malformed,
        L_MTXN + 1,
        "no `mtxv` line",
    );
    mod_fails(
        &doll_with(L_MTXN, "mtxv 2 2"),
        ErrorCode::Malformed,
        L_MTXN,
        "a second `mtxv` line (the first is on line 45)",
    );
    // Blocks.
    mod_fails(
        &doll_with(L_TORSO - 1, ""),
        ErrorCode::Malformed,
        L_TORSO,
        "material 0 `doll:legs` (line 24) is not closed before this `mtl`",
    );
    mod_fails(
        &text(&DOLL_MOD[..L_TORSO as usize + 2]),
        ErrorCode::Truncated,
        L_TORSO,
        "material 1 `doll:torso` is never closed",
    );
    mod_fails(
        &doll_with(L_LEGS, "mtl doll:legs"),
        ErrorCode::Malformed,
        L_LEGS,
        "expected `{` at the end of its first line, found the end of the line",
    );
    mod_fails(
        &doll_with(L_ADJ, "}"),
        ErrorCode::Malformed,
        L_ADJ,
        "`}` outside a `mtl` or `packet` block",
    );
    mod_fails(
        &doll_with(L_TORSO + 3, "\ttexture: 0 \"torso"),
        ErrorCode::Malformed,
        L_TORSO + 3,
        "closing `\"` is missing",
    );
}

#[test]
fn mesh_oddities_are_warnings_in_the_default_mode() {
    // A header count that differs from the records.
    let model = tolerated(
        &doll_with(L_VERTS, "verts: 5"),
        Format::Mm2Mod,
        L_VERTS,
        "`verts: 5`, and the file has 4",
    );
    assert_eq!(model.info().vertex_count, 7);
    // A huge one allocates nothing.
    tolerated(
        &doll_with(L_VERTS, "verts: 4000000000"),
        Format::Mm2Mod,
        L_VERTS,
        "`verts: 4000000000`",
    );
    // A missing one.
    tolerated(
        &doll_with(L_VERTS, ""),
        Format::Mm2Mod,
        1,
        "the header lacks 1 count (the first: `verts:`)",
    );
    // A line of an unknown kind (tangents, comments).
    tolerated(
        &doll_with(L_V + 3, "v\t0\t0\t0.5\nts 0 0 1"),
        Format::Mm2Mod,
        L_V + 4,
        "1 line starting with a word that the format does not know, skipped",
    );
    // No `mtxn`: normals follow their corners.
    tolerated(
        &doll_with(L_MTXN, ""),
        Format::Mm2Mod,
        L_MTXN + 1,
        "no `mtxn` line",
    );
    // A normal of another bone than its corner's.
    tolerated(
        &doll_with(L_MTXN, "mtxn 2 0"),
        Format::Mm2Mod,
        L_ADJ + 2,
        "`adj` record 2: bone 1, its normal bone 0",
    );
}

#[test]
fn validation_lists_every_problem_it_can_step_past() {
    let mut lines: Vec<&str> = [&DOLL_MOD[..], &DOLL_RUNS[..]].concat();
    lines[L_V as usize - 1] = "v inf 0 0";
    lines[L_ADJ as usize] = "adj 9 0 0 1 0";
    lines[L_TRI as usize - 1] = "tri 0 1 5";
    let report = ossa::validate(text(&lines).as_bytes(), &options(Format::Mm2Mod));
    assert!(report.model.is_none());
    let mut found: Vec<u32> = report.problems.iter().filter_map(|p| p.line()).collect();
    found.sort();
    assert_eq!(found, [L_V, L_ADJ + 1, L_TRI], "{:?}", report.problems);
    let clean = ossa::validate(doll_mod().as_bytes(), &options(Format::Mm2Mod));
    assert!(clean.problems.is_empty() && clean.model.is_some());
}

// ---------------------------------------------------------------------------------------------
// Rigs built in code, saved with the writers
// ---------------------------------------------------------------------------------------------

/// A bone of a rig: name, parent (by name), offset from the parent's joint.
type RigBone = (&'static str, &'static str, [f32; 3]);

/// 19 bones under one `root`, in pre-order; y up, metres.
const HUMANOID: [RigBone; 19] = [
    ("root", "", [0.0, 0.95, 0.0]),
    ("spine", "root", [0.0, 0.15, 0.0]),
    ("chest", "spine", [0.0, 0.25, 0.0]),
    ("neck", "chest", [0.0, 0.2, 0.0]),
    ("head", "neck", [0.0, 0.1, 0.0]),
    ("l_clavicle", "chest", [0.05, 0.15, 0.0]),
    ("l_upperarm", "l_clavicle", [0.15, 0.0, 0.0]),
    ("l_forearm", "l_upperarm", [0.3, 0.0, 0.0]),
    ("l_hand", "l_forearm", [0.25, 0.0, 0.0]),
    ("r_clavicle", "chest", [-0.05, 0.15, 0.0]),
    ("r_upperarm", "r_clavicle", [-0.15, 0.0, 0.0]),
    ("r_forearm", "r_upperarm", [-0.3, 0.0, 0.0]),
    ("r_hand", "r_forearm", [-0.25, 0.0, 0.0]),
    ("l_thigh", "root", [0.1, -0.05, 0.0]),
    ("l_shin", "l_thigh", [0.0, -0.45, 0.0]),
    ("l_foot", "l_shin", [0.0, -0.42, 0.05]),
    ("r_thigh", "root", [-0.1, -0.05, 0.0]),
    ("r_shin", "r_thigh", [0.0, -0.45, 0.0]),
    ("r_foot", "r_shin", [0.0, -0.42, 0.05]),
];

/// 26 bones: a dog on all fours, nose along +z.
const QUADRUPED: [RigBone; 26] = [
    ("root", "", [0.0, 0.0, 0.0]),
    ("pelvis", "root", [0.0, 0.55, -0.3]),
    ("spine1", "pelvis", [0.0, 0.02, 0.2]),
    ("spine2", "spine1", [0.0, 0.01, 0.2]),
    ("chest", "spine2", [0.0, 0.0, 0.2]),
    ("neck", "chest", [0.0, 0.12, 0.12]),
    ("head", "neck", [0.0, 0.1, 0.1]),
    ("jaw", "head", [0.0, -0.05, 0.08]),
    ("l_ear", "head", [0.05, 0.08, 0.0]),
    ("r_ear", "head", [-0.05, 0.08, 0.0]),
    ("fl_upper", "chest", [0.1, -0.1, 0.05]),
    ("fl_lower", "fl_upper", [0.0, -0.22, 0.0]),
    ("fl_paw", "fl_lower", [0.0, -0.2, 0.03]),
    ("fr_upper", "chest", [-0.1, -0.1, 0.05]),
    ("fr_lower", "fr_upper", [0.0, -0.22, 0.0]),
    ("fr_paw", "fr_lower", [0.0, -0.2, 0.03]),
    ("tail1", "pelvis", [0.0, 0.05, -0.08]),
    ("tail2", "tail1", [0.0, 0.03, -0.1]),
    ("tail3", "tail2", [0.0, 0.02, -0.1]),
    ("tail4", "tail3", [0.0, 0.0, -0.1]),
    ("bl_upper", "pelvis", [0.1, -0.05, 0.0]),
    ("bl_lower", "bl_upper", [0.0, -0.25, -0.03]),
    ("bl_paw", "bl_lower", [0.0, -0.22, 0.02]),
    ("br_upper", "pelvis", [-0.1, -0.05, 0.0]),
    ("br_lower", "br_upper", [0.0, -0.25, -0.03]),
    ("br_paw", "br_lower", [0.0, -0.22, 0.02]),
];

fn parent_index(rig: &[RigBone], parent: &str) -> i32 {
    rig.iter()
        .position(|b| b.0 == parent)
        .map_or(-1, |i| i as i32)
}

/// The corners of each bone's square, relative to its joint.
const SQUARE: [[f32; 3]; 4] = [
    [-0.02, 0.0, -0.02],
    [0.02, 0.0, -0.02],
    [0.02, 0.0, 0.02],
    [-0.02, 0.0, 0.02],
];

/// A rig as a model: its bones with a rest frame of their offsets, and two meshes: `skin` with
/// a square on every bone (front faces up, along +y) and `face` with one on the head.
fn rig_model(rig: &[RigBone]) -> Model {
    let mut parts = ModelParts::new(Format::Mm2Skel);
    parts.bones = rig
        .iter()
        .map(|b| Bone {
            name: b.0.into(),
            parent: parent_index(rig, b.1),
            flags: 0,
        })
        .collect();
    parts.frames = vec![Frame::named("rest")];
    parts.poses = rig.iter().map(|b| Mat3x4::from_translation(b.2)).collect();
    parts.up_axis = 1;
    let square = |bone: u32, mesh: &mut MeshParts| {
        let first = mesh.influences.len() as u32;
        for (k, c) in SQUARE.iter().enumerate() {
            mesh.influences.push(Influence {
                origin: *c,
                weight: 1.0,
                normal: [0.0, 1.0, 0.0],
                bone,
            });
            mesh.influence_start.push(mesh.influences.len() as u32);
            mesh.texcoords
                .as_mut()
                .unwrap()
                .push([(k % 2) as f32, (k / 2) as f32]);
        }
        // (b - a) x (c - a) points up for corners 0, 3, 2 (x by z is -y, so z then x).
        mesh.indices.extend([0, 3, 2, 0, 2, 1].map(|i| first + i));
    };
    let empty = |name: &str, shader: &str| MeshParts {
        name: name.into(),
        shader: shader.into(),
        influence_start: vec![0],
        texcoords: Some(Vec::new()),
        ..MeshParts::default()
    };
    let mut skin = empty("ped:skin", "");
    for b in 0..rig.len() as u32 {
        square(b, &mut skin);
    }
    let mut face = empty("ped:face", "face_tex");
    square(parent_index(rig, "head") as u32, &mut face);
    parts.meshes = vec![skin, face];
    Model::from_parts(parts).unwrap()
}

/// A bone's joint in model space: the sum of the offsets from the root, in f64.
fn joint(rig: &[RigBone], bone: usize) -> [f64; 3] {
    let (_, parent, o) = rig[bone];
    let base = match rig.iter().position(|b| b.0 == parent) {
        Some(p) => joint(rig, p),
        None => [0.0; 3],
    };
    [
        base[0] + o[0] as f64,
        base[1] + o[1] as f64,
        base[2] + o[2] as f64,
    ]
}

/// Saves a rig as `.skel` + `.mod`, reads both back and binds them; checks that saving again
/// gives the same bytes.
fn through_files(model: &Model) -> (Model, Vec<u8>, Vec<u8>) {
    let skel_bytes = model.save(Format::Mm2Skel).unwrap();
    let mod_bytes = model.save(Format::Mm2Mod).unwrap();
    let skeleton = Model::load(&skel_bytes, &strict(Format::Mm2Skel)).unwrap();
    let meshes = Model::load(&mod_bytes, &strict(Format::Mm2Mod)).unwrap();
    assert!(skeleton.warnings().is_empty() && meshes.warnings().is_empty());
    assert_eq!(mm2::write_skel(&skeleton).unwrap(), skel_bytes);
    assert_eq!(mm2::write_mod(&meshes).unwrap(), mod_bytes);
    let bound = Model::bind(&meshes, &skeleton).unwrap();
    assert_eq!(mm2::write_mod(&bound).unwrap(), mod_bytes);
    (bound, skel_bytes, mod_bytes)
}

fn check_rig(rig: &[RigBone], bent: &str, child: &str) {
    let model = rig_model(rig);
    let (loaded, _, mod_bytes) = through_files(&model);
    assert_eq!(loaded.bones().len(), rig.len());
    for (b, (name, parent, _)) in loaded.bones().iter().zip(rig) {
        assert_eq!(b.name.to_string(), *name);
        assert_eq!(b.parent, parent_index(rig, parent));
    }
    let roots = loaded.bones().iter().filter(|b| b.parent == -1).count();
    assert_eq!(roots, 1);
    assert_eq!(loaded.meshes()[0].vertex_count(), 4 * rig.len());
    // Without colours the meshes are written white, and read back so.
    assert!(model.meshes()[0].colors().is_none());
    assert_eq!(
        loaded.meshes()[0].colors().unwrap(),
        vec![[255; 4]; 4 * rig.len()]
    );
    assert_eq!(loaded.meshes()[1].shader().to_string(), "face_tex");
    assert_eq!(loaded.meshes()[0].shader().to_string(), "ped:skin");
    // Each bone's square is one position per corner and bone: the file groups them by bone.
    let mod_text = String::from_utf8(mod_bytes).unwrap();
    let runs = format!("mtxv{}", " 4".repeat(rig.len()));
    assert!(mod_text.contains(&runs), "{runs}");

    // At rest: each corner at its bone's joint plus its offset.
    let rest = skinned(&loaded, 0, &rest_bones(&loaded));
    for (b, corners) in rest.chunks(4).enumerate() {
        let j = joint(rig, b);
        for (p, c) in corners.iter().zip(SQUARE) {
            let want = [j[0] + c[0] as f64, j[1] + c[1] as f64, j[2] + c[2] as f64];
            near(*p, want, 1e-6, rig[b].0);
        }
    }
    // Front faces point up at rest.
    let mesh = &loaded.meshes()[0];
    for t in mesh.indices().chunks(3) {
        let [a, b, c] = [
            rest[t[0] as usize],
            rest[t[1] as usize],
            rest[t[2] as usize],
        ];
        let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        assert!(u[2] * v[0] - u[0] * v[2] > 0.0, "triangle {t:?} faces down");
    }

    // Turn `bent` by 90 degrees about z at its joint, with caller-made local matrices:
    // (x, y, z) -> (-y, x, z). Its child's joint and squares swing with it; the rest stay.
    let bi = loaded.find_bone(bent).unwrap() as usize;
    let ci = loaded.find_bone(child).unwrap() as usize;
    let mut local: Vec<Mat3x4> = rig.iter().map(|b| Mat3x4::from_translation(b.2)).collect();
    let o = rig[bi].2;
    local[bi].m = [
        0.0, -1.0, 0.0, o[0], 1.0, 0.0, 0.0, o[1], 0.0, 0.0, 1.0, o[2],
    ];
    let mut posed = vec![Mat3x4::IDENTITY; rig.len()];
    loaded.pose_concat(&local, None, &mut posed).unwrap();
    let moved = skinned(&loaded, 0, &posed);
    let jb = joint(rig, bi);
    let turn = |v: [f64; 3]| [jb[0] - v[1], jb[1] + v[0], jb[2] + v[2]];
    let co = rig[ci].2;
    let child_joint = turn([co[0] as f64, co[1] as f64, co[2] as f64]);
    near(posed[ci].translation(), child_joint, 1e-6, "child joint");
    for (k, c) in SQUARE.iter().enumerate() {
        let c64 = [c[0] as f64, c[1] as f64, c[2] as f64];
        near(moved[bi * 4 + k], turn(c64), 1e-6, "bent square");
        let from_child = [
            co[0] as f64 + c64[0],
            co[1] as f64 + c64[1],
            co[2] as f64 + c64[2],
        ];
        near(moved[ci * 4 + k], turn(from_child), 1e-6, "child square");
    }
    // The root's square has not moved.
    for k in 0..4 {
        assert_eq!(moved[k], rest[k]);
    }
}

#[test]
fn a_humanoid_rig_round_trips_and_poses() {
    check_rig(&HUMANOID, "l_upperarm", "l_forearm");
    // A worked example: the left hand's joint at rest is root + spine + chest + l_clavicle +
    // l_upperarm + l_forearm + l_hand = (0.75, 1.5, 0); bending the upper arm up by 90 degrees
    // puts it at the shoulder (0.2, 1.5, 0) plus (0, 0.55, 0).
    let (model, _, _) = through_files(&rig_model(&HUMANOID));
    let hand = model.find_bone("l_hand").unwrap() as usize;
    near(
        model.skeleton().bind_pose()[hand].translation(),
        [0.75, 1.5, 0.0],
        1e-6,
        "hand",
    );
    let mut local: Vec<Mat3x4> = HUMANOID
        .iter()
        .map(|b| Mat3x4::from_translation(b.2))
        .collect();
    local[6].m = [0.0, -1.0, 0.0, 0.15, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    let mut posed = vec![Mat3x4::IDENTITY; 19];
    model.pose_concat(&local, None, &mut posed).unwrap();
    near(
        posed[hand].translation(),
        [0.2, 2.05, 0.0],
        1e-6,
        "raised hand",
    );
}

#[test]
fn a_quadruped_rig_round_trips_and_poses() {
    check_rig(&QUADRUPED, "neck", "head");
    check_rig(&QUADRUPED, "tail2", "tail3");
}

#[test]
fn the_writers_refuse_what_the_files_cannot_hold() {
    let model = rig_model(&HUMANOID);
    // Bones out of pre-order.
    let mut parts = model.to_parts();
    // The upper arm hangs from the neck, which the clavicle before it does not descend from.
    parts.bones[6].parent = 3;
    let e = mm2::write_skel(&Model::from_parts(parts).unwrap()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported);
    assert!(e.to_string().contains("pre-order"), "{e}");
    // A rotating rest pose.
    let mut parts = model.to_parts();
    let mut poses = parts.poses.to_matrices();
    poses[2].m = [0.0, -1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.25, 0.0, 0.0, 1.0, 0.0];
    parts.poses = poses.into();
    let e = mm2::write_skel(&Model::from_parts(parts).unwrap()).unwrap_err();
    assert!(
        e.to_string()
            .contains("bone 2 (chest): its rest pose rotates"),
        "{e}"
    );
    // Names that are no words.
    let mut parts = model.to_parts();
    parts.bones[1].name = "my spine".into();
    assert!(mm2::write_skel(&Model::from_parts(parts).unwrap()).is_err());
    let mut parts = model.to_parts();
    parts.meshes[0].name = "a{b".into();
    assert!(mm2::write_mod(&Model::from_parts(parts).unwrap()).is_err());
    // A vertex of two bones.
    let mut parts = model.to_parts();
    let m = &mut parts.meshes[0];
    m.influences[0].weight = 0.5;
    let mut second = m.influences[0];
    second.bone = 1;
    m.influences.insert(1, second);
    for s in m.influence_start.iter_mut().skip(1) {
        *s += 1;
    }
    let e = mm2::write_mod(&Model::from_parts(parts).unwrap()).unwrap_err();
    assert!(
        e.to_string().contains("mesh 0 vertex 0: 2 influences"),
        "{e}"
    );
    // Meshes waiting for a skeleton have none to write, and meshes naming their bones cannot
    // be numbered.
    let meshes = module(&doll_mod()).unwrap();
    assert_eq!(
        mm2::write_skel(&meshes).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
}

#[test]
fn numbers_six_decimals_cannot_hold_are_written_exactly() {
    let mut parts = rig_model(&HUMANOID).to_parts();
    let mut poses = parts.poses.to_matrices();
    poses[1] = Mat3x4::from_translation([1.5e-7, 0.1234567, -2.0e8]);
    parts.poses = poses.into();
    parts.meshes[0].influences[0].origin = [3.0e-8, 1.0 / 3.0, 0.0];
    let model = Model::from_parts(parts).unwrap();
    let (loaded, skel_bytes, mod_bytes) = through_files(&model);
    let text = String::from_utf8(skel_bytes).unwrap();
    assert!(
        text.contains("offset 1.5e-7 0.1234567 -200000000.000000"),
        "{text}"
    );
    assert!(
        String::from_utf8(mod_bytes)
            .unwrap()
            .contains("v\t3e-8\t0.33333334\t0.000000")
    );
    assert_eq!(
        loaded.skeleton().frame_poses(0).unwrap()[1].translation(),
        [1.5e-7, 0.1234567, -2.0e8]
    );
}

// ---------------------------------------------------------------------------------------------
// The skeleton beside the mesh
// ---------------------------------------------------------------------------------------------

#[test]
fn a_mod_finds_the_skel_of_its_name_beside_it() {
    let mut fs = MemoryFs::default();
    fs.files
        .insert("anim/pedmodel_doll.skel".into(), doll_skel().into_bytes());
    let loaded = |fs: &MemoryFs, name: &str| {
        let options = LoadOptions {
            name: Some(name.into()),
            io: Some(fs),
            ..LoadOptions::default()
        };
        Model::load(doll_mod().as_bytes(), &options)
    };
    let model = loaded(&fs, "anim/pedmodel_doll.mod").unwrap();
    assert!(model.unbound().is_none());
    assert_eq!(model.bones().len(), 2);
    assert_eq!(*fs.asked.borrow(), ["anim/pedmodel_doll.skel"]);
    // The skeleton's warning comes along, naming its file.
    assert_eq!(model.warnings().len(), 1);
    assert!(
        model.warnings()[0]
            .to_string()
            .starts_with("pedmodel_doll.skel line 6:"),
        "{:?}",
        model.warnings()
    );
    let at_rest = skinned(&model, 1, &rest_bones(&model));
    near(at_rest[1], [0.0, 1.75, 0.25], 1e-6, "through io");

    let e = loaded(&fs, "anim/pedmodel_cat.mod").unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert!(
        e.to_string()
            .contains("anim/pedmodel_cat.skel does not exist"),
        "{e}"
    );
    // Without io nothing is looked for.
    let alone = Model::load(
        doll_mod().as_bytes(),
        &LoadOptions {
            name: Some("anim/pedmodel_doll.mod".into()),
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert!(alone.unbound().is_some());
    // A skeleton that does not fit is a mismatch naming it.
    fs.files
        .insert("anim/pedmodel_doll.skel".into(), seed("\n").into_bytes());
    let e = loaded(&fs, "anim/pedmodel_doll.mod").unwrap_err();
    assert_eq!(e.code(), ErrorCode::Mismatch);
    assert!(
        e.to_string().contains("binding to anim/pedmodel_doll.skel"),
        "{e}"
    );

    // From the OS filesystem.
    let dir = std::env::temp_dir().join(format!("ossa-mm2-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pedmodel_doll.mod"), doll_mod()).unwrap();
    let e = Model::load_file(dir.join("pedmodel_doll.mod"), &LoadOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    std::fs::write(dir.join("pedmodel_doll.skel"), doll_skel()).unwrap();
    let model = Model::load_file(dir.join("pedmodel_doll.mod"), &LoadOptions::default()).unwrap();
    assert_eq!(model.bones().len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_skel_over_the_memory_limit_fails_the_load_unread() {
    let mut fs = MemoryFs::default();
    let mut big = doll_skel().into_bytes();
    big.resize(2 << 20, b'\n');
    fs.files.insert("anim/pedmodel_doll.skel".into(), big);
    let options = |max_bytes| LoadOptions {
        name: Some("anim/pedmodel_doll.mod".into()),
        io: Some(&fs),
        max_bytes,
        ..LoadOptions::default()
    };
    // Blank lines at its end do not matter to the skeleton, only to the limit.
    let model = Model::load(doll_mod().as_bytes(), &options(4 << 20)).unwrap();
    assert_eq!(model.bones().len(), 2);
    let e = Model::load(doll_mod().as_bytes(), &options(1 << 20)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    assert!(
        e.to_string().contains(&format!(
            "anim/pedmodel_doll.skel holds {} bytes, more than the ",
            2 << 20
        )),
        "{e}"
    );
}
