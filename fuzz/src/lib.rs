//! What the fuzz targets check. Each target in `fuzz_targets/` hands its input to one function
//! here, which panics (a crash for libFuzzer) when ossa breaks a promise: a panic or an error of
//! the wrong kind, a model that breaks its own invariants, a load that holds much more memory
//! than its input, a validator that disagrees with the loader, a strict load that accepts what
//! the default one refuses, a saved model that does not load back, a C call that disagrees with
//! the Rust API or writes where it should not.

pub mod check;
pub mod invariants;
pub mod load_file;
pub mod pose_skin;
pub mod samples;

#[path = "../../tests/counting_alloc/mod.rs"]
mod counting_alloc;

use std::sync::OnceLock;

use ossa::format::cfp as cfp_codec;
use ossa::optimize::OPTIMIZE_ALL;
use ossa::{ErrorCode, Format, LoadOptions, Model};

use check::{check_model, model_or_clean};
use counting_alloc::{budget, peak_of};
use samples::{MESH_FORMATS, SKELETON_FORMATS, WRITERS, split_two};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

/// The load target: `data` loaded as `format`, within the hostile-input budget of memory
/// (see [`check::load`]).
pub fn load(data: &[u8], format: Format) {
    check::load(data, format, budget(data.len()));
}

/// The bind target: two formats chosen by the first two bytes, then two files as
/// [`samples::bind_input`] puts them: meshes and a skeleton, each loaded and checked as the load
/// targets check them, then bound. A binding is a model with the skeleton's bones and frames and the
/// meshes' meshes; a refusal says the two do not fit (`Mismatch`) or names a missing bone
/// (`NotFound`).
pub fn bind(data: &[u8]) {
    let [m, s, rest @ ..] = data else {
        return;
    };
    let pick = |list: &[Format], b: u8| list[b as usize % list.len()];
    let (mesh_bytes, skeleton_bytes) = split_two(rest);
    let load = |bytes: &[u8], format| check::load(bytes, format, budget(bytes.len()));
    let (Some(meshes), Some(skeleton)) = (
        load(mesh_bytes, pick(&MESH_FORMATS, *m)),
        load(skeleton_bytes, pick(&SKELETON_FORMATS, *s)),
    ) else {
        return;
    };
    let clean = [ErrorCode::Mismatch, ErrorCode::NotFound];
    let Some(bound) = model_or_clean(Model::bind(&meshes, &skeleton), &clean, "bind") else {
        return;
    };
    assert!(bound.unbound().is_none());
    assert!(bound.shares_skeleton(&skeleton));
    assert_eq!(bound.meshes().len(), meshes.meshes().len());
    check_model(&bound, "the bound model");
}

/// Most values the cfp target encodes again.
const ROUND_TRIP_VALUES: usize = 1 << 12;

/// The cfp target: the whole input as a CFP stream. Counting and decoding agree, and a count the
/// stream does not give is refused; streams of up to [`ROUND_TRIP_VALUES`] values are decoded,
/// and their values encode (exactly, and within a tolerance with deltas) to streams that decode
/// back to them, and a skill's split of them takes them all, in groups.
pub fn cfp(data: &[u8]) {
    let clean = [ErrorCode::Malformed, ErrorCode::Truncated, ErrorCode::Limit];
    let count = match cfp_codec::count_values(data) {
        Ok(count) => count,
        Err(e) => {
            assert!(clean.contains(&e.code()), "{e}");
            assert!(cfp_codec::decode(data, 0).is_err());
            return;
        }
    };
    // A count the stream does not give is refused, before anything is allocated for it.
    for wrong in [count.wrapping_sub(1), count + 1] {
        if let Err(e) = cfp_codec::decode(data, wrong) {
            assert!(clean.contains(&e.code()), "{e}");
        } else {
            panic!("{count} values decode as {wrong}");
        }
    }
    // Streams of many values (a repeat code gives up to 65536 for three bytes) stop here, so
    // that an input runs in microseconds.
    if count > ROUND_TRIP_VALUES {
        return;
    }
    let values = match cfp_codec::decode(data, count) {
        Ok(values) => values,
        Err(e) => {
            // Deltas may run a value past the range of a float.
            assert_eq!(e.code(), ErrorCode::Malformed, "{e}");
            return;
        }
    };
    assert_eq!(values.len(), count);
    assert!(values.iter().all(|v| v.is_finite()));
    let exact = cfp_codec::decode(&cfp_codec::encode(&values), count).expect("an exact encoding");
    assert!(
        exact
            .iter()
            .zip(&values)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "the exact encoding changes values"
    );
    let tolerance = 0.001;
    let lossy = cfp_codec::decode(&cfp_codec::encode_lossy(&values, tolerance), count)
        .expect("a lossy encoding");
    for (i, (a, b)) in lossy.iter().zip(&values).enumerate() {
        assert!((a - b).abs() <= tolerance, "value {i}: {b} encoded as {a}");
    }
    let translations = data.first().map_or(0, |&b| b as usize).min(count / 3);
    if (count - translations * 3).is_multiple_of(4) {
        let rotations = (count - translations * 3) / 4;
        let (t, r) = match cfp_codec::decode_skill(data, translations, rotations) {
            Ok(split) => split,
            // A rotation of length zero is refused, at its w value's code.
            Err(e) => {
                assert_eq!(e.code(), ossa::ErrorCode::Malformed, "{e}");
                assert!(e.to_string().contains("has no length"), "{e}");
                return;
            }
        };
        assert_eq!((t.len(), r.len()), (translations, rotations));
        let group = |g: usize, i: usize| values[g * translations + i];
        for (i, v) in t.iter().enumerate() {
            assert_eq!(*v, [group(0, i), group(1, i), group(2, i)]);
        }
        let r0 = translations * 3;
        for (i, q) in r.iter().enumerate() {
            let at = |c: usize| values[r0 + c * rotations + i];
            assert_eq!(*q, [at(0), at(1), at(2), at(3)]);
        }
    }
}

