//! Lookups over what a file gives, at the sizes a file can give: a Sims skeleton of 65,535
//! bones (CMX text and BCF), a Sims mesh naming 100,000 bones bound to it, a skill of 20,000
//! motions naming a bone it lacks, 20,000 skills naming one CFP of 1 MB, a DMF save of 65,000
//! keyed scenes, and 3,000 small meshes laid out for skinning on 65,535 bones. Each lookup is
//! hashed or indexed (each CFP read and decoded once); a scan per bone, name, motion, scene or
//! mesh took from 12 s to a minute on these inputs, and a CFP read per skill about 5 minutes.
//!
//! Each test guards its path with a wall-clock cap of the kind a hang trips: about ten times
//! what the path takes in a debug build on a 2-core machine shared with other builds, and far
//! below what the quadratic path took in a release build. The values the path gives are
//! checked too, and the lookups' rules on small files (which match wins, case, messages).

mod memory_fs;
use memory_fs::MemoryFs;
use std::time::{Duration, Instant};

use ossa::format::cfp;
use ossa::format::cmx;
use ossa::{
    Animation, Bone, ErrorCode, Format, Frame, FrameBlend, Influence, KEY_POSITION, KeyedAnimation,
    Keyframe, LoadOptions, Mat3x4, MeshParts, Model, ModelParts, Strided, validate,
};

/// The most bones a Sims skeleton holds here: the largest a u16 bone index (SKN bindings, the
/// game's own tables) can number.
const BONES: usize = 65_535;

/// Runs `f`, failing when it takes longer than `cap`.
fn capped<T>(what: &str, cap: Duration, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    assert!(took < cap, "{what} took {took:?}, more than {cap:?}");
    out
}

// ---------------------------------------------------------------------------------------------
// Generated files
// ---------------------------------------------------------------------------------------------

const HEADER: &str = "// Character File. Copyright 1997, Maxis Inc.\r\nversion 300\r\n";

/// One version-300 bone: `name`, its parent (`NULL` for none), a step of 0.001 along y.
fn bone_text(out: &mut String, name: &str, parent: &str) {
    out.push_str(name);
    out.push_str("\r\n");
    out.push_str(parent);
    out.push_str("\r\n0\r\n| 0 0.001 0 |\r\n| 0 0 0 1 |\r\n1\r\n1\r\n1\r\n0\r\n0\r\n");
}

/// Bone `i`'s name in the generated skeleton.
fn bone_name(i: usize) -> String {
    format!("B{i}")
}

/// A CMX text skeleton of `n` bones in a chain: bone `i`'s parent is bone `i - 1`, named in
/// lower case for odd `i` (found ignoring case, as the game finds it).
fn chain_cmx(n: usize) -> Vec<u8> {
    let mut out = String::with_capacity(n * 64);
    out.push_str(HEADER);
    out.push_str(&format!("1\r\nchain\r\n{n}\r\n"));
    for i in 0..n {
        let parent = match i {
            0 => "NULL".to_owned(),
            i if i % 2 == 1 => bone_name(i - 1).to_ascii_lowercase(),
            i => bone_name(i - 1),
        };
        bone_text(&mut out, &bone_name(i), &parent);
    }
    out.push_str("0\r\n0\r\n");
    out.into_bytes()
}

/// A CMX text skeleton of `bones` (name, parent) pairs.
fn skeleton_cmx(bones: &[(&str, &str)]) -> Vec<u8> {
    let mut out = String::new();
    out.push_str(HEADER);
    out.push_str(&format!("1\r\nsmall\r\n{}\r\n", bones.len()));
    for (name, parent) in bones {
        bone_text(&mut out, name, parent);
    }
    out.push_str("0\r\n0\r\n");
    out.into_bytes()
}

fn cmx_options() -> LoadOptions<'static> {
    LoadOptions {
        format: Format::SimsCmx,
        ..LoadOptions::default()
    }
}

