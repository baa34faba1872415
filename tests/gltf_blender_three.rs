//! glTF from Blender, read by ossa and by three.js (`GLTFLoader` and `AnimationMixer`, through
//! `interop/sample-gltf.mjs`). For every file Blender's add-on exported in the corpus
//! (`gltf/blender/roundtrip/`), the world positions of every vertex agree to 1e-4 of the model's
//! size at every key of every animation and halfway between two keys, and at the file's node
//! pose where that is the bind pose (no skin, or no animation). `ossa convert` turns each into a
//! DPM that, read and skinned by the DPM tests' own reader (DarkPlaces' rules, not ossa's
//! loader), gives the glTF's positions at its frames. The `.blend` scenes of the corpus, exported by
//! Blender's own exporter (`interop/blender_export.py`, PyPI `bpy`), are checked against three.js
//! the same way.

#![cfg(feature = "gltf")]

#[path = "blender_interop/mod.rs"]
mod blender_interop;
mod common;
#[path = "node_interop/mod.rs"]
mod node_interop;

use std::path::{Path, PathBuf};
use std::process::Command;

use ossa::{LoadOptions, Model};
use serde_json::Value;

use blender_interop::blender_python;
use common::{RawDpm, absolute, blender_gltf_files, corpus_subdir, direct_skin, pose, skin};
use node_interop::node_ready;

const TOLERANCE: f64 = 1e-4;

fn files() -> Vec<PathBuf> {
    blender_gltf_files("the Blender glTF checks")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("blender-three-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Each mesh's vertices at `frame`, in model space.
fn positions(model: &Model, frame: u32) -> Vec<Vec<[f32; 3]>> {
    let bones = pose(model, &[ossa::FrameBlend { frame, weight: 1.0 }], None);
    (0..model.meshes().len())
        .map(|m| skin(model, m, &bones, 0).positions)
        .collect()
}

/// The frame of `model`, sampled at `fps`, that shows `animation` (None: the bind pose) at `time`
/// seconds.
fn frame_at(model: &Model, fps: f32, animation: Option<&str>, time: f64) -> u32 {
    let Some(name) = animation else {
        return 0;
    };
    let scene = (model.animations().iter())
        .find(|a| a.name.to_string() == name)
        .unwrap_or_else(|| panic!("no scene {name}"));
    assert_eq!(scene.fps, fps, "{name}");
    let at = time * f64::from(fps);
    assert!(
        (at - at.round()).abs() < 1e-3,
        "{name} at {time} s falls between frames"
    );
    let i = (at.round() as u32).min(scene.frame_count - 1);
    scene.first_frame + i
}

/// `file` sampled by three.js (into `out`) and skinned by ossa at every sample: the worst
/// distance, as a fraction of the model's size, and where.
fn against_three(interop: &Path, file: &Path, out: &Path) -> (f64, String) {
    let name = file.file_stem().unwrap().to_string_lossy().into_owned();
    let json_path = out.join(format!("{name}.three.json"));
    let run = Command::new("node")
        .arg(interop.join("sample-gltf.mjs"))
        .arg(file)
        .arg(&json_path)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let three: Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    let samples = three["samples"].as_array().unwrap();
    // Sampled at one frame per the shortest step between two sample times (half the keys'
    // interval), every key and every point halfway between two keys is a frame.
    let mut times: Vec<f64> = (samples.iter())
        .filter(|s| !s["animation"].is_null())
        .map(|s| s["time"].as_f64().unwrap())
        .collect();
    times.sort_by(f64::total_cmp);
    let step = (times.windows(2))
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 1e-6)
        .fold(f64::INFINITY, f64::min);
    let fps = if step.is_finite() {
        let f = 1.0 / step;
        if (f - f.round()).abs() < 1e-3 {
            f.round() as f32
        } else {
            f as f32
        }
    } else {
        24.0
    };
    let options = LoadOptions {
        sample_fps: fps,
        ..LoadOptions::default()
    };
    let model = Model::load_file(file, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
    // Which ossa mesh each of three.js's primitives is: by name, as ossa names primitives.
    let prims = three["primitives"].as_array().unwrap();
    let mesh_of: Vec<usize> = prims
        .iter()
        .map(|p| {
            let mesh = p["name"].as_str().unwrap_or_default();
            let count = prims.iter().filter(|q| q["mesh"] == p["mesh"]).count();
            let wanted = if count > 1 {
                format!("{mesh} {}", p["primitive"])
            } else {
                mesh.to_owned()
            };
            let found = (model.meshes().iter())
                .position(|m| m.name().to_string() == wanted)
                .unwrap_or_else(|| panic!("{name}: no mesh {wanted}"));
            assert_eq!(
                model.meshes()[found].vertex_count() as u64,
                p["vertexCount"].as_u64().unwrap(),
                "{name}: {wanted}"
            );
            found
        })
        .collect();
    // The model's size: the diagonal of the node pose's bounds.
    let (mut lo, mut hi) = ([f64::MAX; 3], [f64::MIN; 3]);
    for flat in samples[0]["positions"].as_array().unwrap() {
        for v in flat.as_array().unwrap().chunks(3) {
            for k in 0..3 {
                let x = v[k].as_f64().unwrap();
                lo[k] = lo[k].min(x);
                hi[k] = hi[k].max(x);
            }
        }
    }
    let size = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt();
    // A skinned file's node pose need not be its bind pose, which is ossa's frame 0; the
    // animations pose every node, so they are compared wherever there are skins.
    let skinned = model
        .meshes()
        .iter()
        .any(|m| m.max_influences() > 1 || model.bones().len() > model.meshes().len());
    let mut worst = (0.0f64, String::from("nothing compared"));
    let mut compared = 0;
    for sample in samples {
        let animation = sample["animation"].as_str();
        if animation.is_none() && skinned && samples.len() > 1 {
            continue;
        }
        compared += 1;
        let time = sample["time"].as_f64().unwrap();
        let ours = positions(&model, frame_at(&model, fps, animation, time));
        for (p, flat) in sample["positions"].as_array().unwrap().iter().enumerate() {
            let theirs = flat.as_array().unwrap();
            for (i, v) in ours[mesh_of[p]].iter().enumerate() {
                let d = (0..3)
                    .map(|k| (f64::from(v[k]) - theirs[3 * i + k].as_f64().unwrap()).powi(2))
                    .sum::<f64>()
                    .sqrt();
                if d >= worst.0 {
                    worst = (
                        d,
                        format!("{animation:?} at {time} s, primitive {p}, vertex {i}"),
                    );
                }
            }
        }
    }
    eprintln!(
        "{name}: {compared} of {} samples, worst {:.2e} of size {size:.3} ({})",
        samples.len(),
        worst.0 / size,
        worst.1
    );
    (worst.0 / size, format!("{name}: {}", worst.1))
}

#[test]
fn blender_files_skin_in_ossa_as_in_three_js() {
    let files = files();
    if files.is_empty() {
        return;
    }
    let Some(interop) = node_ready() else {
        return;
    };
    let out = scratch("samples");
    for file in &files {
        let (worst, at) = against_three(&interop, file, &out);
        assert!(worst <= TOLERANCE, "{worst} of the size off at {at}");
    }
}

/// The `.blend` scenes of the corpus, exported by Blender's own glTF exporter
/// (`interop/blender_export.py`), read by ossa and by three.js alike.
#[test]
fn blender_scenes_exported_by_bpy_skin_in_ossa_as_in_three_js() {
    let Some(scenes) = corpus_subdir("gltf/blender/scenes", "the .blend scenes") else {
        return;
    };
    let Some(python) = blender_python("the .blend scenes") else {
        return;
    };
    let Some(interop) = node_ready() else {
        return;
    };
    let out = scratch("bpy");
    let run = Command::new(&python)
        .arg(interop.join("blender_export.py"))
        .arg(&scenes)
        .arg(&out)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut glbs: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "glb"))
        .collect();
    glbs.sort();
    assert_eq!(glbs.len(), 4, "{said}");
    for glb in &glbs {
        let (worst, at) = against_three(&interop, glb, &out);
        assert!(worst <= TOLERANCE, "{worst} of the size off at {at}");
    }
}

