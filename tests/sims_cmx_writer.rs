//! Writing Sims character files: corpus files parsed and written again (byte for byte where the
//! file is in the retail layout), skeleton models written as CMX/BCF and loaded back with the
//! same rest pose, detection by content, and what the writer refuses.

mod corpus;

use corpus::{corpus_subdir, files_ending};

use std::path::{Path, PathBuf};

use ossa::format::cmx::{self, CharacterFile};
use ossa::format::detect;
use ossa::synth::TubeRig;
use ossa::{Bone, ErrorCode, Format, Kept, LoadOptions, Mat3x4, Model, ModelParts, Name};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn sims_dir(test: &str) -> Option<PathBuf> {
    corpus_subdir("sims", test)
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The corpus's character files (text and binary), sorted.
fn character_files(dir: &Path) -> Vec<String> {
    files_ending(dir, &[".cmx", ".bcf"])
}

fn load(data: &[u8], format: Format) -> Model {
    Model::load(
        data,
        &LoadOptions {
            format,
            ..LoadOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn max_diff(a: &Mat3x4, b: &Mat3x4) -> f32 {
    a.m.iter()
        .zip(&b.m)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Same bones (names, parents) and frame-0 local poses within `local`, model-space bind poses
/// within `bind`.
fn assert_same_skeleton(a: &Model, b: &Model, local: f32, bind: f32, what: &str) {
    let names = |m: &Model| -> Vec<(String, i32)> {
        m.bones()
            .iter()
            .map(|b| (b.name.to_string(), b.parent))
            .collect()
    };
    assert_eq!(names(a), names(b), "{what}: bones");
    let (pa, pb) = (
        a.skeleton().frame_poses(0).unwrap(),
        b.skeleton().frame_poses(0).unwrap(),
    );
    for (i, (x, y)) in pa.iter().zip(pb.iter()).enumerate() {
        let d = max_diff(x, y);
        assert!(d <= local, "{what}: bone {i} local pose off by {d}");
    }
    let (ba, bb) = (a.skeleton().bind_pose(), b.skeleton().bind_pose());
    for (i, (x, y)) in ba.iter().zip(bb).enumerate() {
        let d = max_diff(x, y);
        assert!(d <= bind, "{what}: bone {i} bind pose off by {d}");
    }
}

/// A character file compared after a write: the version is the written encoding's.
fn same_content(mut read_back: CharacterFile, original: &CharacterFile) -> bool {
    read_back.version = original.version;
    read_back == *original
}

// ---------------------------------------------------------------------------------------------
// Corpus round trips
// ---------------------------------------------------------------------------------------------

/// Text files in the retail layout (Maxis comment line, CRLF) and BCFs come back byte for byte;
/// the two fan-made text files use LF line ends (and one a comment of its own and a trailing
/// blank line), which a parsed file does not keep: they come back equal once parsed.
#[test]
fn corpus_files_round_trip() {
    let Some(dir) = sims_dir("corpus_files_round_trip") else {
        return;
    };
    let mut exact = Vec::new();
    let mut differ = Vec::new();
    for name in character_files(&dir) {
        let data = read(&dir, &name);
        let file = cmx::parse(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(file.warnings.is_empty(), "{name}: {:?}", file.warnings);
        let binary = !cmx::is_text(&data);
        for as_binary in [false, true] {
            let written = cmx::write_character(&file, as_binary)
                .unwrap_or_else(|e| panic!("{name} (binary {as_binary}): {e}"));
            assert_eq!(cmx::is_text(&written), !as_binary, "{name}");
            let back = cmx::parse(&written).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                back.version,
                if as_binary { None } else { Some(300) },
                "{name}"
            );
            assert!(
                same_content(back, &file),
                "{name}: written (binary {as_binary}) and parsed again, it differs"
            );
            if as_binary == binary {
                if written == data {
                    exact.push(name.clone());
                } else {
                    differ.push(name.clone());
                }
            }
        }
        // Written in either encoding, the format is told by content.
        assert_eq!(
            detect(&data, None),
            Some(if binary {
                Format::SimsBcf
            } else {
                Format::SimsCmx
            }),
            "{name}"
        );
    }
    eprintln!("byte for byte: {exact:?}; differ: {differ:?}");
    for name in &differ {
        let data = read(&dir, name);
        assert!(name.starts_with("olt_"), "{name} is a retail file");
        assert!(!data.contains(&b'\r'), "{name}: not LF-only");
        // With CRLF and the retail comment line, the LF files are what the writer writes.
        let text = String::from_utf8_lossy(&data).replace('\n', "\r\n");
        let body = text.split_once("\r\n").unwrap().1.trim_end_matches("\r\n");
        let written = cmx::write_character(&cmx::parse(&data).unwrap(), false).unwrap();
        let written = String::from_utf8(written).unwrap();
        let written_body = written
            .split_once("\r\n")
            .unwrap()
            .1
            .trim_end_matches("\r\n");
        assert_eq!(body, written_body, "{name}");
    }
    for name in character_files(&dir) {
        if name.starts_with("so_") || name.to_ascii_lowercase().ends_with(".bcf") {
            assert!(exact.contains(&name), "{name} not byte for byte");
        }
    }
}

/// The retail walk text and the fan BCF of the same skill are each other's conversions.
#[test]
fn text_and_binary_twins_convert_byte_for_byte() {
    let Some(dir) = sims_dir("text_and_binary_twins_convert_byte_for_byte") else {
        return;
    };
    let text = read(&dir, "so_ross-walking-loop.cmx");
    let bcf = read(&dir, "olt_ross-walking-loop.cmx.bcf");
    let from_text = cmx::write_character(&cmx::parse(&text).unwrap(), true).unwrap();
    assert_eq!(from_text, bcf);
    let from_bcf = cmx::write_character(&cmx::parse(&bcf).unwrap(), false).unwrap();
    assert_eq!(from_bcf, text);
}

// ---------------------------------------------------------------------------------------------
// Skeleton models
// ---------------------------------------------------------------------------------------------

/// Every corpus character file of one skeleton and no skills (the retail adult and child
/// skeletons, the 1998 prototype's suit files), loaded as a model and saved in its own format,
/// keeps its bytes: the skeleton's name, its bones' flags and the file's own numbers go with the
/// model. Saved in the other encoding, it is the file's twin.
#[test]
fn corpus_skeletons_saved_from_models_keep_their_bytes() {
    let Some(dir) = sims_dir("corpus_skeletons_saved_from_models_keep_their_bytes") else {
        return;
    };
    let mut kept = Vec::new();
    for dir in [dir.clone(), dir.join("proto1998")] {
        for name in character_files(&dir) {
            let data = read(&dir, &name);
            let file = cmx::parse(&data).unwrap();
            if file.skeletons.len() != 1 || !file.skills.is_empty() {
                continue;
            }
            let model = Model::load_file(dir.join(&name), &LoadOptions::default()).unwrap();
            let format = model.format();
            let saved = model.save(format).unwrap();
            assert!(
                saved == data,
                "{name}: saved from its model, the bytes differ"
            );
            let other = if format == Format::SimsCmx {
                Format::SimsBcf
            } else {
                Format::SimsCmx
            };
            let twin = cmx::write_character(&file, other == Format::SimsBcf).unwrap();
            assert!(model.save(other).unwrap() == twin, "{name} as {other:?}");
            assert_same_skeleton(&model, &load(&twin, other), 0.0, 0.0, &name);
            kept.push(name);
        }
    }
    // The two retail skeletons and the prototype's eight suit files with theirs.
    assert_eq!(kept.len(), 10, "{kept:?}");
    assert!(kept.iter().any(|n| n == "colonelsuit.CMX"), "{kept:?}");
}

/// A skeleton the model does not carry from a character file (taken off here) is written with
/// the defaults: named `skeleton`, every flag set, no wiggle or properties; the numbers are the
/// rest pose's decomposition, the file's quaternions up to sign.
#[test]
fn corpus_skeletons_without_their_file_keep_their_rest_pose() {
    let Some(dir) = sims_dir("corpus_skeletons_without_their_file_keep_their_rest_pose") else {
        return;
    };
    for name in ["so_adult-skeleton.cmx", "so_child-skeleton.cmx"] {
        let mut parts = load(&read(&dir, name), Format::SimsCmx).to_parts();
        assert!(parts.kept.cmx_skeleton.is_some(), "{name}");
        parts.kept = Kept::default();
        let model = Model::from_parts(parts).unwrap();
        for format in [Format::SimsCmx, Format::SimsBcf] {
            let written = model.save(format).unwrap();
            assert_eq!(detect(&written, None), Some(format), "{name}");
            let back = load(&written, format);
            assert_eq!(back.frames().len(), 1, "{name}");
            assert_same_skeleton(&model, &back, 1e-6, 1e-6, name);
            let file = cmx::parse(&written).unwrap();
            let sk = &file.skeletons[0];
            assert_eq!(sk.name.to_string(), cmx::DEFAULT_SKELETON_NAME);
            assert!(sk.bones.iter().all(|b| b.can_translate
                && b.can_rotate
                && b.can_blend
                && b.wiggle_value == 0.0
                && b.wiggle_power == 0.0
                && b.property_lists.is_empty()));
        }
        // The decomposition gives back the file's quaternions, up to sign.
        let original = cmx::parse(&read(&dir, name)).unwrap();
        let rewritten = cmx::parse(&model.save(Format::SimsCmx).unwrap()).unwrap();
        for (a, b) in original.skeletons[0]
            .bones
            .iter()
            .zip(&rewritten.skeletons[0].bones)
        {
            assert_eq!(a.translation, b.translation, "{name} {}", a.name);
            let dot: f32 = a.rotation.iter().zip(&b.rotation).map(|(x, y)| x * y).sum();
            assert!(dot.abs() > 1.0 - 1e-6, "{name} {}: dot {dot}", a.name);
        }
    }
}

/// The 1998 colonel's skeleton with one bone moved: every bone keeps its flags and the
/// skeleton its name; the moved bone is written with its new pose, the others with the file's
/// own numbers.
#[test]
fn a_moved_bone_is_written_anew_and_keeps_its_flags() {
    let Some(dir) = sims_dir("a_moved_bone_is_written_anew_and_keeps_its_flags") else {
        return;
    };
    let dir = dir.join("proto1998");
    let data = read(&dir, "colonelsuit.CMX");
    let original = cmx::parse(&data).unwrap();
    let mut parts = load(&data, Format::SimsCmx).to_parts();
    let pelvis = parts
        .bones
        .iter()
        .position(|b| b.name.as_bytes() == b"PELVIS")
        .unwrap();
    let mut poses = parts.poses.to_matrices();
    poses[pelvis].m[7] += 0.5;
    parts.poses = poses.into();
    let moved = Model::from_parts(parts).unwrap();
    let written = cmx::parse(&moved.save(Format::SimsCmx).unwrap()).unwrap();
    assert_eq!(written.version, Some(200));
    let (a, b) = (&original.skeletons[0], &written.skeletons[0]);
    assert_eq!(b.name.to_string(), "adult");
    for (k, (x, y)) in a.bones.iter().zip(&b.bones).enumerate() {
        assert_eq!(
            (x.can_translate, x.can_rotate, x.can_blend),
            (y.can_translate, y.can_rotate, y.can_blend),
            "{}",
            x.name
        );
        if k == pelvis {
            assert_eq!(y.translation[1], x.translation[1] + 0.5, "{}", x.name);
        } else {
            assert_eq!(
                (x.translation, x.rotation),
                (y.translation, y.rotation),
                "{}",
                x.name
            );
        }
    }
    // Bone 1 (PELVIS) does not translate in the file: `0` after its rotation, kept.
    assert!(!a.bones[pelvis].can_translate);
}

/// A skeleton with turned bones, written from its parsed file's model and again from the
/// written file's: the second write reproduces the first byte for byte.
#[test]
fn a_written_skeleton_is_a_fixed_point() {
    let text = "// test\r\nversion 300\r\n1\r\ntiny\r\n3\r\nROOT\r\nNULL\r\n0\r\n\
                | 0 3 0.5 |\r\n| 0.2 -0.4 0.1 -0.8 |\r\n1\r\n1\r\n1\r\n0\r\n0\r\n\
                ARM\r\nROOT\r\n0\r\n| 1.5 0 0 |\r\n| 0 0.7071068 0 0.7071068 |\r\n\
                1\r\n1\r\n1\r\n0\r\n0\r\n\
                HAND\r\nARM\r\n0\r\n| 1 0.25 -2e-007 |\r\n| 0.5 0.5 0.5 0.5 |\r\n\
                1\r\n1\r\n1\r\n0\r\n0\r\n0\r\n0\r\n";
    let model = load(text.as_bytes(), Format::SimsCmx);
    let first = cmx::write_cmx(&model).unwrap();
    let back = load(&first, Format::SimsCmx);
    assert_same_skeleton(&model, &back, 1e-6, 1e-6, "tiny");
    let second = cmx::write_cmx(&back).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&first),
        String::from_utf8_lossy(&second)
    );
    assert!(first.starts_with(b"// Character File. Copyright 1997, Maxis Inc.\r\nversion 300\r\n"));
}

/// A DPM tube rig (z up, right-handed) as a CMX: the numbers are kept as they are, so the bind
/// pose is the same in model space; the loaded file says y up and left-handed, as every CMX
/// does, because the file has no field for it.
#[test]
fn a_dpm_tube_rig_written_as_cmx_keeps_its_bind_pose() {
    let rig = TubeRig::default();
    let dpm = rig.build().unwrap().save(Format::Dpm).unwrap();
    let model = load(&dpm, Format::Dpm);
    assert_eq!((model.up_axis(), model.handedness()), (2, 1));
    for format in [Format::SimsCmx, Format::SimsBcf] {
        let written = model.save(format).unwrap();
        let back = load(&written, format);
        assert_same_skeleton(&model, &back, 1e-6, 1e-6, "tube");
        assert!(back.meshes().is_empty());
        assert_eq!(back.frames().len(), 1);
        assert_eq!((back.up_axis(), back.handedness()), (1, -1));
        for (b, m) in back.skeleton().bind_pose().iter().enumerate() {
            assert_eq!(m.translation(), [0.0, 0.0, 10.0 * b as f32], "bone {b}");
        }
    }

    // Bent: frame 2's poses as the rest pose, so rotations are written too.
    let mut parts = rig.parts();
    let nb = parts.bones.len();
    let bent: Vec<Mat3x4> = parts.poses.range(2 * nb, nb).unwrap().to_vec();
    let mut poses = parts.poses.to_matrices();
    poses[..nb].copy_from_slice(&bent);
    parts.poses = poses.into();
    let model = Model::from_parts(parts).unwrap();
    let back = load(&cmx::write_cmx(&model).unwrap(), Format::SimsCmx);
    assert_same_skeleton(&model, &back, 1e-6, 1e-6, "bent tube");
    // The local pose is T(t) R(q)^T: the stored quaternion is the conjugate of the pose's.
    let file = cmx::parse(&cmx::write_cmx(&model).unwrap()).unwrap();
    for (b, bone) in file.skeletons[0].bones.iter().enumerate() {
        let pose = cmx::local_pose(bone.translation, bone.rotation);
        let d = max_diff(&pose, &bent[b]);
        assert!(d <= 1e-6, "bone {b}: {d}");
        let q = bent[b].decompose().rotation;
        let dot = q.x * bone.rotation[0] + q.y * bone.rotation[1] + q.z * bone.rotation[2]
            - q.w * bone.rotation[3];
        assert!(dot.abs() > 1.0 - 1e-6, "bone {b}: not the conjugate");
    }
}

fn skeleton_parts(names: &[&str], poses: Vec<Mat3x4>) -> ModelParts {
    let mut parts = ModelParts::new(Format::Dpm);
    parts.bones = names
        .iter()
        .enumerate()
        .map(|(i, n)| Bone {
            name: Name::new(n.as_bytes()),
            parent: i as i32 - 1,
            flags: 0,
        })
        .collect();
    parts.frames = vec![ossa::Frame::named("rest")];
    parts.poses = poses.into();
    parts
}

#[test]
fn scaled_rest_poses_are_refused_naming_the_bone() {
    let scaled = Mat3x4::from_rotation_translation_scale(
        glam::Quat::IDENTITY,
        [0.0, 1.0, 0.0],
        [1.0, 1.0, 1.01],
    );
    let model = Model::from_parts(skeleton_parts(
        &["root", "knee"],
        vec![Mat3x4::IDENTITY, scaled],
    ))
    .unwrap();
    for format in [Format::SimsCmx, Format::SimsBcf] {
        let e = model.save(format).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Unsupported);
        assert!(e.to_string().contains("knee"), "{e}");
    }
    // Within 1e-4 of 1 is rounding, and written.
    let nearly = Mat3x4::from_rotation_translation_scale(
        glam::Quat::IDENTITY,
        [0.0, 1.0, 0.0],
        [1.0, 1.00005, 1.0],
    );
    let model = Model::from_parts(skeleton_parts(
        &["root", "knee"],
        vec![Mat3x4::IDENTITY, nearly],
    ))
    .unwrap();
    assert!(cmx::write_cmx(&model).is_ok());
    // A mirror is a scale of -1.
    let mirror =
        Mat3x4::from_rotation_translation_scale(glam::Quat::IDENTITY, [0.0; 3], [-1.0, 1.0, 1.0]);
    let model = Model::from_parts(skeleton_parts(&["root"], vec![mirror])).unwrap();
    assert_eq!(
        cmx::write_cmx(&model).unwrap_err().code(),
        ErrorCode::Unsupported
    );
}

#[test]
fn a_model_without_bones_is_refused() {
    let model = Model::from_parts(ModelParts::new(Format::Dpm)).unwrap();
    for format in [Format::SimsCmx, Format::SimsBcf] {
        assert_eq!(
            model.save(format).unwrap_err().code(),
            ErrorCode::Unsupported
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------------

#[test]
fn detection_by_content() {
    let model = Model::from_parts(skeleton_parts(&["a", "b"], vec![Mat3x4::IDENTITY; 2])).unwrap();
    let text = cmx::write_cmx(&model).unwrap();
    let bcf = cmx::write_bcf(&model).unwrap();
    assert_eq!(detect(&text, None), Some(Format::SimsCmx));
    assert_eq!(detect(&bcf, None), Some(Format::SimsBcf));
    // Loading without a format or a name finds them.
    for data in [&text, &bcf] {
        let m = Model::load(data, &LoadOptions::default()).unwrap();
        assert_eq!(m.bones().len(), 2);
    }
    // Without a comment, with LF, with a UTF-8 mark: still CMX text.
    assert_eq!(
        detect(b"version 300\n0\n0\n0\n", None),
        Some(Format::SimsCmx)
    );
    assert_eq!(
        detect(b"\xEF\xBB\xBF// x\n\n  version 200\r\n", None),
        Some(Format::SimsCmx)
    );
    // The extension wins when given.
    assert_eq!(detect(&text, Some("a.skn")), Some(Format::SimsSkn));
    assert_eq!(detect(&bcf, Some("a.cmx")), Some(Format::SimsCmx));
    assert_eq!(detect(&text, Some("a.cmx.bcf")), Some(Format::SimsBcf));
    // Not enough: a `//` comment alone, MM2's `.mod` version line, other versions, an empty
    // BCF (all zero), a BCF with bytes after it or cut short, text.
    let mut longer = bcf.clone();
    longer.push(0);
    // MM2's `.mod` text starts with `version:`, which is not a CMX version line.
    assert_eq!(
        detect(b"version: 1.10\nverts: 3\n", None),
        Some(Format::Mm2Mod)
    );
    let cases: [(&str, &[u8]); 8] = [
        ("comment", b"// Character File\nsomething\n"),
        ("version 1", b"version 1\n"),
        ("version words", b"version 300 extra\n"),
        ("empty bcf", &[0u8; 12]),
        ("bcf + 1", &longer),
        ("bcf cut", &bcf[..bcf.len() - 1]),
        ("hello", b"hello"),
        ("nothing", b""),
    ];
    for (what, data) in cases {
        assert_eq!(detect(data, None), None, "{what}");
    }
}

// ---------------------------------------------------------------------------------------------
// What the writer refuses
// ---------------------------------------------------------------------------------------------

fn small() -> CharacterFile {
    let text = "// Character File. Copyright 1997, Maxis Inc.\r\nversion 300\r\n1\r\nsk\r\n2\r\nROOT\r\nNULL\r\n0\r\n| 0 1 0 |\r\n\
                | 0 0 0 1 |\r\n1\r\n1\r\n1\r\n0\r\n0\r\nHEAD\r\nROOT\r\n0\r\n| 0 1 0 |\r\n\
                | 0 0 0 1 |\r\n0\r\n1\r\n1\r\n0\r\n0\r\n\
                1\r\nsuit\r\n0\r\n0\r\n1\r\nHEAD\r\nxskin-head\r\n0\r\n0\r\n\
                1\r\nnod\r\nxskill-nod\r\n100\r\n0\r\n0\r\n2\r\n4\r\n1\r\n\
                HEAD\r\n4\r\n100\r\n0\r\n1\r\n-1\r\n0\r\n1\r\n1\r\nk\r\nv\r\n\
                1\r\n1\r\n33\r\n1\r\nstep\r\nleft\r\n";
    let file = cmx::parse(text.as_bytes()).unwrap();
    assert_eq!(
        String::from_utf8(cmx::write_character(&file, false).unwrap()).unwrap(),
        text
    );
    file
}

fn refused(file: &CharacterFile, code: ErrorCode, needle: &str) {
    for binary in [false, true] {
        let e = cmx::write_character(file, binary).unwrap_err();
        assert_eq!(e.code(), code, "binary {binary}: {e}");
        assert!(e.to_string().contains(needle), "binary {binary}: {e}");
    }
}

#[test]
fn names_a_line_cannot_hold_are_refused() {
    let base = small();
    for bad in ["a\nb", "a\r\nb", "x\r", " lead", "trail\t", "//comment"] {
        let mut f = base.clone();
        f.suits[0].name = Name::from(bad);
        refused(&f, ErrorCode::Unsupported, "suit 0");
        let mut f = base.clone();
        f.skeletons[0].bones[1].name = Name::from(bad);
        refused(&f, ErrorCode::Unsupported, "bone 1");
        let mut f = base.clone();
        f.skills[0].motions[0].time_property_lists[0][0].properties[0].value = Name::from(bad);
        refused(&f, ErrorCode::Unsupported, "time property list 0 entry 0");
    }
    // The same from a model: its bone names are checked too.
    let model = Model::from_parts(skeleton_parts(
        &["root", "two\nlines"],
        vec![Mat3x4::IDENTITY; 2],
    ))
    .unwrap();
    for format in [Format::SimsCmx, Format::SimsBcf] {
        let e = model.save(format).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Unsupported);
        assert!(e.to_string().contains("line break"), "{e}");
    }
}

/// A BCF string longer than 254 bytes takes the long form (255, then a 32-bit length); text has
/// no length limit. Beyond 32 bits the writer fails with a limit error (unit-tested in the
/// module: a name that long cannot be built here).
#[test]
fn long_names_take_the_long_bcf_form() {
    let mut f = small();
    for len in [254usize, 255, 300, 70_000] {
        f.suits[0].name = Name::new(&vec![b'n'; len]);
        for binary in [false, true] {
            let written = cmx::write_character(&f, binary).unwrap();
            let back = cmx::parse(&written).unwrap();
            assert!(same_content(back, &f), "length {len}, binary {binary}");
        }
    }
}

#[test]
fn structures_the_reader_would_refuse_are_refused() {
    let base = small();
    let mut f = base.clone();
    f.skeletons[0].bones[1].name = Name::from("ROOT");
    refused(&f, ErrorCode::Unsupported, "bone 0's too");
    let mut f = base.clone();
    f.skeletons[0].bones[1].name = Name::empty();
    refused(&f, ErrorCode::Unsupported, "empty");
    let mut f = base.clone();
    f.skeletons[0].bones[0].parent = Some(Name::from("HEAD"));
    refused(&f, ErrorCode::InvalidArgument, "earlier bone");
    let mut f = base.clone();
    f.skeletons[0].bones[1].parent = Some(Name::from("NULL"));
    refused(&f, ErrorCode::Unsupported, "no parent");
    let mut f = base.clone();
    f.skeletons[0].bones[1].translation[2] = f32::NAN;
    refused(&f, ErrorCode::InvalidArgument, "translation");
    let mut f = base.clone();
    f.skeletons[0].bones[1].rotation = [0.0; 4];
    refused(&f, ErrorCode::InvalidArgument, "no length");
    let mut f = base.clone();
    f.skills[0].duration = f32::INFINITY;
    refused(&f, ErrorCode::InvalidArgument, "duration");
    let mut f = base.clone();
    f.skills[0].motions[0].rotation_offset = 1;
    refused(&f, ErrorCode::InvalidArgument, "do not fit");
    // A parent found ignoring case, as the reader finds it, is fine.
    let mut f = base.clone();
    f.skeletons[0].bones[1].parent = Some(Name::from("root"));
    let back = cmx::parse(&cmx::write_character(&f, false).unwrap()).unwrap();
    assert_eq!(back.skeletons[0].bones[1].parent_index, 0);
    // A quaternion off unit length is written as given and reads back normalised.
    let mut f = base.clone();
    f.skeletons[0].bones[1].rotation = [0.0, 0.0, 0.0, 2.0];
    let back = cmx::parse(&cmx::write_character(&f, true).unwrap()).unwrap();
    assert_eq!(back.skeletons[0].bones[1].rotation, [0.0, 0.0, 0.0, 1.0]);
}

/// A model's scene saved as a skill gives the file's own events back as its motions' time
/// properties (the walk's on ROOT and the toes), every bone a motion of every frame, and the
/// skill's travel and length.
#[test]
fn a_scene_saves_as_a_skill_with_the_files_time_properties() {
    let Some(dir) = sims_dir("a_scene_saves_as_a_skill_with_the_files_time_properties") else {
        return;
    };
    let adult = load(&read(&dir, "so_adult-skeleton.cmx"), Format::SimsCmx);
    let file = cmx::parse(&read(&dir, "so_ross-walking-loop.cmx")).unwrap();
    let walk = (file.skills.iter())
        .position(|s| s.name.to_string() == "a2o-walking-loop")
        .unwrap();
    let cfp = read(&dir, "so_xskill-A2O-walking-loop.cfp");
    let walking = cmx::with_skill(&adult, &file, walk, &cfp).unwrap();
    let saved = cmx::skills_from_model(&walking).unwrap();
    assert_eq!(saved.character.skills.len(), 1);
    assert_eq!(saved.cfps.len(), 1);
    let (skill, original) = (&saved.character.skills[0], &file.skills[walk]);
    assert_eq!(skill.name.to_string(), "a2o-walking-loop");
    assert_eq!(skill.animation.to_string(), "a2o-walking-loop");
    assert_eq!(skill.duration, original.duration);
    assert_eq!(
        (skill.distance, skill.moving),
        (original.distance, original.moving)
    );
    assert_eq!(skill.motions.len(), 29);
    assert_eq!(
        (skill.translation_count, skill.rotation_count),
        (29 * 38, 29 * 38)
    );
    for (b, motion) in skill.motions.iter().enumerate() {
        assert_eq!(motion.bone, adult.bones()[b].name);
        assert_eq!(motion.frame_count, 38);
        assert_eq!(motion.translation_offset, b as i32 * 38);
        let from_file = (original.motions.iter())
            .find(|m| m.bone == motion.bone)
            .unwrap();
        assert_eq!(
            motion.time_property_lists, from_file.time_property_lists,
            "{}",
            motion.bone
        );
    }
    let cfp_values = cmx::Skill::value_count(skill) as usize;
    assert_eq!(ossa::cfp::count_values(&saved.cfps[0]).unwrap(), cfp_values);

    // A model without bones has nothing to move.
    let suits = load(&read(&dir, "so_B001MAFit_01.cmx"), Format::SimsCmx);
    let err = cmx::skills_from_model(&suits).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unsupported);
    assert_eq!(
        err.to_string(),
        "the model has no bones: a skill moves a skeleton's bones"
    );
}
