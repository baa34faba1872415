//! Broken and hostile IQM input, made from every corpus IQM: truncations, bit flips across the
//! header and tables, random byte runs, and hand-made header surgery (counts past the file,
//! frames without channels, joints out of order, wild channel scales). Each gives a model whose
//! invariants hold or a clean error with the right code, never a panic, within a memory budget.

mod corpus;
mod counting_alloc;
mod iqm_corpus_files;
mod load_options;
mod sweep;

use counting_alloc::{budget, peak_of};
use iqm_corpus_files::corpus_iqms;
use load_options::{options as opts, strict};
use ossa::{ErrorCode, Format, LoadOptions, Model};
use sweep::{CLEAN, XorShift, flip_bits, flip_positions, lengths, random_runs};

/// Debug builds (the README's test command) sweep a sample: the release run sweeps it all.
const DEBUG: bool = cfg!(debug_assertions);

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

/// Loads `bytes` in default, strict and validate mode: each gives a sound model or a clean
/// error, without a panic and within the memory budget: the default limit for a file of this
/// size, which frames without channels (free in the file) can reach.
fn survive(bytes: &[u8], what: &str) -> Option<ossa::Error> {
    let mut first = None;
    let allowed =
        budget(bytes.len()).max(LoadOptions::default().max_bytes_for(bytes.len()) as usize);
    for options in [opts(Format::Iqm), strict(Format::Iqm)] {
        let (r, peak) = peak_of(|| Model::load(bytes, &options));
        assert!(peak <= allowed, "{what}: {peak} bytes of heap");
        match r {
            Ok(m) => sweep::check_invariants(&m, what),
            Err(e) => {
                assert!(CLEAN.contains(&e.code()), "{what}: {e}");
                first.get_or_insert(e);
            }
        }
    }
    let report = ossa::validate(bytes, &opts(Format::Iqm));
    match &report.model {
        Some(m) => {
            assert!(report.problems.is_empty(), "{what}");
            sweep::check_invariants(m, what);
        }
        None => assert!(
            !report.problems.is_empty(),
            "{what}: no model and no problem"
        ),
    }
    for p in &report.problems {
        assert!(CLEAN.contains(&p.code()), "{what}: {p}");
    }
    first
}

#[test]
fn every_corpus_file_cut_short_fails_cleanly() {
    for (name, bytes) in corpus_iqms("every_corpus_file_cut_short_fails_cleanly") {
        if DEBUG && bytes.len() > 64 * 1024 {
            continue;
        }
        for n in lengths(bytes.len(), if DEBUG { 12 } else { 150 }) {
            if n == bytes.len() {
                continue;
            }
            let what = format!("{name} cut at {n}");
            let cut = &bytes[..n];
            // A cut file is refused: its header's tables run past the end, or the magic is
            // incomplete (then without a name it is no known format).
            match survive(cut, &what) {
                Some(e) => assert!(
                    matches!(e.code(), ErrorCode::Truncated | ErrorCode::UnknownFormat)
                        || (n >= 124 && e.code() == ErrorCode::Malformed),
                    "{what}: {e}"
                ),
                None => panic!("{what} loaded"),
            }
        }
    }
}

#[test]
fn bit_flips_in_every_corpus_file_fail_cleanly() {
    let mut rng = XorShift::new(0x9e37_79b9_7f4a_7c15);
    for (name, bytes) in corpus_iqms("bit_flips_in_every_corpus_file_fail_cleanly") {
        // The whole header and the first tables, then positions spread over the rest.
        if DEBUG && bytes.len() > 64 * 1024 {
            continue;
        }
        let positions = flip_positions(bytes.len(), &mut rng, if DEBUG { 24 } else { 400 });
        let tally = flip_bits(&bytes, positions, |b, what| {
            survive(b, &format!("{name} {what}")).is_none()
        });
        assert!(tally.failed > 0, "{name}: every flip loaded");
    }
}

#[test]
fn random_byte_runs_fail_cleanly() {
    let mut rng = XorShift::new(0x2545_f491_4f6c_dd1d);
    for (name, bytes) in corpus_iqms("random_byte_runs_fail_cleanly") {
        if bytes.len() > 64 * 1024 {
            continue;
        }
        random_runs(
            &bytes,
            &mut rng,
            if DEBUG { 6 } else { 60 },
            16,
            |b, what| survive(b, &format!("{name} {what}")).is_none(),
        );
    }
}

