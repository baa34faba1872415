//! glTF export, checked from outside: every corpus model and the generated MM2 and DMF fixtures
//! are exported, and beside each `.glb` goes what ossa itself computes for it (skinned positions
//! at the bind pose and at three times of every animation, in glTF's axes). Khronos'
//! glTF-Validator and three.js then read the files under node (`interop/check.mjs`); a second
//! reader there applies every JOINTS_n/WEIGHTS_n set. Here, the `gltf` crate reads the skins back.
//!
//! The node side needs `npm ci --prefix interop`; without it the node check says it skips,
//! unless `OSSA_REQUIRE_INTEROP` is set (as CI sets it), when that is a failure.

#![cfg(feature = "gltf")]

#[path = "corpus/mod.rs"]
mod corpus;
#[path = "gltf_cases/mod.rs"]
mod gltf_cases;
#[path = "gltf_interop/mod.rs"]
mod gltf_interop;
#[path = "mm2_fixtures/mod.rs"]
#[allow(unused_imports)]
mod mm2_fixtures;
#[path = "node_interop/mod.rs"]
mod node_interop;

use std::path::{Path, PathBuf};

use ossa::format::gltf::{Axes, Export, ExportOptions};
use ossa::io::DirFileSystem;
use ossa::textures::{ModelTextures, find_textures};
use ossa::{Format, LoadOptions, Mat3x4, Model, Strided};
use serde_json::{Value, json};

use corpus::corpus_dir;
use gltf_interop::{Reference, bind_bones, check_with_node, glb_json, mapped, skinned};

/// What three.js reads: the first four influences.
const THREE_INFLUENCES: usize = 4;