/// One file's bytes under every name `serves` accepts; no other file exists.
struct NumbersFs {
    data: Vec<u8>,
    serves: fn(&str) -> bool,
}

impl ossa::io::FileSystem for NumbersFs {
    fn read(&self, path: &str) -> ossa::Result<ossa::io::FileData<'_>> {
        if (self.serves)(path) {
            Ok(Box::new(self.data.as_slice()))
        } else {
            Err(ossa::Error::not_found(path.to_owned()))
        }
    }
}

/// Most memory a model with skills may take in the skills target: enough for every seed, small
/// enough that the frames a short CFP can ask for are refused as a limit in milliseconds.
const SKILLS_MAX_BYTES: u64 = 64 << 20;

/// The skills target: flags in the first byte (bit 0 strict, bits 1-2 the file's format:
/// detected, CMX or BCF; bits 3-4 where the numbers are: every file, only `.bin` files (a
/// version-200 skill's), no file), then a character file (CMX text or BCF)
/// and the numbers every skill of it reads (a CFP or a `.bin`), as [`samples::join_two`] puts
/// them, added to a tube skeleton. The result keeps the skeleton's bones and frame 0 and adds a
/// scene per skill; a refusal is of a clean kind.
pub fn skills(data: &[u8]) {
    static SKELETON: OnceLock<Model> = OnceLock::new();
    let skeleton = SKELETON.get_or_init(|| samples::tube(3, 3, 3));
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let (file, cfp) = split_two(rest);
    let fs = NumbersFs {
        data: cfp.to_vec(),
        serves: match (flags >> 3) & 3 {
            0 => |_| true,
            1 => |path| path.ends_with(".bin"),
            _ => |_| false,
        },
    };
    let formats = [Format::Auto, Format::SimsCmx, Format::SimsBcf];
    let options = LoadOptions {
        format: formats[((flags >> 1) & 3) as usize % formats.len()],
        strict: flags & 1 != 0,
        max_bytes: SKILLS_MAX_BYTES,
        name: Some("anims/fuzz.cmx".to_owned()),
        io: Some(&fs),
        ..LoadOptions::default()
    };
    let clean = [
        ErrorCode::UnknownFormat,
        ErrorCode::Truncated,
        ErrorCode::Malformed,
        ErrorCode::Unsupported,
        ErrorCode::Limit,
        ErrorCode::InvalidArgument,
        ErrorCode::Mismatch,
        ErrorCode::NotFound,
    ];
    let result = skeleton.with_skills(file, &options);
    let Some(model) = model_or_clean(result, &clean, "with_skills") else {
        return;
    };
    assert_eq!(model.bones(), skeleton.bones());
    assert_eq!(
        model.skeleton().frame_poses(0),
        skeleton.skeleton().frame_poses(0)
    );
    assert!(model.animations().len() > skeleton.animations().len());
    // A version-200 skill without its numbers adds a scene without frames.
    assert!(model.frames().len() >= skeleton.frames().len());
    check_model(&model, "the skeleton with skills");
}

/// Most heap optimising may hold at once, per byte of the model's own heap, plus a megabyte:
/// the new model and the orders' working lists.
const OPTIMIZE_PEAK_PER_BYTE: usize = 4;

