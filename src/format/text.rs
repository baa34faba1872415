//! Text formats' shared parts: lines with their numbers (so that every error names its line),
//! whitespace-separated fields and numbers read from them, and numbers written as the retail
//! tools wrote them, so that files read and written again keep their bytes.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::str::FromStr;

use crate::error::{Error, Result};

/// The longest text shown from a line in a message.
const SHOWN: usize = 40;

/// Some text of a line, for a message.
pub(crate) fn show(bytes: &[u8]) -> String {
    let cut = bytes.get(..SHOWN).unwrap_or(bytes);
    let text: String = String::from_utf8_lossy(cut).escape_debug().collect();
    if cut.len() < bytes.len() {
        format!("{text}...")
    } else {
        text
    }
}

/// The lines of a text file, LF or CRLF.
pub(crate) struct Lines<'a> {
    rest: &'a [u8],
    /// The number of the line returned last (0 before the first).
    line: u32,
}

impl<'a> Lines<'a> {
    pub fn new(data: &'a [u8]) -> Lines<'a> {
        Lines {
            rest: data,
            line: 0,
        }
    }

    /// The number of the line returned last (0 before the first).
    pub fn line(&self) -> u32 {
        self.line
    }

    /// Bytes not yet returned.
    pub fn left(&self) -> u64 {
        self.rest.len() as u64
    }

    pub fn next(&mut self) -> Option<(u32, &'a [u8])> {
        if self.rest.is_empty() {
            return None;
        }
        let (line, rest) = match self.rest.iter().position(|&b| b == b'\n') {
            Some(i) => {
                let (line, rest) = self.rest.split_at_checked(i).unwrap_or((self.rest, &[]));
                (line, rest.get(1..).unwrap_or_default())
            }
            None => (self.rest, &[][..]),
        };
        self.rest = rest;
        self.line = self.line.saturating_add(1);
        Some((self.line, line.strip_suffix(b"\r").unwrap_or(line)))
    }

    /// The next line, which must hold `what`.
    pub fn expect(&mut self, what: impl FnOnce() -> String) -> Result<(u32, &'a [u8])> {
        let missing = self.line.saturating_add(1);
        self.next().ok_or_else(|| {
            Error::truncated(format!("the data ends where a line should hold {}", what()))
                .on_line(missing)
        })
    }

    /// A count line announcing records of at least `min_line` bytes each; fails when the bytes
    /// left cannot hold them.
    pub fn count(&mut self, what: &str, min_line: u64) -> Result<(u32, u32)> {
        let (n, line) = self.expect(|| format!("the {what} count"))?;
        let [field] = fields(line, n, || format!("the {what} count"), "a whole number")?;
        let count = std::str::from_utf8(field)
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
            .ok_or_else(|| {
                Error::malformed(format!(
                    "the {what} count: expected a whole number from 0 to {}, found `{}`",
                    u32::MAX,
                    show(field)
                ))
                .on_line(n)
            })?;
        let left = self.left();
        let need = u64::from(count).saturating_mul(min_line).saturating_sub(1);
        if need > left {
            return Err(Error::truncated(format!(
                "{count} {what} need at least {need} more bytes, the data has {left}"
            ))
            .on_line(n));
        }
        Ok((count, n))
    }
}

/// The non-empty pieces of a line between runs of white space.
pub(crate) fn words(line: &[u8]) -> impl Iterator<Item = &[u8]> + Clone {
    line.split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
}

/// The `N` whitespace-separated fields of a line (any run of spaces or tabs separates them);
/// `layout` names them for a message.
pub(crate) fn fields<'a, const N: usize>(
    line: &'a [u8],
    n: u32,
    what: impl FnOnce() -> String,
    layout: &str,
) -> Result<[&'a [u8]; N]> {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut found = 0usize;
    for field in words(line) {
        if let Some(slot) = out.get_mut(found) {
            *slot = field;
        }
        found = found.saturating_add(1);
    }
    if found != N {
        return Err(Error::malformed(format!(
            "{}: expected {N} field{} ({layout}), found {found}: `{}`",
            what(),
            if N == 1 { "" } else { "s" },
            show(line)
        ))
        .on_line(n));
    }
    Ok(out)
}

/// `field` read as a `T`; `kind` says what was expected, for the message.
pub(crate) fn parsed<T: FromStr>(
    field: &[u8],
    n: u32,
    what: impl FnOnce() -> String,
    kind: &str,
) -> Result<T> {
    std::str::from_utf8(field)
        .ok()
        .and_then(|s| s.parse::<T>().ok())
        .ok_or_else(|| {
            Error::malformed(format!(
                "{}: expected {kind}, found `{}`",
                what(),
                show(field)
            ))
            .on_line(n)
        })
}

