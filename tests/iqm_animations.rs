//! Animations in files of their own, added to a model: raylib's `guyanim.iqm` (poses without
//! joints, bound by index) on `guy.iqm`, whose own anims are the same numbers; Red Eclipse's
//! player and giraffe with their `iqmanim` files; a DPM's animations by bone name; and the
//! refusals.

mod corpus;
mod sweep;

use ossa::{ErrorCode, LoadOptions, Model};

fn corpus_model(name: &str, test: &str) -> Option<Model> {
    let dir = corpus::corpus_subdir("iqm", test)?;
    Some(Model::load_file(dir.join(name), &LoadOptions::default()).unwrap())
}

/// Each scene's name, first frame, frame count and frame rate.
fn scenes(model: &Model) -> Vec<(String, u32, u32, f32)> {
    (model.animations().iter())
        .map(|a| {
            (
                a.name.to_string_lossy(),
                a.first_frame,
                a.frame_count,
                a.fps,
            )
        })
        .collect()
}

/// Every vertex of every mesh at `frame`.
fn skinned(model: &Model, frame: u32) -> Vec<[f32; 3]> {
    let bones = sweep::pose(model, &[sweep::blend(frame, 1.0)], None);
    (0..model.meshes().len())
        .flat_map(|m| sweep::skin(model, m, &bones, 0).positions)
        .collect()
}

#[test]
fn an_animation_only_file_plays_on_the_model_it_was_made_for() {
    let test = "an_animation_only_file_plays_on_the_model_it_was_made_for";
    let (Some(guy), Some(anims)) = (
        corpus_model("raylib_guy.iqm", test),
        corpus_model("raylib_guyanim.iqm", test),
    ) else {
        return;
    };
    // guy.iqm carries the same two anims as guyanim.iqm, number for number.
    let both = guy.with_animations(&anims).unwrap();
    assert_eq!(both.frames().len(), 123 + 122);
    assert_eq!(
        scenes(&both),
        [
            ("jump".to_owned(), 1, 61, 24.0),
            ("dance".to_owned(), 62, 61, 24.0),
            ("jump".to_owned(), 123, 61, 24.0),
            ("dance".to_owned(), 184, 61, 24.0),
        ]
    );
    for k in [0u32, 30, 60, 61, 100, 121] {
        assert_eq!(skinned(&both, 1 + k), skinned(&both, 123 + k), "frame {k}");
    }
    // The model itself is unchanged, and the new one's frame 0 is its rest pose.
    assert_eq!(guy.frames().len(), 123);
    assert_eq!(skinned(&both, 0), skinned(&guy, 0));
}

#[test]
fn red_eclipse_actors_take_their_iqmanim_files() {
    let test = "red_eclipse_actors_take_their_iqmanim_files";
    let (Some(player), Some(boost), Some(dead)) = (
        corpus_model("rea_RE_Player_male.iqm", test),
        corpus_model("rea_player_boost_forward.iqm", test),
        corpus_model("rea_player_dead.iqm", test),
    ) else {
        return;
    };
    assert_eq!(player.frames().len(), 1, "joints without poses");
    let moving = player.with_animations(&boost).unwrap();
    let moving = moving.with_animations(&dead).unwrap();
    assert_eq!(moving.frames().len(), 1 + 24 + 2);
    let names: Vec<_> = moving
        .animations()
        .iter()
        .map(|a| a.name.to_string_lossy())
        .collect();
    assert_eq!(names, ["dash_forward2", "dead"]);
    // Every frame poses the body somewhere finite and about the size it is at rest.
    let rest = skinned(&moving, 0);
    let height = |p: &[[f32; 3]]| {
        let (lo, hi) = p.iter().fold((f32::MAX, f32::MIN), |(lo, hi), v| {
            (lo.min(v[2]), hi.max(v[2]))
        });
        hi - lo
    };
    for f in 1..moving.frames().len() as u32 {
        let p = skinned(&moving, f);
        assert!(p.iter().flatten().all(|x| x.is_finite()), "frame {f}");
        let h = height(&p);
        assert!(
            h > 0.2 * height(&rest) && h < 2.0 * height(&rest),
            "frame {f}: {h}"
        );
    }
}

