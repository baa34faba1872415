//! Symbolic links and the caller's filesystem: nothing outside the allowed directory is read,
//! whatever the links inside it say, and a caller's filesystem is never asked for an absolute
//! path or one with `..`.
#![cfg(unix)]

// Only its hand-written doll is used here.
mod sims_fixtures;
use sims_fixtures::{TINY_SKELETON, nod, nod_cfp};
mod memory_fs;
use memory_fs::MemoryFs;
#[allow(unused_imports)]
mod mm2_fixtures;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use mm2_fixtures::{doll_mod, doll_skel};
use ossa::synth::TubeRig;
use ossa::{ErrorCode, Format, LoadOptions, Model, dpm};

/// A line no model file holds: found in a message, it came from the file outside.
const SECRET: &str = "root:x:0:0:ossa-outside-secret:/root:/bin/sh";

/// A fresh directory under the system's temporary one, with `base/` (the allowed directory) and
/// `outside/` (a file there is what an attack wants read).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ossa-links-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("base")).unwrap();
    std::fs::create_dir_all(dir.join("outside")).unwrap();
    dir
}

fn in_base(dir: &Path) -> LoadOptions<'static> {
    LoadOptions {
        base_dir: Some(dir.join("base")),
        ..LoadOptions::default()
    }
}

/// The error, which must be an invalid argument without the outside file's line in it.
fn refused(result: ossa::Result<Model>) -> String {
    let Err(e) = result else {
        panic!("loaded");
    };
    let message = e.to_string();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{message}");
    assert!(!message.contains("ossa-outside-secret"), "{message}");
    message
}

/// An SKM and its SKP, written from a generated rig.
fn tube_pair() -> (Vec<u8>, Vec<u8>) {
    let model = TubeRig::default().build().unwrap();
    (
        ossa::skm::write_skm(&model).unwrap(),
        ossa::skm::write_skp(&model).unwrap(),
    )
}

fn tube_dpm() -> Vec<u8> {
    dpm::write(&TubeRig::default().build().unwrap()).unwrap()
}

