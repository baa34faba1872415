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
    let scenes: Vec<_> = both
        .animations()
        .iter()
        .map(|a| (a.name.to_string_lossy(), a.first_frame, a.frame_count))
        .collect();
    assert_eq!(
        scenes,
        [
            ("jump".to_owned(), 1, 61),
            ("dance".to_owned(), 62, 61),
            ("jump".to_owned(), 123, 61),
            ("dance".to_owned(), 184, 61),
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
