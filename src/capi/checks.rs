//! The guard every function runs its body in (a panic caught, an error written to the caller's
//! `ossa_error`) and the checks of what callers pass: pointers, strings, indices.

use crate::error::{Error, ErrorCode, Result};
use crate::model::Model;
use std::ffi::CStr;
use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use super::bones::ossa_model;

/// Optional out-parameter of the functions that load.
#[repr(C)]
pub struct ossa_error {
    pub result: u32,
    /// 1-based line in a text file, 0 when not applicable
    pub line: u32,
    /// byte offset in the failing file, UINT64_MAX when not applicable
    pub offset: u64,
    /// NUL-terminated sentence: which file, which structure and index, which rule
    pub message: [c_char; 512],
}

const NOT_APPLICABLE: u64 = u64::MAX;

fn write_error(error: *mut ossa_error, code: u32, line: u32, offset: u64, message: &str) {
    if error.is_null() {
        return;
    }
    let mut text = [0 as c_char; 512];
    let mut end = message.len().min(text.len() - 1);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    for (dst, src) in text.iter_mut().zip(message.as_bytes().iter().take(end)) {
        *dst = *src as c_char;
    }
    let record = ossa_error {
        result: code,
        line,
        offset,
        message: text,
    };
    // SAFETY: `error` is non-null and, by the contract, points to a writable ossa_error.
    unsafe { error.write_unaligned(record) };
}

fn report(error: *mut ossa_error, result: std::thread::Result<Result<()>>) -> u32 {
    match result {
        Ok(Ok(())) => {
            write_error(error, 0, 0, NOT_APPLICABLE, "");
            0
        }
        Ok(Err(e)) => {
            let code = e.code() as u32;
            let d = e.detail();
            write_error(
                error,
                code,
                d.line.unwrap_or(0),
                d.offset.unwrap_or(NOT_APPLICABLE),
                &e.to_string(),
            );
            code
        }
        Err(_) => {
            let code = ErrorCode::Panic as u32;
            write_error(
                error,
                code,
                0,
                NOT_APPLICABLE,
                "internal error: a panic was caught at the C boundary",
            );
            code
        }
    }
}

/// Runs `body`, catching panics, and turns its outcome into a result code and error record.
pub(super) fn guard(error: *mut ossa_error, body: impl FnOnce() -> Result<()>) -> u32 {
    report(error, catch_unwind(AssertUnwindSafe(body)))
}

/// For functions that answer with a value rather than a result code.
pub(super) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

pub(super) fn null(what: &str) -> Error {
    Error::null_argument(format!("{what} is NULL"))
}

/// The model behind a handle.
pub(super) fn model_ref<'a>(model: *const ossa_model) -> Result<&'a Model> {
    // SAFETY: a non-null handle came from ossa_load_* and has not been freed (the contract).
    unsafe { model.as_ref() }
        .map(|m| &m.model)
        .ok_or_else(|| null("model"))
}

/// Writes `value` through a caller's out-pointer, only after everything else has succeeded.
pub(super) fn put<T>(out: *mut T, value: T) {
    // SAFETY: callers check `out` for NULL before computing `value`; the contract says it is
    // writable and sized for T.
    unsafe { out.write_unaligned(value) };
}

pub(super) fn c_str<'a>(p: *const c_char) -> Option<&'a CStr> {
    // SAFETY: a non-null string argument is NUL-terminated by the contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) })
}

pub(super) fn c_name(bytes_with_nul: &[u8]) -> *const c_char {
    bytes_with_nul.as_ptr().cast()
}

fn out_of_range(what: &str, index: u32, count: usize) -> Error {
    Error::invalid_argument(format!("{what} {index} out of range (model has {count})"))
}

/// The shape every indexed getter shares: check the handle and out-pointer, find item `index`
/// of the model's `items`, and write its C description.
pub(super) fn get_indexed<T, I>(
    model: *const ossa_model,
    index: u32,
    out: *mut I,
    what: &str,
    items: impl Fn(&Model) -> &[T],
    describe: impl Fn(&T) -> I,
) -> u32 {
    get_found(
        model,
        out,
        |m| {
            let items = items(m);
            (items.get(index as usize)).ok_or_else(|| out_of_range(what, index, items.len()))
        },
        describe,
    )
}

/// [`get_indexed`] for an item `find` looks up (one inside another).
pub(super) fn get_found<'m, T, I>(
    model: *const ossa_model,
    out: *mut I,
    find: impl FnOnce(&'m Model) -> Result<T>,
    describe: impl FnOnce(T) -> I,
) -> u32 {
    guard(ptr::null_mut(), || {
        let model = model_ref(model)?;
        if out.is_null() {
            return Err(null("out"));
        }
        put(out, describe(find(model)?));
        Ok(())
    })
}

/// Item `index` of `items`, which belong to `owner`.
pub(super) fn nth<'a, T>(
    items: &'a [T],
    index: u32,
    what: &str,
    owner: &dyn Fn() -> String,
) -> Result<&'a T> {
    items.get(index as usize).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{what} {index} out of range ({} has {})",
            owner(),
            items.len()
        ))
    })
}

pub(super) fn count_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
