//! Broken and hostile MM2 input: every truncation, every bit flipped, random runs of bytes,
//! huge counts, each line missing, numbers that are not, stray bytes, and kilobytes crafted to
//! make a loader allocate. Each must give a model whose invariants hold or a clean error with
//! the right code and a line, never a panic, and loading must not allocate much more than the
//! input's size.

use ossa::{ErrorCode, Format, LoadOptions, Model};

mod counting_alloc;
mod mm2_fixtures;
mod sweep;

use counting_alloc::{budget, peak_of};
use mm2_fixtures::{doll_mod, doll_skel, options, packet_mod, seed};
use sweep::check_invariants;

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

/// Default or strict load options.
fn mode(format: Format, strict: bool) -> LoadOptions<'static> {
    if strict {
        mm2_fixtures::strict(format)
    } else {
        options(format)
    }
}

/// What broken text may fail with.
const CLEAN: [ErrorCode; 4] = [
    ErrorCode::Unsupported,
    ErrorCode::Truncated,
    ErrorCode::Malformed,
    ErrorCode::Limit,
];

/// The invariants of every model, and an MM2 model's own: names of at most 63 bytes, and one
/// influence of weight 1 per vertex.
fn check_mm2(m: &Model, what: &str) {
    check_invariants(m, what);
    assert!(
        m.bones().iter().all(|b| b.name.as_bytes().len() <= 63),
        "{what}"
    );
    for mesh in m.meshes() {
        assert!(mesh.max_influences() <= 1, "{what}");
        assert!(
            mesh.all_influences().iter().all(|i| i.weight == 1.0),
            "{what}"
        );
        assert_eq!(mesh.all_influences().len(), mesh.vertex_count(), "{what}");
    }
}

/// Loads `bytes` in default, strict and validate mode: each gives a sound model or a clean
/// error with a line, without a panic and within the memory budget.
fn survive(bytes: &[u8], format: Format, what: &str) {
    for strict in [false, true] {
        let (r, peak) = peak_of(|| Model::load(bytes, &mode(format, strict)));
        assert!(peak <= budget(bytes.len()), "{what}: {peak} bytes of heap");
        match r {
            Ok(m) => check_mm2(&m, what),
            Err(e) => {
                assert!(CLEAN.contains(&e.code()), "{what}: {e}");
                assert!(e.line().is_some(), "{what}: no line in {e}");
            }
        }
    }
    let report = ossa::validate(bytes, &options(format));
    match &report.model {
        Some(m) => {
            assert!(report.problems.is_empty(), "{what}");
            check_mm2(m, what);
        }
        None => assert!(
            !report.problems.is_empty(),
            "{what}: no model and no problem"
        ),
    }
    for p in &report.problems {
        assert!(CLEAN.contains(&p.code()), "{what}: {p}");
        assert!(p.line().is_some(), "{what}: no line in {p}");
    }
}

/// The files every sweep changes: written by hand, and written by ossa's writers.
fn files() -> Vec<(&'static str, Format, Vec<u8>)> {
    let skeleton = Model::load(doll_skel().as_bytes(), &options(Format::Mm2Skel)).unwrap();
    let meshes = Model::load(doll_mod().as_bytes(), &options(Format::Mm2Mod)).unwrap();
    let bound = Model::bind(&meshes, &skeleton).unwrap();
    vec![
        (
            "seed.skel",
            Format::Mm2Skel,
            seed("\r\n")
                .replacen("NumBones 3", "NumBones 4", 1)
                .into_bytes(),
        ),
        ("doll.skel", Format::Mm2Skel, doll_skel().into_bytes()),
        ("doll.mod", Format::Mm2Mod, doll_mod().into_bytes()),
        ("packet.mod", Format::Mm2Mod, packet_mod().into_bytes()),
        (
            "written.skel",
            Format::Mm2Skel,
            bound.save(Format::Mm2Skel).unwrap(),
        ),
        (
            "written.mod",
            Format::Mm2Mod,
            bound.save(Format::Mm2Mod).unwrap(),
        ),
    ]
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn the_files_load_as_they_are() {
    for (name, format, bytes) in files() {
        let m = Model::load(&bytes, &options(format)).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_mm2(&m, name);
    }
}

#[test]
fn every_truncation_fails_cleanly_on_a_line_or_loads() {
    for (name, format, bytes) in files() {
        for len in 0..bytes.len() {
            survive(&bytes[..len], format, &format!("{name} cut to {len} bytes"));
        }
    }
}

#[test]
fn every_bit_flip_fails_cleanly_on_a_line_or_loads() {
    for (name, format, bytes) in files() {
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[at] ^= 1 << bit;
                survive(&b, format, &format!("{name} byte {at} bit {bit}"));
            }
        }
    }
}

