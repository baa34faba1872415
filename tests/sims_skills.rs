//! Sims skills added to a loaded skeleton (`Model::with_skills`, `Model::with_skills_file`):
//! each skill's CFP found beside its character file through the caller's filesystem or the OS
//! one, the frames and scenes it adds, meshes bound before or after, and what is refused: a CFP
//! name pointing outside, a missing CFP, a model without a skeleton, a file without skills.
//!
//! The corpus tests serve the corpus under the game's own names (`characters/adult-idle1.cmx`,
//! `characters/xskill-A2O-idle1.cfp`) and skip when it is absent; the hand-made tests need none.

mod sims_fixtures;
use sims_fixtures::{HEAD_SKN, TINY_SKELETON, frame_pose, nod, nod_cfp, through, tiny_skeleton};
mod memory_fs;
use memory_fs::MemoryFs;
mod corpus;

use corpus::corpus_subdir;

use std::path::{Path, PathBuf};

use ossa::format::cmx;
use ossa::{ErrorCode, Format, LoadOptions, Mat3x4, Model, Strided};

// ---------------------------------------------------------------------------------------------
// A filesystem in memory
// ---------------------------------------------------------------------------------------------

fn named<'a>(fs: &'a MemoryFs, name: &str) -> LoadOptions<'a> {
    LoadOptions {
        name: Some(name.to_owned()),
        ..through(fs)
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Model-space bones of scene `scene` at `seconds`.
fn scene_pose(model: &Model, scene: usize, seconds: f64) -> Vec<Mat3x4> {
    let (blends, n) = model.animation_blend(scene, seconds).unwrap();
    let mut out = vec![Mat3x4::IDENTITY; model.bones().len()];
    model.pose_frames(&blends[..n], None, &mut out).unwrap();
    out
}

/// Positions of mesh `mesh` skinned with `bones`.
fn skin(model: &Model, mesh: usize, bones: &[Mat3x4]) -> Vec<[f32; 3]> {
    let n = model.meshes()[mesh].vertex_count();
    let mut flat = vec![0.0f32; n * 3];
    let mut target = Strided::new(&mut flat, 3).unwrap();
    model.skin_mesh(mesh, bones, 0, n, 0, &mut target).unwrap();
    flat.chunks(3).map(|c| [c[0], c[1], c[2]]).collect()
}

fn y_range(points: &[[f32; 3]]) -> (f32, f32) {
    points
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p[1]), hi.max(p[1]))
        })
}

fn failure(result: ossa::Result<Model>) -> (ErrorCode, String) {
    let e = result.expect_err("the call should fail");
    (e.code(), e.to_string())
}

// ---------------------------------------------------------------------------------------------
// Hand-made files: a three-bone skeleton and a skill that nods its head
// ---------------------------------------------------------------------------------------------

fn head_mesh() -> Model {
    Model::load(
        HEAD_SKN.as_bytes(),
        &LoadOptions {
            format: Format::SimsSkn,
            ..LoadOptions::default()
        },
    )
    .unwrap()
}

/// A pak with the nod skill as `anims/nod.cmx` and its CFP as `anims/xskill-nod.cfp`.
fn nod_fs() -> MemoryFs {
    let mut fs = MemoryFs::default();
    fs.add("anims/nod.cmx", nod("nod", "xskill-nod", "CHEST"));
    fs.add("anims/xskill-nod.cfp", nod_cfp());
    fs
}

