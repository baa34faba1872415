//! Sidecar files: found beside the model on the OS filesystem (and nowhere outside the allowed
//! directory), or served by the caller's own filesystem.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;

use ossa::io::{FileData, FileSystem};
use ossa::synth::TubeRig;
use ossa::{Error, ErrorCode, LoadOptions, Model, dpm};

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

    // A scene past the last frame is an error naming the sidecar and its line.
    std::fs::write(dir.join("tube.dpm.framegroups"), "0 4\n10 5 20 1 past\n").unwrap();
    let e = Model::load_file(dir.join("tube.dpm"), &LoadOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert_eq!(e.line(), Some(2));
    assert!(
        e.to_string().starts_with("tube.dpm.framegroups line 2: "),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Files served from memory, counting what is asked for.
struct MemoryFs {
    files: HashMap<String, Vec<u8>>,
    asked: RefCell<Vec<String>>,
}

impl FileSystem for MemoryFs {
    fn read(&self, path: &str) -> ossa::Result<FileData<'_>> {
        self.asked.borrow_mut().push(path.to_owned());
        match self.files.get(path) {
            Some(bytes) => Ok(Box::new(bytes.as_slice())),
            None => Err(Error::not_found(format!("{path}: not in the pak"))),
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
