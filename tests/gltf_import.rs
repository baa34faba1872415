//! glTF import: Blender's exports from the corpus load with the values they hold; every model the
//! export test writes comes back with its bones, triangles and skinned positions; hand-built
//! hostile files are refused with the right code and a message naming the object.

#![cfg(feature = "gltf")]

#[path = "corpus/mod.rs"]
mod corpus;
#[path = "counting_alloc/mod.rs"]
#[allow(dead_code)]
mod counting_alloc;
#[path = "glb_bytes/mod.rs"]
mod glb_bytes;
#[path = "memory_fs/mod.rs"]
mod memory_fs;
use glb_bytes::{glb, glb_bin, glb_json};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;
#[path = "gltf_cases/mod.rs"]
mod gltf_cases;
#[path = "mm2_fixtures/mod.rs"]
#[allow(unused_imports)]
mod mm2_fixtures;
mod sweep;

use std::path::Path;

use ossa::format::gltf::ExportOptions;
use ossa::{ErrorCode, Format, FrameBlend, LoadOptions, Model};
use serde_json::{Value, json};

use corpus::corpus_subdir;
use sweep::{CLEAN, XorShift, check_invariants, flip_bits, flip_positions, lengths, pose, skin};

fn load(path: &Path) -> Model {
    Model::load_file(path, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// Blender's files
// ---------------------------------------------------------------------------------------------

fn blender(name: &str) -> Option<Model> {
    let dir = corpus_subdir("gltf/blender/roundtrip", "the Blender glTF files")?;
    Some(load(&dir.join(name).join(format!("{name}.gltf"))))
}

#[test]
fn blender_skinned_cylinder() {
    let Some(m) = blender("03_skinned_cylinder") else {
        return;
    };
    assert_eq!(m.format(), Format::Gltf);
    assert_eq!((m.up_axis(), m.handedness()), (1, 1));
    // The armature node (Root.001) is no joint and never moves: it is folded away.
    let bones: Vec<(String, i32)> = m
        .bones()
        .iter()
        .map(|b| (b.name.to_string_lossy(), b.parent))
        .collect();
    let expect = [
        ("Joint_One", -1),
        ("Joint_Two", 0),
        ("Joint_Three", 1),
        ("Joint_Four", 2),
    ];
    assert_eq!(bones, expect.map(|(n, p)| (n.to_owned(), p)));
    assert_eq!(m.meshes().len(), 1);
    let mesh = &m.meshes()[0];
    assert_eq!(mesh.name().to_string_lossy(), "Cylinder");
    assert_eq!(mesh.vertex_count(), 750);
    assert_eq!(mesh.indices().len(), 316 * 3);
    assert!(mesh.texcoords().is_some());
    // 49 keys over two seconds: sampled at their own 24 fps.
    let scenes: Vec<(String, u32, f32)> = m
        .animations()
        .iter()
        .map(|a| (a.name.to_string_lossy(), a.frame_count, a.fps))
        .collect();
    assert_eq!(
        scenes,
        [("SkeletonAnimation_Root.001".to_owned(), 49, 24.0)]
    );
    assert_eq!(m.frames().len(), 50);
    // Joint_Two's bind pose: one unit along Joint_One's y, which is turned -90 degrees about x.
    let bind = pose(
        &m,
        &[FrameBlend {
            frame: 0,
            weight: 1.0,
        }],
        None,
    );
    let t = bind[1].translation();
    for (a, b) in t.iter().zip([0.0, 0.0, -1.0]) {
        assert!((a - b).abs() < 1e-5, "{t:?}");
    }
    check_invariants(&m, "03_skinned_cylinder");
}

#[test]
fn blender_node_animations() {
    // Meshes without a skin, moved by their own nodes: each node becomes a bone.
    let Some(m) = blender("03_all_animations") else {
        return;
    };
    let bones: Vec<(String, i32)> = m
        .bones()
        .iter()
        .map(|b| (b.name.to_string_lossy(), b.parent))
        .collect();
    let expect = [("Sphere", -1), ("Cube", 0), ("Tetrahedron", 1)];
    assert_eq!(bones, expect.map(|(n, p)| (n.to_owned(), p)));
    assert_eq!(m.meshes().len(), 3);
    // Three keys a second apart: three frames at 1 fps each.
    let scenes: Vec<(String, u32, f32)> = m
        .animations()
        .iter()
        .map(|a| (a.name.to_string_lossy(), a.frame_count, a.fps))
        .collect();
    let expect = [
        ("SphereAction", 3, 1.0),
        ("ConeAction", 3, 1.0),
        ("CubeAction", 3, 1.0),
    ];
    assert_eq!(scenes, expect.map(|(n, c, f)| (n.to_owned(), c, f)));
    check_invariants(&m, "03_all_animations");

    let Some(m) = blender("06_parent-inverse-anim") else {
        return;
    };
    assert_eq!(m.bones().len(), 10);
    assert_eq!(m.meshes().len(), 10);
    let parents: Vec<i32> = m.bones().iter().map(|b| b.parent).collect();
    assert_eq!(parents, [-1, -1, -1, -1, -1, 0, 1, 2, 3, 4]);
    let scenes: Vec<(String, u32)> = m
        .animations()
        .iter()
        .map(|a| (a.name.to_string_lossy(), a.frame_count))
        .collect();
    assert_eq!(
        scenes,
        [
            ("ChildEulerAction.002", 10),
            ("ChildEulerAction.001", 2),
            ("ChildScaleAction", 2),
            ("ChildEulerAction", 10),
            ("Cube.001Action", 2)
        ]
        .map(|(n, c)| (n.to_owned(), c))
    );
    check_invariants(&m, "06_parent-inverse-anim");
}

// ---------------------------------------------------------------------------------------------
// Round trip
// ---------------------------------------------------------------------------------------------

fn skinned(m: &Model, frame: u32) -> Vec<Vec<[f32; 3]>> {
    let bones = pose(m, &[FrameBlend { frame, weight: 1.0 }], None);
    (0..m.meshes().len())
        .map(|i| skin(m, i, &bones, 0).positions)
        .collect()
}

fn worst(a: &[Vec<[f32; 3]>], b: &[Vec<[f32; 3]>]) -> f32 {
    let mut w = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.len(), y.len());
        for (p, q) in x.iter().zip(y) {
            let d = (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f32>().sqrt();
            w = w.max(d);
        }
    }
    w
}

#[test]
fn export_then_import_gives_the_model_back() {
    for (name, m) in gltf_cases::cases(6) {
        // JSON with a data URI takes the same path once its buffer is decoded: the two small
        // generated models check it, and debug builds stay quick.
        let forms: &[bool] = if name == "mm2_doll" || name == "dmf_tube" {
            &[true, false]
        } else {
            &[true]
        };
        for &binary in forms {
            let exported = m
                .export_gltf(&ExportOptions {
                    binary,
                    ..Default::default()
                })
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let back = Model::load(&exported.bytes, &LoadOptions::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                back.format(),
                if binary { Format::Glb } else { Format::Gltf }
            );
            let bones = |m: &Model| -> Vec<(String, i32)> {
                m.bones()
                    .iter()
                    .map(|b| (b.name.to_string_lossy(), b.parent))
                    .collect()
            };
            assert_eq!(bones(&back), bones(&m), "{name}");
            assert_eq!(back.up_axis(), m.up_axis(), "{name}");
            assert_eq!(back.handedness(), m.handedness(), "{name}");
            assert_eq!(back.meshes().len(), m.meshes().len(), "{name}");
            for (a, b) in back.meshes().iter().zip(m.meshes()) {
                assert_eq!(a.indices(), b.indices(), "{name}");
                assert_eq!(a.name(), b.name(), "{name}");
                // The export names a material after the shader, or the mesh where it has none.
                if b.material().is_none() && !b.shader().is_empty() {
                    assert_eq!(a.shader(), b.shader(), "{name}");
                }
            }
            let size = exported.exactness.size;
            let e = &exported.exactness;
            let tol = |inexact: f32| (1e-5 + inexact) * size;
            let d = worst(&skinned(&back, 0), &skinned(&m, 0));
            assert!(
                d <= tol(e.bind_max),
                "{name}: bind pose off by {d} (size {size})"
            );
            if binary {
                assert_eq!(back.animations().len(), m.animations().len(), "{name}");
            }
            for (a, b) in back.animations().iter().zip(m.animations()) {
                assert_eq!(a.name, b.name, "{name}");
                // A scene whose every channel holds one value is written as one key each: glTF
                // then keeps no duration, and it comes back as one frame.
                assert!(a.frame_count >= 1, "{name}");
                let n = b.frame_count;
                for k in [0, n / 2, n.saturating_sub(1)] {
                    if n == 0 {
                        continue;
                    }
                    let d = worst(
                        &skinned(&back, a.first_frame + k.min(a.frame_count - 1)),
                        &skinned(&m, b.first_frame + k),
                    );
                    assert!(
                        d <= tol(e.animated_max.max(e.bind_max)),
                        "{name} {}: frame {k} off by {d} (size {size})",
                        b.name
                    );
                }
            }
        }
    }
}

/// POSITION's bounds of every primitive, as the file declares them.
fn position_bounds(json: &Value) -> Vec<f64> {
    let mut out = Vec::new();
    for mesh in json["meshes"].as_array().unwrap() {
        for p in mesh["primitives"].as_array().unwrap() {
            let a = &json["accessors"][p["attributes"]["POSITION"].as_u64().unwrap() as usize];
            for key in ["min", "max"] {
                out.extend(
                    a[key]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_f64().unwrap()),
                );
            }
        }
    }
    out
}

