//! VitaMoo's glTF conventions (MicropolisCore `documentation/vitamoo/gltf-extras-metadata.md`)
//! on a corpus Sims character: the retail adult skeleton wearing `b001mafit_01` and walking
//! (`a2o-walking-loop`, whose motions carry `footstep` and `anchor` events). The exact extras
//! written; the character read back from the export and saved as CMX and CFP, which reload with
//! the same suit, skill, bone flags and events and pass ossa's checks; the same through
//! Blender's glTF add-on (PyPI `bpy`, `interop/blender_vitamoo.py`); and hostile extras, each a
//! warning or an error naming its JSON path.

#![cfg(feature = "gltf")]

#[path = "blender_interop/mod.rs"]
mod blender_interop;
#[path = "corpus/mod.rs"]
mod corpus;
#[path = "gltf_interop/mod.rs"]
mod gltf_interop;
#[path = "node_interop/mod.rs"]
mod node_interop;

use std::path::{Path, PathBuf};
use std::process::Command;

use ossa::format::gltf::ExportOptions;
use ossa::{ErrorCode, LoadOptions, Model, cmx};
use serde_json::{Value, json};

use blender_interop::blender_python;
use corpus::corpus_subdir;
use gltf_interop::glb_json;

fn load(path: &Path) -> Model {
    Model::load_file(path, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The walking character, or None (saying so) without the corpus.
fn walker() -> Option<Model> {
    let dir = corpus_subdir("sims", "the VitaMoo extras tests")?;
    let adult = load(&dir.join("so_adult-skeleton.cmx"));
    let suits = load(&dir.join("so_B001MAFit_01.cmx"));
    let character = ossa::assemble::with_suits(&adult, suits.suits()).unwrap();
    let dressed = ossa::assemble::dress(&character, "b001mafit_01", &mut |mesh| {
        Model::load_file(dir.join(format!("so_{mesh}.skn")), &LoadOptions::default())
    })
    .unwrap();
    let skills = cmx::parse(&std::fs::read(dir.join("so_ross-walking-loop.cmx")).unwrap()).unwrap();
    let walk = (skills.skills.iter())
        .position(|s| s.name.to_string() == "a2o-walking-loop")
        .unwrap();
    let cfp = std::fs::read(dir.join("so_xskill-A2O-walking-loop.cfp")).unwrap();
    Some(cmx::with_skill(&dressed, &skills, walk, &cfp).unwrap())
}

fn export(model: &Model, binary: bool) -> Vec<u8> {
    model
        .export_gltf(&ExportOptions {
            binary,
            source_name: Some("walker".to_owned()),
            ..Default::default()
        })
        .unwrap()
        .bytes
}

fn scratch(what: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("gltf-vitamoo-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn node<'a>(doc: &'a Value, name: &str) -> &'a Value {
    (doc["nodes"].as_array().unwrap().iter())
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

/// Every event of a model as (scene name, time in ms, bone name, key, value), sorted.
fn events(model: &Model) -> Vec<(String, u32, String, String, String)> {
    let mut out: Vec<_> = (model.events().iter())
        .map(|e| {
            (
                model.animations()[e.animation as usize].name.to_string(),
                (f64::from(e.time) * 1000.0).round() as u32,
                usize::try_from(e.bone)
                    .map_or(String::new(), |b| model.bones()[b].name.to_string()),
                e.key.to_string(),
                e.value.to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// A bone's name, can-translate, can-rotate and can-blend flags, wiggle value and power, and
/// property lists.
type SavedBone = (String, bool, bool, bool, f32, f32, String);

/// The character file's skeleton a model saves as CMX: its name, and per bone its flags, wiggle
/// and property lists, by bone name (Blender writes the bones in another order).
fn saved_skeleton(model: &Model) -> (String, Vec<SavedBone>) {
    let file = cmx::parse(&model.save(ossa::Format::SimsCmx).unwrap()).unwrap();
    let sk = &file.skeletons[0];
    let mut bones: Vec<_> = (sk.bones.iter())
        .map(|b| {
            (
                b.name.to_string(),
                b.can_translate,
                b.can_rotate,
                b.can_blend,
                b.wiggle_value,
                b.wiggle_power,
                format!("{:?}", b.property_lists),
            )
        })
        .collect();
    bones.sort_by(|a, b| a.0.cmp(&b.0));
    (sk.name.to_string(), bones)
}

#[test]
fn a_sims_export_writes_vitamoo_extras() {
    let Some(walker) = walker() else {
        return;
    };
    let bytes = export(&walker, true);
    std::fs::write(scratch("events").join("walker.glb"), &bytes).unwrap();
    let doc = glb_json(&bytes);
    let scene = &walker.animations()[0];
    // f32s are written by their shortest decimal form.
    let fps: f64 = scene.fps.to_string().parse().unwrap();
    assert_eq!(scene.frame_count, 38);

    // The root: the skeleton's name, ROOT's flags, and ossa's record of the suits and skills.
    assert_eq!(
        node(&doc, "ROOT")["extras"],
        json!({
            "vitamoo_skeleton": "adult",
            "vitamoo_cantranslate": true,
            "vitamoo_canrotate": true,
            "vitamoo_canblend": false,
            "vitamoo_wiggle": { "enabled": false, "power": 0.0 },
            "vitamoo_events": expected_events()[0].1,
            "suits": [{
                "name": "b001mafit_01",
                "type": 0,
                "properties": [],
                "skins": [{
                    "bone": "PELVIS",
                    "mesh": "xskin-b001mafit_01-PELVIS-BODY",
                    "censor_flags": 0,
                    "properties": [],
                }],
            }],
            "skills": {
                "a2o-walking-loop": {
                    "fps": fps,
                    "frames": 38,
                    "looping": true,
                    "moving": true,
                    "distance": 4.06978,
                },
            },
        })
    );
    // PELVIS keeps its property list; L_LEG cannot translate.
    assert_eq!(
        node(&doc, "PELVIS")["extras"],
        json!({
            "vitamoo_cantranslate": true,
            "vitamoo_canrotate": true,
            "vitamoo_canblend": false,
            "vitamoo_wiggle": { "enabled": false, "power": 0.0 },
            "properties": [{ "list": 0, "key": "name", "value": "adult" }],
        })
    );
    assert_eq!(
        node(&doc, "L_LEG")["extras"],
        json!({
            "vitamoo_cantranslate": false,
            "vitamoo_canrotate": true,
            "vitamoo_canblend": true,
            "vitamoo_wiggle": { "enabled": false, "power": 0.0 },
        })
    );
    // Every bone node carries the four flags.
    let nodes = doc["nodes"].as_array().unwrap();
    for n in &nodes[..walker.bones().len()] {
        for key in [
            "vitamoo_cantranslate",
            "vitamoo_canrotate",
            "vitamoo_canblend",
            "vitamoo_wiggle",
        ] {
            assert!(n["extras"].get(key).is_some(), "{}: {key}", n["name"]);
        }
    }

    // The mesh node: its suit and skin, and the game's texture file.
    assert_eq!(
        node(&doc, "xskin-b001mafit_01-PELVIS-BODY")["extras"],
        json!({
            "vitamoo_suit": "b001mafit_01",
            "vitamoo_suit_type": 0,
            "vitamoo_skin_bone": "PELVIS",
            "vitamoo_skin_flags": 0,
            "vitamoo_texture": "extrememlgt_01.bmp",
        })
    );

    // The skill on its animation, beside ossa's own scene record.
    let mut extras = doc["animations"][0]["extras"].clone();
    let written_fps = extras["fps"].as_f64().unwrap();
    assert!(
        (written_fps - f64::from(scene.fps)).abs() < 1e-12,
        "{written_fps}"
    );
    extras.as_object_mut().unwrap().remove("fps");
    // ossa's own list of the events, as before.
    let listed = extras.as_object_mut().unwrap().remove("events").unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 12);
    assert_eq!(
        extras,
        json!({
            "frames": 38,
            "looping": true,
            "moving": true,
            "distance": 4.06978f32,
            "vitamoo_skill": "a2o-walking-loop",
            "vitamoo_duration": 1.266,
            "vitamoo_distance": 4.06978,
            "vitamoo_is_moving": true,
            "vitamoo_repeat_mode": "loop",
        })
    );

    // Events on the bones whose motions carry them, by skill, in time order.
    let mut with_events = Vec::new();
    for n in nodes {
        if let Some(e) = n["extras"].get("vitamoo_events") {
            with_events.push((n["name"].as_str().unwrap().to_owned(), e.clone()));
        }
    }
    assert_eq!(with_events, expected_events());
    // The same events as the model holds, nothing lost or added.
    let mut from_json = Vec::new();
    for (bone, by_skill) in &with_events {
        for entry in by_skill["a2o-walking-loop"].as_array().unwrap() {
            let t = (entry["time"].as_f64().unwrap() * 1000.0).round() as u32;
            for (k, v) in entry["props"].as_object().unwrap() {
                from_json.push((
                    "a2o-walking-loop".to_owned(),
                    t,
                    bone.clone(),
                    k.clone(),
                    v.as_str().unwrap().to_owned(),
                ));
            }
        }
    }
    from_json.sort();
    assert_eq!(from_json, events(&walker));
}

/// The walk's events as its CMX gives them (motion time properties, ms), in seconds on their
/// bones.
fn expected_events() -> Vec<(String, Value)> {
    EXPECTED_EVENTS
        .iter()
        .map(|(bone, entries)| {
            let list: Vec<Value> = entries
                .iter()
                .map(|(t, props)| {
                    let props: serde_json::Map<String, Value> = props
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), json!(v)))
                        .collect();
                    json!({ "time": t, "props": props })
                })
                .collect();
            ((*bone).to_owned(), json!({ "a2o-walking-loop": list }))
        })
        .collect()
}

type Entries = &'static [(f64, &'static [(&'static str, &'static str)])];

/// As `so_ross-walking-loop.cmx` lists them: ROOT's `interruptable` and `footstep`, the toes'
/// `anchor`.
const EXPECTED_EVENTS: &[(&str, Entries)] = &[
    (
        "ROOT",
        &[
            (0.0, &[("interruptable", "0")]),
            (0.166, &[("footstep", "2")]),
            (0.466, &[("interruptable", "2")]),
            (0.6, &[("interruptable", "0")]),
            (0.8, &[("footstep", "1")]),
            (1.1, &[("interruptable", "1")]),
            (1.233, &[("interruptable", "0")]),
        ],
    ),
    (
        "L_TOE02",
        &[
            (0.0, &[("anchor", "1")]),
            (0.4, &[("anchor", "0")]),
            (1.0, &[("anchor", "1")]),
        ],
    ),
    (
        "R_TOE02",
        &[(0.366, &[("anchor", "2")]), (1.033, &[("anchor", "0")])],
    ),
];

/// The character read back from its export: suit, bone flags, skill and events as they were;
/// saved as CMX (skeleton and suits) and skills CMX + CFP, which pass ossa's checks and reload
/// as the same character.
#[test]
fn an_export_reads_back_and_saves_as_cmx_and_cfp() {
    let Some(walker) = walker() else {
        return;
    };
    for binary in [true, false] {
        let back = Model::load(&export(&walker, binary), &LoadOptions::default()).unwrap();
        same_character(&walker, &back, 1e-5);
        let dir = scratch(if binary { "glb" } else { "gltf" });
        saves_and_reloads(&walker, &back, &dir, 1e-6);
    }
}

/// `back` has `original`'s skeleton name, bone flags, suits, skills and events.
fn same_character(original: &Model, back: &Model, tolerance: f32) {
    assert_eq!(saved_skeleton(back), saved_skeleton(original));
    assert_eq!(back.suits(), original.suits());
    assert_eq!(back.animations().len(), original.animations().len());
    for (a, b) in original.animations().iter().zip(back.animations()) {
        assert_eq!(b.name, a.name);
        assert_eq!(b.moving, a.moving);
        assert_eq!(b.looping, a.looping);
        assert!(
            (b.distance - a.distance).abs() <= 1e-5,
            "{} {}",
            b.distance,
            a.distance
        );
        let (da, db) = (a.frame_count as f32 / a.fps, b.frame_count as f32 / b.fps);
        assert!(
            (da - db).abs() <= tolerance.max(1e-4) + 1.0 / b.fps,
            "{da} {db}"
        );
    }
    assert_eq!(events(back), events(original));
    let shaders: Vec<String> = back
        .meshes()
        .iter()
        .map(|m| m.shader().to_string())
        .collect();
    assert_eq!(shaders, ["extrememlgt_01"]);
}

/// Saves `back` as `walker.cmx` (skeleton and suits) and `skills.cmx` with its CFPs in `dir`;
/// both pass ossa's checks, `walker.cmx.bcf` holds the same skeleton and suits, and the skeleton with its skills reloads with `original`'s suits,
/// flags, skills and events, posed within `tolerance` of the model's size.
fn saves_and_reloads(original: &Model, back: &Model, dir: &Path, tolerance: f32) {
    std::fs::write(
        dir.join("walker.cmx"),
        back.save(ossa::Format::SimsCmx).unwrap(),
    )
    .unwrap();
    let skills = cmx::skills_from_model(back).unwrap();
    std::fs::write(
        dir.join("skills.cmx"),
        cmx::write_character(&skills.character, false).unwrap(),
    )
    .unwrap();
    for (skill, cfp) in skills.character.skills.iter().zip(&skills.cfps) {
        std::fs::write(dir.join(format!("{}.cfp", skill.animation)), cfp).unwrap();
    }
    for file in ["walker.cmx", "skills.cmx"] {
        let report = ossa::validate_file(&dir.join(file), &LoadOptions::default()).unwrap();
        assert!(report.problems.is_empty(), "{file}: {:?}", report.problems);
        assert!(report.warnings.is_empty(), "{file}: {:?}", report.warnings);
    }
    // BCF, the binary twin, holds the same.
    let bcf = dir.join("walker.cmx.bcf");
    std::fs::write(&bcf, back.save(ossa::Format::SimsBcf).unwrap()).unwrap();
    let from_bcf = load(&bcf);
    assert_eq!(from_bcf.suits(), original.suits());
    assert_eq!(saved_skeleton(&from_bcf), saved_skeleton(original));
    let reloaded = load(&dir.join("walker.cmx"))
        .with_skills_file(dir.join("skills.cmx"), &LoadOptions::default())
        .unwrap();
    assert_eq!(reloaded.suits(), original.suits());
    assert_eq!(saved_skeleton(&reloaded), saved_skeleton(original));
    assert_eq!(events(&reloaded), events(original));
    let (a, b) = (&original.animations()[0], &reloaded.animations()[0]);
    assert_eq!(
        (&b.name, b.frame_count, b.looping, b.moving),
        (&a.name, a.frame_count, a.looping, a.moving)
    );
    assert!((b.fps - a.fps).abs() < 1e-3 && (b.distance - a.distance).abs() < 1e-5);
    // Every frame's bones (by name) where the original's are, parent-relative.
    let size = 5.0f32;
    let mut worst = 0.0f32;
    for f in 0..a.frame_count as usize {
        let (pa, pb) = (
            original
                .skeleton()
                .frame_poses(a.first_frame as usize + f)
                .unwrap(),
            reloaded
                .skeleton()
                .frame_poses(b.first_frame as usize + f)
                .unwrap(),
        );
        for (bone, x) in original.bones().iter().zip(pa.iter()) {
            let at = reloaded.find_bone(bone.name.as_bytes()).unwrap() as usize;
            for (u, v) in x.m.iter().zip(pb[at].m.iter()) {
                worst = worst.max((u - v).abs());
            }
        }
    }
    eprintln!("poses differ by {worst} at most");
    assert!(worst <= tolerance * size, "poses differ by {worst}");
}

/// A copy of the export's JSON with `change` made, loaded with `strict`.
fn load_changed(
    strict: bool,
    max_bytes: u64,
    change: impl FnOnce(&mut Value),
) -> ossa::Result<Model> {
    let walker = walker().unwrap();
    let mut doc: Value = serde_json::from_slice(&export(&walker, false)).unwrap();
    change(&mut doc);
    let options = LoadOptions {
        strict,
        max_bytes,
        ..LoadOptions::default()
    };
    Model::load(&serde_json::to_vec(&doc).unwrap(), &options)
}

fn bone_node(doc: &mut Value, name: &str) -> usize {
    (doc["nodes"].as_array().unwrap().iter())
        .position(|n| n["name"] == name)
        .unwrap()
}

#[test]
fn hostile_vitamoo_extras_are_named_by_their_json_path() {
    if walker().is_none() {
        return;
    }
    // Each change, the path and what is wrong with it.
    type Change = Box<dyn Fn(&mut Value) -> usize>;
    let cases: Vec<(Change, &str)> = vec![
        (
            Box::new(|d: &mut Value| {
                let n = bone_node(d, "L_LEG");
                d["nodes"][n]["extras"]["vitamoo_cantranslate"] = json!("no");
                n
            }),
            "nodes[{n}].extras.vitamoo_cantranslate: not true or false; it is left out",
        ),
        (
            Box::new(|d: &mut Value| {
                let n = bone_node(d, "L_LEG");
                d["nodes"][n]["extras"]["vitamoo_wiggle"] = json!({ "enabled": 1, "power": 0 });
                n
            }),
            "nodes[{n}].extras.vitamoo_wiggle.enabled: not true or false; it is left out",
        ),
        (
            Box::new(|d: &mut Value| {
                let n = bone_node(d, "L_LEG");
                d["nodes"][n]["extras"]["vitamoo_wiggle"] =
                    json!({ "enabled": false, "power": 1e39 });
                n
            }),
            "nodes[{n}].extras.vitamoo_wiggle.power: not a finite 32-bit number; it is left out",
        ),
        (
            Box::new(|d: &mut Value| {
                let n = bone_node(d, "R_FOOT");
                d["nodes"][n]["extras"]["vitamoo_events"] =
                    json!({ "a2o-walking-loop": [{ "time": 1e39, "props": { "a": "b" } }] });
                n
            }),
            "nodes[{n}].extras.vitamoo_events[\"a2o-walking-loop\"][0].time: not a finite 32-bit number; it is left out",
        ),
        (
            Box::new(|d: &mut Value| {
                let n = bone_node(d, "R_FOOT");
                d["nodes"][n]["extras"]["vitamoo_events"] =
                    json!({ "a2o-walking-loop": [{ "time": 0.5, "props": { "footstep": 1 } }] });
                n
            }),
            "nodes[{n}].extras.vitamoo_events[\"a2o-walking-loop\"][0].props[\"footstep\"]: not a string; it is left out",
        ),
        (
            Box::new(|d: &mut Value| {
                let n = bone_node(d, "R_FOOT");
                d["nodes"][n]["extras"]["vitamoo_events"] =
                    json!({ "a2o-jumping": [{ "time": 0.5, "props": {} }] });
                n
            }),
            "nodes[{n}].extras.vitamoo_events[\"a2o-jumping\"]: names no animation of the file; it is left out",
        ),
        (
            Box::new(|d: &mut Value| {
                let n = bone_node(d, "R_FOOT");
                d["nodes"][n]["extras"]["vitamoo_events"] = json!([1, 2]);
                n
            }),
            "nodes[{n}].extras.vitamoo_events: not an object of skills; it is left out",
        ),
        (
            Box::new(|d: &mut Value| {
                let n = bone_node(d, "ROOT");
                d["nodes"][n]["extras"]["suits"][0]["skins"][0]["censor_flags"] = json!(-1);
                n
            }),
            "nodes[{n}].extras.suits[0].skins[0].censor_flags: not a whole number from 0 to 2^32 - 1; it is left out",
        ),
        (
            Box::new(|d: &mut Value| {
                let n = bone_node(d, "xskin-b001mafit_01-PELVIS-BODY");
                d["nodes"][n]["extras"]["vitamoo_texture"] = json!(["a"]);
                n
            }),
            "nodes[{n}].extras.vitamoo_texture: not a string; it is left out",
        ),
    ];
    for (change, message) in &cases {
        let mut at = 0;
        let model = load_changed(false, 0, |d| at = change(d)).unwrap();
        let message = message.replace("{n}", &at.to_string());
        assert!(
            model.warnings().iter().any(|w| w.to_string() == message),
            "{message} not in {:?}",
            model.warnings()
        );
        let err = load_changed(true, 0, |d| {
            change(d);
        })
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::Malformed, "{err}");
        assert!(err.to_string().contains(&message), "{err}");
    }

    // Events out of order are kept, with a warning.
    let mut at = 0;
    let model = load_changed(false, 0, |d| {
        at = bone_node(d, "R_FOOT");
        d["nodes"][at]["extras"]["vitamoo_events"] = json!({ "a2o-walking-loop": [
            { "time": 0.5, "props": { "a": "1" } },
            { "time": 0.25, "props": { "b": "2" } },
        ] });
    })
    .unwrap();
    assert!(model.warnings().iter().any(|w| w.to_string()
        == format!("nodes[{at}].extras.vitamoo_events[\"a2o-walking-loop\"][1].time: 0.25 comes after 0.5: the events are not sorted by time")));
    let on_foot: Vec<_> = events(&model)
        .into_iter()
        .filter(|e| e.2 == "R_FOOT")
        .map(|e| (e.1, e.3))
        .collect();
    assert_eq!(on_foot, [(250, "b".to_owned()), (500, "a".to_owned())]);

    // A thousand wrong values: 32 warnings and one counting the rest.
    let model = load_changed(false, 0, |d| {
        let n = bone_node(d, "R_FOOT");
        let many: Vec<Value> = (0..1000)
            .map(|i| json!({ "time": i as f64 * 1e-3, "props": { "k": i } }))
            .collect();
        d["nodes"][n]["extras"]["vitamoo_events"] = json!({ "a2o-walking-loop": many });
    })
    .unwrap();
    let wrong: Vec<String> = (model.warnings().iter())
        .map(|w| w.to_string())
        .filter(|w| w.contains("props"))
        .collect();
    assert_eq!(wrong.len(), 32);
    assert!(
        model.warnings().iter().any(|w| w.to_string()
            == "968 more problems in the Sims extras, each left out as those above")
    );

    // A huge array of events is charged before it is parsed: refused within the limit.
    let err = load_changed(false, 24 << 20, |d| {
        let n = bone_node(d, "R_FOOT");
        let many: Vec<Value> = (0..400_000)
            .map(|i| json!({ "time": i as f64 * 1e-3, "props": { "k": "v" } }))
            .collect();
        d["nodes"][n]["extras"]["vitamoo_events"] = json!({ "a2o-walking-loop": many });
    })
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Limit, "{err}");
}

