//! The IQMs ossa writes, read by Assimp (Debian's `assimp-utils`, the `assimp` command): every
//! corpus DPM, SKM (with its SKP), glTF Blender exported and IQM with meshes is saved as IQM
//! (influences capped at four, as `ossa convert --max-influences 4` caps them, where the model
//! has more) and `assimp info` must read it with the model's meshes, and each mesh with the
//! model's vertices and triangles. Each corpus IQM is written twice: as it loads, which gives
//! back the file itself, and from its parts, which writes it anew.
//!
//! What Assimp 5.2's IQM importer makes of a file (read from its source, IQMImporter.cpp, and
//! seen with `assimp info -r`): one mesh for each of the file's meshes, with the mesh's own
//! `num_vertexes` vertices and `num_triangles` triangles, indexed as the file indexes them
//! (vertices are not split per triangle corner); no joints and no animations. The counts are
//! therefore compared on a raw import (`assimp info -r`), with no post-processing to join
//! vertices or merge meshes. Plain `assimp info` (Assimp's full post-processing, which begins by
//! validating the imported data) must load the file too, with the model's triangles. The three
//! corpus IQMs whose triangles use other meshes' vertices (ksdk_bush, ksdk_v_knife,
//! rev_giraffe_mesh) are the exception when written back unchanged: see `check`.
//!
//! Without `assimp` the test says it skips, unless `OSSA_REQUIRE_INTEROP` is set (as CI sets it),
//! when that is a failure. Without the corpus it says so and checks nothing.

mod corpus;

use std::path::Path;
use std::process::Command;

use ossa::{Format, LoadOptions, Model};

/// IQM's blend holds four bones a vertex.
const IQM_INFLUENCES: usize = 4;

/// Whether the `assimp` command runs; without it, a skip (or, under `OSSA_REQUIRE_INTEROP`, a
/// failure).
fn assimp_ready() -> bool {
    let ready = Command::new("assimp")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ready {
        let why = "the assimp command is missing (Debian: apt-get install assimp-utils)";
        assert!(
            std::env::var_os("OSSA_REQUIRE_INTEROP").is_none(),
            "OSSA_REQUIRE_INTEROP is set but {why}"
        );
        eprintln!("{why}; skipping the Assimp check");
    }
    ready
}

/// What `assimp info` reports: its totals, and each mesh's vertices and faces.
#[derive(Debug, Default)]
struct Info {
    meshes: usize,
    vertices: usize,
    faces: usize,
    per_mesh: Vec<(usize, usize)>,
}

/// Runs `assimp info FILE` (with `-r`: a raw import) and reads its summary: the lines
/// `Meshes: N`, `Vertices: N`, `Faces: N`, and under `Meshes:  (name) [vertices / bones / faces |
/// primitive_types]` one `I (NAME): [V / B / F | TYPES]` line a mesh.
fn assimp_info(file: &Path, raw: bool) -> Result<Info, String> {
    let mut command = Command::new("assimp");
    command.arg("info").arg(file);
    if raw {
        command.arg("-r");
    }
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let said: Vec<&str> = (stdout.lines().chain(stderr.lines()))
            .filter(|l| !l.trim_end().ends_with('%'))
            .collect();
        return Err(said.join("\n"));
    }
    let mut info = Info::default();
    let total =
        |line: &str, key: &str| -> Option<usize> { line.strip_prefix(key)?.trim().parse().ok() };
    let mut in_table = false;
    for line in stdout.lines() {
        if line.starts_with("Meshes:  (name)") {
            in_table = true;
            continue;
        }
        if in_table {
            let Some(counts) = line
                .rfind('[')
                .and_then(|at| line[at + 1..].split('|').next())
            else {
                in_table = false;
                continue;
            };
            let n: Vec<usize> = counts
                .split('/')
                .filter_map(|c| c.trim().parse().ok())
                .collect();
            assert_eq!(n.len(), 3, "{}: mesh line {line:?}", file.display());
            info.per_mesh.push((n[0], n[2]));
            continue;
        }
        if let Some(n) = total(line, "Meshes:") {
            info.meshes = n;
        } else if let Some(n) = total(line, "Vertices:") {
            info.vertices = n;
        } else if let Some(n) = total(line, "Faces:") {
            info.faces = n;
        }
    }
    Ok(info)
}

/// One model to write: its name and how it loaded.
struct Case {
    name: String,
    model: Model,
}

