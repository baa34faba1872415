//! A Sims character checked across its files (`ossa::character::check_character`): the corpus's
//! characters come out clean, and each kind of problem is found in a copy of them with one
//! thing broken, with its exact message, in the file it belongs to.

mod cli_support;
mod corpus;

use std::path::Path;

use cli_support::{TempDir, corpus};
use ossa::character::{CharacterCheck, CharacterReport, check_character};
use ossa::{ErrorCode, LoadOptions};

/// Copies corpus files from `from` into `dir` under the game's own names (the corpus's `so_` and
/// `olt_` prefixes off), as a skill names its CFP and a suit its meshes.
pub fn copy_game_files(from: &Path, dir: &TempDir, files: &[&str]) {
    for file in files {
        let game = file
            .strip_prefix("so_")
            .or_else(|| file.strip_prefix("olt_"))
            .unwrap_or(file);
        dir.write(game, std::fs::read(from.join(file)).unwrap());
    }
}

/// An uncompressed BMP of `width` x `height` pixels at `bits` a pixel (8: a grey palette).
pub fn bmp(width: u32, height: u32, bits: u16) -> Vec<u8> {
    let palette = if bits == 8 { 256 * 4 } else { 0 };
    let row = (width * u32::from(bits) / 8).div_ceil(4) * 4;
    let offset = 14 + 40 + palette;
    let size = offset + row * height;
    let mut out = Vec::new();
    out.extend_from_slice(b"BM");
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(&40u32.to_le_bytes());
    out.extend_from_slice(&(width as i32).to_le_bytes());
    out.extend_from_slice(&(height as i32).to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&bits.to_le_bytes());
    out.extend_from_slice(&[0; 24]);
    if bits == 8 {
        for i in 0..=255u8 {
            out.extend_from_slice(&[i, i, i, 0]);
        }
    }
    out.resize(size as usize, 0x80);
    out
}

fn check(dir: &TempDir, input: &str, check: CharacterCheck) -> CharacterReport {
    check_character(&dir.path(input), &check, &LoadOptions::default()).unwrap()
}

fn suit(name: &str) -> CharacterCheck {
    CharacterCheck {
        suit: Some(name.to_owned()),
        ..CharacterCheck::default()
    }
}

/// Every problem as `FILE: CODE: message`, the file by its name.
fn problems(report: &CharacterReport) -> Vec<String> {
    let mut out = Vec::new();
    for f in &report.files {
        let name = f.file.file_name().unwrap().to_string_lossy().into_owned();
        for p in &f.problems {
            out.push(format!("{name}: {}: {p}", p.code().name()));
        }
    }
    out
}