/// Exported, imported by Blender's glTF add-on and exported again by it: the character comes
/// back with its suit, bone flags, skill and events, and saves as CMX and CFP as above.
#[test]
fn vitamoo_extras_survive_a_blender_round_trip() {
    let Some(walker) = walker() else {
        return;
    };
    let Some(python) = blender_python("the Blender round trip of VitaMoo's extras") else {
        return;
    };
    let dir = scratch("blender");
    let input = dir.join("walker.glb");
    let output = dir.join("walker-blender.glb");
    std::fs::write(&input, export(&walker, true)).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/blender_vitamoo.py");
    let run = Command::new(&python)
        .arg(&script)
        .arg(&input)
        .arg(&output)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let bytes = std::fs::read(&output).unwrap();
    let doc = glb_json(&bytes);
    assert!(
        doc["asset"]["generator"]
            .as_str()
            .unwrap()
            .contains("Blender"),
        "{}",
        doc["asset"]
    );
    let back = Model::load(&bytes, &LoadOptions::default()).unwrap();
    assert!(
        back.warnings()
            .iter()
            .any(|w| w.to_string().contains("VitaMoo skeleton")),
        "{:?}",
        back.warnings()
    );
    same_character(&walker, &back, 1e-5);
    saves_and_reloads(&walker, &back, &dir, 1e-5);
}

