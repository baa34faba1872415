//! Broken and hostile DMF input, binary and JSON: every truncation, every bit flipped, random
//! byte runs; for JSON also huge numbers, deep nesting, missing keys, wrong types, stray bytes
//! and bad base64. Each must give a clean error or a model that validates (and saves and loads
//! again), never a panic, and loading must stay within its memory budget: at most 64 MiB for a
//! file of a few KiB, even one whose animation samples into the most frames a model may hold.

use std::time::{Duration, Instant};

use ossa::{ErrorCode, Format, LoadOptions, Model, dmf};

mod counting_alloc;

use counting_alloc::{budget, peak_of};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

/// What a hostile file of a few KiB may make the loader hold at once. Sampling keys into frames
/// is the one place a file's size does not bound: 65536 frames of a dozen bones is 40 MB.
const LIMIT: usize = 64 << 20;

/// A small model with every part: a texture, two materials, a vertex with a "bind pose" share,
/// two bones and an animation with keys of every channel. One member per line, so that lines
/// can be removed and replaced one at a time.
const JSON: &str = r#"{
  "format": "DASH",
  "version": "1.5",
  "textures": [
    {
      "id": 0,
      "name": "t",
      "flip_y": true,
      "img": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==",
      "width": 2,
      "height": 2,
      "wrap_s": "repeat",
      "wrap_t": 0
    }
  ],
  "materials": [
    {
      "name": "a",
      "texture": 0,
      "shader_type": "phong",
      "blend_src": "src_alpha",
      "diffuse": [1, 1, 1, 1]
    },
    {
      "name": "b",
      "texture": -1
    }
  ],
  "vertices": [
    {"pos": [0, 0, 0], "skin_index": [0, 0, 0, 0], "skin_weight": [1, 0, 0, 0]},
    {"pos": [1, 1, 0], "skin_index": [1, 0, 0, 0], "skin_weight": [1, 0, 0, 0]},
    {"pos": [2, 1, 0], "skin_index": [0, 1, 0, 0], "skin_weight": [0.5, 0.5, 0, 0]},
    {"pos": [1, 2, 0], "skin_index": [1, -1, 0, 0], "skin_weight": [0.75, 0.25, 0, 0]}
  ],
  "faces": [
    {
      "material": 0,
      "indices": [0, 1, 2],
      "verex_color": ["rgba(255, 0, 0, 1)", "rgba(0, 255, 0, 0.5)", "rgb(0, 0, 255)"],
      "normals": [[0, 0, 1], [0, 0, 1], [0, 0, 1]],
      "diffuse_uv": [[0, 0], [1, 0], [1, 1]]
    },
    {
      "material": 1,
      "indices": [0, 2, 3]
    },
    {
      "material": 1,
      "indices": [2, 1, 3],
      "normals": [[0, 0, 1], [0, 1, 0], [1, 0, 0]]
    }
  ],
  "skeleton": [
    {
      "name": "root",
      "id": 0,
      "parent_id": -1,
      "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1]
    },
    {
      "name": "arm",
      "parent_id": 0,
      "matrix": [0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1]
    }
  ],
  "animations": [
    {
      "id": 0,
      "name": "wave",
      "fps": 10,
      "duration": 0.5,
      "tracks": [
        {"bone_id": 0, "time": 0, "pos": [0, 1, 0]},
        {"bone_id": 0, "time": 0.5, "pos": [0, 2, 0], "rot": [0, 0, 0.2, 1], "scl": [1, 2, 1]},
        {"bone_id": 1, "time": 0, "rot": [0, 0, 0, 1]},
        {"bone_id": 1, "time": 0.4, "scl": [2, 2, 2]}
      ]
    }
  ]
}
"#;

fn opts(format: Format, strict: bool) -> LoadOptions<'static> {
    LoadOptions {
        format,
        strict,
        ..LoadOptions::default()
    }
}

fn binary() -> Vec<u8> {
    let m = Model::load(JSON.as_bytes(), &opts(Format::DmfJson, false)).unwrap();
    dmf::write_binary(&m).unwrap()
}

