//! What an IQM carries beside its model: the comment and the extension list (`iqm.txt`), with
//! FTE's `FTE_EVENT` and `FTE_SKINS` (laid out as FTE's `Mod_ParseIQMMeshModel` reads them).
//! The files ossa writes are read here at the byte level, from the spec, not by ossa's parser:
//! a changed model saved as IQM keeps its events, its skins, its comment and the extensions
//! ossa does not use; broken skin tables load as FTE loads them, with a warning.

mod corpus;

use ossa::model::AnimationEvent;
use ossa::synth::TubeRig;
use ossa::{ErrorCode, Format, LoadOptions, MeshSkin, Model, ModelParts, Name, SkinFrame};

// ---------------------------------------------------------------------------------------------
// The spec's layout, read by hand
// ---------------------------------------------------------------------------------------------

fn u32_at(d: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(d[at..at + 4].try_into().unwrap())
}

fn f32_at(d: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at(d, at))
}

/// The header word at byte `at` (16 version, 28 num_text, 32 ofs_text, 108 num_comment, 112
/// ofs_comment, 116 num_extensions, 120 ofs_extensions).
fn header(d: &[u8], at: usize) -> usize {
    u32_at(d, at) as usize
}

/// The NUL-terminated string at `offset` of the text block.
fn text(d: &[u8], offset: u32) -> String {
    let start = header(d, 32) + offset as usize;
    let end = start + d[start..].iter().position(|&b| b == 0).unwrap();
    String::from_utf8(d[start..end].to_vec()).unwrap()
}

fn comment(d: &[u8]) -> &[u8] {
    let (n, ofs) = (header(d, 108), header(d, 112));
    &d[ofs..ofs + n]
}

/// The extension list: name and data, following each record's `ofs_extensions`.
fn extensions(d: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = header(d, 120);
    for _ in 0..header(d, 116) {
        let (name, n, ofs) = (u32_at(d, at), u32_at(d, at + 4), u32_at(d, at + 8));
        out.push((text(d, name), d[ofs as usize..(ofs + n) as usize].to_vec()));
        at = u32_at(d, at + 12) as usize;
    }
    out
}

fn extension(d: &[u8], name: &str) -> Option<Vec<u8>> {
    extensions(d)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, data)| data)
}

/// The anims' names, by index.
fn anim_names(d: &[u8]) -> Vec<String> {
    let (n, ofs) = (header(d, 84), header(d, 88));
    (0..n).map(|a| text(d, u32_at(d, ofs + 20 * a))).collect()
}

/// `FTE_EVENT`: (anim name, time, code, data) per event.
fn fte_events(d: &[u8]) -> Vec<(String, f32, u32, String)> {
    let Some(data) = extension(d, "FTE_EVENT") else {
        return Vec::new();
    };
    let anims = anim_names(d);
    data.chunks_exact(16)
        .map(|e| {
            (
                anims[u32_at(e, 0) as usize].clone(),
                f32_at(e, 4),
                u32_at(e, 8),
                text(d, u32_at(e, 12)),
            )
        })
        .collect()
}

/// `FTE_SKINS`, per mesh: its skins, each (materials, shader texts, interval).
type Skins = Vec<Vec<(Vec<String>, Vec<String>, f32)>>;

fn fte_skins(d: &[u8]) -> Skins {
    let data = extension(d, "FTE_SKINS").expect("no FTE_SKINS");
    let num_meshes = header(d, 36);
    let (num_frames, num_skins) = (u32_at(&data, 0) as usize, u32_at(&data, 4) as usize);
    let frames_at = 8 + 4 * num_meshes;
    let skins_at = frames_at + 8 * num_frames;
    assert_eq!(data.len(), skins_at + 12 * num_skins, "FTE_SKINS size");
    let mut next = 0;
    (0..num_meshes)
        .map(|m| {
            let count = u32_at(&data, 8 + 4 * m) as usize;
            let skins = (next..next + count)
                .map(|k| {
                    let rec = skins_at + 12 * k;
                    let (first, n) = (u32_at(&data, rec), u32_at(&data, rec + 4));
                    let frame = |f: u32, field: usize| {
                        text(d, u32_at(&data, frames_at + 8 * f as usize + field))
                    };
                    (
                        (first..first + n).map(|f| frame(f, 0)).collect(),
                        (first..first + n).map(|f| frame(f, 4)).collect(),
                        f32_at(&data, rec + 8),
                    )
                })
                .collect();
            next += count;
            skins
        })
        .collect()
}

