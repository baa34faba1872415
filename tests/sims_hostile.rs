//! One hostile-input sweep over every Sims format: SKN and BMF meshes, CMX text and BCF
//! character files (loaded as skeletons, and read as skill files on the skill path), and CFP
//! streams (through the skill path, [`Model::with_skills`]). The inputs are small files the
//! writers make from a rig built here, and a spread of corpus files when the corpus is there.
//!
//! Cases: every truncation and every single-bit flip of a small file (a spread of a large one),
//! random byte runs, and for the text formats huge counts, missing, repeated and blank lines,
//! non-numbers, stray bytes (NUL, 0xFF, tab, a lone CR) and very long lines. Each must end in a
//! model that passes its own invariants and validation (meshes bound to the skeleton and skinned
//! at rest) or in a clean error with a sensible code, a line for text and a byte for binary
//! data; never a panic, and within a memory budget.

mod corpus;
mod counting_alloc;
mod sweep;

use std::sync::OnceLock;

use corpus::corpus_subdir;
use counting_alloc::{budget, peak_of};
mod load_options;
use load_options::options;
use ossa::format::cfp;
use ossa::format::cmx::{
    self, CharacterFile, Motion, Property, PropertyList, Skill, Skin, Suit, TimeProperty,
};
use ossa::io::{FileData, FileSystem};
use ossa::synth::TubeRig;
use ossa::{BoneSlots, Error, ErrorCode, Format, Influence, LoadOptions, Mat3x4, Model, Name};
use ossa::{sims_mesh, validate};
use sweep::{
    CLEAN, Tally, XorShift, check_invariants, flip_bits, flip_positions, lengths, random_runs,
};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

// ---------------------------------------------------------------------------------------------
// The rig and its files
// ---------------------------------------------------------------------------------------------

/// Rotation by `a` radians about +x, then translation by `t`.
fn turn_x(a: f32, t: [f32; 3]) -> Mat3x4 {
    let (s, c) = a.sin_cos();
    Mat3x4 {
        m: [1.0, 0.0, 0.0, t[0], 0.0, c, -s, t[1], 0.0, s, c, t[2]],
    }
}

/// A three-bone tube as a Sims character: bones that turn, one mesh whose vertices follow one
/// bone each, those at the two inner joints pulled by a blend towards the next bone with weights
/// 1/4, 1/2 and 3/4.
fn rig() -> Model {
    let tube = TubeRig {
        bones: 3,
        bone_length: 1.5,
        radius: 0.5,
        rings_per_bone: 1,
        sides: 3,
        frames: 1,
        bend: 0.0,
    };
    let mut parts = tube.parts();
    parts.format = Format::SimsCmx;
    parts.animations.clear();
    parts.poses = (0..3)
        .map(|b| {
            turn_x(
                0.2 * (b + 1) as f32,
                [0.0, 0.0, if b == 0 { 0.0 } else { 1.5 }],
            )
        })
        .collect();
    let mesh = &mut parts.meshes[0];
    mesh.group_ids = None;
    let mut influences = Vec::new();
    let mut starts = vec![0u32];
    for (v, w) in mesh.influence_start.windows(2).enumerate() {
        // TubeRig stores `f * (p - joint)`: the bone-space point is origin / f.
        let point = |i: &Influence| i.origin.map(|x| x / i.weight);
        match &mesh.influences[w[0] as usize..w[1] as usize] {
            [a] => influences.push(*a),
            [a, b] => {
                let pull = [0.25f32, 0.5, 0.75][v % 3];
                let keep = 1.0 - pull;
                influences.push(Influence {
                    origin: point(a).map(|x| keep * x),
                    weight: keep,
                    normal: a.normal.map(|x| x / a.weight),
                    bone: a.bone,
                });
                influences.push(Influence {
                    origin: point(b).map(|x| pull * x),
                    weight: pull,
                    normal: [0.0; 3],
                    bone: b.bone,
                });
            }
            other => panic!("vertex {v}: {} influences", other.len()),
        }
        starts.push(influences.len() as u32);
    }
    mesh.influences = influences;
    mesh.influence_start = starts;
    Model::from_parts(parts).unwrap()
}

fn props(pairs: &[(&str, &str)]) -> PropertyList {
    pairs
        .iter()
        .map(|(k, v)| Property {
            key: Name::from(*k),
            value: Name::from(*v),
        })
        .collect()
}