#[test]
fn bones_are_matched_by_name_where_both_files_name_them() {
    let test = "bones_are_matched_by_name_where_both_files_name_them";
    let Some(guy) = corpus_model("raylib_guy.iqm", test) else {
        return;
    };
    // The same model as the animations' file: every bone found by its name.
    let twice = guy.with_animations(&guy).unwrap();
    assert_eq!(twice.frames().len(), 123 + 122);
    assert!(twice.warnings().is_empty(), "{:?}", twice.warnings());
    assert_eq!(skinned(&twice, 50), skinned(&twice, 50 + 122));
}

#[test]
fn what_cannot_be_bound_is_a_mismatch() {
    let test = "what_cannot_be_bound_is_a_mismatch";
    let (Some(guy), Some(player), Some(giraffe), Some(bush)) = (
        corpus_model("raylib_guy.iqm", test),
        corpus_model("rea_RE_Player_male.iqm", test),
        corpus_model("rev_giraffe_anim_idle.iqm", test),
        corpus_model("ksdk_bush.iqm", test),
    ) else {
        return;
    };
    // 78 unnamed poses cannot move 14 bones by index.
    let boost = corpus_model("rea_player_boost_forward.iqm", test).unwrap();
    let e = guy.with_animations(&boost).err().unwrap();
    assert_eq!(e.code(), ErrorCode::Mismatch);
    assert!(
        e.to_string().contains("78 unnamed bones, the model has 14"),
        "{e}"
    );
    // No bone of the pistol is named as one of guy's.
    let pistol = corpus_model("jgw_pistol.iqm", test).unwrap();
    let e = guy.with_animations(&pistol).err().unwrap();
    assert_eq!(e.code(), ErrorCode::Mismatch, "{e}");
    assert!(e.to_string().contains("no bone of the model"), "{e}");
    // Two of the player's bones are named as guy's: those move, the rest keep their rest pose.
    let partly = player.with_animations(&guy).unwrap();
    assert!(
        partly
            .warnings()
            .iter()
            .any(|w| w.to_string().contains("move 2 of the model's 78 bones")),
        "{:?}",
        partly.warnings()
    );
    // A static model has no frames to give.
    let e = guy.with_animations(&bush).err().unwrap();
    assert_eq!(e.code(), ErrorCode::Mismatch, "{e}");
    // One unnamed pose moves the first bone; the others keep their rest pose, with a warning.
    let partly = guy.with_animations(&giraffe).unwrap();
    assert!(
        partly
            .warnings()
            .iter()
            .any(|w| w.to_string().contains("move 1 of the model's 14 bones")),
        "{:?}",
        partly.warnings()
    );
}

/// A directory laid out as the game ships it: each corpus file under its original name.
fn game_dir(what: &str, files: &[(&str, &str)], test: &str) -> Option<std::path::PathBuf> {
    let corpus = corpus::corpus_subdir("iqm", test)?;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("iqm-cfg-{what}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (from, to) in files {
        std::fs::copy(corpus.join(from), dir.join(to)).unwrap();
    }
    Some(dir)
}

/// The error loading `model` in `dir` once `cfg` (name, text) is written beside it.
fn refused(
    dir: &std::path::Path,
    (cfg, text): (&str, &str),
    model: &str,
    options: &LoadOptions,
) -> ossa::Error {
    std::fs::write(dir.join(cfg), text).unwrap();
    Model::load_file(dir.join(model), options).err().unwrap()
}