#[test]
fn a_skill_file_adds_frames_and_a_scene() {
    let skeleton = tiny_skeleton();
    let fs = nod_fs();
    let model = skeleton
        .with_skills_file("anims/nod.cmx", &through(&fs))
        .unwrap();
    assert_eq!(fs.asked(), ["anims/nod.cmx", "anims/xskill-nod.cfp"]);
    assert_eq!(model.frames().len(), 5);
    assert_eq!(model.bones(), skeleton.bones());
    let scene = &model.animations()[0];
    assert_eq!(model.animations().len(), 1);
    assert_eq!(scene.name.to_string(), "nod");
    assert_eq!((scene.first_frame, scene.frame_count), (1, 4));
    assert!((scene.fps - 4000.0 / 133.0).abs() < 1e-3, "{}", scene.fps);
    assert!(!scene.looping);
    assert!(model.warnings().is_empty(), "{:?}", model.warnings());

    // The frames are those cmx::with_skill samples, and the rest pose stays frame 0.
    let file = cmx::parse(&fs.files["anims/nod.cmx"]).unwrap();
    let one = cmx::with_skill(&skeleton, &file, 0, &nod_cfp()).unwrap();
    assert_eq!(one.frames(), model.frames());
    assert_eq!(one.animations(), model.animations());
    for f in 0..5 {
        assert_eq!(
            model.skeleton().frame_poses(f),
            one.skeleton().frame_poses(f)
        );
    }
    assert_eq!(
        model.skeleton().frame_poses(0),
        skeleton.skeleton().frame_poses(0)
    );

    // From memory, the CFP beside the name; the same model.
    fs.forget();
    let from_memory = skeleton
        .with_skills(&fs.files["anims/nod.cmx"], &named(&fs, "anims/nod.cmx"))
        .unwrap();
    assert_eq!(fs.asked(), ["anims/xskill-nod.cfp"]);
    assert_eq!(from_memory.frames(), model.frames());
    assert_eq!(
        from_memory.skeleton().frame_poses(4),
        model.skeleton().frame_poses(4)
    );
    // Without a name, at the root of the filesystem.
    fs.forget();
    let err = failure(skeleton.with_skills(&fs.files["anims/nod.cmx"], &through(&fs)));
    assert_eq!(err.0, ErrorCode::NotFound);
    assert_eq!(fs.asked(), ["xskill-nod.cfp"]);
}

#[test]
fn skill_files_add_up_and_loop_by_name() {
    let mut fs = nod_fs();
    fs.add(
        "anims/shake-loop.cmx",
        nod("shake-loop", "xskill-shake", "chest"),
    );
    fs.add("anims/xskill-shake.cfp", nod_cfp());
    let skeleton = tiny_skeleton();
    let once = skeleton
        .with_skills_file("anims/nod.cmx", &through(&fs))
        .unwrap();
    let twice = once
        .with_skills_file("anims/shake-loop.cmx", &through(&fs))
        .unwrap();
    assert_eq!(twice.frames().len(), 9);
    let names: Vec<String> = twice
        .animations()
        .iter()
        .map(|a| a.name.to_string())
        .collect();
    assert_eq!(names, ["nod", "shake-loop"]);
    let shake = &twice.animations()[1];
    assert_eq!((shake.first_frame, shake.frame_count), (5, 4));
    assert!(shake.looping);
    // Bones are matched ignoring case, as the sampler matches them: the same poses as `nod`.
    for f in 0..4 {
        assert_eq!(
            twice.skeleton().frame_poses(5 + f),
            twice.skeleton().frame_poses(1 + f)
        );
    }
    // The input is unchanged.
    assert_eq!(once.frames().len(), 5);
}

#[test]
fn bound_meshes_are_kept_and_skin_as_when_bound_after() {
    let fs = nod_fs();
    let skeleton = tiny_skeleton();
    let bound = Model::bind(&head_mesh(), &skeleton).unwrap();
    let before = bound
        .with_skills_file("anims/nod.cmx", &through(&fs))
        .unwrap();
    let animated = skeleton
        .with_skills_file("anims/nod.cmx", &through(&fs))
        .unwrap();
    let after = Model::bind(&head_mesh(), &animated).unwrap();
    assert_eq!(before.meshes().len(), 1);
    assert_eq!(before.format(), Format::SimsSkn);
    assert_eq!(before.frames().len(), 5);
    let head = before.find_bone("HEAD").unwrap() as usize;
    for seconds in [0.0, 0.03, 0.05, 0.09, 0.2] {
        let pose = scene_pose(&before, 0, seconds);
        assert_eq!(pose, scene_pose(&after, 0, seconds));
        let points = skin(&before, 0, &pose);
        assert_eq!(points, skin(&after, 0, &pose));
        // Vertex 1 is (1, 0, 0) in HEAD's space.
        let expected = pose[head].transform_point([1.0, 0.0, 0.0]);
        for c in 0..3 {
            assert!((points[1][c] - expected[c]).abs() < 1e-6, "{points:?}");
        }
    }
    // Frame 0 still skins the bind mesh.
    let rest = frame_pose(&before, 0);
    assert_eq!(
        skin(&before, 0, &rest),
        skin(&bound, 0, &frame_pose(&bound, 0))
    );
}

