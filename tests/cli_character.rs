//! `ossa validate FILE --skeleton --suit --skills --search`: a Sims character checked across
//! its files, reported file by file, exit status 1 when anything is wrong.

mod cli_support;
mod corpus;

use std::path::Path;

use cli_support::{TempDir, corpus, ossa};

/// Copies corpus files into `dir` under the game's own names (the corpus's `so_` prefix off).
fn copy_sims(sims: &Path, dir: &TempDir, files: &[&str]) {
    for file in files {
        let game = file.strip_prefix("so_").unwrap_or(file);
        dir.write(game, std::fs::read(sims.join(file)).unwrap());
    }
}

fn adult_body(test: &str) -> Option<TempDir> {
    let sims = corpus("sims")?;
    let dir = TempDir::new("cli-character", test);
    copy_sims(
        &sims,
        &dir,
        &[
            "so_adult-skeleton.cmx",
            "so_B001MAFit_01.cmx",
            "so_xskin-b001mafit_01-PELVIS-BODY.skn",
            "so_adult-idle1.cmx",
            "so_xskill-A2O-idle1.cfp",
        ],
    );
    Some(dir)
}

#[test]
fn a_corpus_character_is_valid_file_by_file() {
    let Some(dir) = adult_body("clean") else {
        return;
    };
    let run = ossa(
        &dir.0,
        &[
            "validate",
            "adult-skeleton.cmx",
            "--suit",
            "b001mafit_01",
            "--skills",
            "adult-idle1.cmx",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "adult-skeleton.cmx: valid (0 warnings)\n\
         B001MAFit_01.cmx: valid (0 warnings)\n\
         xskin-b001mafit_01-PELVIS-BODY.skn: valid (0 warnings)\n\
         adult-idle1.cmx: valid (0 warnings)\n\
         adult-skeleton.cmx: the character is valid (4 files)\n"
    );
    // The skeleton in a file of its own, the suit found in a search directory.
    let suits = TempDir::new("cli-character", "clean-search");
    std::fs::rename(dir.path("B001MAFit_01.cmx"), suits.path("B001MAFit_01.cmx")).unwrap();
    std::fs::rename(
        dir.path("xskin-b001mafit_01-PELVIS-BODY.skn"),
        suits.path("xskin-b001mafit_01-PELVIS-BODY.skn"),
    )
    .unwrap();
    let suits_dir = suits.0.display().to_string();
    let run = ossa(
        &dir.0,
        &[
            "validate",
            "adult-idle1.cmx",
            "--skeleton",
            "adult-skeleton.cmx",
            "--suit",
            "b001mafit_01",
            "--search",
            &suits_dir,
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.line(&format!("{suits_dir}/B001MAFit_01.cmx")),
        format!("{suits_dir}/B001MAFit_01.cmx: valid (0 warnings)")
    );
    assert_eq!(
        run.stdout.lines().last().unwrap(),
        "adult-idle1.cmx: the character is valid (4 files)"
    );
}

#[test]
fn a_broken_character_names_each_problem_in_its_file_and_exits_1() {
    let Some(dir) = adult_body("broken") else {
        return;
    };
    // Two things broken: the body names a bone the skeleton lacks, and the skill's numbers are
    // gone.
    let mesh = dir.path("xskin-b001mafit_01-PELVIS-BODY.skn");
    let text = std::fs::read_to_string(&mesh).unwrap();
    std::fs::write(&mesh, text.replacen("\nL_TOE0", "\nL_TOE9", 1)).unwrap();
    std::fs::remove_file(dir.path("xskill-A2O-idle1.cfp")).unwrap();
    let run = ossa(
        &dir.0,
        &[
            "validate",
            "adult-skeleton.cmx",
            "--suit",
            "b001mafit_01",
            "--skills",
            "adult-idle1.cmx",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let real = dir.0.canonicalize().unwrap();
    assert_eq!(
        run.stdout,
        format!(
            "adult-skeleton.cmx: valid (0 warnings)\n\
             B001MAFit_01.cmx: valid (0 warnings)\n\
             error (OSSA_ERR_MISMATCH): suit b001mafit_01 skin 0 (mesh \
             xskin-b001mafit_01-PELVIS-BODY on bone PELVIS): the mesh is bound to a bone the \
             skeleton lacks: \"L_TOE9\"\n\
             xskin-b001mafit_01-PELVIS-BODY.skn: 1 problems, 0 warnings\n\
             error (OSSA_ERR_NOT_FOUND): adult-idle1.cmx: skill a2o-idle1: its animation file \
             xskill-A2O-idle1.cfp does not exist in {}\n\
             adult-idle1.cmx: 1 problems, 0 warnings\n\
             adult-skeleton.cmx: the character has 2 problems in 2 of 4 files\n",
            real.display()
        )
    );
}

#[test]
fn skills_without_a_skeleton_are_a_problem_of_their_file() {
    let Some(dir) = adult_body("no-skeleton") else {
        return;
    };
    let run = ossa(
        &dir.0,
        &["validate", "adult-idle1.cmx", "--skills", "adult-idle1.cmx"],
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "error (OSSA_ERR_MISMATCH): no skeleton to play the skills on: give --skeleton FILE \
         (adult-skeleton.cmx)\n\
         adult-idle1.cmx: 1 problems, 0 warnings\n\
         adult-idle1.cmx: the character has 1 problems in 1 of 1 files\n"
    );
}

#[test]
fn a_suit_found_nowhere_says_where_it_was_looked_for() {
    let Some(dir) = adult_body("no-suit") else {
        return;
    };
    let run = ossa(
        &dir.0,
        &["validate", "adult-skeleton.cmx", "--suit", "b999"],
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.line("error"),
        "error (OSSA_ERR_NOT_FOUND): no suit named b999: the file has no suits, and none of \
         b999.cmx, b999.cmx.bcf, b999.bcf is in ."
    );
}

#[test]
fn a_character_is_checked_from_one_file_and_not_against_an_engine() {
    let dir = TempDir::new("cli-character", "usage");
    let run = ossa(&dir.0, &["validate", "a.cmx", "b.cmx", "--suit", "x"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.lines().next().unwrap(),
        "ossa: a Sims character is checked from one FILE (its skeleton or suit)"
    );
    let run = ossa(
        &dir.0,
        &["validate", "a.cmx", "--engine", "fte", "--suit", "x"],
    );
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.lines().next().unwrap(),
        "ossa: --engine checks model files, not a Sims character"
    );
    let run = ossa(&dir.0, &["validate", "a.cmx", "--skills"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.lines().next().unwrap(),
        "ossa: --skills needs at least one FILE"
    );
    // A file that is not there is a problem of the character, named.
    let run = ossa(&dir.0, &["validate", "a.cmx", "--suit", "x"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout.lines().last().unwrap(),
        "a.cmx: the character has 2 problems in 1 of 1 files"
    );
}
