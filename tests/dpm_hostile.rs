//! Broken and hostile DPM input: every truncation, bit flips, absurd counts and offsets, random
//! byte runs. Each must give a model whose invariants hold or a clean error, never a panic, and
//! loading must not allocate much more than the input's size.

mod common;

use common::*;
use ossa::{ErrorCode, Format, LoadOptions, Model};

mod counting_alloc;

use counting_alloc::{budget, peak_of};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn load(bytes: &[u8]) -> ossa::Result<Model> {
    Model::load(bytes, &LoadOptions::default())
}

fn tube_bytes() -> Vec<u8> {
    ossa::dpm::write(&small_tube().build().unwrap()).unwrap()
}

/// Loads hostile bytes: a model that passes its invariants, or an error of a clean kind. The
/// validator must agree: no problems for a file that loads, at least one for one that does not.
#[track_caller]
fn load_hostile(bytes: &[u8], what: &str) -> Option<ossa::Error> {
    let result = load(bytes);
    let report = ossa::validate(bytes, &LoadOptions::default());
    match result {
        Ok(m) => {
            check_invariants(&m, what);
            assert!(
                report.problems.is_empty(),
                "{what}: loads, yet {:?}",
                report.problems
            );
            assert!(report.model.is_some(), "{what}");
            None
        }
        Err(e) => {
            assert!(CLEAN.contains(&e.code()), "{what}: {e}");
            assert!(!e.detail().message.is_empty(), "{what}");
            assert!(
                !report.problems.is_empty(),
                "{what}: fails ({e}), validates clean"
            );
            assert!(report.model.is_none(), "{what}");
            Some(e)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Truncation
// ---------------------------------------------------------------------------------------------

#[test]
fn every_truncation_of_small_fixtures_is_a_clean_error() {
    let as_dpm = LoadOptions {
        format: Format::Dpm,
        ..LoadOptions::default()
    };
    let strict = LoadOptions {
        strict: true,
        ..LoadOptions::default()
    };
    for (name, bytes) in [("chain", chain_fixture().build().0), ("tube", tube_bytes())] {
        assert!(load(&bytes).is_ok(), "{name} whole");
        for len in 0..bytes.len() {
            let cut = &bytes[..len];
            let e = load(cut).unwrap_err();
            // Fewer than 16 bytes cannot show the id, so detection finds no format.
            let want = if len < 16 {
                ErrorCode::UnknownFormat
            } else {
                ErrorCode::Truncated
            };
            assert_eq!(e.code(), want, "{name} cut to {len}: {e}");
            if len >= 16 {
                // The error points at where the missing data starts, which is at most the end
                // of the file being read past (or the start of a structure beyond it).
                assert!(e.offset().is_some(), "{name} cut to {len}: {e}");
            }
            // Told it is a DPM, a short id prefix is simply too short.
            let e = Model::load(cut, &as_dpm).unwrap_err();
            assert_eq!(
                e.code(),
                ErrorCode::Truncated,
                "{name} as DPM cut to {len}: {e}"
            );
            // Strict mode reads the (now wrong) filesize first once the header is whole.
            let e = Model::load(cut, &strict).unwrap_err();
            if len >= 80 {
                assert_eq!(e.code(), ErrorCode::Malformed, "{name} strict {len}: {e}");
                assert_eq!(e.offset(), Some(20));
            } else {
                assert_eq!(e.code(), want, "{name} strict {len}: {e}");
            }
            let report = ossa::validate(cut, &LoadOptions::default());
            assert!(report.model.is_none());
            assert_eq!(report.problems.last().map(|e| e.code()), Some(want));
        }
    }
}

#[test]
fn corpus_truncations_are_clean_errors() {
    for file in ["dpm/xon_raptor_bomb.dpm", "dpm/xon_zombie.dpm"] {
        let Some(bytes) = corpus_file(file, "corpus_truncations_are_clean_errors") else {
            continue;
        };
        let n = bytes.len();
        let mut lengths: Vec<usize> = (0..200).map(|i| i * n / 200).collect();
        lengths.extend([1, 15, 16, 17, 79, 80, 81, n - 48, n - 4, n - 1]);
        for len in lengths {
            let e = load(&bytes[..len]).unwrap_err();
            let want = if len < 16 {
                ErrorCode::UnknownFormat
            } else {
                ErrorCode::Truncated
            };
            assert_eq!(e.code(), want, "{file} cut to {len}: {e}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Bit flips
// ---------------------------------------------------------------------------------------------

fn flip(name: &str, bytes: &[u8], positions: impl IntoIterator<Item = usize>) -> Tally {
    flip_bits(bytes, positions, |b, what| {
        load_hostile(b, &format!("{name}: {what}")).is_none()
    })
}

#[test]
fn single_bit_flips_in_small_fixtures_give_a_model_or_a_clean_error() {
    // The fixtures are about 1.2 KB, so every bit of every table and of the data is flipped.
    let (chain, _) = chain_fixture().build();
    let t = flip("chain", &chain, 0..chain.len());
    // Most flips land in float data and still load; flips in counts, offsets, the id and the
    // type do not.
    assert!(t.loaded > 0 && t.failed > 0, "chain: {t:?}");
    let tube = tube_bytes();
    let t = flip("tube", &tube, 0..tube.len());
    assert!(t.loaded > 0 && t.failed > 0, "tube: {t:?}");
}

#[test]
fn single_bit_flips_in_a_corpus_model() {
    let Some(bytes) = corpus_file(
        "dpm/xon_raptor_bomb.dpm",
        "single_bit_flips_in_a_corpus_model",
    ) else {
        return;
    };
    let raw = RawDpm::parse(&bytes).unwrap();
    // Header and the three tables in full, then a spread over the vertex and pose data.
    let tables = 80 + 40 * raw.bones.len() + 56 * raw.meshes.len() + 68 * raw.frames.len();
    flip("raptor_bomb tables", &bytes, 0..tables);
    let mut rng = XorShift::new(0x5eed_0001);
    let spread: Vec<usize> = (0..150)
        .map(|_| tables + rng.below(bytes.len() - tables))
        .collect();
    flip("raptor_bomb data", &bytes, spread);
}

// ---------------------------------------------------------------------------------------------
// Absurd counts and offsets
// ---------------------------------------------------------------------------------------------

const HUGE: [u32; 3] = [0xFFFF_FFFF, 0x7FFF_FFFF, 0x1000_0000];

/// The count fields of the chain fixture: header counts, mesh counts, per-vertex counts.
fn count_fields(l: &FxLayout) -> Vec<(String, usize)> {
    let mh = l.mesh_header(0);
    let mut f = vec![
        ("num_bones".to_owned(), 56),
        ("num_meshs".to_owned(), 60),
        ("num_frames".to_owned(), 64),
        ("num_verts".to_owned(), mh + 32),
        ("num_tris".to_owned(), mh + 36),
    ];
    for (v, &at) in l.meshes[0].vertices.iter().enumerate() {
        f.push((format!("vertex {v} numbones"), at));
    }
    f
}

#[test]
fn counts_near_u32_max_are_clean_errors_in_bounded_memory() {
    let (bytes, l) = chain_fixture().build();
    for (field, at) in count_fields(&l) {
        for v in HUGE {
            let mut b = bytes.clone();
            set_u32(&mut b, at, v);
            let (e, peak) = peak_of(|| load(&b).err());
            let e = e.unwrap_or_else(|| panic!("{field} = {v:#x} loaded"));
            assert!(
                matches!(e.code(), ErrorCode::Truncated | ErrorCode::Limit),
                "{field} = {v:#x}: {e}"
            );
            assert!(peak <= budget(b.len()), "{field} = {v:#x}: {peak} bytes");
            load_hostile(&b, &format!("{field} = {v:#x}"));
        }
    }
    // All counts absurd at once.
    let mut b = bytes.clone();
    for (_, at) in count_fields(&l) {
        set_u32(&mut b, at, 0x7FFF_FFFF);
    }
    let (e, peak) = peak_of(|| load(&b).err());
    assert_eq!(e.map(|e| e.code()), Some(ErrorCode::Truncated));
    assert!(peak <= budget(b.len()), "{peak}");
}

#[test]
fn offsets_outside_the_file_or_onto_other_data_are_clean_errors() {
    let (bytes, l) = chain_fixture().build();
    let n = bytes.len() as u32;
    let mh = l.mesh_header(0);
    let mut fields = vec![
        ("ofs_bones", 68),
        ("ofs_meshs", 72),
        ("ofs_frames", 76),
        ("ofs_verts", mh + 40),
        ("ofs_texcoords", mh + 44),
        ("ofs_indices", mh + 48),
        ("ofs_groupids", mh + 52),
    ];
    let pose_fields = ["frame 0 poses", "frame 1 poses", "frame 2 poses"];
    for (f, name) in pose_fields.iter().enumerate() {
        fields.push((name, l.frame_header(f) + 64));
    }
    let targets = [
        0,
        16,
        40,
        79,
        l.ofs_bones as u32 + 4,
        l.ofs_frames as u32,
        l.poses[1] as u32 + 8,
        l.meshes[0].indices as u32,
        n - 1,
        n,
        n + 1,
        0x7FFF_FFFF,
        0x8000_0000,
        0xFFFF_FFFC,
        0xFFFF_FFFF,
    ];
    for (name, at) in fields {
        let own = get_u32(&bytes, at);
        for t in targets.iter().copied().filter(|&t| t != own) {
            let mut b = bytes.clone();
            set_u32(&mut b, at, t);
            let what = format!("{name} = {t:#x}");
            let (r, peak) = peak_of(|| load(&b).err());
            let e = r.unwrap_or_else(|| panic!("{what}: loaded"));
            assert!(
                matches!(e.code(), ErrorCode::Truncated | ErrorCode::Malformed),
                "{what}: {e}"
            );
            assert!(e.offset().is_some(), "{what}: {e}");
            assert!(peak <= budget(b.len()), "{what}: {peak} bytes");
            load_hostile(&b, &what);
        }
    }
    // Pointing a table into the header is caught as sharing bytes when nothing else is wrong
    // first: frame 1's poses at byte 8 read finite floats (id text, counts as denormals).
    let mut b = bytes.clone();
    set_u32(&mut b, l.frame_header(1) + 64, 8);
    let e = load(&b).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert!(e.detail().message.contains("overlaps"), "{e}");
    // Frames whose poses follow one another are one structure to the overlap check, named by
    // its frames; a frame moved onto another's poses is named alone.
    assert_eq!(l.poses[1], l.poses[0] + 3 * 48);
    assert_eq!(l.poses[2], l.poses[1] + 3 * 48);
    let moved = [
        (
            mh + 44,
            l.poses[1] + 8,
            "mesh 0 texcoords",
            "overlaps frames 0 to 2 poses",
        ),
        (
            l.frame_header(2) + 64,
            l.poses[1] + 4,
            "frame 2 poses",
            "overlaps frames 0 to 1 poses",
        ),
    ];
    for (field, to, moved, overlapped) in moved {
        let mut b = bytes.clone();
        set_u32(&mut b, field, to as u32);
        let e = load(&b).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
        let message = &e.detail().message;
        assert!(message.contains(moved), "{e}");
        assert!(message.contains(overlapped), "{e}");
    }
    // A negative frame pose offset (the field is signed).
    let mut b = bytes.clone();
    set_u32(&mut b, l.frame_header(2) + 64, 0xFFFF_FF00);
    let e = load(&b).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert_eq!(e.offset(), Some((l.frame_header(2) + 64) as u64));
}

// ---------------------------------------------------------------------------------------------
// Random byte runs
// ---------------------------------------------------------------------------------------------

#[test]
fn random_byte_runs_give_a_model_or_a_clean_error() {
    let mut rng = XorShift::new(0x00c0_ffee);
    let mut tally = Tally::default();
    for (name, base) in [("chain", chain_fixture().build().0), ("tube", tube_bytes())] {
        // The id is left alone half the time, so that most inputs reach the deeper checks.
        for keep in [20, 0] {
            let t = random_runs(&base, &mut rng, 375, keep, |b, what| {
                load_hostile(b, &format!("{name}: {what}")).is_none()
            });
            tally.loaded += t.loaded;
            tally.failed += t.failed;
        }
    }
    assert!(tally.failed > 0, "{tally:?}");

    // Pure noise behind a valid id and type.
    for i in 0..200 {
        let mut b = vec![0u8; 80 + rng.below(2000)];
        rng.fill(&mut b);
        b[..16].copy_from_slice(MAGIC);
        set_u32(&mut b, 16, 2);
        load_hostile(&b, &format!("noise input {i}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------------

/// A DPM of one bone, no meshes and `frames` frames: the most records per byte a file can have.
fn many_frames(frames: usize) -> Vec<u8> {
    FxModel {
        bones: vec![FxBone {
            name: b"b".to_vec(),
            parent: -1,
            flags: 0,
        }],
        meshes: vec![],
        frames: (0..frames)
            .map(|f| FxFrame {
                name: format!("f{f}").into_bytes(),
                mins: [0.0; 3],
                maxs: [0.0; 3],
                yaw_radius: 0.0,
                radius: 0.0,
                poses: vec![IDENT],
            })
            .collect(),
    }
    .build()
    .0
}

/// One bone, one frame, one mesh of `verts` one-influence vertices (a static model, so the
/// loader also keeps a skinned copy).
fn many_vertices(verts: usize) -> Vec<u8> {
    let v = FxInfluence {
        origin: [1.0, 2.0, 3.0],
        weight: 1.0,
        normal: [0.0, 0.0, 1.0],
        bone: 0,
    };
    FxModel {
        bones: vec![FxBone {
            name: b"b".to_vec(),
            parent: -1,
            flags: 0,
        }],
        meshes: vec![FxMesh {
            shader: b"s".to_vec(),
            vertices: vec![vec![v]; verts],
            texcoords: vec![[0.0; 2]; verts],
            indices: (0..verts as u32 / 3 * 3).collect(),
            group_ids: vec![0; verts / 3],
        }],
        frames: vec![FxFrame {
            name: b"f".to_vec(),
            mins: [0.0; 3],
            maxs: [0.0; 3],
            yaw_radius: 0.0,
            radius: 0.0,
            poses: vec![IDENT],
        }],
    }
    .build()
    .0
}

#[test]
fn memory_is_bounded_by_the_input_size() {
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    let (chain, l) = chain_fixture().build();
    for len in (0..chain.len()).step_by(7) {
        inputs.push((format!("chain cut to {len}"), chain[..len].to_vec()));
    }
    for (field, at) in count_fields(&l) {
        for v in HUGE {
            let mut b = chain.clone();
            set_u32(&mut b, at, v);
            inputs.push((format!("{field} = {v:#x}"), b));
        }
    }
    // Valid files with many small records, 1 KiB to 64 KiB.
    for frames in [8, 500] {
        inputs.push((format!("{frames} frames"), many_frames(frames)));
    }
    for verts in [20, 1500] {
        inputs.push((format!("{verts} vertices"), many_vertices(verts)));
    }
    // The same with a count pushed past the data.
    let mut b = many_frames(500);
    set_u32(&mut b, 64, 0x7FFF_FFFF);
    inputs.push(("500 frames, count 2^31-1".into(), b));
    let mut b = many_vertices(1500);
    set_u32(&mut b, 80 + 40 + 32, 0xFFFF_FFFF);
    inputs.push(("1500 vertices, count 2^32-1".into(), b));
    // Hostile 1 KiB: noise behind a header whose counts claim a huge model.
    let mut rng = XorShift::new(0x0001_0000);
    for i in 0..20 {
        let mut b = vec![0u8; 1024];
        rng.fill(&mut b);
        b[..16].copy_from_slice(MAGIC);
        set_u32(&mut b, 16, 2);
        set_u32(&mut b, 20, 1024);
        for k in 0..3 {
            set_u32(&mut b, 56 + 4 * k, HUGE[(i + k) % 3] >> (i % 4));
        }
        set_u32(&mut b, 68, 80);
        inputs.push((format!("1 KiB noise {i}"), b));
    }

    let mut loaded = 0;
    for (what, bytes) in &inputs {
        let (result, peak) = peak_of(|| load(bytes).map(|m| m.info()));
        loaded += usize::from(result.is_ok());
        assert!(
            peak <= budget(bytes.len()),
            "{what}: {peak} bytes for {} input bytes",
            bytes.len()
        );
        if bytes.len() <= 1024 {
            assert!(peak < 4 << 20, "{what}: {peak} bytes for a 1 KiB input");
        }
        let (report, peak) = peak_of(|| {
            ossa::validate(bytes, &LoadOptions::default())
                .problems
                .len()
        });
        assert!(
            peak <= budget(bytes.len()),
            "{what}: validate used {peak} bytes ({report} problems)"
        );
    }
    // The valid inputs did load, so their (larger) models were measured too.
    assert_eq!(loaded, 4);

    // The counter works: holding a 1 MiB buffer shows up.
    let (_, peak) = peak_of(|| std::hint::black_box(vec![1u8; 1 << 20]).len());
    assert!(peak >= 1 << 20, "{peak}");
}