#[test]
fn a_cfp_name_pointing_outside_is_refused_unread() {
    let skeleton = tiny_skeleton();
    for animation in [
        "../../x",
        "/etc/passwd",
        "sub/../../x",
        "C:/x",
        "a\\..\\b",
        "",
    ] {
        let mut fs = nod_fs();
        fs.add("anims/evil.cmx", nod("evil", animation, "CHEST"));
        let (code, message) = failure(skeleton.with_skills_file("anims/evil.cmx", &through(&fs)));
        assert_eq!(code, ErrorCode::InvalidArgument, "{animation:?}: {message}");
        assert!(
            message.starts_with("evil.cmx: skill evil: animation name"),
            "{message}"
        );
        assert_eq!(fs.asked(), ["anims/evil.cmx"], "{animation:?}");
    }
    // A hostile skill after a good one: nothing is read past the file itself.
    let mut fs = nod_fs();
    let two = nod("nod", "xskill-nod", "CHEST").replacen("\n1\nnod\n", "\n2\nnod\n", 1)
        + &nod("evil", "../x", "CHEST")
            .lines()
            .skip(5)
            .map(|l| format!("{l}\n"))
            .collect::<String>();
    fs.add("anims/two.cmx", two);
    let (code, message) = failure(skeleton.with_skills_file("anims/two.cmx", &through(&fs)));
    assert_eq!(code, ErrorCode::InvalidArgument, "{message}");
    assert_eq!(fs.asked(), ["anims/two.cmx"]);
    // A name with a directory inside is followed.
    let mut fs = nod_fs();
    fs.add("anims/deep.cmx", nod("deep", "cfp/xskill-deep", "CHEST"));
    fs.add("anims/cfp/xskill-deep.cfp", nod_cfp());
    let model = skeleton
        .with_skills_file("anims/deep.cmx", &through(&fs))
        .unwrap();
    assert_eq!(model.frames().len(), 5);
}

#[test]
fn a_missing_cfp_is_not_found_naming_it() {
    let mut fs = nod_fs();
    fs.files.remove("anims/xskill-nod.cfp");
    let (code, message) = failure(tiny_skeleton().with_skills_file("anims/nod.cmx", &through(&fs)));
    assert_eq!(code, ErrorCode::NotFound);
    assert_eq!(
        message,
        "nod.cmx: skill nod: its animation file anims/xskill-nod.cfp does not exist"
    );
    // The skill file itself missing.
    let (code, message) =
        failure(tiny_skeleton().with_skills_file("anims/none.cmx", &through(&fs)));
    assert_eq!(code, ErrorCode::NotFound, "{message}");
    assert!(message.contains("anims/none.cmx"), "{message}");
}

#[test]
fn a_broken_cfp_is_named_with_its_offset() {
    let mut fs = nod_fs();
    let mut bytes = nod_cfp();
    bytes.truncate(bytes.len() - 2);
    fs.add("anims/xskill-nod.cfp", bytes);
    let e = tiny_skeleton()
        .with_skills_file("anims/nod.cmx", &through(&fs))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Truncated);
    assert!(
        e.to_string().starts_with("xskill-nod.cfp: skill nod: "),
        "{e}"
    );
    assert!(e.offset().is_some(), "{e}");
}