fn load(path: &Path) -> Model {
    Model::load_file(path, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn export(model: &Model, max_influences: usize, name: &str) -> Export {
    export_with(model, max_influences, name, None)
}

fn export_with(
    model: &Model,
    max_influences: usize,
    name: &str,
    textures: Option<&ModelTextures>,
) -> Export {
    model
        .export_gltf(&ExportOptions {
            max_influences,
            source_name: Some(name.to_owned()),
            textures,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// ossa's own four-influence GPU skinning (`gpu_weights` and `skinning_matrices` on the bind
/// vertices), as a vertex shader given ossa's GPU data computes it, in glTF's frame.
fn skinned_four(model: &Model, bones: &[Mat3x4]) -> Vec<f32> {
    let mut skinning = vec![Mat3x4::IDENTITY; bones.len()];
    model.skinning_matrices(bones, &mut skinning).unwrap();
    let mut all = Vec::new();
    for (m, mesh) in model.meshes().iter().enumerate() {
        let n = mesh.vertex_count();
        let mut bind = vec![0.0f32; n * 3];
        model
            .bind_vertices(m, 0, n, 0, &mut Strided::new(&mut bind, 3).unwrap())
            .unwrap();
        let mut joints = vec![0u16; n * THREE_INFLUENCES];
        let mut weights = vec![0.0f32; n * THREE_INFLUENCES];
        model
            .gpu_weights(m, THREE_INFLUENCES, &mut joints, &mut weights)
            .unwrap();
        let mut out = Vec::with_capacity(n * 3);
        for v in 0..n {
            let p = [bind[v * 3], bind[v * 3 + 1], bind[v * 3 + 2]];
            let mut acc = [0.0f32; 3];
            for k in 0..THREE_INFLUENCES {
                let w = weights[v * THREE_INFLUENCES + k];
                let q = skinning[joints[v * THREE_INFLUENCES + k] as usize].transform_point(p);
                for i in 0..3 {
                    acc[i] += w * q[i];
                }
            }
            out.extend(acc);
        }
        all.extend(mapped(model, &out));
    }
    all
}

/// The times each animation is compared at: its start, its middle key, and halfway between that
/// key and the next (where ossa's normalised lerp and glTF's slerp agree exactly).
fn sample_times(model: &Model, a: usize) -> Vec<f64> {
    let scene = &model.animations()[a];
    let fps = f64::from(scene.fps);
    let middle = f64::from(scene.frame_count / 2);
    let mut times = vec![0.0, middle / fps];
    if scene.frame_count > 1 && (scene.looping || scene.frame_count / 2 + 1 < scene.frame_count) {
        times.push((middle + 0.5) / fps);
    }
    times.dedup();
    times
}

/// Writes `NAME.glb` and, beside it, `NAME.ref.json` and `NAME.ref.bin` for `interop/check.mjs`.
fn write_case(
    dir: &Path,
    name: &str,
    model: &Model,
    max_influences: usize,
    textures: Option<&ModelTextures>,
) -> Export {
    let exported = export_with(model, max_influences, name, textures);
    let doc = glb_json(&exported.bytes);
    let four = max_influences == THREE_INFLUENCES;
    let reader = if four || model.meshes().iter().all(|m| m.max_influences() <= 4) {
        "three"
    } else {
        "all-sets"
    };
    let skin = |bones: &[Mat3x4]| {
        if four {
            skinned_four(model, bones)
        } else {
            skinned(model, bones)
        }
    };
    let mut bones = bind_bones(model);
    let mut reference = Reference::default();
    reference.push(Value::Null, 0.0, skin(&bones));
    for a in 0..model.animations().len() {
        let exported_name = doc["animations"][a]["name"].clone();
        for t in sample_times(model, a) {
            let (blend, n) = model.animation_blend(a, t).unwrap();
            model.pose_frames(&blend[..n], None, &mut bones).unwrap();
            reference.push(exported_name.clone(), t, skin(&bones));
        }
    }
    // The four-influence export is compared with ossa's own four-influence skinning, which it
    // equals; the full one with ossa's skinning, but for what the export reported.
    reference.write(dir, name, model, &exported, reader, !four);
    exported
}

/// The generated rig as a DPM with its texture beside it as TGA, and two `.skin` variants: the
/// first names another image (PNG), the second the same TGA.
fn textured_tube() -> (Model, ModelTextures) {
    let dir = scratch("textured");
    let rig = ossa::synth::TubeRig::with_vertices(200).build().unwrap();
    std::fs::write(dir.join("tube.dpm"), rig.save(Format::Dpm).unwrap()).unwrap();
    let pixels: Vec<u8> = (0..4 * 2 * 4).map(|i| (i * 8) as u8).collect();
    let image = image::RgbaImage::from_raw(4, 2, pixels).unwrap();
    image.save(dir.join("tube.tga")).unwrap();
    image.save(dir.join("tube_red.png")).unwrap();
    std::fs::write(dir.join("tube.dpm_0.skin"), "textures/tube,tube_red\n").unwrap();
    std::fs::write(dir.join("tube.dpm_1.skin"), "textures/tube,tube\n").unwrap();
    let model = load(&dir.join("tube.dpm"));
    let fs = DirFileSystem::new(&dir);
    let textures = find_textures(&model, Some((&fs, "tube.dpm")), 0);
    (model, textures)
}

/// The 1998 prototype's colonel: his suit file's skeleton wearing its suit of 21 `.msh` parts,
/// greeting (the skill's numbers from its `.bin`), with the images of `Textures/`.
fn colonel_1998(corpus: &Path) -> Option<(Model, ModelTextures)> {
    let dir = corpus.join("sims/proto1998");
    if !dir.is_dir() {
        eprintln!(
            "{} is missing; the 1998 colonel is not exported",
            dir.display()
        );
        return None;
    }
    let suit_file = dir.join("colonelsuit.CMX");
    let character = load(&suit_file);
    let colonel = ossa::assemble::dress(&character, "colonel", &mut |mesh| {
        Model::load_file(dir.join(format!("{mesh}.msh")), &LoadOptions::default())
    })
    .unwrap()
    .with_skills_file(dir.join("adult-greet01.cmx"), &LoadOptions::default())
    .unwrap();
    let textures = ossa::textures::find_textures_beside(&colonel, &suit_file, None, 0).unwrap();
    Some((colonel, textures))
}

/// A fresh directory; `what` and, for the fixtures each test makes for itself, a number of the
/// process's own keep tests that run at once apart.
fn scratch(what: &str) -> PathBuf {
    static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let what = if what == "interop" {
        what.to_owned()
    } else {
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("{what}-{}-{n}", std::process::id())
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("gltf-{what}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn exports_pass_the_validator_and_skin_in_three_js_as_in_ossa() {
    let dir = scratch("interop");
    let mut written = Vec::new();
    let (tube, textures) = textured_tube();
    assert_eq!(textures.images.len(), 2, "{:?}", textures.warnings);
    let doc = glb_json(&write_case(&dir, "tube_textured", &tube, 0, Some(&textures)).bytes);
    assert_eq!(doc["images"].as_array().unwrap().len(), 2);
    assert_eq!(doc["materials"][0]["name"], "textures/tube");
    assert_eq!(
        doc["extensions"]["KHR_materials_variants"]["variants"],
        json!([{ "name": "tube.dpm_0" }, { "name": "tube.dpm_1" }])
    );
    written.push("tube_textured".to_owned());
    if let Some((colonel, textures)) = colonel_1998(&corpus_dir()) {
        let name = "sims1998_colonel_greet01";
        let doc = glb_json(&write_case(&dir, name, &colonel, 0, Some(&textures)).bytes);
        assert_eq!(doc["images"].as_array().unwrap().len(), 14);
        assert_eq!(doc["meshes"].as_array().unwrap().len(), 21);
        assert_eq!(doc["animations"][0]["name"], "adult-greet01");
        written.push(name.to_owned());
    }
    for (name, model) in gltf_cases::cases(1) {
        let full = write_case(&dir, &name, &model, 0, None);
        written.push(name.clone());
        if model
            .meshes()
            .iter()
            .any(|m| m.max_influences() > THREE_INFLUENCES)
        {
            write_case(&dir, &format!("{name}-4"), &model, THREE_INFLUENCES, None);
            written.push(format!("{name}-4"));
        }
        eprintln!("{name}: {}", full.exactness.describe());
    }
    check_with_node(&dir, &written);
}

#[test]
fn zombie_reports_the_vertices_its_weight_sums_move() {
    let Some(bytes) = std::fs::read(corpus_dir().join("dpm/xon_zombie.dpm")).ok() else {
        eprintln!("corpus not found; skipping zombie_reports_the_vertices_its_weight_sums_move");
        return;
    };
    let model = Model::load(&bytes, &LoadOptions::default()).unwrap();
    let e = export(&model, 0, "xon_zombie.dpm").exactness;
    // The file's own sums are off by up to 0.002 on 651 vertices; at the bind pose the export
    // puts them where ossa does, and posed they part by about a thousandth of the model.
    assert_eq!(e.unnormalised_vertices, 651);
    assert!((e.worst_weight_sum - 0.002).abs() < 1e-5, "{e:?}");
    assert_eq!(e.inexact_vertices, 651);
    assert!(e.bind_max < 1e-6, "{e:?}");
    assert!((5e-4..2e-3).contains(&e.animated_max), "{e:?}");
    assert_eq!(e.frames_checked, model.frames().len());
    let doc = glb_json(&export(&model, 0, "xon_zombie.dpm").bytes);
    let extras = &doc["asset"]["extras"];
    assert_eq!(extras["source_format"], "DPM");
    assert_eq!(extras["exactness"]["inexact_vertices"], 651);
}

#[test]
fn skins_read_back_with_the_gltf_crate_give_the_bind_pose() {
    for (name, model) in gltf_cases::cases(1) {
        if model.meshes().is_empty() {
            continue;
        }
        let exported = export(&model, 0, &name);
        let doc = gltf::Gltf::from_slice(&exported.bytes).unwrap();
        let skin = doc.skins().next().unwrap();
        let reader = skin.reader(|_| doc.blob.as_deref());
        let ibms: Vec<[[f32; 4]; 4]> = reader.read_inverse_bind_matrices().unwrap().collect();
        let joints: Vec<gltf::Node> = skin.joints().collect();
        assert_eq!(joints.len(), model.bones().len(), "{name}");
        // World matrices of the nodes at rest, through their parents.
        let mut world = vec![glam::Mat4::IDENTITY; doc.nodes().len()];
        fn walk(node: &gltf::Node, parent: glam::Mat4, world: &mut [glam::Mat4]) {
            let m = parent * glam::Mat4::from_cols_array_2d(&node.transform().matrix());
            world[node.index()] = m;
            for c in node.children() {
                walk(&c, m, world);
            }
        }
        for root in doc.default_scene().unwrap().nodes() {
            walk(&root, glam::Mat4::IDENTITY, &mut world);
        }
        let axes = Axes::for_format(model.format());
        let size = exported.exactness.size.max(1e-6);
        for (b, (joint, ibm)) in joints.iter().zip(&ibms).enumerate() {
            // A name that repeats is made unique, the file's own kept in extras.
            let own = model.bones()[b].name.to_string_lossy();
            let written = joint.name().unwrap();
            if written != own {
                let extras: Value =
                    serde_json::from_str(joint.extras().as_ref().unwrap().get()).unwrap();
                assert_eq!(extras["name"], own.as_str(), "{name}");
                if own.is_empty() {
                    assert_eq!(written, format!("bone {b}"), "{name}");
                } else {
                    assert!(written.starts_with(&format!("{own}~")), "{name}: {written}");
                }
            }
            let bind = model.skeleton().bind_pose()[b];
            let expect = axes.vector(bind.translation());
            let got = world[joint.index()].w_axis.truncate().to_array();
            for i in 0..3 {
                assert!(
                    (got[i] - expect[i]).abs() <= 1e-4 * size.max(expect[i].abs()),
                    "{name} bone {b}: {got:?} vs {expect:?}"
                );
            }
            // Where the bind pose can be inverted, world * inverse bind is the identity.
            if model.skeleton().inverse_bind()[b] != (Mat3x4 { m: [0.0; 12] }) {
                let product = world[joint.index()] * glam::Mat4::from_cols_array_2d(ibm);
                assert!(
                    product.abs_diff_eq(glam::Mat4::IDENTITY, 1e-3),
                    "{name} bone {b}: {product:?}"
                );
            }
        }
    }
}
