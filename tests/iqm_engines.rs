//! The engine rules (`ossa::iqm::engines`, docs/engines.md) on files with known answers: corpus
//! files whose quirks FORMATS.md §9.6 names, files made here, and what `ossa convert --engine`
//! writes: Xonotic's zombie for DarkPlaces with framegroups that read back as its scenes, and
//! the Warsow 0.5 player for Warfork as `tris.iqm` and `animation.cfg` that Warfork's rules pass.

#![cfg(feature = "cli")]

mod cli_support;
mod corpus;

use std::path::Path;

use cli_support::{TempDir, ossa};
use ossa::iqm::engines::{self, CheckOptions, Engine, Finding, Kind, RULES, Sidecar};
use ossa::iqm::{EngineWrite, write_for_engine};
use ossa::synth::TubeRig;
use ossa::{ErrorCode, LoadOptions, Model};

// Header fields, by their byte offsets.
const VERSION: u64 = 16;
const NUM_MESHES: u64 = 36;
const OFS_MESHES: u64 = 40;
const NUM_VERTEXARRAYS: u64 = 44;
const OFS_VERTEXARRAYS: usize = 52;
const NUM_JOINTS: usize = 68;
const NUM_POSES: u64 = 76;
const NUM_ANIMS: usize = 84;
const NUM_FRAMES: u64 = 92;
const OFS_BOUNDS: u64 = 104;

fn check(data: &[u8], engine: Engine) -> Vec<Finding> {
    engines::check(data, engine, &CheckOptions::default()).unwrap()
}

/// The findings as (rule, kind, offset), in order.
fn summary(findings: &[Finding]) -> Vec<(&'static str, Kind, Option<u64>)> {
    findings
        .iter()
        .map(|f| (f.rule, f.kind, f.offset))
        .collect()
}

fn find<'a>(findings: &'a [Finding], rule: &str) -> &'a Finding {
    findings
        .iter()
        .find(|f| f.rule == rule)
        .unwrap_or_else(|| panic!("no {rule} in {findings:#?}"))
}

fn corpus_iqm(name: &str) -> Option<Vec<u8>> {
    let dir = corpus::corpus_subdir("iqm", name)?;
    Some(std::fs::read(dir.join(name)).unwrap())
}

fn u32_at(d: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(d[at..at + 4].try_into().unwrap())
}

/// An IQM of nothing but its header, of `version`.
fn header_only(version: u32) -> Vec<u8> {
    let mut d = b"INTERQUAKEMODEL\0".to_vec();
    d.extend_from_slice(&version.to_le_bytes());
    d.extend_from_slice(&124u32.to_le_bytes());
    d.resize(124, 0);
    d
}

#[test]
fn version_1_is_refused_by_qfusion_and_warfork_and_read_by_darkplaces_and_fte() {
    let v1 = header_only(1);
    for engine in [Engine::Qfusion, Engine::Warfork] {
        let f = check(&v1, engine);
        assert_eq!(
            summary(&f),
            [("qfusion.version", Kind::Refuses, Some(VERSION))],
            "{engine}"
        );
        assert!(f[0].message.contains("version 1"), "{}", f[0].message);
    }
    // An empty version 1 file breaks nothing of DarkPlaces' or FTE's.
    assert_eq!(check(&v1, Engine::DarkPlaces), []);
    assert_eq!(check(&v1, Engine::Fte), []);
    // Version 3 is no engine's.
    let v3 = header_only(3);
    assert_eq!(
        summary(&check(&v3, Engine::DarkPlaces)),
        [("darkplaces.version", Kind::Refuses, Some(VERSION))]
    );
    assert_eq!(
        summary(&check(&v3, Engine::Fte)),
        [("fte.version", Kind::Refuses, Some(VERSION))]
    );
    // A header cut short: every engine reads past the file.
    let short = &v1[..100];
    for (engine, rule) in [
        (Engine::DarkPlaces, "darkplaces.offsets"),
        (Engine::Fte, "fte.offsets"),
        (Engine::Qfusion, "qfusion.offsets"),
    ] {
        let opts = CheckOptions {
            name: Some("short.iqm"),
            ..CheckOptions::default()
        };
        let f = engines::check(short, engine, &opts).unwrap();
        assert_eq!(summary(&f), [(rule, Kind::Refuses, Some(0))]);
    }
}

