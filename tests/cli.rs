//! The `ossa` command as a user runs it: help and version, `info`'s summary and JSON, Sims skill,
//! suit and CFP files, errors that name their OSSA_ERR_* code, and `bench` refusing a file it
//! cannot load. (`convert` has tests/cli_convert.rs.) Models built in code and hand-made Sims
//! files need no corpus; the corpus tests say "skipped: corpus absent" and return when it is not
//! there.

// The binary needs the `cli` feature, which brings serde_json for `info --json`.
#![cfg(feature = "cli")]

mod cli_support;
mod corpus;

mod sims_fixtures;

use std::path::Path;

use cli_support::{TempDir, corpus, ossa, ossa_peak, tube_dpm};
use ossa::{LoadOptions, Model};
use serde_json::Value;
use sims_fixtures::{NOD, SKELETON_AND_SUIT, nod, nod_cfp};

// ---------------------------------------------------------------------------------------------
// Help, version, demo
// ---------------------------------------------------------------------------------------------

#[test]
fn version_is_the_crate_version() {
    let run = ossa(std::env::temp_dir(), &["--version"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout.trim_end(),
        format!("ossa {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn every_command_has_help_and_opens_no_file_called_help() {
    let dir = TempDir::new("cli-info", "help");
    for (command, mentions) in [
        ("info", &["--json", "--frames", "--strict", "--format"][..]),
        ("validate", &["--strict", "--format"]),
        (
            "convert",
            &["--output", "--to", "--skills", "--suit", "--scale"],
        ),
        ("bench", &["--quick", "FILE"]),
        ("demo", &[]),
    ] {
        for flag in ["--help", "-h"] {
            let run = ossa(&dir.0, &[command, flag]);
            assert_eq!(run.code, 0, "{command} {flag}: {}", run.stderr);
            assert!(run.stderr.is_empty(), "{command} {flag}: {}", run.stderr);
            assert!(
                run.stdout.contains(&format!("Usage: ossa {command}")),
                "{command} {flag}: {}",
                run.stdout
            );
            for option in mentions {
                assert!(run.stdout.contains(option), "{command} {flag}: {option}");
            }
        }
    }
    let run = ossa(&dir.0, &["--help"]);
    assert_eq!(run.code, 0);
    for command in ["info", "validate", "convert", "bench", "demo"] {
        assert!(run.stdout.contains(command), "{}", run.stdout);
    }
}

#[test]
fn no_arguments_runs_the_demo() {
    let run = ossa(std::env::temp_dir(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with(&format!(
            "ossa {}: a demo on a rig built in code",
            env!("CARGO_PKG_VERSION")
        )),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("timing (best of repeated runs)"));
}

#[test]
fn an_unknown_command_or_option_is_a_usage_error() {
    let dir = TempDir::new("cli-info", "usage");
    dir.write("tube.dpm", tube_dpm(2));
    for (args, says) in [
        (
            &["frobnicate"][..],
            "ossa: unrecognized subcommand 'frobnicate'",
        ),
        (
            &["info", "tube.dpm", "--bogus"],
            "ossa: unknown option --bogus",
        ),
        (&["info"], "ossa: the following required arguments"),
        (
            &["info", "tube.dpm", "--format", "png"],
            "ossa: unknown format png",
        ),
    ] {
        let run = ossa(&dir.0, args);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stderr.starts_with(says), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("ossa COMMAND --help"), "{args:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// info on models
// ---------------------------------------------------------------------------------------------

#[test]
fn info_summarises_a_built_model_with_its_bones_as_a_tree() {
    let dir = TempDir::new("cli-info", "tube");
    dir.write("tube.dpm", tube_dpm(3));
    let model = Model::load_file(dir.path("tube.dpm"), &LoadOptions::default()).unwrap();
    let i = model.info();
    let run = ossa(&dir.0, &["info", "tube.dpm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.lines().next(), Some("tube.dpm: DPM model"));
    assert_eq!(
        run.line("3 bones, 1 mesh, "),
        format!(
            "  3 bones, 1 mesh, {} vertices, {} triangles, {} frames, {} animations",
            i.vertex_count, i.triangle_count, i.frame_count, i.animation_count
        )
    );
    // A chain: each bone one step further in than its parent.
    assert_eq!(run.line("0 bone0"), "     0 bone0");
    assert_eq!(run.line("1 "), "     1   bone1");
    assert_eq!(run.line("2 "), "     2     bone2");
    // One line for the mesh and for the animation; the frames only counted.
    assert_eq!(
        run.line("0 (no name): "),
        format!(
            "     0 (no name): {} vertices, {} triangles, up to 2 influences, shader textures/tube",
            i.vertex_count, i.triangle_count
        )
    );
    assert_eq!(
        run.line("1 bend1"),
        "     1 bend1 frame 1 at 10 fps, looping"
    );
    assert_eq!(
        run.line("frames: "),
        format!("frames: {} (--frames lists them)", i.frame_count)
    );
    // Frame lines: an index, the frame's name, its bounds.
    let frame_lines = |stdout: &str| {
        stdout
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .filter(|l| l.contains(" bounds ("))
            .count()
    };
    assert_eq!(
        frame_lines(&run.stdout),
        0,
        "frames listed only with --frames"
    );

    let all = ossa(&dir.0, &["info", "--frames", "tube.dpm"]);
    assert_eq!(all.code, 0);
    let frame_lines = frame_lines(&all.stdout);
    assert_eq!(frame_lines, i.frame_count as usize, "{}", all.stdout);
}

#[test]
fn info_json_gives_the_counts_bones_and_meshes() {
    let dir = TempDir::new("cli-info", "json");
    dir.write("tube.dpm", tube_dpm(4));
    let model = Model::load_file(dir.path("tube.dpm"), &LoadOptions::default()).unwrap();
    let i = model.info();
    let run = ossa(&dir.0, &["info", "tube.dpm", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["file"], "tube.dpm");
    assert_eq!(json["format"], "DPM");
    let counts = &json["counts"];
    assert_eq!(counts["bones"], 4);
    assert_eq!(counts["meshes"], 1);
    assert_eq!(counts["vertices"], i.vertex_count);
    assert_eq!(counts["triangles"], i.triangle_count);
    assert_eq!(counts["frames"], i.frame_count);
    assert_eq!(counts["animations"], i.animation_count);
    let bones = json["bones"].as_array().unwrap();
    let parents: Vec<&Value> = bones.iter().map(|b| &b["parent"]).collect();
    assert_eq!(parents, [&Value::Null, &0.into(), &1.into(), &2.into()]);
    assert_eq!(bones[3]["depth"], 3);
    assert_eq!(bones[3]["name"], "bone3");
    assert_eq!(json["meshes"][0]["vertices"], i.vertex_count);
    let scenes = json["animations"].as_array().unwrap();
    assert_eq!(scenes.len(), model.animations().len());
    assert_eq!(scenes[1]["first_frame"], model.animations()[1].first_frame);
    assert_eq!(scenes[1]["frame_count"], model.animations()[1].frame_count);
    assert_eq!(scenes[1]["name"], model.animations()[1].name.to_string());
    assert_eq!(json["bounds"]["min"].as_array().unwrap().len(), 3);
    assert!(json.get("frames").is_none(), "frames only with --frames");

    let run = ossa(&dir.0, &["info", "tube.dpm", "--json", "--frames"]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        json["frames"].as_array().unwrap().len(),
        i.frame_count as usize
    );
}

#[test]
fn corpus_zombie_is_summarised_in_a_screenful() {
    let Some(dpm) = corpus("dpm") else {
        return;
    };
    let file = dpm.join("xon_zombie.dpm");
    let file = file.to_str().unwrap();
    let run = ossa(&dpm, &["info", file]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.line("34 bones"),
        "  34 bones, 2 meshes, 2744 vertices, 1593 triangles, 1587 frames, 31 animations"
    );
    assert_eq!(
        run.line("1 (no name)"),
        "     1 (no name): 2636 vertices, 1455 triangles, up to 8 influences, shader meat"
    );
    // Bip01 Pelvis (4) is a child of Bip01 (2), a root.
    assert_eq!(run.line("2 Bip01"), "     2 Bip01");
    assert_eq!(run.line("4 "), "     4   Bip01 Pelvis");
    assert_eq!(
        run.line("0 groupified_0_anim"),
        "     0 groupified_0_anim  frames 1-56 (56) at 30 fps, looping"
    );
    // Not a line per frame.
    assert!(
        run.stdout.lines().count() < 100,
        "{}",
        run.stdout.lines().count()
    );

    let run = ossa(&dpm, &["info", "--json", file]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["counts"]["bones"], 34);
    assert_eq!(json["counts"]["frames"], 1587);
    assert_eq!(json["animations"].as_array().unwrap().len(), 31);
    assert_eq!(json["meshes"][1]["shader"], "meat");
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

#[test]
fn errors_name_the_file_and_the_code_and_exit_1() {
    let dir = TempDir::new("cli-info", "errors");
    dir.write("short.dpm", b"DARKPLACESMODEL\0short");
    for (args, says) in [
        (
            &["info", "missing.dpm"][..],
            "ossa: missing.dpm: OSSA_ERR_NOT_FOUND: ",
        ),
        (
            &["validate", "missing.dpm"],
            "ossa: missing.dpm: OSSA_ERR_NOT_FOUND: ",
        ),
        (
            &["info", "short.dpm"],
            "ossa: short.dpm: OSSA_ERR_TRUNCATED: header: ",
        ),
        (
            &["info", "--json", "short.dpm"],
            "ossa: short.dpm: OSSA_ERR_TRUNCATED: ",
        ),
    ] {
        let run = ossa(&dir.0, args);
        assert_eq!(run.code, 1, "{args:?}");
        assert!(run.stderr.starts_with(says), "{args:?}: {}", run.stderr);
        // The file is named once.
        assert_eq!(
            run.stderr.matches(args[args.len() - 1]).count(),
            1,
            "{}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
}

#[test]
fn bench_refuses_a_file_it_cannot_load() {
    let dir = TempDir::new("cli-info", "bench");
    dir.write("broken.dpm", b"not a model");
    for (file, code) in [
        ("missing.dpm", "OSSA_ERR_NOT_FOUND"),
        ("broken.dpm", "OSSA_ERR_UNKNOWN_FORMAT"),
    ] {
        let run = ossa(&dir.0, &["bench", "--quick", file]);
        assert_eq!(run.code, 1, "{file}");
        assert!(
            run.stderr
                .starts_with(&format!("ossa bench: {file}: {code}: ")),
            "{file}: {}",
            run.stderr
        );
        // Refused before anything is measured.
        assert!(
            !run.stdout.contains("load, pose and skin"),
            "{}",
            run.stdout
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Sims files
// ---------------------------------------------------------------------------------------------

#[test]
fn a_skill_file_lists_its_skills() {
    let dir = TempDir::new("cli-info", "skill");
    dir.write("nod.cmx", nod("nod", "xskill-nod", "CHEST"));
    dir.write("xskill-nod.cfp", nod_cfp());
    let run = ossa(&dir.0, &["info", "nod.cmx"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.line("1 skill"), "  1 skill");
    // HEAD turns for 4 frames, CHEST moves for 2, over 133 ms: 4 frames at 4000/133 fps; 2
    // translations and 4 rotations are 22 values.
    assert_eq!(
        run.line("0 nod:"),
        "     0 nod: 2 motions, 4 frames over 0.133 s at 30.1 fps; 22 values in xskill-nod.cfp"
    );

    let run = ossa(&dir.0, &["info", "--json", "nod.cmx"]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["counts"]["skills"], 1);
    let skill = &json["skills"][0];
    assert_eq!(skill["name"], "nod");
    assert_eq!(skill["frames"], 4);
    assert_eq!(skill["motions"], 2);
    assert_eq!(skill["cfp_found"], true);

    // Without its CFP the listing says so.
    std::fs::remove_file(dir.path("xskill-nod.cfp")).unwrap();
    let run = ossa(&dir.0, &["info", "nod.cmx"]);
    assert!(
        run.line("0 nod:")
            .ends_with("in xskill-nod.cfp (not beside the file)"),
        "{}",
        run.stdout
    );
    assert!(NOD.contains("ANIMATION"));

    // A version 200 skill reads a `.bin` where there is no CFP, and without either has no frames.
    dir.write(
        "old.cmx",
        nod("nod", "xskill-nod", "CHEST").replace("version 300", "version 200"),
    );
    let run = ossa(&dir.0, &["info", "old.cmx"]);
    assert!(
        run.line("0 nod:").ends_with(
            "in xskill-nod.cfp or xskill-nod.bin (neither beside the file: it plays without frames)"
        ),
        "{}",
        run.stdout
    );
    dir.write("xskill-nod.bin", vec![0u8; 2 * 12 + 4 * 16]);
    let run = ossa(&dir.0, &["info", "old.cmx"]);
    assert!(
        run.line("0 nod:").ends_with("22 values in xskill-nod.bin"),
        "{}",
        run.stdout
    );
    let run = ossa(&dir.0, &["info", "--json", "old.cmx"]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["skills"][0]["numbers"], "xskill-nod.bin");
    assert_eq!(json["skills"][0]["cfp_found"], false);
    // The `.bin` itself, with the skill that reads it and whether its size is the skill's.
    let run = ossa(&dir.0, &["info", "xskill-nod.bin"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.line("88 bytes"), "  88 bytes, 22 floats");
    assert_eq!(
        run.line("nod in ./old.cmx"),
        "  nod in ./old.cmx: 2 motions, 4 frames over 0.133 s; 2 translations, 4 rotations: \
         exactly its size"
    );
    dir.write("xskill-nod.bin", vec![0u8; 80]);
    let run = ossa(&dir.0, &["info", "--json", "xskill-nod.bin"]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["bytes"], 80);
    assert_eq!(json["skills"][0]["bytes_needed"], 88);
}

/// `validate` on a skill file whose numbers are not beside it: a problem naming the skill, the
/// missing file and the directory looked in, and exit status 1 (it said the file was valid, and
/// only `convert` and `render` then refused it or warned). With the numbers there it is valid.
#[test]
fn validate_reports_a_skill_whose_numbers_are_missing() {
    let dir = TempDir::new("cli-validate", "skill");
    let looked_in = std::fs::canonicalize(&dir.0).unwrap().display().to_string();
    dir.write("nod.cmx", nod("nod", "xskill-nod", "CHEST"));
    let run = ossa(&dir.0, &["validate", "nod.cmx"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        format!(
            "error (OSSA_ERR_NOT_FOUND): nod.cmx: skill nod: its animation file xskill-nod.cfp \
             does not exist in {looked_in}\nnod.cmx: 1 problems, 0 warnings\n"
        )
    );
    dir.write("xskill-nod.cfp", nod_cfp());
    let run = ossa(&dir.0, &["validate", "nod.cmx"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "nod.cmx: valid (0 warnings)\n")
    );

    // A version 200 skill's numbers may be a `.bin` too: neither is the problem. Named from
    // another directory, the file's own is where they are looked for.
    std::fs::remove_file(dir.path("xskill-nod.cfp")).unwrap();
    dir.write(
        "old.cmx",
        nod("nod", "xskill-nod", "CHEST").replace("version 300", "version 200"),
    );
    let old = dir.path("old.cmx");
    let run = ossa(std::env::temp_dir(), &["validate", old.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        format!(
            "error (OSSA_ERR_NOT_FOUND): old.cmx: skill nod: neither xskill-nod.cfp nor \
             xskill-nod.bin exists in {looked_in}: the skill has no frames\n{}: 1 problems, 0 \
             warnings\n",
            old.display()
        )
    );
    dir.write("xskill-nod.bin", vec![0u8; 2 * 12 + 4 * 16]);
    let run = ossa(&dir.0, &["validate", "old.cmx"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "old.cmx: valid (0 warnings)\n")
    );
}

/// The 1998 prototype's archive lacks the numbers of most skills: `validate` says which, and the
/// greeting, whose `.bin` is there, is valid.
#[test]
fn corpus_validate_names_the_prototype_skills_without_numbers() {
    let Some(proto) = corpus("sims/proto1998") else {
        return;
    };
    let looked_in = std::fs::canonicalize(&proto).unwrap().display().to_string();
    let run = ossa(
        &proto,
        &["validate", "adult-approve.cmx", "adult-greet01.cmx"],
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        format!(
            "error (OSSA_ERR_NOT_FOUND): adult-approve.cmx: skill adult-approve: neither \
             xskill-adult-approve.cfp nor xskill-adult-approve.bin exists in {looked_in}: the \
             skill has no frames\nadult-approve.cmx: 1 problems, 0 warnings\n\
             adult-greet01.cmx: valid (0 warnings)\n"
        )
    );
}

#[test]
fn a_cfp_is_described_with_the_skills_that_read_it() {
    let dir = TempDir::new("cli-info", "cfp");
    dir.write("xskill-nod.cfp", nod_cfp());
    let run = ossa(&dir.0, &["info", "xskill-nod.cfp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout.lines().next(),
        Some("xskill-nod.cfp: Sims CFP (the values of skills' motions)")
    );
    let size = nod_cfp().len();
    assert_eq!(
        run.line(&format!("{size} bytes")),
        format!("  {size} bytes, 22 values")
    );
    assert!(
        run.line("no character file beside it")
            .contains("xskill-nod.cfp")
    );

    dir.write("nod.cmx", nod("nod", "xskill-nod", "CHEST"));
    let run = ossa(&dir.0, &["info", "xskill-nod.cfp"]);
    assert_eq!(
        run.line("nod in "),
        format!(
            "  nod in {}: 2 motions, 4 frames over 0.133 s; 2 translations, 4 rotations: all the values",
            Path::new(".").join("nod.cmx").display()
        )
    );
    let run = ossa(&dir.0, &["info", "--json", "xskill-nod.cfp"]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["values"], 22);
    assert_eq!(json["skills"][0]["name"], "nod");

    // A broken stream names its code.
    dir.write("bad.cfp", [0xFFu8, 0]);
    let run = ossa(&dir.0, &["info", "bad.cfp"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("ossa: bad.cfp: OSSA_ERR_TRUNCATED: "),
        "{}",
        run.stderr
    );
}

#[test]
fn a_suit_file_lists_each_skin_with_its_bone_and_mesh() {
    let dir = TempDir::new("cli-info", "suit");
    dir.write("small.cmx", SKELETON_AND_SUIT);
    let run = ossa(&dir.0, &["info", "small.cmx"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.line("0 head-only:"),
        "     0 head-only: type 0, 1 skin, 0 properties"
    );
    assert_eq!(
        run.line("mesh head-mesh"),
        "         mesh head-mesh on bone HEAD, censor flags 0"
    );
    let run = ossa(&dir.0, &["info", "--json", "small.cmx"]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["suits"][0]["skins"][0]["bone"], "HEAD");
    assert_eq!(json["suits"][0]["skins"][0]["mesh"], "head-mesh");
}

#[test]
fn corpus_sims_skill_suit_and_cfp_files_are_described() {
    let Some(sims) = corpus("sims") else {
        return;
    };
    let dir = TempDir::new("cli-info", "corpus-sims");
    // The game's own names (the corpus's `so_` prefix off), so that the skill finds its CFP.
    for file in [
        "so_adult-idle1.cmx",
        "so_xskill-A2O-idle1.cfp",
        "so_B001MAFit_01.cmx",
    ] {
        let game = file.strip_prefix("so_").unwrap();
        dir.write(game, std::fs::read(sims.join(file)).unwrap());
    }
    let run = ossa(&dir.0, &["info", "adult-idle1.cmx"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.line("0 a2o-idle1:"),
        "     0 a2o-idle1: 29 motions, 60 frames over 1.999 s at 30.0 fps; 7320 values in \
         xskill-A2O-idle1.cfp"
    );
    let run = ossa(&dir.0, &["info", "xskill-A2O-idle1.cfp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.line("3441 bytes"), "  3441 bytes, 7320 values");
    assert!(
        run.line("a2o-idle1 in ").ends_with("all the values"),
        "{}",
        run.stdout
    );
    let run = ossa(&dir.0, &["info", "B001MAFit_01.cmx"]);
    assert_eq!(
        run.line("mesh "),
        "         mesh xskin-b001mafit_01-PELVIS-BODY on bone PELVIS, censor flags 0"
    );
}

/// The positions of a 1998 `.msh`, read off its bytes: after the magic, a count, the record size
/// (12) and each position's three little-endian floats.
fn msh_positions(bytes: &[u8]) -> Vec<[f32; 3]> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(&bytes[..4], b"\xb2\xb0\xb0\xb0");
    assert_eq!(word(8), 12);
    let float = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    (0..word(4) as usize)
        .map(|k| {
            let at = 12 + 12 * k;
            [float(at), float(at + 4), float(at + 8)]
        })
        .collect()
}

/// A `.msh` alone has no skeleton and so no bind pose: `info` gives the bounds of its own
/// vertex positions, in the space of the bone its name gives, and says so (it gave zeros).
#[test]
fn corpus_msh_info_gives_the_bounds_of_its_own_positions() {
    let Some(proto) = corpus("sims/proto1998") else {
        return;
    };
    let name = "xskin-biped-ed-HEAD-HEAD.msh";
    let positions = msh_positions(&std::fs::read(proto.join(name)).unwrap());
    let (mut min, mut max) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for p in &positions {
        for ((lo, hi), &v) in min.iter_mut().zip(&mut max).zip(p) {
            *lo = lo.min(v);
            *hi = hi.max(v);
        }
    }
    // The head: about half a unit across, around its bone's joint.
    assert!(max[0] - min[0] > 0.5 && min[0] < 0.0, "{min:?} {max:?}");
    let run = ossa(&proto, &["info", name]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v3 = |v: [f32; 3]| format!("({:.4}, {:.4}, {:.4})", v[0], v[1], v[2]);
    assert_eq!(
        run.line("bounds"),
        format!(
            "  bounds {} .. {} of its own vertex positions, in bone HEAD's space (it waits for a \
             skeleton, so has no bind pose)",
            v3(min),
            v3(max)
        )
    );
    let run = ossa(&proto, &["info", name, "--json"]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let bounds = &json["bounds"];
    let floats = |v: &Value| -> Vec<f32> {
        (v.as_array().unwrap().iter())
            .map(|x| x.as_f64().unwrap() as f32)
            .collect()
    };
    assert_eq!(floats(&bounds["min"]), min);
    assert_eq!(floats(&bounds["max"]), max);
    assert_eq!(bounds["of"], "own vertex positions, in bone HEAD's space");
    // Bound to a skeleton, a model's bounds are its bind pose's.
    let run = ossa(&proto, &["info", "colonelsuit.CMX", "--json"]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["bounds"]["of"], "bind pose");
}

/// A glTF's animations are sampled at `--fps`: twice the rate, twice the frames between the
/// first and the last.
#[test]
fn fps_sets_the_rate_gltf_animations_are_sampled_at() {
    let dir = TempDir::new("cli-info", "fps");
    dir.write("tube.dpm", tube_dpm(3));
    let run = ossa(&dir.0, &["convert", "tube.dpm", "-o", "tube.glb"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let scenes = |fps: &str| -> Vec<(u64, f64)> {
        let run = ossa(&dir.0, &["info", "--json", "--fps", fps, "tube.glb"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let json: Value = serde_json::from_str(&run.stdout).unwrap();
        (json["animations"].as_array().unwrap().iter())
            .map(|a| {
                (
                    a["frame_count"].as_u64().unwrap(),
                    a["fps"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let (slow, fast) = (scenes("10"), scenes("20"));
    assert!(!slow.is_empty());
    for ((n10, f10), (n20, f20)) in slow.iter().zip(&fast) {
        assert_eq!((*f10, *f20), (10.0, 20.0));
        assert_eq!(n20 - 1, 2 * (n10 - 1), "{slow:?} {fast:?}");
    }
    let run = ossa(&dir.0, &["info", "--fps", "0", "tube.glb"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .starts_with("ossa: --fps needs a number from 0.01 to 1000, not 0"),
        "{}",
        run.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// Reports linear in the model
// ---------------------------------------------------------------------------------------------

/// A skeleton of `n` bones, each the child of the one before, one frame, no meshes, as DPM.
fn chain_dpm(n: usize) -> Vec<u8> {
    let mut parts = ossa::ModelParts::new(ossa::Format::Dpm);
    parts.bones = (0..n)
        .map(|b| ossa::Bone {
            name: format!("b{b}").as_str().into(),
            parent: b as i32 - 1,
            flags: 0,
        })
        .collect();
    parts.frames.push(ossa::Frame::named("rest"));
    let step = ossa::Mat3x4 {
        m: [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1e-3],
    };
    parts.poses = vec![step; n].into();
    ossa::dpm::write(&Model::from_parts(parts).unwrap()).unwrap()
}

/// A chain of bones prints in text and JSON linear in its length: the summary indents a bone
/// 32 levels at most and then gives its depth, and the JSON is written as it is made. (A chain of
/// 200,000 once printed 40 GB of indentation, and its JSON held 382 MB.)
#[test]
fn a_deep_bone_chain_prints_linear_reports() {
    let n = if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };
    let dir = TempDir::new("cli-info", "chain");
    let dpm = chain_dpm(n);
    dir.write("chain.dpm", &dpm);

    let out = dir.path("info.txt");
    let (code, _) = ossa_peak(&dir.0, &["info", "chain.dpm"], &out);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.len() < 120 * n, "{} bytes for {n} bones", text.len());
    let last = format!("b{}", n - 1);
    let line = text.lines().find(|l| l.ends_with(&last)).unwrap();
    assert_eq!(
        line,
        format!("  {:4} {}[depth {}] {last}", n - 1, "  ".repeat(32), n - 1)
    );
    let line = text.lines().find(|l| l.ends_with(" b32")).unwrap();
    assert_eq!(line, format!("    32 {}b32", "  ".repeat(32)));

    let out = dir.path("info.json");
    let (code, peak) = ossa_peak(&dir.0, &["info", "--json", "chain.dpm"], &out);
    assert_eq!(code, 0);
    let json: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let bones = json["bones"].as_array().unwrap();
    assert_eq!(bones.len(), n);
    assert_eq!(bones[n - 1]["depth"], n - 1);
    assert_eq!(bones[n - 1]["parent"], n - 2);
    let limit = 12 * dpm.len() as u64 + (64 << 20);
    eprintln!(
        "info --json: {n} bones, {} byte file, peak RSS {peak}",
        dpm.len()
    );
    assert!(
        peak < limit,
        "peak RSS {peak} for a {} byte file",
        dpm.len()
    );
}
