//! Sidecars count against the load's memory limit (`LoadOptions::max_bytes`) with the model: a
//! file over what is left is not read at all, scenes are charged as they are parsed, a scene name
//! keeps at most 63 bytes. A `.framegroups` that does not fit is a warning (the model keeps its
//! own scenes) and strict mode's error; a skeleton that does not fit fails the load.

#[allow(dead_code)]
mod counting_alloc;
mod memory_fs;
use memory_fs::MemoryFs;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use counting_alloc::peak_of;
use ossa::io::FileSystem;
use ossa::synth::TubeRig;
use ossa::{ErrorCode, LoadOptions, Model, dpm};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

const LIMIT: u64 = 1 << 20;

/// A load that fails on a file it must not read takes far less than this; reading and parsing
/// 100 MB of scenes took 13 s.
const HANG: Duration = Duration::from_secs(5);

fn tube_dpm() -> Vec<u8> {
    let rig = TubeRig {
        frames: 12,
        ..TubeRig::default()
    };
    dpm::write(&rig.build().unwrap()).unwrap()
}

/// 100 MB of `0 1` lines: 25 million one-frame scenes.
fn scene_bomb() -> Vec<u8> {
    b"0 1\n".repeat(25_000_000)
}

fn dpm_with(framegroups: Vec<u8>) -> MemoryFs {
    MemoryFs::from_files([
        ("m/tube.dpm".to_owned(), tube_dpm()),
        ("m/tube.dpm.framegroups".to_owned(), framegroups),
    ])
}

fn limited(io: Option<&dyn FileSystem>, strict: bool) -> LoadOptions<'_> {
    LoadOptions {
        io,
        strict,
        max_bytes: LIMIT,
        ..LoadOptions::default()
    }
}

fn warnings(model: &Model) -> Vec<String> {
    model.warnings().iter().map(|w| w.to_string()).collect()
}

/// The scenes of the DPM without its `.framegroups`: one per frame.
fn check_per_frame_scenes(model: &Model) {
    assert_eq!(model.animations().len(), 12);
    for (i, a) in model.animations().iter().enumerate() {
        assert_eq!((a.first_frame, a.frame_count), (i as u32, 1));
    }
}

/// `message` is the refusal of a file of `size` bytes at `path` (ending so), before reading it.
fn check_refused(message: &str, path: &str, size: usize) {
    let head = format!("{path} holds {size} bytes, more than the ");
    assert!(message.contains(&head), "{message}");
    assert!(
        message.contains(" bytes the memory limit leaves for it"),
        "{message}"
    );
}

/// Loads `path` within the limit, measuring the heap it takes and the time.
fn measured(path: impl Into<PathBuf>, options: &LoadOptions) -> (ossa::Result<Model>, usize) {
    let path = path.into();
    let start = Instant::now();
    let (result, peak) = peak_of(|| Model::load_file(&path, options));
    assert!(start.elapsed() < HANG, "{:?}", start.elapsed());
    (result, peak)
}

#[test]
fn a_framegroups_over_the_limit_is_not_read_from_the_callers_filesystem() {
    let fs = dpm_with(scene_bomb());
    let (model, peak) = measured("m/tube.dpm", &limited(Some(&fs), false));
    let model = model.unwrap();
    check_per_frame_scenes(&model);
    let warned = warnings(&model);
    assert_eq!(warned.len(), 1, "{warned:?}");
    check_refused(&warned[0], "m/tube.dpm.framegroups", 100_000_000);
    assert!(
        warned[0].ends_with("; the file is not used, every frame is a scene of its own"),
        "{}",
        warned[0]
    );
    // The model alone, well inside the limit.
    assert!(peak < LIMIT as usize, "{peak}");

    let (e, _) = measured("m/tube.dpm", &limited(Some(&fs), true));
    let e = e.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    check_refused(&e.to_string(), "m/tube.dpm.framegroups", 100_000_000);
}