fn set_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Header field offsets.
const NUM_JOINTS: usize = 68;
const OFS_JOINTS: usize = 72;
const NUM_FRAMES: usize = 92;
const NUM_FRAMECHANNELS: usize = 96;
const OFS_BOUNDS: usize = 104;
const NUM_MESHES: usize = 36;
const OFS_MESHES: usize = 40;

fn corpus_file(name: &str, test: &str) -> Option<Vec<u8>> {
    let dir = corpus::corpus_subdir("iqm", test)?;
    Some(std::fs::read(dir.join(name)).unwrap())
}

#[test]
fn frames_without_channels_are_charged_to_the_memory_limit() {
    let Some(mut b) = corpus_file(
        "rea_player_dead.iqm",
        "frames_without_channels_are_charged_to_the_memory_limit",
    ) else {
        return;
    };
    // 78 poses and no channels: every frame costs nothing in the file.
    assert_eq!(u32_at(&b, NUM_FRAMECHANNELS), 0);
    set_u32(&mut b, NUM_FRAMES, 4_000_000);
    let (r, peak) = peak_of(|| Model::load(&b, &opts(Format::Iqm)));
    let e = r.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    assert!(peak < 1 << 20, "{peak} bytes before refusing");
    // Within a caller's limit that allows them, they load. Each frame holds its name and
    // bounds (its poses stay the file's channels): 2,000 of them do not fit 128 KiB.
    set_u32(&mut b, NUM_FRAMES, 2000);
    let m = Model::load(&b, &opts(Format::Iqm)).unwrap();
    assert_eq!(m.frames().len(), 2001);
    let tight = LoadOptions {
        max_bytes: 128 << 10,
        ..opts(Format::Iqm)
    };
    assert_eq!(
        Model::load(&b, &tight).unwrap_err().code(),
        ErrorCode::Limit
    );
}

#[test]
fn meshes_claiming_every_vertex_are_charged_before_they_are_built() {
    let Some(b) = corpus_file(
        "ksdk_v_knife.iqm",
        "meshes_claiming_every_vertex_are_charged_before_they_are_built",
    ) else {
        return;
    };
    // 4,000 meshes each claiming all 16,824 vertices: 67 million vertices from a 1 MB file.
    let nv = u32_at(&b, 48);
    let mut out = b.clone();
    let ofs = out.len() as u32;
    for _ in 0..4000 {
        for v in [0, 0, 0, nv, 0, 0] {
            out.extend_from_slice(&u32::to_le_bytes(v));
        }
    }
    set_u32(&mut out, NUM_MESHES, 4000);
    set_u32(&mut out, OFS_MESHES, ofs);
    let size = out.len() as u32;
    set_u32(&mut out, 20, size);
    let (r, peak) = peak_of(|| Model::load(&out, &opts(Format::Iqm)));
    assert_eq!(r.unwrap_err().code(), ErrorCode::Limit);
    assert!(peak < 8 * out.len(), "{peak} bytes before refusing");
}

#[test]
fn a_joint_whose_parent_is_not_before_it_is_refused() {
    let Some(mut b) = corpus_file(
        "lsz_mrfixit.iqm",
        "a_joint_whose_parent_is_not_before_it_is_refused",
    ) else {
        return;
    };
    let joints = u32_at(&b, OFS_JOINTS) as usize;
    assert_eq!(u32_at(&b, NUM_JOINTS), 75);
    // Joint 3's parent made joint 40.
    set_u32(&mut b, joints + 3 * 48 + 4, 40);
    let e = Model::load(&b, &opts(Format::Iqm)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed);
    assert_eq!(e.offset(), Some((joints + 3 * 48 + 4) as u64), "{e}");
    assert!(e.to_string().contains("joint 3 (SpineIK1)"), "{e}");
    // Validation names it as well, and goes on.
    let report = ossa::validate(&b, &opts(Format::Iqm));
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.to_string().contains("parent 40"))
    );
}

#[test]
fn bounds_past_the_end_are_truncated_and_name_their_table() {
    let Some(mut b) = corpus_file(
        "lsz_mrfixit.iqm",
        "bounds_past_the_end_are_truncated_and_name_their_table",
    ) else {
        return;
    };
    let near_end = b.len() as u32 - 64;
    set_u32(&mut b, OFS_BOUNDS, near_end);
    let e = Model::load(&b, &opts(Format::Iqm)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Truncated);
    assert!(
        e.to_string().contains("bounds table (101 of 32 bytes"),
        "{e}"
    );
}