#[test]
fn the_dead_player_has_no_meshes_and_no_bounds_for_qfusion() {
    let Some(dead) = corpus_iqm("rea_player_dead.iqm") else {
        return;
    };
    let f = check(&dead, Engine::Qfusion);
    assert_eq!(
        summary(&f),
        [
            ("qfusion.geometry", Kind::Refuses, Some(NUM_MESHES)),
            ("qfusion.poses", Kind::Refuses, Some(NUM_POSES)),
            ("qfusion.bounds", Kind::Refuses, Some(OFS_BOUNDS)),
            ("qfusion.arrays", Kind::Refuses, Some(NUM_VERTEXARRAYS)),
            ("qfusion.normals", Kind::Refuses, Some(NUM_VERTEXARRAYS)),
        ]
    );
    assert!(
        find(&f, "qfusion.poses")
            .message
            .contains("78 poses for 0 joints")
    );
    // DarkPlaces decodes its 78 poses into frames of no joint; its anim's rate is 0 (anims at
    // 0x1b52, the rate 12 bytes in).
    let dp = check(&dead, Engine::DarkPlaces);
    assert_eq!(
        summary(&dp),
        [
            ("darkplaces.poses_overflow", Kind::Refuses, Some(NUM_POSES)),
            ("darkplaces.framerate", Kind::Misreads, Some(0x1b5e)),
        ]
    );
    // FTE plays it at 10 fps, and reads its unaligned tables through cast pointers.
    let fte = check(&dead, Engine::Fte);
    assert_eq!(
        summary(&fte),
        [
            ("fte.framerate", Kind::Misreads, Some(0x1b5e)),
            ("fte.unaligned", Kind::Note, Some(80)),
        ]
    );
}

#[test]
fn unaligned_offsets_are_a_note_for_fte_and_nothing_for_the_others() {
    for name in ["nuc_logo.iqm", "nuc_player_animations_vvm.iqm"] {
        let Some(nuc) = corpus_iqm(name) else {
            return;
        };
        assert!(!u32_at(&nuc, OFS_MESHES as usize).is_multiple_of(4));
        let fte = check(&nuc, Engine::Fte);
        let note = find(&fte, "fte.unaligned");
        assert_eq!(
            (note.kind, note.offset),
            (Kind::Note, Some(OFS_MESHES)),
            "{name}"
        );
        assert!(fte.iter().all(|f| f.kind == Kind::Note), "{name}: {fte:#?}");
        // DarkPlaces reads byte by byte, qfusion copies: alignment is nothing to them.
        assert_eq!(check(&nuc, Engine::DarkPlaces), [], "{name}");
        let qf = check(&nuc, Engine::Qfusion);
        assert!(
            qf.iter().all(|f| !f.message.contains("multiple of 4")),
            "{name}: {qf:#?}"
        );
    }
}

#[test]
fn bush_triangles_reaching_into_another_mesh_are_misread_by_fte_and_qfusion() {
    let Some(bush) = corpus_iqm("ksdk_bush.iqm") else {
        return;
    };
    for (engine, rule) in [
        (Engine::Fte, "fte.mesh_range"),
        (Engine::Qfusion, "qfusion.mesh_range"),
        (Engine::Warfork, "qfusion.mesh_range"),
    ] {
        let f = check(&bush, engine);
        let reach = find(&f, rule);
        assert_eq!((reach.kind, reach.offset), (Kind::Misreads, Some(0x840)));
        assert!(
            reach
                .message
                .starts_with("mesh 0 (Cube) triangle 0 corner 0: vertex 16, outside the mesh's vertices 0..16 (24 corners above"),
            "{}",
            reach.message
        );
    }
    // DarkPlaces indexes the whole file: the same triangles draw right.
    let dp = check(&bush, Engine::DarkPlaces);
    assert_eq!(
        summary(&dp),
        [("darkplaces.weights_zero", Kind::Misreads, Some(0x7c0))]
    );
    // qfusion needs frames, anims, a pose a joint and bounds, which a static model lacks.
    let qf = check(&bush, Engine::Qfusion);
    assert_eq!(
        summary(&qf)[..3],
        [
            ("qfusion.animations", Kind::Refuses, Some(NUM_FRAMES)),
            ("qfusion.poses", Kind::Refuses, Some(NUM_POSES)),
            ("qfusion.bounds", Kind::Refuses, Some(OFS_BOUNDS)),
        ]
    );
}