#[test]
fn what_cannot_take_skills_is_refused() {
    let fs = nod_fs();
    let skill_file = &fs.files["anims/nod.cmx"];
    // Meshes waiting for a skeleton, and a model without bones (a skill file loaded as a model).
    for model in [
        head_mesh(),
        Model::load(
            skill_file,
            &LoadOptions {
                format: Format::SimsCmx,
                ..LoadOptions::default()
            },
        )
        .unwrap(),
    ] {
        let (code, message) = failure(model.with_skills_file("anims/nod.cmx", &through(&fs)));
        assert_eq!(code, ErrorCode::Mismatch, "{message}");
        assert!(
            message.contains("no skeleton to add skills to"),
            "{message}"
        );
    }
    // A skeleton none of whose bones a skill moves.
    let mut fs2 = nod_fs();
    fs2.add(
        "anims/other.cmx",
        nod("other", "xskill-nod", "TAIL").replace("HEAD", "EAR"),
    );
    let (code, message) =
        failure(tiny_skeleton().with_skills_file("anims/other.cmx", &through(&fs2)));
    assert_eq!(code, ErrorCode::Mismatch, "{message}");
    // A file without skills.
    let mut fs3 = MemoryFs::default();
    fs3.add("anims/skeleton.cmx", TINY_SKELETON);
    let (code, message) =
        failure(tiny_skeleton().with_skills_file("anims/skeleton.cmx", &through(&fs3)));
    assert_eq!(code, ErrorCode::InvalidArgument);
    assert_eq!(
        message,
        "skeleton.cmx: the file holds no skills (1 skeletons, 0 suits)"
    );
    // From memory without a filesystem to read CFPs from.
    let (code, message) = failure(tiny_skeleton().with_skills(skill_file, &LoadOptions::default()));
    assert_eq!(code, ErrorCode::InvalidArgument, "{message}");
    // A format that holds no skills.
    let options = LoadOptions {
        format: Format::Dpm,
        ..through(&fs)
    };
    let (code, _) = failure(tiny_skeleton().with_skills_file("anims/nod.cmx", &options));
    assert_eq!(code, ErrorCode::InvalidArgument);
    // Too little memory for the frames.
    let options = LoadOptions {
        max_bytes: tiny_skeleton().heap_bytes() as u64 + 100,
        ..through(&fs)
    };
    let (code, message) = failure(tiny_skeleton().with_skills_file("anims/nod.cmx", &options));
    assert_eq!(code, ErrorCode::Limit, "{message}");
}

#[test]
fn skipped_motions_and_trailing_text_are_warnings_strict_refuses_the_text() {
    let mut fs = nod_fs();
    // CHEST's motion names a bone the skeleton lacks; HEAD still plays.
    fs.add(
        "anims/tail.cmx",
        nod("wag", "xskill-nod", "TAIL") + "junk\n",
    );
    let model = tiny_skeleton()
        .with_skills_file("anims/tail.cmx", &through(&fs))
        .unwrap();
    let warnings: Vec<String> = model.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("tail.cmx: ") && warnings[0].contains("text after the last skill")
    );
    assert_eq!(
        warnings[1],
        "tail.cmx: skill wag: motions for bones the skeleton lacks were skipped: TAIL"
    );
    assert_eq!(model.animations()[0].frame_count, 4);
    let strict = LoadOptions {
        strict: true,
        ..through(&fs)
    };
    let (code, message) = failure(tiny_skeleton().with_skills_file("anims/tail.cmx", &strict));
    assert_eq!(code, ErrorCode::Malformed, "{message}");
    assert!(message.contains("text after the last skill"), "{message}");
}

