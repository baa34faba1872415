//! The 1998 prototype's characters put together: every suit of `proto1998/` dressed with
//! [`ossa::assemble::dress`] from its `.msh` parts. At rest the nine characters stand on the
//! floor with the head on top, every part touches another (none floats away from its bone) and
//! left and right parts are mirror images; the 21 props sit in the hand that holds them. The
//! colonel, with the greeting skill from its `.bin`, keeps his feet on the floor in every frame,
//! and finds his textures in `Textures/` as the game's filesystem did, ignoring case.

mod corpus;
mod sims_fixtures;

use std::path::Path;

use corpus::{corpus_subdir, files_ending};
use ossa::assemble::{dress, with_suits};
use ossa::{FrameBlend, LoadOptions, Mat3x4, Model, Strided};

/// A box: lowest and highest corner.
type Bounds = ([f32; 3], [f32; 3]);

fn load(dir: &Path, name: &str) -> Model {
    Model::load_file(dir.join(name), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `character` wearing `suit`, each mesh `MESH.msh` in `dir` (the names as the suit spells them).
fn dressed(dir: &Path, character: &Model, suit: &str) -> Model {
    dress(character, suit, &mut |mesh| {
        Model::load_file(dir.join(format!("{mesh}.msh")), &LoadOptions::default())
    })
    .unwrap_or_else(|e| panic!("{suit}: {e}"))
}

/// Model-space bones of `model` at `frame`.
fn pose(model: &Model, frame: u32) -> Vec<Mat3x4> {
    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(&[FrameBlend { frame, weight: 1.0 }], None, &mut bones)
        .unwrap();
    bones
}

/// Each mesh's skinned positions.
fn skinned(model: &Model, bones: &[Mat3x4]) -> Vec<Vec<[f32; 3]>> {
    (0..model.meshes().len())
        .map(|m| {
            let n = model.meshes()[m].vertex_count();
            let mut flat = vec![0.0f32; n * 3];
            let mut target = Strided::new(&mut flat, 3).unwrap();
            model.skin_mesh(m, bones, 0, n, 0, &mut target).unwrap();
            flat.chunks(3).map(|c| [c[0], c[1], c[2]]).collect()
        })
        .collect()
}

fn bounds(points: &[[f32; 3]]) -> Bounds {
    let mut b = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for p in points {
        for ((lo, hi), &v) in b.0.iter_mut().zip(b.1.iter_mut()).zip(p) {
            *lo = lo.min(v);
            *hi = hi.max(v);
        }
    }
    b
}

/// How far apart two boxes are (0 when they overlap).
fn gap(a: &Bounds, b: &Bounds) -> f32 {
    (0..3)
        .map(|k| (a.0[k] - b.1[k]).max(b.0[k] - a.1[k]).max(0.0).powi(2))
        .sum::<f32>()
        .sqrt()
}

/// `b` mirrored in x.
fn mirrored(b: &Bounds) -> Bounds {
    ([-b.1[0], b.0[1], b.0[2]], [-b.0[0], b.1[1], b.1[2]])
}

fn distance(a: &Bounds, b: &Bounds) -> f32 {
    (0..3)
        .map(|k| (a.0[k] - b.0[k]).abs().max((a.1[k] - b.1[k]).abs()))
        .fold(0.0, f32::max)
}

/// The prototype's files with suits, and the suits: (file, suit, skins).
fn suit_files(dir: &Path) -> Vec<(String, Model)> {
    files_ending(dir, &[".cmx"])
        .into_iter()
        .map(|f| {
            let m = load(dir, &f);
            (f, m)
        })
        .filter(|(_, m)| !m.suits().is_empty())
        .collect()
}

#[test]
fn every_character_stands_whole_on_the_floor() {
    let Some(dir) = corpus_subdir(
        "sims/proto1998",
        "every_character_stands_whole_on_the_floor",
    ) else {
        return;
    };
    let colonel = load(&dir, "colonelsuit.CMX");
    let files = suit_files(&dir);
    assert_eq!(files.len(), 30);
    let mut characters = 0;
    for (file, model) in &files {
        let suit = &model.suits()[0];
        let name = suit.name.to_string();
        if name.starts_with("suit-") {
            continue;
        }
        characters += 1;
        // Two of the nine files (rossnud, samnud) hold a suit without a skeleton.
        let skeleton = if model.bones().is_empty() {
            &colonel
        } else {
            model
        };
        let character = with_suits(skeleton, model.suits()).unwrap();
        let sim = dressed(&dir, &character, &name);
        assert_eq!(sim.meshes().len(), suit.skins.len(), "{file}");
        let parts = skinned(&sim, &pose(&sim, 0));
        let boxes: Vec<Bounds> = parts.iter().map(|p| bounds(p)).collect();
        let all = bounds(&parts.concat());
        // Feet on the floor.
        assert!(
            (-0.05..0.01).contains(&all.0[1]),
            "{file}: lowest at {}",
            all.0[1]
        );
        // The head on top: the highest point is a HEAD part's, 5.4 to 6.1 units up.
        let top = (0..parts.len())
            .max_by(|&a, &b| boxes[a].1[1].total_cmp(&boxes[b].1[1]))
            .unwrap();
        assert_eq!(suit.skins[top].bone.to_string(), "HEAD", "{file}");
        assert!(
            (5.4..6.1).contains(&all.1[1]),
            "{file}: top at {}",
            all.1[1]
        );
        // Every part touches another: none floats away from the body.
        for (i, b) in boxes.iter().enumerate() {
            let nearest = (boxes.iter().enumerate())
                .filter(|&(j, _)| j != i)
                .map(|(_, o)| gap(b, o))
                .fold(f32::INFINITY, f32::min);
            assert!(
                nearest < 0.02,
                "{file}: {} is {nearest} from any other part",
                suit.skins[i].mesh
            );
        }
        // Left and right: a part on a left bone has its mirror image on the right one (a cigar in
        // one hand has none).
        let mut pairs = 0;
        for (i, skin) in suit.skins.iter().enumerate() {
            let bone = skin.bone.to_string();
            let Some(side) = bone.strip_prefix("L_") else {
                continue;
            };
            let right = format!("R_{side}");
            let best = (suit.skins.iter().enumerate())
                .filter(|(_, k)| k.bone.to_string() == right)
                .map(|(j, _)| distance(&mirrored(&boxes[i]), &boxes[j]))
                .fold(f32::INFINITY, f32::min);
            if best < 0.02 {
                pairs += 1;
            } else {
                assert!(
                    skin.mesh.to_string().to_ascii_lowercase().contains("cigar"),
                    "{file}: {} has no mirror image on {right} ({best})",
                    skin.mesh
                );
            }
        }
        assert!(pairs >= 7, "{file}: {pairs} mirrored pairs");
    }
    assert_eq!(characters, 9);
}

#[test]
fn every_prop_sits_in_the_hand_that_holds_it() {
    let Some(dir) = corpus_subdir(
        "sims/proto1998",
        "every_prop_sits_in_the_hand_that_holds_it",
    ) else {
        return;
    };
    let colonel = load(&dir, "colonelsuit.CMX");
    let body = dressed(&dir, &colonel, "colonel");
    let body_parts = skinned(&body, &pose(&body, 0));
    let hand = |bone: &str| {
        let suit = &colonel.suits()[0];
        let k = (suit.skins.iter())
            .position(|k| k.bone.to_string() == bone && k.mesh.to_string().contains("HAND"))
            .unwrap();
        bounds(&body_parts[k])
    };
    let mut props = 0;
    for (file, model) in suit_files(&dir) {
        let name = model.suits()[0].name.to_string();
        if !name.starts_with("suit-") {
            continue;
        }
        props += 1;
        assert!(model.bones().is_empty(), "{file}");
        let bone = model.suits()[0].skins[0].bone.to_string();
        let character = with_suits(&colonel, model.suits()).unwrap();
        let prop = dressed(&dir, &character, &name);
        let all = bounds(&skinned(&prop, &pose(&prop, 0)).concat());
        let held = gap(&all, &hand(&bone));
        assert!(held < 0.01, "{file}: {held} from the colonel's {bone} hand");
    }
    assert_eq!(props, 21);
}

#[test]
fn the_colonel_greets_with_his_feet_on_the_floor() {
    let Some(dir) = corpus_subdir(
        "sims/proto1998",
        "the_colonel_greets_with_his_feet_on_the_floor",
    ) else {
        return;
    };
    let colonel = load(&dir, "colonelsuit.CMX");
    let sim = dressed(&dir, &colonel, "colonel")
        .with_skills_file(dir.join("adult-greet01.cmx"), &LoadOptions::default())
        .unwrap();
    assert!(sim.warnings().is_empty(), "{:?}", sim.warnings());
    let scene = &sim.animations()[0];
    assert_eq!(scene.name.to_string(), "adult-greet01");
    assert_eq!((scene.first_frame, scene.frame_count), (1, 91));
    let mut lowest = (f32::INFINITY, f32::NEG_INFINITY);
    for f in 1..=91 {
        let all = bounds(&skinned(&sim, &pose(&sim, f)).concat());
        lowest = (lowest.0.min(all.0[1]), lowest.1.max(all.0[1]));
        assert!(all.1[1] > 5.3, "frame {f}: top at {}", all.1[1]);
    }
    // The soles stay within 0.03 of the floor (they are 0.02 above it at rest).
    assert!(
        lowest.0 > -0.05 && lowest.1 < 0.05,
        "lowest point from {} to {}",
        lowest.0,
        lowest.1
    );
}

#[test]
fn a_msh_without_a_name_hangs_on_the_bone_its_suit_gives() {
    let Some(dir) = corpus_subdir(
        "sims/proto1998",
        "a_msh_without_a_name_hangs_on_the_bone_its_suit_gives",
    ) else {
        return;
    };
    let colonel = load(&dir, "colonelsuit.CMX");
    let by_name = dressed(&dir, &colonel, "colonel");
    // The same parts loaded from memory, without a file name to take their bone from.
    let anonymous = dress(&colonel, "colonel", &mut |mesh| {
        let bytes = std::fs::read(dir.join(format!("{mesh}.msh"))).unwrap();
        Model::load(&bytes, &LoadOptions::default())
    })
    .unwrap();
    assert_eq!(
        skinned(&anonymous, &pose(&anonymous, 0)),
        skinned(&by_name, &pose(&by_name, 0))
    );
}

#[cfg(feature = "gltf")]
#[test]
fn the_colonels_textures_are_found_ignoring_case() {
    let Some(dir) = corpus_subdir(
        "sims/proto1998",
        "the_colonels_textures_are_found_ignoring_case",
    ) else {
        return;
    };
    let colonel = load(&dir, "colonelsuit.CMX");
    let sim = dressed(&dir, &colonel, "colonel");
    let textures =
        ossa::textures::find_textures_beside(&sim, &dir.join("colonelsuit.CMX"), None, 0).unwrap();
    let found: Vec<String> = (textures.mesh_images.iter())
        .map(|i| i.map_or(String::new(), |i| textures.images[i].path.clone()))
        .collect();
    // `CheadE` is `Textures/CHeadE.png`, as Windows opened it.
    let head = (colonel.suits()[0].skins.iter())
        .position(|k| k.mesh.to_string() == "xskin-colonel-HEAD-HEAD")
        .unwrap();
    assert!(
        found[head].ends_with("Textures/CHeadE.png"),
        "{}",
        found[head]
    );
    // Every skin of the suit has its image. (`CneckF`, which the archive lacks, is the texture
    // of a part the suit does not wear.)
    let missing: Vec<&str> = (colonel.suits()[0].skins.iter())
        .zip(&found)
        .filter(|(_, f)| f.is_empty())
        .map(|(k, _)| k.mesh.as_bytes())
        .map(|b| std::str::from_utf8(b).unwrap())
        .collect();
    assert!(missing.is_empty(), "{missing:?}: {:?}", textures.warnings);
    assert_eq!(found.len(), 21);
}

/// Every file of `proto1998/` is read for what it is: the 288 character files and 272 meshes
/// load, the four `.bin` play as their skills' numbers, and the meshes' texture names find their
/// PNGs in `Textures/` (ignoring case) but for the two the archive lacks (`CneckF`,
/// `dustpanblue`).
#[cfg(feature = "gltf")]
#[test]
fn every_file_of_the_prototype_is_read() {
    let Some(dir) = corpus_subdir("sims/proto1998", "every_file_of_the_prototype_is_read") else {
        return;
    };
    let mut counts = std::collections::BTreeMap::new();
    let mut missing = std::collections::BTreeSet::new();
    let mut images = std::collections::BTreeSet::new();
    for name in files_ending(&dir, &[""]) {
        let path = dir.join(&name);
        if path.is_dir() {
            continue;
        }
        let extension = name.rsplit('.').next().unwrap().to_ascii_lowercase();
        *counts.entry(extension.clone()).or_insert(0) += 1;
        match extension.as_str() {
            "cmx" => {
                load(&dir, &name);
            }
            "msh" => {
                let mesh = load(&dir, &name);
                let textures = ossa::textures::find_textures_beside(&mesh, &path, None, 0).unwrap();
                match textures.mesh_images[0] {
                    Some(i) => {
                        images.insert(textures.images[i].path.clone());
                    }
                    None => {
                        missing.insert(mesh.meshes()[0].shader().to_string());
                    }
                }
            }
            "bin" => {
                let skill_file = name
                    .strip_prefix("xskill-")
                    .unwrap()
                    .replace(".bin", ".cmx");
                let played = load(&dir, &skill_file)
                    .with_skills_file(dir.join(&skill_file), &LoadOptions::default())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(
                    played.warnings().is_empty(),
                    "{name}: {:?}",
                    played.warnings()
                );
                assert!(played.animations()[0].frame_count > 90, "{name}");
            }
            other => panic!("{name}: a file of a kind not known here ({other})"),
        }
    }
    let counts: Vec<(String, i32)> = counts.into_iter().collect();
    assert_eq!(
        counts,
        [("bin".into(), 4), ("cmx".into(), 288), ("msh".into(), 272)]
    );
    assert_eq!(
        missing.into_iter().collect::<Vec<_>>(),
        ["CneckF", "dustpanblue"]
    );
    let pngs = files_ending(&dir.join("Textures"), &[".png"]);
    assert_eq!(pngs.len(), 242);
    assert_eq!(images.len(), 163, "{images:?}");
}

/// Ross's suit on a skeleton without toes: his toe parts hang on `L_TOE0` and `R_TOE0`, which it
/// lacks. They are left out, each with a warning naming the suit, the skin, the mesh and the
/// bone; the other 19 parts are worn, none on a toe bone's stand-in.
#[test]
fn a_part_on_a_bone_the_skeleton_lacks_is_left_out_with_a_warning() {
    let Some(dir) = corpus_subdir(
        "sims/proto1998",
        "a_part_on_a_bone_the_skeleton_lacks_is_left_out_with_a_warning",
    ) else {
        return;
    };
    let toeless = Model::load(
        &sims_fixtures::toeless_colonel(&dir),
        &LoadOptions {
            format: ossa::Format::SimsCmx,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert!(toeless.find_bone("L_TOE0").is_none());
    let ross = load(&dir, "rossnud.cmx");
    let character = with_suits(&toeless, ross.suits()).unwrap();
    let worn = dressed(&dir, &character, "rossnud");
    let names: Vec<String> = worn.meshes().iter().map(|m| m.name().to_string()).collect();
    assert_eq!(names.len(), 19, "{names:?}");
    assert!(names.iter().all(|n| !n.contains("TOE")), "{names:?}");
    let warnings: Vec<String> = worn.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        [
            "suit rossnud skin 16 (mesh xskin-rossnud-R_TOE0-TOEL on bone R_TOE0): the skeleton \
             has no bone named \"R_TOE0\": the part is left out",
            "suit rossnud skin 20 (mesh xskin-rossnud-L_TOE0-TOER on bone L_TOE0): the skeleton \
             has no bone named \"L_TOE0\": the part is left out",
        ]
    );
}
