//! Hostile input for every format, forced and detected: fixed-seed random 1 KiB inputs, and
//! inputs made from the writers' files of at most 1 KiB with random corruption. Each must end in
//! a clean error or in a model that keeps its invariants and passes validation (the checks of
//! `fuzz/src/check.rs`, which the fuzz targets run too), and no single load may hold 64 MiB at
//! once (nor, in fact, more than the hostile-input budget of `counting_alloc`, about 1 MiB).
//! And a `max_bytes` below what a valid model needs is refused as `Limit` by every format that
//! has a writer.

#[path = "../fuzz/src/check.rs"]
mod check;
mod common;
mod counting_alloc;
#[path = "../fuzz/src/samples.rs"]
mod samples;

use common::XorShift;
use common::invariants;
use counting_alloc::budget;
use ossa::{ErrorCode, Format, LoadOptions, Model};
use samples::{Sample, WRITERS, models, samples_of};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

/// Inputs of each kind per format.
const INPUTS: usize = 200;
/// Their size.
const SIZE: usize = 1024;
/// Most memory one load of a 1 KiB input may hold at once. Each load is held to the tighter
/// hostile-input budget of `counting_alloc` ([`peak`]).
const PEAK: usize = 64 << 20;

/// Most memory the load of `input` may hold at once.
fn peak(input: &[u8]) -> usize {
    let allowed = budget(input.len());
    assert!(allowed < PEAK);
    allowed
}

fn byte(rng: &mut XorShift) -> u8 {
    (rng.next_u64() >> 56) as u8
}

/// How many inputs loaded and how many failed, by error code.
#[derive(Default)]
struct Tally {
    loaded: usize,
    errors: std::collections::BTreeMap<String, usize>,
}

impl Tally {
    fn load(&mut self, input: &[u8], format: Format) {
        match check::load(input, format, peak(input)) {
            Some(_) => self.loaded += 1,
            None => {
                let code = Model::load(input, &check::options(format, false))
                    .expect_err("the load failed")
                    .code();
                *self.errors.entry(code.name().to_owned()).or_default() += 1;
            }
        }
    }
}

/// A sample's bytes changed in 1 to 8 places: bytes overwritten, 32-bit
/// words set to counts and offsets that break things, bytes inserted or removed, the end cut.
fn corrupt(rng: &mut XorShift, sample: &Sample) -> Vec<u8> {
    let mut d = sample.bytes.clone();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(d.len().max(1));
        match rng.below(5) {
            0 => {
                if let Some(b) = d.get_mut(at) {
                    *b = byte(rng);
                }
            }
            1 => {
                let word: u32 = [
                    0,
                    1,
                    0x7FFF_FFFF,
                    0x8000_0000,
                    u32::MAX,
                    rng.next_u64() as u32,
                ][rng.below(6)];
                let end = (at + 4).min(d.len());
                if let Some(w) = d.get_mut(at..end) {
                    let bytes = word.to_le_bytes();
                    w.copy_from_slice(&bytes[..w.len()]);
                }
            }
            2 => {
                if d.len() < SIZE {
                    d.insert(at, byte(rng));
                }
            }
            3 => {
                if at < d.len() {
                    d.remove(at);
                }
            }
            _ => d.truncate(at),
        }
    }
    d
}

/// Random bytes; every other input starts with the first bytes of a sample, so that the loader
/// gets past the magic number or first line.
fn random(rng: &mut XorShift, i: usize, samples: &[Sample]) -> Vec<u8> {
    let mut d: Vec<u8> = (0..SIZE).map(|_| byte(rng)).collect();
    if i % 2 == 1
        && let Some(s) = samples.get(rng.below(samples.len()))
    {
        let keep = s.bytes.len().min(4 + rng.below(60));
        d[..keep].copy_from_slice(&s.bytes[..keep]);
    }
    d
}

/// The samples of `format` (all for Auto) of at most 1 KiB.
fn small_samples(format: Format) -> Vec<Sample> {
    let samples: Vec<Sample> = samples_of(format)
        .into_iter()
        .filter(|s| s.bytes.len() <= SIZE)
        .collect();
    assert!(
        !samples.is_empty(),
        "no sample of {} within 1 KiB",
        format.name()
    );
    samples
}

fn hostile(format: Format, seed: u64) -> Tally {
    let samples = small_samples(format);
    let mut rng = XorShift::new(seed);
    let mut tally = Tally::default();
    for i in 0..INPUTS {
        tally.load(&random(&mut rng, i, &samples), format);
        let corrupted = corrupt(&mut rng, &samples[i % samples.len()]);
        tally.load(&corrupted, format);
    }
    eprintln!(
        "{}: {} of {} inputs loaded; errors {:?}",
        format.name(),
        tally.loaded,
        2 * INPUTS,
        tally.errors
    );
    tally
}

