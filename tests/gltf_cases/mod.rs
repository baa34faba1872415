//! The models the glTF export and import tests both take: the corpus's DPMs and SKMs, the Sims
//! skeletons, meshes bound to them, the hipster suit dressed, the retail body with its idle
//! skill and dressed in its suit walking, and the generated MM2 doll and DMF rig.

use std::path::{Path, PathBuf};

use ossa::{Format, LoadOptions, Model};

use crate::corpus::{corpus_dir, files_ending};
use crate::mm2_fixtures;

fn load(path: &Path) -> Model {
    Model::load_file(path, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every case, named after its file without the extension. `sims_mesh_step`: take every n-th
/// Sims mesh (1 = all; they share their skeleton, and debug builds are slow).
pub fn cases(sims_mesh_step: usize) -> Vec<(String, Model)> {
    let mut out = Vec::new();
    let corpus = corpus_dir();
    if corpus.join("dpm").is_dir() {
        for f in files_ending(&corpus.join("dpm"), &[".dpm"]) {
            let model = load(&corpus.join("dpm").join(&f));
            out.push((f.trim_end_matches(".dpm").to_owned(), model));
        }
        for f in ["wsw05sdk_monada_tris.skm", "wsw05sdk_testbox_tris.skm"] {
            let model = load(&corpus.join("skm").join(f));
            out.push((f.trim_end_matches(".skm").to_owned(), model));
        }
        out.push(("sims_b001mafit_01_idle".to_owned(), sims_body(&corpus)));
        out.extend(sims_corpus(&corpus, sims_mesh_step));
    } else {
        eprintln!(
            "corpus not found at {}; only the generated fixtures are taken",
            corpus.display()
        );
    }
    out.push(("mm2_doll".to_owned(), mm2_fixtures::doll()));
    let rig = ossa::synth::TubeRig::with_vertices(600).build().unwrap();
    let dmf = Model::load(&rig.save(Format::Dmf).unwrap(), &LoadOptions::default()).unwrap();
    out.push(("dmf_tube".to_owned(), dmf));
    out
}

/// The Sims corpus: both skeletons alone, every `step`-th mesh on the adult skeleton (or, where
/// a bone it names is not there, the child's), and the hipster suit's two skins dressed on the
/// adult.
fn sims_corpus(corpus: &Path, step: usize) -> Vec<(String, Model)> {
    let dir = corpus.join("sims");
    let adult = load(&dir.join("so_adult-skeleton.cmx"));
    let child = load(&dir.join("so_child-skeleton.cmx"));
    let mut out = Vec::new();
    for f in files_ending(&dir, &[".skn"])
        .into_iter()
        .step_by(step.max(1))
    {
        let mesh = load(&dir.join(&f));
        let bound = Model::bind(&mesh, &adult)
            .or_else(|_| Model::bind(&mesh, &child))
            .unwrap_or_else(|e| panic!("{f}: {e}"));
        out.push((f.trim_end_matches(".skn").to_owned(), bound));
    }
    let suit_file = load(&dir.join("so_C005MA_Hipster.cmx"));
    let character = ossa::assemble::with_suits(&adult, suit_file.suits()).unwrap();
    let suit = suit_file.suits()[0].name.to_string_lossy();
    let hipster = ossa::assemble::dress(&character, &suit, &mut |mesh| {
        Model::load_file(dir.join(format!("so_{mesh}.skn")), &LoadOptions::default())
    })
    .unwrap();
    assert_eq!(hipster.meshes().len(), 2);
    out.push(("sims_hipster".to_owned(), hipster));
    out.push(("sims_b001mafit_01_walk".to_owned(), walker(&dir, &adult)));
    out.push(("sims_adult_skeleton".to_owned(), adult));
    out.push(("sims_child_skeleton".to_owned(), child));
    out
}

/// The retail adult body on the adult skeleton, with the idle skill, under the game's names
/// (copied into a directory of this process's own, as the skill finds its CFP by that name).
fn sims_body(corpus: &Path) -> Model {
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("gltf-cases-sims-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (from, to) in [
        ("so_adult-skeleton.cmx", "adult-skeleton.cmx"),
        (
            "so_xskin-b001mafit_01-PELVIS-BODY.skn",
            "xskin-b001mafit_01-PELVIS-BODY.skn",
        ),
        ("so_adult-idle1.cmx", "adult-idle1.cmx"),
        ("so_xskill-A2O-idle1.cfp", "xskill-A2O-idle1.cfp"),
    ] {
        std::fs::copy(corpus.join("sims").join(from), dir.join(to)).unwrap();
    }
    let skeleton = load(&dir.join("adult-skeleton.cmx"));
    let skin = load(&dir.join("xskin-b001mafit_01-PELVIS-BODY.skn"));
    Model::bind(&skin, &skeleton)
        .unwrap()
        .with_skills_file(dir.join("adult-idle1.cmx"), &LoadOptions::default())
        .unwrap()
}

/// The adult wearing `b001mafit_01` and walking (`a2o-walking-loop`, whose motions carry
/// `footstep`, `anchor` and `interruptable` events): a character with a suit, a skill and
/// events, which VitaMoo's extras describe (tests/gltf_vitamoo.rs).
fn walker(dir: &Path, adult: &Model) -> Model {
    let suits = load(&dir.join("so_B001MAFit_01.cmx"));
    let character = ossa::assemble::with_suits(adult, suits.suits()).unwrap();
    let dressed = ossa::assemble::dress(&character, "b001mafit_01", &mut |mesh| {
        Model::load_file(dir.join(format!("so_{mesh}.skn")), &LoadOptions::default())
    })
    .unwrap();
    let skills =
        ossa::cmx::parse(&std::fs::read(dir.join("so_ross-walking-loop.cmx")).unwrap()).unwrap();
    let walk = (skills.skills.iter())
        .position(|s| s.name.to_string() == "a2o-walking-loop")
        .unwrap();
    let cfp = std::fs::read(dir.join("so_xskill-A2O-walking-loop.cfp")).unwrap();
    ossa::cmx::with_skill(&dressed, &skills, walk, &cfp).unwrap()
}