/// ossa's plain keys are read only beside VitaMoo's: another tool's `properties` or `suits` on a
/// node of a file without `vitamoo_` keys is its own business.
#[test]
fn plain_keys_of_other_tools_are_left_alone() {
    let rig = ossa::synth::TubeRig::with_vertices(50).build().unwrap();
    let bytes = rig
        .export_gltf(&ExportOptions {
            binary: false,
            ..Default::default()
        })
        .unwrap()
        .bytes;
    let mut doc: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains("vitamoo_"));
    doc["nodes"][0]["extras"] = json!({ "properties": 5, "suits": "mine", "skills": [1] });
    let strict = LoadOptions {
        strict: true,
        ..LoadOptions::default()
    };
    let model = Model::load(&serde_json::to_vec(&doc).unwrap(), &strict).unwrap();
    assert!(model.suits().is_empty());
    assert!(model.kept().cmx_skeleton.is_none());
    assert_eq!(model.bones().len(), rig.bones().len());
}

/// Without ossa's record of the suits (a file VitaMoo or another tool wrote), the mesh nodes'
/// tags give them: one suit per `vitamoo_suit`, each tagged mesh a skin of it.
#[test]
fn suits_come_from_the_mesh_tags_without_the_record() {
    let Some(walker) = walker() else {
        return;
    };
    let model = load_changed(true, 0, |d| {
        let n = bone_node(d, "ROOT");
        d["nodes"][n]["extras"]
            .as_object_mut()
            .unwrap()
            .remove("suits");
    })
    .unwrap();
    assert_eq!(model.suits(), walker.suits());
    // A tagged mesh without its bone is left out, naming the path.
    let mut at = 0;
    let model = load_changed(false, 0, |d| {
        let n = bone_node(d, "ROOT");
        d["nodes"][n]["extras"]
            .as_object_mut()
            .unwrap()
            .remove("suits");
        at = bone_node(d, "xskin-b001mafit_01-PELVIS-BODY");
        d["nodes"][at]["extras"]
            .as_object_mut()
            .unwrap()
            .remove("vitamoo_skin_bone");
    })
    .unwrap();
    assert!(model.suits().is_empty());
    let message = format!(
        "nodes[{at}].extras.vitamoo_suit: the mesh node names no vitamoo_skin_bone; it is left out"
    );
    assert!(
        model.warnings().iter().any(|w| w.to_string() == message),
        "{:?}",
        model.warnings()
    );
}