/// The rig's character file: its skeleton, a suit with one skin, and a skill whose motions move
/// each bone (translations, rotations, both; four frames and two), with properties and a timed
/// property, so that every structure of the format is there.
fn character(model: &Model) -> CharacterFile {
    let motion = |bone: &str, frames: u32, t: i32, r: i32| Motion {
        bone: Name::from(bone),
        frame_count: frames,
        duration: 133.0,
        has_translation: t >= 0,
        has_rotation: r >= 0,
        translation_offset: t,
        rotation_offset: r,
        property_lists: Vec::new(),
        time_property_lists: Vec::new(),
    };
    let mut motions = vec![
        motion("bone0", 4, 0, -1),
        motion("bone1", 4, -1, 0),
        motion("bone2", 2, 4, 4),
    ];
    motions[0].time_property_lists = vec![vec![TimeProperty {
        time: 66,
        properties: props(&[("footstep", "left")]),
    }]];
    motions[1].property_lists = vec![props(&[("blend", "1")])];
    CharacterFile {
        version: Some(300),
        skeletons: vec![cmx::Skeleton::from_model(model, Name::from("rig")).unwrap()],
        suits: vec![Suit {
            name: Name::from("rig"),
            suit_type: 0,
            property_lists: vec![props(&[("gender", "unisex")])],
            skins: vec![Skin {
                bone: Name::from("bone0"),
                name: Name::from("xskin-rig-bone0-tube"),
                censor_flags: 0,
                property_lists: Vec::new(),
            }],
        }],
        skills: vec![Skill {
            name: Name::from("wave-loop"),
            animation: Name::from("xskill-wave-loop"),
            duration: 133.0,
            distance: 0.0,
            moving: false,
            translation_count: 6,
            rotation_count: 6,
            motions,
        }],
        warnings: Vec::new(),
    }
}

/// The skill's values: x constant (repeats), y creeping (deltas), z jumping (full values).
#[allow(clippy::type_complexity)]
fn skill_values() -> (Vec<[f32; 3]>, Vec<[f32; 4]>) {
    let t = (0..6)
        .map(|i| [0.25, 1.0 + 0.01 * i as f32, 3.0 * i as f32])
        .collect();
    let r = (0..6)
        .map(|i| {
            let a = 0.05 * i as f32;
            [0.0, a.sin(), 0.0, a.cos()]
        })
        .collect();
    (t, r)
}

fn skill_cfp() -> Vec<u8> {
    let (t, r) = skill_values();
    cfp::encode_skill(&t, &r, Some(1e-3))
}

/// Where each format's sweep starts: the rig's files, as the writers make them.
struct Files {
    skeleton: Model,
    skn: Vec<u8>,
    bmf: Vec<u8>,
    cmx: Vec<u8>,
    bcf: Vec<u8>,
    cfp: Vec<u8>,
}

impl Files {
    fn of(&self, input: Input) -> &[u8] {
        match input {
            Input::Skn => &self.skn,
            Input::Bmf => &self.bmf,
            Input::Cmx => &self.cmx,
            Input::Bcf => &self.bcf,
            Input::Cfp => &self.cfp,
        }
    }
}

fn files() -> &'static Files {
    static FILES: OnceLock<Files> = OnceLock::new();
    FILES.get_or_init(|| {
        let model = rig();
        let file = character(&model);
        let cmx = cmx::write_character(&file, false).unwrap();
        Files {
            skeleton: Model::load(&cmx, &options(Format::SimsCmx)).unwrap(),
            skn: sims_mesh::write_skn(&model).unwrap(),
            bmf: sims_mesh::write_bmf(&model).unwrap(),
            bcf: cmx::write_character(&file, true).unwrap(),
            cmx,
            cfp: skill_cfp(),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// What every case must end in
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Input {
    Skn,
    Bmf,
    Cmx,
    Bcf,
    Cfp,
}

const INPUTS: [Input; 5] = [Input::Skn, Input::Bmf, Input::Cmx, Input::Bcf, Input::Cfp];

impl Input {
    fn format(self) -> Format {
        match self {
            Input::Skn => Format::SimsSkn,
            Input::Bmf => Format::SimsBmf,
            Input::Cmx => Format::SimsCmx,
            Input::Bcf => Format::SimsBcf,
            // Not a model: read on the skill path only.
            Input::Cfp => Format::Auto,
        }
    }

    fn text(self) -> bool {
        matches!(self, Input::Skn | Input::Cmx)
    }

    fn place(self) -> Place {
        if self.text() {
            Place::Line
        } else {
            Place::Byte
        }
    }
}

/// CFP files by the path the skill path asks for (`ANIMATION.cfp`, ASCII case ignored).
struct Cfps<'a>(Vec<(String, &'a [u8])>);

impl FileSystem for Cfps<'_> {
    fn read(&self, path: &str) -> ossa::Result<FileData<'_>> {
        let found = self.0.iter().find(|(p, _)| p.eq_ignore_ascii_case(path));
        match found {
            Some((_, bytes)) => Ok(Box::new(*bytes)),
            None => Err(Error::not_found(format!("{path}: no such CFP"))),
        }
    }
}

/// What hostile bytes are checked against: the skeleton meshes bind to and skills play on, the
/// skill file a hostile CFP is read for, and the CFPs a hostile skill file reads (the first is
/// the one a hostile CFP stands in for).
struct Setting<'a> {
    skeleton: &'a Model,
    skill_file: &'a [u8],
    skill_format: Format,
    cfps: Vec<(String, &'a [u8])>,
}

impl Setting<'static> {
    fn rig() -> Setting<'static> {
        let f = files();
        Setting {
            skeleton: &f.skeleton,
            skill_file: &f.cmx,
            skill_format: Format::SimsCmx,
            cfps: vec![("xskill-wave-loop.cfp".to_owned(), &f.cfp)],
        }
    }
}

/// The lines of a text input, for checking a reported line number.
fn line_count(bytes: &[u8]) -> u32 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u32 + 1
}

