//! Every saver, loader, bind and the optimiser on the largest models the formats can hold:
//! chains of 65,535 bones (the most a 16-bit bone index reaches; 32,767 for DMF's signed ids,
//! 256 for SKM), each bone with a ring of vertices. Deep chains, long name lists and many
//! influence sets are where a path that is quadratic in what a file gives it, or recursive in its
//! depth, shows.
//!
//! Each step must end within a cap of the kind a hang trips (minutes), not a benchmark: on this
//! project's 2-core machines each step takes at most seconds in a debug build, and a quadratic
//! step over 65,535 bones takes many minutes (the CMX and MM2 skeleton writers took 390 s and
//! 200 s before they were made linear). The hostile shapes of each format (one name repeated,
//! one vertex of huge valence, huge sidecars, JSON bombs) have tests of their own.

#[path = "../fuzz/src/samples.rs"]
mod samples;

use std::time::{Duration, Instant};

use ossa::optimize::OPTIMIZE_ALL;
use ossa::synth::TubeRig;
use ossa::{Format, LoadOptions, Model};
use samples::WRITERS;

/// The most one step may take: far above what it takes, far below what a quadratic path takes.
const CAP: Duration = Duration::from_secs(120);

fn timed<R>(what: &str, f: impl FnOnce() -> R) -> R {
    let start = Instant::now();
    let r = f();
    let took = start.elapsed();
    assert!(
        took < CAP,
        "{what} took {took:?}, past the {CAP:?} a hang trips"
    );
    eprintln!("{what}: {took:?}");
    r
}

/// A chain of `bones` bones, a ring of three vertices per bone, each vertex shared between two
/// bones, in `frames` frames.
fn chain(bones: u32, frames: u32) -> Model {
    let rig = TubeRig {
        bones,
        bone_length: 1.0,
        radius: 0.5,
        rings_per_bone: 1,
        sides: 3,
        frames,
        bend: 0.01,
    };
    timed(&format!("building a chain of {bones} bones"), || {
        rig.build()
    })
    .expect("the chain is a valid model")
}

/// The chain with each vertex following only its strongest bone, as Sims meshes, MM2 and DMF
/// files that hold one influence per vertex do.
fn rigid(model: &Model) -> Model {
    let mut parts = model.to_parts();
    for mesh in &mut parts.meshes {
        let mut starts = vec![0u32];
        let mut kept = Vec::new();
        for v in 0..mesh.influence_start.len() - 1 {
            let own = &mesh.influences
                [mesh.influence_start[v] as usize..mesh.influence_start[v + 1] as usize];
            let strongest = own
                .iter()
                .max_by(|a, b| a.weight.total_cmp(&b.weight))
                .expect("every vertex has an influence");
            // Origins and normals are stored weighted: at weight 1 they are the bone's own.
            let w = strongest.weight;
            let mut one = *strongest;
            one.origin = one.origin.map(|x| x / w);
            one.normal = one.normal.map(|x| x / w);
            one.weight = 1.0;
            kept.push(one);
            starts.push(kept.len() as u32);
        }
        mesh.influences = kept;
        mesh.influence_start = starts;
    }
    Model::from_parts(parts).expect("the rigid chain is a valid model")
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

/// Each of `formats` saved and loaded back: the files and the models.
fn round_trip(model: &Model, formats: &[Format]) -> Vec<(Format, Model)> {
    let bones = model.bones().len();
    let vertices: usize = model.meshes().iter().map(|m| m.vertex_count()).sum();
    let mut out = Vec::new();
    for &format in formats {
        let what = format.name();
        let write = WRITERS
            .iter()
            .find(|(f, _)| *f == format)
            .map(|(_, w)| w)
            .expect("a writer");
        let bytes = timed(&format!("saving {what} ({bones} bones)"), || write(model))
            .unwrap_or_else(|e| panic!("saving {what}: {e}"));
        let loaded = timed(&format!("loading {what} ({} bytes)", bytes.len()), || {
            load(&bytes, format)
        })
        .unwrap_or_else(|e| panic!("loading {what}: {e}"));
        // Skeleton files keep the bones, mesh files the vertices (and wait for a skeleton).
        let loaded_vertices: usize = loaded.meshes().iter().map(|m| m.vertex_count()).sum();
        assert!(
            loaded.bones().len() == bones || loaded.unbound().is_some(),
            "{what}: {} bones of {bones}",
            loaded.bones().len()
        );
        assert!(
            loaded_vertices == vertices || loaded.meshes().is_empty(),
            "{what}: {loaded_vertices} vertices of {vertices}"
        );
        out.push((format, loaded));
    }
    out
}

/// Binds each pair's meshes to its skeleton: the bound model has every bone and every vertex.
fn bind_pairs(files: &[(Format, Model)], pairs: &[(Format, Format)], bones: usize) {
    let find = |f: Format| {
        files
            .iter()
            .find(|(g, _)| *g == f)
            .map(|(_, m)| m)
            .expect("the format was saved")
    };
    for &(meshes, skeleton) in pairs {
        let (m, s) = (find(meshes), find(skeleton));
        let bound = timed(&format!("binding {meshes:?} to {skeleton:?}"), || {
            Model::bind(m, s)
        })
        .unwrap_or_else(|e| panic!("{meshes:?} to {skeleton:?}: {e}"));
        assert_eq!(bound.bones().len(), bones);
        assert_eq!(bound.meshes().len(), m.meshes().len());
    }
}

#[test]
fn the_largest_skeletons_and_meshes_save_load_and_bind() {
    const BONES: u32 = 65_535;
    let shared = chain(BONES, 2);
    assert_eq!(shared.bones().len(), BONES as usize);
    let vertices: usize = shared.meshes().iter().map(|m| m.vertex_count()).sum();
    assert_eq!(vertices, (BONES as usize + 1) * 3);
    let mut files = round_trip(
        &shared,
        &[
            Format::Dpm,
            Format::SimsCmx,
            Format::SimsBcf,
            Format::Mm2Skel,
        ],
    );
    let one = rigid(&shared);
    files.extend(round_trip(
        &one,
        &[Format::SimsSkn, Format::SimsBmf, Format::Mm2Mod],
    ));
    bind_pairs(
        &files,
        &[
            (Format::SimsSkn, Format::SimsCmx),
            (Format::SimsBmf, Format::SimsBcf),
            (Format::Mm2Mod, Format::Mm2Skel),
        ],
        BONES as usize,
    );

    let (optimized, report) =
        timed("optimising", || shared.optimized(OPTIMIZE_ALL)).expect("the chain optimises");
    assert_eq!(report.bones_before, BONES);
    assert_eq!(optimized.meshes().len(), shared.meshes().len());
}

#[test]
fn dmf_at_its_bone_id_limit_saves_and_loads() {
    // DMF's bone ids are signed 16-bit: 32,767 bones.
    let model = rigid(&chain(32_767, 2));
    round_trip(&model, &[Format::Dmf, Format::DmfJson]);
}

#[test]
fn skm_at_its_bone_limit_saves_loads_and_binds() {
    // SKM and SKP hold at most 256 bones; many frames instead.
    let model = chain(256, 512);
    let files = round_trip(&model, &[Format::Skm, Format::Skp]);
    bind_pairs(&files, &[(Format::Skm, Format::Skp)], 256);
}