#[test]
fn a_red_eclipse_iqm_cfg_adds_its_iqmanim_files() {
    let test = "a_red_eclipse_iqm_cfg_adds_its_iqmanim_files";
    // Red Eclipse's giraffe hat: head/giraffe/{mesh.iqm, anim_idle.iqm, iqm.cfg}.
    let Some(dir) = game_dir(
        "giraffe",
        &[
            ("rev_giraffe_mesh.iqm", "mesh.iqm"),
            ("rev_giraffe_anim_idle.iqm", "anim_idle.iqm"),
            ("rev_giraffe.iqm.cfg", "iqm.cfg"),
        ],
        test,
    ) else {
        return;
    };
    let model = Model::load_file(dir.join("mesh.iqm"), &LoadOptions::default()).unwrap();
    // `iqmanim "idle" anim_idle.iqm`: its one anim of 2 frames, at the file's 24 fps.
    assert_eq!(scenes(&model), [("idle".to_owned(), 1, 2, 24.0)]);
    assert_eq!(model.frames().len(), 3);
    // Another mesh in the directory is not what this iqm.cfg loads: nothing is added to it.
    std::fs::copy(dir.join("mesh.iqm"), dir.join("other.iqm")).unwrap();
    let other = Model::load_file(dir.join("other.iqm"), &LoadOptions::default()).unwrap();
    assert!(other.animations().is_empty());

    // A missing file is a warning naming the line.
    std::fs::write(
        dir.join("iqm.cfg"),
        "iqmload mesh.iqm\niqmanim \"idle|stand\" anim_idle.iqm 12\niqmanim run run.iqm\n",
    )
    .unwrap();
    let model = Model::load_file(dir.join("mesh.iqm"), &LoadOptions::default()).unwrap();
    assert_eq!(
        scenes(&model),
        [
            ("idle".to_owned(), 1, 2, 12.0),
            ("stand".to_owned(), 1, 2, 12.0)
        ]
    );
    assert!(
        model
            .warnings()
            .iter()
            .any(|w| w.to_string().contains("iqm.cfg: line 3") && w.to_string().contains("run.iqm")),
        "{:?}",
        model.warnings()
    );
    // A file outside the directory is never read.
    let e = refused(
        &dir,
        ("iqm.cfg", "iqmload mesh.iqm\niqmanim idle ../x.iqm\n"),
        "mesh.iqm",
        &LoadOptions::default(),
    );
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
}

#[test]
fn the_red_eclipse_player_takes_its_animations_from_model_iqm_cfg() {
    let test = "the_red_eclipse_player_takes_its_animations_from_model_iqm_cfg";
    let Some(dir) = game_dir(
        "player",
        &[
            ("rea_RE_Player_male.iqm", "RE_Player_male.iqm"),
            ("rea_player_dead.iqm", "dead.iqm"),
            ("rea_player_boost_forward.iqm", "boost_forward.iqm"),
        ],
        test,
    ) else {
        return;
    };
    // The lines of actors/player/player.cfg for these two files, beside the mesh.
    std::fs::write(
        dir.join("RE_Player_male.iqm.cfg"),
        "iqmload \"RE_Player_male.iqm\" player\n\
         iqmanim \"dead\" \"dead.iqm\"\n\
         iqmanim \"boost forward\" \"boost_forward.iqm\" 32\n",
    )
    .unwrap();
    let model = Model::load_file(dir.join("RE_Player_male.iqm"), &LoadOptions::default()).unwrap();
    // dead.iqm's frame rate is 0: without a speed on its line it plays at FTE's 10 fps.
    assert_eq!(
        scenes(&model),
        [
            ("dead".to_owned(), 1, 2, 10.0),
            ("boost forward".to_owned(), 3, 24, 32.0)
        ]
    );
    // Strict mode refuses a line whose file is missing, naming the line.
    let strict = LoadOptions {
        strict: true,
        ..LoadOptions::default()
    };
    let e = refused(
        &dir,
        (
            "RE_Player_male.iqm.cfg",
            "iqmload \"RE_Player_male.iqm\"\niqmanim \"run\" \"run.iqm\"\n",
        ),
        "RE_Player_male.iqm",
        &strict,
    );
    assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
    assert_eq!(e.line(), Some(2), "{e}");
}
