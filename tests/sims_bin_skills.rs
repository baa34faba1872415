//! The 1998 prototype's skill numbers, `ANIMATION.bin` (uncompressed floats: all translations,
//! then all rotations), found where a skill has no CFP; a version-200 skill with neither loads
//! without frames. Hand-made files first, then the four `xskill-*.bin` of the corpus played on
//! their skeletons: first frame on the rest pose, feet on the floor, knees bent forwards.

mod sims_fixtures;
use sims_fixtures::{frame_pose, nod, nod_cfp, through, tiny_skeleton};
mod memory_fs;
use memory_fs::MemoryFs;
mod corpus;

use corpus::corpus_subdir;

use ossa::format::skill_bin;
use ossa::{ErrorCode, Format, LoadOptions, Mat3x4, Model};

/// The nod skill's numbers (as `nod_cfp` holds them): CHEST translations (2), HEAD rotations
/// (4, turning about y).
fn nod_values() -> (Vec<[f32; 3]>, Vec<[f32; 4]>) {
    let t = vec![[0.0, 1.0, 0.0], [0.0, 1.2, 0.1]];
    let r = (0..4)
        .map(|i| {
            let a = i as f32 * 0.2;
            [0.0, a.sin(), 0.0, a.cos()]
        })
        .collect();
    (t, r)
}

/// The nod skill as a version-200 file, `anims/nod.cmx`.
fn nod_200() -> String {
    nod("nod", "xskill-nod", "CHEST").replace("version 300", "version 200")
}

#[test]
fn a_bin_plays_as_its_cfp_does() {
    let skeleton = tiny_skeleton();
    let (t, r) = nod_values();
    let mut with_cfp = MemoryFs::default();
    with_cfp.add("anims/nod.cmx", nod_200());
    with_cfp.add("anims/xskill-nod.cfp", nod_cfp());
    let mut with_bin = MemoryFs::default();
    with_bin.add("anims/nod.cmx", nod_200());
    with_bin.add("anims/xskill-nod.bin", skill_bin::encode_skill(&t, &r));
    let from_cfp = skeleton
        .with_skills_file("anims/nod.cmx", &through(&with_cfp))
        .unwrap();
    let from_bin = skeleton
        .with_skills_file("anims/nod.cmx", &through(&with_bin))
        .unwrap();
    assert_eq!(
        with_bin.asked(),
        [
            "anims/nod.cmx",
            "anims/xskill-nod.cfp",
            "anims/xskill-nod.bin"
        ]
    );
    assert_eq!(from_bin.frames().len(), 5);
    assert_eq!(from_bin.animations(), from_cfp.animations());
    assert!(from_bin.warnings().is_empty(), "{:?}", from_bin.warnings());
    for f in 0..5 {
        let (a, b) = (frame_pose(&from_bin, f), frame_pose(&from_cfp, f));
        for (x, y) in a.iter().zip(&b) {
            for (p, q) in x.m.iter().zip(&y.m) {
                assert!((p - q).abs() < 1e-6, "frame {f}: {x:?} against {y:?}");
            }
        }
    }
    // CHEST's second translation, z as the file has it: (0, 1.2, 0.1) above ROOT at y 3.
    let chest = frame_pose(&from_bin, 3)[1].translation();
    assert!(
        (chest[0] - 0.0).abs() < 1e-6
            && (chest[1] - 4.2).abs() < 1e-6
            && (chest[2] - 0.1).abs() < 1e-6,
        "{chest:?}"
    );
}

#[test]
fn a_cfp_wins_over_a_bin() {
    let (t, _) = nod_values();
    let still = vec![[0.0, 0.0, 0.0, 1.0]; 4];
    let mut fs = MemoryFs::default();
    fs.add("anims/nod.cmx", nod_200());
    fs.add("anims/xskill-nod.cfp", nod_cfp());
    fs.add("anims/xskill-nod.bin", skill_bin::encode_skill(&t, &still));
    let model = tiny_skeleton()
        .with_skills_file("anims/nod.cmx", &through(&fs))
        .unwrap();
    assert_eq!(fs.asked(), ["anims/nod.cmx", "anims/xskill-nod.cfp"]);
    // HEAD turned by 1.2 radians about y (the CFP), where the .bin would keep it still.
    let head = frame_pose(&model, 4)[2];
    assert!((head.m[0] - 1.2f32.cos()).abs() < 1e-5, "{head:?}");
}