fn chain() -> Model {
    Model::load(&chain_cmx(BONES), &cmx_options()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Sims skeletons: duplicate names and parents
// ---------------------------------------------------------------------------------------------

fn check_chain(model: &Model, what: &str) {
    let bones = model.bones();
    assert_eq!(bones.len(), BONES, "{what}");
    assert_eq!(bones[0].parent, -1, "{what}");
    assert_eq!(bones[1].parent, 0, "{what}");
    assert_eq!(bones[40_000].parent, 39_999, "{what}");
    assert_eq!(bones[40_001].parent, 40_000, "{what}");
    assert_eq!(bones[BONES - 1].parent, BONES as i32 - 2, "{what}");
    assert_eq!(bones[BONES - 1].name.to_string(), "B65534", "{what}");
    assert_eq!(model.find_bone("B12345"), Some(12_345), "{what}");
}

#[test]
fn a_cmx_of_65535_bones_loads_in_linear_time() {
    let text = chain_cmx(BONES);
    assert!(text.len() > 3_000_000, "{}", text.len());
    // Wall-clock cap: 1.8 s in a debug build here (3.5 s beside the other tests, on a loaded
    // machine); the quadratic lookups took 28 s in release, over 45 s in debug.
    let model = capped("loading 65,535 CMX bones", Duration::from_secs(20), || {
        Model::load(&text, &cmx_options()).unwrap()
    });
    check_chain(&model, "cmx");
    assert!(model.warnings().is_empty(), "{:?}", model.warnings());

    // The same skeleton written (the writer checks the links as the reader does) as BCF and
    // read back: the same walk over the binary records. Wall-clock cap as above.
    let file = cmx::parse_text(&text).unwrap();
    let bcf = capped("writing 65,535 BCF bones", Duration::from_secs(20), || {
        cmx::write_character(&file, true).unwrap()
    });
    let model = capped("loading 65,535 BCF bones", Duration::from_secs(20), || {
        Model::load(
            &bcf,
            &LoadOptions {
                format: Format::SimsBcf,
                ..LoadOptions::default()
            },
        )
        .unwrap()
    });
    check_chain(&model, "bcf");
    // Found by its content, with no name to go by: the detection reads it whole, strictly.
    let model = capped(
        "detecting a BCF of 65,535 bones",
        Duration::from_secs(20),
        || Model::load(&bcf, &LoadOptions::default()).unwrap(),
    );
    assert_eq!(model.format(), Format::SimsBcf);
}

#[test]
fn a_cmx_of_65535_bones_with_every_name_twice_fails_in_linear_time() {
    // Every bone named `SAME` bar the root, each the child of the one before: every bone's
    // name repeats an earlier one's. Validation collects the problems (the first 100 or so
    // kept), each lookup hashed. Wall-clock cap as above.
    let mut bones: Vec<(&str, &str)> = vec![("ROOT", "NULL")];
    bones.extend(std::iter::repeat_n(("SAME", "ROOT"), BONES - 1));
    let text = skeleton_cmx(&bones);
    let report = capped(
        "validating 65,535 equal names",
        Duration::from_secs(20),
        || validate(&text, &cmx_options()),
    );
    assert!(report.model.is_none());
    assert_eq!(
        report.problems.len() + report.more_problems,
        BONES - 2,
        "{:?}",
        report.problems.first()
    );
    let first = report.problems[0].to_string();
    assert!(
        first.ends_with("skeleton 0 (small) bone 2: name `SAME` is bone 1's too"),
        "{first}"
    );
    let e = Model::load(&text, &cmx_options()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert_eq!(e.line(), Some(1 + 2 + 3 + 2 * 10));
}

#[test]
fn parents_are_found_as_before() {
    let parents = |bones: &[(&str, &str)]| -> Vec<i32> {
        let model = Model::load(&skeleton_cmx(bones), &cmx_options()).unwrap();
        model.bones().iter().map(|b| b.parent).collect()
    };
    // An exact name wins over an earlier one equal but for case; else the first ignoring case.
    let bones = [
        ("ROOT", "NULL"),
        ("spine", "ROOT"),
        ("SPINE", "root"),
        ("HEAD", "SPINE"),
        ("NECK", "Spine"),
        ("TAIL", "spine"),
    ];
    assert_eq!(parents(&bones), [-1, 0, 0, 2, 1, 1]);

    let problems = |bones: &[(&str, &str)]| -> Vec<String> {
        let report = validate(&skeleton_cmx(bones), &cmx_options());
        report.problems.iter().map(|e| e.to_string()).collect()
    };
    // A parent after the bone, by its exact name only.
    let p = problems(&[("ROOT", "NULL"), ("ARM", "HAND"), ("HAND", "ROOT")]);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].ends_with(
            "skeleton 0 (small) bone 1 (ARM): parent `HAND` comes after the bone (a parent must \
             come first)"
        ),
        "{p:?}"
    );
    let p = problems(&[("ROOT", "NULL"), ("ARM", "hand"), ("HAND", "ROOT")]);
    assert!(
        p[0].ends_with("bone 1 (ARM): parent `hand` is not a bone of the skeleton"),
        "{p:?}"
    );
    // A bone its own parent: after it only when a later bone repeats the name.
    let p = problems(&[("ROOT", "NULL"), ("LOOP", "LOOP")]);
    assert!(
        p[0].ends_with("bone 1 (LOOP): parent `LOOP` is not a bone of the skeleton"),
        "{p:?}"
    );
    let p = problems(&[("ROOT", "NULL"), ("LOOP", "LOOP"), ("LOOP", "ROOT")]);
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p[0].ends_with(
            "bone 1 (LOOP): parent `LOOP` comes after the bone (a parent must come first)"
        ),
        "{p:?}"
    );
    assert!(
        p[1].ends_with("bone 2: name `LOOP` is bone 1's too"),
        "{p:?}"
    );
    // A duplicate names the first bone of the name.
    let p = problems(&[
        ("ROOT", "NULL"),
        ("A", "ROOT"),
        ("A", "ROOT"),
        ("A", "ROOT"),
    ]);
    assert!(p[0].ends_with("bone 2: name `A` is bone 1's too"), "{p:?}");
    assert!(p[1].ends_with("bone 3: name `A` is bone 1's too"), "{p:?}");
}

