//! Sims suits: the outfits a character file lists (which mesh goes on which bone, censor flags,
//! properties), kept by the model a CMX or BCF loads into, carried through binding and saved
//! back. The hand-made files need no corpus; the corpus test reads the game's suit files and
//! skips when they are absent.

mod corpus;

mod sims_fixtures;

use corpus::corpus_subdir;
use sims_fixtures::{HEAD_SKN, SKELETON_AND_SUIT};

use ossa::format::cmx;
use ossa::model::{Property, Suit, SuitSkin};
use ossa::{ErrorCode, Format, LoadOptions, Model};

/// Two suits: a body with properties on the suit and on its head skin (whose second list is
/// empty), and a censor suit.
const SUITS: &str = "// Character File. Copyright 1997, Maxis Inc.
version 300
0
2
b001mafit_01
0
1
2
skinColor
med
age
adult
2
PELVIS
xskin-b001mafit_01-PELVIS-BODY
0
0
HEAD
xskin-c004mc_nerd-HEAD-HEAD
0
2
1
texture
c004mc_nerdlgt
0
child-censor
1
0
1
PELVIS
xskin-child-censor-PELVIS-PELVISBOX
1
0
0
";

fn property(list: u32, key: &str, value: &str) -> Property {
    Property {
        list,
        key: key.into(),
        value: value.into(),
    }
}

fn skin(bone: &str, mesh: &str, censor_flags: u32, properties: Vec<Property>) -> SuitSkin {
    SuitSkin {
        bone: bone.into(),
        mesh: mesh.into(),
        censor_flags,
        properties,
    }
}

/// What `SUITS` lists, field by field.
fn suits_listed() -> Vec<Suit> {
    vec![
        Suit {
            name: "b001mafit_01".into(),
            kind: 0,
            properties: vec![property(0, "skinColor", "med"), property(0, "age", "adult")],
            skins: vec![
                skin("PELVIS", "xskin-b001mafit_01-PELVIS-BODY", 0, vec![]),
                skin(
                    "HEAD",
                    "xskin-c004mc_nerd-HEAD-HEAD",
                    0,
                    vec![property(0, "texture", "c004mc_nerdlgt")],
                ),
            ],
        },
        Suit {
            name: "child-censor".into(),
            kind: 1,
            properties: vec![],
            skins: vec![skin(
                "PELVIS",
                "xskin-child-censor-PELVIS-PELVISBOX",
                1,
                vec![],
            )],
        },
    ]
}

fn load(bytes: &[u8], format: Format) -> ossa::Result<Model> {
    Model::load(
        bytes,
        &LoadOptions {
            format,
            ..LoadOptions::default()
        },
    )
}

#[test]
fn a_suit_file_loads_as_its_suits() {
    let bcf = cmx::write_character(&cmx::parse(SUITS.as_bytes()).unwrap(), true).unwrap();
    for (bytes, format) in [
        (SUITS.as_bytes(), Format::SimsCmx),
        (SUITS.as_bytes(), Format::Auto),
        (&bcf[..], Format::SimsBcf),
        (&bcf[..], Format::Auto),
    ] {
        let model = load(bytes, format).unwrap();
        assert_eq!(model.suits(), suits_listed(), "{format:?}");
        let info = model.info();
        assert_eq!(
            (info.bone_count, info.mesh_count, info.frame_count),
            (0, 0, 0)
        );
        assert!(model.warnings().is_empty(), "{:?}", model.warnings());
    }
}

#[test]
fn suits_save_back_as_cmx_and_bcf() {
    let model = load(SUITS.as_bytes(), Format::SimsCmx).unwrap();
    let text = model.save(Format::SimsCmx).unwrap();
    // The file as the game writes it, but for the head skin's empty second list, which a model
    // does not keep.
    let without_empty_list = SUITS.replace(
        "2\n1\ntexture\nc004mc_nerdlgt\n0\n",
        "1\n1\ntexture\nc004mc_nerdlgt\n",
    );
    assert_eq!(
        String::from_utf8_lossy(&text).replace("\r\n", "\n"),
        without_empty_list
    );
    for format in [Format::SimsCmx, Format::SimsBcf] {
        let saved = model.save(format).unwrap();
        let back = load(&saved, format).unwrap();
        assert_eq!(back.suits(), suits_listed(), "{format:?}");
    }
}