#[test]
fn a_skeleton_linking_outside_the_base_is_refused() {
    let dir = scratch("skp");
    let (skm, skp) = tube_pair();
    std::fs::write(dir.join("base/tube.skm"), &skm).unwrap();
    std::fs::write(dir.join("outside/tube.skp"), &skp).unwrap();
    symlink(dir.join("outside/tube.skp"), dir.join("base/tube.skp")).unwrap();
    let message = refused(Model::load_file(dir.join("base/tube.skm"), &in_base(&dir)));
    assert!(
        message.contains("\"tube.skp\" leads outside the files the model may read"),
        "{message}"
    );
    // A relative link out is refused the same way, and so is one to a text file.
    std::fs::remove_file(dir.join("base/tube.skp")).unwrap();
    std::fs::write(dir.join("outside/secret.skp"), format!("{SECRET}\n")).unwrap();
    symlink("../outside/secret.skp", dir.join("base/tube.skp")).unwrap();
    let message = refused(Model::load_file(dir.join("base/tube.skm"), &in_base(&dir)));
    assert!(message.contains("\"tube.skp\""), "{message}");
    // With the skeleton really inside, the model loads.
    std::fs::remove_file(dir.join("base/tube.skp")).unwrap();
    std::fs::write(dir.join("base/tube.skp"), &skp).unwrap();
    let model = Model::load_file(dir.join("base/tube.skm"), &in_base(&dir)).unwrap();
    assert_eq!(model.bones().len(), 5);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cfg_import_through_a_link_to_the_root_is_refused() {
    let dir = scratch("cfg");
    let (skm, skp) = tube_pair();
    std::fs::write(dir.join("base/tube.skm"), &skm).unwrap();
    std::fs::write(dir.join("outside/tube.skp"), &skp).unwrap();
    symlink("/", dir.join("base/root")).unwrap();
    let outside = dir.join("outside/tube");
    let import = format!("root{}", outside.display());
    std::fs::write(dir.join("base/tube.cfg"), format!("import {import}\n")).unwrap();
    let message = refused(Model::load_file(dir.join("base/tube.skm"), &in_base(&dir)));
    assert!(
        message.contains(&format!("{:?} leads outside", format!("{import}.skp"))),
        "{message}"
    );
    // A link whose `..` climbs out of the base is refused too, the target existing or not.
    std::fs::remove_file(dir.join("base/root")).unwrap();
    std::fs::create_dir(dir.join("base/models")).unwrap();
    symlink("../..", dir.join("base/models/up")).unwrap();
    for import in ["models/up/outside/tube", "models/up/outside/none"] {
        std::fs::write(dir.join("base/tube.cfg"), format!("import {import}\n")).unwrap();
        let message = refused(Model::load_file(dir.join("base/tube.skm"), &in_base(&dir)));
        assert!(message.contains("leads outside"), "{message}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_skel_linking_to_a_foreign_file_does_not_show_its_line() {
    let dir = scratch("skel");
    std::fs::write(dir.join("base/doll.mod"), doll_mod()).unwrap();
    std::fs::write(
        dir.join("outside/passwd"),
        format!("{SECRET}\nbin:x:2:2::/:\n"),
    )
    .unwrap();
    symlink(dir.join("outside/passwd"), dir.join("base/doll.skel")).unwrap();
    let message = refused(Model::load_file(dir.join("base/doll.mod"), &in_base(&dir)));
    assert!(message.contains("\"doll.skel\" leads outside"), "{message}");

    // The same foreign text inside the base is read, and refused without being shown.
    std::fs::remove_file(dir.join("base/doll.skel")).unwrap();
    std::fs::copy(dir.join("outside/passwd"), dir.join("base/doll.skel")).unwrap();
    let e = Model::load_file(dir.join("base/doll.mod"), &in_base(&dir)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert_eq!(
        e.to_string(),
        "doll.skel line 1: expected `NumBones` and the bone count first; this is no MM2 skeleton"
    );
    // With its real skeleton it binds.
    std::fs::write(dir.join("base/doll.skel"), doll_skel()).unwrap();
    let model = Model::load_file(dir.join("base/doll.mod"), &in_base(&dir)).unwrap();
    assert!(model.unbound().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The nod skill on CHEST and HEAD, playing `ANIMATION`.cfp.
fn skill() -> String {
    nod("nod", "ANIMATION", "CHEST")
}

#[test]
fn a_skill_through_a_linked_directory_is_refused() {
    let dir = scratch("skill");
    let skeleton = Model::load(
        TINY_SKELETON.as_bytes(),
        &LoadOptions {
            format: Format::SimsCmx,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    std::fs::write(dir.join("outside/xskill-nod.cfp"), nod_cfp()).unwrap();
    symlink(dir.join("outside"), dir.join("base/anims")).unwrap();
    std::fs::write(
        dir.join("base/nod.cmx"),
        skill().replace("ANIMATION", "anims/xskill-nod"),
    )
    .unwrap();
    let message = refused(skeleton.with_skills_file(dir.join("base/nod.cmx"), &in_base(&dir)));
    assert!(
        message.contains("\"anims/xskill-nod.cfp\" leads outside"),
        "{message}"
    );
    // The same directory really inside the base: the skill is added.
    std::fs::remove_file(dir.join("base/anims")).unwrap();
    std::fs::create_dir(dir.join("base/anims")).unwrap();
    std::fs::write(dir.join("base/anims/xskill-nod.cfp"), nod_cfp()).unwrap();
    let model = skeleton
        .with_skills_file(dir.join("base/nod.cmx"), &in_base(&dir))
        .unwrap();
    assert_eq!(model.frames().len(), 5);
    assert_eq!(model.animations().last().unwrap().name.to_string(), "nod");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_model_itself_must_resolve_inside_the_base() {
    let dir = scratch("model");
    std::fs::write(dir.join("outside/tube.dpm"), tube_dpm()).unwrap();
    symlink(dir.join("outside/tube.dpm"), dir.join("base/tube.dpm")).unwrap();
    let message = refused(Model::load_file(dir.join("base/tube.dpm"), &in_base(&dir)));
    assert!(message.contains("\"tube.dpm\" leads outside"), "{message}");
    // Without a base directory the caller's link is followed: the base is the directory of
    // the file it leads to, whose sidecars are read beside it.
    std::fs::write(dir.join("outside/tube.dpm.framegroups"), "0 1 5 0 still\n").unwrap();
    let linked = Model::load_file(dir.join("base/tube.dpm"), &LoadOptions::default()).unwrap();
    assert_eq!(linked.animations().len(), 1);
    assert_eq!(linked.animations()[0].name.to_string(), "still");
    std::fs::remove_file(dir.join("outside/tube.dpm.framegroups")).unwrap();
    // A directory of the path that links outside puts the model outside.
    symlink(dir.join("outside"), dir.join("base/sub")).unwrap();
    let message = refused(Model::load_file(
        dir.join("base/sub/tube.dpm"),
        &in_base(&dir),
    ));
    assert!(
        message.contains("is not inside the allowed directory"),
        "{message}"
    );
    // Skills the same.
    std::fs::write(dir.join("outside/nod.cmx"), skill()).unwrap();
    symlink(dir.join("outside/nod.cmx"), dir.join("base/nod.cmx")).unwrap();
    let skeleton = Model::load(
        TINY_SKELETON.as_bytes(),
        &LoadOptions {
            format: Format::SimsCmx,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    refused(skeleton.with_skills_file(dir.join("base/nod.cmx"), &in_base(&dir)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn links_that_stay_inside_the_base_are_followed() {
    let dir = scratch("inside");
    let (skm, skp) = tube_pair();
    let base = dir.join("base");
    std::fs::create_dir_all(base.join("models/real")).unwrap();
    std::fs::write(base.join("models/real/tube.skm"), &skm).unwrap();
    std::fs::write(base.join("models/real/tube.skp"), &skp).unwrap();
    // A linked directory, a linked model and a linked skeleton, relative and absolute, and a
    // `..` that stays inside.
    symlink("real", base.join("models/alias")).unwrap();
    symlink("../real/tube.skm", base.join("models/alias/linked.skm")).unwrap();
    symlink(
        base.join("models/real/tube.skp"),
        base.join("models/real/linked.skp"),
    )
    .unwrap();
    let model = Model::load_file(base.join("models/alias/linked.skm"), &in_base(&dir)).unwrap();
    assert_eq!(model.bones().len(), 5);
    assert!(model.unbound().is_none());
    // A `.cfg` import through the linked directory.
    std::fs::write(
        base.join("models/real/tube.cfg"),
        "import models/alias/tube\n",
    )
    .unwrap();
    let model = Model::load_file(base.join("models/real/tube.skm"), &in_base(&dir)).unwrap();
    assert!(model.unbound().is_none());
    // The base directory reached through a link of the caller's is the same base.
    symlink(&base, dir.join("base-link")).unwrap();
    let options = LoadOptions {
        base_dir: Some(dir.join("base-link")),
        ..LoadOptions::default()
    };
    let model = Model::load_file(base.join("models/real/tube.skm"), &options).unwrap();
    assert!(model.unbound().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn link_loops_and_special_files_fail_without_hanging() {
    let dir = scratch("loops");
    let (skm, _) = tube_pair();
    std::fs::write(dir.join("base/tube.skm"), &skm).unwrap();
    symlink("b.skp", dir.join("base/tube.skp")).unwrap();
    symlink("tube.skp", dir.join("base/b.skp")).unwrap();
    let e = Model::load_file(dir.join("base/tube.skm"), &in_base(&dir)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Io, "{e}");
    assert!(e.to_string().contains("more than 40 symbolic links"), "{e}");
    // A FIFO would block a read until someone writes: it is refused, not waited on.
    std::fs::remove_file(dir.join("base/tube.skp")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.join("base/tube.skp"))
        .status()
        .unwrap();
    assert!(status.success());
    let e = Model::load_file(dir.join("base/tube.skm"), &in_base(&dir)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Io, "{e}");
    assert!(
        e.to_string().ends_with("cannot read: not a regular file"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn names_outside_never_reach_the_callers_filesystem() {
    let dpm = tube_dpm();
    let mut fs = MemoryFs::default();
    fs.files.insert("models/tube.dpm".into(), dpm.clone());
    fs.files.insert("nod.cmx".into(), skill().into());
    let through = LoadOptions {
        io: Some(&fs),
        ..LoadOptions::default()
    };
    let named = |name: &str| LoadOptions {
        name: Some(name.to_owned()),
        ..through.clone()
    };
    let skeleton = Model::load(
        TINY_SKELETON.as_bytes(),
        &LoadOptions {
            format: Format::SimsCmx,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    for name in [
        "../../../etc/x.dpm",
        "/etc/x.dpm",
        "models/../../x.dpm",
        "..\\x.dpm",
        "C:/x.dpm",
    ] {
        let e = Model::load_file(name, &through).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{name}: {e}");
        let e = Model::load(&dpm, &named(name)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{name}: {e}");
        assert!(e.to_string().contains("the model's name:"), "{e}");
        let cmx = name.replace(".dpm", ".cmx");
        let e = skeleton.with_skills_file(&cmx, &through).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{cmx}: {e}");
        let e = skeleton
            .with_skills(skill().as_bytes(), &named(&cmx))
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{cmx}: {e}");
        // A DPM whose name is absolute is loaded with it from memory only without io.
        assert!(
            Model::load(
                &dpm,
                &LoadOptions {
                    name: Some(name.to_owned()),
                    ..LoadOptions::default()
                }
            )
            .is_ok()
        );
    }
    assert_eq!(*fs.asked.borrow(), Vec::<String>::new());
    // Names inside are asked for as they are.
    let model = Model::load_file("models/tube.dpm", &through).unwrap();
    assert_eq!(model.frames().len(), 4);
    Model::load(&dpm, &named("./models/tube.dpm")).unwrap();
    assert_eq!(
        *fs.asked.borrow(),
        [
            "models/tube.dpm",
            "models/tube.dpm.framegroups",
            "./models/tube.dpm.framegroups"
        ]
    );
}

/// The first line of a foreign text file, read as each text format, is never shown.
#[test]
fn a_foreign_text_file_is_never_quoted() {
    let foreign = format!("{SECRET}\ndaemon:x:1:1::/:\nbin:x:2:2::/:\nsys:x:3:3::/:\n");
    for format in [
        Format::Mm2Skel,
        Format::Mm2Mod,
        Format::SimsCmx,
        Format::SimsSkn,
    ] {
        let options = LoadOptions {
            format,
            ..LoadOptions::default()
        };
        let e = Model::load(foreign.as_bytes(), &options).unwrap_err();
        let message = e.to_string();
        assert_eq!(e.code(), ErrorCode::Malformed, "{format:?}: {message}");
        for line in foreign.lines() {
            assert!(!message.contains(line), "{format:?}: {message}");
        }
        assert!(!message.contains("ossa-outside-secret"), "{message}");
        assert!(!message.contains("bin:x"), "{message}");
    }
}
