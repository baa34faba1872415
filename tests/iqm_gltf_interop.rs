//! Every corpus IQM with meshes, converted to GLB as `ossa convert FILE.iqm -o FILE.glb` converts
//! it (textures found beside the file), and read from outside by the same checks as the other
//! formats' exports (`tests/gltf_export.rs`, `interop/check.mjs`): Khronos' glTF-Validator must
//! report no error and no warning, and three.js (GLTFLoader, AnimationMixer) must skin every
//! vertex where ossa skins the IQM, within `EXACT_TOLERANCE` of the model's size, at the bind
//! pose and at three times of every animation. An IQM vertex holds at most four bones, all of
//! which three.js reads: the export is compared with ossa's full skinning.
//!
//! The node side needs `npm ci --prefix interop`; without it the check says it skips, unless
//! `OSSA_REQUIRE_INTEROP` is set (as CI sets it), when that is a failure. Without the corpus it
//! says so and checks nothing.

#![cfg(feature = "gltf")]

mod corpus;
#[path = "gltf_interop/mod.rs"]
mod gltf_interop;
#[path = "node_interop/mod.rs"]
mod node_interop;

use std::path::{Path, PathBuf};

use ossa::format::gltf::{Export, ExportOptions};
use ossa::{FrameBlend, LoadOptions, Model};
use serde_json::Value;

use gltf_interop::{Reference, bind_bones, check_with_node, glb_json, skinned};

/// The corpus IQMs that load and have meshes (the others hold only animations, or are the
/// corpus's broken file, which `tests/iqm_corpus.rs` sees refused), by file name.
fn corpus_iqms(test: &str) -> Vec<(String, PathBuf)> {
    let Some(dir) = corpus::corpus_subdir("iqm", test) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in corpus::files_ending(&dir, &[".iqm"]) {
        let path = dir.join(&name);
        match Model::load_file(&path, &LoadOptions::default()) {
            Ok(model) if !model.meshes().is_empty() => out.push((name, path)),
            Ok(_) => eprintln!("{name}: no meshes, left out"),
            Err(e) => eprintln!("{name}: refused ({e}), left out"),
        }
    }
    assert!(
        out.len() >= 20,
        "only {} corpus IQMs with meshes",
        out.len()
    );
    out
}

/// Where each animation is compared, as `tests/gltf_export.rs` takes them: its first key, its
/// middle key, and halfway between that key and the next (where ossa's normalised lerp and
/// glTF's slerp agree exactly). Each is a time in seconds and the frames ossa shows there: the
/// frames are named here, from the scene's numbers, rather than taken from
/// `Model::animation_blend`, so that this compares the export with the model's frames
/// themselves (`times_name_the_frames_they_fall_on` checks `animation_blend` at these times).
fn compared_at(model: &Model, a: usize) -> Vec<(f64, Vec<FrameBlend>)> {
    let scene = &model.animations()[a];
    let fps = f64::from(scene.fps);
    let key = |k: u32| FrameBlend {
        frame: scene.first_frame + k,
        weight: 1.0,
    };
    let middle = scene.frame_count / 2;
    let mut out = vec![(0.0, vec![key(0)])];
    if middle > 0 {
        out.push((f64::from(middle) / fps, vec![key(middle)]));
    }
    let next = if middle + 1 < scene.frame_count {
        Some(middle + 1)
    } else {
        scene.looping.then_some(0)
    };
    if let Some(next) = next.filter(|_| scene.frame_count > 1) {
        let half = |k: u32| FrameBlend {
            frame: scene.first_frame + k,
            weight: 0.5,
        };
        out.push((
            (f64::from(middle) + 0.5) / fps,
            vec![half(middle), half(next)],
        ));
    }
    out
}

/// Converts `path` as `ossa convert` does and writes `NAME.glb` into `dir`, with `NAME.ref.json`
/// and `NAME.ref.bin` (ossa's skinned positions, in the format `interop/check.mjs` reads).
fn write_case(dir: &Path, name: &str, path: &Path) -> Export {
    let model = Model::load_file(path, &LoadOptions::default()).unwrap();
    assert!(
        model.meshes().iter().all(|m| m.max_influences() <= 4),
        "{name}: an IQM vertex holds four bones"
    );
    let textures = ossa::textures::find_textures_beside(&model, path, None, 0).unwrap();
    let exported = model
        .export_gltf(&ExportOptions {
            textures: Some(&textures),
            source_name: Some(path.file_name().unwrap().to_string_lossy().into_owned()),
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let doc = glb_json(&exported.bytes);
    let mut bones = bind_bones(&model);
    let mut reference = Reference::default();
    reference.push(Value::Null, 0.0, skinned(&model, &bones));
    // The export leaves out a scene without frames: the others keep their order.
    let played = (0..model.animations().len()).filter(|&a| model.animations()[a].frame_count > 0);
    for (exported_index, a) in played.enumerate() {
        for (t, blend) in compared_at(&model, a) {
            model.pose_frames(&blend, None, &mut bones).unwrap();
            let animation = doc["animations"][exported_index]["name"].clone();
            reference.push(animation, t, skinned(&model, &bones));
        }
    }
    // What the export itself reports it moves is left out, as for the other formats.
    reference.write(dir, name, &model, &exported, "three", true);
    exported
}

#[test]
fn corpus_iqms_as_glb_pass_the_validator_and_skin_in_three_js_as_in_ossa() {
    let test = "corpus_iqms_as_glb_pass_the_validator_and_skin_in_three_js_as_in_ossa";
    let files = corpus_iqms(test);
    if files.is_empty() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gltf-iqm-interop");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut written = Vec::new();
    for (file, path) in &files {
        let name = format!("iqm_{}", file.trim_end_matches(".iqm"));
        let exported = write_case(&dir, &name, path);
        eprintln!("{name}: {}", exported.exactness.describe());
        written.push(name);
    }
    check_with_node(&dir, &written);
}

/// `Model::animation_blend` at the times above gives the frames they name: a key's time shows
/// that key, halfway to the next shows both at half weight. A time such as 15/22 s is a little
/// short of frame 15 once multiplied by 22 fps (14.999999999999998): the blend must still show
/// frame 15, not frame 14, whichever way the fraction rounds.
#[test]
fn times_name_the_frames_they_fall_on() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (file, path) in corpus_iqms("times_name_the_frames_they_fall_on") {
        let model = Model::load_file(&path, &LoadOptions::default()).unwrap();
        for (a, scene) in model.animations().iter().enumerate() {
            if scene.frame_count == 0 {
                continue;
            }
            for (t, want) in compared_at(&model, a) {
                let (blend, n) = model.animation_blend(a, t).unwrap();
                let got: Vec<(u32, f32)> = (blend[..n].iter())
                    .filter(|b| b.weight > 0.0)
                    .map(|b| (b.frame, b.weight))
                    .collect();
                let same = got.len() == want.len()
                    && got
                        .iter()
                        .zip(&want)
                        .all(|(g, w)| g.0 == w.frame && (g.1 - w.weight).abs() < 1e-6);
                checked += 1;
                if !same {
                    wrong.push(format!(
                        "{file} animation {a} {:?} at {t} s: animation_blend gives {got:?}, the \
                         time is frames {:?}",
                        scene.name.to_string_lossy(),
                        want.iter().map(|b| (b.frame, b.weight)).collect::<Vec<_>>()
                    ));
                }
            }
        }
    }
    eprintln!("{checked} times checked");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