/// Where an error must say the problem lies: a line of text, a byte of binary data.
#[derive(Clone, Copy, Debug)]
enum Place {
    Line,
    Byte,
}

/// A clean error: a code from `allowed`, a message, and, for a problem with the data's structure
/// or numbers, where in `data` it lies.
fn check_error(e: &Error, allowed: &[ErrorCode], place: Place, data: &[u8], what: &str) {
    assert!(allowed.contains(&e.code()), "{what}: {e}");
    assert!(!e.detail().message.is_empty(), "{what}");
    if !matches!(
        e.code(),
        ErrorCode::Truncated | ErrorCode::Malformed | ErrorCode::Unsupported
    ) {
        return;
    }
    match place {
        Place::Line => {
            let line = e.line().unwrap_or_else(|| panic!("{what}: no line in {e}"));
            let lines = line_count(data);
            assert!(
                line >= 1 && line <= lines + 1,
                "{what}: line {line} of {lines}: {e}"
            );
        }
        Place::Byte => {
            let at = e
                .offset()
                .unwrap_or_else(|| panic!("{what}: no offset in {e}"));
            assert!(at <= data.len() as u64, "{what}: {e}");
        }
    }
}

/// A loaded model: its invariants, and for meshes, bound to the skeleton (or not found there,
/// naming the bone) and skinned at rest.
fn check_model(input: Input, model: &Model, s: &Setting, what: &str) {
    check_invariants(model, what);
    assert_eq!(model.format(), input.format(), "{what}");
    if matches!(input, Input::Skn | Input::Bmf) {
        assert!(
            matches!(model.unbound(), Some(BoneSlots::ByName(_))),
            "{what}"
        );
        match Model::bind(model, s.skeleton) {
            Ok(bound) => check_invariants(&bound, &format!("{what}, bound")),
            Err(e) => {
                assert_eq!(e.code(), ErrorCode::NotFound, "{what}: {e}");
                assert!(e.to_string().contains("no bone named"), "{what}: {e}");
            }
        }
    }
}

/// Loads `bytes` as `input` in default and strict mode and validates them: each gives a sound
/// model or a clean error, within the memory budget, and validation agrees with loading.
/// Returns whether the default load gave a model.
fn load_checked(input: Input, bytes: &[u8], s: &Setting, what: &str) -> bool {
    let format = input.format();
    let strict = LoadOptions {
        strict: true,
        ..options(format)
    };
    let mut loaded = false;
    for (mode, opts) in [("default", options(format)), ("strict", strict)] {
        let what = format!("{what} ({mode})");
        let (r, peak) = peak_of(|| Model::load(bytes, &opts));
        assert!(peak <= budget(bytes.len()), "{what}: {peak} bytes of heap");
        match r {
            Ok(m) => {
                check_model(input, &m, s, &what);
                loaded |= mode == "default";
            }
            Err(e) => check_error(&e, &CLEAN, input.place(), bytes, &what),
        }
    }
    let report = validate(bytes, &options(format));
    assert_eq!(
        report.model.is_some(),
        loaded,
        "{what}: {:?}",
        report.problems
    );
    assert_eq!(report.problems.is_empty(), loaded, "{what}");
    for p in &report.problems {
        check_error(
            p,
            &CLEAN,
            input.place(),
            bytes,
            &format!("{what} (validate)"),
        );
    }
    if let Some(m) = &report.model {
        check_model(input, m, s, &format!("{what} (validate)"));
    }
    loaded
}

/// What the skill path may also refuse: a missing CFP (a changed animation name), a file
/// without skills or a CFP path outside the directory, no motion naming a bone.
const SKILL_ERRORS: [ErrorCode; 8] = [
    ErrorCode::UnknownFormat,
    ErrorCode::Unsupported,
    ErrorCode::Truncated,
    ErrorCode::Malformed,
    ErrorCode::Limit,
    ErrorCode::NotFound,
    ErrorCode::InvalidArgument,
    ErrorCode::Mismatch,
];

/// Adds the skills of `skill_file` (read through `cfps`) to the skeleton: a model whose
/// invariants hold, with the skeleton's frame 0 unchanged, or a clean error that places the
/// problem in the skill file or in the CFP it names. Returns whether the skills were added.
fn skills_checked(skill_file: &[u8], format: Format, cfps: Cfps, s: &Setting, what: &str) -> bool {
    let name = match format {
        Format::SimsBcf => "skills.cmx.bcf",
        _ => "skills.cmx",
    };
    let opts = LoadOptions {
        format,
        io: Some(&cfps),
        name: Some(name.to_owned()),
        ..LoadOptions::default()
    };
    let inputs = skill_file.len() + cfps.0.iter().map(|(_, b)| b.len()).sum::<usize>();
    let (r, peak) = peak_of(|| s.skeleton.with_skills(skill_file, &opts));
    let what = format!("{what} (skills)");
    match r {
        Ok(m) => {
            assert!(peak <= budget(inputs) + m.heap_bytes(), "{what}: {peak}");
            check_invariants(&m, &what);
            let rest = s.skeleton.skeleton().frame_poses(0);
            assert_eq!(m.skeleton().frame_poses(0), rest, "{what}");
            // A scene per skill; a version 200 skill without its numbers adds no frames.
            assert!(
                m.animations().len() > s.skeleton.animations().len(),
                "{what}"
            );
            true
        }
        Err(e) => {
            assert!(peak <= budget(inputs), "{what}: {peak}");
            let file = e.detail().file.as_deref().unwrap_or_default();
            let (place, data) = match cfps.0.iter().find(|(path, _)| path == file) {
                Some((_, cfp)) => (Place::Byte, *cfp),
                None => {
                    assert_eq!(file, name, "{what}: {e}");
                    let input = if format == Format::SimsCmx {
                        Input::Cmx
                    } else {
                        Input::Bcf
                    };
                    (input.place(), skill_file)
                }
            };
            check_error(&e, &SKILL_ERRORS, place, data, &what);
            false
        }
    }
}

