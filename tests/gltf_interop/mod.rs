//! What the glTF export tests write beside each `.glb` for `interop/check.mjs` (ossa's own
//! skinned positions, `NAME.ref.json` and `NAME.ref.bin`), and the node run that reads them:
//! Khronos' glTF-Validator must report no error and no warning, and three.js (or the reader of
//! every JOINTS_n/WEIGHTS_n set) must skin every vertex where ossa does. Taken by
//! `tests/gltf_export.rs` and `tests/iqm_gltf_interop.rs`; the including test declares
//! `node_interop` at its root.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use ossa::format::gltf::{Axes, EXACT_TOLERANCE, Export};
use ossa::{FrameBlend, Mat3x4, Model, Strided};
use serde_json::{Value, json};

use crate::node_interop::node_ready;

/// The JSON chunk of a GLB, its header checked.
pub fn glb_json(bytes: &[u8]) -> Value {
    assert_eq!(&bytes[..4], b"glTF");
    assert_eq!(u32::from_le_bytes(bytes[4..8].try_into().unwrap()), 2);
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
        bytes.len()
    );
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    assert_eq!(&bytes[16..20], b"JSON");
    serde_json::from_slice(&bytes[20..20 + len]).unwrap()
}

/// Where ossa puts vertices in glTF's frame: positions mapped by the model's axes.
pub fn mapped(model: &Model, native: &[f32]) -> Vec<f32> {
    let to = Axes::for_format(model.format()).matrix(1.0);
    native
        .chunks_exact(3)
        .flat_map(|p| to.transform_point([p[0], p[1], p[2]]))
        .collect()
}

/// ossa's own skinning of every mesh with model-space `bones`, in glTF's frame.
pub fn skinned(model: &Model, bones: &[Mat3x4]) -> Vec<f32> {
    let mut all = Vec::new();
    for (m, mesh) in model.meshes().iter().enumerate() {
        let n = mesh.vertex_count();
        let mut out = vec![0.0f32; n * 3];
        model
            .skin_mesh(m, bones, 0, n, 0, &mut Strided::new(&mut out, 3).unwrap())
            .unwrap();
        all.extend(mapped(model, &out));
    }
    all
}

/// The model's bones posed at its bind pose (frame 0), where every reference starts.
pub fn bind_bones(model: &Model) -> Vec<Mat3x4> {
    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    let bind = [FrameBlend {
        frame: 0,
        weight: 1.0,
    }];
    model.pose_frames(&bind, None, &mut bones).unwrap();
    bones
}

/// ossa's positions at each sample, in the format `interop/check.mjs` reads.
#[derive(Default)]
pub struct Reference {
    floats: Vec<f32>,
    samples: Vec<Value>,
}

impl Reference {
    /// The positions of every mesh's vertices in `animation` (its exported name; null for the
    /// bind pose) at `time` seconds.
    pub fn push(&mut self, animation: Value, time: f64, positions: Vec<f32>) {
        self.samples.push(json!({
            "animation": animation,
            "time": time,
            "offset": self.floats.len(),
        }));
        self.floats.extend(positions);
    }

    /// Writes `NAME.glb` into `dir`, and beside it `NAME.ref.json` and `NAME.ref.bin` for
    /// `reader` (`three`, `all-sets`). `leave_out_inexact`: the vertices the export itself
    /// reports it moves are not compared.
    pub fn write(
        self,
        dir: &Path,
        name: &str,
        model: &Model,
        exported: &Export,
        reader: &str,
        leave_out_inexact: bool,
    ) {
        let meshes: Vec<Value> = model
            .meshes()
            .iter()
            .enumerate()
            .map(|(m, mesh)| {
                let excluded = if leave_out_inexact {
                    exported.exactness.inexact[m].clone()
                } else {
                    Vec::new()
                };
                json!({
                    "name": mesh.name().to_string_lossy(),
                    "vertex_count": mesh.vertex_count(),
                    "excluded": excluded,
                })
            })
            .collect();
        let reference = json!({
            "glb": format!("{name}.glb"),
            "reader": reader,
            "size": exported.exactness.size,
            "tolerance": EXACT_TOLERANCE,
            "meshes": meshes,
            "samples": self.samples,
        });
        std::fs::write(dir.join(format!("{name}.glb")), &exported.bytes).unwrap();
        std::fs::write(
            dir.join(format!("{name}.ref.json")),
            serde_json::to_vec_pretty(&reference).unwrap(),
        )
        .unwrap();
        let bin: Vec<u8> = self.floats.iter().flat_map(|f| f.to_le_bytes()).collect();
        std::fs::write(dir.join(format!("{name}.ref.bin")), bin).unwrap();
    }
}

/// Runs `interop/check.mjs` on `dir`, where node and its packages are there: it must pass, and
/// have checked every one of `written` (`NAME.glb`) and no more.
pub fn check_with_node(dir: &Path, written: &[String]) {
    let Some(interop) = node_ready() else {
        return;
    };
    let out = Command::new("node")
        .arg(interop.join("check.mjs"))
        .arg(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "interop/check.mjs failed");
    for name in written {
        assert!(
            text.lines()
                .any(|l| l.starts_with("ok ") && l.contains(&format!(" {name}.glb:"))),
            "{name}.glb was not checked"
        );
    }
    assert!(text.contains(&format!("{} passed, 0 failed", written.len())));
}