/// A glTF ossa exported, read back and exported again, is written in the same frame: the source
/// format's axes mapped onto glTF's once, not the source's axes taken for glTF's.
#[test]
fn an_imported_export_exports_again_in_the_same_frame() {
    let rig = ossa::synth::TubeRig::with_vertices(200).build().unwrap();
    let dpm = Model::load(&rig.save(Format::Dpm).unwrap(), &LoadOptions::default()).unwrap();
    let mut models = vec![("dpm_tube", dpm), ("mm2_doll", mm2_fixtures::doll())];
    if let Some(dir) = corpus_subdir("sims", "an_imported_export_exports_again_in_the_same_frame") {
        let adult = load(&dir.join("so_adult-skeleton.cmx"));
        let mesh = load(&dir.join("so_xskin-b001mafit_01-PELVIS-BODY.skn"));
        models.push(("sims_body", Model::bind(&mesh, &adult).unwrap()));
    }
    let binary = ExportOptions {
        binary: true,
        ..Default::default()
    };
    for (name, m) in models {
        let first = m.export_gltf(&binary).unwrap();
        let back = Model::load(&first.bytes, &LoadOptions::default()).unwrap();
        assert_eq!(back.frame_format(), m.format(), "{name}");
        let second = back.export_gltf(&binary).unwrap();
        let (j1, j2) = (glb_json(&first.bytes), glb_json(&second.bytes));
        assert_eq!(
            j2["asset"]["extras"]["source_format"],
            json!(m.format().name()),
            "{name}"
        );
        assert_eq!(
            j2["asset"]["extras"]["axes"], j1["asset"]["extras"]["axes"],
            "{name}"
        );
        let size = f64::from(first.exactness.size);
        let (b1, b2) = (position_bounds(&j1), position_bounds(&j2));
        assert_eq!(b1.len(), b2.len(), "{name}");
        for (a, b) in b1.iter().zip(&b2) {
            assert!(
                (a - b).abs() <= 1e-5 * size,
                "{name}: bounds {b1:?} became {b2:?}"
            );
        }
        let again = Model::load(&second.bytes, &LoadOptions::default()).unwrap();
        let d = worst(&skinned(&again, 0), &skinned(&m, 0));
        assert!(
            d <= 1e-5 * first.exactness.size,
            "{name}: bind pose off by {d}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-built files
// ---------------------------------------------------------------------------------------------

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Two joints (a root and a child one unit up), one triangle skinned to both, and a two-key
/// LINEAR rotation of the child: the bytes and the JSON, to break.
fn skinned_triangle() -> (Value, Vec<u8>) {
    let mut bin = Vec::new();
    // 0: positions, 36 bytes
    bin.extend(f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0]));
    // 36: joints (u8 x4 per vertex), 12 bytes
    bin.extend([0u8, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0]);
    // 48: weights, 48 bytes
    bin.extend(f32s(&[
        1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0,
    ]));
    // 96: indices u16 x3 (+2 padding)
    bin.extend([0u8, 0, 1, 0, 2, 0, 0, 0]);
    // 104: inverse binds, 2 x 64
    let mut ibm = [0.0f32; 16];
    for i in 0..4 {
        ibm[i * 5] = 1.0;
    }
    bin.extend(f32s(&ibm));
    ibm[13] = -1.0;
    bin.extend(f32s(&ibm));
    // 232: key times
    bin.extend(f32s(&[0.0, 1.0]));
    // 240: rotations
    let h = std::f32::consts::FRAC_1_SQRT_2;
    bin.extend(f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, h, h]));
    let json = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, 2]}],
        "nodes": [
            {"name": "hip", "children": [1]},
            {"name": "spine", "translation": [0.0, 1.0, 0.0]},
            {"name": "body", "mesh": 0, "skin": 0}
        ],
        "skins": [{"joints": [0, 1], "inverseBindMatrices": 4}],
        "meshes": [{"name": "tri", "primitives": [{
            "attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2},
            "indices": 3
        }]}],
        "animations": [{"name": "bend", "channels": [
            {"sampler": 0, "target": {"node": 1, "path": "rotation"}}
        ], "samplers": [{"input": 5, "output": 6}]}],
        "buffers": [{"byteLength": bin.len()}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 12},
            {"buffer": 0, "byteOffset": 48, "byteLength": 48},
            {"buffer": 0, "byteOffset": 96, "byteLength": 6},
            {"buffer": 0, "byteOffset": 104, "byteLength": 128},
            {"buffer": 0, "byteOffset": 232, "byteLength": 8},
            {"buffer": 0, "byteOffset": 240, "byteLength": 32}
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
             "min": [0.0, 0.0, 0.0], "max": [1.0, 2.0, 0.0]},
            {"bufferView": 1, "componentType": 5121, "count": 3, "type": "VEC4"},
            {"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"},
            {"bufferView": 3, "componentType": 5123, "count": 3, "type": "SCALAR"},
            {"bufferView": 4, "componentType": 5126, "count": 2, "type": "MAT4"},
            {"bufferView": 5, "componentType": 5126, "count": 2, "type": "SCALAR",
             "min": [0.0], "max": [1.0]},
            {"bufferView": 6, "componentType": 5126, "count": 2, "type": "VEC4"}
        ]
    });
    (json, bin)
}

