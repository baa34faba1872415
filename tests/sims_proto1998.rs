//! Version 200 CMX, the 1998 prototype of The Sims (`corpus/sims/proto1998/`): every file loads,
//! parses and is written back to its own bytes; suits and skins read in the shorter version 200
//! records; a model read from such a file saves as version 200; and what version 200 has no
//! place for is refused, naming the field. The corpus tests skip when the corpus is absent.

mod corpus;

use corpus::{corpus_subdir, files_ending};

use std::path::{Path, PathBuf};

use ossa::format::cmx::{self, CharacterFile, Property};
use ossa::{ErrorCode, Format, LoadOptions, Model};

fn proto_dir(test: &str) -> Option<PathBuf> {
    let dir = corpus_subdir("sims", test)?.join("proto1998");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("corpus not found at {}; skipping {test}", dir.display());
        None
    }
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The prototype's character files: every name ending in `.cmx`, any case.
fn cmx_files(dir: &Path) -> Vec<String> {
    files_ending(dir, &[".cmx"])
}

#[test]
fn every_file_loads() {
    let Some(dir) = proto_dir("every_file_loads") else {
        return;
    };
    let names = cmx_files(&dir);
    assert_eq!(names.len(), 288);
    let (mut skeletons, mut suits) = (0, 0);
    let mut bone_counts = std::collections::BTreeMap::new();
    for name in &names {
        let model = Model::load_file(dir.join(name), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(model.format(), Format::SimsCmx, "{name}");
        assert_eq!(model.source_version(), Some(200), "{name}");
        assert!(
            model.warnings().is_empty(),
            "{name}: {:?}",
            model.warnings()
        );
        let file = cmx::parse(&read(&dir, name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        if !file.skeletons.is_empty() {
            skeletons += 1;
            assert_eq!(model.bones().len(), file.skeletons[0].bones.len(), "{name}");
            // 25 bones, or 27 with a finger bone on each hand (the walk cycles' skeletons).
            for sk in &file.skeletons {
                let names: Vec<String> = sk.bones.iter().map(|b| b.name.to_string()).collect();
                let fingers = ["L_FINGER0", "R_FINGER0"].map(|f| names.iter().any(|n| n == f));
                match sk.bones.len() {
                    25 => assert_eq!(fingers, [false; 2], "{name}: skeleton {}", sk.name),
                    27 => assert_eq!(fingers, [true; 2], "{name}: skeleton {}", sk.name),
                    n => panic!("{name}: skeleton {} has {n} bones", sk.name),
                }
                *bone_counts.entry(sk.bones.len()).or_insert(0) += 1;
            }
        }
        if !file.suits.is_empty() {
            suits += 1;
            assert_eq!(model.suits().len(), file.suits.len(), "{name}");
        }
    }
    eprintln!(
        "{} files: {skeletons} with skeletons (skeletons by bone count: {bone_counts:?}), {suits} \
         with suits",
        names.len()
    );
    assert_eq!(suits, 30);
}

#[test]
fn a_suit_reads_as_version_200_lays_it_out() {
    let Some(dir) = proto_dir("a_suit_reads_as_version_200_lays_it_out") else {
        return;
    };
    let model = Model::load_file(dir.join("colonelsuit.CMX"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(model.suits().len(), 1);
    let suit = &model.suits()[0];
    assert_eq!(suit.name.to_string(), "colonel");
    assert_eq!(suit.kind, 0);
    assert!(suit.properties.is_empty());
    assert_eq!(suit.skins.len(), 21);
    let skin = &suit.skins[0];
    assert_eq!(skin.bone.to_string(), "PELVIS");
    assert_eq!(skin.mesh.to_string(), "xskin-colonel-PELVIS-HIP");
    assert_eq!(skin.censor_flags, 0);
    assert!(skin.properties.is_empty());
    assert!(
        suit.skins
            .iter()
            .all(|k| k.censor_flags == 0 && k.properties.is_empty())
    );
    let last = &suit.skins[20];
    assert_eq!(last.bone.to_string(), "L_FOOT");
    assert_eq!(last.mesh.to_string(), "xskin-colonel-L_FOOT-FOOTR");
}

#[test]
fn a_skill_reads_as_in_version_300() {
    let Some(dir) = proto_dir("a_skill_reads_as_in_version_300") else {
        return;
    };
    let file = cmx::parse(&read(&dir, "adult-greet01.cmx")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file.version, Some(200));
    assert_eq!(file.skeletons.len(), 1);
    assert!(file.suits.is_empty());
    assert_eq!(file.skills.len(), 1);
    let skill = &file.skills[0];
    assert_eq!(skill.name.to_string(), "adult-greet01");
    assert_eq!(skill.animation.to_string(), "xskill-adult-greet01");
    assert_eq!(skill.duration, 3033.0);
    assert_eq!(skill.translation_count, 182);
    assert_eq!(skill.rotation_count, 2275);
    assert_eq!(skill.motions.len(), 25);
    assert_eq!(skill.motions[0].bone.to_string(), "ROOT");
    assert_eq!(skill.motions[0].frame_count, 91);
}

/// Every file parses and is written back to its own bytes (CRLF, the Maxis comment line,
/// `version 200`, `%g` numbers with three-digit exponents, quaternions in the file's own
/// six-digit numbers), but one: a value line of `adult-tubC-getinoutLR.cmx` ends in a tab, which
/// the reader trims as it trims every line, so the parsed file does not keep it. As a BCF
/// (version 300's records) every file reads back the same.
#[test]
fn every_file_writes_back_byte_for_byte() {
    let Some(dir) = proto_dir("every_file_writes_back_byte_for_byte") else {
        return;
    };
    let mut exact = 0;
    let mut differ = Vec::new();
    for name in cmx_files(&dir) {
        let data = read(&dir, &name);
        let file = cmx::parse(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(file.version, Some(200), "{name}");
        assert!(file.warnings.is_empty(), "{name}: {:?}", file.warnings);
        let written = cmx::write_character(&file, false).unwrap_or_else(|e| panic!("{name}: {e}"));
        if written == data {
            exact += 1;
        } else {
            let lines = |d: &[u8]| -> Vec<String> {
                d.split(|&b| b == b'\n')
                    .map(|l| String::from_utf8_lossy(l).into_owned())
                    .collect()
            };
            let (a, b) = (lines(&data), lines(&written));
            assert_eq!(a.len(), b.len(), "{name}: line count");
            let changed: Vec<(usize, String, String)> = (a.iter().zip(&b).enumerate())
                .filter(|(_, (x, y))| x != y)
                .map(|(i, (x, y))| (i + 1, x.clone(), y.clone()))
                .collect();
            differ.push((name.clone(), changed));
        }
        let bcf = cmx::write_character(&file, true).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut back = cmx::parse(&bcf).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back.version, None, "{name}");
        back.version = file.version;
        assert!(
            back == file,
            "{name}: as BCF: {}",
            first_difference(&back, &file)
        );
    }
    eprintln!("byte for byte: {exact} of 288; differ: {differ:?}");
    assert_eq!(exact, 287);
    // Skill 1 (adult-tub1-getinr) motion 0 (ROOT) time property list 0 entry 0: `xevt` `101\t`.
    assert_eq!(
        differ,
        [(
            "adult-tubC-getinoutLR.cmx".to_owned(),
            vec![(355, "101\t\r".to_owned(), "101\r".to_owned())]
        )]
    );
}

/// Where two character files first differ, briefly (a whole file's Debug is too long to read).
fn first_difference(a: &CharacterFile, b: &CharacterFile) -> String {
    for (i, (x, y)) in a.skeletons.iter().zip(&b.skeletons).enumerate() {
        for (j, (p, q)) in x.bones.iter().zip(&y.bones).enumerate() {
            if p != q {
                return format!("skeleton {i} bone {j}: {p:?} and {q:?}");
            }
        }
    }
    for (i, (x, y)) in a.suits.iter().zip(&b.suits).enumerate() {
        if x != y {
            return format!("suit {i}: {x:?} and {y:?}");
        }
    }
    for (i, (x, y)) in a.skills.iter().zip(&b.skills).enumerate() {
        if x != y {
            return format!("skill {i} ({})", x.name);
        }
    }
    "counts or names".to_owned()
}

/// A model read from a version 200 file saves as version 200: its suits and its skeleton's rest
/// pose come back the same.
#[test]
fn a_model_saves_in_the_version_it_was_read_from() {
    let Some(dir) = proto_dir("a_model_saves_in_the_version_it_was_read_from") else {
        return;
    };
    let model = Model::load_file(dir.join("colonelsuit.CMX"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let saved = model
        .save(Format::SimsCmx)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(saved.starts_with(b"// Character File. Copyright 1997, Maxis Inc.\r\nversion 200\r\n"));
    let back = Model::load(&saved, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.source_version(), Some(200));
    assert_eq!(back.suits(), model.suits());
    assert_eq!(back.bones().len(), model.bones().len());
    for (a, b) in back.bones().iter().zip(model.bones()) {
        assert_eq!(
            (a.name.to_string(), a.parent),
            (b.name.to_string(), b.parent)
        );
    }
    let rest = |m: &Model| -> Vec<[f32; 12]> {
        let poses = m.skeleton().frame_poses(0).expect("a rest pose");
        poses.iter().map(|p| p.m).collect()
    };
    for (b, (x, y)) in rest(&back).iter().zip(rest(&model)).enumerate() {
        let d = x
            .iter()
            .zip(y)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max);
        assert!(d < 1e-5, "bone {b}: rest pose moved {d}");
    }
    // A BCF has no version; the model's own stays.
    let bcf = model
        .save(Format::SimsBcf)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cmx::parse(&bcf).unwrap().version, None);
}

// ---------------------------------------------------------------------------------------------
// Without the corpus
// ---------------------------------------------------------------------------------------------

/// A version 200 file with a skeleton of two bones, a suit of two skins and a skill.
const PROTO: &str = "// Character File. Copyright 1997, Maxis Inc.\r
version 200\r
1\r
adult\r
2\r
ROOT\r
NULL\r
| -5.88298e-005 3.01929 0.00820618 |\r
| -0.0262998 -0.706899 0.0262789 -0.706336 |\r
1\r
1\r
PELVIS\r
ROOT\r
| -0.0696158 -2.42464e-008 1.15234e-013 |\r
| 0.499999 0.5 0.5 -0.500001 |\r
0\r
1\r
1\r
colonel\r
2\r
PELVIS\r
xskin-colonel-PELVIS-HIP\r
ROOT\r
xskin-colonel-ROOT-HEAD\r
1\r
wave\r
xskill-wave\r
1000\r
0\r
0\r
2\r
2\r
1\r
ROOT\r
2\r
1000\r
1\r
1\r
0\r
0\r
0\r
0\r
";

fn proto() -> CharacterFile {
    cmx::parse(PROTO.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_generated_version_200_file_round_trips() {
    let file = proto();
    assert_eq!(file.version, Some(200));
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    let bones = &file.skeletons[0].bones;
    assert_eq!(bones.len(), 2);
    assert_eq!(bones[1].parent_index, 0);
    assert!(bones[0].can_translate && bones[0].can_rotate && !bones[0].can_blend);
    assert!(!bones[1].can_translate && bones[1].can_rotate);
    let suit = &file.suits[0];
    assert_eq!(suit.name.to_string(), "colonel");
    assert_eq!((suit.suit_type, suit.property_lists.len()), (0, 0));
    assert_eq!(suit.skins.len(), 2);
    assert_eq!(suit.skins[1].bone.to_string(), "ROOT");
    assert_eq!(suit.skins[1].name.to_string(), "xskin-colonel-ROOT-HEAD");
    assert_eq!(file.skills[0].motions[0].frame_count, 2);
    let written = cmx::write_character(&file, false).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(String::from_utf8(written).unwrap(), PROTO);
    // Asked for version 300, the same data is written in the retail layout and reads back equal.
    let retail = CharacterFile {
        version: Some(300),
        ..file.clone()
    };
    let written = cmx::write_character(&retail, false).unwrap();
    assert!(
        written.starts_with(b"// Character File. Copyright 1997, Maxis Inc.\r\nversion 300\r\n")
    );
    assert_eq!(cmx::parse(&written).unwrap(), retail);
    // And loaded as a model, saved as CMX, it stays version 200.
    let model = Model::load(PROTO.as_bytes(), &LoadOptions::default()).unwrap();
    let saved = model.save(Format::SimsCmx).unwrap();
    let back = cmx::parse(&saved).unwrap();
    assert_eq!(back.version, Some(200));
    assert_eq!(back.suits, file.suits);
}

/// What version 200 has no place for is refused as unsupported (OSSA_ERR_UNSUPPORTED), naming
/// the field; the same data as version 300 is written.
#[test]
fn what_version_200_cannot_hold_is_refused_naming_the_field() {
    let property = || {
        vec![vec![Property {
            key: "age".into(),
            value: "adult".into(),
        }]]
    };
    type Change = fn(&mut CharacterFile, Vec<Vec<Property>>);
    let cases: [(&str, Change); 8] = [
        (
            "skeleton 0 (adult) bone 1 (PELVIS): property lists",
            |f, p| f.skeletons[0].bones[1].property_lists = p,
        ),
        (
            "skeleton 0 (adult) bone 0 (ROOT): can-blend flag",
            |f, _| f.skeletons[0].bones[0].can_blend = true,
        ),
        (
            "skeleton 0 (adult) bone 1 (PELVIS): wiggle value",
            |f, _| f.skeletons[0].bones[1].wiggle_value = 0.5,
        ),
        ("skeleton 0 (adult) bone 0 (ROOT): wiggle power", |f, _| {
            f.skeletons[0].bones[0].wiggle_power = 2.0
        }),
        ("suit 0 (colonel): type", |f, _| f.suits[0].suit_type = 1),
        ("suit 0 (colonel): property lists", |f, p| {
            f.suits[0].property_lists = p
        }),
        ("suit 0 (colonel) skin 1: censor flags", |f, _| {
            f.suits[0].skins[1].censor_flags = 4
        }),
        ("suit 0 (colonel) skin 0: property lists", |f, p| {
            f.suits[0].skins[0].property_lists = p
        }),
    ];
    for (field, change) in cases {
        let mut file = proto();
        change(&mut file, property());
        let e = cmx::write_character(&file, false).expect_err(field);
        assert_eq!(e.code(), ErrorCode::Unsupported, "{field}: {e}");
        assert_eq!(e.code() as u32, 6, "OSSA_ERR_UNSUPPORTED");
        let message = e.to_string();
        assert!(message.contains(field), "{field}: {message}");
        assert!(message.contains("version 200"), "{message}");
        // Version 300 and BCF hold it.
        let retail = CharacterFile {
            version: Some(300),
            ..file.clone()
        };
        let written = cmx::write_character(&retail, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cmx::parse(&written).unwrap(), retail, "{field}");
        let bcf = cmx::write_character(&file, true).unwrap_or_else(|e| panic!("{e}"));
        let mut back = cmx::parse(&bcf).unwrap();
        back.version = file.version;
        assert_eq!(back, file, "{field}");
    }
    // A version the writer does not know.
    let file = CharacterFile {
        version: Some(250),
        ..proto()
    };
    let e = cmx::write_character(&file, false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported);
    assert!(e.to_string().contains("version 250"), "{e}");
}

/// A model read from version 200 whose suits version 200 cannot hold (a retail suit added to it)
/// saves as version 300 rather than failing: a caller of `ossa_save` cannot choose the version.
#[test]
fn a_model_with_suits_version_200_cannot_hold_saves_as_300() {
    let model = Model::load(PROTO.as_bytes(), &LoadOptions::default()).unwrap();
    let mut parts = model.to_parts();
    assert_eq!(parts.source_version, Some(200));
    parts.suits[0].kind = 2;
    let changed = Model::from_parts(parts).unwrap();
    assert_eq!(changed.source_version(), Some(200));
    let saved = changed.save(Format::SimsCmx).unwrap();
    let back = cmx::parse(&saved).unwrap();
    assert_eq!(back.version, Some(300));
    assert_eq!(back.suits[0].suit_type, 2);
}