/// Every vertex of `a` has one of `b` within `tolerance`, and the counts agree: the same points,
/// whatever order the saver put them in.
fn same_points(a: &[[f32; 3]], b: &[[f32; 3]], tolerance: f32) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} vertices against {}", a.len(), b.len()));
    }
    for (i, p) in a.iter().enumerate() {
        let nearest = b
            .iter()
            .map(|q| (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f32>().sqrt())
            .fold(f32::INFINITY, f32::min);
        if nearest > tolerance {
            return Err(format!("vertex {i} at {p:?} is {nearest} from any"));
        }
    }
    Ok(())
}

#[test]
fn blender_files_convert_to_dpm_that_skins_the_same() {
    let files = files();
    let out = scratch("dpm");
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let dpm = out.join(format!("{name}.dpm"));
        let run = Command::new(env!("CARGO_BIN_EXE_ossa"))
            .arg("convert")
            .arg(file)
            .arg("-o")
            .arg(&dpm)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let gltf = Model::load_file(file, &LoadOptions::default()).unwrap();
        // The DPM read by DarkPlaces' rules, with the reader and skinning written in the DPM
        // tests without ossa's own (tests/common).
        let raw = RawDpm::parse(&std::fs::read(&dpm).unwrap()).unwrap();
        assert_eq!(raw.poses.len(), gltf.frames().len(), "{name}");
        assert_eq!(raw.meshes.len(), gltf.meshes().len(), "{name}");
        let info = gltf.info();
        let size = (0..3)
            .map(|k| (info.maxs[k] - info.mins[k]).powi(2))
            .sum::<f32>()
            .sqrt();
        // The saver renumbers vertices for the vertex cache: the same points, in its order.
        for frame in (0..gltf.frames().len()).step_by(4) {
            let ours = positions(&gltf, frame as u32);
            let abs = absolute(&raw.parents(), &raw.poses[frame]);
            for (m, mesh) in raw.meshes.iter().enumerate() {
                let theirs: Vec<[f32; 3]> = (mesh.vertices.iter())
                    .map(|v| direct_skin(v, &abs).0.map(|x| x as f32))
                    .collect();
                // A DPM keeps the meshes' order (and their shaders, not their names).
                same_points(&ours[m], &theirs, 1e-5 * size)
                    .unwrap_or_else(|e| panic!("{name} frame {frame} mesh {m}: {e}"));
            }
        }
    }
}
