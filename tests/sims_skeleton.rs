//! The Sims 1 character files: CMX/BCF skeletons, suits and skills, and the CFP streams skills
//! read. Rest-pose joints are checked against an independent reading of the file (its own line
//! parser and f64 quaternion math, FORMATS §4.3), skills against what the files declare, and
//! hostile inputs against clean errors.

mod corpus;

use corpus::{corpus_subdir, files_ending};

mod counting_alloc;
mod sims_ref;

use std::path::{Path, PathBuf};

use counting_alloc::{budget, peak_of};
use sims_ref::{M3, Q4, RawBone, joints, qdot, qnorm, raw_skeleton, rot, transpose};

mod load_options;
use load_options::strict;
use ossa::format::cfp;
use ossa::format::cmx::{self, CharacterFile};
use ossa::{ErrorCode, Format, FrameBlend, LoadOptions, Mat3x4, Model};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

// ---------------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------------

fn sims_dir(test: &str) -> Option<PathBuf> {
    corpus_subdir("sims", test)
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Corpus files whose names end with `ext` (ASCII case ignored), sorted.
fn files(dir: &Path, ext: &str) -> Vec<String> {
    files_ending(dir, &[ext])
}

fn load(data: &[u8], format: Format) -> Model {
    Model::load(
        data,
        &LoadOptions {
            format,
            ..LoadOptions::default()
        },
    )
    .unwrap()
}

/// Every character file of the corpus (text and binary), parsed.
fn character_files(dir: &Path) -> Vec<(String, CharacterFile)> {
    let mut out = Vec::new();
    for name in files(dir, ".cmx").into_iter().chain(files(dir, ".bcf")) {
        let file = cmx::parse(&read(dir, &name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        out.push((name, file));
    }
    out
}

/// The corpus CFP a skill reads: its animation name with the corpus's `so_`/`olt_` prefix.
fn cfp_file(dir: &Path, animation: &str) -> Option<String> {
    let want = format!("{}.cfp", animation.to_ascii_lowercase());
    files(dir, ".cfp").into_iter().find(|n| {
        let l = n.to_ascii_lowercase();
        l == want || l.strip_prefix("so_") == Some(&want) || l.strip_prefix("olt_") == Some(&want)
    })
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Model-space matrices of one frame of a model.
fn frame_pose(model: &Model, frame: u32) -> Vec<Mat3x4> {
    let mut out = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, &mut out)
        .unwrap();
    out
}

fn bone(model: &Model, name: &str) -> usize {
    model
        .find_bone(name)
        .unwrap_or_else(|| panic!("no bone {name}")) as usize
}

const SIMS_BONES: [&str; 29] = [
    "ROOT",
    "PELVIS",
    "SPINE",
    "SPINE1",
    "SPINE2",
    "NECK",
    "HEAD",
    "L_ARM",
    "L_ARM1",
    "L_ARM2",
    "L_HAND",
    "L_FINGER0",
    "R_ARM",
    "R_ARM1",
    "R_ARM2",
    "R_HAND",
    "R_FINGER0",
    "L_LEG",
    "L_LEG1",
    "L_FOOT",
    "L_TOE0",
    "L_TOE01",
    "L_TOE02",
    "R_LEG",
    "R_LEG1",
    "R_FOOT",
    "R_TOE0",
    "R_TOE01",
    "R_TOE02",
];

const FEET: [&str; 8] = [
    "L_FOOT", "R_FOOT", "L_TOE0", "R_TOE0", "L_TOE01", "R_TOE01", "L_TOE02", "R_TOE02",
];

// ---------------------------------------------------------------------------------------------
// Skeletons
// ---------------------------------------------------------------------------------------------

#[test]
fn skeletons_match_an_independent_reading() {
    let Some(dir) = sims_dir("skeletons_match_an_independent_reading") else {
        return;
    };
    for (file, skeleton, root_y) in [
        ("so_adult-skeleton.cmx", "adult", 3.01362),
        ("so_child-skeleton.cmx", "child", f64::NAN),
    ] {
        let data = read(&dir, file);
        let model = load(&data, Format::SimsCmx);
        assert_eq!(model.format(), Format::SimsCmx);
        assert_eq!((model.up_axis(), model.handedness()), (1, -1));
        assert_eq!(model.meshes().len(), 0);
        assert_eq!(model.frames().len(), 1);
        assert_eq!(model.frames()[0].name.to_string(), "rest");
        assert_eq!(model.bones().len(), 29, "{file}");
        let mut names: Vec<String> = model.bones().iter().map(|b| b.name.to_string()).collect();
        assert_eq!(names[0], "ROOT");
        assert_eq!(model.bones()[0].parent, -1);
        assert_eq!(model.bones()[bone(&model, "PELVIS")].parent, 0);
        names.sort();
        let mut want: Vec<String> = SIMS_BONES.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(names, want, "{file}");

        let raw = raw_skeleton(&data);
        let reference = joints(&raw);
        let bind = model.skeleton().bind_pose();
        for (i, (b, (r, t))) in raw.iter().zip(&reference).enumerate() {
            let mb = &model.bones()[i];
            assert_eq!(mb.name.to_string(), b.name);
            let parent = if b.parent == "NULL" {
                -1
            } else {
                raw.iter().position(|p| p.name == b.parent).unwrap() as i32
            };
            assert_eq!(mb.parent, parent, "{file} {}", b.name);
            let got = bind[i];
            for a in 0..3 {
                assert!(
                    (got.translation()[a] as f64 - t[a]).abs() < 1e-4,
                    "{file} {}: joint {:?} vs {t:?}",
                    b.name,
                    got.translation()
                );
                for (c, want) in r[a].iter().enumerate() {
                    assert!((got.m[a * 4 + c] as f64 - want).abs() < 1e-4);
                }
            }
        }
        let y = |name: &str| reference[raw.iter().position(|b| b.name == name).unwrap()].1[1];
        let x = |name: &str| reference[raw.iter().position(|b| b.name == name).unwrap()].1[0];
        if root_y.is_finite() {
            assert!((y("ROOT") - root_y).abs() < 1e-3, "ROOT at {}", y("ROOT"));
        }
        assert!(y("HEAD") > y("PELVIS") + 1.0, "head above the pelvis");
        assert!(y("NECK") > y("SPINE2") && y("SPINE2") > y("PELVIS"));
        let lowest = FEET.iter().map(|f| y(f)).fold(f64::INFINITY, f64::min);
        assert!(lowest.abs() < 0.05, "{file}: lowest foot joint at {lowest}");
        assert!((x("L_LEG") - x("R_LEG")).abs() > 0.3, "legs apart");
        eprintln!(
            "{skeleton}: ROOT y {:.4}, PELVIS y {:.3}, HEAD y {:.3}, lowest foot joint y {:.4}, legs x {:.3}/{:.3}",
            y("ROOT"),
            y("PELVIS"),
            y("HEAD"),
            lowest,
            x("L_LEG"),
            x("R_LEG")
        );

        // The textbook R(q) instead of its transpose would put the head inside the body.
        let wrong: Vec<RawBone> = raw
            .iter()
            .map(|b| RawBone {
                name: b.name.clone(),
                parent: b.parent.clone(),
                t: b.t,
                q: [-b.q[0], -b.q[1], -b.q[2], b.q[3]],
            })
            .collect();
        let w = joints(&wrong);
        let wy = |name: &str| w[raw.iter().position(|b| b.name == name).unwrap()].1[1];
        assert!(wy("HEAD") < y("HEAD") - 1.0);

        // The whole structure, as parse gives it.
        let parsed = cmx::parse(&data).unwrap();
        assert_eq!(parsed.version, Some(300));
        assert_eq!(parsed.skeletons.len(), 1);
        assert_eq!(parsed.skeletons[0].name.to_string(), skeleton);
        assert!(parsed.suits.is_empty() && parsed.skills.is_empty());
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        for b in &parsed.skeletons[0].bones {
            let len: f32 = b.rotation.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((len - 1.0).abs() < 1e-6);
        }
    }
}

#[test]
fn corpus_meshes_sit_on_the_rest_pose() {
    // FORMATS §4.3: on the adult rest pose the body spans y = -0.01 .. 5.15 and the head
    // 4.86 .. 5.59. Skipped while SKN files do not load.
    let Some(dir) = sims_dir("corpus_meshes_sit_on_the_rest_pose") else {
        return;
    };
    let skeleton = load(&read(&dir, "so_adult-skeleton.cmx"), Format::SimsCmx);
    for (file, lo, hi) in [
        ("so_xskin-b001mafit_01-PELVIS-BODY.skn", -0.01, 5.15),
        ("so_xskin-C003MA_RomanCrew-HEAD-HEAD.skn", 4.86, 5.59),
    ] {
        let options = LoadOptions {
            format: Format::SimsSkn,
            ..LoadOptions::default()
        };
        let meshes = match Model::load(&read(&dir, file), &options) {
            Ok(m) => m,
            Err(e) if e.code() == ErrorCode::Unsupported => {
                eprintln!("{file}: {e}; skipping");
                continue;
            }
            Err(e) => panic!("{file}: {e}"),
        };
        let bound = Model::bind(&meshes, &skeleton).unwrap();
        let (mins, maxs) = bound.bounds();
        assert!(
            (mins[1] - lo).abs() < 0.01 && (maxs[1] - hi).abs() < 0.01,
            "{file}: {mins:?} .. {maxs:?}"
        );
    }
}

#[test]
fn skeleton_fields_and_choice() {
    let Some(dir) = sims_dir("skeleton_fields_and_choice") else {
        return;
    };
    let data = read(&dir, "so_adult-skeleton.cmx");
    let file = cmx::parse(&data).unwrap();
    let sk = &file.skeletons[0];
    let pelvis = sk
        .bones
        .iter()
        .find(|b| b.name.to_string() == "PELVIS")
        .unwrap();
    assert_eq!(pelvis.parent.as_ref().unwrap().to_string(), "ROOT");
    assert_eq!(pelvis.property_lists.len(), 1);
    assert_eq!(pelvis.property_lists[0][0].key.to_string(), "name");
    assert_eq!(pelvis.property_lists[0][0].value.to_string(), "adult");
    let hand = sk
        .bones
        .iter()
        .find(|b| b.name.to_string() == "R_HAND")
        .unwrap();
    assert_eq!((hand.wiggle_value, hand.wiggle_power), (700000.0, 0.05));
    assert!(!hand.can_translate && hand.can_rotate && hand.can_blend);
    let root = &sk.bones[0];
    assert!(root.parent.is_none() && root.parent_index == -1);
    assert!(root.can_translate && root.can_rotate);

    // The skeleton is chosen by name (ASCII case ignored); an unknown name is NotFound.
    for name in ["adult", "ADULT"] {
        let m = Model::load(
            &data,
            &LoadOptions {
                format: Format::SimsCmx,
                skeleton: Some(name.to_owned()),
                ..LoadOptions::default()
            },
        )
        .unwrap();
        assert_eq!(m.bones().len(), 29);
    }
    let e = Model::load(
        &data,
        &LoadOptions {
            format: Format::SimsCmx,
            skeleton: Some("child".to_owned()),
            ..LoadOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert!(e.to_string().contains("adult"), "{e}");

    // Detected by extension.
    let m = Model::load(
        &data,
        &LoadOptions {
            name: Some("adult-skeleton.cmx".to_owned()),
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert_eq!(m.format(), Format::SimsCmx);
}

#[test]
fn bcf_twin_of_a_skeleton_loads_the_same() {
    // The corpus has no BCF skeleton: write the adult one as BCF from the parsed text.
    let Some(dir) = sims_dir("bcf_twin_of_a_skeleton_loads_the_same") else {
        return;
    };
    let data = read(&dir, "so_adult-skeleton.cmx");
    let text = cmx::parse(&data).unwrap();
    let bcf = write_bcf(&text);
    let binary = cmx::parse_bcf(&bcf).unwrap();
    assert_eq!(binary.version, None);
    assert_eq!(binary.skeletons, text.skeletons);
    let a = load(&data, Format::SimsCmx);
    let b = load(&bcf, Format::SimsBcf);
    assert_eq!(b.format(), Format::SimsBcf);
    assert_eq!(a.bones(), b.bones());
    assert_eq!(a.skeleton().bind_pose(), b.skeleton().bind_pose());
}

// ---------------------------------------------------------------------------------------------
// Suits and skills
// ---------------------------------------------------------------------------------------------

#[test]
fn suits_list_their_skins() {
    let Some(dir) = sims_dir("suits_list_their_skins") else {
        return;
    };
    let censor = cmx::parse(&read(&dir, "so_child-censor.cmx")).unwrap();
    assert!(censor.skeletons.is_empty() && censor.skills.is_empty());
    let suit = &censor.suits[0];
    assert_eq!(suit.name.to_string(), "child-censor");
    assert_eq!(suit.suit_type, 1);
    let skins: Vec<(String, u32)> = suit
        .skins
        .iter()
        .map(|s| (s.bone.to_string(), s.censor_flags))
        .collect();
    assert_eq!(
        skins,
        [
            ("PELVIS", 1),
            ("SPINE2", 2),
            ("R_HAND", 16),
            ("L_HAND", 8),
            ("HEAD", 4),
            ("R_FOOT", 64),
            ("L_FOOT", 32)
        ]
        .map(|(b, f)| (b.to_owned(), f))
    );
    assert_eq!(
        suit.skins[0].name.to_string(),
        "xskin-child-censor-PELVIS-PELVISBOX"
    );
    let nerd = cmx::parse(&read(&dir, "so_C004MC_nerd.cmx")).unwrap();
    let names: Vec<String> = nerd.suits[0]
        .skins
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "xskin-c004mc_nerd-HEAD-HEAD",
            "xskin-c004mc_nerd-HEAD-NERDSPECS"
        ]
    );
    // Every suit file of the corpus parses, and loads as a model with no bones.
    let mut suits = 0;
    for (name, file) in character_files(&dir) {
        if file.skeletons.is_empty() && !file.suits.is_empty() {
            let m = load(&read(&dir, &name), Format::SimsCmx);
            assert!(m.bones().is_empty() && m.frames().is_empty());
            for s in &file.suits {
                assert!(!s.skins.is_empty(), "{name}");
                for k in &s.skins {
                    assert!(k.name.to_string().starts_with("xskin-"), "{name}");
                }
            }
            suits += 1;
        }
    }
    eprintln!("suit files: {suits}");
    assert!(suits >= 7);
}

#[test]
fn skills_declare_motions_that_fit() {
    let Some(dir) = sims_dir("skills_declare_motions_that_fit") else {
        return;
    };
    let idle = cmx::parse(&read(&dir, "so_adult-idle1.cmx")).unwrap();
    let s = &idle.skills[0];
    assert_eq!(s.name.to_string(), "a2o-idle1");
    assert_eq!(s.animation.to_string(), "xskill-A2O-idle1");
    assert_eq!((s.duration, s.distance, s.moving), (1999.0, 0.0, false));
    assert_eq!((s.translation_count, s.rotation_count), (120, 1740));
    assert_eq!(s.motions.len(), 29);
    let pelvis = &s.motions[1];
    assert_eq!(pelvis.bone.to_string(), "PELVIS");
    assert_eq!(
        (
            pelvis.frame_count,
            pelvis.has_translation,
            pelvis.translation_offset,
            pelvis.rotation_offset
        ),
        (60, true, 60, 60)
    );
    assert!(!s.motions[2].has_translation && s.motions[2].translation_offset == -1);

    let walk = cmx::parse(&read(&dir, "so_ross-walking-loop.cmx")).unwrap();
    let start = &walk.skills[0];
    assert!(start.moving && (start.distance - 1.62151).abs() < 1e-6);
    let tp = &start.motions[0].time_property_lists[0][0];
    assert_eq!(tp.time, 1533);
    assert_eq!(tp.properties[0].key.to_string(), "footstep");
    assert_eq!(tp.properties[0].value.to_string(), "1");

    // Every skill of the corpus: its motions fit its value counts, and one frame count and
    // duration hold for all its motions.
    let mut n = 0;
    for (name, file) in character_files(&dir) {
        for s in &file.skills {
            let frames = s.motions[0].frame_count;
            for m in &s.motions {
                assert_eq!(m.frame_count, frames, "{name} {}", s.name);
                assert_eq!(m.duration, s.duration, "{name} {}", s.name);
                if m.has_translation {
                    assert!(m.translation_offset as u32 + frames <= s.translation_count);
                }
                if m.has_rotation {
                    assert!(m.rotation_offset as u32 + frames <= s.rotation_count);
                }
            }
            n += 1;
        }
    }
    eprintln!("skills in the corpus's character files: {n}");
}

#[test]
fn bcf_files_parse_and_match_their_text_twins() {
    let Some(dir) = sims_dir("bcf_files_parse_and_match_their_text_twins") else {
        return;
    };
    let bcfs = files(&dir, ".bcf");
    assert!(!bcfs.is_empty());
    for name in &bcfs {
        let data = read(&dir, name);
        let file = cmx::parse_bcf(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(cmx::parse(&data).unwrap(), file);
        assert!(file.warnings.is_empty());
        let skills: Vec<String> = file
            .skills
            .iter()
            .map(|s| {
                format!(
                    "{} ({}, {} motions x {} frames, {} ms, {}T/{}R)",
                    s.name,
                    s.animation,
                    s.motions.len(),
                    s.motions.first().map_or(0, |m| m.frame_count),
                    s.duration,
                    s.translation_count,
                    s.rotation_count
                )
            })
            .collect();
        eprintln!(
            "{name}: {} skeletons, {} suits, {} skills: {}",
            file.skeletons.len(),
            file.suits.len(),
            file.skills.len(),
            skills.join("; ")
        );
        // Loading one gives a model without bones (no skeleton in it).
        let m = load(&data, Format::SimsBcf);
        assert!(m.bones().is_empty());
    }
    // The walking BCF is the binary twin of the walking CMX.
    let text = cmx::parse(&read(&dir, "so_ross-walking-loop.cmx")).unwrap();
    let binary = cmx::parse_bcf(&read(&dir, "olt_ross-walking-loop.cmx.bcf")).unwrap();
    assert_eq!(text.skills.len(), binary.skills.len());
    for (a, b) in text.skills.iter().zip(&binary.skills) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.animation, b.animation);
        assert_eq!(
            (a.translation_count, a.rotation_count, a.moving),
            (b.translation_count, b.rotation_count, b.moving)
        );
        assert!((a.duration - b.duration).abs() < 1e-3 && (a.distance - b.distance).abs() < 1e-4);
        assert_eq!(a.motions.len(), b.motions.len());
        for (m, n) in a.motions.iter().zip(&b.motions) {
            assert_eq!(
                (
                    &m.bone,
                    m.frame_count,
                    m.translation_offset,
                    m.rotation_offset
                ),
                (
                    &n.bone,
                    n.frame_count,
                    n.translation_offset,
                    n.rotation_offset
                )
            );
            assert_eq!(m.time_property_lists, n.time_property_lists);
            assert_eq!(m.property_lists, n.property_lists);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// CFP
// ---------------------------------------------------------------------------------------------

#[test]
fn every_corpus_cfp_decodes() {
    let Some(dir) = sims_dir("every_corpus_cfp_decodes") else {
        return;
    };
    let characters = character_files(&dir);
    for name in files(&dir, ".cfp") {
        let data = read(&dir, &name);
        let skill = characters
            .iter()
            .flat_map(|(_, f)| &f.skills)
            .find(|s| cfp_file(&dir, &s.animation.to_string()).as_deref() == Some(&name));
        let total = cfp::count_values(&data).unwrap();
        // Without its skill, assume the Sims skeleton: every bone rotates, ROOT and PELVIS move.
        let (t, r) = match skill {
            Some(s) => (s.translation_count as usize, s.rotation_count as usize),
            None => {
                assert_eq!(total % (2 * 3 + 29 * 4), 0, "{name}: {total} values");
                let frames = total / (2 * 3 + 29 * 4);
                (2 * frames, 29 * frames)
            }
        };
        assert_eq!(total, 3 * t + 4 * r, "{name}");
        let values = cfp::decode(&data, total).unwrap();
        assert!(values.iter().all(|v| v.is_finite()));
        let (ts, rs) = cfp::decode_skill(&data, t, r).unwrap();
        let worst = rs
            .iter()
            .map(|q| (q.iter().map(|v| v * v).sum::<f32>().sqrt() - 1.0).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 0.02, "{name}: quaternion length off 1 by {worst}");
        assert!(ts.iter().flatten().all(|v| v.abs() < 100.0));
        // Lossless round trip, and the groups as the skill reads them.
        assert_eq!(cfp::decode(&cfp::encode(&values), total).unwrap(), values);
        let again = cfp::encode_skill(&ts, &rs, None);
        assert_eq!(
            cfp::decode_skill(&again, t, r).unwrap(),
            (ts.clone(), rs.clone())
        );
        let lossy = cfp::encode_skill(&ts, &rs, Some(1e-3));
        let (lt, lr) = cfp::decode_skill(&lossy, t, r).unwrap();
        for (a, b) in ts.iter().flatten().zip(lt.iter().flatten()) {
            assert!((a - b).abs() <= 1e-3);
        }
        for (a, b) in rs.iter().flatten().zip(lr.iter().flatten()) {
            assert!((a - b).abs() <= 1e-3);
        }
        // Re-encoding within the tools' 1e-3 gives back the original file's size to 1 %; for
        // the idle, the original bytes exactly (every group starts with a full value, deltas
        // track the decoder's sum), which confirms the decoder's semantics.
        assert!(
            lossy.len().abs_diff(data.len()) * 100 <= data.len(),
            "{name}"
        );
        if name.eq_ignore_ascii_case("so_xskill-A2O-idle1.cfp") {
            assert_eq!(lossy, data);
        }
        eprintln!(
            "{name}: {} bytes, {total} values ({t} translations, {r} rotations{}), worst |q|-1 {worst:.1e}; re-encoded {} bytes lossless, {} within 1e-3{}",
            data.len(),
            if skill.is_some() {
                ""
            } else {
                ", no skill: assumed 2 moving bones of 29"
            },
            again.len(),
            lossy.len(),
            if lossy == data { " (identical)" } else { "" }
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Skills played on the skeleton
// ---------------------------------------------------------------------------------------------

/// Largest rotation angle (radians) between two parent-relative poses.
fn angle_between(a: &Mat3x4, b: &Mat3x4) -> f32 {
    let qa = a.decompose().rotation;
    let qb = b.decompose().rotation;
    2.0 * qa.dot(qb).abs().min(1.0).acos()
}

/// How far (per coordinate) a joint may lie outside the box its two frames span while the
/// scene blends them. A turning parent carries a child along an arc, which bulges out of the
/// chord by `tan(turn / 4) / 2` of its length, 0.13 for the 60 degrees a chain of bones may turn
/// in a frame; and bones that turn against each other can swing a joint out and back to nearly
/// where it was (the corpus: at most 0.002 where a joint moves less than 0.05).
const BETWEEN_PER_STEP: f32 = 0.15;
const BETWEEN_ABSOLUTE: f32 = 0.005;

/// Checks scene `scene` of `model` at a quarter, half and three quarters of the way between each
/// frame and the next: the blend is of those two frames with those weights, and each joint of
/// the posed skeleton lies within the per-coordinate span of its two frames' joints, give or take
/// `BETWEEN_ABSOLUTE` plus `BETWEEN_PER_STEP` of the distance the joint moves between them.
/// Answers the largest distance found outside a span.
fn between_frames_within_span(model: &Model, scene: usize, what: &str) -> f32 {
    let anim = &model.animations()[scene];
    let fps = f64::from(anim.fps);
    let frames: Vec<Vec<Mat3x4>> = (0..anim.frame_count)
        .map(|f| frame_pose(model, anim.first_frame + f))
        .collect();
    let mut worst = 0.0f32;
    for f in 0..anim.frame_count.saturating_sub(1) {
        let (a, b) = (&frames[f as usize], &frames[f as usize + 1]);
        for t in [0.25, 0.5, 0.75] {
            let seconds = (f64::from(f) + t) / fps;
            let (blends, n) = model.animation_blend(scene, seconds).unwrap();
            assert_eq!(n, 2, "{what} frame {f} + {t}");
            assert_eq!(
                (blends[0].frame, blends[1].frame),
                (anim.first_frame + f, anim.first_frame + f + 1),
                "{what} frame {f} + {t}"
            );
            assert!(
                (f64::from(blends[1].weight) - t).abs() < 1e-4
                    && (f64::from(blends[0].weight) - (1.0 - t)).abs() < 1e-4,
                "{what} frame {f} + {t}: {blends:?}"
            );
            let mut posed = vec![Mat3x4::IDENTITY; model.bones().len()];
            model.pose_frames(&blends[..n], None, &mut posed).unwrap();
            for (bone, p) in posed.iter().enumerate() {
                let (pa, pb, pp) = (
                    a[bone].translation(),
                    b[bone].translation(),
                    p.translation(),
                );
                let step = (0..3).map(|k| (pa[k] - pb[k]).powi(2)).sum::<f32>().sqrt();
                let tolerance = BETWEEN_ABSOLUTE + BETWEEN_PER_STEP * step;
                for k in 0..3 {
                    let (lo, hi) = (pa[k].min(pb[k]), pa[k].max(pb[k]));
                    let out = (lo - pp[k]).max(pp[k] - hi).max(0.0);
                    worst = worst.max(out);
                    assert!(
                        out <= tolerance,
                        "{what} frame {f} + {t}, bone {bone} coordinate {k}: {} outside \
                         {lo}..{hi} by more than {tolerance}",
                        pp[k]
                    );
                }
            }
        }
    }
    worst
}

#[test]
fn corpus_skills_play_on_the_adult_skeleton() {
    let Some(dir) = sims_dir("corpus_skills_play_on_the_adult_skeleton") else {
        return;
    };
    let skeleton = load(&read(&dir, "so_adult-skeleton.cmx"), Format::SimsCmx);
    let rest: Vec<Mat3x4> = skeleton.skeleton().frame_poses(0).unwrap().to_vec();
    let mut played = 0;
    for (file, character) in character_files(&dir) {
        for (k, s) in character.skills.iter().enumerate() {
            let Some(cfp_name) = cfp_file(&dir, &s.animation.to_string()) else {
                continue;
            };
            let data = read(&dir, &cfp_name);
            let (frames, poses, anim) = cmx::skill_frames(&skeleton, &character, k, &data)
                .unwrap_or_else(|e| panic!("{file} {}: {e}", s.name));
            let n = s.motions[0].frame_count as usize;
            assert_eq!(frames.len(), n);
            assert_eq!(poses.len(), n * 29);
            assert_eq!(anim.frame_count as usize, n);
            assert_eq!(anim.first_frame, 1);
            let ms = n as f32 * 1000.0 / anim.fps;
            assert!((ms - s.duration).abs() < 0.5, "{}: {ms} ms", s.name);
            assert!(
                (anim.fps - 30.0).abs() < 0.5,
                "{}: {} fps",
                s.name,
                anim.fps
            );

            // Bones only rotated keep their rest translation.
            for m in &s.motions {
                let b = bone(&skeleton, &m.bone.to_string());
                if !m.has_translation {
                    for f in 0..n {
                        assert_eq!(poses[f * 29 + b].translation(), rest[b].translation());
                    }
                }
            }
            // Continuity: no bone turns more than 40 degrees or moves more than 0.3 between frames
            // (the twist dance snaps its head 26 degrees in one frame; a misread value would
            // jump much further).
            let mut worst_turn = 0.0f32;
            let mut worst_move = 0.0f32;
            for f in 1..n {
                for b in 0..29 {
                    let (p, q) = (&poses[(f - 1) * 29 + b], &poses[f * 29 + b]);
                    worst_turn = worst_turn.max(angle_between(p, q));
                    let (a, c) = (p.translation(), q.translation());
                    let d = ((a[0] - c[0]).powi(2) + (a[1] - c[1]).powi(2) + (a[2] - c[2]).powi(2))
                        .sqrt();
                    worst_move = worst_move.max(d);
                }
            }
            assert!(worst_turn < 40f32.to_radians(), "{}: {worst_turn}", s.name);
            assert!(worst_move < 0.3, "{}: {worst_move}", s.name);

            // The feet stay near the floor on every frame.
            let model = cmx::with_skill(&skeleton, &character, k, &data).unwrap();
            assert_eq!(model.frames().len(), n + 1);
            assert_eq!(model.animations()[0].name, s.name);
            let mut low = (f32::INFINITY, f32::NEG_INFINITY);
            let mut root = (f32::INFINITY, f32::NEG_INFINITY);
            let mut head_min = f32::INFINITY;
            for f in 1..=n as u32 {
                let pose = frame_pose(&model, f);
                let lowest = FEET
                    .iter()
                    .map(|b| pose[bone(&model, b)].translation()[1])
                    .fold(f32::INFINITY, f32::min);
                low = (low.0.min(lowest), low.1.max(lowest));
                let ry = pose[0].translation()[1];
                root = (root.0.min(ry), root.1.max(ry));
                head_min = head_min.min(pose[bone(&model, "HEAD")].translation()[1]);
            }
            assert!(
                low.0 > -0.15 && low.1 < 0.15,
                "{}: lowest foot joint {low:?}",
                s.name
            );
            assert!(head_min > 4.5, "{}: head at {head_min}", s.name);

            // Between frames the pose moves from one frame's to the next: at times strictly
            // between frames f and f + 1 the scene blends those two, and every joint lies within
            // the box the two frames' joints span (a rotation carries a child along an arc, which
            // bulges out of the box by a little).
            let worst_out = between_frames_within_span(&model, 0, &s.name.to_string());
            eprintln!(
                "{}: between frames, joints at most {worst_out:.5} outside the span of the frames' joints",
                s.name
            );
            eprintln!(
                "{}: {n} frames, {} ms, {:.2} fps, looping {}; lowest foot joint y {:.3}..{:.3}; ROOT y {:.3}..{:.3}; head y >= {head_min:.2}; largest step {:.1} deg / {:.3}",
                s.name,
                s.duration,
                anim.fps,
                anim.looping,
                low.0,
                low.1,
                root.0,
                root.1,
                worst_turn.to_degrees(),
                worst_move
            );
            played += 1;
        }
    }
    assert!(played >= 4, "{played} skills played");
}

// ---------------------------------------------------------------------------------------------
// Hand-made files
// ---------------------------------------------------------------------------------------------

/// A small version 300 CMX: a three-bone skeleton (ROOT, CHEST, HEAD) and a skill whose one
/// motion turns HEAD for 4 frames while CHEST moves for 2.
const SMALL: &str = "// Character File. Copyright 1997, Maxis Inc.\r
version 300\r
1\r
tiny\r
3\r
ROOT\r
NULL\r
0\r
| 0 3 0 |\r
| 0 0 0 1 |\r
1\r
1\r
0\r
0\r
0\r
CHEST\r
ROOT\r
1\r
1\r
name\r
tiny\r
| 0 1 0 |\r
| 0 0 0 1 |\r
0\r
1\r
1\r
0.5\r
0.25\r
HEAD\r
CHEST\r
0\r
| 0 1 0 |\r
| 0 0.7071068 0 0.7071068 |\r
0\r
1\r
1\r
0\r
0\r
0\r
1\r
nod\r
xskill-nod\r
133\r
0\r
0\r
2\r
4\r
2\r
HEAD\r
4\r
133\r
0\r
1\r
-1\r
0\r
0\r
0\r
CHEST\r
2\r
133\r
1\r
0\r
0\r
-1\r
0\r
1\r
1\r
66\r
1\r
step\r
left\r
";

/// The same file in version 200: bones without property lists, two flags, no wiggle values.
const SMALL_200: &str = "// prototype\nversion 200\n1\ntiny\n2\nROOT\nNULL\n| 0 3 0 |\n| 0 0 0 1 |\n1\n1\nHEAD\nROOT\n| 0 1 0 |\n| 0 0.7071068 0 0.7071068 |\n0\n1\n0\n0\n";

/// Two skeletons in one file, `adult` then `child`, each ROOT > SPINE > HEAD without rotations,
/// so a joint is the sum of its translations: adult HEAD (0, 3 + 1.5 + 0.75, 0.25) = (0, 5.25,
/// 0.25), child HEAD (0, 2 + 1 + 0.5, 0.125) = (0, 3.5, 0.125). The C tests embed the same text.
const TWO_SKELETONS: &str = "// Character File. Copyright 1997, Maxis Inc.\r
version 300\r
2\r
adult\r
3\r
ROOT\r
NULL\r
0\r
| 0 3 0 |\r
| 0 0 0 1 |\r
1\r
1\r
1\r
0\r
0\r
SPINE\r
ROOT\r
0\r
| 0 1.5 0 |\r
| 0 0 0 1 |\r
0\r
1\r
1\r
0\r
0\r
HEAD\r
SPINE\r
0\r
| 0 0.75 0.25 |\r
| 0 0 0 1 |\r
0\r
1\r
1\r
0\r
0\r
child\r
3\r
ROOT\r
NULL\r
0\r
| 0 2 0 |\r
| 0 0 0 1 |\r
1\r
1\r
1\r
0\r
0\r
SPINE\r
ROOT\r
0\r
| 0 1 0 |\r
| 0 0 0 1 |\r
0\r
1\r
1\r
0\r
0\r
HEAD\r
SPINE\r
0\r
| 0 0.5 0.125 |\r
| 0 0 0 1 |\r
0\r
1\r
1\r
0\r
0\r
0\r
0\r
";

/// The joints of TWO_SKELETONS' skeletons, summed here from the file's translations.
fn summed_joints(translations: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut out = [[0.0; 3]; 3];
    let mut at = [0.0; 3];
    for (o, t) in out.iter_mut().zip(translations) {
        for k in 0..3 {
            at[k] += t[k];
        }
        *o = at;
    }
    out
}

/// Loads `data` as `format`, choosing `skeleton`.
fn load_skeleton(data: &[u8], format: Format, skeleton: Option<&str>) -> ossa::Result<Model> {
    Model::load(
        data,
        &LoadOptions {
            format,
            skeleton: skeleton.map(str::to_owned),
            ..LoadOptions::default()
        },
    )
}

#[test]
fn a_skeleton_is_chosen_by_name_from_a_file_of_two() {
    let adult = summed_joints([[0.0, 3.0, 0.0], [0.0, 1.5, 0.0], [0.0, 0.75, 0.25]]);
    let child = summed_joints([[0.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.5, 0.125]]);
    assert_eq!(adult[2], [0.0, 5.25, 0.25]);
    assert_eq!(child[2], [0.0, 3.5, 0.125]);

    let file = cmx::parse(TWO_SKELETONS.as_bytes()).unwrap();
    let names: Vec<String> = file.skeletons.iter().map(|s| s.name.to_string()).collect();
    assert_eq!(names, ["adult", "child"]);
    // The text is in the retail layout: the writer gives it back byte for byte.
    assert_eq!(
        String::from_utf8(cmx::write_character(&file, false).unwrap()).unwrap(),
        TWO_SKELETONS
    );
    let bcf = cmx::write_character(&file, true).unwrap();
    assert!(!cmx::is_text(&bcf));
    let mut back = cmx::parse(&bcf).unwrap();
    back.version = file.version;
    assert_eq!(back, file);

    for (data, format) in [
        (TWO_SKELETONS.as_bytes(), Format::SimsCmx),
        (&bcf[..], Format::SimsBcf),
    ] {
        let what = format.name();
        for (choice, want) in [
            (None, adult),
            (Some("adult"), adult),
            (Some("child"), child),
            (Some("CHILD"), child),
            (Some("Adult"), adult),
        ] {
            let model = load_skeleton(data, format, choice)
                .unwrap_or_else(|e| panic!("{what} {choice:?}: {e}"));
            assert_eq!(model.format(), format);
            let bones: Vec<String> = model.bones().iter().map(|b| b.name.to_string()).collect();
            assert_eq!(bones, ["ROOT", "SPINE", "HEAD"], "{what} {choice:?}");
            let parents: Vec<i32> = model.bones().iter().map(|b| b.parent).collect();
            assert_eq!(parents, [-1, 0, 1], "{what} {choice:?}");
            for (b, (m, w)) in model.skeleton().bind_pose().iter().zip(want).enumerate() {
                // Sums of a few binary fractions: exact in f32.
                assert_eq!(
                    m.translation().map(f64::from),
                    w,
                    "{what} {choice:?} bone {b}"
                );
            }
            let posed = frame_pose(&model, 0);
            assert_eq!(posed[2].translation().map(f64::from), want[2]);
        }
        let e = load_skeleton(data, format, Some("teen")).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound, "{what}: {e}");
        let message = e.to_string();
        assert!(
            message.contains("no skeleton named \"teen\" (it has adult, child)"),
            "{what}: {message}"
        );
    }

    // An exact name wins over an earlier one that differs only in case; a name matching
    // neither exactly is the first that matches ignoring case.
    let mut three = file.clone();
    let mut upper = three.skeletons[1].clone();
    upper.name = ossa::Name::from("CHILD");
    upper.bones[0].translation = [0.0, 1.0, 0.0];
    three.skeletons.insert(1, upper);
    let text = cmx::write_character(&three, false).unwrap();
    let upper_head = summed_joints([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.5, 0.125]])[2];
    for (choice, want) in [
        ("CHILD", upper_head),
        ("child", child[2]),
        ("Child", upper_head),
    ] {
        let model = load_skeleton(&text, Format::SimsCmx, Some(choice)).unwrap();
        assert_eq!(
            model.skeleton().bind_pose()[2].translation().map(f64::from),
            want,
            "{choice}"
        );
    }
    let e = load_skeleton(&text, Format::SimsCmx, Some("teen")).unwrap_err();
    assert!(
        e.to_string().contains("(it has adult, CHILD, child)"),
        "{e}"
    );
}

/// BCF bytes of a character file, written from its fields (the layout of FORMATS §4.2 and the
/// module documentation), for tests that need binary input.
fn write_bcf(file: &CharacterFile) -> Vec<u8> {
    fn s(out: &mut Vec<u8>, name: &ossa::Name) {
        out.push(name.as_bytes().len() as u8);
        out.extend_from_slice(name.as_bytes());
    }
    fn u(out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    fn f(out: &mut Vec<u8>, v: f32) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    fn props(out: &mut Vec<u8>, lists: &[cmx::PropertyList]) {
        u(out, lists.len() as u32);
        for l in lists {
            u(out, l.len() as u32);
            for p in l {
                s(out, &p.key);
                s(out, &p.value);
            }
        }
    }
    let mut out = Vec::new();
    u(&mut out, file.skeletons.len() as u32);
    for sk in &file.skeletons {
        s(&mut out, &sk.name);
        u(&mut out, sk.bones.len() as u32);
        for b in &sk.bones {
            s(&mut out, &b.name);
            s(
                &mut out,
                b.parent.as_ref().unwrap_or(&ossa::Name::from("NULL")),
            );
            props(&mut out, &b.property_lists);
            b.translation.iter().for_each(|&v| f(&mut out, v));
            b.rotation.iter().for_each(|&v| f(&mut out, v));
            for flag in [b.can_translate, b.can_rotate, b.can_blend] {
                u(&mut out, flag as u32);
            }
            f(&mut out, b.wiggle_value);
            f(&mut out, b.wiggle_power);
        }
    }
    u(&mut out, file.suits.len() as u32);
    for suit in &file.suits {
        s(&mut out, &suit.name);
        u(&mut out, suit.suit_type);
        props(&mut out, &suit.property_lists);
        u(&mut out, suit.skins.len() as u32);
        for k in &suit.skins {
            s(&mut out, &k.bone);
            s(&mut out, &k.name);
            u(&mut out, k.censor_flags);
            props(&mut out, &k.property_lists);
        }
    }
    u(&mut out, file.skills.len() as u32);
    for sk in &file.skills {
        s(&mut out, &sk.name);
        s(&mut out, &sk.animation);
        f(&mut out, sk.duration);
        f(&mut out, sk.distance);
        u(&mut out, sk.moving as u32);
        u(&mut out, sk.translation_count);
        u(&mut out, sk.rotation_count);
        u(&mut out, sk.motions.len() as u32);
        for m in &sk.motions {
            s(&mut out, &m.bone);
            u(&mut out, m.frame_count);
            f(&mut out, m.duration);
            u(&mut out, m.has_translation as u32);
            u(&mut out, m.has_rotation as u32);
            u(&mut out, m.translation_offset as u32);
            u(&mut out, m.rotation_offset as u32);
            props(&mut out, &m.property_lists);
            u(&mut out, m.time_property_lists.len() as u32);
            for l in &m.time_property_lists {
                u(&mut out, l.len() as u32);
                for tp in l {
                    u(&mut out, tp.time);
                    u(&mut out, tp.properties.len() as u32);
                    for p in &tp.properties {
                        s(&mut out, &p.key);
                        s(&mut out, &p.value);
                    }
                }
            }
        }
    }
    out
}

/// The nod skill's CFP: CHEST translations (2), HEAD rotations (4, turning about y).
fn small_cfp() -> Vec<u8> {
    let t = [[0.0, 1.0, 0.0], [0.0, 1.2, 0.1]];
    let r: Vec<[f32; 4]> = (0..4)
        .map(|i| {
            let a = i as f32 * 0.2;
            [0.0, a.sin(), 0.0, a.cos()]
        })
        .collect();
    cfp::encode_skill(&t, &r, None)
}

#[test]
fn small_files_text_and_binary() {
    let file = cmx::parse(SMALL.as_bytes()).unwrap();
    assert_eq!(file.skeletons[0].bones[1].wiggle_power, 0.25);
    assert_eq!(file.skeletons[0].bones[2].parent_index, 1);
    let tp = &file.skills[0].motions[1].time_property_lists[0][0];
    assert_eq!(
        (tp.time, tp.properties[0].value.to_string()),
        (66, "left".to_owned())
    );
    let bcf = write_bcf(&file);
    let mut binary = cmx::parse(&bcf).unwrap();
    binary.version = file.version;
    assert_eq!(binary, file);

    let model = load(SMALL.as_bytes(), Format::SimsCmx);
    let bind = model.skeleton().bind_pose();
    // HEAD turns 90 degrees about y as R(q)^T: its x axis goes to +z.
    let head = bind[2];
    assert_eq!(head.translation(), [0.0, 5.0, 0.0]);
    assert!(
        (head.m[8] - 1.0).abs() < 1e-6 && head.m[0].abs() < 1e-6,
        "{head:?}"
    );

    let old = cmx::parse(SMALL_200.as_bytes()).unwrap();
    assert_eq!(old.version, Some(200));
    let b = &old.skeletons[0].bones[1];
    assert!(!b.can_translate && b.can_rotate && !b.can_blend);
    assert!(b.property_lists.is_empty());
    let old_model = load(SMALL_200.as_bytes(), Format::SimsCmx);
    assert_eq!(
        old_model.skeleton().bind_pose()[1].translation(),
        [0.0, 4.0, 0.0]
    );
}

#[test]
fn skill_frames_keep_the_rest_pose_where_nothing_moves() {
    let file = cmx::parse(SMALL.as_bytes()).unwrap();
    let model = load(SMALL.as_bytes(), Format::SimsCmx);
    let rest = model.skeleton().frame_poses(0).unwrap().to_vec();
    let (frames, poses, anim) = cmx::skill_frames(&model, &file, 0, &small_cfp()).unwrap();
    assert_eq!(frames.len(), 4);
    assert_eq!(frames[2].name.to_string(), "nod 2");
    assert_eq!((anim.first_frame, anim.frame_count), (1, 4));
    assert!((anim.fps - 4000.0 / 133.0).abs() < 1e-3);
    assert!(!anim.looping);
    for f in 0..4 {
        let p = &poses[f * 3..f * 3 + 3];
        // ROOT has no motion: the rest pose, exactly.
        assert_eq!(p[0], rest[0]);
        // HEAD: rest translation, the skill's rotation as R(q)^T.
        assert_eq!(p[2].translation(), rest[2].translation());
        let a = f as f32 * 0.2;
        let want = cmx::local_pose([0.0, 1.0, 0.0], [0.0, a.sin(), 0.0, a.cos()]);
        for (x, y) in p[2].m.iter().zip(&want.m) {
            assert!((x - y).abs() < 1e-6);
        }
    }
    // CHEST has 2 frames over the skill's 4: frames 0, 0.5, 1, 1 (held) of its own.
    let ys: Vec<f32> = (0..4).map(|f| poses[f * 3 + 1].translation()[1]).collect();
    for (y, want) in ys.iter().zip([1.0, 1.1, 1.2, 1.2]) {
        assert!((y - want).abs() < 1e-6, "{ys:?}");
    }
    // CHEST's rotation is the rest one.
    for i in [0, 1, 2, 4, 5, 6, 8, 9, 10] {
        assert_eq!(poses[3 + 1].m[i], rest[1].m[i]);
    }

    let played = cmx::with_skill(&model, &file, 0, &small_cfp()).unwrap();
    assert_eq!(played.frames().len(), 5);
    assert_eq!(played.animations()[0].first_frame, 1);

    // A skill index out of range, a model without bones, a CFP of the wrong length.
    assert_eq!(
        cmx::skill_frames(&model, &file, 1, &small_cfp())
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    let empty = load(b"// x\nversion 300\n0\n0\n0\n", Format::SimsCmx);
    assert_eq!(
        cmx::skill_frames(&empty, &file, 0, &small_cfp())
            .unwrap_err()
            .code(),
        ErrorCode::Mismatch
    );
    let mut short = small_cfp();
    short.pop();
    let e = cmx::skill_frames(&model, &file, 0, &short).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Truncated);
    assert!(
        e.offset().is_some() && e.to_string().contains("xskill-nod"),
        "{e}"
    );
    // A motion that reads past the skill's values (a file built in code can say anything).
    let mut bad = file.clone();
    bad.skills[0].motions[0].rotation_offset = 1;
    assert_eq!(
        cmx::skill_frames(&model, &bad, 0, &small_cfp())
            .unwrap_err()
            .code(),
        ErrorCode::Malformed
    );
}

/// Spherical interpolation from `a` to `b` (as given: no hemisphere is chosen here), in f64.
fn slerp64(a: Q4, b: Q4, f: f64) -> Q4 {
    let d = qdot(a, b).clamp(-1.0, 1.0);
    let theta = d.acos();
    let (wa, wb) = if theta.sin().abs() < 1e-12 {
        (1.0 - f, f)
    } else {
        (
            ((1.0 - f) * theta).sin() / theta.sin(),
            (f * theta).sin() / theta.sin(),
        )
    };
    qnorm([0, 1, 2, 3].map(|k| wa * a[k] + wb * b[k]))
}

/// Normalised linear interpolation from `a` to `b` (as given), in f64.
fn nlerp64(a: Q4, b: Q4, f: f64) -> Q4 {
    qnorm([0, 1, 2, 3].map(|k| (1.0 - f) * a[k] + f * b[k]))
}

/// The rotation part of a Sims local pose, `R(q)^T`, row-major, from the textbook R(q).
fn sims_rotation64(q: Q4) -> M3 {
    transpose(rot(q))
}

/// The largest difference between a pose's rotation and `want`.
fn rotation_error(pose: &Mat3x4, want: [[f64; 3]; 3]) -> f64 {
    let mut worst = 0.0f64;
    for (row, w) in want.iter().enumerate() {
        for (col, w) in w.iter().enumerate() {
            worst = worst.max((pose.m[row * 4 + col] as f64 - w).abs());
        }
    }
    worst
}

/// A rotation motion of 3 frames stretched over a skill of 4 whose consecutive keys lie in
/// opposite hemispheres (negative dot product): the in-between frames are the hemisphere-aligned
/// slerp of the two keys around them, not the long way round that interpolating the stored signs
/// would take.
#[test]
fn a_shorter_rotation_motion_interpolates_across_a_sign_flip() {
    let file = cmx::parse(SMALL.as_bytes()).unwrap();
    let model = load(SMALL.as_bytes(), Format::SimsCmx);
    let rest = model.skeleton().frame_poses(0).unwrap().to_vec();

    // CHEST turns about the axis (1, 2, 2) / 3 by 0.2, 0.9 and 1.6 radians; key 1 is stored
    // negated, so keys 0 and 1, and keys 1 and 2, have negative dot products.
    let axis = [1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0];
    let turn = |angle: f64, sign: f64| -> [f32; 4] {
        let (s, c) = (angle / 2.0).sin_cos();
        [
            (sign * axis[0] * s) as f32,
            (sign * axis[1] * s) as f32,
            (sign * axis[2] * s) as f32,
            (sign * c) as f32,
        ]
    };
    let chest = [turn(0.2, 1.0), turn(0.9, -1.0), turn(1.6, 1.0)];
    let key = |k: usize| chest[k].map(f64::from);
    assert!(qdot(key(0), key(1)) < -0.9 && qdot(key(1), key(2)) < -0.9);
    // HEAD holds its rest rotation, as the file gives it, over the skill's 4 frames.
    let head = file.skeletons[0].bones[2].rotation;
    let mut rotations = vec![head; 4];
    rotations.extend_from_slice(&chest);
    let cfp_bytes = cfp::encode_skill(&[], &rotations, None);

    let motion = |bone: &str, frames: u32, offset: i32| cmx::Motion {
        bone: ossa::Name::from(bone),
        frame_count: frames,
        duration: 133.0,
        has_translation: false,
        has_rotation: true,
        translation_offset: -1,
        rotation_offset: offset,
        property_lists: Vec::new(),
        time_property_lists: Vec::new(),
    };
    let mut character = file.clone();
    character.skills = vec![cmx::Skill {
        name: ossa::Name::from("turn"),
        animation: ossa::Name::from("xskill-turn"),
        duration: 133.0,
        distance: 0.0,
        moving: false,
        translation_count: 0,
        rotation_count: 7,
        motions: vec![motion("HEAD", 4, 0), motion("CHEST", 3, 4)],
    }];
    let (frames, poses, anim) = cmx::skill_frames(&model, &character, 0, &cfp_bytes).unwrap();
    assert_eq!((frames.len(), anim.frame_count), (4, 4));
    let chest_pose = |f: usize| poses[f * 3 + 1];

    // Skill frame f is the motion's frame f * 3 / 4: 0, 0.75, 1.5 and 2.25 (past the last key:
    // held at key 2).
    let aligned = |k: usize| -> (Q4, Q4) {
        let (a, b) = (key(k), key(k + 1));
        let b = if qdot(a, b) < 0.0 { b.map(|c| -c) } else { b };
        (a, b)
    };
    let (a0, b0) = aligned(0);
    let (a1, b1) = aligned(1);
    let want = [key(0), slerp64(a0, b0, 0.75), slerp64(a1, b1, 0.5), key(2)];
    // The keys share an axis, so the aligned slerp turns by the interpolated angle:
    // 0.2 + 0.75 * 0.7 = 0.725 and 0.9 + 0.5 * 0.7 = 1.25 radians.
    for (f, angle) in [(1, 0.725), (2, 1.25)] {
        let (s, c) = (angle / 2.0f64).sin_cos();
        let closed = [axis[0] * s, axis[1] * s, axis[2] * s, c];
        assert!(
            (qdot(want[f], closed).abs() - 1.0).abs() < 1e-12,
            "frame {f}"
        );
    }
    // At the midpoint the normalised linear interpolation of the aligned keys is the same.
    let mid = nlerp64(a1, b1, 0.5);
    assert!((qdot(mid, want[2]).abs() - 1.0).abs() < 1e-12);

    for (f, w) in want.iter().enumerate() {
        let p = chest_pose(f);
        let err = rotation_error(&p, sims_rotation64(*w));
        assert!(err < 2e-6, "frame {f}: off by {err}: {p:?}");
        // CHEST's translation is the rest one: only its rotation moves.
        assert_eq!(p.translation(), rest[1].translation(), "frame {f}");
        // HEAD's one key per frame is its own.
        assert_eq!(poses[f * 3 + 2], rest[2], "frame {f}");
        assert_eq!(poses[f * 3], rest[0], "frame {f}");
    }
    // The interpolation of the stored signs goes the long way round: far from what is sampled.
    for (f, k, t) in [(1, 0, 0.75), (2, 1, 0.5)] {
        let wrong = slerp64(key(k), key(k + 1), t);
        let err = rotation_error(&chest_pose(f), sims_rotation64(wrong));
        assert!(err > 0.5, "frame {f}: within {err} of the long way round");
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile input
// ---------------------------------------------------------------------------------------------

#[test]
fn every_truncation_fails_cleanly() {
    let text = SMALL.as_bytes();
    let file = cmx::parse(text).unwrap();
    let bcf = write_bcf(&file);
    // Cutting text at a line boundary may leave a shorter valid file only at the very end
    // (trailing blank lines); everywhere else it must fail with a line.
    for cut in 0..text.len() {
        let part = &text[..cut];
        if let Err(e) = Model::load(part, &strict(Format::SimsCmx)) {
            assert!(
                matches!(
                    e.code(),
                    ErrorCode::Truncated | ErrorCode::Malformed | ErrorCode::Unsupported
                ),
                "{cut}: {e}"
            );
            assert!(e.line().is_some(), "{cut}: {e}");
        }
        let parsed = cmx::parse_text(part);
        if cut < text.len() - 8 {
            assert!(parsed.is_err(), "{cut}");
        }
    }
    for cut in 0..bcf.len() {
        let e = cmx::parse_bcf(&bcf[..cut]).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Truncated, "{cut}: {e}");
        assert!(e.offset().is_some_and(|o| o <= cut as u64), "{cut}: {e}");
        assert_eq!(
            Model::load(&bcf[..cut], &strict(Format::SimsBcf))
                .unwrap_err()
                .code(),
            ErrorCode::Truncated
        );
    }
    let stream = small_cfp();
    for cut in 0..stream.len() {
        let e = cfp::decode(&stream[..cut], 2 * 3 + 4 * 4).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Truncated, "{cut}: {e}");
        assert!(e.offset().is_some());
    }
}

/// SMALL with line `n` (1-based) replaced.
fn with_line(n: usize, new: &str) -> Vec<u8> {
    let mut lines: Vec<&str> = SMALL.split('\n').collect();
    lines[n - 1] = new;
    lines.join("\n").into_bytes()
}

fn line_of(text: &str, needle: &str) -> usize {
    text.split('\n').position(|l| l.trim() == needle).unwrap() + 1
}

#[test]
fn broken_text_names_the_line() {
    let cases: Vec<(usize, &str, ErrorCode)> = vec![
        (2, "version 301", ErrorCode::Unsupported),
        (2, "versio 300", ErrorCode::Malformed),
        (3, "one", ErrorCode::Malformed),          // skeleton count
        (5, "-3", ErrorCode::Malformed),           // bone count
        (5, "4000000000", ErrorCode::Truncated),   // bone count past the file
        (9, "| 0 3 |", ErrorCode::Malformed),      // translation with 2 numbers
        (9, "| 0 x 0 |", ErrorCode::Malformed),    // not a number
        (9, "| 0 nan 0 |", ErrorCode::Malformed),  // not finite
        (10, "| 0 0 0 0 |", ErrorCode::Malformed), // zero quaternion
        (11, "yes", ErrorCode::Malformed),         // flag
        (14, "1e40", ErrorCode::Malformed),        // wiggle value: infinite
        (17, "NECK", ErrorCode::Malformed),        // parent not in the skeleton
        (7, "HEAD", ErrorCode::Malformed),         // ROOT's parent comes later
        (16, "ROOT", ErrorCode::Malformed),        // two bones named ROOT
        (18, "99", ErrorCode::Truncated),          // property list count
        (48, "4294967295", ErrorCode::Truncated),  // motion count
        (55, "3", ErrorCode::Malformed),           // HEAD rotations 3+4 do not fit 4
    ];
    for (line, new, code) in cases {
        let data = with_line(line, new);
        let e = Model::load(&data, &strict(Format::SimsCmx)).unwrap_err();
        assert_eq!(e.code(), code, "line {line} `{new}`: {e}");
        assert_eq!(e.line(), Some(line as u32), "line {line} `{new}`: {e}");
        assert!(e.to_string().contains(&format!("line {line}")) || e.line().is_some());
    }
    assert_eq!(line_of(SMALL, "NULL"), 7);
    // Validation collects what it can step past.
    let data = with_line(9, "| 0 nan 0 |");
    let report = ossa::validate(&data, &strict(Format::SimsCmx));
    assert_eq!(report.problems.len(), 1);
    // Stray text after the last skill: a warning, a problem in strict mode.
    let mut stray = SMALL.as_bytes().to_vec();
    stray.extend_from_slice(b"\r\n\r\nextra\r\n");
    let m = load(&stray, Format::SimsCmx);
    assert_eq!(m.warnings().len(), 1, "{:?}", m.warnings());
    let e = Model::load(&stray, &strict(Format::SimsCmx)).unwrap_err();
    assert_eq!((e.code(), e.line()), (ErrorCode::Malformed, Some(74)));
    // Not text at all.
    let e = Model::load(b"\x00\x01\x02\x03", &strict(Format::SimsCmx)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert_eq!(
        Model::load(b"", &strict(Format::SimsCmx))
            .unwrap_err()
            .code(),
        ErrorCode::Truncated
    );
}

#[test]
fn broken_binary_names_the_byte() {
    let file = cmx::parse(SMALL.as_bytes()).unwrap();
    let bcf = write_bcf(&file);
    // Huge counts at each count field are caught before anything is allocated for them.
    let put = |at: usize, v: u32| {
        let mut d = bcf.clone();
        d[at..at + 4].copy_from_slice(&v.to_le_bytes());
        d
    };
    for at in [0usize, 9] {
        let e = cmx::parse_bcf(&put(at, u32::MAX)).unwrap_err();
        assert_eq!(
            (e.code(), e.offset()),
            (ErrorCode::Truncated, Some(at as u64)),
            "{e}"
        );
    }
    // A long string length (255 then a 32-bit length) past the end.
    let mut long = bcf.clone();
    long[4] = 255;
    let e = cmx::parse_bcf(&long).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Truncated);
    // A NaN in a translation (skeleton name "tiny" then bone count, then "ROOT", "NULL", 0 lists).
    let t_at = 4 + 5 + 4 + 5 + 5 + 4;
    let mut nan = bcf.clone();
    nan[t_at..t_at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let e = Model::load(&nan, &strict(Format::SimsBcf)).unwrap_err();
    assert_eq!(
        (e.code(), e.offset()),
        (ErrorCode::Malformed, Some(t_at as u64)),
        "{e}"
    );
    // Stray bytes after the last skill.
    let mut stray = bcf.clone();
    stray.extend_from_slice(&[1, 2, 3]);
    assert_eq!(load(&stray, Format::SimsBcf).warnings().len(), 1);
    let e = Model::load(&stray, &strict(Format::SimsBcf)).unwrap_err();
    assert_eq!(
        (e.code(), e.offset()),
        (ErrorCode::Malformed, Some(bcf.len() as u64))
    );
    // Random bytes never panic.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for len in 0..300 {
        let mut d = vec![0u8; len % 97];
        for b in &mut d {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            *b = (seed >> 24) as u8 % 8;
        }
        let _ = cmx::parse_bcf(&d);
        let _ = cmx::parse_text(&d);
        let _ = cfp::count_values(&d);
        let _ = cfp::decode(&d, len);
        let mut flipped = bcf.clone();
        let i = (seed as usize) % flipped.len();
        flipped[i] ^= (seed >> 40) as u8 | 1;
        let _ = cmx::parse_bcf(&flipped);
        let _ = Model::load(&flipped, &strict(Format::SimsBcf));
    }
}

#[test]
fn broken_cfp_names_the_byte() {
    let good = small_cfp();
    let n = 2 * 3 + 4 * 4;
    assert!(cfp::decode(&good, n).is_ok());
    // Stray bytes after the values.
    let mut extra = good.clone();
    extra.push(126);
    let e = cfp::decode(&extra, n).unwrap_err();
    assert_eq!(
        (e.code(), e.offset()),
        (ErrorCode::Malformed, Some(good.len() as u64))
    );
    // A huge repeat from three bytes: the count must match, and the limit holds.
    let e = cfp::decode(&[0xFE, 0xFF, 0xFF], 5).unwrap_err();
    assert_eq!((e.code(), e.offset()), (ErrorCode::Malformed, Some(0)));
    assert_eq!(
        cfp::decode(&[0xFE, 0xFF, 0xFF], 65536).unwrap().len(),
        65536
    );
    let e = cfp::decode(&[0xFE, 0xFF, 0xFF], usize::MAX).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    let huge = vec![0xFEu8; 3 * 300];
    assert_eq!(
        cfp::count_values(&huge).unwrap_err().code(),
        ErrorCode::Limit
    );
    let e = cfp::decode_skill(&good, usize::MAX / 2, 1).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    // The reserved code and a NaN.
    let e = cfp::decode(&[0xFD], 1).unwrap_err();
    assert_eq!((e.code(), e.offset()), (ErrorCode::Malformed, Some(0)));
    let mut nan = vec![126u8, 0xFF];
    nan.extend_from_slice(&f32::INFINITY.to_le_bytes());
    let e = cfp::decode(&nan, 2).unwrap_err();
    assert_eq!((e.code(), e.offset()), (ErrorCode::Malformed, Some(2)));
}

#[test]
fn allocations_stay_within_the_budget() {
    const N: usize = 200_000;
    // A bone with N empty property lists; a property list of N empty keys and values.
    let head = "// x\nversion 300\n1\ns\n1\nROOT\nNULL\n";
    let tail = "| 0 0 0 |\n| 0 0 0 1 |\n1\n1\n1\n0\n0\n0\n0\n";
    let lists = format!("{head}{N}\n{}{tail}", "0\n".repeat(N));
    let props = format!("{head}1\n{N}\n{}{tail}", "\n".repeat(2 * N));
    let mut cases: Vec<(&str, Vec<u8>, Format)> = vec![
        ("empty property lists", lists.into_bytes(), Format::SimsCmx),
        ("empty properties", props.into_bytes(), Format::SimsCmx),
    ];
    // The same in binary: N empty lists (4 bytes each), N empty properties (2 bytes each).
    let mut bin = vec![1, 0, 0, 0, 1, b's', 1, 0, 0, 0, 4];
    bin.extend_from_slice(b"ROOT\x04NULL");
    let bone_tail: Vec<u8> = [0.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .chain([1u32, 1, 1].iter().flat_map(|v| v.to_le_bytes()))
        .chain([0.0f32, 0.0].iter().flat_map(|v| v.to_le_bytes()))
        .chain([0u32, 0].iter().flat_map(|v| v.to_le_bytes()))
        .collect();
    let mut lists = bin.clone();
    lists.extend_from_slice(&(N as u32).to_le_bytes());
    lists.extend(std::iter::repeat_n(0u8, 4 * N));
    lists.extend_from_slice(&bone_tail);
    let mut props = bin;
    props.extend_from_slice(&1u32.to_le_bytes());
    props.extend_from_slice(&(N as u32).to_le_bytes());
    props.extend(std::iter::repeat_n(0u8, 2 * N));
    props.extend_from_slice(&bone_tail);
    cases.push(("binary empty property lists", lists, Format::SimsBcf));
    cases.push(("binary empty properties", props, Format::SimsBcf));
    for (what, data, format) in &cases {
        let (r, peak) = peak_of(|| Model::load(data, &strict(*format)));
        let model = r.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(model.bones().len(), 1);
        assert!(
            peak <= budget(data.len()),
            "{what}: {peak} bytes of heap for {}",
            data.len()
        );
        // Cut short, the count fails before anything is allocated for it.
        let short = &data[..data.len() / 2];
        let (r, peak) = peak_of(|| Model::load(short, &strict(*format)));
        assert!(r.is_err(), "{what}");
        assert!(peak <= budget(short.len()), "{what}: {peak} bytes of heap");
    }
    // A CFP count the stream does not give allocates nothing but the error's message.
    let repeats = vec![0xFEu8; 3 * 200];
    let (r, peak) = peak_of(|| cfp::decode(&repeats, 1000));
    assert_eq!(r.unwrap_err().code(), ErrorCode::Malformed);
    assert!(peak < 1024, "{peak}");
}