#[test]
fn darkplaces_reads_float_and_ubyte_arrays_only() {
    let Some(mut fixit) = corpus_iqm("asp_mrfixit.iqm") else {
        return;
    };
    assert_eq!(check(&fixit, Engine::DarkPlaces), []);
    // The normal array's format made half: the same offset, half the bytes.
    let table = u32_at(&fixit, OFS_VERTEXARRAYS) as usize;
    let normal = (0..u32_at(&fixit, NUM_VERTEXARRAYS as usize) as usize)
        .map(|k| table + k * 20)
        .find(|&at| u32_at(&fixit, at) == 2)
        .unwrap();
    fixit[normal + 8..normal + 12].copy_from_slice(&6u32.to_le_bytes());
    assert_eq!(
        summary(&check(&fixit, Engine::DarkPlaces)),
        [(
            "darkplaces.array_format",
            Kind::Misreads,
            Some(normal as u64)
        )]
    );
    // qfusion needs float normals, or copies them from a NULL pointer.
    assert_eq!(
        summary(&check(&fixit, Engine::Qfusion)),
        [("qfusion.normals", Kind::Refuses, Some(normal as u64))]
    );
    // FTE converts any format.
    assert_eq!(check(&fixit, Engine::Fte), []);
}

#[test]
fn fte_takes_256_joints_at_most() {
    let mut d = header_only(2);
    d[NUM_JOINTS..NUM_JOINTS + 4].copy_from_slice(&300u32.to_le_bytes());
    let f = check(&d, Engine::Fte);
    let bones = find(&f, "fte.bones");
    assert_eq!(
        (bones.kind, bones.offset),
        (Kind::Refuses, Some(NUM_JOINTS as u64))
    );
    assert!(bones.message.contains("300 joints"));
}

#[test]
fn every_corpus_file_gets_findings_of_known_rules_within_the_file() {
    let Some(dir) = corpus::corpus_subdir("iqm", "every_corpus_file") else {
        return;
    };
    for name in corpus::files_ending(&dir, &[".iqm"]) {
        let data = std::fs::read(dir.join(&name)).unwrap();
        for engine in Engine::ALL {
            for f in check(&data, engine) {
                let rule = engines::rule(f.rule).unwrap_or_else(|| panic!("{}", f.rule));
                assert_eq!(rule.kind, f.kind, "{name} {}", f.rule);
                assert!(engines::rules(engine).any(|r| r.id == f.rule), "{name}");
                assert!(
                    f.offset.is_none_or(|o| o < data.len() as u64),
                    "{name}: {f}"
                );
            }
        }
    }
}

#[test]
fn docs_name_every_rule_and_its_source() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/engines.md"))
            .unwrap();
    for rule in RULES {
        assert!(docs.contains(&format!("`{}`", rule.id)), "{}", rule.id);
        let file = rule.source.split(' ').next().unwrap();
        assert!(docs.contains(file), "{}: {file}", rule.id);
    }
}

#[test]
fn other_formats_are_loaded_by_their_own_rules_or_refused() {
    let Some(dir) = corpus::corpus_subdir("dpm", "other_formats") else {
        return;
    };
    let zombie = std::fs::read(dir.join("xon_zombie.dpm")).unwrap();
    assert_eq!(
        summary(&check(&zombie, Engine::DarkPlaces)),
        [("darkplaces.dpm", Kind::Note, Some(0))]
    );
    assert_eq!(
        summary(&check(&zombie, Engine::Fte)),
        [("fte.dpm", Kind::Note, Some(0))]
    );
    assert_eq!(
        summary(&check(&zombie, Engine::Warfork)),
        [("qfusion.format", Kind::Refuses, None)]
    );
    // Xonotic's DPM-content `.iqm`: DarkPlaces picks the loader by the magic.
    let named = CheckOptions {
        name: Some("h_zombie.iqm"),
        ..CheckOptions::default()
    };
    let f = engines::check(&zombie, Engine::DarkPlaces, &named).unwrap();
    assert_eq!(f[0].rule, "darkplaces.dpm");
    let e = engines::check(b"not a model", Engine::Fte, &CheckOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::UnknownFormat);
}

// ---------------------------------------------------------------------------------------------
// Writing for an engine
// ---------------------------------------------------------------------------------------------