/// What a broken file may fail with.
const CLEAN: [ErrorCode; 5] = [
    ErrorCode::UnknownFormat,
    ErrorCode::Unsupported,
    ErrorCode::Truncated,
    ErrorCode::Malformed,
    ErrorCode::Limit,
];

/// A loaded model keeps the shared model's rules, and saves and loads again as the same.
fn check_model(m: &Model, what: &str) {
    Model::from_parts(m.to_parts()).unwrap_or_else(|e| panic!("{what}: {e}"));
    for format in [Format::Dmf, Format::DmfJson] {
        let bytes = match m.save(format) {
            Ok(b) => b,
            // Names of bytes that are not UTF-8 have no JSON.
            Err(e) if format == Format::DmfJson && e.code() == ErrorCode::Unsupported => {
                assert!(e.to_string().contains("not UTF-8"), "{what}: {e}");
                continue;
            }
            Err(e) => panic!("{what}: save as {}: {e}", format.name()),
        };
        let again = Model::load(&bytes, &opts(format, false))
            .unwrap_or_else(|e| panic!("{what}: saved as {}: {e}", format.name()));
        assert_eq!(again.bones().len(), m.bones().len(), "{what}");
        assert_eq!(again.frames().len(), m.frames().len(), "{what}");
        assert_eq!(
            again.save(format).unwrap(),
            bytes,
            "{what}: saved twice as {}",
            format.name()
        );
    }
}