#[test]
fn random_runs_of_bytes_fail_cleanly_on_a_line_or_load() {
    // Bytes that mean something to the readers, and some that mean nothing.
    const ALPHABET: &[u8] = b"0123456789 .-+e{}\n\r\t\"vntcadjrspmxobfNBuk:\x00\xff";
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (name, format, bytes) in files() {
        for i in 0..1500 {
            let mut b = bytes.clone();
            let at = rng.below(b.len());
            let len = 1 + rng.below(24);
            for k in at..(at + len).min(b.len()) {
                b[k] = if rng.below(4) == 0 {
                    rng.next() as u8
                } else {
                    ALPHABET[rng.below(ALPHABET.len())]
                };
            }
            survive(&b, format, &format!("{name} run {i} at {at}"));
        }
    }
}

/// The file's lines, each with its end.
fn lines_of(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').collect()
}

#[test]
fn each_missing_line_fails_cleanly_on_a_line_or_loads() {
    for (name, format, bytes) in files() {
        let lines = lines_of(&bytes);
        for skip in 0..lines.len() {
            let b: Vec<u8> = lines
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != skip)
                .flat_map(|(_, l)| l.iter().copied())
                .collect();
            survive(&b, format, &format!("{name} without line {}", skip + 1));
        }
    }
}

/// Every whole word of the file that reads as a number, with its byte range.
fn numbers_in(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at].is_ascii_whitespace() {
            at += 1;
            continue;
        }
        let end = bytes[at..]
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .map_or(bytes.len(), |e| at + e);
        let word = std::str::from_utf8(&bytes[at..end]).unwrap_or("");
        if word.parse::<f64>().is_ok() {
            out.push((at, end));
        }
        at = end;
    }
    out
}

fn replaced(bytes: &[u8], (at, end): (usize, usize), with: &str) -> Vec<u8> {
    [&bytes[..at], with.as_bytes(), &bytes[end..]].concat()
}

#[test]
fn numbers_that_are_not_fail_cleanly_on_a_line_or_load() {
    for (name, format, bytes) in files() {
        for range in numbers_in(&bytes) {
            for with in [
                "x", "nan", "-inf", "1e99", "0x10", "1.#QNAN0", "--1", "1,5", "",
            ] {
                let b = replaced(&bytes, range, with);
                survive(&b, format, &format!("{name} byte {} as `{with}`", range.0));
            }
        }
    }
}

#[test]
fn huge_counts_fail_fast_or_load_without_allocating() {
    for (name, format, bytes) in files() {
        for range in numbers_in(&bytes) {
            for with in [
                "4000000000",
                "18446744073709551615",
                "99999999999999999999",
                "-1",
            ] {
                let b = replaced(&bytes, range, with);
                let (r, peak) = peak_of(|| Model::load(&b, &options(format)));
                assert!(
                    peak < 64 << 10,
                    "{name} byte {} as {with}: {peak} bytes",
                    range.0
                );
                if let Err(e) = r {
                    assert!(CLEAN.contains(&e.code()) && e.line().is_some(), "{e}");
                }
            }
        }
    }
}

#[test]
fn stray_bytes_fail_cleanly_on_a_line_or_load() {
    for (name, format, bytes) in files() {
        for at in 0..=bytes.len() {
            for byte in [0u8, b'{', b'}', b'\r', b'\n', 0xff, b'"', b'x', b'9'] {
                let mut b = bytes.clone();
                b.insert(at, byte);
                survive(&b, format, &format!("{name}: {byte:#x} at {at}"));
            }
        }
    }
}

/// `head`, then `unit` repeated to make 1 KiB, then `tail`.
fn kilobyte(head: &str, unit: &str, tail: &str) -> Vec<u8> {
    let mut s = head.to_owned();
    while s.len() + unit.len() + tail.len() <= 1024 {
        s.push_str(unit);
    }
    s.push_str(tail);
    s.into_bytes()
}