/// A model as a changed one is: no source bytes to give back.
fn changed(model: &Model) -> Model {
    Model::from_parts(model.to_parts()).unwrap()
}

fn load(bytes: &[u8], strict: bool) -> ossa::Result<Model> {
    Model::load(
        bytes,
        &LoadOptions {
            format: Format::Iqm,
            strict,
            ..LoadOptions::default()
        },
    )
}

// ---------------------------------------------------------------------------------------------
// A real file's extensions kept through a change
// ---------------------------------------------------------------------------------------------

/// Nuclide's bat carries `FTE_EVENT` (four events) and `FTE_MESH`: saved after a change, the
/// events are the file's own (by anim name, time, code and data), and `FTE_MESH` and the comment
/// are the file's bytes.
#[test]
fn a_changed_corpus_model_keeps_its_events_extensions_and_comment() {
    let Some(dir) = corpus::corpus_subdir("iqm", "extensions kept") else {
        return;
    };
    let source = std::fs::read(dir.join("nuc_v_bat_vvm.iqm")).unwrap();
    let model = load(&source, false).unwrap();
    assert_eq!(model.events().len(), 4);
    assert!(
        model
            .warnings()
            .iter()
            .any(|w| w.to_string().contains("kept for saving as IQM: FTE_MESH")),
        "{:?}",
        model.warnings()
    );
    let saved = changed(&model).save(Format::Iqm).unwrap();
    assert_ne!(saved, source, "a changed model is written anew");
    assert_eq!(fte_events(&saved), fte_events(&source));
    assert_eq!(fte_events(&saved).len(), 4);
    assert_eq!(
        extension(&saved, "FTE_MESH"),
        extension(&source, "FTE_MESH")
    );
    assert!(extension(&source, "FTE_MESH").is_some());
    assert_eq!(comment(&saved), comment(&source));
    // And the events read back are the model's.
    assert_eq!(load(&saved, true).unwrap().events(), model.events());
}

// ---------------------------------------------------------------------------------------------
// Skins and events written, and read back
// ---------------------------------------------------------------------------------------------

fn frame(material: &str, shader_text: &str) -> SkinFrame {
    SkinFrame {
        material: material.into(),
        shader_text: shader_text.into(),
    }
}

/// The tube of three bones, its mesh with two skins (the second animated over two textures,
/// one with shader text), and two events on its first scene: one with a numeric key (an FTE
/// event code), one with a word.
fn skinned_tube() -> ModelParts {
    let rig = TubeRig {
        bones: 3,
        frames: 4,
        ..TubeRig::default()
    };
    let mut parts = rig.parts();
    parts.meshes[0].skins = vec![
        MeshSkin {
            frames: vec![frame("models/tube/red", "")],
            interval: 0.0,
        },
        MeshSkin {
            frames: vec![
                frame("models/tube/blue", ""),
                frame("glow", "{ map $whiteimage }"),
            ],
            interval: 0.25,
        },
    ];
    parts.events = vec![
        AnimationEvent {
            animation: 0,
            time: 0.0,
            bone: -1,
            key: Name::from("7"),
            value: Name::from("hit"),
        },
        AnimationEvent {
            animation: 0,
            time: 0.0,
            bone: -1,
            key: Name::from("sound"),
            value: Name::from("step.wav"),
        },
    ];
    parts
}