#[test]
fn the_os_filesystem_reads_cfps_inside_the_base_directory() {
    let dir = std::env::temp_dir().join(format!("ossa-skills-{}", std::process::id()));
    let anims = dir.join("anims");
    std::fs::create_dir_all(&anims).unwrap();
    std::fs::write(anims.join("nod.cmx"), nod("nod", "xskill-nod", "CHEST")).unwrap();
    std::fs::write(anims.join("up.cmx"), nod("up", "../xskill-nod", "CHEST")).unwrap();
    std::fs::write(anims.join("xskill-nod.cfp"), nod_cfp()).unwrap();
    std::fs::write(dir.join("xskill-nod.cfp"), nod_cfp()).unwrap();
    let skeleton = tiny_skeleton();

    let model = skeleton
        .with_skills_file(anims.join("nod.cmx"), &LoadOptions::default())
        .unwrap();
    assert_eq!(model.frames().len(), 5);
    // Inside a wider base directory, the file's directory relative to it.
    let wide = LoadOptions {
        base_dir: Some(dir.clone()),
        ..LoadOptions::default()
    };
    assert_eq!(
        skeleton
            .with_skills_file(anims.join("nod.cmx"), &wide)
            .unwrap()
            .frames()
            .len(),
        5
    );
    // `..` is refused even where the file it names exists and the base directory holds it.
    let (code, _) = failure(skeleton.with_skills_file(anims.join("up.cmx"), &wide));
    assert_eq!(code, ErrorCode::InvalidArgument);
    // A file outside the base directory.
    let narrow = LoadOptions {
        base_dir: Some(dir.join("elsewhere")),
        ..LoadOptions::default()
    };
    let (code, _) = failure(skeleton.with_skills_file(anims.join("nod.cmx"), &narrow));
    assert_eq!(code, ErrorCode::InvalidArgument);
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------------------------------------
// The corpus, under the game's names
// ---------------------------------------------------------------------------------------------

fn sims_dir(test: &str) -> Option<PathBuf> {
    corpus_subdir("sims", test)
}

/// The corpus files a character needs, without the corpus's prefixes, under `characters/`;
/// `characters/a2o-walking-loop.cmx` is `ross-walking-loop.cmx` without its first skill
/// (`a2o-walking-start`, whose CFP the corpus lacks).
fn game_fs(dir: &Path) -> MemoryFs {
    let mut fs = MemoryFs::default();
    for (corpus, game) in [
        ("so_adult-skeleton.cmx", "adult-skeleton.cmx"),
        (
            "so_xskin-b001mafit_01-PELVIS-BODY.skn",
            "xskin-b001mafit_01-PELVIS-BODY.skn",
        ),
        ("so_adult-idle1.cmx", "adult-idle1.cmx"),
        ("so_ross-walking-loop.cmx", "ross-walking-loop.cmx"),
        ("olt_ross-walking-loop.cmx.bcf", "ross-walking-loop.cmx.bcf"),
        ("so_xskill-A2O-idle1.cfp", "xskill-A2O-idle1.cfp"),
        (
            "so_xskill-A2O-walking-loop.cfp",
            "xskill-A2O-walking-loop.cfp",
        ),
        (
            "so_xskill-A2O-walking-fast-loop.cfp",
            "xskill-A2O-walking-fast-loop.cfp",
        ),
    ] {
        let bytes = std::fs::read(dir.join(corpus)).unwrap_or_else(|e| panic!("{corpus}: {e}"));
        fs.add(&format!("characters/{game}"), bytes);
    }
    let text = String::from_utf8_lossy(&fs.files["characters/ross-walking-loop.cmx"]).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == "a2o-walking-fast-loop")
        .unwrap();
    let mut trimmed = String::from(
        "// Character File. Copyright 1997, Maxis Inc.\r\nversion 300\r\n0\r\n0\r\n2\r\n",
    );
    for l in &lines[start..] {
        trimmed.push_str(l);
        trimmed.push_str("\r\n");
    }
    fs.add("characters/a2o-walking-loop.cmx", trimmed);
    fs
}

