//! Sidecar files: found beside the model on the OS filesystem (and nowhere outside the allowed
//! directory), or served by the caller's own filesystem.

mod memory_fs;
use memory_fs::MemoryFs;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;

use ossa::synth::TubeRig;
use ossa::{ErrorCode, LoadOptions, Model, dpm};

/// A fresh directory under the system's temporary one.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ossa-sidecars-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tube_dpm() -> Vec<u8> {
    let rig = TubeRig {
        frames: 12,
        ..TubeRig::default()
    };
    dpm::write(&rig.build().unwrap()).unwrap()
}

const FRAMEGROUPS: &str = "// first count fps loop name\n0 1 10 0 bind\n1 8 15 1 wave\n9 3\n";

fn check_scenes(model: &Model) {
    let names: Vec<String> = model
        .animations()
        .iter()
        .map(|a| a.name.to_string())
        .collect();
    assert_eq!(names, ["bind", "wave", "groupified_2_anim"]);
    let wave = &model.animations()[1];
    assert_eq!(
        (wave.first_frame, wave.frame_count, wave.fps, wave.looping),
        (1, 8, 15.0, true)
    );
    assert!(!model.animations()[0].looping);
    assert_eq!(model.animations()[2].fps, 20.0);
    // 0.1 s into "wave" at 15 fps is position 1.5: frames 2 and 3, half each.
    let (blends, n) = model.animation_blend(1, 0.1).unwrap();
    assert_eq!(n, 2);
    assert_eq!((blends[0].frame, blends[1].frame), (2, 3));
    assert!((blends[0].weight - 0.5).abs() < 1e-5);
}

#[test]
fn framegroups_beside_a_dpm_become_its_scenes() {
    let dir = scratch("framegroups");
    std::fs::write(dir.join("tube.dpm"), tube_dpm()).unwrap();
    let plain = Model::load_file(dir.join("tube.dpm"), &LoadOptions::default()).unwrap();
    assert_eq!(
        plain.animations().len(),
        12,
        "one scene per frame without the file"
    );
    assert_eq!(plain.animations()[3].fps, 10.0);

    std::fs::write(dir.join("tube.dpm.framegroups"), FRAMEGROUPS).unwrap();
    let model = Model::load_file(dir.join("tube.dpm"), &LoadOptions::default()).unwrap();
    check_scenes(&model);

    // Loading from memory reads no sidecars.
    let bytes = std::fs::read(dir.join("tube.dpm")).unwrap();
    let options = LoadOptions {
        name: Some(dir.join("tube.dpm").to_string_lossy().into_owned()),
        ..LoadOptions::default()
    };
    assert_eq!(
        Model::load(&bytes, &options).unwrap().animations().len(),
        12
    );

    // A scene past the last frame: in the default mode a warning naming the sidecar and its
    // line, and the scenes the model has without it; strict mode refuses it with that error.
    std::fs::write(dir.join("tube.dpm.framegroups"), "0 4\n10 5 20 1 past\n").unwrap();
    let warned = Model::load_file(dir.join("tube.dpm"), &LoadOptions::default()).unwrap();
    check_per_frame_scenes(&warned, 12);
    assert_eq!(
        warnings(&warned),
        [
            "tube.dpm.framegroups line 2: scene \"past\" runs frames 10..15 but the model has 12 frames; the file is not used, every frame is a scene of its own"
        ]
    );
    let strict = LoadOptions {
        strict: true,
        ..LoadOptions::default()
    };
    let e = Model::load_file(dir.join("tube.dpm"), &strict).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert_eq!(e.line(), Some(2));
    assert_eq!(
        e.to_string(),
        "tube.dpm.framegroups line 2: scene \"past\" runs frames 10..15 but the model has 12 frames"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn warnings(model: &Model) -> Vec<String> {
    model.warnings().iter().map(|w| w.to_string()).collect()
}

/// The scenes of a DPM without a `.framegroups`: one per frame, named after it, at 10 fps.
fn check_per_frame_scenes(model: &Model, frames: usize) {
    assert_eq!(model.animations().len(), frames);
    for (i, (a, f)) in model.animations().iter().zip(model.frames()).enumerate() {
        assert_eq!(
            (a.first_frame, a.frame_count, a.fps, &a.name),
            (i as u32, 1, 10.0, &f.name)
        );
    }
}

#[test]
fn a_framegroups_that_cannot_be_read_leaves_the_model_its_own_scenes() {
    let dir = scratch("broken-framegroups");
    std::fs::write(dir.join("tube.dpm"), tube_dpm()).unwrap();
    let strict = LoadOptions {
        strict: true,
        ..LoadOptions::default()
    };
    for (text, warning) in [
        (
            &b"0 1\n7\n"[..],
            "tube.dpm.framegroups line 2: a scene needs a first frame and a frame count",
        ),
        (
            b"/* x */ 0 1 zero\n",
            "tube.dpm.framegroups line 1: the frame rate is `zero`, not a number",
        ),
        (
            b"\r\n0 1\r1 0.5\r\n",
            "tube.dpm.framegroups line 3: frame count 0.5 is not a whole number of frames",
        ),
    ] {
        std::fs::write(dir.join("tube.dpm.framegroups"), text).unwrap();
        let model = Model::load_file(dir.join("tube.dpm"), &LoadOptions::default()).unwrap();
        check_per_frame_scenes(&model, 12);
        assert_eq!(
            warnings(&model),
            [format!(
                "{warning}; the file is not used, every frame is a scene of its own"
            )]
        );
        let e = Model::load_file(dir.join("tube.dpm"), &strict).unwrap_err();
        assert_eq!(
            (e.code(), e.to_string()),
            (ErrorCode::Malformed, warning.to_owned())
        );
    }
    // A file that cannot be read: a directory where the file should be.
    std::fs::remove_file(dir.join("tube.dpm.framegroups")).unwrap();
    std::fs::create_dir(dir.join("tube.dpm.framegroups")).unwrap();
    let model = Model::load_file(dir.join("tube.dpm"), &LoadOptions::default()).unwrap();
    check_per_frame_scenes(&model, 12);
    let w = warnings(&model);
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("tube.dpm.framegroups: cannot read"), "{w:?}");
    let e = Model::load_file(dir.join("tube.dpm"), &strict).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Io);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The scenes a `.framegroups` lists, read the simple way: block comments removed, then per line
/// the text before `//`, split at white space: first, count, fps, loop.
fn listed_scenes(text: &str) -> Vec<(u32, u32, f32, bool)> {
    let mut rest = text;
    let mut plain = String::new();
    while let Some(start) = rest.find("/*") {
        plain.push_str(&rest[..start]);
        rest = rest[start + 2..]
            .split_once("*/")
            .map_or("", |(_, after)| after);
    }
    plain.push_str(rest);
    plain
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split("//").next()?.split_whitespace().collect();
            (!fields.is_empty()).then(|| {
                (
                    fields[0].parse().unwrap(),
                    fields[1].parse().unwrap(),
                    fields[2].parse().unwrap(),
                    fields[3] != "0",
                )
            })
        })
        .collect()
}

