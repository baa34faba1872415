//! Issue 37's glTF rows and its allocation-failure promise, and issue 33's JSON documents with
//! `max_bytes` just below and at what they need, each measured in a child process:
//! this test binary runs itself again with `OSSA_ALLOC_CASE` naming one case, optionally under a
//! capped address space (`setrlimit`), and prints its outcome and its peak resident memory
//! (`VmHWM` of `/proc/self/status`, which counts the child's own pages only: `wait4`'s maximum
//! also keeps what the parent held when it forked). A child that aborts on a failed allocation
//! ends by a signal, which the parent reports as such.

#![cfg(feature = "gltf")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ossa::{ErrorCode, Format, LoadOptions, Model};
use serde_json::json;

mod corpus;
mod glb_bytes;
mod json_cases;
use glb_bytes::glb;
use json_cases::{dmf_vertices_with_an_unknown_key, gltf_chain, gltf_small_nodes, least_limit};

const CASE: &str = "OSSA_ALLOC_CASE";
const ADDRESS_SPACE: &str = "OSSA_ALLOC_ADDRESS_SPACE";
const DIR: &str = "OSSA_ALLOC_DIR";
const MAX_BYTES: &str = "OSSA_ALLOC_MAX_BYTES";
const MIB: u64 = 1 << 20;

/// What a child reported.
#[derive(Debug)]
struct Outcome {
    /// `OK`, or the error code's name.
    result: String,
    /// The error's message, or what the model holds.
    detail: String,
    /// Most resident memory the child had, in bytes.
    peak: u64,
}

/// Runs `case` in a child of this test binary (the test named `child_entry`), in `dir`, under
/// an address space of `address_space` bytes where given.
fn in_child(case: &str, dir: &Path, address_space: Option<u64>) -> Outcome {
    in_child_with(case, dir, address_space, 0)
}

/// [`in_child`] with the case's `max_bytes`, for the cases that take one.
fn in_child_with(case: &str, dir: &Path, address_space: Option<u64>, max_bytes: u64) -> Outcome {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env(CASE, case)
        .env(DIR, dir)
        .env(MAX_BYTES, max_bytes.to_string())
        .stderr(Stdio::null());
    if let Some(bytes) = address_space {
        cmd.env(ADDRESS_SPACE, bytes.to_string());
    }
    let output = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.code().is_some(),
        "case {case}: the child ended by signal {:?} (an abort is a failed allocation); it printed\n{text}",
        std::os::unix::process::ExitStatusExt::signal(&output.status)
    );
    let line = text
        .lines()
        .find_map(|l| l.split_once("OUTCOME ").map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("case {case}: no outcome in\n{text}"));
    let (peak, rest) = line.split_once(' ').unwrap();
    let (result, detail) = rest.split_once(' ').unwrap_or((rest, ""));
    let outcome = Outcome {
        result: result.to_owned(),
        detail: detail.to_owned(),
        peak: peak.parse().unwrap(),
    };
    eprintln!(
        "{case}: {} {} at {:.1} MiB resident at most",
        outcome.result,
        outcome.detail,
        outcome.peak as f64 / MIB as f64
    );
    outcome
}

fn gltf_options(format: Format, max_bytes: u64) -> LoadOptions<'static> {
    LoadOptions {
        format,
        max_bytes,
        ..LoadOptions::default()
    }
}

fn report(r: ossa::Result<Model>) -> String {
    match r {
        Ok(m) => format!(
            "OK meshes={} vertices={} frames={} scenes={}",
            m.meshes().len(),
            m.meshes().iter().map(|x| x.vertex_count()).sum::<usize>(),
            m.frames().len(),
            m.animations()
                .iter()
                .map(|a| format!("{}@{}", a.frame_count, a.fps))
                .collect::<Vec<_>>()
                .join(",")
        ),
        Err(e) => format!("{} {e}", e.code().name()),
    }
}