fn files(report: &CharacterReport) -> Vec<String> {
    (report.files.iter())
        .map(|f| f.file.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

const ADULT_BODY: [&str; 3] = [
    "so_adult-skeleton.cmx",
    "so_B001MAFit_01.cmx",
    "so_xskin-b001mafit_01-PELVIS-BODY.skn",
];
const BODY_MESH: &str = "xskin-b001mafit_01-PELVIS-BODY.skn";

fn adult_body(test: &str) -> Option<TempDir> {
    let sims = corpus("sims")?;
    let dir = TempDir::new("sims-character", test);
    copy_game_files(&sims, &dir, &ADULT_BODY);
    copy_game_files(
        &sims,
        &dir,
        &["so_adult-idle1.cmx", "so_xskill-A2O-idle1.cfp"],
    );
    Some(dir)
}

/// `file` in `dir` with `from` replaced by `to` (once; it must be there).
fn edit(dir: &TempDir, file: &str, from: &str, to: &str) {
    let text = String::from_utf8(std::fs::read(dir.path(file)).unwrap()).unwrap();
    assert!(text.contains(from), "{file} holds no {from:?}");
    dir.write(file, text.replacen(from, to, 1));
}

#[test]
fn retail_characters_of_the_corpus_are_clean() {
    let Some(sims) = corpus("sims") else {
        return;
    };
    let dir = adult_body("retail-clean");
    let dir = dir.unwrap();
    copy_game_files(
        &sims,
        &dir,
        &[
            "so_C005MA_Hipster.cmx",
            "so_xskin-c005ma_hipster-HEAD-HEAD.skn",
            "so_xskin-c005ma_hipster-HEAD-SPECS.skn",
            "so_HULC.cmx",
            "so_xskin-hulc-L_HAND-FISTCL.skn",
            "so_child-skeleton.cmx",
            "so_ross-walking-loop.cmx",
            "olt_ross-walking-loop.cmx.bcf",
        ],
    );
    let with_skills = CharacterCheck {
        skills: vec![dir.path("adult-idle1.cmx")],
        ..suit("b001mafit_01")
    };
    let report = check(&dir, "adult-skeleton.cmx", with_skills);
    assert_eq!(problems(&report), Vec::<String>::new());
    assert_eq!(
        files(&report),
        [
            "adult-skeleton.cmx",
            "B001MAFit_01.cmx",
            BODY_MESH,
            "adult-idle1.cmx"
        ]
    );
    for name in ["c005ma_hipster", "hulc"] {
        let report = check(&dir, "adult-skeleton.cmx", suit(name));
        assert_eq!(problems(&report), Vec::<String>::new(), "{name}");
        assert_eq!(report.problem_count(), 0);
    }
    // The first skin's texture comes from the Sim's appearance; when the mesh's own is there it
    // is checked, and an 8-bit BMP of 256 x 256 pixels is what the game draws.
    dir.write("extrememlgt_01.bmp", bmp(256, 256, 8));
    let report = check(&dir, "adult-skeleton.cmx", suit("b001mafit_01"));
    assert_eq!(problems(&report), Vec::<String>::new());
    // A CMX and its BCF beside it that agree: the corpus's ross-walking-loop pair.
    let report = check_character(
        &dir.path("ross-walking-loop.cmx"),
        &CharacterCheck {
            skeleton: Some(dir.path("adult-skeleton.cmx")),
            ..CharacterCheck::default()
        },
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(
        !problems(&report).iter().any(|p| p.contains("other form")),
        "{:?}",
        problems(&report)
    );
}

/// The 1998 prototype's suits in their own files, the skeleton in each.
const PROTOTYPE_SUITS: [(&str, &str); 8] = [
    ("colonelsuit.CMX", "colonel"),
    ("bradsuit.cmx", "bradsuit"),
    ("biped-ed-suit.cmx", "biped-ed"),
    ("dunnesuit.cmx", "dunnesuit"),
    ("fritzsuit.cmx", "fritzsuit"),
    ("gailsuit.cmx", "gailsuit"),
    ("rossnud.cmx", "rossnud"),
    ("samnud.cmx", "samnud"),
];

/// The prototype's skills whose numbers (`.bin`) the archive has.
const PROTOTYPE_SKILLS: [&str; 4] = [
    "adult-door-knock.cmx",
    "adult-door-pull-open.cmx",
    "adult-door-push-close.cmx",
    "adult-greet01.cmx",
];

#[test]
fn prototype_characters_of_the_corpus_are_clean() {
    let Some(proto) = corpus("sims/proto1998") else {
        return;
    };
    for (file, name) in PROTOTYPE_SUITS {
        let report =
            check_character(&proto.join(file), &suit(name), &LoadOptions::default()).unwrap();
        assert_eq!(problems(&report), Vec::<String>::new(), "{file}");
        // The file, and each skin's mesh.
        assert!(report.files.len() > 20, "{file}: {:?}", files(&report));
    }
    // A suit file without a skeleton, on another file's.
    let report = check_character(
        &proto.join("sigmundsuit.cmx"),
        &CharacterCheck {
            skeleton: Some(proto.join("colonelsuit.CMX")),
            skills: PROTOTYPE_SKILLS.iter().map(|s| proto.join(s)).collect(),
            ..suit("sigmundsuit")
        },
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(problems(&report), Vec::<String>::new());
}

#[test]
fn a_suit_naming_a_mesh_that_is_not_there_says_where_it_looked() {
    let Some(dir) = adult_body("mesh-missing") else {
        return;
    };
    edit(
        &dir,
        "B001MAFit_01.cmx",
        "xskin-b001mafit_01-PELVIS-BODY",
        "xskin-b001mafit_01-PELVIS-GONE",
    );
    let search = TempDir::new("sims-character", "mesh-missing-search");
    let with_search = CharacterCheck {
        search: vec![search.0.clone()],
        ..suit("b001mafit_01")
    };
    let report = check(&dir, "adult-skeleton.cmx", with_search);
    let mesh = "xskin-b001mafit_01-PELVIS-GONE";
    assert_eq!(
        problems(&report),
        [format!(
            "B001MAFit_01.cmx: OSSA_ERR_NOT_FOUND: suit b001mafit_01 skin 0 (mesh {mesh} on bone \
             PELVIS): no {mesh}.skn, {mesh}.bmf or {mesh}.msh in {}, {}",
            dir.0.display(),
            search.0.display()
        )]
    );
    // A suit found nowhere names the names and the directories too.
    let report = check(&dir, "adult-skeleton.cmx", suit("b002"));
    assert_eq!(
        problems(&report),
        [format!(
            "adult-skeleton.cmx: OSSA_ERR_NOT_FOUND: no suit named b002: the file has no suits, \
             and none of b002.cmx, b002.cmx.bcf, b002.bcf is in {}",
            dir.0.display()
        )]
    );
}

#[test]
fn a_mesh_bound_or_blending_to_bones_the_skeleton_lacks_names_them() {
    let Some(dir) = adult_body("mesh-bones") else {
        return;
    };
    // L_TOE0's binding has real vertices and no blends.
    edit(&dir, BODY_MESH, "\nL_TOE0", "\nL_TOE9");
    let report = check(&dir, "adult-skeleton.cmx", suit("b001mafit_01"));
    let place = "suit b001mafit_01 skin 0 (mesh xskin-b001mafit_01-PELVIS-BODY on bone PELVIS)";
    assert_eq!(
        problems(&report),
        [format!(
            "{BODY_MESH}: OSSA_ERR_MISMATCH: {place}: the mesh is bound to a bone the skeleton \
             lacks: \"L_TOE9\""
        )]
    );
    // SPINE1's binding has blended vertices too (12 real, 1 blend).
    let Some(dir) = adult_body("mesh-blends") else {
        return;
    };
    edit(&dir, BODY_MESH, "\nSPINE1", "\nSPINE9");
    let report = check(&dir, "adult-skeleton.cmx", suit("b001mafit_01"));
    assert_eq!(
        problems(&report),
        [
            format!(
                "{BODY_MESH}: OSSA_ERR_MISMATCH: {place}: the mesh is bound to a bone the \
                 skeleton lacks: \"SPINE9\""
            ),
            format!(
                "{BODY_MESH}: OSSA_ERR_MISMATCH: {place}: the mesh blends vertices to a bone the \
                 skeleton lacks: \"SPINE9\""
            )
        ]
    );
}

#[test]
fn a_suit_for_the_adult_skeleton_on_the_child_one_is_a_problem() {
    let Some(sims) = corpus("sims") else {
        return;
    };
    let dir = TempDir::new("sims-character", "age");
    copy_game_files(&sims, &dir, &ADULT_BODY);
    copy_game_files(&sims, &dir, &["so_child-skeleton.cmx"]);
    let report = check(&dir, "child-skeleton.cmx", suit("b001mafit_01"));
    assert_eq!(
        problems(&report),
        [
            "B001MAFit_01.cmx: OSSA_ERR_MISMATCH: suit b001mafit_01 is for the adult skeleton (its \
          name b001mafit_01 says a), not the child skeleton child"
        ]
    );
    assert_eq!(report.files[1].problems[0].code(), ErrorCode::Mismatch);
}

/// The 1998 colonel: its file, its meshes and their textures, copied.
fn colonel(test: &str) -> Option<TempDir> {
    let proto = corpus("sims/proto1998")?;
    let dir = TempDir::new("sims-character", test);
    dir.write(
        "colonelsuit.CMX",
        std::fs::read(proto.join("colonelsuit.CMX")).unwrap(),
    );
    for e in std::fs::read_dir(&proto).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with("xskin-colonel-") {
            dir.write(&name, std::fs::read(proto.join(&name)).unwrap());
        }
    }
    for e in std::fs::read_dir(proto.join("Textures")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let path = format!("Textures/{name}");
        dir.write(&path, std::fs::read(proto.join(&path)).unwrap());
    }
    Some(dir)
}

/// The texture of the colonel's mesh `mesh`.
fn texture_of(dir: &TempDir, mesh: &str) -> String {
    let model = ossa::Model::load_file(dir.path(mesh), &LoadOptions::default()).unwrap();
    model.meshes()[0].shader().to_string()
}

#[test]
fn a_texture_not_found_is_a_problem_of_its_mesh() {
    let Some(dir) = colonel("texture-missing") else {
        return;
    };
    let mesh = "xskin-colonel-HEAD-HEAD.msh";
    let texture = texture_of(&dir, mesh);
    let file = (dir.listing("Textures").into_iter())
        .find(|f| f.to_ascii_lowercase() == format!("{}.png", texture.to_ascii_lowercase()))
        .unwrap();
    std::fs::remove_file(dir.path(&format!("Textures/{file}"))).unwrap();
    let report = check(&dir, "colonelsuit.CMX", suit("colonel"));
    let d = dir.0.display();
    assert_eq!(
        problems(&report),
        [format!(
            "{mesh}: OSSA_ERR_NOT_FOUND: suit colonel skin 13 (mesh xskin-colonel-HEAD-HEAD on \
             bone HEAD): texture {texture} is not found: none of {texture}.bmp, {texture}.png, \
             {texture}.tga, {texture}.jpg is in {d} or {d}/Textures"
        )]
    );
}

#[test]
fn a_texture_of_a_size_the_game_cannot_draw_is_a_problem() {
    let Some(dir) = colonel("texture-size") else {
        return;
    };
    let mesh = "xskin-colonel-HEAD-HEAD.msh";
    let texture = texture_of(&dir, mesh);
    let file = (dir.listing("Textures").into_iter())
        .find(|f| f.to_ascii_lowercase() == format!("{}.png", texture.to_ascii_lowercase()))
        .unwrap();
    // The same image at 48 x 64 pixels.
    let mut png = Vec::new();
    image::RgbaImage::new(48, 64)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    dir.write(&format!("Textures/{file}"), png);
    let report = check(&dir, "colonelsuit.CMX", suit("colonel"));
    let shown = dir.path(&format!("Textures/{file}"));
    assert_eq!(
        problems(&report),
        [format!(
            "{mesh}: OSSA_ERR_UNSUPPORTED: suit colonel skin 13 (mesh xskin-colonel-HEAD-HEAD on \
             bone HEAD): texture {texture}: {} is 48x64 pixels: the game draws textures whose \
             sides are powers of two (32, 64, 128, 256)",
            shown.display()
        )]
    );
}

#[test]
fn a_retail_texture_of_a_depth_or_format_the_game_cannot_draw_is_a_problem() {
    let Some(dir) = adult_body("texture-depth") else {
        return;
    };
    dir.write("extrememlgt_01.bmp", bmp(256, 256, 24));
    let report = check(&dir, "adult-skeleton.cmx", suit("b001mafit_01"));
    let place = "suit b001mafit_01 skin 0 (mesh xskin-b001mafit_01-PELVIS-BODY on bone PELVIS)";
    let bmp_path = dir.path("extrememlgt_01.bmp");
    assert_eq!(
        problems(&report),
        [format!(
            "{BODY_MESH}: OSSA_ERR_UNSUPPORTED: {place}: texture extrememlgt_01: {} has 24 bits a \
             pixel: the game draws 8-bit (256-colour) BMPs, and shows others blank",
            bmp_path.display()
        )]
    );
    // Only as PNG: the game reads BMP and TGA.
    std::fs::remove_file(&bmp_path).unwrap();
    let mut png = Vec::new();
    image::RgbaImage::new(256, 256)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    dir.write("extrememlgt_01.png", png);
    let report = check(&dir, "adult-skeleton.cmx", suit("b001mafit_01"));
    assert_eq!(
        problems(&report),
        [format!(
            "{BODY_MESH}: OSSA_ERR_UNSUPPORTED: {place}: texture extrememlgt_01 is found only as \
             {}, which the game does not read: it reads BMP (8 bits a pixel) and TGA",
            dir.path("extrememlgt_01.png").display()
        )]
    );
}

fn idle(dir: &TempDir) -> CharacterCheck {
    CharacterCheck {
        skills: vec![dir.path("adult-idle1.cmx")],
        ..CharacterCheck::default()
    }
}

#[test]
fn a_skill_whose_numbers_are_missing_or_short_is_a_problem() {
    let Some(dir) = adult_body("skill-numbers") else {
        return;
    };
    let cfp = "xskill-A2O-idle1.cfp";
    let bytes = std::fs::read(dir.path(cfp)).unwrap();
    dir.write(cfp, &bytes[..bytes.len() / 2]);
    let report = check(&dir, "adult-skeleton.cmx", idle(&dir));
    let found = problems(&report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(&format!(
            "{cfp}: OSSA_ERR_TRUNCATED: {cfp}: skill a2o-idle1 (120 translations, 1740 \
             rotations): the stream ends after 3505 of 7320 values at byte 0x"
        )),
        "{found:?}"
    );
    assert_eq!(report.files[2].file, dir.path(cfp));
    std::fs::remove_file(dir.path(cfp)).unwrap();
    let report = check(&dir, "adult-skeleton.cmx", idle(&dir));
    let real = dir.0.canonicalize().unwrap();
    assert_eq!(
        problems(&report),
        [format!(
            "adult-idle1.cmx: OSSA_ERR_NOT_FOUND: adult-idle1.cmx: skill a2o-idle1: its animation \
             file {cfp} does not exist in {}",
            real.display()
        )]
    );
}

#[test]
fn a_prototype_skill_whose_bin_is_short_is_a_problem_of_the_bin() {
    let Some(proto) = corpus("sims/proto1998") else {
        return;
    };
    let dir = TempDir::new("sims-character", "bin-short");
    for file in ["colonelsuit.CMX", "adult-greet01.cmx"] {
        dir.write(file, std::fs::read(proto.join(file)).unwrap());
    }
    let bin = "xskill-adult-greet01.bin";
    let bytes = std::fs::read(proto.join(bin)).unwrap();
    assert_eq!(bytes.len(), 38584);
    dir.write(bin, &bytes[..20000]);
    let with_bin = CharacterCheck {
        skills: vec![dir.path("adult-greet01.cmx")],
        ..CharacterCheck::default()
    };
    let report = check(&dir, "colonelsuit.CMX", with_bin);
    assert_eq!(
        problems(&report),
        [format!(
            "{bin}: OSSA_ERR_TRUNCATED: {bin}: skill adult-greet01 (182 translations, 2275 \
             rotations): 20000 bytes, where the skill's 182 translations and 2275 rotations take \
             38584 (12 and 16 bytes each) at byte 0x4e20"
        )]
    );
    assert_eq!(report.files[2].file, dir.path(bin));
}

#[test]
fn a_skill_moving_a_bone_the_skeleton_lacks_names_it() {
    let Some(dir) = adult_body("skill-bone") else {
        return;
    };
    // The second motion's bone.
    edit(&dir, "adult-idle1.cmx", "\r\nPELVIS\r\n", "\r\nPELVIS9\r\n");
    let report = check(&dir, "adult-skeleton.cmx", idle(&dir));
    assert_eq!(
        problems(&report),
        [
            "adult-idle1.cmx: OSSA_ERR_MISMATCH: adult-idle1.cmx: skill a2o-idle1 moves a bone \
          the skeleton lacks: \"PELVIS9\""
        ]
    );
}

#[test]
fn a_cmx_and_its_bcf_that_disagree_are_a_problem() {
    let Some(dir) = adult_body("forms") else {
        return;
    };
    let text = std::fs::read(dir.path("B001MAFit_01.cmx")).unwrap();
    let parsed = ossa::cmx::parse(&text).unwrap();
    dir.write(
        "B001MAFit_01.cmx.bcf",
        ossa::cmx::write_character(&parsed, true).unwrap(),
    );
    // Its BCF twin, as the game's tools write it, agrees.
    let report = check(&dir, "adult-skeleton.cmx", suit("b001mafit_01"));
    assert_eq!(problems(&report), Vec::<String>::new());
    edit(
        &dir,
        "B001MAFit_01.cmx",
        "PELVIS\r\nxskin",
        "SPINE\r\nxskin",
    );
    let report = check(&dir, "adult-skeleton.cmx", suit("b001mafit_01"));
    assert_eq!(
        problems(&report),
        [
            "B001MAFit_01.cmx: OSSA_ERR_MISMATCH: its other form B001MAFit_01.cmx.bcf beside it \
          holds something else: suit b001mafit_01 skin 0: mesh xskin-b001mafit_01-PELVIS-BODY on \
          bone SPINE here, mesh xskin-b001mafit_01-PELVIS-BODY on bone PELVIS there"
        ]
    );
}

#[test]
fn the_report_is_empty_of_problems_only_when_every_file_is_clean() {
    let Some(dir) = adult_body("count") else {
        return;
    };
    std::fs::remove_file(dir.path(BODY_MESH)).unwrap();
    let report = check(&dir, "adult-skeleton.cmx", suit("b001mafit_01"));
    assert_eq!(report.problem_count(), 1);
    let io = ossa::io::DirFileSystem::new(&dir.0);
    let e = check_character(
        &dir.path("adult-skeleton.cmx"),
        &suit("b001mafit_01"),
        &LoadOptions {
            io: Some(&io),
            ..LoadOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
}