#[test]
fn corpus_skills_play_on_the_bound_adult_body() {
    let Some(dir) = sims_dir("corpus_skills_play_on_the_bound_adult_body") else {
        return;
    };
    let fs = game_fs(&dir);
    let skeleton = Model::load_file("characters/adult-skeleton.cmx", &through(&fs)).unwrap();
    let skin = Model::load_file(
        "characters/xskin-b001mafit_01-PELVIS-BODY.skn",
        &through(&fs),
    )
    .unwrap();
    let body = Model::bind(&skin, &skeleton).unwrap();
    fs.forget();
    let idle = body
        .with_skills_file("characters/adult-idle1.cmx", &through(&fs))
        .unwrap();
    assert_eq!(
        fs.asked(),
        [
            "characters/adult-idle1.cmx",
            "characters/xskill-A2O-idle1.cfp"
        ]
    );
    fs.forget();
    let walk_file = fs.files["characters/a2o-walking-loop.cmx"].clone();
    let model = idle
        .with_skills(&walk_file, &named(&fs, "characters/a2o-walking-loop.cmx"))
        .unwrap();
    assert_eq!(
        fs.asked(),
        [
            "characters/xskill-A2O-walking-fast-loop.cfp",
            "characters/xskill-A2O-walking-loop.cfp"
        ]
    );
    assert!(model.warnings().is_empty(), "{:?}", model.warnings());

    // Scenes as the files declare them: frames, and a rate that plays them in the duration.
    let idle_file = cmx::parse(&fs.files["characters/adult-idle1.cmx"]).unwrap();
    let walk = cmx::parse(&walk_file).unwrap();
    let declared: Vec<&cmx::Skill> = idle_file.skills.iter().chain(&walk.skills).collect();
    assert_eq!(model.animations().len(), 3);
    let mut first = 1;
    for (scene, skill) in model.animations().iter().zip(&declared) {
        let frames = skill.motions[0].frame_count;
        assert_eq!(scene.name, skill.name);
        assert_eq!((scene.first_frame, scene.frame_count), (first, frames));
        let ms = frames as f32 * 1000.0 / scene.fps;
        assert!((ms - skill.duration).abs() < 0.5, "{}: {ms} ms", skill.name);
        assert_eq!(scene.looping, skill.name.to_string().contains("loop"));
        eprintln!(
            "{}: frames {}..{}, {:.3} fps, {} ms, looping {}",
            scene.name,
            scene.first_frame,
            scene.first_frame + scene.frame_count,
            scene.fps,
            skill.duration,
            scene.looping
        );
        first += frames;
    }
    assert_eq!(model.frames().len() as u32, first);
    assert_eq!((first, model.meshes().len()), (1 + 60 + 20 + 38, 1));
    assert_eq!(
        model.skeleton().frame_poses(0),
        skeleton.skeleton().frame_poses(0)
    );

    // Each skill's frames are what cmx::with_skill samples on the skeleton alone.
    let cfp = &fs.files["characters/xskill-A2O-walking-loop.cfp"];
    let alone = cmx::with_skill(&skeleton, &walk, 1, cfp).unwrap();
    let scene = &model.animations()[2];
    for f in 0..scene.frame_count as usize {
        assert_eq!(
            model.skeleton().frame_poses(scene.first_frame as usize + f),
            alone.skeleton().frame_poses(1 + f)
        );
    }

    // The body walks on the floor with its head on top.
    for scene in 0..3 {
        let mut lows = (f32::INFINITY, f32::NEG_INFINITY);
        let mut top = f32::INFINITY;
        for seconds in [0.0, 0.1, 0.37, 0.5, 0.81, 1.0, 1.9] {
            let pose = scene_pose(&model, scene, seconds);
            let (low, high) = y_range(&self::skin(&model, 0, &pose));
            assert!(
                low.abs() < 0.1,
                "scene {scene} at {seconds} s: feet at {low}"
            );
            assert!(high > 4.5, "scene {scene} at {seconds} s: top at {high}");
            lows = (lows.0.min(low), lows.1.max(low));
            top = top.min(high);
        }
        eprintln!(
            "{}: skinned body's lowest point y {:.3}..{:.3}, highest >= {top:.3}",
            model.animations()[scene].name,
            lows.0,
            lows.1
        );
    }
}

#[test]
fn corpus_skill_files_without_their_cfps_are_not_found() {
    let Some(dir) = sims_dir("corpus_skill_files_without_their_cfps_are_not_found") else {
        return;
    };
    let fs = game_fs(&dir);
    let skeleton = Model::load_file("characters/adult-skeleton.cmx", &through(&fs)).unwrap();
    for file in [
        "characters/ross-walking-loop.cmx",
        "characters/ross-walking-loop.cmx.bcf",
    ] {
        fs.forget();
        let (code, message) = failure(skeleton.with_skills_file(file, &through(&fs)));
        assert_eq!(code, ErrorCode::NotFound, "{message}");
        assert!(
            message.contains("characters/xskill-A2O-walking-start.cfp"),
            "{message}"
        );
        assert_eq!(
            fs.asked(),
            [file, "characters/xskill-A2O-walking-start.cfp"]
        );
    }
}