/// A glTF whose one mesh's POSITION accessor holds `count` elements and has no bufferView (all
/// zeros), with a sparse substitution of one element where `sparse`.
fn viewless_positions(count: u64, sparse: bool) -> Vec<u8> {
    let mut accessor = json!({
        "componentType": 5126, "count": count, "type": "VEC3",
        "min": [0, 0, 0], "max": [1, 1, 1],
    });
    let mut doc = json!({
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
    });
    if sparse {
        // One index (u32 0) and one value (1, 1, 1): sixteen bytes in a data URI.
        accessor["sparse"] = json!({
            "count": 1,
            "indices": {"bufferView": 0, "componentType": 5125},
            "values": {"bufferView": 1},
        });
        doc["buffers"] = json!([{"byteLength": 16, "uri": "data:application/octet-stream;base64,AAAAAAAAgD8AAIA/AACAPw=="}]);
        doc["bufferViews"] = json!([
            {"buffer": 0, "byteOffset": 0, "byteLength": 4},
            {"buffer": 0, "byteOffset": 4, "byteLength": 12},
        ]);
    }
    doc["accessors"] = json!([accessor]);
    serde_json::to_vec(&doc).unwrap()
}

/// A GLB of `nodes` mesh nodes that all draw one mesh of `primitives` one-triangle primitives.
fn shared_mesh(nodes: usize, primitives: usize) -> Vec<u8> {
    let bin: Vec<u8> = [0f32, 0., 0., 1., 0., 0., 0., 1., 0.]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let doc = json!({
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": (0..nodes).collect::<Vec<_>>()}],
        "nodes": (0..nodes).map(|_| json!({"mesh": 0})).collect::<Vec<_>>(),
        "meshes": [{"primitives": (0..primitives)
            .map(|_| json!({"attributes": {"POSITION": 0}}))
            .collect::<Vec<_>>()}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 1, 0]}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}],
        "buffers": [{"byteLength": 36}],
    });
    glb(&doc, &bin)
}

/// A `.gltf` whose `buffers` name `big.bin` `times` times, each with byteLength 36; the first
/// one holds a triangle.
fn one_file_many_buffers(times: usize) -> Vec<u8> {
    let doc = json!({
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 1, 0]}],
        "bufferViews": [{"buffer": times - 1, "byteLength": 36}],
        "buffers": (0..times).map(|_| json!({"uri": "big.bin", "byteLength": 36})).collect::<Vec<_>>(),
    });
    serde_json::to_vec(&doc).unwrap()
}

/// A skeleton of `bones` root nodes and one animation turning the first over `seconds`: two
/// keys, sampled at the caller's rate into frames of every bone.
fn long_animation(bones: usize, seconds: f32) -> Vec<u8> {
    let mut bin = Vec::new();
    for x in [0.0f32, seconds, 0., 0., 0., 1., 0., 0., 1., 0.] {
        bin.extend(x.to_le_bytes());
    }
    use base64::Engine;
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bin)
    );
    let doc = json!({
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": (0..bones).collect::<Vec<_>>()}],
        "nodes": (0..bones).map(|_| json!({})).collect::<Vec<_>>(),
        "buffers": [{"byteLength": 40, "uri": uri}],
        "bufferViews": [{"buffer": 0, "byteLength": 8}, {"buffer": 0, "byteOffset": 8, "byteLength": 32}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0], "max": [seconds]},
            {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC4"},
        ],
        "animations": [{"channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}],
                        "samplers": [{"input": 0, "output": 1}]}],
    });
    serde_json::to_vec(&doc).unwrap()
}

/// The JSON documents of issue 33, their format, and a size the machine loads in a moment.
fn json_document(case: &str) -> (Vec<u8>, Format) {
    match case {
        "gltf_chain" => (gltf_chain(200_000).into_bytes(), Format::Gltf),
        "gltf_small_nodes" => (gltf_small_nodes(500_000).into_bytes(), Format::Gltf),
        "dmf_vertices" => (
            dmf_vertices_with_an_unknown_key(500_000).into_bytes(),
            Format::DmfJson,
        ),
        other => panic!("no document {other}"),
    }
}