fn load_glb(bytes: &[u8]) -> ossa::Result<Model> {
    Model::load(bytes, &LoadOptions::default())
}

/// `edit` applied to the triangle's JSON, loaded: the error, with its code and message checked.
fn refused(edit: impl FnOnce(&mut Value), code: ErrorCode, names: &str) -> ossa::Error {
    let (mut json, bin) = skinned_triangle();
    edit(&mut json);
    let e = load_glb(&glb(&json, &bin)).expect_err("a broken file loaded");
    assert_eq!(e.code(), code, "{e}");
    assert!(e.to_string().contains(names), "{e} does not name {names}");
    e
}

#[test]
fn the_skinned_triangle_loads_poses_and_skins() {
    let (json, bin) = skinned_triangle();
    let m = load_glb(&glb(&json, &bin)).unwrap();
    assert_eq!(m.format(), Format::Glb);
    let names: Vec<String> = m.bones().iter().map(|b| b.name.to_string_lossy()).collect();
    assert_eq!(names, ["hip", "spine"]);
    assert_eq!(m.bones()[1].parent, 0);
    assert_eq!((m.up_axis(), m.handedness()), (1, 1));
    assert_eq!(m.meshes()[0].indices(), [0, 1, 2]);
    assert_eq!(m.meshes()[0].name().to_string_lossy(), "tri");
    // Frame 0 is the bind pose; the animation is sampled at its keys' rate, 1 fps.
    assert_eq!(m.animations().len(), 1);
    assert_eq!(m.animations()[0].frame_count, 2);
    assert_eq!(m.animations()[0].fps, 1.0);
    let bind = &skinned(&m, 0)[0];
    assert_eq!(
        bind,
        &vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
    );
    // At the last key the child has turned 90 degrees about z around (0, 1, 0): (0, 2, 0) goes
    // to (-1, 1, 0); the half-weighted (1, 0, 0) is halfway between itself and (1, 2, 0).
    let end = &skinned(&m, 2)[0];
    let expect = [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]];
    for (p, q) in end.iter().zip(expect) {
        for k in 0..3 {
            assert!((p[k] - q[k]).abs() < 4e-6, "{end:?}");
        }
    }
    check_invariants(&m, "skinned triangle");
    // The same as JSON with a data URI.
    use base64::Engine;
    let mut text = json.clone();
    text["buffers"][0]["uri"] = json!(format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bin)
    ));
    let t = Model::load(&serde_json::to_vec(&text).unwrap(), &LoadOptions::default()).unwrap();
    assert_eq!(t.format(), Format::Gltf);
    assert_eq!(&skinned(&t, 2)[0], end);
}