#[test]
fn a_bin_of_the_wrong_size_is_refused_naming_it() {
    let (t, r) = nod_values();
    let mut fs = MemoryFs::default();
    fs.add("anims/nod.cmx", nod_200());
    let mut data = skill_bin::encode_skill(&t, &r);
    data.pop();
    fs.add("anims/xskill-nod.bin", data);
    let e = tiny_skeleton()
        .with_skills_file("anims/nod.cmx", &through(&fs))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Truncated);
    assert_eq!(
        e.to_string(),
        "xskill-nod.bin: skill nod: 87 bytes, where the skill's 2 translations and 4 \
         rotations take 88 (12 and 16 bytes each) at byte 0x57"
    );
    // A NaN, at its byte.
    let mut fs = MemoryFs::default();
    fs.add("anims/nod.cmx", nod_200());
    let mut bad = r.clone();
    bad[1][3] = f32::NAN;
    fs.add("anims/xskill-nod.bin", skill_bin::encode_skill(&t, &bad));
    let e = tiny_skeleton()
        .with_skills_file("anims/nod.cmx", &through(&fs))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert_eq!(e.detail().offset, Some(24 + 16 + 12), "{e}");
    assert!(e.to_string().contains("rotation 1"), "{e}");
}

#[test]
fn a_version_200_skill_without_numbers_has_no_frames() {
    let mut fs = MemoryFs::default();
    fs.add("anims/nod.cmx", nod_200());
    let skeleton = tiny_skeleton();
    let model = skeleton
        .with_skills_file("anims/nod.cmx", &through(&fs))
        .unwrap();
    assert_eq!(model.frames().len(), 1);
    let scene = &model.animations()[0];
    assert_eq!(scene.name.to_string(), "nod");
    assert_eq!((scene.first_frame, scene.frame_count), (1, 0));
    assert_eq!(
        model
            .warnings()
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>(),
        [
            "nod.cmx: skill nod: neither anims/xskill-nod.cfp nor anims/xskill-nod.bin exists: \
          the skill has no frames"
        ]
    );
    let e = model.animation_blend(0, 0.0).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert_eq!(e.to_string(), "animation 0 (nod) has no frames to play");
    // A retail (version 300) skill without its CFP is a broken install.
    let mut fs = MemoryFs::default();
    fs.add("anims/nod.cmx", nod("nod", "xskill-nod", "CHEST"));
    let e = skeleton
        .with_skills_file("anims/nod.cmx", &through(&fs))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
}

#[cfg(feature = "gltf")]
#[test]
fn a_scene_without_frames_is_left_out_of_gltf() {
    let mut fs = MemoryFs::default();
    fs.add("anims/nod.cmx", nod_200());
    fs.add("anims/xskill-nod.cfp", nod_cfp());
    fs.add(
        "anims/none.cmx",
        nod("none", "xskill-none", "CHEST").replace("version 300", "version 200"),
    );
    let model = tiny_skeleton()
        .with_skills_file("anims/nod.cmx", &through(&fs))
        .and_then(|m| m.with_skills_file("anims/none.cmx", &through(&fs)))
        .unwrap();
    assert_eq!(model.animations().len(), 2);
    let gltf = model.save(Format::Gltf).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&gltf).unwrap();
    let names: Vec<&str> = json["animations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["nod"]);
}

// ---------------------------------------------------------------------------------------------
// The corpus: the four skills with numbers in `proto1998/`
// ---------------------------------------------------------------------------------------------

/// Model-space y of `bone` in frame `f`.
fn bone_at(model: &Model, poses: &[Mat3x4], bone: &str) -> [f32; 3] {
    let b = model
        .find_bone(bone)
        .unwrap_or_else(|| panic!("no bone {bone}"));
    poses[b as usize].translation()
}