#[test]
fn every_format_forced_and_detected_ends_hostile_input_cleanly() {
    // glTF has no writer sample within the 1 KiB these inputs keep to (its JSON alone is larger):
    // tests/gltf_import.rs cuts and flips a small GLB of its own.
    let read = Format::ALL
        .into_iter()
        .enumerate()
        .filter(|(_, f)| !matches!(f, Format::Glb | Format::Gltf));
    for (i, format) in read {
        let tally = hostile(format, 0x5EED_0000 + i as u64);
        let errors: usize = tally.errors.values().sum();
        assert_eq!(tally.loaded + errors, 2 * INPUTS);
        // Random bytes never make a model: every format refuses some of what it is given.
        assert!(errors > 0, "{}: every input loaded", format.name());
    }
}

#[test]
fn corrupted_writer_files_still_load_sometimes() {
    // Files the writers make load before corruption, and a few corruptions (a texture
    // coordinate, a bound) leave them loadable: the corruption tests reach past the headers.
    for format in [
        Format::Dpm,
        Format::Skm,
        Format::Skp,
        Format::SimsSkn,
        Format::SimsCmx,
    ] {
        let samples = small_samples(format);
        for s in &samples {
            assert!(
                check::load(&s.bytes, format, peak(&s.bytes)).is_some(),
                "{} sample from {} does not load",
                format.name(),
                s.origin
            );
        }
        let mut rng = XorShift::new(77);
        let loaded = (0..INPUTS)
            .filter(|&i| {
                let input = corrupt(&mut rng, &samples[i % samples.len()]);
                check::load(&input, format, peak(&input)).is_some()
            })
            .count();
        assert!(loaded > 0, "{}: no corrupted file loads", format.name());
    }
}

fn extension(format: Format) -> &'static str {
    match format {
        Format::Dpm => ".dpm",
        Format::Skm => ".skm",
        Format::Skp => ".skp",
        Format::SimsSkn => ".skn",
        Format::SimsBmf => ".bmf",
        Format::SimsMsh => ".msh",
        Format::SimsCmx => ".cmx",
        Format::SimsBcf => ".cmx.bcf",
        Format::Mm2Skel => ".skel",
        Format::Mm2Mod => ".mod",
        Format::Dmf | Format::DmfJson => ".dmf",
        Format::Glb => ".glb",
        Format::Gltf => ".gltf",
        Format::Iqm => ".iqm",
        Format::Auto => "",
    }
}

/// Every file a writer makes of a sample model, with the model it loads as.
fn written() -> Vec<(Format, &'static str, Vec<u8>, Model)> {
    let mut out = Vec::new();
    for (origin, model) in models() {
        for &(format, write) in WRITERS {
            let Ok(bytes) = write(&model) else {
                continue;
            };
            let loaded = Model::load(&bytes, &check::options(format, false))
                .unwrap_or_else(|e| panic!("{} of {origin} does not load: {e}", format.name()));
            out.push((format, origin, bytes, loaded));
        }
    }
    out
}

#[test]
fn max_bytes_below_a_models_needs_is_a_limit_for_every_written_format() {
    let written = written();
    for &(format, _) in WRITERS {
        assert!(
            written.iter().any(|(f, ..)| *f == format),
            "the {} writer wrote none of the sample models",
            format.name()
        );
    }
    for (format, origin, bytes, model) in &written {
        let needs = model.heap_bytes() as u64;
        assert!(needs > 0);
        for max_bytes in [1, needs / 2] {
            for forced in [*format, Format::Auto] {
                let options = LoadOptions {
                    format: forced,
                    max_bytes,
                    // Sims meshes have no magic number: detection goes by the extension.
                    name: Some(format!("model{}", extension(*format))),
                    ..LoadOptions::default()
                };
                let e = Model::load(bytes, &options).expect_err("the limit is below the model");
                assert_eq!(
                    e.code(),
                    ErrorCode::Limit,
                    "{} of {origin} (needs {needs} bytes) with max_bytes {max_bytes}: {e}",
                    format.name()
                );
                assert!(e.to_string().contains(&max_bytes.to_string()), "{e}");
            }
        }
        // With room for the model, the same load succeeds. A JSON document's tree counts too
        // while it is read: a few dozen bytes a value, each of at least a couple of bytes of
        // text.
        let tree = if *format == Format::DmfJson {
            32 * bytes.len() as u64
        } else {
            0
        };
        let roomy = LoadOptions {
            format: *format,
            max_bytes: needs * 4 + 4096 + tree,
            ..LoadOptions::default()
        };
        let again = Model::load(bytes, &roomy).expect("room enough");
        assert_eq!(again.bones().len(), model.bones().len());
        assert_eq!(again.meshes().len(), model.meshes().len());
    }
}