/// The cases a child runs, by name.
fn run_case(case: &str, dir: &Path, max_bytes: u64) -> String {
    if let Some(document) = case.strip_prefix("json_") {
        let (bytes, format) = json_document(document);
        return report(Model::load(&bytes, &gltf_options(format, max_bytes)));
    }
    match case {
        "baseline" => report(Model::load(
            &viewless_positions(3, false),
            &gltf_options(Format::Gltf, 0),
        )),
        "viewless_1m_16mib" => report(Model::load(
            &viewless_positions(1_000_000, false),
            &gltf_options(Format::Gltf, 16 * MIB),
        )),
        "viewless_sparse_1m_16mib" => report(Model::load(
            &viewless_positions(1_000_000, true),
            &gltf_options(Format::Gltf, 16 * MIB),
        )),
        "viewless_3m_64mib" => report(Model::load(
            &viewless_positions(3_000_000, false),
            &gltf_options(Format::Gltf, 64 * MIB),
        )),
        "shared_mesh_128mib" => report(Model::load(
            &shared_mesh(1000, 3000),
            &gltf_options(Format::Glb, 128 * MIB),
        )),
        "shared_mesh_900k_128mib" => report(Model::load(
            &shared_mesh(1000, 30_000),
            &gltf_options(Format::Glb, 128 * MIB),
        )),
        "one_file_2000_buffers_100mib" => report(Model::load_file(
            dir.join("many.gltf"),
            &gltf_options(Format::Gltf, 100 * MIB),
        )),
        // No limit of the caller's: only the address space stops it.
        "viewless_2g_unlimited" => report(Model::load(
            &viewless_positions(200_000_000, false),
            &gltf_options(Format::Gltf, u64::MAX),
        )),
        // An IQM of 4,294,967,295 frames without channels: frames that take nothing in the
        // file, and hundreds of gigabytes as the model's records.
        "iqm_frames_4g_unlimited" => report(Model::load(
            &std::fs::read(dir.join("frames.iqm")).unwrap(),
            &gltf_options(Format::Iqm, u64::MAX),
        )),
        // 65,001 frames of 20,000 bones: 62 GB of poses from 80 KB.
        "sampled_62g_unlimited" => report(Model::load(
            &long_animation(20_000, 65.0),
            &LoadOptions {
                sample_fps: 1000.0,
                ..gltf_options(Format::Gltf, u64::MAX)
            },
        )),
        other => panic!("no case {other}"),
    }
}

/// The child's side: runs the case `OSSA_ALLOC_CASE` names, and does nothing in a normal run.
#[test]
fn child_entry() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    if let Ok(bytes) = std::env::var(ADDRESS_SPACE) {
        let bytes: u64 = bytes.parse().unwrap();
        let limit = libc::rlimit {
            rlim_cur: bytes as libc::rlim_t,
            rlim_max: bytes as libc::rlim_t,
        };
        // SAFETY: a valid rlimit value for this process's own address space.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
    }
    let dir = PathBuf::from(std::env::var(DIR).unwrap());
    let max_bytes: u64 = std::env::var(MAX_BYTES).map_or(0, |m| m.parse().unwrap());
    let line = run_case(&case, &dir, max_bytes);
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .map(|v| v.trim().parse().unwrap())
        .expect("VmHWM in /proc/self/status");
    let mut out = std::io::stdout().lock();
    writeln!(out, "OUTCOME {} {line}", kib * 1024).unwrap();
    out.flush().unwrap();
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ossa-alloc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What the child holds before it loads anything: the test binary and a tiny model.
fn baseline(dir: &Path) -> u64 {
    let b = in_child("baseline", dir, None);
    assert_eq!(b.result, "OK", "{b:?}");
    b.peak
}

/// Within the caller's limit, as issue 33 measures it: 1.25x the limit over what the process
/// holds without the load.
fn within(o: &Outcome, max_bytes: u64, base: u64) {
    assert!(
        o.peak <= base + max_bytes + max_bytes / 4,
        "{o:?}: over 1.25x the limit of {max_bytes} bytes above the {base}-byte baseline"
    );
}