#[test]
fn a_framegroups_over_the_limit_is_not_read_from_disk() {
    let dir = std::env::temp_dir().join(format!("ossa-sidecar-limits-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tube.dpm"), tube_dpm()).unwrap();
    std::fs::write(dir.join("tube.dpm.framegroups"), scene_bomb()).unwrap();
    let (model, peak) = measured(dir.join("tube.dpm"), &limited(None, false));
    let model = model.unwrap();
    check_per_frame_scenes(&model);
    let warned = warnings(&model);
    assert_eq!(warned.len(), 1, "{warned:?}");
    let path = dir.join("tube.dpm.framegroups");
    check_refused(&warned[0], &path.to_string_lossy(), 100_000_000);
    assert!(peak < LIMIT as usize, "{peak}");

    let (e, _) = measured(dir.join("tube.dpm"), &limited(None, true));
    let e = e.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    check_refused(&e.to_string(), &path.to_string_lossy(), 100_000_000);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scenes_stop_at_the_limit_as_they_are_read() {
    // 400 KB read, then 100,000 scenes of about 40 bytes each: ten times what is left.
    let fs = dpm_with(b"0 1\n".repeat(100_000));
    let (model, peak) = measured("m/tube.dpm", &limited(Some(&fs), false));
    let model = model.unwrap();
    check_per_frame_scenes(&model);
    let warned = warnings(&model);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].starts_with("tube.dpm.framegroups line ")
            && warned[0].contains(": the list of scenes needs ")
            && warned[0].contains("more than the limit of "),
        "{}",
        warned[0]
    );
    // The scenes up to the limit, and the vector's room to grow.
    assert!(peak < 2 * LIMIT as usize, "{peak}");

    let (e, _) = measured("m/tube.dpm", &limited(Some(&fs), true));
    let e = e.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    let line = e.line().unwrap();
    assert!((1_000..100_000).contains(&line), "{e}");
    assert!(
        e.to_string().starts_with(&format!(
            "tube.dpm.framegroups line {line}: scene {}: the list of scenes needs ",
            line - 1
        )),
        "{e}"
    );
}

#[test]
fn a_huge_scene_name_keeps_63_bytes() {
    let mut text = b"0 12 10 1 ".to_vec();
    text.resize(text.len() + 100_000_000, b'n');
    text.extend_from_slice(b" more\n");
    let fs = dpm_with(text);
    // Without a caller's limit, the 100 MB file fits the default one; its name does not.
    let options = LoadOptions {
        io: Some(&fs),
        ..LoadOptions::default()
    };
    // Memory is what this guards: the name was kept whole.
    let (model, peak) = peak_of(|| Model::load_file("m/tube.dpm", &options));
    let model = model.unwrap();
    assert_eq!(model.animations().len(), 1);
    assert_eq!(model.animations()[0].name.as_bytes(), [b'n'; 63]);
    assert_eq!(model.animations()[0].frame_count, 12);
    assert_eq!(
        warnings(&model),
        [
            "tube.dpm.framegroups line 1: scene 0 has a name of 100000000 bytes; its first 63 are kept"
        ]
    );
    assert!(peak < LIMIT as usize, "{peak}");

    let strict = LoadOptions {
        strict: true,
        ..options
    };
    let e = Model::load_file("m/tube.dpm", &strict).unwrap_err();
    assert_eq!(
        (e.code(), e.to_string()),
        (
            ErrorCode::Malformed,
            "tube.dpm.framegroups line 1: scene 0 has a name of 100000000 bytes; its first 63 are kept".to_owned()
        )
    );
}

/// An SKM with its skeleton beside it, the SKP padded to `skp_size` bytes.
fn skm_pair(skp_size: usize) -> MemoryFs {
    let model = TubeRig::default().build().unwrap();
    let mut skp = ossa::skm::write_skp(&model).unwrap();
    skp.resize(skp_size.max(skp.len()), 0);
    MemoryFs::from_files([
        (
            "m/tris.skm".to_owned(),
            ossa::skm::write_skm(&model).unwrap(),
        ),
        ("m/tris.skp".to_owned(), skp),
        (
            "m/big.skm".to_owned(),
            ossa::skm::write_skm(&model).unwrap(),
        ),
        ("m/big.cfg".to_owned(), b"//".repeat(1 << 20)),
    ])
}

#[test]
fn a_skeleton_over_the_limit_fails_the_load() {
    let fs = skm_pair(0);
    assert!(Model::load_file("m/tris.skm", &limited(Some(&fs), false)).is_ok());
    let fs = skm_pair(2 << 20);
    for strict in [false, true] {
        let (e, peak) = measured("m/tris.skm", &limited(Some(&fs), strict));
        let e = e.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Limit);
        check_refused(&e.to_string(), "m/tris.skp", 2 << 20);
        assert!(peak < LIMIT as usize, "{peak}");
    }
    // A .cfg is held while it is read: 2 MB of one is refused too.
    let e = Model::load_file("m/big.skm", &limited(Some(&fs), false)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    check_refused(&e.to_string(), "m/big.cfg", 2 << 20);
}