/// Loads `bytes` in default, strict and validate mode: a sound model or a clean error, no
/// panic, within `limit` bytes of heap. Returns the default mode's error.
fn survive_within(bytes: &[u8], format: Format, what: &str, limit: usize) -> Option<ossa::Error> {
    let mut first = None;
    for strict in [false, true] {
        let (r, peak) = peak_of(|| Model::load(bytes, &opts(format, strict)));
        assert!(peak <= limit, "{what}: {peak} bytes of heap");
        match r {
            Ok(m) => {
                if !strict {
                    check_model(&m, what);
                }
            }
            Err(e) => {
                assert!(CLEAN.contains(&e.code()), "{what}: {e}");
                if !strict {
                    first = Some(e);
                }
            }
        }
    }
    let report = ossa::validate(bytes, &opts(format, false));
    match &report.model {
        Some(_) => assert!(report.problems.is_empty(), "{what}"),
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

fn survive(bytes: &[u8], format: Format, what: &str) -> Option<ossa::Error> {
    survive_within(bytes, format, what, LIMIT)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

// ---------------------------------------------------------------------------------------------
// Binary
// ---------------------------------------------------------------------------------------------

#[test]
fn the_fixtures_load() {
    let m = Model::load(JSON.as_bytes(), &opts(Format::DmfJson, true)).unwrap();
    assert_eq!(
        (m.bones().len(), m.meshes().len(), m.frames().len()),
        (3, 2, 7)
    );
    check_model(&m, "json");
    let b = binary();
    check_model(
        &Model::load(&b, &opts(Format::Dmf, true)).unwrap(),
        "binary",
    );
}

#[test]
fn binary_truncated_at_every_length() {
    let b = binary();
    for n in 0..b.len() {
        let what = format!("binary cut at {n}");
        // It fails before anything is sampled: what it holds is in proportion to its size.
        let e = survive_within(&b[..n], Format::Dmf, &what, budget(n))
            .unwrap_or_else(|| panic!("{what} loaded"));
        assert_eq!(e.code(), ErrorCode::Truncated, "{what}: {e}");
        assert!(
            e.offset().is_some_and(|at| at < b.len() as u64),
            "{what}: {e}"
        );
    }
}

#[test]
fn binary_every_bit_flipped() {
    let b = binary();
    for byte in 0..b.len() {
        for bit in 0..8 {
            let mut x = b.clone();
            x[byte] ^= 1 << bit;
            survive(&x, Format::Dmf, &format!("binary byte {byte:#x} bit {bit}"));
        }
    }
}

#[test]
fn binary_random_byte_runs() {
    let b = binary();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..600 {
        let mut x = b.clone();
        let at = 4 + rng.below(x.len() - 4);
        let len = 1 + rng.below(12);
        for v in x.iter_mut().skip(at).take(len) {
            *v = rng.next() as u8;
        }
        survive(&x, Format::Dmf, &format!("binary round {round}"));
    }
}

#[test]
fn binary_absurd_counts_and_offsets() {
    let b = binary();
    // Every count and offset of the attribute table, and every animation and texture pointer,
    // set to values at the edges.
    let mut fields: Vec<usize> = (0..6)
        .flat_map(|i| [0x18 + 16 * i, 0x1c + 16 * i])
        .collect();
    let anim_at = u32::from_le_bytes(b[0x68..0x6c].try_into().unwrap()) as usize;
    let tex_at = u32::from_le_bytes(b[0x18..0x1c].try_into().unwrap()) as usize;
    fields.extend([
        anim_at + 0x24,
        anim_at + 0x28,
        tex_at + 0x24,
        tex_at + 0x28,
        8,
    ]);
    for at in fields {
        for v in [
            0u32,
            1,
            0x70,
            b.len() as u32,
            b.len() as u32 - 1,
            0x7fff_ffff,
            u32::MAX,
        ] {
            let mut x = b.clone();
            x[at..at + 4].copy_from_slice(&v.to_le_bytes());
            survive(&x, Format::Dmf, &format!("field {at:#x} = {v:#x}"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------

#[test]
fn json_truncated_at_every_length() {
    let t = JSON.as_bytes();
    for n in 0..t.len() {
        let what = format!("json cut at {n}");
        let e = survive_within(&t[..n], Format::DmfJson, &what, budget(n));
        // Only the final newline may go.
        if n < t.len() - 1 {
            let e = e.unwrap_or_else(|| panic!("{what} loaded"));
            assert_eq!(e.code(), ErrorCode::Malformed, "{what}: {e}");
            assert!(e.line().is_some(), "{what}: {e}");
        }
    }
}

#[test]
fn json_random_byte_runs_and_stray_bytes() {
    let t = JSON.as_bytes();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for round in 0..600 {
        let mut x = t.to_vec();
        let at = rng.below(x.len());
        let len = 1 + rng.below(8);
        for v in x.iter_mut().skip(at).take(len) {
            *v = rng.next() as u8;
        }
        survive(&x, Format::DmfJson, &format!("json run {round}"));
    }
    // A stray byte at every place.
    for at in 0..t.len() {
        for stray in [b'@', b',', b']', b'}', b'"', 0, 0xff] {
            let mut x = t.to_vec();
            x.insert(at, stray);
            survive(
                &x,
                Format::DmfJson,
                &format!("json stray {stray:#x} at {at}"),
            );
        }
    }
}

#[test]
fn json_missing_members_and_wrong_types() {
    let lines: Vec<&str> = JSON.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        let join = |replacement: Option<String>| {
            let mut out = String::new();
            for (k, l) in lines.iter().enumerate() {
                match (&replacement, k == n) {
                    (None, true) => {}
                    (Some(r), true) => out.push_str(r),
                    _ => out.push_str(l),
                }
                out.push('\n');
            }
            out
        };
        survive(
            join(None).as_bytes(),
            Format::DmfJson,
            &format!("without line {}", n + 1),
        );
        // A member's value replaced by one of every type.
        let Some((key, rest)) = line.split_once("\": ") else {
            continue;
        };
        let comma = if rest.ends_with(',') { "," } else { "" };
        for value in [
            "\"s\"",
            "1",
            "-1",
            "1.5",
            "[]",
            "{}",
            "null",
            "true",
            "[1, 2, 3]",
        ] {
            let text = join(Some(format!("{key}\": {value}{comma}")));
            survive(
                text.as_bytes(),
                Format::DmfJson,
                &format!("line {} = {value}", n + 1),
            );
        }
    }
}

#[test]
fn json_huge_numbers_and_deep_nesting() {
    // Every number in the file, one at a time, made huge, tiny, long or negative.
    let t = JSON;
    let starts: Vec<usize> = t
        .char_indices()
        .filter(|&(i, c)| {
            (c.is_ascii_digit() || c == '-')
                && !t[..i].ends_with(|p: char| p.is_ascii_alphanumeric() || p == '.' || p == '-')
        })
        .map(|(i, _)| i)
        .collect();
    assert!(starts.len() > 100);
    for &at in &starts {
        let end = at
            + t[at..]
                .find(|c: char| !(c.is_ascii_digit() || "-+.eE".contains(c)))
                .unwrap();
        for big in [
            "1e39",
            "-1e39",
            "1e400",
            "1e-400",
            "123456789012345678901234567890",
            "-32769",
            "65536",
            "4294967296",
            "0.000001",
        ] {
            let text = format!("{}{big}{}", &t[..at], &t[end..]);
            survive(
                text.as_bytes(),
                Format::DmfJson,
                &format!("number at {at} = {big}"),
            );
        }
    }
    // Nesting: deep arrays in place of a value three levels down, up to the limit of 64 levels,
    // just past it and far past it.
    for depth in [61, 62, 10_000] {
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let text = JSON.replacen("\"width\": 2", &format!("\"width\": {deep}"), 1);
        let e = survive(text.as_bytes(), Format::DmfJson, &format!("depth {depth}")).unwrap();
        let want = if depth + 3 <= 64 {
            ErrorCode::Malformed
        } else {
            ErrorCode::Limit
        };
        assert_eq!(e.code(), want, "depth {depth}: {e}");
    }
}

#[test]
fn json_bad_base64() {
    for img in [
        "iVBORw0KGgoAAAANSUhEUg=",
        "iVBORw0KGgoAAAANSUhEU==",
        "iVBORw0KGgoAAAANSUhEUh==",
        "iVBORw0KGgo!AAANSUhEUg==",
        "iVBORw0KGgo AAANSUhEUg==",
        "====",
        "=",
        "",
        "iVBORw0KGgoAAAANSUhEUg==iVBO",
    ] {
        let text = JSON.replacen("iVBORw0KGgoAAAANSUhEUg==", img, 1);
        let e = survive(text.as_bytes(), Format::DmfJson, &format!("img {img:?}"));
        // Every one but the empty image is refused; the empty one is no PNG, a warning.
        if img.is_empty() {
            assert!(e.is_none());
            let m = Model::load(text.as_bytes(), &opts(Format::DmfJson, false)).unwrap();
            assert!(m.warnings()[0].to_string().contains("not a PNG"));
        } else {
            let e = e.unwrap_or_else(|| panic!("{img:?} loaded"));
            assert_eq!(e.code(), ErrorCode::Malformed, "{img:?}: {e}");
            assert!(e.to_string().contains("textures[0].img"), "{e}");
        }
    }
}

/// The most a small file can ask for: a dozen bones and an animation sampled into nearly
/// 65536 frames. The default ceiling, which grows with the input, refuses it; a caller who allows
/// 64 MiB gets it within that, and a smaller `max_bytes` refuses it cleanly.
#[test]
fn the_most_frames_a_small_file_can_ask_for() {
    let bone = r#"{"name":"BONE","parent_id":-1,"matrix":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}"#;
    let bones: Vec<String> = (0..11)
        .map(|i| bone.replace("BONE", &format!("b{i}")))
        .collect();
    let text = format!(
        r#"{{"format":"DASH","version":"1.5","skeleton":[{}],"animations":[{{"name":"a","fps":65535,"duration":0.9999,"tracks":[{{"bone_id":3,"time":0,"rot":[0,0,0,1]}},{{"bone_id":3,"time":1,"rot":[1,0,0,0]}}]}}]}}"#,
        bones.join(",")
    );
    assert!(text.len() <= 1024, "{} bytes", text.len());
    let e = Model::load(text.as_bytes(), &opts(Format::DmfJson, false)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    let allowed = LoadOptions {
        max_bytes: LIMIT as u64,
        ..opts(Format::DmfJson, false)
    };
    let (r, peak) = peak_of(|| Model::load(text.as_bytes(), &allowed));
    let m = r.unwrap();
    assert_eq!(m.frames().len(), 65530);
    assert!(peak <= LIMIT, "{peak} bytes");
    eprintln!(
        "{} bytes of JSON: {} frames, {peak} bytes of heap at most",
        text.len(),
        m.frames().len()
    );
    let limited = LoadOptions {
        max_bytes: 1 << 20,
        ..opts(Format::DmfJson, false)
    };
    let e = Model::load(text.as_bytes(), &limited).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    // One frame more than a model holds.
    let over = text.replace("0.9999", "1");
    let e = Model::load(over.as_bytes(), &allowed).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
}

#[test]
fn bones_whose_bind_pose_overflows_are_refused() {
    // Both bones 3e38 along y: arm's bind pose, chained, is infinite. DMF's own rules refuse the
    // vertices weighted to it; without them the model's load-time check refuses the pose.
    let far = JSON
        .replace(
            "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1]",
            "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 3e38, 0, 1]",
        )
        .replace(
            "[0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1]",
            "[0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 0, 3e38, 0, 1]",
        );
    assert_ne!(far, JSON);
    let e = Model::load(far.as_bytes(), &opts(Format::DmfJson, false)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    // Chained, arm's bind pose moves 6e38: past f32, so it has no inverse in f32 either.
    assert_eq!(
        e.detail().message,
        "vertices[1].skin_index[0]: bone 1 (arm) has a bind matrix that cannot be inverted, so \
         no vertex can be weighted to it"
    );
    // A finite bind pose beyond the range every format keeps to (1e9), which DMF's own rules
    // let through, is refused too, naming the frame and the bone.
    let beyond = JSON.replace(
        "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1]",
        "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 2e9, 0, 1]",
    );
    let e = Model::load(beyond.as_bytes(), &opts(Format::DmfJson, false)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    assert_eq!(
        e.detail().message,
        "frame 0 (bind) bone 0 (root): its model-space pose (chained through the parents) \
         holds 2e9, beyond 1e9"
    );
}

/// The fixture with `member` (`"key": value,` text) put first in the document.
fn with_first_member(member: &str) -> String {
    JSON.replacen("{\n", &format!("{{\n  {member}\n"), 1)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

fn warnings(m: &Model) -> Vec<String> {
    m.warnings().iter().map(|w| w.to_string()).collect()
}

/// A load under `max_bytes` = 1 MB, with the most heap it held and how long it took.
fn load_within_1mb(text: &str, strict: bool) -> (ossa::Result<Model>, usize, Duration) {
    let options = LoadOptions {
        max_bytes: 1 << 20,
        ..opts(Format::DmfJson, strict)
    };
    let start = Instant::now();
    let (r, peak) = peak_of(|| Model::load(text.as_bytes(), &options));
    let took = start.elapsed();
    eprintln!(
        "{} bytes of JSON (strict: {strict}): {peak} bytes of heap at most, {took:?}",
        text.len()
    );
    (r, peak, took)
}

/// `"junk": [[0],[0],...]` of about `mb` megabytes, a member DMF does not define.
fn junk(mb: usize) -> String {
    format!("\"junk\": [{}[0]],", "[0],".repeat(mb << 18))
}

// Every value of a document was built before the reader looked at it: members DMF does not
// define too, at 54 bytes of heap a byte of text, and outside `max_bytes`. 10 MB of them took
// 540 MB and loaded; strict mode parsed 40 MB of them (2.15 GB, 7 s) before refusing the first.
// Now unknown members are skipped as they are parsed, strict mode refuses the first where it is
// met, and what the tree holds counts against `max_bytes`. Each load here takes well under a
// second when built for release, a few in a debug build.
const JSON_CAP: Duration = Duration::from_secs(60);

#[test]
fn json_unknown_members_are_skipped_not_built() {
    let text = with_first_member(&junk(10));
    assert!(text.len() > 10 << 20);
    let (r, peak, took) = load_within_1mb(&text, false);
    let m = r.unwrap();
    let plain = Model::load(JSON.as_bytes(), &opts(Format::DmfJson, true)).unwrap();
    assert_eq!(m.bones(), plain.bones());
    assert_eq!(m.frames().len(), plain.frames().len());
    assert_eq!(m.meshes().len(), plain.meshes().len());
    for (a, b) in m.meshes().iter().zip(plain.meshes()) {
        assert_eq!(a.indices(), b.indices());
    }
    let offset = text.find("\"junk\"").unwrap();
    assert_eq!(
        warnings(&m),
        [format!(
            "line 2: the document.junk: a key DMF 1.5 does not define (1 such keys are ignored) at byte {offset:#x}"
        )]
    );
    assert!(peak < 256 << 10, "{peak} bytes of heap");
    assert!(took < JSON_CAP, "{took:?}");
}

#[test]
fn json_strict_refuses_an_unknown_member_where_it_is_met() {
    let text = with_first_member(&junk(40));
    let (r, peak, took) = load_within_1mb(&text, true);
    let e = r.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert_eq!(
        e.to_string(),
        "line 2: the document.junk: a key DMF 1.5 does not define at byte 0x4"
    );
    assert_eq!(&text[4..10], "\"junk\"");
    assert!(peak < 64 << 10, "{peak} bytes of heap");
    assert!(took < JSON_CAP, "{took:?}");
    // The same deep in a list: named by its place.
    let text = JSON.replacen(
        "{\"pos\": [1, 1, 0]",
        "{\"extra\": {\"a\": [1]}, \"pos\": [1, 1, 0]",
        1,
    );
    let offset = text.find("\"extra\"").unwrap();
    let line = line_of(&text, offset);
    let e = load_within_1mb(&text, true).0.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "line {line}: vertices[1].extra: a key DMF 1.5 does not define at byte {offset:#x}"
        )
    );
    let m = load_within_1mb(&text, false).0.unwrap();
    assert_eq!(
        warnings(&m),
        [format!(
            "line {line}: vertices[1].extra: a key DMF 1.5 does not define (1 such keys are ignored) at byte {offset:#x}"
        )]
    );
}

#[test]
fn json_documents_past_max_bytes_are_refused_as_they_are_read() {
    // 11 MB of vertices, each with a member DMF does not define: the members are skipped, and
    // the vertices themselves are past 1 MB long before the end.
    let vertex = "{\"pos\": [0, 0, 0], \"x\": 0},\n    ";
    let many = vertex.repeat((11 << 20) / vertex.len());
    let text = JSON.replacen(
        "\"vertices\": [\n    ",
        &format!("\"vertices\": [\n    {many}"),
        1,
    );
    for strict in [false, true] {
        let (r, peak, took) = load_within_1mb(&text, strict);
        let e = r.unwrap_err();
        if strict {
            assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
            let offset = text.find("\"x\"").unwrap();
            assert_eq!(
                e.to_string(),
                format!(
                    "line {}: vertices[0].x: a key DMF 1.5 does not define at byte {offset:#x}",
                    line_of(&text, offset)
                )
            );
        } else {
            assert_eq!(e.code(), ErrorCode::Limit, "{e}");
            let message = e.to_string();
            assert!(message.contains(": the JSON document needs "), "{e}");
            assert!(
                message.contains(" bytes of memory, more than the limit of 1048576 bytes at byte "),
                "{e}"
            );
            assert!(e.offset().unwrap() < 1 << 20, "{e}");
        }
        assert!(peak < 2 << 20, "{peak} bytes of heap");
        assert!(took < JSON_CAP, "{took:?}");
    }
}