fn load(path: &Path) -> Model {
    Model::load_file(path, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The corpus's models of one kind that have meshes: `dpm`, `skm` (each SKM with the SKP
/// beside it), `gltf` (the files Blender exported) or `iqm` (each as it loads and written anew
/// from its parts).
fn cases(corpus: &Path, kind: &str) -> Vec<Case> {
    let mut out = Vec::new();
    let mut add = |name: String, model: Model| {
        if !model.meshes().is_empty() {
            out.push(Case { name, model });
        }
    };
    let dir = corpus.join(kind);
    match kind {
        "dpm" | "skm" => {
            for f in corpus::files_ending(&dir, &[&format!(".{kind}")]) {
                add(f.clone(), load(&dir.join(&f)));
            }
        }
        "gltf" => {
            for path in corpus::blender_gltf_files("the Assimp check of glTF as IQM") {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                add(name, load(&path));
            }
        }
        "iqm" => {
            for f in corpus::files_ending(&dir, &[".iqm"]) {
                // The corpus's broken file is refused (tests/iqm_corpus.rs); the others load.
                let Ok(model) = Model::load_file(dir.join(&f), &LoadOptions::default()) else {
                    continue;
                };
                let anew = Model::from_parts(model.to_parts()).unwrap();
                assert!(anew.source_bytes().is_none());
                add(f.clone(), model);
                add(format!("{f} (anew)"), anew);
            }
        }
        _ => unreachable!("{kind}"),
    }
    out
}

/// How many vertices of other meshes a model read from an IQM copied into its meshes (the
/// load's warning "triangles use N vertices of other meshes").
fn copied_vertices(model: &Model) -> usize {
    (model.warnings().iter())
        .filter_map(|w| {
            let w = w.to_string_lossy();
            let (_, rest) = w.split_once("triangles use ")?;
            let (n, _) = rest.split_once(" vertices of other meshes")?;
            n.parse::<usize>().ok()
        })
        .sum()
}

/// Writes every model of `kind` as IQM and has Assimp read it (see the file's introduction);
/// at least `expected` models are checked.
fn check(kind: &str, expected: usize) {
    if !assimp_ready() {
        return;
    }
    let Some(_) = corpus::corpus_subdir(kind, &format!("the Assimp check of {kind} as IQM")) else {
        return;
    };
    let corpus = corpus::corpus_dir();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("iqm-assimp-{kind}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (i, case) in cases(&corpus, kind).iter().enumerate() {
        let mut model = &case.model;
        let capped;
        if model
            .meshes()
            .iter()
            .any(|m| m.max_influences() > IQM_INFLUENCES)
        {
            capped = model.with_max_influences(IQM_INFLUENCES).unwrap().0;
            model = &capped;
        }
        let bytes = model
            .save(Format::Iqm)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let file = dir.join(format!("{i:02}.iqm"));
        std::fs::write(&file, &bytes).unwrap();
        let shown = format!("{} (written to {})", case.name, file.display());
        let want: Vec<(usize, usize)> = (model.meshes().iter())
            .map(|m| (m.vertex_count(), m.triangle_count()))
            .collect();
        let triangles: usize = want.iter().map(|w| w.1).sum();
        let vertices: usize = want.iter().map(|w| w.0).sum();
        let raw = match assimp_info(&file, true) {
            Ok(info) => info,
            Err(said) => {
                failures.push(format!("{shown}: `assimp info -r` fails:\n{said}"));
                continue;
            }
        };
        // A corpus IQM whose triangles use other meshes' vertices loads with copies of them in
        // each mesh that uses them; unchanged, it is written back as the file itself, where
        // Assimp takes each mesh's own vertices only and counts no copies. Its post-processing
        // then refuses the triangles that point past them ("aiMesh::mFaces[0]::mIndices[0] is
        // out of range"), so only the raw import is compared; written anew, the same model
        // passes both.
        let copied = if Some(&bytes[..]) == model.source_bytes() {
            copied_vertices(model)
        } else {
            0
        };
        let ok = raw.meshes == want.len()
            && raw.per_mesh.len() == want.len()
            && raw.faces == triangles
            && raw.vertices == vertices - copied
            && (raw.per_mesh.iter().zip(&want))
                .all(|(got, want)| got.1 == want.1 && (copied > 0 || got.0 == want.0));
        if !ok {
            failures.push(format!(
                "{shown}: assimp reads {} meshes, {} vertices, {} faces, per mesh (vertices, \
                 faces) {:?}; the model has {} meshes, {vertices} vertices ({copied} of them \
                 copies of other meshes' vertices), {triangles} triangles, per mesh {want:?}",
                raw.meshes,
                raw.vertices,
                raw.faces,
                raw.per_mesh,
                want.len()
            ));
        }
        if copied == 0 {
            match assimp_info(&file, false) {
                Ok(info) if info.faces == triangles => {}
                Ok(info) => failures.push(format!(
                    "{shown}: after Assimp's post-processing {} faces, the model has {triangles}",
                    info.faces
                )),
                Err(said) => failures.push(format!("{shown}: `assimp info` fails:\n{said}")),
            }
        }
        eprintln!(
            "{}: meshes {}, vertices {}, triangles {}{}",
            case.name,
            want.len(),
            vertices,
            triangles,
            if copied > 0 {
                format!(
                    "; Assimp reads {} of them, {copied} being copies",
                    raw.vertices
                )
            } else {
                String::new()
            }
        );
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= expected, "only {checked} {kind} models checked");
    eprintln!("{checked} IQMs read by Assimp with the model's counts");
}

// One test a kind, so that they run side by side.

#[test]
fn assimp_reads_dpms_ossa_saves_as_iqm_with_their_meshes_vertices_and_triangles() {
    check("dpm", 16);
}

#[test]
fn assimp_reads_skms_ossa_saves_as_iqm_with_their_meshes_vertices_and_triangles() {
    check("skm", 4);
}

#[cfg(feature = "gltf")]
#[test]
fn assimp_reads_blender_gltf_ossa_saves_as_iqm_with_their_meshes_vertices_and_triangles() {
    check("gltf", 3);
}

/// 21 corpus IQMs with meshes, each twice.
#[test]
fn assimp_reads_iqms_ossa_saves_with_their_meshes_vertices_and_triangles() {
    check("iqm", 42);
}
