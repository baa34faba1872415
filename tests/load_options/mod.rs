//! Load options the tests ask for: a format forced, default or strict mode.
#![allow(dead_code)]

use ossa::{Format, LoadOptions};

/// Load options for `format` in the default mode.
pub fn options(format: Format) -> LoadOptions<'static> {
    LoadOptions {
        format,
        ..LoadOptions::default()
    }
}

/// Load options for `format` in strict mode.
pub fn strict(format: Format) -> LoadOptions<'static> {
    LoadOptions {
        strict: true,
        ..options(format)
    }
}