#[test]
fn every_truncation_of_the_skill_file_and_its_cfp_fails_cleanly() {
    let skeleton = tiny_skeleton();
    let full = nod_fs();
    let text = full.files["anims/nod.cmx"].clone();
    let cfp = nod_cfp();
    for n in 0..text.len() {
        let mut fs = nod_fs();
        fs.add("anims/nod.cmx", &text[..n]);
        // Any outcome but a panic: a prefix may still be a whole file (a shorter last line).
        if let Ok(model) = skeleton.with_skills_file("anims/nod.cmx", &through(&fs)) {
            assert!(model.frames().len() <= 5, "{n} bytes");
        }
    }
    for n in 0..cfp.len() {
        let mut fs = nod_fs();
        fs.add("anims/xskill-nod.cfp", &cfp[..n]);
        let e = skeleton
            .with_skills_file("anims/nod.cmx", &through(&fs))
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Truncated, "{n} bytes: {e}");
        assert!(e.to_string().starts_with("xskill-nod.cfp: "), "{e}");
    }
}

// ---------------------------------------------------------------------------------------------
// Events (the motions' time properties) and travel
// ---------------------------------------------------------------------------------------------

/// A skill file with one skill, `step`, that moves the character 1.5 units a play: HEAD turns
/// and CHEST moves as in the nod, and the motions carry time properties. HEAD's are out of time
/// order in the file; TAIL, a bone the tiny skeleton lacks, has no frames but an event.
const STEP: &str = "// Character File. Copyright 1997, Maxis Inc.
version 300
0
0
1
step
xskill-step
133
1.5
1
2
4
3
HEAD
4
133
0
1
-1
0
0
1
2
100
1
footstep
left
33
2
xevt
101
sound
clap
CHEST
2
133
1
0
0
-1
0
1
1
33
1
anchor
1
TAIL
0
133
0
0
-1
-1
0
1
1
66
1
wag
2
";

/// The events `step` gives on the tiny skeleton (ROOT 0, CHEST 1, HEAD 2): by time, and in file
/// order at one time; TAIL's on no bone.
fn step_events(animation: u32) -> Vec<ossa::model::AnimationEvent> {
    let event = |time: f32, bone: i32, key: &str, value: &str| ossa::model::AnimationEvent {
        animation,
        time,
        bone,
        key: key.into(),
        value: value.into(),
    };
    vec![
        event(0.033, 2, "xevt", "101"),
        event(0.033, 2, "sound", "clap"),
        event(0.033, 1, "anchor", "1"),
        event(0.066, -1, "wag", "2"),
        event(0.1, 2, "footstep", "left"),
    ]
}

fn step_fs() -> MemoryFs {
    let mut fs = nod_fs();
    fs.add("anims/step.cmx", STEP);
    fs.add("anims/xskill-step.cfp", nod_cfp());
    let binary = cmx::write_character(&cmx::parse(STEP.as_bytes()).unwrap(), true).unwrap();
    fs.add("anims/step.cmx.bcf", binary);
    fs
}

#[test]
fn a_skills_time_properties_become_its_scenes_events() {
    let skeleton = tiny_skeleton();
    assert_eq!(
        ["ROOT", "CHEST", "HEAD"].map(|b| skeleton.find_bone(b)),
        [Some(0), Some(1), Some(2)]
    );
    let fs = step_fs();
    for file in ["anims/step.cmx", "anims/step.cmx.bcf"] {
        let model = skeleton.with_skills_file(file, &through(&fs)).unwrap();
        assert_eq!(model.animation_events(0), step_events(0), "{file}");
        assert_eq!(model.events(), step_events(0), "{file}");
        let scene = &model.animations()[0];
        assert_eq!((scene.distance, scene.moving), (1.5, true), "{file}");
        // TAIL has no frames to skip, so nothing is said of it.
        assert!(model.warnings().is_empty(), "{:?}", model.warnings());
        assert!(model.animation_events(1).is_empty());
        assert!(model.animation_events(u32::MAX).is_empty());

        // A second file's scene comes after, with its own events (the nod has none), and the
        // first scene's are unchanged.
        let more = model
            .with_skills_file("anims/nod.cmx", &through(&fs))
            .unwrap();
        assert_eq!(more.animations().len(), 2);
        assert_eq!(more.animation_events(0), step_events(0));
        assert!(more.animation_events(1).is_empty());
        let (nod, step) = (&more.animations()[1], &more.animations()[0]);
        assert_eq!((nod.distance, nod.moving), (0.0, false));
        assert_eq!((step.distance, step.moving), (1.5, true));
        // Skills first, then the meshes: the events are the skeleton's, shared by the binding.
        let bound = Model::bind(&head_mesh(), &more).unwrap();
        assert_eq!(bound.animation_events(0), step_events(0));
        // Events go through the model's parts; given out of time order, they are kept by time
        // (and in the given order at one time).
        let mut parts = more.to_parts();
        parts.events.rotate_right(1);
        assert_eq!(parts.events[0].key.to_string(), "footstep");
        let rebuilt = Model::from_parts(parts).unwrap();
        assert_eq!(rebuilt.events(), more.events());
    }

    // One skill of a character file at a time, as cmx::with_skill plays it.
    let file = cmx::parse(STEP.as_bytes()).unwrap();
    let one = cmx::with_skill(&skeleton, &file, 0, &nod_cfp()).unwrap();
    assert_eq!(one.animation_events(0), step_events(0));

    // An event for a scene that does not exist, or a bone out of range, is refused.
    let model = skeleton
        .with_skills_file("anims/step.cmx", &through(&fs))
        .unwrap();
    for (animation, bone) in [(1, 0), (0, 3), (0, -2)] {
        let mut parts = model.to_parts();
        parts.events[0].animation = animation;
        parts.events[0].bone = bone;
        let e = Model::from_parts(parts).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
        assert!(e.to_string().contains("event 0 (xevt)"), "{e}");
    }
}