#[test]
fn sample_fps_sets_the_rate_and_is_checked() {
    let (json, bin) = skinned_triangle();
    let bytes = glb(&json, &bin);
    let m = Model::load(
        &bytes,
        &LoadOptions {
            sample_fps: 10.0,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(m.animations()[0].frame_count, 11);
    assert_eq!(m.animations()[0].fps, 10.0);
    let e = Model::load(
        &bytes,
        &LoadOptions {
            sample_fps: -1.0,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
}

/// Issue 37: a scene of 22,000 frames at 10 fps (2,200 s) written to glTF comes back as it
/// was, though f32 key times that far out are spaced only to their last bits.
#[test]
fn a_long_scene_comes_back_at_its_own_rate_and_length() {
    let rig = ossa::synth::TubeRig {
        frames: 22_000,
        ..Default::default()
    };
    let model = rig.build().unwrap();
    let scene = &model.animations()[0];
    assert_eq!(
        (scene.frame_count, scene.fps, scene.looping),
        (22_000, 10.0, true)
    );
    let bytes = model.save(Format::Glb).unwrap();
    let back = Model::load(&bytes, &LoadOptions::default()).unwrap();
    let s = &back.animations()[0];
    assert_eq!(
        (s.name.to_string_lossy(), s.frame_count, s.fps, s.looping),
        ("wave".to_owned(), 22_000, 10.0, true)
    );
    // The last frame is the source's last, not the loop's return to the first.
    let last =
        |m: &Model, a: &ossa::model::Animation| skinned(m, a.first_frame + a.frame_count - 1);
    let off = worst(&last(&model, scene), &last(&back, s));
    assert!(off < 1e-3, "the last frame is {off} away");

    // Without the export's description, the keys' own rate is still found: their spacing is
    // compared within what f32 can tell apart at their time.
    let mut doc = glb_json(&bytes);
    doc["animations"][0]
        .as_object_mut()
        .unwrap()
        .remove("extras");
    let bin = glb_bin(&bytes);
    let bare = Model::load(&glb(&doc, bin), &LoadOptions::default()).unwrap();
    let s = &bare.animations()[0];
    // The loop's closing key is a frame of its own there.
    assert_eq!((s.frame_count, s.fps, s.looping), (22_001, 10.0, false));
}

#[test]
fn accessors_past_their_views_and_bad_strides_are_refused() {
    refused(
        |j| j["accessors"][0]["count"] = json!(4),
        ErrorCode::Truncated,
        "accessor 0 (POSITION)",
    );
    refused(
        |j| j["accessors"][0]["byteOffset"] = json!(4),
        ErrorCode::Truncated,
        "accessor 0",
    );
    refused(
        |j| j["bufferViews"][0]["byteLength"] = json!(1000),
        ErrorCode::Truncated,
        "buffer view 0",
    );
    refused(
        |j| j["bufferViews"][2]["byteStride"] = json!(6),
        ErrorCode::Malformed,
        "byteStride 6",
    );
    refused(
        |j| j["bufferViews"][2]["byteStride"] = json!(256),
        ErrorCode::Malformed,
        "accessor 2",
    );
    refused(
        |j| j["bufferViews"][3]["byteStride"] = json!(4),
        ErrorCode::Malformed,
        "index data has a byteStride",
    );
    refused(
        |j| j["accessors"][0]["componentType"] = json!(5000),
        ErrorCode::Malformed,
        "accessor 0",
    );
    refused(
        |j| j["accessors"][3]["componentType"] = json!(5122),
        ErrorCode::Malformed,
        "accessor 3 (indices)",
    );
    refused(
        |j| j["accessors"][2]["normalized"] = json!(true),
        ErrorCode::Malformed,
        "normalized",
    );
    refused(
        |j| j["meshes"][0]["primitives"][0]["indices"] = json!(9),
        ErrorCode::Malformed,
        "accessor 9 does not exist",
    );
}

#[test]
fn indices_and_joints_out_of_range_are_refused() {
    let (json, mut bin) = skinned_triangle();
    bin[98] = 3;
    let e = load_glb(&glb(&json, &bin)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert!(
        e.to_string().contains("mesh 0 primitive 0: index 1 is 3"),
        "{e}"
    );
    let (json, mut bin) = skinned_triangle();
    bin[37] = 2;
    let e = load_glb(&glb(&json, &bin)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert!(e.to_string().contains("joint 2 is past skin 0"), "{e}");
}

#[test]
fn sparse_accessors_are_applied_and_checked() {
    // Vertex 2 moved to (0, 3, 0) by a sparse entry whose index and value follow the keys.
    let (mut json, mut bin) = skinned_triangle();
    let at = bin.len();
    bin.extend([2u8, 0, 0, 0]);
    bin.extend(f32s(&[0.0, 3.0, 0.0]));
    let views = json["bufferViews"].as_array_mut().unwrap();
    views.push(json!({"buffer": 0, "byteOffset": at, "byteLength": 4}));
    views.push(json!({"buffer": 0, "byteOffset": at + 4, "byteLength": 12}));
    json["buffers"][0]["byteLength"] = json!(bin.len());
    json["accessors"][0]["sparse"] = json!({
        "count": 1,
        "indices": {"bufferView": 7, "componentType": 5121},
        "values": {"bufferView": 8}
    });
    let m = load_glb(&glb(&json, &bin)).unwrap();
    assert_eq!(skinned(&m, 0)[0][2], [0.0, 3.0, 0.0]);
    // An index past the count, and two that do not increase.
    let mut bad = bin.clone();
    bad[at] = 3;
    let e = load_glb(&glb(&json, &bad)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert!(
        e.to_string()
            .contains("accessor 0 (POSITION): sparse index 0 is 3"),
        "{e}"
    );
    let mut two = json.clone();
    two["accessors"][0]["sparse"]["count"] = json!(2);
    two["bufferViews"][7]["byteLength"] = json!(2);
    two["bufferViews"][8]["byteLength"] = json!(24);
    two["bufferViews"][8]["byteOffset"] = json!(at + 4);
    let mut unsorted = bin.clone();
    unsorted[at] = 2;
    unsorted[at + 1] = 1;
    unsorted.extend(f32s(&[0.0; 3]));
    two["buffers"][0]["byteLength"] = json!(unsorted.len());
    let e = load_glb(&glb(&two, &unsorted)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert!(
        e.to_string()
            .contains("sparse index 1 is 1: indices must increase strictly"),
        "{e}"
    );
}

#[test]
fn node_trees_that_are_not_trees_are_refused() {
    refused(
        |j| j["nodes"][1]["children"] = json!([0]),
        ErrorCode::Malformed,
        "node 0: its chain of parents is a cycle",
    );
    refused(
        |j| j["nodes"][2]["children"] = json!([1]),
        ErrorCode::Malformed,
        "node 1 has two parents, node 0 and node 2",
    );
    refused(
        |j| j["nodes"][1]["children"] = json!([1]),
        ErrorCode::Malformed,
        "node 1 has two parents",
    );
    refused(
        |j| j["nodes"][0]["children"] = json!([7]),
        ErrorCode::Malformed,
        "node 0: child 7 does not exist",
    );
    refused(
        |j| j["scenes"][0]["nodes"] = json!([1]),
        ErrorCode::Malformed,
        "scene 0: node 1 is a child of node 0",
    );
}

#[test]
fn a_kilobyte_declaring_gigabytes_is_refused_before_allocating() {
    // A buffer longer than the BIN chunk.
    let e = refused(
        |j| j["buffers"][0]["byteLength"] = json!(4_000_000_000u64),
        ErrorCode::Truncated,
        "buffer 0: holds",
    );
    drop(e);
    // An accessor of a billion zeros (no buffer view).
    let (mut json, bin) = skinned_triangle();
    json["accessors"][5] =
        json!({"componentType": 5126, "count": 1_000_000_000u64, "type": "SCALAR"});
    let bytes = glb(&json, &bin);
    assert!(bytes.len() < 4096);
    let (r, peak) = counting_alloc::peak_of(|| load_glb(&bytes));
    let e = r.unwrap_err();
    assert!(
        peak <= counting_alloc::budget(bytes.len()),
        "{peak} bytes of heap"
    );
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    assert!(e.to_string().contains("accessor 5"), "{e}");
    // A view a gigabyte long in a small buffer.
    refused(
        |j| j["bufferViews"][0]["byteLength"] = json!(1u64 << 30),
        ErrorCode::Truncated,
        "buffer view 0",
    );
    // A GLB header that says the file is longer than it is.
    let (json, bin) = skinned_triangle();
    let mut bytes = glb(&json, &bin);
    bytes[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = load_glb(&bytes).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Truncated, "{e}");
    assert_eq!(e.offset(), Some(8));
}

#[test]
fn external_buffers_are_read_beside_the_model_and_never_outside() {
    let (mut json, bin) = skinned_triangle();
    json["buffers"][0]["uri"] = json!("data%20file.bin");
    let text = serde_json::to_vec(&json).unwrap();
    let fs = memory_fs::MemoryFs::from_files([
        ("models/tri.gltf", text.clone()),
        ("models/data file.bin", bin.clone()),
    ]);
    let m = Model::load_file(
        "models/tri.gltf",
        &LoadOptions {
            io: Some(&fs),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(m.meshes()[0].vertex_count(), 3);
    // From memory without a filesystem there is nowhere to read it from.
    let e = Model::load(&text, &LoadOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
    for uri in [
        "../secret.bin",
        "/etc/passwd",
        "sub/%2E%2E/%2E%2E/x.bin",
        "C:/x.bin",
    ] {
        json["buffers"][0]["uri"] = json!(uri);
        let text = serde_json::to_vec(&json).unwrap();
        let fs = memory_fs::MemoryFs::from_files([("models/tri.gltf", text)]);
        let e = Model::load_file(
            "models/tri.gltf",
            &LoadOptions {
                io: Some(&fs),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{uri}: {e}");
        assert!(e.to_string().contains("buffer 0"), "{e}");
        assert_eq!(fs.asked(), ["models/tri.gltf"], "{uri}");
    }
}

#[test]
fn bad_base64_is_refused() {
    let (mut json, _) = skinned_triangle();
    json["buffers"][0]["uri"] = json!("data:application/octet-stream;base64,@@@@");
    let e = Model::load(&serde_json::to_vec(&json).unwrap(), &LoadOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert!(e.to_string().contains("buffer 0: bad base64"), "{e}");
}

#[test]
fn detection_by_content_and_by_name() {
    let (json, bin) = skinned_triangle();
    assert_eq!(
        ossa::format::detect(&glb(&json, &bin), None),
        Some(Format::Glb)
    );
    let mut text = json.clone();
    text["buffers"][0]["uri"] = json!("x.bin");
    let t = serde_json::to_vec_pretty(&text).unwrap();
    assert_eq!(ossa::format::detect(&t, None), Some(Format::Gltf));
    assert_eq!(
        ossa::format::detect(b"{}", Some("a.gltf")),
        Some(Format::Gltf)
    );
    assert_eq!(
        ossa::format::detect(br#"{"asset": {"version": "1.0"}}"#, None),
        None
    );
}

fn survive(bytes: &[u8], what: &str) -> bool {
    match load_glb(bytes) {
        Ok(m) => {
            check_invariants(&m, what);
            true
        }
        Err(e) => {
            assert!(CLEAN.contains(&e.code()), "{what}: {e}");
            false
        }
    }
}

#[test]
fn truncated_at_every_length() {
    let (json, bin) = skinned_triangle();
    let bytes = glb(&json, &bin);
    for n in lengths(bytes.len(), 4096) {
        assert!(
            !survive(&bytes[..n], &format!("cut at {n}")),
            "cut at {n} loaded"
        );
    }
}

#[test]
fn every_bit_flipped() {
    let (json, bin) = skinned_triangle();
    let bytes = glb(&json, &bin);
    let mut rng = XorShift::new(7);
    let tally = flip_bits(&bytes, flip_positions(bytes.len(), &mut rng, 4096), survive);
    assert!(tally.loaded > 0 && tally.failed > 0, "{tally:?}");
}

#[test]
fn materials_name_the_shader_and_keep_their_base_colour_image() {
    let (mut json, mut bin) = skinned_triangle();
    // An image's bytes as stored: a PNG header of 2 x 3 pixels is all that is looked at.
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    png.extend(2u32.to_be_bytes());
    png.extend(3u32.to_be_bytes());
    let at = bin.len();
    bin.extend(&png);
    json["bufferViews"]
        .as_array_mut()
        .unwrap()
        .push(json!({"buffer": 0, "byteOffset": at, "byteLength": png.len()}));
    json["buffers"][0]["byteLength"] = json!(bin.len());
    json["images"] = json!([{"bufferView": 7, "mimeType": "image/png", "name": "skin.png"}]);
    json["samplers"] = json!([{"wrapS": 33071}]);
    json["textures"] = json!([{"source": 0, "sampler": 0}]);
    json["materials"] = json!([{"name": "flesh", "pbrMetallicRoughness": {
        "baseColorTexture": {"index": 0}, "baseColorFactor": [1.0, 0.5, 0.25, 1.0]}}]);
    json["meshes"][0]["primitives"][0]["material"] = json!(0);
    let m = load_glb(&glb(&json, &bin)).unwrap();
    let mesh = &m.meshes()[0];
    assert_eq!(mesh.shader().to_string_lossy(), "flesh");
    assert_eq!(mesh.material(), Some(0));
    let mat = &m.materials()[0];
    assert_eq!(mat.name.to_string_lossy(), "flesh");
    assert_eq!(mat.diffuse, [1.0, 0.5, 0.25, 1.0]);
    let tex = &m.textures()[mat.texture.unwrap() as usize];
    assert_eq!(tex.name.to_string_lossy(), "skin.png");
    assert_eq!(
        (tex.width, tex.height, tex.wrap_s, tex.wrap_t),
        (2, 3, 0, 2)
    );
    assert_eq!(tex.image, png);
    refused(
        |j| j["meshes"][0]["primitives"][0]["material"] = json!(3),
        ErrorCode::Malformed,
        "mesh 0 primitive 0 material 3: does not exist",
    );
}

/// Images in files beside a `.gltf` are read with it, under the sidecar rules, and drawn with:
/// a JPEG is re-encoded as PNG; a missing one, or one outside the directory, is a warning.
#[test]
fn images_beside_a_gltf_are_read_and_found() {
    let (mut json, bin) = skinned_triangle();
    json["buffers"][0]["uri"] = json!("tri.bin");
    json["images"] = json!([{"uri": "tex/skin%20a.png"}, {"uri": "tex/b.jpg"}, {"uri": "gone.png"},
        {"uri": "../outside.png"}]);
    json["textures"] = json!([{"source": 0}, {"source": 1}, {"source": 2}, {"source": 3}]);
    json["materials"] = json!([0, 1, 2, 3].map(|t| json!({"name": format!("m{t}"),
        "pbrMetallicRoughness": {"baseColorTexture": {"index": t}}})));
    // One primitive for each material, on the same triangle.
    let prim = json["meshes"][0]["primitives"][0].clone();
    json["meshes"][0]["primitives"] = json!([0, 1, 2, 3].map(|k| {
        let mut p = prim.clone();
        p["material"] = json!(k);
        p
    }));
    let image = image::RgbaImage::from_fn(3, 2, |x, y| {
        image::Rgba([x as u8 * 80, y as u8 * 200, 7, 255])
    });
    let mut png = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let mut jpg = Vec::new();
    image::DynamicImage::ImageRgba8(image.clone())
        .to_rgb8()
        .write_to(
            &mut std::io::Cursor::new(&mut jpg),
            image::ImageFormat::Jpeg,
        )
        .unwrap();
    let fs = memory_fs::MemoryFs::from_files([
        ("m/tri.gltf", serde_json::to_vec(&json).unwrap()),
        ("m/tri.bin", bin),
        ("m/tex/skin a.png", png.clone()),
        ("m/tex/b.jpg", jpg),
        ("outside.png", png.clone()),
    ]);
    let m = Model::load_file(
        "m/tri.gltf",
        &LoadOptions {
            io: Some(&fs),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(m.meshes().len(), 4);
    assert_eq!(m.textures()[0].image, png);
    assert_eq!((m.textures()[0].width, m.textures()[0].height), (3, 2));
    assert!(m.textures()[2].image.is_empty() && m.textures()[3].image.is_empty());
    let warnings: Vec<String> = m.warnings().iter().map(|w| w.to_string()).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("image 2") && w.contains("gone.png")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("image 3")),
        "{warnings:?}"
    );
    assert!(
        !fs.asked().iter().any(|p| p.contains("outside")),
        "{:?}",
        fs.asked()
    );
    let found = ossa::textures::find_textures(&m, Some((&fs, "m/tri.gltf")), 0);
    assert_eq!(found.mesh_images.len(), 4);
    let first = &found.images[found.mesh_images[0].unwrap()];
    assert_eq!((first.width, first.height, &first.png), (3, 2, &png));
    let second = &found.images[found.mesh_images[1].unwrap()];
    assert_eq!((second.width, second.height), (3, 2));
    assert!(
        second.png.starts_with(b"\x89PNG"),
        "a JPEG is handed out as PNG"
    );
    assert_eq!(found.mesh_images[2], None);
    assert_eq!(found.mesh_images[3], None);
    assert_eq!(found.warnings.len(), 2, "{:?}", found.warnings);
}

#[test]
fn step_and_cubic_spline_samplers_through_a_file() {
    let (mut json, mut bin) = skinned_triangle();
    json["animations"][0]["samplers"][0]["interpolation"] = json!("STEP");
    let fps = LoadOptions {
        sample_fps: 4.0,
        ..Default::default()
    };
    let m = Model::load(&glb(&json, &bin), &fps).unwrap();
    assert_eq!(m.animations()[0].frame_count, 5);
    // Held at the first key until the last.
    assert_eq!(skinned(&m, 4)[0], skinned(&m, 0)[0]);
    assert_ne!(skinned(&m, 5)[0], skinned(&m, 0)[0]);
    // CUBICSPLINE: three values a key (in-tangent, value, out-tangent), zero tangents here; the
    // middle is the normalised Hermite blend of the two rotations, half way: 45 degrees.
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let at = bin.len();
    bin.extend(f32s(&[0.0; 4]));
    bin.extend(f32s(&[0.0, 0.0, 0.0, 1.0]));
    bin.extend(f32s(&[0.0; 4]));
    bin.extend(f32s(&[0.0; 4]));
    bin.extend(f32s(&[0.0, 0.0, h, h]));
    bin.extend(f32s(&[0.0; 4]));
    json["buffers"][0]["byteLength"] = json!(bin.len());
    json["bufferViews"]
        .as_array_mut()
        .unwrap()
        .push(json!({"buffer": 0, "byteOffset": at, "byteLength": 96}));
    json["accessors"]
        .as_array_mut()
        .unwrap()
        .push(json!({"bufferView": 7, "componentType": 5126, "count": 6, "type": "VEC4"}));
    json["animations"][0]["samplers"][0] =
        json!({"input": 5, "output": 7, "interpolation": "CUBICSPLINE"});
    let m = Model::load(&glb(&json, &bin), &fps).unwrap();
    // Frame 3 is t = 0.5: vertex 2, (0, 2, 0), turned 45 degrees about z around (0, 1, 0).
    let p = skinned(&m, 3)[0][2];
    let expect = [-h, 1.0 + h, 0.0];
    for k in 0..3 {
        assert!((p[k] - expect[k]).abs() < 1e-5, "{p:?}");
    }
    // Two values a key for CUBICSPLINE is refused.
    json["accessors"][7]["count"] = json!(4);
    let e = load_glb(&glb(&json, &bin)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert!(
        e.to_string()
            .contains("animation 0 sampler 0: 4 values for 2 keys"),
        "{e}"
    );
}

#[test]
fn skins_sharing_joints_merge_only_when_their_binds_agree() {
    // A second mesh node with its own skin over the same two joints and matrices: one skeleton.
    let (mut json, bin) = skinned_triangle();
    json["skins"]
        .as_array_mut()
        .unwrap()
        .push(json!({"joints": [1, 0], "inverseBindMatrices": 4}));
    json["nodes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "other", "mesh": 0, "skin": 1}));
    json["scenes"][0]["nodes"] = json!([0, 2, 3]);
    let e = load_glb(&glb(&json, &bin)).unwrap_err();
    // Joint 1 (node 0) gets node 1's matrix in the second skin: they disagree.
    assert_eq!(e.code(), ErrorCode::Unsupported, "{e}");
    assert!(
        e.to_string().contains("skins 0 and 1 give joint node 1"),
        "{e}"
    );
    json["skins"][1]["joints"] = json!([0, 1]);
    let m = load_glb(&glb(&json, &bin)).unwrap();
    assert_eq!(m.bones().len(), 2);
    assert_eq!(m.meshes().len(), 2);
}

#[test]
fn weights_far_from_one_are_refused_and_unnamed_nodes_named() {
    let (json, mut bin) = skinned_triangle();
    // Vertex 1's weights: 0.5 and 0.25.
    bin[64..68].copy_from_slice(&0.5f32.to_le_bytes());
    bin[68..72].copy_from_slice(&0.25f32.to_le_bytes());
    let e = load_glb(&glb(&json, &bin)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert!(
        e.to_string()
            .contains("mesh 0 primitive 0 vertex 1: weights sum to 0.75"),
        "{e}"
    );
    let (mut json, bin) = skinned_triangle();
    json["nodes"][0]["name"] = json!(null);
    json["nodes"][1]["name"] = json!("body");
    let m = load_glb(&glb(&json, &bin)).unwrap();
    let names: Vec<String> = m.bones().iter().map(|b| b.name.to_string_lossy()).collect();
    assert_eq!(names, ["node_0", "body"]);
    assert!(
        m.warnings()
            .iter()
            .any(|w| w.to_string_lossy().contains("node_N"))
    );
}

/// load_glb (fuzz), a DPM export whose inverse bind matrices were overwritten with numbers near
/// f32's limit: each was finite, but a bone's bind pose relative to its parent's (the parent's
/// inverse times its own) overflowed to infinity and reached the model. Refused at the node now.
#[test]
fn a_bind_pose_that_overflows_between_two_inverse_binds_is_refused() {
    let (json, mut bin) = skinned_triangle();
    // The root's inverse bind moves 3e38 along x and the child's -3e38: the child's bind pose
    // relative to the root moves 6e38, past f32.
    bin[104 + 12 * 4..104 + 13 * 4].copy_from_slice(&3e38f32.to_le_bytes());
    bin[168 + 12 * 4..168 + 13 * 4].copy_from_slice(&(-3e38f32).to_le_bytes());
    bin[168 + 13 * 4..168 + 14 * 4].copy_from_slice(&0f32.to_le_bytes());
    let e = load_glb(&glb(&json, &bin)).expect_err("an overflowing bind pose loaded");
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert!(
        e.to_string()
            .contains("node 1: its bind pose is beyond f32"),
        "{e}"
    );
}

/// load_gltf (fuzz), an export whose `scenes` and `nodes` were cut away: the model had no bones
/// but kept its bind frame, a frame of no poses. Without bones there are no frames.
#[test]
fn a_gltf_without_nodes_has_no_bones_and_no_frames() {
    let (mut json, bin) = skinned_triangle();
    let root = json.as_object_mut().unwrap();
    for key in ["scene", "scenes", "nodes", "skins", "animations"] {
        root.remove(key);
    }
    let m = load_glb(&glb(&json, &bin)).unwrap();
    assert_eq!(
        (m.bones().len(), m.frames().len(), m.animations().len()),
        (0, 0, 0)
    );
}