#[test]
fn skins_and_events_are_written_as_fte_reads_them() {
    let model = Model::from_parts(skinned_tube()).unwrap();
    let bytes = model.save(Format::Iqm).unwrap();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        fte_skins(&bytes),
        vec![vec![
            (s(&["models/tube/red"]), s(&[""]), 0.0),
            (
                s(&["models/tube/blue", "glow"]),
                s(&["", "{ map $whiteimage }"]),
                0.25
            ),
        ]]
    );
    let scene = model.animations()[0].name.to_string();
    assert_eq!(
        fte_events(&bytes),
        [
            (scene.clone(), 0.0, 7, "hit".to_owned()),
            (scene, 0.0, 0, "sound=step.wav".to_owned()),
        ]
    );
    // Skins come back on their mesh.
    let back = load(&bytes, true).unwrap();
    assert_eq!(back.meshes()[0].skins(), model.meshes()[0].skins());
    assert_eq!(back.events()[0], model.events()[0]);
}

/// Byte `at` of the `FTE_SKINS` data of `bytes`.
fn skins_data_at(bytes: &[u8]) -> usize {
    let mut at = header(bytes, 120);
    for _ in 0..header(bytes, 116) {
        if text(bytes, u32_at(bytes, at)) == "FTE_SKINS" {
            return u32_at(bytes, at + 8) as usize;
        }
        at = u32_at(bytes, at + 12) as usize;
    }
    panic!("no FTE_SKINS");
}

/// The data: numskinframes 3, nummeshskins 2, numskins[1 mesh] = 2, three frames (8 bytes), two
/// mesh skins (12 bytes) from byte 36.
const SKINS_AT: usize = 8 + 4 + 3 * 8;

#[test]
fn broken_skin_tables_load_as_fte_loads_them() {
    let good = Model::from_parts(skinned_tube())
        .unwrap()
        .save(Format::Iqm)
        .unwrap();
    let data = skins_data_at(&good);
    let cases: [(&str, usize, u32, usize, &str); 4] = [
        // A count that does not add up: FTE ignores the whole extension.
        ("numskinframes 4", 0, 4, 0, "which need"),
        ("numskins 1", 8, 1, 0, "(1 listed by the meshes)"),
        // A skin without frames, or past the frame table: FTE stops at it.
        (
            "skin 1 of no frames",
            SKINS_AT + 12 + 4,
            0,
            1,
            "mesh 0 skin 1: frames 1..1",
        ),
        (
            "skin 1 past the frames",
            SKINS_AT + 12,
            2,
            1,
            "frames 2..4 of 3",
        ),
    ];
    for (what, at, value, skins, message) in cases {
        let mut bytes = good.clone();
        bytes[data + at..data + at + 4].copy_from_slice(&value.to_le_bytes());
        let model = load(&bytes, false).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(model.meshes()[0].skins().len(), skins, "{what}");
        assert!(
            model
                .warnings()
                .iter()
                .any(|w| w.to_string().contains("FTE_SKINS") && w.to_string().contains(message)),
            "{what}: {:?}",
            model.warnings()
        );
        let e = load(&bytes, true).expect_err(what);
        assert_eq!(e.code(), ErrorCode::Malformed, "{what}: {e}");
    }
}

/// A skin frame naming a string outside the text block is refused like any bad name.
#[test]
fn a_skin_frame_naming_outside_the_text_is_refused() {
    let mut bytes = Model::from_parts(skinned_tube())
        .unwrap()
        .save(Format::Iqm)
        .unwrap();
    let at = skins_data_at(&bytes) + 12;
    bytes[at..at + 4].copy_from_slice(&0x00ff_ffffu32.to_le_bytes());
    for strict in [false, true] {
        let e = load(&bytes, strict).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
        assert!(
            e.to_string()
                .contains("FTE_SKINS skin frame 0: name offset 16777215 is outside the text block"),
            "{e}"
        );
        assert_eq!(e.detail().offset, Some((skins_data_at(&bytes) + 12) as u64));
    }
}