#[test]
fn a_static_model_written_for_qfusion_gets_its_bind_pose_as_a_one_frame_anim() {
    let Some(bush) = corpus_iqm("ksdk_bush.iqm") else {
        return;
    };
    let model = Model::load(&bush, &LoadOptions::default()).unwrap();
    let how = EngineWrite {
        engine: Some(Engine::Qfusion),
        ..EngineWrite::default()
    };
    let files = write_for_engine(&model, &how).unwrap();
    let d = &files.iqm;
    assert_eq!(u32_at(d, NUM_FRAMES as usize), 1);
    assert_eq!(u32_at(d, NUM_ANIMS), 1);
    assert_eq!(u32_at(d, NUM_JOINTS), u32_at(d, NUM_POSES as usize));
    assert_ne!(u32_at(d, OFS_BOUNDS as usize), 0);
    let f = check(d, Engine::Qfusion);
    assert!(f.iter().all(|f| f.kind != Kind::Refuses), "{f:#?}");
    assert!(files.notes.iter().any(|n| n.contains("one-frame anim")));
}

#[test]
fn qfusion_refuses_65535_vertices_naming_the_rule_and_nothing_is_written() {
    let model = TubeRig::with_vertices(65535).build().unwrap();
    let how = EngineWrite {
        engine: Some(Engine::Warfork),
        ..EngineWrite::default()
    };
    let e = write_for_engine(&model, &how).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    assert!(e.to_string().starts_with("qfusion.vertex_limit: "), "{e}");

    let tmp = TempDir::new("iqm_engines", "vertex_limit");
    tmp.write("big.dpm", ossa::dpm::write(&model).unwrap());
    let run = ossa(
        &tmp,
        &["convert", "big.dpm", "-o", "big.iqm", "--engine", "qfusion"],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("OSSA_ERR_LIMIT: qfusion.vertex_limit"),
        "{}",
        run.stderr
    );
    assert_eq!(tmp.listing(""), ["big.dpm"]);
    // DarkPlaces has no such limit.
    let run = ossa(
        &tmp,
        &[
            "convert",
            "big.dpm",
            "-o",
            "big.iqm",
            "--engine",
            "darkplaces",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn an_animation_file_for_qfusion_is_refused_and_not_written() {
    let Some(dir) = corpus::corpus_subdir("iqm", "animation_file") else {
        return;
    };
    let tmp = TempDir::new("iqm_engines", "animation_file");
    let input = dir.join("rea_player_dead.iqm");
    let run = ossa(
        &tmp,
        &[
            "convert",
            input.to_str().unwrap(),
            "-o",
            "dead.iqm",
            "--engine",
            "qfusion",
        ],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "OSSA_ERR_UNSUPPORTED: qfusion.geometry: the file written for qfusion would be refused"
        ),
        "{}",
        run.stderr
    );
    assert!(tmp.listing("").is_empty());
}

/// Scenes by what they play, the first frames counted from the file's frame 0.
fn scenes(model: &Model, first_file_frame: u32) -> Vec<(String, u32, u32, f32, bool)> {
    model
        .animations()
        .iter()
        .map(|a| {
            (
                a.name.to_string_lossy(),
                a.first_frame - first_file_frame,
                a.frame_count,
                a.fps,
                a.looping,
            )
        })
        .collect()
}

#[test]
fn xonotic_zombie_written_for_darkplaces_loads_with_framegroups_that_read_back() {
    let Some(dir) = corpus::corpus_subdir("dpm", "zombie_for_darkplaces") else {
        return;
    };
    let tmp = TempDir::new("iqm_engines", "zombie");
    let input = dir.join("xon_zombie.dpm");
    let run = ossa(
        &tmp,
        &[
            "convert",
            input.to_str().unwrap(),
            "-o",
            "zombie.iqm",
            "--engine",
            "darkplaces",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("zombie.iqm.framegroups (31 scenes)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("an IQM vertex holds 4 bones"),
        "{}",
        run.stdout
    );
    // The zombie's four .skin files go with it (tests/cli_convert.rs checks their lines).
    assert_eq!(
        tmp.listing(""),
        [
            "zombie.iqm",
            "zombie.iqm.framegroups",
            "zombie.iqm_0.skin",
            "zombie.iqm_1.skin",
            "zombie.iqm_2.skin",
            "zombie.iqm_3.skin"
        ]
    );
    for engine in ["darkplaces", "fte", "xonotic"] {
        let run = ossa(&tmp, &["validate", "--engine", engine, "zombie.iqm"]);
        assert_eq!(run.code, 0, "{engine}: {}", run.stdout);
        assert!(
            run.stdout.contains("loads it (0 misreads, 0 notes)"),
            "{}",
            run.stdout
        );
    }

    // The scenes read back through ossa's .framegroups reader are the DPM's: the zombie's
    // first scene starts at frame 1, so the IQM's frames are the model's from 1, and the IQM
    // read back puts its bind pose before them.
    let source = Model::load_file(&input, &LoadOptions::default()).unwrap();
    let written = Model::load_file(tmp.path("zombie.iqm"), &LoadOptions::default()).unwrap();
    assert_eq!(source.animations().len(), 31);
    assert_eq!(scenes(&written, 1), scenes(&source, 1));
    // The text is DarkPlaces' syntax: first count fps loop name.
    let text = std::fs::read_to_string(tmp.path("zombie.iqm.framegroups")).unwrap();
    assert_eq!(text.lines().next().unwrap(), "0 56 30 1 groupified_0_anim");

    // Without the framegroups the IQM's own anims say the same.
    std::fs::remove_file(tmp.path("zombie.iqm.framegroups")).unwrap();
    let alone = Model::load_file(tmp.path("zombie.iqm"), &LoadOptions::default()).unwrap();
    assert_eq!(scenes(&alone, 1), scenes(&source, 1));
}

#[test]
fn scene_names_with_spaces_are_quoted_and_read_back() {
    let mut parts = TubeRig::default().build().unwrap().to_parts();
    parts.animations = vec![
        ossa::Animation {
            name: ossa::Name::from("run fast"),
            first_frame: 1,
            frame_count: 2,
            fps: 12.5,
            looping: false,
            ..Default::default()
        },
        ossa::Animation {
            name: ossa::Name::from("idle"),
            first_frame: 3,
            frame_count: 1,
            fps: 20.0,
            looping: true,
            ..Default::default()
        },
    ];
    let model = Model::from_parts(parts).unwrap();
    let files = write_for_engine(
        &model,
        &EngineWrite {
            sidecars: true,
            ..EngineWrite::default()
        },
    )
    .unwrap();
    let text = files.framegroups.unwrap();
    assert_eq!(text, "0 2 12.5 0 \"run fast\"\n2 1 20 1 idle\n");
    let tmp = TempDir::new("iqm_engines", "quoted");
    tmp.write("tube.iqm", &files.iqm);
    tmp.write("tube.iqm.framegroups", &text);
    let back = Model::load_file(tmp.path("tube.iqm"), &LoadOptions::default()).unwrap();
    assert_eq!(scenes(&back, 1), scenes(&model, 1));
}

/// The Warsow 0.5 SDK's player laid out as a game has it: `tris.skm`, `tris.skp` and
/// `animation.cfg` in the player's directory.
fn warsow_player(tmp: &TempDir) -> Option<()> {
    let dir = corpus::corpus_subdir("skm", "warsow_player")?;
    for (from, to) in [
        ("wsw05sdk_monada_tris.skm", "monada/tris.skm"),
        ("wsw05sdk_monada_tris.skp", "monada/tris.skp"),
        ("wsw05sdk_monada_animation.cfg", "monada/animation.cfg"),
    ] {
        tmp.write(to, std::fs::read(dir.join(from)).unwrap());
    }
    Some(())
}

#[test]
fn the_warsow_player_as_it_is_is_refused_by_warfork() {
    let tmp = TempDir::new("iqm_engines", "warsow_as_is");
    if warsow_player(&tmp).is_none() {
        return;
    }
    // Its SKM: Warfork loads IQM only.
    let f = engines::check_file(
        &tmp.path("monada/tris.skm"),
        Engine::Warfork,
        false,
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(summary(&f), [("qfusion.format", Kind::Refuses, Some(0))]);
    // Its animation.cfg, of the older layout, beside a tris.iqm that is right: 34 anims of
    // shifted numbers, the first made of `FPS 24`'s number, the last number of the tagmask
    // line after one of three numbers (whose own missing three took that line's first two
    // tokens), and the first anim line's first two.
    std::fs::create_dir_all(tmp.path("out")).unwrap();
    let run = ossa(
        &tmp,
        &[
            "convert",
            "monada/tris.skm",
            "-o",
            "out/tris.iqm",
            "--engine",
            "warfork",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    std::fs::copy(
        tmp.path("monada/animation.cfg"),
        tmp.path("out/animation.cfg"),
    )
    .unwrap();
    let f = engines::check_file(
        &tmp.path("out/tris.iqm"),
        Engine::Warfork,
        false,
        &LoadOptions::default(),
    )
    .unwrap();
    let count = find(&f, "warfork.animation_cfg_count");
    assert_eq!(count.kind, Kind::Refuses);
    assert!(
        count.message.contains("34 anims of 4 numbers read"),
        "{}",
        count.message
    );
    let layout = find(&f, "warfork.animation_cfg_layout");
    assert_eq!((layout.kind, layout.line), (Kind::Misreads, Some(23)));
    assert!(
        layout
            .message
            .contains("[24, 0, 40, 58] from lines 4 to 23"),
        "{}",
        layout.message
    );
    // Its bones are the model's (names matched without case).
    assert!(
        f.iter().all(|f| f.rule != "warfork.animation_cfg_bone"),
        "{f:#?}"
    );
}

#[test]
fn the_warsow_player_converted_for_warfork_passes_warfork() {
    let tmp = TempDir::new("iqm_engines", "warsow_for_warfork");
    if warsow_player(&tmp).is_none() {
        return;
    }
    std::fs::create_dir_all(tmp.path("warfork")).unwrap();
    std::fs::create_dir_all(tmp.path("scenes")).unwrap();
    let run = ossa(
        &tmp,
        &[
            "convert",
            "monada/tris.skm",
            "-o",
            "warfork/tris.iqm",
            "--engine",
            "warfork",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("animation.cfg (49 anims)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("LEGS_LAND <- LEGS_JUMP3ST"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("LEGS_DASH_RIGHT: frames 727 to 742 clamped to 738"),
        "{}",
        run.stdout
    );
    assert_eq!(tmp.listing("warfork"), ["animation.cfg", "tris.iqm"]);

    let run = ossa(
        &tmp,
        &["validate", "--engine", "warfork", "warfork/tris.iqm"],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.stdout.trim(),
        "warfork/tris.iqm: Warfork loads it (0 misreads, 0 notes)"
    );
    let f = engines::check_file(
        &tmp.path("warfork/tris.iqm"),
        Engine::Warfork,
        false,
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(f, []);

    // The config is Warfork's layout, its anims in Warfork's order with the SDK's frames.
    let cfg = std::fs::read_to_string(tmp.path("warfork/animation.cfg")).unwrap();
    let anims: Vec<&str> = cfg
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(anims.len(), 49);
    assert_eq!(anims[0], "40\t58\t0\t24\t// BOTH_DEATH1");
    assert_eq!(anims[6], "160\t200\t40\t24\t// LEGS_STAND_IDLE");
    assert!(cfg.contains("tagmask \"Bip01 R Hand\" \"tag_weapon\" -2 0 0 0 0 0\n"));
    assert!(!cfg.contains("FPS"));

    // The IQM's anims are the config's, over the SKP's frames (frame 0 kept).
    let model = Model::load_file(tmp.path("warfork/tris.iqm"), &LoadOptions::default()).unwrap();
    let skp = Model::load_file(tmp.path("monada/tris.skm"), &LoadOptions::default()).unwrap();
    assert_eq!(model.frames().len(), skp.frames().len() + 1);
    assert_eq!(model.animations().len(), 49);
    assert_eq!(model.animations()[0].name.to_string_lossy(), "BOTH_DEATH1");
    assert_eq!(model.animations()[0].first_frame, 40 + 1);

    // Written without a config beside it, from 739 one-frame scenes: Warfork plays 49 of them.
    std::fs::remove_file(tmp.path("monada/animation.cfg")).unwrap();
    let run = ossa(
        &tmp,
        &[
            "convert",
            "monada/tris.skm",
            "-o",
            "scenes/tris.iqm",
            "--engine",
            "warfork",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = ossa(
        &tmp,
        &["validate", "--engine", "warfork", "scenes/tris.iqm"],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
}

#[test]
fn a_warfork_player_without_animation_cfg_is_refused() {
    let Some(fixit) = corpus_iqm("asp_mrfixit.iqm") else {
        return;
    };
    let named = CheckOptions {
        name: Some("models/players/fixit/tris.iqm"),
        animation_cfg: Sidecar::Missing,
        ..CheckOptions::default()
    };
    assert_eq!(
        summary(&engines::check(&fixit, Engine::Warfork, &named).unwrap()),
        [("warfork.animation_cfg", Kind::Refuses, None)]
    );
    // Not a player model for qfusion, and not one by another name.
    assert_eq!(engines::check(&fixit, Engine::Qfusion, &named).unwrap(), []);
    let other = CheckOptions {
        name: Some("fixit.iqm"),
        ..named
    };
    assert_eq!(engines::check(&fixit, Engine::Warfork, &other).unwrap(), []);
    // A config of too few anims, slow ones, frames past the model's and an unknown bone.
    let cfg = b"sex m\nrotationbone upper \"no such bone\"\n0 200 0 5\n";
    let with = CheckOptions {
        animation_cfg: Sidecar::Bytes(cfg),
        ..named
    };
    let f = engines::check(&fixit, Engine::Warfork, &with).unwrap();
    let got: Vec<(&str, Kind, Option<u32>)> = f.iter().map(|f| (f.rule, f.kind, f.line)).collect();
    assert_eq!(
        got,
        [
            ("warfork.animation_cfg_count", Kind::Refuses, Some(3)),
            ("warfork.animation_cfg_frames", Kind::Misreads, Some(3)),
            ("warfork.animation_cfg_fps", Kind::Misreads, Some(3)),
            ("warfork.animation_cfg_bone", Kind::Misreads, Some(2)),
            ("warfork.player_anims", Kind::Misreads, None),
        ]
    );
    // Without the file access to read it, a note.
    let unread = CheckOptions {
        animation_cfg: Sidecar::NotRead,
        ..named
    };
    assert_eq!(
        summary(&engines::check(&fixit, Engine::Warfork, &unread).unwrap()),
        [("warfork.animation_cfg_unchecked", Kind::Note, None)]
    );
}

#[test]
fn validate_exits_1_when_the_engine_refuses_and_names_each_rule() {
    let Some(dir) = corpus::corpus_subdir("iqm", "validate_exit") else {
        return;
    };
    let tmp = TempDir::new("iqm_engines", "validate_exit");
    let bush = dir.join("ksdk_bush.iqm");
    let dead = dir.join("rea_player_dead.iqm");
    let run = ossa(
        &tmp,
        &["validate", "--engine", "fte", bush.to_str().unwrap()],
    );
    assert_eq!(run.code, 0);
    assert!(
        run.stdout
            .contains(": misreads fte.mesh_range: mesh 0 (Cube)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with("FTE loads it (2 misreads, 0 notes)\n"),
        "{}",
        run.stdout
    );
    let run = ossa(
        &tmp,
        &[
            "validate",
            "--engine",
            "qfusion",
            bush.to_str().unwrap(),
            dead.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains(": refuses qfusion.bounds: header: no bounds"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("qfusion would refuse it (5 rules; 0 misreads, 0 notes)")
    );
    let run = ossa(
        &tmp,
        &["validate", "--engine", "quake", bush.to_str().unwrap()],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown engine quake"),
        "{}",
        run.stderr
    );
    let run = ossa(&tmp, &["validate", "--player", bush.to_str().unwrap()]);
    assert_eq!(run.code, 2);
}

#[test]
fn hostile_headers_give_findings_not_panics_or_hangs() {
    let mut files = vec![header_only(2)];
    for name in ["asp_mrfixit.iqm", "ksdk_bush.iqm", "rea_player_dead.iqm"] {
        if let Some(d) = corpus_iqm(name) {
            files.push(d);
        }
    }
    let start = std::time::Instant::now();
    for file in &files {
        let len = file.len() as u32;
        for word in 0..27 {
            let at = 16 + word * 4;
            for value in [
                0,
                1,
                3,
                255,
                256,
                65535,
                len - 1,
                len,
                len + 1,
                0x7fff_ffff,
                u32::MAX,
            ] {
                let mut d = file.clone();
                d[at..at + 4].copy_from_slice(&value.to_le_bytes());
                for engine in Engine::ALL {
                    let opts = CheckOptions {
                        name: Some("tris.iqm"),
                        animation_cfg: Sidecar::Bytes(b"sex m\n1 2 3 4\ntagmask"),
                        ..CheckOptions::default()
                    };
                    for f in engines::check(&d, engine, &opts).unwrap() {
                        assert!(engines::rule(f.rule).is_some());
                    }
                }
            }
        }
    }
    assert!(start.elapsed().as_secs() < 60, "{:?}", start.elapsed());
}