/// One hostile input: loaded as what it is, and sent down the skill path where it can go
/// (a character file as the skill file, a CFP as the skill's values). Returns whether it loaded
/// (or, for a CFP, gave the skill's frames).
fn survive(input: Input, bytes: &[u8], s: &Setting, what: &str) -> bool {
    let what = format!("{input:?} {what}");
    match input {
        Input::Skn | Input::Bmf => load_checked(input, bytes, s, &what),
        Input::Cmx | Input::Bcf => {
            let loaded = load_checked(input, bytes, s, &what);
            skills_checked(bytes, input.format(), Cfps(s.cfps.clone()), s, &what);
            loaded
        }
        Input::Cfp => {
            let mut cfps = s.cfps.clone();
            cfps[0].1 = bytes;
            skills_checked(s.skill_file, s.skill_format, Cfps(cfps), s, &what)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The sweeps
// ---------------------------------------------------------------------------------------------

/// How much of a file a sweep covers: how many lengths to cut it at and bytes to flip every bit
/// of (all of them when the file is no longer), and how many random byte runs to write.
#[derive(Clone, Copy)]
struct Spread {
    cuts: usize,
    flips: usize,
    runs: usize,
}

/// The rig's files are small: every length, every bit.
const ALL: Spread = Spread {
    cuts: usize::MAX,
    flips: usize::MAX,
    runs: 200,
};

/// Truncations, bit flips and random byte runs of `bytes`, as much as `spread` says.
fn byte_sweep(input: Input, bytes: &[u8], s: &Setting, name: &str, spread: Spread) -> Tally {
    let mut tally = Tally::default();
    for len in lengths(bytes.len(), spread.cuts) {
        let loaded = survive(input, &bytes[..len], s, &format!("{name} cut to {len}"));
        tally.add(loaded);
    }
    let mut rng = XorShift::new(bytes.len() as u64);
    let positions = flip_positions(bytes.len(), &mut rng, spread.flips);
    let t = flip_bits(bytes, positions, |b, what| {
        survive(input, b, s, &format!("{name} {what}"))
    });
    let r = random_runs(bytes, &mut rng, spread.runs, 0, |b, what| {
        survive(input, b, s, &format!("{name} {what}"))
    });
    tally.loaded += t.loaded + r.loaded;
    tally.failed += t.failed + r.failed;
    tally
}

/// Text broken line by line (every `step`th line): each line missing, repeated, after an extra
/// blank line, its count made huge, its first number replaced by a non-number, a stray byte at
/// its start, middle and end, and replaced by a very long line.
fn text_cases(text: &[u8], step: usize) -> Vec<(String, Vec<u8>)> {
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let with = |i: usize, new: &[&[u8]]| -> Vec<u8> {
        let mut out = lines[..i].concat();
        for piece in new {
            out.extend_from_slice(piece);
        }
        out.extend(lines[i + 1..].concat());
        out
    };
    let mut cases = Vec::new();
    for (i, &line) in lines.iter().enumerate().step_by(step) {
        let n = i + 1;
        let end = line.len()
            - line
                .iter()
                .rev()
                .take_while(|b| b"\r\n".contains(b))
                .count();
        let (body, eol) = line.split_at(end);
        cases.push((format!("line {n} missing"), with(i, &[])));
        cases.push((format!("line {n} twice"), with(i, &[line, line])));
        cases.push((format!("blank line before {n}"), with(i, &[b"\r\n", line])));
        let words: Vec<&[u8]> = body.split(|b| b.is_ascii_whitespace()).collect();
        if body.iter().all(u8::is_ascii_digit) && !body.is_empty() {
            cases.push((
                format!("line {n} = 4000000000"),
                with(i, &[b"4000000000", eol]),
            ));
        }
        let number = words.iter().position(|w| {
            std::str::from_utf8(w)
                .ok()
                .is_some_and(|w| w.parse::<f64>().is_ok())
        });
        if let Some(k) = number {
            for bad in ["1e999", "nan", "abc", "-", "inf", "-1", "1e-45", "0x10"] {
                let mut ws = words.clone();
                ws[k] = bad.as_bytes();
                let new = ws.join(&b' ');
                cases.push((format!("line {n} word {k} = {bad}"), with(i, &[&new, eol])));
            }
        }
        for stray in [b"\0", b"\xff", b"\t", b"\r"] {
            let mid = body.len() / 2;
            for (at, place) in [(0, "start"), (mid, "middle"), (body.len(), "end")] {
                let (a, b) = body.split_at(at);
                cases.push((
                    format!("line {n}: {stray:?} at the {place}"),
                    with(i, &[a, stray, b, eol]),
                ));
            }
        }
        let long = match i % 3 {
            0 => b"9".repeat(100_000),
            1 => b"1 ".repeat(50_000),
            _ => b"x".repeat(100_000),
        };
        cases.push((
            format!("line {n} 100 000 bytes long"),
            with(i, &[&long, eol]),
        ));
    }
    cases
}

fn text_sweep(input: Input, text: &[u8], s: &Setting, name: &str, step: usize) -> Tally {
    let mut tally = Tally::default();
    for (what, bytes) in text_cases(text, step) {
        tally.add(survive(input, &bytes, s, &format!("{name} {what}")));
    }
    tally
}

#[test]
fn the_rig_files_load_and_play() {
    let f = files();
    let s = Setting::rig();
    for input in INPUTS {
        let bytes = f.of(input);
        assert!(survive(input, bytes, &s, "whole"), "{input:?}");
        println!("{input:?}: {} bytes", bytes.len());
    }
    let skeleton = &f.skeleton;
    assert_eq!(skeleton.bones().len(), 3);
    let mesh = Model::load(&f.skn, &options(Format::SimsSkn)).unwrap();
    let bound = Model::bind(&mesh, skeleton).unwrap();
    assert_eq!(bound.meshes()[0].vertex_count(), 12);
    assert_eq!(bound.meshes()[0].max_influences(), 2);
    // The CFP has every kind of code: full values, repeats, and deltas (it is shorter than
    // full values and repeats alone).
    let (t, r) = skill_values();
    assert!(f.cfp.len() < cfp::encode_skill(&t, &r, None).len());
    assert!(f.cfp.contains(&0xFF) && f.cfp.contains(&0xFE));
}

#[test]
fn skill_problems_say_where_they_are() {
    let f = files();
    let cfps = Cfps(vec![("xskill-wave-loop.cfp".to_owned(), &f.cfp)]);
    let opts = LoadOptions {
        io: Some(&cfps),
        name: Some("rig.cmx".to_owned()),
        ..LoadOptions::default()
    };
    let text = String::from_utf8(f.cmx.clone()).unwrap();
    let skill_line = text.lines().position(|l| l == "wave-loop").unwrap() as u32 + 1;
    // A skill none of whose motions moves anything is placed at the skill, in text and binary.
    let mut still = character(&rig());
    for m in &mut still.skills[0].motions {
        m.has_translation = false;
        m.has_rotation = false;
    }
    for binary in [false, true] {
        let file = cmx::write_character(&still, binary).unwrap();
        let e = f.skeleton.with_skills(&file, &opts).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
        assert!(e.to_string().contains("no motion with frames"), "{e}");
        if binary {
            // The skill's name: its length byte, then the bytes.
            let name_at = file
                .windows(10)
                .position(|w| w == b"\x09wave-loop")
                .unwrap() as u64;
            assert_eq!(e.offset(), Some(name_at), "{e}");
        } else {
            assert_eq!(e.line(), Some(skill_line), "{e}");
        }
    }
    // A rotation without length is placed at its w value's code in the CFP, which is named.
    let mut r: Vec<[f32; 4]> = (0..6).map(|_| [0.0, 0.0, 0.0, 1.0]).collect();
    r[2] = [0.0; 4];
    let zero = cfp::encode_skill(&[[0.0; 3]; 6], &r, None);
    let cfps = Cfps(vec![("xskill-wave-loop.cfp".to_owned(), &zero)]);
    let e = f
        .skeleton
        .with_skills(
            &f.cmx,
            &LoadOptions {
                io: Some(&cfps),
                ..opts.clone()
            },
        )
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert!(
        e.to_string()
            .starts_with("xskill-wave-loop.cfp: skill wave-loop: rotation 2"),
        "{e}"
    );
    assert!(e.offset().is_some_and(|o| zero[o as usize] == 0xFF), "{e}");
    // Text after the last skill: a warning, or in strict mode an error on its line.
    let mut trailing = f.cmx.clone();
    trailing.extend_from_slice(b"junk\r\n");
    let strict = LoadOptions {
        strict: true,
        ..opts.clone()
    };
    let e = f.skeleton.with_skills(&trailing, &strict).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
    assert_eq!(e.line(), Some(line_count(&f.cmx)), "{e}");
    assert_eq!(
        f.skeleton
            .with_skills(&trailing, &opts)
            .unwrap()
            .warnings()
            .len(),
        1
    );
}

/// The whole sweep of one of the rig's files: its bytes, and its lines when it is text.
fn rig_sweep(input: Input) {
    let s = Setting::rig();
    let bytes = files().of(input);
    let t = byte_sweep(input, bytes, &s, "rig", ALL);
    println!("{input:?} bytes: {t:?}");
    assert!(t.loaded > 0 && t.failed > 0, "{input:?}");
    if input.text() {
        let t = text_sweep(input, bytes, &s, "rig", 1);
        println!("{input:?} lines: {t:?}");
        assert!(t.loaded > 0 && t.failed > 0, "{input:?}");
    }
}

#[test]
fn skn_sweep() {
    rig_sweep(Input::Skn);
}

#[test]
fn bmf_sweep() {
    rig_sweep(Input::Bmf);
}

#[test]
fn cmx_sweep() {
    rig_sweep(Input::Cmx);
}

#[test]
fn bcf_sweep() {
    rig_sweep(Input::Bcf);
}

#[test]
fn cfp_sweep() {
    rig_sweep(Input::Cfp);
}

// ---------------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------------

fn read(dir: &std::path::Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Corpus files are larger than the rig's, and real: a spread of each is enough, smaller for
/// the large ones (a body mesh is 60 KB).
const CORPUS: Spread = Spread {
    cuts: 128,
    flips: 32,
    runs: 24,
};
const CORPUS_LARGE: Spread = Spread {
    cuts: 48,
    flips: 8,
    runs: 8,
};

/// Every tenth line of a corpus text file is broken every way.
const CORPUS_LINE_STEP: usize = 10;

#[test]
fn corpus_sweep() {
    let Some(dir) = corpus_subdir("sims", "corpus_sweep") else {
        return;
    };
    let skeleton = Model::load(
        &read(&dir, "so_adult-skeleton.cmx"),
        &options(Format::SimsCmx),
    )
    .unwrap();
    // A skill file and its CFP; the skill file also as a BCF (the corpus has no BCF whose CFPs
    // are all there).
    let idle = read(&dir, "so_adult-idle1.cmx");
    let idle_bcf = cmx::write_character(&cmx::parse(&idle).unwrap(), true).unwrap();
    let cfp_file = "so_xskill-A2O-idle1.cfp";
    let cfp = read(&dir, cfp_file);
    for (file, bytes, input) in [
        ("so_adult-idle1.cmx", &idle, Input::Cmx),
        ("so_adult-idle1.cmx as BCF", &idle_bcf, Input::Bcf),
    ] {
        let s = Setting {
            skeleton: &skeleton,
            skill_file: bytes,
            skill_format: input.format(),
            cfps: vec![("xskill-A2O-idle1.cfp".to_owned(), &cfp)],
        };
        assert!(survive(Input::Cfp, &cfp, &s, "whole"), "{file}");
        let t = byte_sweep(input, bytes, &s, file, CORPUS);
        println!("{file}: {t:?}");
        if input == Input::Cmx {
            let t = text_sweep(input, bytes, &s, file, CORPUS_LINE_STEP);
            println!("{file} as text: {t:?}");
            let t = byte_sweep(Input::Cfp, &cfp, &s, cfp_file, CORPUS);
            println!("{cfp_file}: {t:?}");
        }
    }
    // Files on their own: a skeleton, a BCF skill file (its skill path ends at the CFP of its
    // first skill, which the corpus lacks), meshes bound to the skeleton.
    let s = Setting {
        skeleton: &skeleton,
        skill_file: &[],
        skill_format: Format::SimsCmx,
        cfps: Vec::new(),
    };
    for (file, input, spread) in [
        ("so_adult-skeleton.cmx", Input::Cmx, CORPUS),
        ("olt_ross-walking-loop.cmx.bcf", Input::Bcf, CORPUS),
        ("so_xskin-c005ma_hipster-HEAD-SPECS.skn", Input::Skn, CORPUS),
        (
            "so_xskin-b001mafit_01-PELVIS-BODY.skn",
            Input::Skn,
            CORPUS_LARGE,
        ),
    ] {
        let bytes = read(&dir, file);
        assert!(survive(input, &bytes, &s, "whole"), "{file}");
        let t = byte_sweep(input, &bytes, &s, file, spread);
        println!("{file}: {t:?}");
    }
    let specs = read(&dir, "so_xskin-c005ma_hipster-HEAD-SPECS.skn");
    let t = text_sweep(Input::Skn, &specs, &s, "specs", CORPUS_LINE_STEP);
    println!("specs as text: {t:?}");
}

/// The 1998 prototype: a version 200 suit file (its skeleton and suit), a version 200 skill file
/// and the `.bin` numbers of its skill, each broken and sent down the load and skill paths.
#[test]
fn proto1998_sweep() {
    let Some(dir) = corpus_subdir("sims/proto1998", "proto1998_sweep") else {
        return;
    };
    let colonel = read(&dir, "colonelsuit.CMX");
    let skeleton = Model::load(&colonel, &options(Format::SimsCmx)).unwrap();
    let greet = read(&dir, "adult-greet01.cmx");
    let bin_file = "xskill-adult-greet01.bin";
    let bin = read(&dir, bin_file);
    let s = Setting {
        skeleton: &skeleton,
        skill_file: &greet,
        skill_format: Format::SimsCmx,
        cfps: vec![(bin_file.to_owned(), &bin)],
    };
    assert!(survive(Input::Cfp, &bin, &s, "whole"), "{bin_file}");
    for (file, bytes) in [("colonelsuit.CMX", &colonel), ("adult-greet01.cmx", &greet)] {
        let t = byte_sweep(Input::Cmx, bytes, &s, file, CORPUS);
        println!("{file}: {t:?}");
        assert!(t.loaded > 0 && t.failed > 0, "{file}");
        let t = text_sweep(Input::Cmx, bytes, &s, file, CORPUS_LINE_STEP);
        println!("{file} as text: {t:?}");
    }
    // A `.bin` stands where the sweep puts a CFP: the skill path reads it for the greeting.
    let t = byte_sweep(Input::Cfp, &bin, &s, bin_file, CORPUS);
    println!("{bin_file}: {t:?}");
    assert!(t.loaded > 0 && t.failed > 0, "{bin_file}");
}

// ---------------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------------

const MIB: usize = 1 << 20;

/// The most heap `bytes` takes to load as `input` (default and strict mode, validation) and down
/// the skill path.
fn peak_of_input(input: Input, bytes: &[u8], s: &Setting) -> usize {
    let format = input.format();
    let strict = LoadOptions {
        strict: true,
        ..options(format)
    };
    let mut peak = 0;
    if input != Input::Cfp {
        for opts in [options(format), strict] {
            peak = peak.max(peak_of(|| Model::load(bytes, &opts).map(|m| m.info())).1);
        }
        peak = peak.max(peak_of(|| validate(bytes, &options(format)).problems.len()).1);
    }
    let (skill_file, mut cfps) = (s.skill_file, s.cfps.clone());
    let (skill_file, format) = match input {
        Input::Cmx | Input::Bcf => (bytes, format),
        _ => {
            cfps[0].1 = bytes;
            (skill_file, s.skill_format)
        }
    };
    if matches!(input, Input::Cmx | Input::Bcf | Input::Cfp) {
        let cfps = Cfps(cfps);
        let opts = LoadOptions {
            format,
            io: Some(&cfps),
            ..LoadOptions::default()
        };
        let added = peak_of(|| s.skeleton.with_skills(skill_file, &opts).map(|m| m.info()));
        peak = peak.max(added.1);
    }
    peak
}

/// `bytes` cut or padded with random bytes to exactly 1 KiB.
fn kilobyte(bytes: &[u8], rng: &mut XorShift) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let have = out.len().min(1024);
    out.resize(1024, 0);
    rng.fill(&mut out[have..]);
    out
}

#[test]
fn hostile_kilobytes_take_less_than_64_mib() {
    let f = files();
    let s = Setting::rig();
    let mut rng = XorShift::new(0x1024);
    let mut inputs: Vec<(Input, String, Vec<u8>)> = Vec::new();
    for input in INPUTS {
        let bytes = f.of(input);
        inputs.push((input, "the file in 1 KiB".into(), kilobyte(bytes, &mut rng)));
        // Counts of all ones (2^32 - 1) wherever they fall, and text counts of 4 000 000 000.
        for i in 0..16 {
            let mut b = kilobyte(bytes, &mut rng);
            for _ in 0..4 {
                let at = rng.below(1020);
                b[at..at + 4].fill(0xFF);
            }
            inputs.push((input, format!("all ones {i}"), b));
        }
        if input.text() {
            for (what, b) in text_cases(bytes, 1) {
                if what.ends_with("= 4000000000") {
                    inputs.push((input, what, kilobyte(&b, &mut rng)));
                }
            }
        }
        for i in 0..8 {
            inputs.push((input, format!("noise {i}"), kilobyte(&[], &mut rng)));
        }
    }
    // Repeat codes: 341 of them ask for 22 million values.
    inputs.push((Input::Cfp, "repeats".into(), [0xFE, 0xFF, 0xFF].repeat(341)));
    let mut largest = 0;
    for (input, what, bytes) in &inputs {
        assert!(bytes.len() <= 1024, "{what}");
        let peak = peak_of_input(*input, bytes, &s);
        assert!(peak < 64 * MIB, "{input:?} {what}: {peak} bytes of heap");
        largest = largest.max(peak);
        // And they end cleanly.
        survive(*input, bytes, &s, what);
    }
    println!(
        "{} hostile 1 KiB inputs, at most {largest} bytes of heap",
        inputs.len()
    );
    assert!(largest < MIB, "{largest}");
}

/// A skill that declares `4 * rotations` values but reads one rotation, and a CFP of 778 bytes
/// whose repeat codes give them all (x, y and z 0, w 1).
fn declared_but_unread(rotations: u32) -> (Vec<u8>, Vec<u8>) {
    let mut file = character(&rig());
    let skill = &mut file.skills[0];
    skill.translation_count = 0;
    skill.rotation_count = rotations;
    skill.motions.truncate(1);
    let motion = &mut skill.motions[0];
    (
        motion.frame_count,
        motion.has_translation,
        motion.has_rotation,
    ) = (1, false, true);
    (motion.translation_offset, motion.rotation_offset) = (-1, 0);
    let mut stream = Vec::new();
    for (value, count) in [(0.0f32, 3 * rotations as usize), (1.0, rotations as usize)] {
        stream.push(0xFF);
        stream.extend_from_slice(&value.to_le_bytes());
        let mut left = count - 1;
        while left > 0 {
            let n = left.min(1 << 16);
            stream.push(0xFE);
            stream.extend_from_slice(&((n - 1) as u16).to_le_bytes());
            left -= n;
        }
    }
    (cmx::write_character(&file, false).unwrap(), stream)
}

#[test]
fn cfp_values_count_against_the_memory_limit() {
    // 2^22 rotations: the stream's limit of 2^24 values, 64 MiB of floats decoded for one frame.
    let (skill_file, stream) = declared_but_unread(1 << 22);
    assert_eq!(stream.len(), 778);
    assert_eq!(cfp::count_values(&stream).unwrap(), cfp::MAX_VALUES);
    let f = files();
    let cfps = Cfps(vec![("xskill-wave-loop.cfp".to_owned(), &stream)]);
    let limited = |max_bytes: u64| LoadOptions {
        io: Some(&cfps),
        max_bytes,
        ..LoadOptions::default()
    };
    // Within 64 MiB the values do not fit: refused before any is decoded, placed at the skill.
    let (r, peak) = peak_of(|| f.skeleton.with_skills(&skill_file, &limited(64 << 20)));
    let e = r.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    assert!(
        e.line().is_some() && e.to_string().contains("16777216 values"),
        "{e}"
    );
    assert!(peak < MIB, "{peak} bytes of heap");
    // The default ceiling grows with the input (16 MiB + 256 bytes per byte): a kilobyte of
    // repeat codes cannot ask for 128 MiB either.
    let (r, peak) = peak_of(|| f.skeleton.with_skills(&skill_file, &limited(0)));
    assert_eq!(r.unwrap_err().code(), ErrorCode::Limit);
    assert!(peak < MIB, "{peak} bytes of heap");
    // A caller who allows it gets them decoded, taking what was counted for them.
    let (r, peak) = peak_of(|| {
        f.skeleton
            .with_skills(&skill_file, &limited(1 << 30))
            .map(|m| m.frames().len())
    });
    assert_eq!(r.unwrap(), 2);
    let counted = 8 * cfp::MAX_VALUES;
    assert!(
        peak <= counted + MIB,
        "{peak} bytes of heap, {counted} counted"
    );
}

#[test]
fn a_small_memory_limit_is_a_limit_error() {
    let f = files();
    for input in [Input::Skn, Input::Bmf, Input::Cmx, Input::Bcf] {
        let opts = LoadOptions {
            max_bytes: 64,
            ..options(input.format())
        };
        let e = Model::load(f.of(input), &opts).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Limit, "{input:?}: {e}");
        assert!(e.to_string().contains("64 bytes"), "{input:?}: {e}");
    }
    // A CFP's frames on the rig: room for the skeleton but not for them.
    let cfps = Cfps(vec![("xskill-wave-loop.cfp".to_owned(), &f.cfp)]);
    let opts = LoadOptions {
        io: Some(&cfps),
        max_bytes: f.skeleton.heap_bytes() as u64 + 64,
        ..LoadOptions::default()
    };
    let e = f.skeleton.with_skills(&f.cmx, &opts).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    assert!(
        f.skeleton
            .with_skills(
                &f.cmx,
                &LoadOptions {
                    max_bytes: 0,
                    ..opts
                }
            )
            .is_ok()
    );
}

#[test]
fn a_cfp_over_the_memory_limit_is_not_read() {
    const LIMIT: u64 = 1 << 20;
    let f = files();
    // A real CFP with 2 MB after it: the values decode from its start, so only its size is wrong.
    let big = [f.cfp.as_slice(), &vec![0u8; 2 << 20]].concat();
    let size = big.len();
    let refused = |e: &Error, path: &str| {
        assert_eq!(e.code(), ErrorCode::Limit, "{e}");
        let head = format!("{path} holds {size} bytes, more than the ");
        assert!(e.to_string().contains(&head), "{e}");
    };

    // Through the caller's filesystem, read by path and refused by its length.
    let cfps = Cfps(vec![("xskill-wave-loop.cfp".to_owned(), &big)]);
    let opts = LoadOptions {
        format: Format::SimsCmx,
        io: Some(&cfps),
        name: Some("skills.cmx".to_owned()),
        max_bytes: LIMIT,
        ..LoadOptions::default()
    };
    let fits = Cfps(vec![("xskill-wave-loop.cfp".to_owned(), &f.cfp)]);
    let ok = LoadOptions {
        io: Some(&fits),
        ..opts.clone()
    };
    assert!(f.skeleton.with_skills(&f.cmx, &ok).unwrap().frames().len() > 1);
    let (r, peak) = peak_of(|| f.skeleton.with_skills(&f.cmx, &opts));
    refused(&r.unwrap_err(), "xskill-wave-loop.cfp");
    assert!(peak < LIMIT as usize, "{peak}");

    // From disk, refused by its size before it is read.
    let dir = std::env::temp_dir().join(format!("ossa-cfp-limit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("skills.cmx"), &f.cmx).unwrap();
    std::fs::write(dir.join("xskill-wave-loop.cfp"), &big).unwrap();
    let disk = LoadOptions {
        format: Format::SimsCmx,
        max_bytes: LIMIT,
        ..LoadOptions::default()
    };
    let (r, peak) = peak_of(|| f.skeleton.with_skills_file(dir.join("skills.cmx"), &disk));
    let path = dir.join("xskill-wave-loop.cfp");
    refused(&r.unwrap_err(), &path.to_string_lossy());
    assert!(peak < LIMIT as usize, "{peak}");
    let _ = std::fs::remove_dir_all(&dir);
}