pub(crate) fn int(field: &[u8], n: u32, what: impl FnOnce() -> String) -> Result<i64> {
    parsed(field, n, what, "a whole number")
}

/// A number as written; NaN and infinity are kept, for the checks to report with their place.
pub(crate) fn float(field: &[u8], n: u32, what: impl FnOnce() -> String) -> Result<f32> {
    parsed(field, n, what, "a number")
}

/// The `N` fields of a line, each read as a `T`.
fn values<T: FromStr + Copy + Default, const N: usize>(
    line: &[u8],
    n: u32,
    what: impl Fn() -> String,
    layout: &str,
    kind: &str,
) -> Result<[T; N]> {
    let f = fields::<N>(line, n, &what, layout)?;
    let mut out = [T::default(); N];
    for (o, field) in out.iter_mut().zip(f) {
        *o = parsed(field, n, &what, kind)?;
    }
    Ok(out)
}

pub(crate) fn ints<const N: usize>(
    line: &[u8],
    n: u32,
    what: impl Fn() -> String,
    layout: &str,
) -> Result<[i64; N]> {
    values(line, n, what, layout, "a whole number")
}

pub(crate) fn floats<const N: usize>(
    line: &[u8],
    n: u32,
    what: impl Fn() -> String,
    layout: &str,
) -> Result<[f32; N]> {
    values(line, n, what, layout, "a number")
}

/// `x` as C's `%g` writes it: six significant digits, trailing zeros dropped, and an exponent of
/// at least three digits as Microsoft's C library writes it (the retail files' number format).
pub(crate) fn c_g(x: f32) -> String {
    fn trim(s: &str) -> &str {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            s
        }
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        // -4 <= exp < 6: from 1 to 9 digits after the point.
        let precision = 5i32.saturating_sub(exp).unsigned_abs() as usize;
        trim(&format!("{x:.precision$}")).to_owned()
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:03}", trim(mantissa), exp.unsigned_abs())
    }
}

/// `x` as C's `%f` writes it: six digits after the point (`-0.000000` for negative zero).
pub(crate) fn c_f(x: f32) -> String {
    format!("{x:.6}")
}

/// Text that reads back as exactly `x`: `%g` where it does (always, for numbers a retail file
/// held), else the shortest exact form.
pub(crate) fn exact_text(x: f32) -> Option<String> {
    exact_as(x, c_g)
}

/// The same with `%f`, the form of MM2's files.
pub(crate) fn exact_fixed(x: f32) -> Option<String> {
    exact_as(x, c_f)
}

/// `preferred(x)` where it reads back as exactly `x`, else the shortest exact form; None for
/// NaN and infinity.
fn exact_as(x: f32, preferred: fn(f32) -> String) -> Option<String> {
    if !x.is_finite() {
        return None;
    }
    let text = preferred(x);
    if text.parse::<f32>().ok().map(f32::to_bits) == Some(x.to_bits()) {
        return Some(text);
    }
    Some(if x.abs() >= 1e-4 && x.abs() < 1e7 {
        format!("{x}")
    } else {
        format!("{x:e}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_c_g_with_three_exponent_digits() {
        assert_eq!(c_g(0.263293), "0.263293");
        assert_eq!(c_g(-0.0264804), "-0.0264804");
        assert_eq!(c_g(1.11915e-6), "1.11915e-006");
        assert_eq!(c_g(1.0), "1");
        assert_eq!(c_g(-0.0), "-0");
        assert_eq!(c_g(123456.0), "123456");
        assert_eq!(c_g(1234567.0), "1.23457e+006");
        assert_eq!(c_g(0.0001), "0.0001");
        assert_eq!(c_g(9.999996), "10");
        assert_eq!("1.11915e-006".parse::<f32>().ok(), Some(1.11915e-6));
    }

    #[test]
    fn fixed_numbers_are_c_f_where_exact() {
        assert_eq!(c_f(0.00057), "0.000570");
        assert_eq!(c_f(-0.0), "-0.000000");
        assert_eq!(exact_fixed(1.109821).as_deref(), Some("1.109821"));
        assert_eq!(exact_fixed(-0.0).as_deref(), Some("-0.000000"));
        // Too small for six decimals: the shortest exact form instead.
        assert_eq!(exact_fixed(1.5e-7).as_deref(), Some("1.5e-7"));
        assert_eq!(exact_fixed(0.1234567).as_deref(), Some("0.1234567"));
        assert_eq!(exact_fixed(f32::NAN), None);
    }
}