/// What an artist edits in the extras is what comes back: a bone flag, an event, the skill's
/// travel, looping and name.
#[test]
fn edited_extras_come_back() {
    if walker().is_none() {
        return;
    }
    let model = load_changed(false, 0, |d| {
        let leg = bone_node(d, "L_LEG");
        d["nodes"][leg]["extras"]["vitamoo_cantranslate"] = json!(true);
        d["nodes"][leg]["extras"]["vitamoo_events"] =
            json!({ "a2o-walk-edited": [{ "time": 0.5, "props": { "sound": "step" } }] });
        let anim = &mut d["animations"][0]["extras"];
        anim["vitamoo_skill"] = json!("a2o-walk-edited");
        anim["vitamoo_distance"] = json!(2.5);
        anim["vitamoo_is_moving"] = json!(false);
        anim["vitamoo_repeat_mode"] = json!("once");
    })
    .unwrap();
    let scene = &model.animations()[0];
    assert_eq!(scene.name.to_string(), "a2o-walk-edited");
    assert_eq!(
        (scene.distance, scene.moving, scene.looping),
        (2.5, false, false)
    );
    // The events under the old name name no scene now: each bone's are named and left out.
    let left_out = (model.warnings().iter())
        .filter(|w| {
            w.to_string()
                .ends_with("[\"a2o-walking-loop\"]: names no animation of the file; it is left out")
        })
        .count();
    assert_eq!(left_out, 3, "{:?}", model.warnings());
    assert_eq!(
        events(&model),
        [(
            "a2o-walk-edited".to_owned(),
            500,
            "L_LEG".to_owned(),
            "sound".to_owned(),
            "step".to_owned()
        )]
    );
    let (_, bones) = saved_skeleton(&model);
    let leg = bones.iter().find(|b| b.0 == "L_LEG").unwrap();
    assert!(leg.1, "L_LEG can translate now");
}