#[test]
fn an_accessor_without_a_buffer_view_is_charged_before_it_is_made() {
    let dir = scratch("viewless");
    let base = baseline(&dir);
    for (case, max) in [
        ("viewless_1m_16mib", 16 * MIB),
        ("viewless_sparse_1m_16mib", 16 * MIB),
        ("viewless_3m_64mib", 64 * MIB),
    ] {
        let o = in_child(case, &dir, None);
        assert_eq!(o.result, "OSSA_ERR_LIMIT", "{case}: {o:?}");
        assert!(o.detail.contains("limit of"), "{case}: {o:?}");
        within(&o, max, base);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn nodes_sharing_a_mesh_of_many_primitives_stay_within_the_limit() {
    let dir = scratch("shared");
    let base = baseline(&dir);
    for case in ["shared_mesh_128mib", "shared_mesh_900k_128mib"] {
        let o = in_child(case, &dir, None);
        assert_eq!(o.result, "OSSA_ERR_LIMIT", "{case}: {o:?}");
        within(&o, 128 * MIB, base);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_named_by_many_buffers_is_read_once_and_only_as_far_as_they_need() {
    let dir = scratch("buffers");
    let base = baseline(&dir);
    let mut big = vec![0u8; 40 << 20];
    for (i, x) in [0f32, 0., 0., 1., 0., 0., 0., 1., 0.].iter().enumerate() {
        big[i * 4..i * 4 + 4].copy_from_slice(&x.to_le_bytes());
    }
    std::fs::write(dir.join("big.bin"), &big).unwrap();
    drop(big);
    std::fs::write(dir.join("many.gltf"), one_file_many_buffers(2000)).unwrap();
    let o = in_child("one_file_2000_buffers_100mib", &dir, None);
    assert_eq!(o.result, "OK", "{o:?}");
    assert!(o.detail.starts_with("meshes=1 vertices=3 "), "{o:?}");
    // Thirty-six bytes of the file are read, not its 40 MB, let alone 2,000 times.
    assert!(o.peak <= base + 16 * MIB, "{o:?} over {base} + 16 MiB");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn iqm_frames_the_machine_cannot_hold_are_an_error_not_an_abort() {
    let Some(corpus) = corpus::corpus_subdir(
        "iqm",
        "iqm_frames_the_machine_cannot_hold_are_an_error_not_an_abort",
    ) else {
        return;
    };
    let mut b = std::fs::read(corpus.join("rea_player_dead.iqm")).unwrap();
    let field = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    // num_framechannels 0: every frame is free in the file; num_frames the most a u32 holds,
    // no bounds.
    assert_eq!(field(&b, 96), 0);
    b[92..96].copy_from_slice(&u32::MAX.to_le_bytes());
    b[104..108].copy_from_slice(&0u32.to_le_bytes());
    let dir = scratch("iqm_frames");
    std::fs::write(dir.join("frames.iqm"), &b).unwrap();
    let base = baseline(&dir);
    let o = in_child(
        "iqm_frames_4g_unlimited",
        &dir,
        Some(base + 512 * MIB + (64 << 20)),
    );
    assert_eq!(o.result, "OSSA_ERR_OUT_OF_MEMORY", "{o:?}");
    let want = format!(
        "4294967296 values of {} bytes for the frames could not be allocated",
        size_of::<ossa::Frame>()
    );
    assert!(o.detail.contains(&want), "{o:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_allocation_the_machine_cannot_give_is_an_error_not_an_abort() {
    let dir = scratch("rlimit");
    let base = baseline(&dir);
    // 200 million vertices of zeros want 2.4 GB for positions alone; the child may have
    // its baseline and 512 MiB more.
    for case in ["viewless_2g_unlimited", "sampled_62g_unlimited"] {
        let o = in_child(case, &dir, Some(base + 512 * MIB + (64 << 20)));
        assert_eq!(o.result, "OSSA_ERR_OUT_OF_MEMORY", "{case}: {o:?}");
        assert!(o.detail.contains("could not be allocated"), "{case}: {o:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 33: each JSON-based format with `max_bytes` just below what a file needs (refused) and
/// at it (loaded), the process growing no more than 1.25x the limit either way.
#[test]
fn json_documents_keep_to_a_limit_just_below_and_at_what_they_need() {
    if cfg!(debug_assertions) {
        eprintln!("skipped in debug builds: documents of issue 33's size load slowly there");
        return;
    }
    let dir = scratch("json");
    let base = baseline(&dir);
    for document in ["gltf_chain", "gltf_small_nodes", "dmf_vertices"] {
        let (bytes, format) = json_document(document);
        let needs = least_limit(document, |limit| {
            Model::load(&bytes, &gltf_options(format, limit))
        });
        let case = format!("json_{document}");
        let below = in_child_with(&case, &dir, None, needs - 1);
        assert_eq!(below.result, "OSSA_ERR_LIMIT", "{case}: {below:?}");
        within(&below, needs - 1, base);
        let at = in_child_with(&case, &dir, None, needs);
        assert_eq!(at.result, "OK", "{case}: {at:?}");
        within(&at, needs, base);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_codes_reported_are_the_librarys() {
    // The outcome line uses the code's C name, so the assertions above read as the C API does.
    assert_eq!(ErrorCode::Limit.name(), "OSSA_ERR_LIMIT");
    assert_eq!(ErrorCode::OutOfMemory.name(), "OSSA_ERR_OUT_OF_MEMORY");
}