#[test]
fn corpus_walks_say_where_their_feet_land_and_how_far_they_go() {
    let Some(dir) = sims_dir("corpus_walks_say_where_their_feet_land_and_how_far_they_go") else {
        return;
    };
    let fs = game_fs(&dir);
    let skeleton = Model::load_file("characters/adult-skeleton.cmx", &through(&fs)).unwrap();
    let model = skeleton
        .with_skills_file("characters/a2o-walking-loop.cmx", &through(&fs))
        .unwrap();
    let names: Vec<String> = model
        .animations()
        .iter()
        .map(|a| a.name.to_string())
        .collect();
    assert_eq!(names, ["a2o-walking-fast-loop", "a2o-walking-loop"]);
    let travel: Vec<(f32, bool)> = model
        .animations()
        .iter()
        .map(|a| (a.distance, a.moving))
        .collect();
    assert_eq!(travel, [(4.11019, true), (4.06978, true)]);

    // a2o-walking-loop's time properties, as the file lists them (ms, bone, key, value).
    let root = model.find_bone("ROOT").map(|b| b as i32);
    let r_toe = model.find_bone("R_TOE02").map(|b| b as i32);
    let l_toe = model.find_bone("L_TOE02").map(|b| b as i32);
    let listed = [
        (0, root, "interruptable", "0"),
        (166, root, "footstep", "2"),
        (466, root, "interruptable", "2"),
        (600, root, "interruptable", "0"),
        (800, root, "footstep", "1"),
        (1100, root, "interruptable", "1"),
        (1233, root, "interruptable", "0"),
        (366, r_toe, "anchor", "2"),
        (1033, r_toe, "anchor", "0"),
        (0, l_toe, "anchor", "1"),
        (400, l_toe, "anchor", "0"),
        (1000, l_toe, "anchor", "1"),
    ];
    let mut expected: Vec<(u32, i32, String, String)> = listed
        .iter()
        .map(|&(ms, bone, key, value)| (ms, bone.unwrap(), key.to_owned(), value.to_owned()))
        .collect();
    // By time; at one time in the file's order (a stable sort keeps it).
    expected.sort_by_key(|e| e.0);
    let got: Vec<(u32, i32, String, String)> = model
        .animation_events(1)
        .iter()
        .map(|e| {
            assert!(
                (e.time * 1000.0 - (e.time * 1000.0).round()).abs() < 1e-3,
                "{e:?}"
            );
            (
                (e.time * 1000.0).round() as u32,
                e.bone,
                e.key.to_string(),
                e.value.to_string(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    assert_eq!(model.animation_events(0).len(), 11);
    // Every event lies inside its scene's play.
    for (a, scene) in model.animations().iter().enumerate() {
        let length = scene.frame_count as f32 / scene.fps;
        for e in model.animation_events(a as u32) {
            assert!((0.0..=length).contains(&e.time), "{e:?} in {length} s");
        }
    }
}