/// `ossa convert walker.glb -o walker.cmx`: the character file holds the skeleton, the suit and
/// the walk as a skill, with the walk's numbers in `a2o-walking-loop.cfp` beside it, as the game
/// reads them; ossa's checks pass it and it plays the walk as the export did.
#[test]
fn the_cli_converts_an_export_into_a_character_file_with_its_skills_and_cfps() {
    let Some(original) = walker() else {
        return;
    };
    let dir = scratch("cli-cmx");
    std::fs::write(dir.join("walker.glb"), export(&original, true)).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_ossa"))
        .current_dir(&dir)
        .args(["convert", "walker.glb", "-o", "walker.cmx"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.starts_with("walker.cmx: Sims CMX, ")
            && stdout.contains("; 1 skill, its numbers in a2o-walking-loop.cfp"),
        "{stdout}"
    );
    let report = ossa::validate_file(&dir.join("walker.cmx"), &LoadOptions::default()).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let file = cmx::parse(&std::fs::read(dir.join("walker.cmx")).unwrap()).unwrap();
    assert_eq!(
        (file.skeletons.len(), file.suits.len(), file.skills.len()),
        (1, 1, 1)
    );
    assert_eq!(file.skills[0].animation.to_string(), "a2o-walking-loop");
    let reloaded = load(&dir.join("walker.cmx"))
        .with_skills_file(dir.join("walker.cmx"), &LoadOptions::default())
        .unwrap();
    let (a, b) = (&original.animations()[0], &reloaded.animations()[0]);
    assert_eq!((&b.name, b.frame_count), (&a.name, a.frame_count));
    assert_eq!(events(&reloaded), events(&original));
    // A BCF takes its skills alike.
    let run = Command::new(env!("CARGO_BIN_EXE_ossa"))
        .current_dir(&dir)
        .args(["convert", "walker.glb", "-o", "walker.bcf"])
        .output()
        .unwrap();
    assert!(run.status.success());
    let bcf = cmx::parse(&std::fs::read(dir.join("walker.bcf")).unwrap()).unwrap();
    assert_eq!(bcf.skills, file.skills);
}