#[path = "corpus/mod.rs"]
mod corpus;

#[test]
fn the_corpus_models_play_their_framegroups() {
    let Some(dir) = corpus::corpus_subdir("dpm", "the corpus framegroups") else {
        return;
    };
    let files = corpus::files_ending(&dir, &[".dpm.framegroups"]);
    assert_eq!(files.len(), 6, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(dir.join(&file)).unwrap();
        let listed = listed_scenes(&text);
        let model_path = dir.join(file.strip_suffix(".framegroups").unwrap());
        let model = Model::load_file(&model_path, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        // The zombie's own influence sums give a warning: strict mode refuses the model for it.
        let warned = warnings(&model);
        assert!(
            warned.iter().all(|w| !w.contains("framegroups")),
            "{file}: {warned:?}"
        );
        let strict = LoadOptions {
            strict: true,
            ..LoadOptions::default()
        };
        let models = if warned.is_empty() {
            vec![model, Model::load_file(&model_path, &strict).unwrap()]
        } else {
            vec![model]
        };
        for model in models {
            let scenes: Vec<_> = model
                .animations()
                .iter()
                .map(|a| (a.first_frame, a.frame_count, a.fps, a.looping))
                .collect();
            assert_eq!(scenes, listed, "{file}");
            for (i, a) in model.animations().iter().enumerate() {
                assert_eq!(a.name.to_string(), format!("groupified_{i}_anim"));
            }
        }
        if file == "xon_okmale1.dpm.framegroups" {
            // The first scene after the file's opening block comment.
            assert_eq!(listed[0], (1, 42, 30.0, false));
            assert_eq!(listed.len(), 24, "{listed:?}");
        }
    }
}

#[test]
fn the_callers_filesystem_serves_model_and_sidecars() {
    let fs = MemoryFs {
        files: HashMap::from([
            ("models/tube.dpm".to_owned(), tube_dpm()),
            (
                "models/tube.dpm.framegroups".to_owned(),
                FRAMEGROUPS.as_bytes().to_vec(),
            ),
        ]),
        asked: RefCell::new(Vec::new()),
    };
    let options = LoadOptions {
        io: Some(&fs),
        ..LoadOptions::default()
    };
    let model = Model::load_file("models/tube.dpm", &options).unwrap();
    check_scenes(&model);
    assert_eq!(
        *fs.asked.borrow(),
        ["models/tube.dpm", "models/tube.dpm.framegroups"]
    );

    // From memory with a name and io, the sidecars come through io too.
    fs.asked.borrow_mut().clear();
    let bytes = fs.files["models/tube.dpm"].clone();
    let named = LoadOptions {
        name: Some("models/tube.dpm".to_owned()),
        ..options.clone()
    };
    check_scenes(&Model::load(&bytes, &named).unwrap());
    assert_eq!(*fs.asked.borrow(), ["models/tube.dpm.framegroups"]);

    let e = Model::load_file("models/missing.dpm", &options).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
}

#[test]
fn a_model_outside_the_allowed_directory_is_refused() {
    let dir = scratch("outside");
    std::fs::create_dir_all(dir.join("allowed")).unwrap();
    std::fs::write(dir.join("tube.dpm"), tube_dpm()).unwrap();
    let options = LoadOptions {
        base_dir: Some(dir.join("allowed")),
        ..LoadOptions::default()
    };
    let e = Model::load_file(dir.join("tube.dpm"), &options).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    // Inside a base directory a model in a subdirectory finds its sidecars there.
    std::fs::create_dir_all(dir.join("allowed/sub")).unwrap();
    std::fs::write(dir.join("allowed/sub/tube.dpm"), tube_dpm()).unwrap();
    std::fs::write(dir.join("allowed/sub/tube.dpm.framegroups"), FRAMEGROUPS).unwrap();
    check_scenes(&Model::load_file(dir.join("allowed/sub/tube.dpm"), &options).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

/// An SKM and SKP pair written from a generated rig.
fn tube_pair() -> (Vec<u8>, Vec<u8>) {
    let model = TubeRig::default().build().unwrap();
    (
        ossa::skm::write_skm(&model).unwrap(),
        ossa::skm::write_skp(&model).unwrap(),
    )
}

#[test]
fn an_skm_finds_its_skeleton_the_way_qfusion_does() {
    let dir = scratch("skm");
    let (skm, skp) = tube_pair();
    let whole = TubeRig::default().build().unwrap();
    std::fs::write(dir.join("tris.skm"), &skm).unwrap();

    // Nothing beside it: NotFound, naming what was tried.
    let e = Model::load_file(dir.join("tris.skm"), &LoadOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert!(
        e.to_string().contains("tris.cfg") && e.to_string().contains("tris.skp"),
        "{e}"
    );

    // The .skp beside it.
    std::fs::write(dir.join("tris.skp"), &skp).unwrap();
    let bound = Model::load_file(dir.join("tris.skm"), &LoadOptions::default()).unwrap();
    assert!(bound.unbound().is_none());
    assert_eq!(bound.bones().len(), whole.bones().len());
    assert_eq!(bound.frames().len(), whole.frames().len());

    // A LOD without its own skeleton uses the base model's.
    std::fs::write(dir.join("tris_2.skm"), &skm).unwrap();
    let lod = Model::load_file(dir.join("tris_2.skm"), &LoadOptions::default()).unwrap();
    assert_eq!(lod.bones().len(), whole.bones().len());

    // A .cfg with an import names the skeleton, from the root of the allowed directory.
    std::fs::create_dir_all(dir.join("skeletons")).unwrap();
    std::fs::write(dir.join("skeletons/rig.skp"), &skp).unwrap();
    std::fs::remove_file(dir.join("tris.skp")).unwrap();
    std::fs::write(
        dir.join("tris.cfg"),
        "// qfusion model config\nimport skeletons/rig\n",
    )
    .unwrap();
    let imported = Model::load_file(dir.join("tris.skm"), &LoadOptions::default()).unwrap();
    assert_eq!(imported.frames().len(), whole.frames().len());

    // A .cfg without an import is not a skeleton file: a warning, then the .skp beside the model.
    std::fs::write(dir.join("tris.cfg"), "sex male\n").unwrap();
    std::fs::write(dir.join("tris.skp"), &skp).unwrap();
    let warned = Model::load_file(dir.join("tris.skm"), &LoadOptions::default()).unwrap();
    assert!(
        warned
            .warnings()
            .iter()
            .any(|w| w.to_string().contains("no import line"))
    );

    // Imports that try to leave the directory are refused, never followed.
    for escape in [
        "../outside",
        "/etc/passwd",
        "skeletons/../../outside",
        "C:/rig",
    ] {
        std::fs::write(dir.join("tris.cfg"), format!("import {escape}\n")).unwrap();
        let e = Model::load_file(dir.join("tris.skm"), &LoadOptions::default()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{escape}: {e}");
        assert!(e.to_string().starts_with("tris.cfg: "), "{e}");
    }
    // An import of a missing skeleton is NotFound, named in the .cfg's message.
    std::fs::write(dir.join("tris.cfg"), "import skeletons/none\n").unwrap();
    let e = Model::load_file(dir.join("tris.skm"), &LoadOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert!(e.to_string().contains("skeletons/none.skp"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