#[test]
fn the_writer_checks_links_as_the_reader_finds_them() {
    let mut file = cmx::parse_text(&skeleton_cmx(&[
        ("ROOT", "NULL"),
        ("spine", "root"),
        ("HEAD", "SPINE"),
    ]))
    .unwrap();
    assert!(cmx::write_character(&file, false).is_ok());
    let bones = &mut file.skeletons[0].bones;
    bones[2].parent = Some("NECK".into());
    let e = cmx::write_character(&file, false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        e.to_string(),
        "skeleton 0 (small) bone 2 (HEAD): parent `NECK` is not an earlier bone (a parent must \
         come first)"
    );
    let bones = &mut file.skeletons[0].bones;
    bones[2].parent = Some("ROOT".into());
    bones[2].name = "spine".into();
    let e = cmx::write_character(&file, false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported);
    assert_eq!(
        e.to_string(),
        "skeleton 0 (small) bone 2 (spine): the name is bone 1's too, and a character file finds \
         bones by name"
    );
    // A later bone is no parent, whatever its case.
    let bones = &mut file.skeletons[0].bones;
    bones[2].name = "HEAD".into();
    bones[1].parent = Some("head".into());
    let e = cmx::write_character(&file, false).unwrap_err();
    assert!(
        e.to_string()
            .contains("bone 1 (spine): parent `head` is not an earlier bone")
    );
}

// ---------------------------------------------------------------------------------------------
// Binding by name
// ---------------------------------------------------------------------------------------------

/// Mesh bone `i`'s name: a skeleton bone's, in lower case past the skeleton's count.
fn mesh_bone_name(i: usize) -> String {
    let name = bone_name(i % BONES);
    if i >= BONES {
        name.to_ascii_lowercase()
    } else {
        name
    }
}

/// An SKN text mesh that names `names` bones (`mesh_bone_name`): one triangle whose vertices
/// are bound, one each, to bones `bound`.
fn skn(names: usize, bound: [usize; 3]) -> Vec<u8> {
    let mut out = String::with_capacity(names * 10 + 256);
    out.push_str(&format!("many\r\nx\r\n{names}\r\n"));
    for i in 0..names {
        out.push_str(&mesh_bone_name(i));
        out.push_str("\r\n");
    }
    out.push_str("1\r\n0 1 2\r\n3\r\n");
    for (v, b) in bound.iter().enumerate() {
        out.push_str(&format!("{b} {v} 1 0 0\r\n"));
    }
    out.push_str("3\r\n0 0\r\n1 0\r\n0 1\r\n0\r\n3\r\n");
    for v in 0..3 {
        out.push_str(&format!("{v} 0 0 0 1 0\r\n"));
    }
    out.into_bytes()
}

