//! `ossa convert`, run as the built binary: output formats from extensions and `--to`, glTF
//! options, binding with `--skeleton`, Sims suits and skills, and many inputs into a directory.
//! Models built in code and hand-made Sims files need no corpus; the corpus tests say
//! "skipped: corpus absent" and return when it is not there.

// The binary needs the `cli` feature; the glTF checks read JSON with serde_json.
#![cfg(all(feature = "cli", feature = "gltf"))]

mod cli_support;
mod corpus;

mod sims_fixtures;

use std::path::Path;

use cli_support::{TempDir, corpus, ossa, ossa_peak, tube_dpm};
use ossa::{LoadOptions, Model};
use serde_json::Value;
use sims_fixtures::{HEAD_SKN, SKELETON_AND_SUIT};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The JSON chunk of a `.glb`, after checking its header: magic, version 2, the file's length.
fn glb_json(bytes: &[u8]) -> Value {
    assert_eq!(&bytes[..4], b"glTF");
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(word(4), 2, "glTF version");
    assert_eq!(word(8), bytes.len(), "glTF length");
    let json_len = word(12);
    assert_eq!(&bytes[16..20], b"JSON");
    serde_json::from_slice(&bytes[20..20 + json_len]).unwrap()
}

fn glb_file(path: &Path) -> Value {
    glb_json(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// The `name`s of a glTF array (`meshes`, `nodes`, `animations`).
fn names(json: &Value, array: &str) -> Vec<String> {
    json[array]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| v["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The names of the first skin's joints.
fn joint_names(json: &Value) -> Vec<String> {
    let nodes = names(json, "nodes");
    json["skins"][0]["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| nodes[j.as_u64().unwrap() as usize].clone())
        .collect()
}

/// Whether any primitive has the attribute `name`.
fn has_attribute(json: &Value, name: &str) -> bool {
    json["meshes"].as_array().unwrap().iter().any(|m| {
        m["primitives"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["attributes"].get(name).is_some())
    })
}

/// The `min` and `max` of the first mesh's POSITION accessor.
/// The bounds of every mesh's positions, from their accessors.
fn position_bounds(json: &Value) -> ([f64; 3], [f64; 3]) {
    let mut bounds = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for mesh in json["meshes"].as_array().unwrap() {
        let index = mesh["primitives"][0]["attributes"]["POSITION"]
            .as_u64()
            .unwrap() as usize;
        let accessor = &json["accessors"][index];
        let v3 = |key: &str| -> [f64; 3] {
            let a = accessor[key].as_array().unwrap();
            [0, 1, 2].map(|i| a[i].as_f64().unwrap())
        };
        let (lo, hi) = (v3("min"), v3("max"));
        for k in 0..3 {
            bounds.0[k] = bounds.0[k].min(lo[k]);
            bounds.1[k] = bounds.1[k].max(hi[k]);
        }
    }
    bounds
}

fn bone_names(model: &Model) -> Vec<String> {
    model.bones().iter().map(|b| b.name.to_string()).collect()
}

/// Copies corpus files into `dir` under the game's own names (the corpus's `so_` prefix off).
fn copy_sims(sims: &Path, dir: &TempDir, files: &[&str]) {
    for file in files {
        let game = file.strip_prefix("so_").unwrap_or(file);
        dir.write(game, std::fs::read(sims.join(file)).unwrap());
    }
}

/// The error lines of a run, without its warnings (a generated rig's texture is never there).
fn errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| !l.starts_with("ossa: warning: "))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Formats and options
// ---------------------------------------------------------------------------------------------

#[test]
fn corpus_dpm_converts_to_glb_and_back_to_dpm() {
    let Some(dpm) = corpus("dpm") else {
        return;
    };
    let dir = TempDir::new("cli", "dpm-roundtrip");
    let input = dpm.join("xon_spiderbot_top.dpm");
    let source = Model::load_file(&input, &LoadOptions::default()).unwrap();
    let input = input.to_str().unwrap();

    let run = ossa(&dir, &["convert", input, "-o", "top.glb"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The exactness line, named by the output.
    assert!(run.stdout.starts_with("top.glb: exact: "), "{}", run.stdout);
    let json = glb_file(&dir.path("top.glb"));
    assert_eq!(joint_names(&json), bone_names(&source));
    assert_eq!(names(&json, "meshes").len(), 3);
    assert_eq!(json["asset"]["version"], "2.0");

    let run = ossa(&dir, &["convert", input, "-o", "top.dpm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("top.dpm: DPM, "), "{}", run.stdout);
    let back = Model::load_file(dir.path("top.dpm"), &LoadOptions::default()).unwrap();
    // Optimised as DPM asks: the bones no vertex uses go, the `tag_` bones (attachment points
    // the game finds by name) stay.
    let kept = bone_names(&back);
    assert_eq!(kept.len(), 22, "{kept:?}");
    for gone in [
        "box40", "object01", "object26", "object04", "object59", "box41",
    ] {
        assert!(!kept.iter().any(|b| b == gone), "{gone} kept: {kept:?}");
    }
    for tag in [
        "tag_hardpoint01",
        "tag_hardpoint02",
        "tag_fire",
        "tag_hud",
        "tag_viewport",
    ] {
        assert!(kept.iter().any(|b| b == tag), "{tag} gone: {kept:?}");
    }
    assert_eq!(back.info().vertex_count, source.info().vertex_count);
    assert_eq!(back.info().vertex_count, 1517);
    assert_eq!(back.frames().len(), source.frames().len());

    let run = ossa(&dir, &["convert", input, "-o", "kept.dpm", "--keep-order"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let kept = Model::load_file(dir.path("kept.dpm"), &LoadOptions::default()).unwrap();
    assert_eq!(bone_names(&kept), bone_names(&source));
}

#[test]
fn to_names_the_format_whatever_the_output_is_called() {
    let dir = TempDir::new("cli", "to");
    dir.write("tube.dpm", tube_dpm(3));
    let run = ossa(
        &dir,
        &["convert", "tube.dpm", "-o", "tube.out", "--to", "glb"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(joint_names(&glb_file(&dir.path("tube.out"))).len(), 3);

    let run = ossa(&dir, &["convert", "tube.dpm", "--to", "DPM", "-o", "copy"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let copy = Model::load(
        &std::fs::read(dir.path("copy")).unwrap(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(bone_names(&copy), ["bone0", "bone1", "bone2"]);

    // `.gltf` is JSON with everything embedded.
    let run = ossa(&dir, &["convert", "tube.dpm", "-o", "tube.gltf"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.path("tube.gltf")).unwrap()).unwrap();
    assert!(
        json["buffers"][0]["uri"]
            .as_str()
            .unwrap()
            .starts_with("data:"),
        "{}",
        json["buffers"]
    );

    // An existing directory as the output takes STEM.EXT.
    std::fs::create_dir(dir.path("into")).unwrap();
    let run = ossa(&dir, &["convert", "tube.dpm", "-o", "into", "--to", "skm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(dir.listing("into"), ["tube.skm"]);
}

#[test]
fn usage_errors_exit_2_and_say_what_is_wrong() {
    let dir = TempDir::new("cli", "usage");
    dir.write("tube.dpm", tube_dpm(2));
    dir.write("other.dpm", tube_dpm(2));
    for (args, says) in [
        (&["convert", "tube.dpm"][..], "convert needs -o OUTPUT"),
        (&["convert", "-o", "x.glb"], "convert needs an input file"),
        (
            &["convert", "tube.dpm", "-o", "x.png"],
            "cannot tell the output format from x.png's extension: give --to NAME",
        ),
        (
            &["convert", "tube.dpm", "-o", "x", "--to", "png"],
            "unknown output format png",
        ),
        (
            &["convert", "tube.dpm", "other.dpm", "-o", "out"],
            "writing into the directory out needs --to NAME",
        ),
        (
            &[
                "convert",
                "tube.dpm",
                "other.dpm",
                "-o",
                "out.glb",
                "--to",
                "glb",
            ],
            "several inputs are written into a directory, and out.glb names a file: give -o DIR",
        ),
        (
            &["convert", "tube.dpm", "-o", "x.dpm", "--scale", "2"],
            "--scale is for glTF output, not DPM",
        ),
        (
            &["convert", "tube.dpm", "-o", "x.glb", "--scale", "-1"],
            "--scale needs a number above 0, not -1",
        ),
        (
            &[
                "convert",
                "tube.dpm",
                "-o",
                "x.glb",
                "--max-influences",
                "many",
            ],
            "--max-influences needs a count (0 = all), not many",
        ),
        (
            &[
                "convert",
                "tube.dpm",
                "other.dpm",
                "-o",
                "out",
                "--to",
                "glb",
                "--suit",
                "s",
            ],
            "--suit dresses one character: give one input",
        ),
        (
            &["convert", "tube.dpm", "-o", "x.glb", "--skills"],
            "--skills needs a file",
        ),
        (
            &["info", "tube.dpm", "--scale", "2"],
            "unknown option --scale",
        ),
    ] {
        let run = ossa(&dir, args);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(
            run.stderr.starts_with(&format!("ossa: {says}")),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("ossa convert INPUT -o OUTPUT"),
            "{args:?}"
        );
    }
    // Nothing was written.
    assert_eq!(dir.listing(""), ["other.dpm", "tube.dpm"]);
}

#[test]
fn errors_name_the_input_and_the_code() {
    let dir = TempDir::new("cli", "errors");
    let run = ossa(&dir, &["convert", "missing.dpm", "-o", "x.glb"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("ossa: missing.dpm: OSSA_ERR_NOT_FOUND: "),
        "{}",
        run.stderr
    );
    // The file's name is not said twice: the line names it once, then says what is wrong.
    dir.write("short.dpm", b"DARKPLACESMODEL\0short");
    let run = ossa(&dir, &["convert", "short.dpm", "-o", "x.glb"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr.trim_end(),
        "ossa: short.dpm: OSSA_ERR_TRUNCATED: header: needs 80 bytes but the data ends at byte \
         0x15 at byte 0x0"
    );
    assert!(!dir.path("x.glb").exists());
}

#[test]
fn corpus_max_influences_4_leaves_no_second_joint_set() {
    let Some(dpm) = corpus("dpm") else {
        return;
    };
    let dir = TempDir::new("cli", "influences");
    let zombie = dpm.join("xon_zombie.dpm");
    assert_eq!(
        Model::load_file(&zombie, &LoadOptions::default())
            .unwrap()
            .info()
            .max_influences,
        8
    );
    let zombie = zombie.to_str().unwrap();
    let run = ossa(&dir, &["convert", zombie, "-o", "all.glb"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let all = glb_file(&dir.path("all.glb"));
    assert!(has_attribute(&all, "JOINTS_1"));
    assert!(has_attribute(&all, "WEIGHTS_1"));
    assert!(
        !run.stdout.contains("kept only their strongest"),
        "{}",
        run.stdout
    );

    let run = ossa(
        &dir,
        &["convert", zombie, "-o", "four.glb", "--max-influences", "4"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let four = glb_file(&dir.path("four.glb"));
    assert!(has_attribute(&four, "JOINTS_0"));
    assert!(!has_attribute(&four, "JOINTS_1"));
    assert!(!has_attribute(&four, "WEIGHTS_1"));
    // The line says what the cap cost.
    assert!(
        run.stdout.starts_with("four.glb: ") && run.stdout.contains("(up to 4 dropped)"),
        "{}",
        run.stdout
    );
}

#[test]
fn corpus_scale_2_doubles_positions() {
    let Some(dpm) = corpus("dpm") else {
        return;
    };
    let dir = TempDir::new("cli", "scale");
    let pad = dpm.join("xon_pad.dpm");
    let pad = pad.to_str().unwrap();
    assert_eq!(ossa(&dir, &["convert", pad, "-o", "one.glb"]).code, 0);
    assert_eq!(
        ossa(&dir, &["convert", pad, "-o", "two.glb", "--scale", "2"]).code,
        0
    );
    let (min1, max1) = position_bounds(&glb_file(&dir.path("one.glb")));
    let (min2, max2) = position_bounds(&glb_file(&dir.path("two.glb")));
    for a in 0..3 {
        assert!((max2[a] - 2.0 * max1[a]).abs() <= 1e-5 * max1[a].abs().max(1.0));
        assert!((min2[a] - 2.0 * min1[a]).abs() <= 1e-5 * min1[a].abs().max(1.0));
    }
    // A real extent, not a point.
    assert!(max1[0] - min1[0] > 1.0, "{min1:?} {max1:?}");
}

// ---------------------------------------------------------------------------------------------
// Skeletons, suits and skills
// ---------------------------------------------------------------------------------------------

#[test]
fn an_skn_asks_for_its_skeleton_and_binds_to_it() {
    let dir = TempDir::new("cli", "skeleton");
    dir.write("small.cmx", SKELETON_AND_SUIT);
    dir.write("head-mesh.skn", HEAD_SKN);
    let run = ossa(&dir, &["convert", "head-mesh.skn", "-o", "head.glb"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with(
            "ossa: head-mesh.skn: OSSA_ERR_INVALID_ARGUMENT: the meshes wait for a skeleton: \
             give --skeleton FILE"
        ),
        "{}",
        run.stderr
    );
    assert!(!dir.path("head.glb").exists());
    // A mesh format keeps the meshes as they are, skeleton or not.
    let run = ossa(&dir, &["convert", "head-mesh.skn", "-o", "head.bmf"]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let run = ossa(
        &dir,
        &[
            "convert",
            "head-mesh.skn",
            "--skeleton",
            "small.cmx",
            "-o",
            "head.glb",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = glb_file(&dir.path("head.glb"));
    assert_eq!(joint_names(&json), ["ROOT", "HEAD"]);
    assert_eq!(names(&json, "meshes"), ["head-mesh"]);
    // The triangle sits on HEAD's joint, 3 + 2 up.
    let (min, max) = position_bounds(&json);
    assert_eq!((min[1], max[1]), (5.0, 6.0));
}

#[test]
fn a_suit_finds_its_meshes_ignoring_case_in_search_directories() {
    let dir = TempDir::new("cli", "suit");
    dir.write("small.cmx", SKELETON_AND_SUIT);
    dir.write("skins/HEAD-MESH.SKN", HEAD_SKN);
    let run = ossa(
        &dir,
        &[
            "convert",
            "small.cmx",
            "--suit",
            "HEAD-ONLY",
            "-o",
            "dressed.glb",
        ],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with(
            "ossa: small.cmx: OSSA_ERR_NOT_FOUND: suit head-only skin 0 (mesh head-mesh on bone \
             HEAD): no head-mesh.skn, head-mesh.bmf or head-mesh.msh in ."
        ),
        "{}",
        run.stderr
    );
    let run = ossa(
        &dir,
        &[
            "convert",
            "small.cmx",
            "--suit",
            "HEAD-ONLY",
            "--search",
            "skins",
            "-o",
            "dressed.glb",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = glb_file(&dir.path("dressed.glb"));
    assert_eq!(names(&json, "meshes"), ["head-mesh"]);
    assert_eq!(joint_names(&json), ["ROOT", "HEAD"]);

    let run = ossa(
        &dir,
        &["convert", "small.cmx", "--suit", "cape", "-o", "x.glb"],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with(
            "ossa: small.cmx: OSSA_ERR_NOT_FOUND: no suit named cape: the file has suits \
             head-only, and none of cape.cmx, cape.cmx.bcf, cape.bcf is in ."
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn corpus_suit_dresses_the_adult_skeleton_and_skills_animate_it() {
    let Some(sims) = corpus("sims") else {
        return;
    };
    let dir = TempDir::new("cli", "sims");
    copy_sims(
        &sims,
        &dir,
        &[
            "so_adult-skeleton.cmx",
            "so_B001MAFit_01.cmx",
            "so_xskin-b001mafit_01-PELVIS-BODY.skn",
            "so_adult-idle1.cmx",
            "so_xskill-A2O-idle1.cfp",
        ],
    );
    let skeleton =
        Model::load_file(dir.path("adult-skeleton.cmx"), &LoadOptions::default()).unwrap();
    assert_eq!(skeleton.bones().len(), 29);

    // The skeleton as the input, the suit in its own file beside it (as the game keeps it).
    let run = ossa(
        &dir,
        &[
            "convert",
            "adult-skeleton.cmx",
            "--suit",
            "b001mafit_01",
            "--skills",
            "adult-idle1.cmx",
            "-o",
            "sim.glb",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("sim.glb: "), "{}", run.stdout);
    let json = glb_file(&dir.path("sim.glb"));
    assert_eq!(names(&json, "meshes"), ["xskin-b001mafit_01-PELVIS-BODY"]);
    assert_eq!(joint_names(&json), bone_names(&skeleton));
    assert_eq!(names(&json, "animations"), ["a2o-idle1"]);

    // The suit file as the input, the skeleton given; no skills, no animation.
    let run = ossa(
        &dir,
        &[
            "convert",
            "B001MAFit_01.cmx",
            "--skeleton",
            "adult-skeleton.cmx",
            "--suit",
            "b001mafit_01",
            "-o",
            "still.glb",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = glb_file(&dir.path("still.glb"));
    assert_eq!(names(&json, "meshes"), ["xskin-b001mafit_01-PELVIS-BODY"]);
    assert_eq!(joint_names(&json).len(), 29);
    assert!(names(&json, "animations").is_empty());
    // The body stands on the floor, about 5 units tall.
    let (min, max) = position_bounds(&json);
    assert!(min[1].abs() < 0.1 && max[1] > 4.5, "{min:?} {max:?}");

    // A suit file without a skeleton, and none given.
    let run = ossa(
        &dir,
        &[
            "convert",
            "B001MAFit_01.cmx",
            "--suit",
            "b001mafit_01",
            "-o",
            "x.glb",
        ],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("ossa: B001MAFit_01.cmx: OSSA_ERR_MISMATCH: ")
            && run.stderr.contains("give --skeleton FILE"),
        "{}",
        run.stderr
    );
}

#[test]
fn corpus_suit_with_two_skins_keeps_both_meshes_in_suit_order() {
    let Some(sims) = corpus("sims") else {
        return;
    };
    let dir = TempDir::new("cli", "sims-two");
    copy_sims(
        &sims,
        &dir,
        &["so_adult-skeleton.cmx", "so_C005MA_Hipster.cmx"],
    );
    std::fs::create_dir(dir.path("skins")).unwrap();
    for mesh in ["HEAD", "SPECS"] {
        let file = format!("xskin-c005ma_hipster-HEAD-{mesh}.skn");
        dir.write(
            &format!("skins/{file}"),
            std::fs::read(sims.join(format!("so_{file}"))).unwrap(),
        );
    }
    let run = ossa(
        &dir,
        &[
            "convert",
            "C005MA_Hipster.cmx",
            "--skeleton",
            "adult-skeleton.cmx",
            "--suit",
            "c005ma_hipster",
            "--search",
            "skins",
            "-o",
            "hipster.glb",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = glb_file(&dir.path("hipster.glb"));
    assert_eq!(
        names(&json, "meshes"),
        [
            "xskin-c005ma_hipster-HEAD-SPECS",
            "xskin-c005ma_hipster-HEAD-HEAD"
        ]
    );
    assert_eq!(joint_names(&json).len(), 29);
    // A head: high up on an adult, about 5 units above the floor.
    let (min, _) = position_bounds(&json);
    assert!(min[1] > 4.5, "{min:?}");
}

// ---------------------------------------------------------------------------------------------
// Many inputs
// ---------------------------------------------------------------------------------------------

/// `src/` with three tubes of 2, 3 and 4 bones, a text file and an SKP (not models to convert).
fn three_tubes(dir: &TempDir) {
    for (name, bones) in [("a", 2), ("b", 3), ("c", 4)] {
        dir.write(&format!("src/{name}.dpm"), tube_dpm(bones));
    }
    dir.write("src/notes.txt", "not a model");
    dir.write("src/c.skp", "a skeleton goes with its SKM");
}

#[test]
fn a_directory_converts_each_model_and_a_bad_one_fails_alone() {
    let dir = TempDir::new("cli", "directory");
    three_tubes(&dir);
    let run = ossa(&dir, &["convert", "src", "-o", "out", "--to", "glb"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(dir.listing("out"), ["a.glb", "b.glb", "c.glb"]);
    for (name, bones) in [("a", 2), ("b", 3), ("c", 4)] {
        let json = glb_file(&dir.path(&format!("out/{name}.glb")));
        assert_eq!(joint_names(&json).len(), bones, "{name}");
    }
    // Not a terminal: a line a file, then the count.
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", run.stdout);
    assert!(
        lines[0].starts_with("src/a.dpm -> out/a.glb: exact: "),
        "{}",
        lines[0]
    );
    assert_eq!(lines[3], "converted 3 files into out");

    std::fs::remove_dir_all(dir.path("out")).unwrap();
    dir.write("src/bad.dpm", b"DARKPLACESMODEL\0cut short");
    let run = ossa(&dir, &["convert", "src", "-o", "out", "--to", "glb"]);
    assert_eq!(run.code, 1);
    assert_eq!(dir.listing("out"), ["a.glb", "b.glb", "c.glb"]);
    let errors = errors(&run.stderr);
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    assert!(
        errors[0].starts_with("ossa: src/bad.dpm: OSSA_ERR_TRUNCATED: "),
        "{}",
        errors[0]
    );
    assert!(
        run.stdout
            .ends_with("converted 3 of 4 inputs into out; 1 failed\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn patterns_and_lists_of_files_convert_into_a_directory() {
    let dir = TempDir::new("cli", "patterns");
    three_tubes(&dir);
    dir.write("src/ab.dpm", tube_dpm(5));
    // A pattern the shell did not expand.
    let run = ossa(&dir, &["convert", "src/?.dpm", "-o", "one", "--to", "dpm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(dir.listing("one"), ["a.dpm", "b.dpm", "c.dpm"]);
    let b = Model::load_file(dir.path("one/b.dpm"), &LoadOptions::default()).unwrap();
    assert_eq!(b.bones().len(), 3);

    // `*` skips what is not a model (the SKP) even when it matches.
    let run = ossa(&dir, &["convert", "src/*", "-o", "all", "--to", "glb"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(dir.listing("all"), ["a.glb", "ab.glb", "b.glb", "c.glb"]);

    // Files named one by one, and a pattern that matches none.
    let run = ossa(
        &dir,
        &[
            "convert",
            "src/ab.dpm",
            "src/c.dpm",
            "src/z*.dpm",
            "-o",
            "two",
            "--to",
            "skm",
        ],
    );
    assert_eq!(run.code, 1);
    assert_eq!(dir.listing("two"), ["ab.skm", "c.skm"]);
    assert!(
        run.stderr
            .starts_with("ossa: src/z*.dpm: OSSA_ERR_NOT_FOUND: the pattern matches no model file"),
        "{}",
        run.stderr
    );

    // Two inputs of one name would write one file: the second is refused, not written over.
    dir.write("other/a.dpm", tube_dpm(6));
    let run = ossa(
        &dir,
        &[
            "convert",
            "src/a.dpm",
            "other/a.dpm",
            "-o",
            "three",
            "--to",
            "glb",
        ],
    );
    assert_eq!(run.code, 1);
    assert_eq!(joint_names(&glb_file(&dir.path("three/a.glb"))).len(), 2);
    assert!(
        errors(&run.stderr)[0].starts_with(
            "ossa: other/a.dpm: OSSA_ERR_INVALID_ARGUMENT: three/a.glb is written from src/a.dpm \
             already"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn a_skeleton_binds_every_input_waiting_for_one() {
    let dir = TempDir::new("cli", "many-skeleton");
    dir.write("small.cmx", SKELETON_AND_SUIT);
    dir.write("meshes/head-mesh.skn", HEAD_SKN);
    dir.write("meshes/tube.dpm", tube_dpm(2));
    let run = ossa(
        &dir,
        &[
            "convert",
            "meshes",
            "-o",
            "out",
            "--to",
            "glb",
            "--skeleton",
            "small.cmx",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(dir.listing("out"), ["head-mesh.glb", "tube.glb"]);
    assert_eq!(
        joint_names(&glb_file(&dir.path("out/head-mesh.glb"))),
        ["ROOT", "HEAD"]
    );
    // The tube has its own skeleton, and keeps it.
    assert_eq!(
        joint_names(&glb_file(&dir.path("out/tube.glb"))),
        ["bone0", "bone1"]
    );
    assert!(
        run.stderr
            .contains("--skeleton not used: the model has its skeleton already"),
        "{}",
        run.stderr
    );
}

/// The 1998 prototype's colonel, as the command puts him together: his suit file's
/// skeleton and suit, 21 `.msh` parts found beside it, their images in `Textures/` (names
/// ignoring case, as on Windows), and the greeting skill from its `.bin`.
#[test]
fn corpus_1998_colonel_converts_with_his_textures_and_a_skill() {
    let Some(sims) = corpus("sims") else {
        return;
    };
    let proto = sims.join("proto1998");
    let dir = TempDir::new("cli", "colonel");
    let out = dir.path("colonel.glb");
    let run = ossa(
        &proto,
        &[
            "convert",
            "colonelsuit.CMX",
            "--suit",
            "colonel",
            "--skills",
            "adult-greet01.cmx",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let json = glb_file(&out);
    let meshes = names(&json, "meshes");
    assert_eq!(meshes.len(), 21);
    assert_eq!(meshes[0], "xskin-colonel-PELVIS-HIP");
    assert_eq!(meshes[20], "xskin-colonel-L_FOOT-FOOTR");
    assert_eq!(joint_names(&json).len(), 25);
    assert_eq!(names(&json, "animations"), ["adult-greet01"]);
    // Every part drawn with its image: 14 distinct PNGs, among them the head's `CHeadE.png`.
    let images = json["images"].as_array().unwrap();
    assert_eq!(images.len(), 14);
    assert!(images.iter().all(|i| i["mimeType"] == "image/png"));
    assert!(
        json["meshes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| { m["primitives"][0]["material"].is_u64() })
    );
    // glTF is y up, as the Sims files are: he stands on the floor, about 5.5 units tall.
    let (min, max) = position_bounds(&json);
    assert!(
        min[1].abs() < 0.01 && (max[1] - 5.47).abs() < 0.01,
        "{min:?} {max:?}"
    );
}

/// `--search DIR`: the colonel's suit file alone in one directory, his parts in another with
/// their images in its `TEXTURES/`, named in lower case. Each part's texture is found beside the
/// part (in its Textures folder, ASCII case ignored as on the game's Windows), wherever the part
/// was found: converted and drawn, every part is textured and nothing is warned about (it was
/// 13 warnings and an untextured colonel).
#[test]
fn corpus_colonel_parts_from_a_search_directory_find_their_textures() {
    let Some(sims) = corpus("sims") else {
        return;
    };
    let proto = sims.join("proto1998");
    let dir = TempDir::new("cli", "colonel-search");
    dir.write(
        "suit/colonelsuit.CMX",
        std::fs::read(proto.join("colonelsuit.CMX")).unwrap(),
    );
    for entry in std::fs::read_dir(&proto).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with("xskin-colonel-") {
            dir.write(
                &format!("parts/{name}"),
                std::fs::read(proto.join(&name)).unwrap(),
            );
        }
    }
    for entry in std::fs::read_dir(proto.join("Textures")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        dir.write(
            &format!("parts/TEXTURES/{}", name.to_ascii_lowercase()),
            std::fs::read(proto.join("Textures").join(&name)).unwrap(),
        );
    }
    let args = |out: &'static str| {
        [
            "suit/colonelsuit.CMX",
            "--suit",
            "colonel",
            "--search",
            "parts",
            "-o",
            out,
        ]
    };
    let mut convert = vec!["convert"];
    convert.extend(args("colonel.glb"));
    let run = ossa(&dir, &convert);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let json = glb_file(&dir.path("colonel.glb"));
    assert_eq!(names(&json, "meshes").len(), 21);
    assert_eq!(json["images"].as_array().unwrap().len(), 14);
    assert!(
        (json["meshes"].as_array().unwrap().iter())
            .all(|m| m["primitives"][0]["material"].is_u64())
    );
    let mut render = vec!["render"];
    render.extend(args("colonel.png"));
    let run = ossa(&dir, &render);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    assert!(
        run.stdout
            .ends_with("21 meshes, 515 triangles, 21 textured\n"),
        "{}",
        run.stdout
    );
}

/// `--anims`: raylib's guy takes the scenes of its animation-only twin (unnamed bones, bound by
/// number) after its own; a file whose bones are none of the model's is refused, naming it.
#[test]
fn anims_adds_the_scenes_of_an_animation_only_iqm() {
    let Some(iqm) = corpus("iqm") else {
        return;
    };
    let dir = TempDir::new("cli", "anims");
    let (guy, anims) = (iqm.join("raylib_guy.iqm"), iqm.join("raylib_guyanim.iqm"));
    let scenes = |path: &Path| -> Vec<String> {
        let m = Model::load_file(path, &LoadOptions::default()).unwrap();
        m.animations().iter().map(|a| a.name.to_string()).collect()
    };
    // The twin's scenes have the model's names; glTF numbers the repeats.
    assert_eq!(scenes(&guy), ["jump", "dance"]);
    assert_eq!(scenes(&anims), ["jump", "dance"]);
    let expected = ["jump", "dance", "jump~2", "dance~2"];

    let (guy, anims) = (guy.to_str().unwrap(), anims.to_str().unwrap());
    let run = ossa(&dir, &["convert", guy, "--anims", anims, "-o", "guy.glb"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        names(&glb_file(&dir.path("guy.glb")), "animations"),
        expected
    );

    let bush = iqm.join("ksdk_bush.iqm");
    let run = ossa(
        &dir,
        &[
            "convert",
            guy,
            "--anims",
            bush.to_str().unwrap(),
            "-o",
            "x.glb",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("OSSA_ERR_MISMATCH")
            && run
                .stderr
                .contains("ksdk_bush.iqm: no bone of the model is moved"),
        "{}",
        run.stderr
    );
    let run = ossa(&dir, &["convert", guy, "-o", "x.glb", "--anims"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--anims needs a file"),
        "{}",
        run.stderr
    );
}

/// `--engine darkplaces` on the Xonotic zombie writes its four `.skin` files beside the IQM as
/// `zombie.iqm_N.skin`: the same lines, which name the DPM's meshes by shader, and the IQM names
/// its meshes so (a DPM's meshes have no names), as DarkPlaces matches IQM skin lines by name.
#[test]
fn a_dpm_converted_for_darkplaces_keeps_its_skin_files() {
    let Some(dpm) = corpus("dpm") else {
        return;
    };
    let dir = TempDir::new("cli", "skins");
    let input = dpm.join("xon_zombie.dpm");
    let run = ossa(
        &dir,
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
        run.stdout.contains("4 .skin files (zombie.iqm_0.skin"),
        "{}",
        run.stdout
    );
    let lines = |path: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(path).unwrap();
        text.lines().map(str::to_owned).collect()
    };
    for k in 0..4 {
        let source = lines(&dpm.join(format!("xon_zombie.dpm_{k}.skin")));
        assert_eq!(
            lines(&dir.path(&format!("zombie.iqm_{k}.skin"))),
            source,
            "skin {k}"
        );
    }
    assert!(!dir.path("zombie.iqm_4.skin").exists());
    let iqm = Model::load_file(dir.path("zombie.iqm"), &LoadOptions::default()).unwrap();
    let meshes: Vec<String> = iqm.meshes().iter().map(|m| m.name().to_string()).collect();
    assert_eq!(meshes, ["bloodyskull", "meat"]);
}

// ---------------------------------------------------------------------------------------------
// Files found by listing stay inside their directory; suits of many skins stay linear
// ---------------------------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn a_suit_mesh_that_is_a_link_out_of_its_directory_is_refused() {
    let dir = TempDir::new("cli", "suit-link");
    dir.write("in/small.cmx", SKELETON_AND_SUIT);
    dir.write("outside/head-mesh.skn", HEAD_SKN);
    std::os::unix::fs::symlink("../outside/head-mesh.skn", dir.path("in/head-mesh.skn")).unwrap();
    let run = ossa(
        dir.path("in"),
        &["convert", "small.cmx", "--suit", "head-only", "-o", "x.glb"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("OSSA_ERR_INVALID_ARGUMENT")
            && run.stderr.contains(
                "\"head-mesh.skn\" leads outside the files the model may read through a symbolic link"
            ),
        "{}",
        run.stderr
    );
    assert!(!dir.path("in/x.glb").exists());

    // A link that stays inside is followed.
    std::fs::remove_file(dir.path("in/head-mesh.skn")).unwrap();
    dir.write("in/meshes/real.skn", HEAD_SKN);
    std::os::unix::fs::symlink("meshes/real.skn", dir.path("in/head-mesh.skn")).unwrap();
    let run = ossa(
        dir.path("in"),
        &["convert", "small.cmx", "--suit", "head-only", "-o", "x.glb"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        names(&glb_file(&dir.path("in/x.glb")), "meshes"),
        ["head-mesh"]
    );
}

#[cfg(unix)]
#[test]
fn a_directory_given_is_read_without_its_links_out() {
    let dir = TempDir::new("cli", "dir-link");
    dir.write("models/a.dpm", tube_dpm(2));
    dir.write("outside/b.dpm", tube_dpm(3));
    std::os::unix::fs::symlink("../outside/b.dpm", dir.path("models/b.dpm")).unwrap();
    let run = ossa(&dir, &["convert", "models", "-o", "out", "--to", "dpm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("ossa: warning: models/b.dpm: a link out of models; not followed"),
        "{}",
        run.stderr
    );
    assert!(dir.path("out/a.dpm").exists());
    assert!(!dir.path("out/b.dpm").exists());
}

/// A suit of `n` skins, each the same one-triangle mesh on HEAD.
fn suit_of(n: usize) -> String {
    let one_skin = "1\nHEAD\nhead-mesh\n0\n0\n0\n";
    let at = SKELETON_AND_SUIT
        .find(one_skin)
        .expect("the fixture's one skin");
    let skins: String = "HEAD\nhead-mesh\n0\n0\n".repeat(n);
    format!(
        "{}{n}\n{skins}0\n{}",
        &SKELETON_AND_SUIT[..at],
        &SKELETON_AND_SUIT[at + one_skin.len()..]
    )
}

/// A suit of thousands of skins naming one mesh: the memory a conversion holds grows with the
/// skins, not with their square (each bound mesh once carried a copy of every suit), and the
/// directory is listed once, not once a skin.
#[test]
fn a_suit_of_many_skins_dresses_in_linear_memory() {
    let dir = TempDir::new("cli", "many-skins");
    dir.write("head-mesh.skn", HEAD_SKN);
    let mut peaks = Vec::new();
    for n in [500, 2000] {
        dir.write("many.cmx", suit_of(n));
        let out = dir.path("out.txt");
        let (code, peak) = ossa_peak(
            &dir.0,
            &["convert", "many.cmx", "--suit", "head-only", "-o", "x.dpm"],
            &out,
        );
        assert_eq!(
            code,
            0,
            "{n} skins: {}",
            std::fs::read_to_string(&out).unwrap()
        );
        let dpm = Model::load_file(dir.path("x.dpm"), &LoadOptions::default()).unwrap();
        assert_eq!(dpm.meshes().len(), n);
        peaks.push(peak);
    }
    eprintln!("peak RSS: 500 skins {}, 2000 skins {}", peaks[0], peaks[1]);
    // Four times the skins: at most about four times the memory above a process's own.
    assert!(
        peaks[1] < 5 * peaks[0] + (16 << 20),
        "peak RSS {} at 500 skins, {} at 2000",
        peaks[0],
        peaks[1]
    );
}

/// In-run vertices of a model's meshes: what --skin-order is for.
fn in_runs(model: &Model) -> usize {
    model.meshes().iter().map(|m| m.skin_layout().in_runs).sum()
}

#[test]
fn skin_order_groups_vertices_for_every_target_and_says_how_many_moved() {
    let Some(dpm) = corpus("dpm") else {
        return;
    };
    let dir = TempDir::new("cli", "skin-order");
    let input = dpm.join("xon_okrobot1.dpm");
    let source = Model::load_file(&input, &LoadOptions::default()).unwrap();
    let input = input.to_str().unwrap();
    // DPM: with the saver's optimisations, after them.
    let run = ossa(
        &dir,
        &["convert", input, "-o", "grouped.dpm", "--skin-order"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("vertices"), "{}", run.stdout);
    let grouped = Model::load_file(dir.path("grouped.dpm"), &LoadOptions::default()).unwrap();
    assert_eq!(grouped.info().vertex_count, source.info().vertex_count);
    assert!(
        in_runs(&grouped) > 7000 && in_runs(&source) < 1000,
        "{} -> {}",
        in_runs(&source),
        in_runs(&grouped)
    );
    // glTF: on its own, said on the line.
    let run = ossa(
        &dir,
        &["convert", input, "-o", "grouped.glb", "--skin-order"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("; skin order: 7522 vertices renumbered"),
        "{}",
        run.stdout
    );
    let run = ossa(
        &dir,
        &[
            "convert",
            input,
            "-o",
            "x.dpm",
            "--skin-order",
            "--keep-order",
        ],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--keep-order and --skin-order ask for two orders: give one"),
        "{}",
        run.stderr
    );
}
