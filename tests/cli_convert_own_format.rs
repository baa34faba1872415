//! `ossa convert` of a model into its own format keeps what the library's save keeps: the
//! CLI's bytes are `Model::load_file` then `Model::save`'s. For DPM, SKM, SKP, DMF and MM2 that
//! holds with `--keep-order`; without it the CLI optimises them, as its help says. The corpus's
//! files of each format ossa writes, and a tube rig built in code for the formats the corpus
//! has no file of (DMF, MM2); the corpus tests say "skipped: corpus absent" and return when it
//! is not there.

#![cfg(feature = "cli")]

mod cli_support;
mod corpus;

use std::path::Path;

use cli_support::{TempDir, corpus, ossa};
use ossa::synth::TubeRig;
use ossa::{Format, LoadOptions, Model};

/// `input` converted by the CLI into `out` (in `dir`) with `extra` options, and the library's
/// save of the same input in the same format: the two byte strings.
fn cli_and_library(
    dir: &TempDir,
    input: &Path,
    out: &str,
    format: Format,
    extra: &[&str],
) -> (Vec<u8>, Vec<u8>) {
    let output = dir.path(out);
    let mut args = vec![
        "convert",
        input.to_str().unwrap(),
        "-o",
        output.to_str().unwrap(),
    ];
    args.extend(extra);
    let run = ossa(&dir.0, &args);
    assert_eq!(run.code, 0, "{}: {}", input.display(), run.stderr);
    let cli = std::fs::read(&output).unwrap();
    let model = Model::load_file(input, &LoadOptions::default()).unwrap();
    let library = model.save(format).unwrap();
    (cli, library)
}

/// The 1998 colonel's suit file: `convert colonelsuit.CMX -o out.cmx` wrote the skeleton
/// `adult` as `skeleton` and each bone's `0` flags as `1`. Now the CLI, the library's save and
/// the file are one byte string.
#[test]
fn corpus_colonel_converts_to_cmx_as_the_library_saves_him() {
    let Some(sims) = corpus("sims") else {
        return;
    };
    let input = sims.join("proto1998/colonelsuit.CMX");
    let original = std::fs::read(&input).unwrap();
    let dir = TempDir::new("own-format", "colonel");
    let (cli, library) = cli_and_library(&dir, &input, "out.cmx", Format::SimsCmx, &[]);
    assert!(cli == library, "the CLI's CMX is not the library's save");
    let text = String::from_utf8_lossy(&cli);
    let lines: Vec<&str> = text.split("\r\n").collect();
    // The skeleton's name, and PELVIS's can-translate flag (0) after its rotation.
    assert_eq!(lines[3], "adult", "{}", &text[..200]);
    assert_eq!(
        lines[11..17],
        [
            "PELVIS",
            "ROOT",
            "| -0.0696158 -2.42464e-008 1.15234e-013 |",
            "| 0.499999 0.5 0.5 -0.500001 |",
            "0",
            "1"
        ]
    );
    assert!(
        cli == original,
        "the colonel's file does not come back byte for byte"
    );
}

/// One corpus file of each format the corpus has and ossa writes: the CLI's conversion into its
/// own format is the library's save (and, for these files, the file itself).
#[test]
fn corpus_files_convert_to_their_own_format_as_the_library_saves_them() {
    let Some(root) = corpus("") else {
        return;
    };
    let dir = TempDir::new("own-format", "corpus");
    // A BCF with a skeleton: the corpus's BCFs hold skills only, which no format saves as a
    // model; the retail adult skeleton's twin, written by the library, stands in.
    let adult = Model::load_file(
        root.join("sims/so_adult-skeleton.cmx"),
        &LoadOptions::default(),
    )
    .unwrap();
    dir.write("adult.cmx.bcf", adult.save(Format::SimsBcf).unwrap());
    let bcf = dir.path("adult.cmx.bcf");
    let cases: [(&Path, &str, Format, &[&str]); 10] = [
        (
            &root.join("dpm/xon_okmale1.dpm"),
            "a.dpm",
            Format::Dpm,
            &["--keep-order"],
        ),
        (
            &root.join("skm/wsw05sdk_monada_tris.skm"),
            "a.skm",
            Format::Skm,
            &["--keep-order"],
        ),
        (
            &root.join("skm/wsw05sdk_testbox_tris.skp"),
            "a.skp",
            Format::Skp,
            &["--keep-order"],
        ),
        (&root.join("iqm/asp_mrfixit.iqm"), "a.iqm", Format::Iqm, &[]),
        (
            &root.join("sims/so_xskin-c005ma_hipster-HEAD-HEAD.skn"),
            "a.skn",
            Format::SimsSkn,
            &[],
        ),
        (
            &root.join("sims/proto1998/xskin-biped-ed-HEAD-HEAD.msh"),
            "xskin-biped-ed-HEAD-HEAD.msh",
            Format::SimsMsh,
            &[],
        ),
        (
            &root.join("sims/so_adult-skeleton.cmx"),
            "a.cmx",
            Format::SimsCmx,
            &[],
        ),
        (
            &root.join("sims/so_B001MAFit_01.cmx"),
            "b.cmx",
            Format::SimsCmx,
            &[],
        ),
        (
            &root.join("sims/proto1998/rossnud.cmx"),
            "c.cmx",
            Format::SimsCmx,
            &[],
        ),
        (&bcf, "b.bcf", Format::SimsBcf, &[]),
    ];
    for (input, out, format, extra) in cases {
        let (cli, library) = cli_and_library(&dir, input, out, format, extra);
        assert!(
            cli == library,
            "{}: the CLI's bytes are not the library's",
            input.display()
        );
        let original = std::fs::read(input).unwrap();
        assert!(
            cli == original,
            "{}: not kept byte for byte",
            input.display()
        );
    }
}

/// The formats the corpus has no file of, from a tube rig built in code: DMF and an MM2
/// skeleton and mesh, each converted into its own format with `--keep-order` as the library
/// saves it.
#[test]
fn built_files_convert_to_their_own_format_as_the_library_saves_them() {
    let dir = TempDir::new("own-format", "built");
    let rig = TubeRig::default().build().unwrap();
    dir.write("rig.dmf", rig.save(Format::Dmf).unwrap());
    // An MM2 vertex follows one bone.
    let (one_bone, _) = rig.with_max_influences(1).unwrap();
    dir.write("rig.skel", one_bone.save(Format::Mm2Skel).unwrap());
    dir.write("rig.mod", one_bone.save(Format::Mm2Mod).unwrap());
    for (name, out, format) in [
        ("rig.dmf", "out.dmf", Format::Dmf),
        ("rig.skel", "out.skel", Format::Mm2Skel),
        ("rig.mod", "out.mod", Format::Mm2Mod),
    ] {
        let (cli, library) = cli_and_library(&dir, &dir.path(name), out, format, &["--keep-order"]);
        assert!(
            cli == library,
            "{name}: the CLI's bytes are not the library's"
        );
    }
}