#[test]
fn a_mesh_naming_100000_bones_binds_in_linear_time() {
    let skeleton = chain();
    let names = 100_000;
    let bound = [0, 50_000, names - 1];
    let mesh = Model::load(
        &skn(names, bound),
        &LoadOptions {
            format: Format::SimsSkn,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    match mesh.unbound() {
        Some(ossa::BoneSlots::ByName(n)) => assert_eq!(n.len(), names),
        other => panic!("{other:?}"),
    }
    // Wall-clock cap: 0.7 s in a debug build here; the scan per name took 56 s in release.
    let model = capped("binding 100,000 names", Duration::from_secs(10), || {
        Model::bind(&mesh, &skeleton).unwrap()
    });
    assert!(model.shares_skeleton(&skeleton));
    let m = &model.meshes()[0];
    let bones: Vec<u32> = (0..3).map(|v| m.influences(v)[0].bone).collect();
    // Name 99,999 is `b34464`: bone 34,464, found ignoring case.
    assert_eq!(bones, [0, 50_000, 34_464]);
    assert_eq!(model.bones()[34_464].name.to_string(), "B34464");

    // A name the skeleton lacks: NotFound, naming it.
    let small = Model::load(&chain_cmx(3), &cmx_options()).unwrap();
    let e = Model::bind(&mesh, &small).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert_eq!(e.to_string(), "the skeleton has no bone named \"B3\"");
}

#[test]
fn binding_by_name_takes_the_first_bone_equal_but_for_case() {
    let skeleton = Model::load(
        &skeleton_cmx(&[("ROOT", "NULL"), ("arm", "ROOT"), ("ARM", "ROOT")]),
        &cmx_options(),
    )
    .unwrap();
    let mut text = String::from("m\r\nx\r\n3\r\nARM\r\nroot\r\nArm\r\n1\r\n0 1 2\r\n3\r\n");
    text.push_str("0 0 1 0 0\r\n1 1 1 0 0\r\n2 2 1 0 0\r\n3\r\n0 0\r\n1 0\r\n0 1\r\n0\r\n3\r\n");
    text.push_str("0 0 0 0 1 0\r\n1 0 0 0 1 0\r\n2 0 0 0 1 0\r\n");
    let mesh = Model::load(
        text.as_bytes(),
        &LoadOptions {
            format: Format::SimsSkn,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    let model = Model::bind(&mesh, &skeleton).unwrap();
    let m = &model.meshes()[0];
    let bones: Vec<u32> = (0..3).map(|v| m.influences(v)[0].bone).collect();
    // As the game binds: ignoring case, the first of the names (`arm`, not the exact `ARM`).
    assert_eq!(bones, [1, 0, 1]);
}

// ---------------------------------------------------------------------------------------------
// Skills naming bones the skeleton lacks
// ---------------------------------------------------------------------------------------------

/// A skill file: one skill `walk` whose motions name `bones` in order, each with two frames of
/// translations (values 0 and 1 of its CFP `xskill-walk`).
fn skill_cmx(bones: &[String]) -> Vec<u8> {
    let mut out = String::with_capacity(bones.len() * 40 + 256);
    out.push_str(HEADER);
    out.push_str("0\r\n0\r\n1\r\nwalk\r\nxskill-walk\r\n66\r\n0\r\n0\r\n2\r\n0\r\n");
    out.push_str(&format!("{}\r\n", bones.len()));
    for b in bones {
        out.push_str(b);
        out.push_str("\r\n2\r\n66\r\n1\r\n0\r\n0\r\n-1\r\n0\r\n0\r\n");
    }
    out.into_bytes()
}

fn skill_fs(bones: &[String]) -> MemoryFs {
    let mut fs = MemoryFs::default();
    fs.files.insert("walk.cmx".into(), skill_cmx(bones));
    let cfp = cfp::encode_skill(&[[0.0, 0.0, 0.5], [0.0, 0.0, 1.5]], &[], None);
    fs.files.insert("xskill-walk.cfp".into(), cfp);
    fs
}

fn ghosts(n: usize) -> impl Iterator<Item = String> {
    (0..n).map(|i| format!("GHOST{i}"))
}

#[test]
fn a_skill_of_20000_motions_for_a_missing_bone_is_added_in_linear_time() {
    let skeleton = chain();
    // One motion names a bone of the skeleton (in lower case); 20,000 name bones it lacks.
    let motions: Vec<String> = std::iter::once("b40000".to_owned())
        .chain(ghosts(20_000))
        .collect();
    let fs = skill_fs(&motions);
    let options = LoadOptions {
        io: Some(&fs),
        ..LoadOptions::default()
    };
    // Wall-clock cap: 0.4 s in a debug build here; the scan per motion took 12 s in release.
    let model = capped("adding 20,000 motions", Duration::from_secs(10), || {
        skeleton.with_skills_file("walk.cmx", &options).unwrap()
    });
    assert_eq!(model.animations().len(), 1);
    assert_eq!(model.frames().len(), 3);
    let pose = model.skeleton().frame_poses(2).unwrap();
    assert_eq!(pose[40_000].translation(), [0.0, 0.0, 1.5]);
    assert_eq!(pose[39_999].translation(), [0.0, 0.001, 0.0]);
    let warning = model.warnings().last().unwrap().to_string();
    let prefix = "walk.cmx: skill walk: motions for bones the skeleton lacks were skipped: ";
    let list = warning.strip_prefix(prefix).expect(&warning);
    let skipped: Vec<&str> = list.split(", ").collect();
    assert_eq!(skipped.len(), 20_000);
    assert_eq!((skipped[0], skipped[19_999]), ("GHOST0", "GHOST19999"));

    // None of the motions names a bone: Mismatch, at the skill. Wall-clock cap as above.
    let fs = skill_fs(&ghosts(20_000).collect::<Vec<_>>());
    let options = LoadOptions {
        io: Some(&fs),
        ..LoadOptions::default()
    };
    let e = capped("refusing 20,000 motions", Duration::from_secs(10), || {
        skeleton.with_skills_file("walk.cmx", &options).unwrap_err()
    });
    assert_eq!(e.code(), ErrorCode::Mismatch);
    assert_eq!(
        e.to_string(),
        "walk.cmx: no motion of skill walk names a bone of the skeleton"
    );
}

#[test]
fn motions_find_bones_exactly_else_ignoring_case() {
    let skeleton = Model::load(
        &skeleton_cmx(&[("ROOT", "NULL"), ("arm", "ROOT"), ("ARM", "ROOT")]),
        &cmx_options(),
    )
    .unwrap();
    let at = |motion: &str| -> Vec<[f32; 3]> {
        let fs = skill_fs(&[motion.to_owned()]);
        let options = LoadOptions {
            io: Some(&fs),
            ..LoadOptions::default()
        };
        let model = skeleton.with_skills_file("walk.cmx", &options).unwrap();
        let pose = model.skeleton().frame_poses(2).unwrap();
        pose.iter().map(|p| p.translation()).collect()
    };
    let moved = [0.0, 0.0, 1.5];
    let rest = [0.0, 0.001, 0.0];
    assert_eq!(at("ARM"), [rest, rest, moved]);
    assert_eq!(at("arm"), [rest, moved, rest]);
    assert_eq!(at("Arm"), [rest, moved, rest]);
}

// ---------------------------------------------------------------------------------------------
// Skills sharing one CFP
// ---------------------------------------------------------------------------------------------

/// Counts of a CFP of about 1 MB: 100,000 translations and 175,000 rotations, 1,000,000 values.
const SHARED_T: u32 = 100_000;
const SHARED_R: u32 = 175_000;
const SHARED_PATH: &str = "xskill-shared.cfp";

/// One skill of a generated file: its counts, and the offsets its one motion (on bone `arm`,
/// two frames of translations and rotations) reads.
struct SharedSkill {
    translations: u32,
    rotations: u32,
    translation_offset: u32,
    rotation_offset: u32,
}

/// A CMX text of skills `s0`, `s1`, ... all naming the animation `xskill-shared`.
fn shared_skills_cmx(skills: &[SharedSkill]) -> Vec<u8> {
    let mut out = String::with_capacity(skills.len() * 96 + 64);
    out.push_str(HEADER);
    out.push_str(&format!("0\r\n0\r\n{}\r\n", skills.len()));
    for (j, s) in skills.iter().enumerate() {
        out.push_str(&format!(
            "s{j}\r\nxskill-shared\r\n66\r\n0\r\n0\r\n{}\r\n{}\r\n1\r\narm\r\n2\r\n66\r\n1\r\n1\r\n{}\r\n{}\r\n0\r\n0\r\n",
            s.translations, s.rotations, s.translation_offset, s.rotation_offset
        ));
    }
    out.into_bytes()
}

/// The shared CFP: smooth translations and rotations (of length, not unit), written with the
/// tools' tolerance of 0.001, so nearly every value is a one-byte delta.
fn shared_cfp() -> &'static [u8] {
    static CFP: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    CFP.get_or_init(|| {
        let translations: Vec<[f32; 3]> = (0..SHARED_T)
            .map(|i| {
                let a = i as f32 * 0.001;
                [a.sin(), (a * 0.7).cos(), 0.5 + a * 0.001]
            })
            .collect();
        let rotations: Vec<[f32; 4]> = (0..SHARED_R)
            .map(|i| {
                let a = i as f32 * 0.0005;
                [
                    0.3 * a.sin(),
                    0.2 + 0.1 * (a * 0.8).cos(),
                    0.1 * (a * 0.6).cos(),
                    0.9 + 0.05 * (a * 0.4).sin(),
                ]
            })
            .collect();
        cfp::encode_skill(&translations, &rotations, Some(0.001))
    })
}

/// The skeleton the shared skills play on: a root and its child `arm`.
fn arm() -> Model {
    Model::load(
        &skeleton_cmx(&[("root", "NULL"), ("arm", "root")]),
        &cmx_options(),
    )
    .unwrap()
}

fn shared_fs(skill_file: Vec<u8>) -> MemoryFs {
    let mut fs = MemoryFs::default();
    fs.files.insert("skills.cmx".into(), skill_file);
    fs.files.insert(SHARED_PATH.into(), shared_cfp().to_vec());
    fs
}

fn cfp_reads(fs: &MemoryFs) -> usize {
    fs.asked
        .borrow()
        .iter()
        .filter(|p| *p == SHARED_PATH)
        .count()
}

/// `n` skills that all ask the shared CFP for its own counts, skill `j` reading from
/// translation `7j mod 99,999` and rotation `11j mod 174,999`.
fn fitting_skills(n: usize) -> Vec<SharedSkill> {
    (0..n as u32)
        .map(|j| SharedSkill {
            translations: SHARED_T,
            rotations: SHARED_R,
            translation_offset: (7 * j) % (SHARED_T - 1),
            rotation_offset: (11 * j) % (SHARED_R - 1),
        })
        .collect()
}

#[test]
fn skills_naming_one_cfp_read_and_decode_it_once() {
    const SKILLS: usize = 20_000;
    let cfp_bytes = shared_cfp();
    assert!(
        (900_000..1_100_000).contains(&cfp_bytes.len()),
        "{}",
        cfp_bytes.len()
    );
    assert_eq!(
        cfp::count_values(cfp_bytes).unwrap(),
        (3 * SHARED_T + 4 * SHARED_R) as usize
    );
    let skeleton = arm();
    let skill_file = shared_skills_cmx(&fitting_skills(SKILLS));
    let fs = shared_fs(skill_file.clone());
    let options = LoadOptions {
        io: Some(&fs),
        ..LoadOptions::default()
    };
    // Wall-clock cap: 0.7 s in a debug build here; reading and decoding the CFP per skill took
    // 14 s in a release build for 1,000 of these skills, so about 5 minutes for 20,000.
    let model = capped(
        "adding 20,000 skills of one CFP",
        Duration::from_secs(20),
        || skeleton.with_skills_file("skills.cmx", &options).unwrap(),
    );
    assert_eq!(cfp_reads(&fs), 1);
    assert_eq!(model.animations().len(), SKILLS);
    assert_eq!(model.frames().len(), 1 + 2 * SKILLS);
    let last = &model.animations()[SKILLS - 1];
    assert_eq!(last.name.to_string(), "s19999");
    assert_eq!((last.first_frame, last.frame_count), (1 + 2 * 19_999, 2));
    assert_eq!(
        model.frames()[1 + 2 * 12_345 + 1].name.to_string(),
        "s12345 1"
    );
    // Each skill's frames are the ones it gives alone, played from the CFP decoded for it.
    let character = cmx::parse_text(&skill_file).unwrap();
    for j in [0, 1, 12_345, SKILLS - 1] {
        let (_, poses, _) = cmx::skill_frames(&skeleton, &character, j, cfp_bytes).unwrap();
        let first = 1 + 2 * j;
        let added = [
            model.skeleton().frame_poses(first).unwrap(),
            model.skeleton().frame_poses(first + 1).unwrap(),
        ]
        .concat();
        assert_eq!(added, poses, "skill {j}");
    }
    // Skill 12,345 reads translation 86,415 (and 86,416) of the CFP: x, y and z of the arm.
    let (translations, _) =
        cfp::decode_skill(cfp_bytes, SHARED_T as usize, SHARED_R as usize).unwrap();
    let moved = model.skeleton().frame_poses(1 + 2 * 12_345).unwrap()[1].translation();
    assert_eq!(moved, translations[86_415]);
    assert!((moved[0] - 86.415f32.sin()).abs() < 0.002, "{moved:?}");
    assert_eq!(
        model.skeleton().frame_poses(1 + 2 * 12_345).unwrap()[0].translation(),
        [0.0, 0.001, 0.0]
    );
}

#[test]
fn a_skill_whose_counts_the_shared_cfp_does_not_give_fails_at_that_skill() {
    const SKILLS: usize = 20_000;
    let skeleton = arm();
    // The last skill declares one translation more than the CFP gives.
    let mut skills = fitting_skills(SKILLS);
    skills[SKILLS - 1].translations += 1;
    let fs = shared_fs(shared_skills_cmx(&skills));
    let options = LoadOptions {
        io: Some(&fs),
        ..LoadOptions::default()
    };
    // Wall-clock cap as above: the skills before it are added as in the test above.
    let e = capped(
        "refusing the last of 20,000 skills",
        Duration::from_secs(20),
        || {
            skeleton
                .with_skills_file("skills.cmx", &options)
                .unwrap_err()
        },
    );
    assert_eq!(cfp_reads(&fs), 1);
    assert_eq!(e.code(), ErrorCode::Truncated);
    assert_eq!(e.offset(), Some(shared_cfp().len() as u64));
    assert_eq!(
        e.to_string(),
        format!(
            "{SHARED_PATH}: skill s19999: the stream ends after 1000000 of 1000003 values at byte {:#x}",
            shared_cfp().len()
        )
    );

    // The first skill's counts do not fit: it fails there, with the CFP read once.
    let mut skills = fitting_skills(3);
    skills[0].rotations -= 1;
    let fs = shared_fs(shared_skills_cmx(&skills));
    let options = LoadOptions {
        io: Some(&fs),
        ..LoadOptions::default()
    };
    let e = skeleton
        .with_skills_file("skills.cmx", &options)
        .unwrap_err();
    assert_eq!(cfp_reads(&fs), 1);
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("{SHARED_PATH}: skill s0: ")),
        "{e}"
    );
}

#[test]
fn one_cfp_decoded_for_many_counts_takes_its_room_from_the_limit() {
    const SKILLS: usize = 20_000;
    const LIMIT: u64 = 32 << 20;
    let skeleton = arm();
    // Every skill asks the CFP for other counts that it gives too (3t + 4r is the same): each
    // is decoded once more, and its 4 MB of values are held while the skills are added.
    let skills: Vec<SharedSkill> = (0..SKILLS as u32)
        .map(|j| SharedSkill {
            translations: SHARED_T - 4 * j,
            rotations: SHARED_R + 3 * j,
            translation_offset: 0,
            rotation_offset: 0,
        })
        .collect();
    let fs = shared_fs(shared_skills_cmx(&skills));
    let options = LoadOptions {
        io: Some(&fs),
        max_bytes: LIMIT,
        ..LoadOptions::default()
    };
    // Wall-clock cap: 2 s in a debug build here; decoding the CFP afresh for each skill took
    // 14 s in a release build for 1,000 skills, so about 5 minutes for 20,000.
    let e = capped(
        "decoding one CFP for 20,000 counts",
        Duration::from_secs(20),
        || {
            skeleton
                .with_skills_file("skills.cmx", &options)
                .unwrap_err()
        },
    );
    assert_eq!(cfp_reads(&fs), 1);
    // Skill m fits while the CFP, the values of the m skills before it and its own 8 bytes a
    // value while decoding (with its frames, and the skeleton) fit the limit.
    let values = 3 * SHARED_T as u64 + 4 * SHARED_R as u64;
    let m = (LIMIT - shared_cfp().len() as u64 - 8 * values) / (4 * values) + 1;
    assert!((4..10).contains(&m), "{m}");
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    // Each skill takes 17 lines, after 5 of header and counts.
    assert_eq!(e.line(), Some(6 + 17 * m as u32), "{e}");
    let head = format!(
        "skills.cmx line {}: skill s{m}: 2 frames of 2 bones and {values} values need {} bytes, more than ",
        6 + 17 * m,
        8 * values + 2 * 2 * 48
    );
    assert!(e.to_string().starts_with(&head), "{e}");
}

// ---------------------------------------------------------------------------------------------
// DMF: scenes and their key sets
// ---------------------------------------------------------------------------------------------

/// A model of one bone and `n` one-frame scenes, each with a set of one key (as a DMF loads):
/// scene `i` moves the bone to y = `i`.
fn keyed_scenes(n: usize) -> Model {
    let mut parts = ModelParts::new(Format::Dmf);
    parts.bones.push(Bone {
        name: "root".into(),
        parent: -1,
        flags: 0,
    });
    let mut poses = Vec::with_capacity(n);
    for i in 0..n {
        let y = i as f32;
        parts.frames.push(Frame::named(&format!("a{i} 0")));
        poses.push(Mat3x4 {
            m: [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, y, 0.0, 0.0, 1.0, 0.0],
        });
        parts.animations.push(Animation {
            name: format!("a{i}").as_str().into(),
            first_frame: i as u32,
            frame_count: 1,
            fps: 10.0,
            ..Animation::default()
        });
        parts.keyframes.push(KeyedAnimation {
            animation: i as u32,
            id: (i % 32_768) as i16,
            duration: 0.0,
            keys: vec![Keyframe {
                bone: 0,
                flags: KEY_POSITION,
                time: 0.0,
                position: [0.0, y, 0.0],
                rotation: [0.0, 0.0, 0.0, 1.0],
                scale: [1.0; 3],
            }],
        });
    }
    parts.poses = poses.into();
    Model::from_parts(parts).unwrap()
}

#[test]
fn a_model_of_65000_keyed_scenes_saves_as_dmf_in_linear_time() {
    // About the most a DMF loads: its scenes sample into at most 65,536 frames.
    let n = 65_000;
    let model = keyed_scenes(n);
    // Wall-clock cap: 0.2 s in a debug build here; a scan of the key sets per scene took 12.6 s.
    let bytes = capped("saving 65,000 keyed scenes", Duration::from_secs(5), || {
        ossa::format::dmf::write_binary(&model).unwrap()
    });
    let back = Model::load(
        &bytes,
        &LoadOptions {
            format: Format::Dmf,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert_eq!(back.animations().len(), n);
    assert_eq!(back.keyframes().len(), n);
    let set = &back.keyframes()[56_789];
    assert_eq!((set.animation, set.id), (56_789, (56_789 % 32_768) as i16));
    assert_eq!(set.keys[0].position, [0.0, 56_789.0, 0.0]);
}

// ---------------------------------------------------------------------------------------------
// Skinning layouts: many meshes on many bones
// ---------------------------------------------------------------------------------------------

/// `meshes` one-triangle meshes, mesh `m`'s vertices on bone `m % bones` (weight 1) and, for
/// odd `m`, its last vertex blended half and half with bone `(m + 1) % bones`. An influence's
/// origin is scaled by its weight, as the model keeps it.
fn small_meshes(meshes: usize, bones: usize) -> Vec<MeshParts> {
    (0..meshes)
        .map(|m| {
            let on = |bone: usize, x: f32, weight: f32| Influence {
                origin: [x * weight, 0.0, 0.0],
                weight,
                normal: [0.0, 0.0, 1.0],
                bone: (bone % bones) as u32,
            };
            let mut influences = vec![on(m, 0.0, 1.0), on(m, 1.0, 1.0)];
            let mut influence_start = vec![0, 1, 2];
            if m % 2 == 1 {
                influences.extend([on(m, 2.0, 0.5), on(m + 1, 2.0, 0.5)]);
            } else {
                influences.push(on(m, 2.0, 1.0));
            }
            influence_start.push(influences.len() as u32);
            MeshParts {
                name: format!("m{m}").as_str().into(),
                influence_start,
                influences,
                indices: vec![0, 1, 2],
                ..MeshParts::default()
            }
        })
        .collect()
}

#[test]
fn many_small_meshes_on_65535_bones_load_and_bind_in_linear_time() {
    let meshes = 3_000;
    let mut parts = ModelParts::new(Format::Dpm);
    parts.bones = (0..BONES)
        .map(|i| Bone {
            name: bone_name(i).as_str().into(),
            parent: i as i32 - 1,
            flags: 0,
        })
        .collect();
    parts.frames.push(Frame::named("rest"));
    let step = Mat3x4 {
        m: [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.001, 0.0, 0.0, 1.0, 0.0],
    };
    parts.poses = vec![step; BONES].into();
    parts.meshes = small_meshes(meshes, BONES);
    // Wall-clock cap: 0.2 s in a debug build here; each mesh's layout over every bone took
    // 63 s in release.
    let model = capped("laying out 3,000 meshes", Duration::from_secs(5), || {
        Model::from_parts(parts).unwrap()
    });
    assert_eq!(model.meshes().len(), meshes);
    // Mesh 2,001 sits on bones 2,001 and 2,002 (bone i at y = 0.001 (i + 1) in the bind
    // pose): its blended vertex halfway between them.
    let m = &model.meshes()[2_001];
    assert_eq!(m.influences(2)[1].bone, 2_002);
    let mut poses = vec![Mat3x4::IDENTITY; BONES];
    let rest = [FrameBlend {
        frame: 0,
        weight: 1.0,
    }];
    model.pose_frames(&rest, None, &mut poses).unwrap();
    let mut positions = vec![0.0f32; 9];
    let mut target = Strided::new(&mut positions, 3).unwrap();
    model
        .skin_mesh(2_001, &poses, 0, 3, 0, &mut target)
        .unwrap();
    let expected = [
        [0.0, 0.001 * 2_002.0, 0.0],
        [1.0, 0.001 * 2_002.0, 0.0],
        [2.0, 0.001 * 2_002.5, 0.0],
    ];
    for (got, want) in positions.chunks(3).zip(expected) {
        assert!(
            got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-3),
            "{positions:?}"
        );
    }

    // The same meshes waiting for a skeleton by bone number, bound to one (as an SKM to its
    // SKP). Wall-clock cap as above.
    let mut waiting = ModelParts::new(Format::Skm);
    waiting.meshes = small_meshes(meshes, BONES);
    waiting.unbound = Some(ossa::BoneSlots::ByIndex(BONES as u32));
    let waiting = Model::from_parts(waiting).unwrap();
    let bound = capped("binding 3,000 meshes", Duration::from_secs(5), || {
        Model::bind(&waiting, &model).unwrap()
    });
    assert_eq!(bound.meshes().len(), meshes);
    assert_eq!(bound.meshes()[2_001].influences(2)[1].bone, 2_002);
}