#[test]
fn hostile_kilobytes_stay_within_the_memory_budget() {
    const HEADER: &str = "version: 1.09\nmatrices: 1\n";
    let cases: Vec<(&str, Format, Vec<u8>)> = vec![
        (
            "deep bones",
            Format::Mm2Skel,
            kilobyte("NumBones 1\n", "bone a{offset 0 0 0\n", ""),
        ),
        ("deep bones closed", Format::Mm2Skel, {
            let open = "bone a{offset 0 0 0\n";
            let n = (1024 - 12) / (open.len() + 2);
            let mut s = format!("NumBones {n}\n{}", open.repeat(n));
            s.push_str(&"}\n".repeat(n));
            s.into_bytes()
        }),
        (
            "wide bones",
            Format::Mm2Skel,
            kilobyte(
                "NumBones 1\nbone r{offset 0 0 0\n",
                "bone b{offset 0 0 0}",
                "}",
            ),
        ),
        (
            "unknown words",
            Format::Mm2Skel,
            kilobyte("NumBones 1\nbone r{offset 0 0 0\n", "x\n", "}"),
        ),
        (
            "numbones",
            Format::Mm2Skel,
            b"NumBones 18446744073709551615\nbone r{offset 0 0 0}".to_vec(),
        ),
        (
            "positions",
            Format::Mm2Mod,
            kilobyte(HEADER, "v 0 0 0\n", "mtxv 0\n"),
        ),
        (
            "corners",
            Format::Mm2Mod,
            kilobyte(
                &format!("{HEADER}v 0 0 0\nmtl m {{\nadjuncts: 0\nprimitives: 0\n}}\n"),
                "adj 0 0 0 0 0\n",
                "mtxv 1\n",
            ),
        ),
        (
            "colours",
            Format::Mm2Mod,
            kilobyte(
                &format!(
                    "{HEADER}v 0 0 0\nmtl m {{\nadjuncts: 1\nprimitives: 0\n}}\nadj 0 0 0 0 0\nmtxv 1\n"
                ),
                "c 1 1 1 1\n",
                "",
            ),
        ),
        ("one long strip", Format::Mm2Mod, {
            let mut s = format!(
                "{HEADER}v 0 0 0\nv 1 0 0\nv 0 1 0\nmtl m {{\nadjuncts: 3\nprimitives: 1\n}}\nadj 0 0 0 0 0\nadj 1 0 0 0 0\nadj 2 0 0 0 0\nmtxv 3\n"
            );
            let n = (1024 - s.len() - 12) / 2;
            s.push_str(&format!("str {n}"));
            for i in 0..n {
                s.push_str([" 0", " 1", " 2"][i % 3]);
            }
            s.into_bytes()
        }),
        (
            "triangles",
            Format::Mm2Mod,
            kilobyte(
                &format!(
                    "{HEADER}v 0 0 0\nmtl m {{\nadjuncts: 1\nprimitives: 0\n}}\nadj 0 0 0 0 0\nmtxv 1\n"
                ),
                "tri 0 0 0\n",
                "",
            ),
        ),
        (
            "materials",
            Format::Mm2Mod,
            kilobyte(HEADER, "mtl m{\nprimitives: 0\n}\n", "mtxv 0\n"),
        ),
        (
            "packets",
            Format::Mm2Mod,
            kilobyte(
                &format!("{HEADER}mtl m{{\npackets: 1\n}}\n"),
                "packet 0 0 0 {\n}\n",
                "mtxv 0\n",
            ),
        ),
        (
            "runs",
            Format::Mm2Mod,
            kilobyte("version: 1.09\nmatrices: 400\nmtxv", " 0", "\n"),
        ),
        (
            "huge matrices",
            Format::Mm2Mod,
            kilobyte("version: 1.09\nmatrices: 4294967295\nmtxv", " 0", "\n"),
        ),
        (
            "huge strip",
            Format::Mm2Mod,
            kilobyte(&format!("{HEADER}str 18446744073709551615"), " 0", "\n"),
        ),
        (
            "unknown lines",
            Format::Mm2Mod,
            kilobyte(HEADER, "ts\n", ""),
        ),
    ];
    for (name, format, bytes) in cases {
        assert!(bytes.len() <= 1100, "{name}: {} bytes", bytes.len());
        survive(&bytes, format, name);
        let (_, peak) = peak_of(|| Model::load(&bytes, &options(format)));
        assert!(
            peak <= 64 << 20 && peak <= budget(bytes.len()),
            "{name}: {peak} bytes"
        );
    }
}

#[test]
fn a_caller_s_memory_limit_is_a_limit_error_on_a_line() {
    for (name, format, bytes) in files() {
        let opts = LoadOptions {
            format,
            max_bytes: 200,
            ..LoadOptions::default()
        };
        let e = Model::load(&bytes, &opts).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Limit, "{name}: {e}");
        assert!(e.line().is_some(), "{name}: {e}");
    }
}