#[test]
fn corpus_bin_skills_stand_on_the_floor() {
    let Some(dir) = corpus_subdir("sims/proto1998", "corpus_bin_skills_stand_on_the_floor") else {
        return;
    };
    // (skill file, frames, fps)
    let skills = [
        ("adult-greet01.cmx", 91, 91.0 * 1000.0 / 3033.0),
        ("adult-door-knock.cmx", 99, 0.0),
        ("adult-door-pull-open.cmx", 98, 0.0),
        ("adult-door-push-close.cmx", 98, 0.0),
    ];
    for (file, frames, fps) in skills {
        let path = dir.join(file);
        let skeleton = Model::load_file(&path, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let model = skeleton
            .with_skills_file(&path, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(
            model.warnings().is_empty(),
            "{file}: {:?}",
            model.warnings()
        );
        let scene = &model.animations()[0];
        assert_eq!(
            (scene.first_frame, scene.frame_count),
            (1, frames),
            "{file}"
        );
        if fps > 0.0 {
            assert!(
                (scene.fps - fps as f32).abs() < 1e-3,
                "{file}: {}",
                scene.fps
            );
        }
        let rest = frame_pose(&model, 0);
        for f in 1..=frames {
            let poses = frame_pose(&model, f);
            let y = |b: &str| bone_at(&model, &poses, b)[1];
            let z = |b: &str| bone_at(&model, &poses, b)[2];
            let lowest = ["L_FOOT", "R_FOOT", "L_TOE0", "R_TOE0"]
                .map(y)
                .into_iter()
                .fold(f32::INFINITY, f32::min);
            assert!(
                (0.0..0.08).contains(&lowest),
                "{file} frame {f}: lowest foot at {lowest}"
            );
            assert!(
                y("HEAD") - y("PELVIS") > 1.7,
                "{file} frame {f}: head not above the pelvis"
            );
            for (hip, knee, ankle) in [("L_LEG", "L_LEG1", "L_FOOT"), ("R_LEG", "R_LEG1", "R_FOOT")]
            {
                let forward = z(knee) - (z(hip) + z(ankle)) / 2.0;
                assert!(
                    forward > 0.0,
                    "{file} frame {f}: {knee} bent backwards ({forward})"
                );
            }
        }
        // The greeting and the knock start on their file's rest pose, bit for bit.
        if file.contains("greet") || file.contains("knock") {
            let first = frame_pose(&model, 1);
            for (b, (a, r)) in first.iter().zip(&rest).enumerate() {
                for (p, q) in a.m.iter().zip(&r.m) {
                    assert!((p - q).abs() < 1e-5, "{file} bone {b}: {a:?} against {r:?}");
                }
            }
        }
    }
}

#[test]
fn corpus_skills_without_numbers_load_frameless() {
    let Some(dir) = corpus_subdir(
        "sims/proto1998",
        "corpus_skills_without_numbers_load_frameless",
    ) else {
        return;
    };
    let path = dir.join("Adult-argue.cmx");
    let skeleton =
        Model::load_file(dir.join("adult-greet01.cmx"), &LoadOptions::default()).unwrap();
    let model = skeleton
        .with_skills_file(&path, &LoadOptions::default())
        .unwrap();
    assert!(!model.animations().is_empty());
    for (a, scene) in model.animations().iter().enumerate() {
        assert_eq!(scene.frame_count, 0, "scene {a}");
    }
    assert_eq!(model.frames().len(), 1);
    let warnings: Vec<String> = model.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings.len(), model.animations().len(), "{warnings:?}");
    assert!(
        warnings[0].contains(".bin exists: the skill has no frames"),
        "{warnings:?}"
    );
}

#[test]
fn truncated_or_flipped_bins_fail_cleanly_or_play_finite_poses() {
    let (t, r) = nod_values();
    let data = skill_bin::encode_skill(&t, &r);
    let skeleton = tiny_skeleton();
    let play = |bin: Vec<u8>| {
        let mut fs = MemoryFs::default();
        fs.add("anims/nod.cmx", nod_200());
        fs.add("anims/xskill-nod.bin", bin);
        skeleton.with_skills_file("anims/nod.cmx", &through(&fs))
    };
    for len in 0..data.len() {
        let e = play(data[..len].to_vec()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Truncated, "{len} bytes: {e}");
        assert_eq!(e.detail().offset, Some(len as u64), "{e}");
    }
    let mut longer = data.clone();
    longer.push(0);
    let e = play(longer).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert_eq!(e.detail().offset, Some(data.len() as u64), "{e}");
    let (mut played, mut refused) = (0, 0);
    for bit in 0..data.len() * 8 {
        let mut flipped = data.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        match play(flipped) {
            Ok(model) => {
                played += 1;
                for f in 0..model.frames().len() as u32 {
                    for pose in frame_pose(&model, f) {
                        assert!(pose.m.iter().all(|v| v.is_finite()), "bit {bit}: {pose:?}");
                    }
                }
            }
            Err(e) => {
                refused += 1;
                // A NaN or infinity is malformed; a pose beyond 1e9 units is over the limit.
                assert!(
                    matches!(e.code(), ErrorCode::Malformed | ErrorCode::Limit),
                    "bit {bit}: {e}"
                );
            }
        }
    }
    // An exponent bit flipped to all ones makes a NaN or infinity; most flips give other numbers.
    assert!(
        played > 600 && refused > 0,
        "{played} played, {refused} refused"
    );
}