/// The optimize_save target: the `OPTIMIZE_*` flags in the first byte, then a file of any format,
/// loaded and checked as the load targets do. Optimising keeps the model's invariants, its
/// meshes and their vertex and triangle counts (and its bones, unless unused ones go), within
/// [`OPTIMIZE_PEAK_PER_BYTE`] of memory; then every writer saves the optimised model or refuses
/// it cleanly (as unsupported or past a limit; another format's also as an argument that does
/// not fit it), and what one writes loads back as its format, within the
/// library's default ceiling for its size, as a model that keeps its invariants (with the same
/// bones, frames and meshes when saved in the model's own format).
pub fn optimize_save(data: &[u8]) {
    let Some((&flags, file)) = data.split_first() else {
        return;
    };
    let Some(model) = check::load(file, Format::Auto, budget(file.len())) else {
        return;
    };
    let flags = u32::from(flags) & OPTIMIZE_ALL;
    let (result, peak) = peak_of(|| model.optimized(flags));
    let (optimized, report) = match result {
        Ok(r) => r,
        Err(e) => panic!("optimising with flags {flags}: {:?}: {e}", e.code()),
    };
    let allowed = OPTIMIZE_PEAK_PER_BYTE * model.heap_bytes() + (1 << 20);
    assert!(
        peak <= allowed,
        "optimising a model of {} bytes held {peak} bytes at once",
        model.heap_bytes()
    );
    check_model(&optimized, "the optimised model");
    assert_eq!(report.bones_before as usize, model.bones().len());
    assert_eq!(report.bones_after as usize, optimized.bones().len());
    if flags & ossa::optimize::OPTIMIZE_UNUSED_BONES == 0 {
        if flags & ossa::optimize::OPTIMIZE_BONE_ORDER == 0 {
            assert_eq!(optimized.bones(), model.bones());
        } else {
            // Renumbered only: the same bones, each parent still before its child.
            assert_eq!(optimized.bones().len(), model.bones().len());
            for (i, b) in optimized.bones().iter().enumerate() {
                assert!(
                    b.parent < i as i32,
                    "bone {i}'s parent {} after it",
                    b.parent
                );
            }
        }
    }
    assert_eq!(optimized.frames().len(), model.frames().len());
    assert_eq!(optimized.meshes().len(), model.meshes().len());
    for (a, b) in optimized.meshes().iter().zip(model.meshes()) {
        assert_eq!(a.vertex_count(), b.vertex_count());
        assert_eq!(a.triangle_count(), b.triangle_count());
    }
    for &(format, write) in WRITERS {
        let bytes = match write(&optimized) {
            Ok(bytes) => bytes,
            Err(e) => {
                // Another format's writer may also refuse a model without what the format
                // needs (bones, meshes, ...) as an unfit argument.
                let own = format == optimized.format();
                assert!(
                    matches!(e.code(), ErrorCode::Unsupported | ErrorCode::Limit)
                        || (!own && e.code() == ErrorCode::InvalidArgument),
                    "saving as {}: {:?}: {e}",
                    format.name(),
                    e.code()
                );
                continue;
            }
        };
        let options = LoadOptions {
            format,
            ..LoadOptions::default()
        };
        let (again, peak) = peak_of(|| Model::load(&bytes, &options));
        let again = match again {
            Ok(m) => m,
            Err(e) => panic!(
                "the model saved as {} does not load: {:?}: {e}",
                format.name(),
                e.code()
            ),
        };
        assert!(
            peak as u64 <= options.max_bytes_for(bytes.len()),
            "loading {} bytes saved as {} held {peak} bytes at once",
            bytes.len(),
            format.name()
        );
        check_model(&again, "the saved model");
        if format == optimized.format() {
            assert_eq!(again.bones().len(), optimized.bones().len());
            assert_eq!(again.frames().len(), optimized.frames().len());
            assert_eq!(again.meshes().len(), optimized.meshes().len());
        }
    }
    // glTF: a model whose meshes have their bones exports, as one GLB whose lengths add up, and
    // what the export measured is finite.
    match optimized.export_gltf(&ossa::format::gltf::ExportOptions::default()) {
        Ok(export) => {
            let b = &export.bytes;
            assert!(b.len() >= 20 && b.starts_with(b"glTF"));
            let word = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
            assert_eq!(word(8) as usize, b.len());
            assert_eq!(&b[16..20], b"JSON");
            let e = &export.exactness;
            assert!(e.size.is_finite() && e.bind_max.is_finite() && e.animated_max.is_finite());
        }
        Err(e) => assert!(
            (optimized.unbound().is_some() && e.code() == ErrorCode::InvalidArgument)
                || e.code() == ErrorCode::Limit,
            "exporting glTF: {:?}: {e}",
            e.code()
        ),
    }
}