#[test]
fn a_skeletons_suits_stay_with_it_through_binding_and_saving() {
    let character = load(SKELETON_AND_SUIT.as_bytes(), Format::SimsCmx).unwrap();
    let suit = Suit {
        name: "head-only".into(),
        kind: 0,
        properties: vec![],
        skins: vec![skin("HEAD", "head-mesh", 0, vec![])],
    };
    assert_eq!(character.suits(), std::slice::from_ref(&suit));
    assert_eq!(character.bones().len(), 2);
    // The suit names the mesh to bind, and the bone it hangs on is the skeleton's.
    let skin_entry = &character.suits()[0].skins[0];
    assert_eq!(character.find_bone(skin_entry.bone.as_bytes()), Some(1));
    let mesh = load(HEAD_SKN.as_bytes(), Format::SimsSkn).unwrap();
    assert_eq!(
        mesh.meshes()[0].name().to_string(),
        skin_entry.mesh.to_string()
    );
    let bound = Model::bind(&mesh, &character).unwrap();
    assert_eq!(bound.suits(), std::slice::from_ref(&suit));
    // The head mesh's first vertex is HEAD's joint: y 3 + 2.
    assert_eq!(bound.bounds().0[1], 5.0);

    // Saved as CMX, the skeleton and the suit both come back.
    let saved = character.save(Format::SimsCmx).unwrap();
    let back = load(&saved, Format::SimsCmx).unwrap();
    assert_eq!(back.suits(), [suit]);
    assert_eq!(back.bones(), character.bones());
}

#[test]
fn suits_count_against_the_memory_ceiling() {
    let e = Model::load(
        SUITS.as_bytes(),
        &LoadOptions {
            format: Format::SimsCmx,
            max_bytes: 200,
            ..LoadOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    assert!(e.to_string().contains("the suits needs"), "{e}");
    assert!(
        e.to_string().contains("more than the limit of 200 bytes"),
        "{e}"
    );
}

#[test]
fn corpus_suits_list_their_skins() {
    let Some(dir) = corpus_subdir("sims", "corpus_suits_list_their_skins") else {
        return;
    };
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    // The child censor suit: a box on each body part, each with its part's flag.
    let censor = load(&read("so_child-censor.cmx"), Format::Auto).unwrap();
    assert_eq!(censor.suits().len(), 1);
    let suit = &censor.suits()[0];
    assert_eq!(
        (suit.name.to_string(), suit.kind),
        ("child-censor".to_owned(), 1)
    );
    let skins: Vec<(String, String, u32)> = suit
        .skins
        .iter()
        .map(|k| (k.bone.to_string(), k.mesh.to_string(), k.censor_flags))
        .collect();
    let listed = [
        ("PELVIS", "PELVISBOX", 1),
        ("SPINE2", "CHESTBOX", 2),
        ("R_HAND", "RIGHTHANDBOX", 16),
        ("L_HAND", "LEFTHANDBOX", 8),
        ("HEAD", "HEADBOX", 4),
        ("R_FOOT", "RIGHTFOOTBOX", 64),
        ("L_FOOT", "LEFTFOOTBOX", 32),
    ]
    .map(|(bone, part, flag)| {
        (
            bone.to_owned(),
            format!("xskin-child-censor-{bone}-{part}"),
            flag,
        )
    });
    assert_eq!(skins, listed);

    // A head with glasses: two skins on HEAD.
    let nerd = load(&read("so_C004MC_nerd.cmx"), Format::Auto).unwrap();
    let meshes: Vec<(String, String)> = nerd.suits()[0]
        .skins
        .iter()
        .map(|k| (k.bone.to_string(), k.mesh.to_string()))
        .collect();
    assert_eq!(
        meshes,
        [
            ("HEAD".to_owned(), "xskin-c004mc_nerd-HEAD-HEAD".to_owned()),
            (
                "HEAD".to_owned(),
                "xskin-c004mc_nerd-HEAD-NERDSPECS".to_owned()
            ),
        ]
    );
    // Every suit bone is a bone of the adult skeleton.
    let adult = load(&read("so_adult-skeleton.cmx"), Format::Auto).unwrap();
    for k in censor.suits()[0].skins.iter().chain(&nerd.suits()[0].skins) {
        assert!(adult.find_bone(k.bone.as_bytes()).is_some(), "{}", k.bone);
    }
}
