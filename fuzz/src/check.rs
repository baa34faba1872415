//! The checks every load must pass, shared by the fuzz targets and `tests/hostile_all.rs`
//! (which includes this file): a load ends in a model that keeps its invariants or in an error
//! of a clean kind, holds no more memory at once than it is allowed, agrees with the validator
//! and with strict mode, and gives a model that saves in its own format to bytes that validate
//! clean. Each includer has `samples`, `counting_alloc` and `invariants` modules at its root.

use ossa::{ErrorCode, Format, LoadOptions, Mat3x4, Model};

use crate::counting_alloc::peak_of;
pub use crate::invariants::check_model;
use crate::samples::WRITERS;

/// What loading bytes may fail with: the data's own fault, never the caller's.
pub const CLEAN_LOAD: [ErrorCode; 5] = [
    ErrorCode::UnknownFormat,
    ErrorCode::Unsupported,
    ErrorCode::Truncated,
    ErrorCode::Malformed,
    ErrorCode::Limit,
];

/// A file loaded from memory may name another file (a glTF buffer or image URI): not there
/// (`NotFound`, there is no filesystem) or leading out of the model's directory
/// (`InvalidArgument`, the code every sidecar route gives an escaping path) is the file's own
/// fault too. Either stands for a clean `Malformed` here; any other `InvalidArgument` still fails.
pub fn reference_is_clean(result: ossa::Result<Model>) -> ossa::Result<Model> {
    result.map_err(|e| {
        let message = &e.detail().message;
        let named_file = match e.code() {
            ErrorCode::NotFound => message.contains("there is no filesystem to read it from"),
            ErrorCode::InvalidArgument => message.contains("points outside the files"),
            _ => false,
        };
        if named_file {
            ossa::Error::malformed(message.clone())
        } else {
            e
        }
    })
}

pub fn options(format: Format, strict: bool) -> LoadOptions<'static> {
    LoadOptions {
        format,
        strict,
        ..LoadOptions::default()
    }
}

/// Fails unless `result` is a model or an error of one of the `clean` kinds with a message.
#[track_caller]
pub fn model_or_clean(
    result: ossa::Result<Model>,
    clean: &[ErrorCode],
    what: &str,
) -> Option<Model> {
    match result {
        Ok(model) => Some(model),
        Err(e) => {
            assert!(clean.contains(&e.code()), "{what}: {:?}: {e}", e.code());
            assert!(!e.detail().message.is_empty(), "{what}: an empty message");
            None
        }
    }
}

/// `data` loaded as `format`: the load holds at most `max_peak` bytes at once, plus the frames
/// of a model whose animations are sampled from keys (DMF: a few bytes of keys ask for up to
/// `MAX_FRAMES` frames at the animation's rate, within the library's own memory ceiling) or
/// whose frames the file need not store (IQM: a pose without channels is one constant for
/// every frame); the
/// validator agrees with it; a strict load succeeds only where the default one
/// does; a model keeps its invariants and, where its format has a writer, saves to bytes that
/// validate clean and load back the same shape.
pub fn load(data: &[u8], format: Format, max_peak: usize) -> Option<Model> {
    let default = options(format, false);
    let (result, peak) = peak_of(|| Model::load(data, &default));
    let sampled = match &result {
        Ok(model) if !model.keyframes().is_empty() || model.format() == Format::Iqm => {
            sampled_frame_bytes(model)
        }
        _ => 0,
    };
    assert!(
        peak <= max_peak + sampled,
        "loading {} bytes held {peak} bytes at once ({sampled} of them sampled frames)",
        data.len()
    );
    assert!(
        peak as u64 <= default.max_bytes_for(data.len()),
        "loading {} bytes held {peak} bytes at once, past the library's ceiling",
        data.len()
    );
    within_a_small_limit(data, &default);
    let report = ossa::validate(data, &default);
    let strict = Model::load(data, &options(format, true));
    let Some(model) = model_or_clean(reference_is_clean(result), &CLEAN_LOAD, "load") else {
        assert!(
            !report.problems.is_empty(),
            "the load fails, the validator finds no problem"
        );
        assert!(report.model.is_none());
        assert!(
            strict.is_err(),
            "strict mode loads what the default refuses"
        );
        return None;
    };
    assert!(
        report.problems.is_empty(),
        "the model loads, yet the validator finds {:?}",
        report.problems
    );
    assert!(report.model.is_some());
    if format != Format::Auto {
        assert_eq!(model.format(), format);
    }
    model_or_clean(strict, &CLEAN_LOAD, "strict load");
    check_model(&model, "the loaded model");
    save_and_reload(&model);
    Some(model)
}

/// A caller's small `max_bytes` that a load keeps to.
const SMALL_LIMIT: u64 = 256 << 10;
/// What a load may hold beyond a caller's limit: a quarter of it, as the hostile-input issues
/// promise, and a fixed amount no file decides (tables of the format's own, the error's text).
const SMALL_SLACK: u64 = SMALL_LIMIT / 4 + (64 << 10);

/// The load again with [`SMALL_LIMIT`]: a model or a clean refusal, having held at most the
/// limit and [`SMALL_SLACK`] at once.
fn within_a_small_limit(data: &[u8], default: &LoadOptions) {
    let small = LoadOptions {
        max_bytes: SMALL_LIMIT,
        ..default.clone()
    };
    let (result, peak) = peak_of(|| Model::load(data, &small));
    let outcome = match &result {
        Ok(_) => "loaded".to_owned(),
        Err(e) => format!("{:?}: {e}", e.code()),
    };
    model_or_clean(
        reference_is_clean(result),
        &CLEAN_LOAD,
        "load with a small limit",
    );
    assert!(
        peak as u64 <= SMALL_LIMIT + SMALL_SLACK,
        "loading {} bytes with max_bytes {SMALL_LIMIT} held {peak} bytes at once ({outcome})",
        data.len()
    );
}

/// What a model's sampled frames hold: each frame's name and bounds, and a pose of every bone.
fn sampled_frame_bytes(model: &Model) -> usize {
    let per_frame =
        std::mem::size_of::<ossa::Frame>() + model.bones().len() * std::mem::size_of::<Mat3x4>();
    2 * model.frames().len() * per_frame
}

/// Writes the model in its own format, where that has a writer; what is written must validate
/// clean as that format and load back with the same bones, frames and meshes. A writer may
/// refuse a model its format cannot hold, as an unsupported feature or a limit.
fn save_and_reload(model: &Model) {
    let Some(&(format, write)) = WRITERS.iter().find(|(f, _)| *f == model.format()) else {
        return;
    };
    let bytes = match write(model) {
        Ok(bytes) => bytes,
        Err(e) => {
            assert!(
                matches!(e.code(), ErrorCode::Unsupported | ErrorCode::Limit),
                "saving the loaded {} model: {:?}: {e}",
                format.name(),
                e.code()
            );
            return;
        }
    };
    let report = ossa::validate(&bytes, &options(format, false));
    assert!(
        report.problems.is_empty(),
        "the saved {} model does not validate: {:?}",
        format.name(),
        report.problems
    );
    let again = report.model.expect("a model without problems");
    assert_eq!(again.bones().len(), model.bones().len());
    assert_eq!(again.frames().len(), model.frames().len());
    assert_eq!(again.meshes().len(), model.meshes().len());
    for (a, b) in again.meshes().iter().zip(model.meshes()) {
        assert_eq!(a.vertex_count(), b.vertex_count());
        assert_eq!(a.triangle_count(), b.triangle_count());
    }
}