/// The render target: four bytes of options (size, view, overlays, which frame), then a file of
/// any format, loaded and checked as the load targets do. A model that loaded and has its bones
/// draws at one of its frames without error, every pixel the background or a colour the
/// renderer makes (opaque where the background is), and the same bytes a second time; one
/// still waiting for its skeleton is refused as an argument.
pub fn render(data: &[u8]) {
    use ossa::render::{RenderOptions, View, render};
    let [size, look, frame, angle, file @ ..] = data else {
        return;
    };
    let Some(model) = check::load(file, Format::Auto, budget(file.len())) else {
        return;
    };
    let frames = model.frames().len().max(1);
    let blend = [ossa::FrameBlend {
        frame: (*frame as usize % frames) as u32,
        weight: 1.0,
    }];
    let mut poses = vec![ossa::Mat3x4::IDENTITY; model.bones().len()];
    if model.frames().is_empty() || model.pose_frames(&blend, None, &mut poses).is_err() {
        poses = model.skeleton().bind_pose().to_vec();
    }
    let views = [View::ThreeQuarter, View::Front, View::Side, View::Top];
    let options = RenderOptions {
        width: 4 + u32::from(size & 31),
        height: 4 + u32::from(size >> 3),
        view: views[(look & 3) as usize],
        yaw_degrees: (look & 32 != 0).then_some(f32::from(*angle) * 1.5),
        pitch_degrees: (look & 64 != 0).then_some(f32::from(*angle) - 128.0),
        background: [1, 2, 3, 0],
        wireframe: look & 4 != 0,
        bones: look & 8 != 0,
        antialias: look & 16 != 0,
    };
    let mut out = vec![0u8; options.width as usize * options.height as usize * 4];
    match render(&model, &poses, &[], &options, &mut out) {
        Ok(()) => {
            assert!(
                model.unbound().is_none(),
                "a model waiting for its skeleton was drawn"
            );
            // Everything drawn is opaque; only the background keeps alpha 0.
            for p in out.chunks_exact(4) {
                assert!(
                    p == [1, 2, 3, 0] || p[3] == 255 || options.antialias,
                    "pixel {p:?}"
                );
            }
            let mut again = vec![0u8; out.len()];
            render(&model, &poses, &[], &options, &mut again).expect("a second time");
            assert!(again == out, "the same input drew other bytes");
        }
        Err(e) => assert!(
            model.unbound().is_some() && e.code() == ErrorCode::InvalidArgument,
            "drawing a model that loaded: {:?}: {e}",
            e.code()
        ),
    }
}

/// The engines target: the engine rules (`ossa::iqm::engines::check`) of the engine the first
/// byte picks (bit 2: a Warfork player model, named `tris.iqm`; bit 3: without animation.cfg)
/// on a file and its animation.cfg as [`samples::split_two`] splits the rest. Any bytes give
/// findings, or `UnknownFormat` for data of no format; each finding's rule is one of the
/// engine's, of the rule's kind, its offset inside the file (or at its end); the same input
/// gives the same findings.
pub fn engines(data: &[u8]) {
    use ossa::iqm::engines::{CheckOptions, Engine, Sidecar, check, rule, rules};
    let [pick, rest @ ..] = data else {
        return;
    };
    let engine = Engine::ALL[usize::from(*pick) % Engine::ALL.len()];
    let (file, cfg) = split_two(rest);
    let options = CheckOptions {
        name: Some(if pick & 4 != 0 {
            "tris.iqm"
        } else {
            "model.iqm"
        }),
        animation_cfg: if pick & 8 != 0 {
            Sidecar::Missing
        } else {
            Sidecar::Bytes(cfg)
        },
        ..CheckOptions::default()
    };
    let findings = match check(file, engine, &options) {
        Ok(findings) => findings,
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::UnknownFormat, "{e}");
            return;
        }
    };
    for f in &findings {
        let r = rule(f.rule).unwrap_or_else(|| panic!("{}: no such rule", f.rule));
        assert_eq!(r.kind, f.kind, "{}", f.rule);
        assert!(
            rules(engine).any(|r| r.id == f.rule),
            "{} for {engine}",
            f.rule
        );
        assert!(f.offset.is_none_or(|o| o <= file.len() as u64), "{f}");
        assert!(!f.message.is_empty());
    }
    assert_eq!(check(file, engine, &options).ok(), Some(findings));
}
