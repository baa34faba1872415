//! The Sims 1 CFP ("compressed floating point"): the values a skill's motions read, as one
//! stream of byte codes with no header.
//!
//! Each code gives one or more values:
//! - `0xFF` then a little-endian `f32`: that value;
//! - `0xFE` then a little-endian `u16` n: the previous value n + 1 more times;
//! - `0x00..=0xFC` (c): the previous value plus `3.9676e-10 * (c - 126)^3 * |c - 126|`, a delta
//!   of at most about ±0.1 with most of its codes near zero (126 adds nothing).
//!
//! "The previous value" starts at 0 and runs through the whole stream, across the boundaries of
//! the groups below; the deltas accumulate in f64 and each value is handed out as f32, as
//! ts1-blender-io (`ts1_formats/cfp.py`) decodes. Code `0xFD` is never written by any tool and
//! the tools disagree on it (ts1-blender-io adds `+0.1032`, VitaMoo gets NaN): it is rejected.
//!
//! A skill with `P` translations and `R` rotations reads `3P + 4R` values, grouped by component:
//! all `P` translation x, then all y, then all z; then all `R` rotation x, y, z and w
//! (quaternions with w last, as the CMX rest pose stores them). A motion's `offset + frame`
//! indexes each group. The corpus confirms the order: read as (x, y, z, w) the first frame of the
//! adult idle lines up with the rest pose on every bone (|q . q_rest| >= 0.996), read as
//! (w, x, y, z) on none (at most 0.52). (The simtech page's "W, X, Y, Z" order is wrong.)
//!
//! [`encode`] is lossless (full floats and exact repeats); [`encode_lossy`] also writes deltas
//! where the decoded value stays within a tolerance. Both start every group with a full value and
//! never run a repeat across groups, so readers that decode each group on its own (VitaMoo) read
//! the same numbers. With the tools' tolerance of 0.001, [`encode_skill`] gives back four of the
//! seven corpus CFPs byte for byte, and the others to within 0.3 % of their size.

use byteorder::{ByteOrder, LittleEndian};

use crate::cursor::field_at;
use crate::error::{Error, Result};
use crate::format::cmx::normalised;
use crate::format::try_vec;

const FULL: u8 = 0xFF;
const REPEAT: u8 = 0xFE;
const RESERVED: u8 = 0xFD;
/// The delta code that adds nothing.
const DELTA_ZERO: u8 = 126;
const DELTA_SCALE: f64 = 3.9676e-10;
/// Most values one repeat code stands for (its count is stored minus 1 in a u16).
const MAX_REPEAT: usize = 1 << 16;

/// Most values one stream may decode to. The largest CFP of the retail game holds about 130 000;
/// without a cap a repeat code turns 3 bytes into 65 536 values, so a small file could ask for
/// gigabytes.
pub const MAX_VALUES: usize = 1 << 24;

/// The value delta code `c` adds (for `c` up to 252; 253 and up are not deltas).
pub fn delta(code: u8) -> f64 {
    let d = code as f64 - 126.0;
    DELTA_SCALE * (d * d * d) * d.abs()
}

/// What one code of the stream says.
enum Code {
    Full(f32),
    Repeat(usize),
    Delta(f64),
}

/// Reads the code at `*pos`, moving past it.
fn next_code(data: &[u8], pos: &mut usize) -> Result<Code> {
    let at = *pos;
    let Some((&code, operands)) = data.get(at..).and_then(<[u8]>::split_first) else {
        return Err(Error::truncated("the stream ends inside a code").at(at as u64));
    };
    // Where a code ends: `rest` is a tail of the data, so the subtraction is exact.
    let end = |rest: &[u8]| data.len().saturating_sub(rest.len());
    let operand = |n: usize| {
        operands.split_at_checked(n).ok_or_else(|| {
            Error::truncated(format!(
                "code {code:#04x} needs {n} more bytes but the data ends at byte {:#x}",
                data.len()
            ))
            .at(at as u64)
        })
    };
    let c = match code {
        FULL => {
            let (operand, rest) = operand(4)?;
            let v = LittleEndian::read_f32(operand);
            if !v.is_finite() {
                return Err(
                    Error::malformed(format!("full value {v} is not a finite number"))
                        .at(field_at(at as u64, 1)),
                );
            }
            *pos = end(rest);
            Code::Full(v)
        }
        REPEAT => {
            let (operand, rest) = operand(2)?;
            // A u16 and 1: no overflow.
            let n = usize::from(LittleEndian::read_u16(operand)).saturating_add(1);
            *pos = end(rest);
            Code::Repeat(n)
        }
        RESERVED => {
            return Err(Error::malformed(
                "code 0xfd is no delta, value or repeat (no tool writes it)",
            )
            .at(at as u64));
        }
        c => {
            *pos = end(operands);
            Code::Delta(delta(c))
        }
    };
    Ok(c)
}

/// How many values the whole stream decodes to, without decoding them; fails on a broken code
/// and when the stream would give more than [`MAX_VALUES`].
pub fn count_values(data: &[u8]) -> Result<usize> {
    let mut pos = 0usize;
    let mut count = 0usize;
    while pos < data.len() {
        let at = pos;
        // Checked against MAX_VALUES each step: saturating never comes into play.
        count = count.saturating_add(match next_code(data, &mut pos)? {
            Code::Repeat(n) => n,
            _ => 1,
        });
        if count > MAX_VALUES {
            return Err(Error::limit(format!(
                "the stream decodes to more than {MAX_VALUES} values"
            ))
            .at(at as u64));
        }
    }
    Ok(count)
}

/// Decodes exactly `count` values: the stream must give that many and end there. Nothing is
/// allocated before the stream has been walked once and found to give exactly `count` values.
pub fn decode(data: &[u8], count: usize) -> Result<Vec<f32>> {
    if count > MAX_VALUES {
        return Err(Error::limit(format!(
            "{count} values asked for, more than the limit of {MAX_VALUES}"
        )));
    }
    // Pass one: the stream must hold exactly `count` values, with no repeat running past them
    // and no bytes after them.
    let mut pos = 0usize;
    let mut n = 0usize;
    while n < count {
        let at = pos;
        if at >= data.len() {
            return Err(
                Error::truncated(format!("the stream ends after {n} of {count} values"))
                    .at(at as u64),
            );
        }
        let got = match next_code(data, &mut pos)? {
            Code::Repeat(r) => r,
            _ => 1,
        };
        // n < count here.
        if got > count.saturating_sub(n) {
            return Err(Error::malformed(format!(
                "a repeat of {got} values runs past the {count} values asked for (value {n} on)"
            ))
            .at(at as u64));
        }
        n = n.saturating_add(got);
    }
    if pos < data.len() {
        return Err(Error::malformed(format!(
            "{} bytes follow the {count} values asked for",
            data.len().saturating_sub(pos)
        ))
        .at(pos as u64));
    }
    // Pass two: the values.
    let mut values = try_vec(count, || "the CFP's values".to_owned())?;
    let mut previous = 0.0f64;
    let mut pos = 0usize;
    while values.len() < count {
        let at = pos;
        match next_code(data, &mut pos)? {
            Code::Full(v) => previous = v as f64,
            Code::Delta(d) => previous += d,
            Code::Repeat(r) => {
                let v = previous as f32;
                // A repeat gives at least one value: this one and r - 1 more.
                values.extend(std::iter::repeat_n(v, r.saturating_sub(1)));
            }
        }
        let v = previous as f32;
        if !v.is_finite() {
            return Err(Error::malformed(format!(
                "value {} grows past the range of a float",
                values.len()
            ))
            .at(at as u64));
        }
        values.push(v);
    }
    Ok(values)
}

/// The byte where the code giving value `index` of a stream (one [`decode`] accepted) starts.
fn code_of_value(data: &[u8], index: usize) -> u64 {
    let mut pos = 0usize;
    let mut n = 0usize;
    while pos < data.len() {
        let at = pos;
        n = n.saturating_add(match next_code(data, &mut pos) {
            Ok(Code::Repeat(r)) => r,
            Ok(_) => 1,
            Err(_) => break,
        });
        if index < n {
            return at as u64;
        }
    }
    pos as u64
}

/// A skill's translations and rotations (x, y, z, w) from its CFP: `translations * 3 +
/// rotations * 4` values grouped by component (see the module documentation). A rotation
/// without length is no rotation: it fails as malformed at the code of its w value.
#[allow(clippy::type_complexity)]
pub fn decode_skill(
    data: &[u8],
    translations: usize,
    rotations: usize,
) -> Result<(Vec<[f32; 3]>, Vec<[f32; 4]>)> {
    let count = translations
        .checked_mul(3)
        .and_then(|t| rotations.checked_mul(4).and_then(|r| t.checked_add(r)))
        .filter(|&c| c <= MAX_VALUES)
        .ok_or_else(|| {
            Error::limit(format!(
                "{translations} translations and {rotations} rotations are more than the limit of {MAX_VALUES} values"
            ))
        })?;
    let values = decode(data, count)?;
    // Within `count`, checked above.
    let (t, r) = values
        .split_at_checked(translations.saturating_mul(3))
        .unwrap_or((&values, &[]));
    let component = |group: &[f32], len: usize, c: usize, i: usize| {
        group
            .get(c.saturating_mul(len).saturating_add(i))
            .copied()
            .unwrap_or_default()
    };
    let ts = (0..translations)
        .map(|i| [0, 1, 2].map(|c| component(t, translations, c, i)))
        .collect();
    let rs: Vec<[f32; 4]> = (0..rotations)
        .map(|i| [0, 1, 2, 3].map(|c| component(r, rotations, c, i)))
        .collect();
    if let Some(i) = rs.iter().position(|q| normalised(*q).is_none()) {
        // Counts were checked against the stream's MAX_VALUES, so this cannot saturate.
        let w = translations
            .saturating_add(rotations)
            .saturating_mul(3)
            .saturating_add(i);
        return Err(Error::malformed(format!(
            "rotation {i} {:?} (x, y, z, w) has no length",
            rs.get(i).copied().unwrap_or_default()
        ))
        .at(code_of_value(data, w)));
    }
    Ok((ts, rs))
}

/// Writes `values` so that [`decode`] gives them back bit for bit: full floats, and repeats of
/// the same bits. A NaN or infinity is written as it is, and [`decode`] rejects it.
pub fn encode(values: &[f32]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_group(&mut out, values, None);
    out
}

/// Writes `values` so that every value [`decode`] gives back is within `tolerance` of the one
/// given (exactly equal where `tolerance` is 0), using deltas where they stay within it.
pub fn encode_lossy(values: &[f32], tolerance: f32) -> Vec<u8> {
    let mut out = Vec::new();
    encode_group(&mut out, values, Some(tolerance.max(0.0)));
    out
}

/// A skill's CFP: translation x, y, z then rotation x, y, z, w groups, each group starting with a
/// full value; `tolerance` as for [`encode_lossy`], None for lossless.
pub fn encode_skill(
    translations: &[[f32; 3]],
    rotations: &[[f32; 4]],
    tolerance: Option<f32>,
) -> Vec<u8> {
    let mut out = Vec::new();
    let tolerance = tolerance.map(|t| t.max(0.0));
    for c in 0..3 {
        let group: Vec<f32> = translations
            .iter()
            .filter_map(|t| t.get(c).copied())
            .collect();
        encode_group(&mut out, &group, tolerance);
    }
    for c in 0..4 {
        let group: Vec<f32> = rotations.iter().filter_map(|r| r.get(c).copied()).collect();
        encode_group(&mut out, &group, tolerance);
    }
    out
}

/// The delta code whose decoded value `(previous + delta) as f32` is nearest `target`, with
/// that value.
fn nearest_delta(previous: f64, target: f32) -> (u8, f32) {
    let diff = target as f64 - previous;
    let k = (diff.abs() / DELTA_SCALE).powf(0.25).round().min(126.0) as i32;
    // k is 0 to 126: these stay far from i32's ends.
    let centre = if diff < 0.0 { k.saturating_neg() } else { k };
    let mut best = (DELTA_ZERO, previous as f32);
    let mut best_err = f64::INFINITY;
    for off in [centre.saturating_sub(1), centre, centre.saturating_add(1)] {
        let code = 126i32.saturating_add(off.clamp(-126, 126)) as u8;
        let v = (previous + delta(code)) as f32;
        let err = (v as f64 - target as f64).abs();
        if err < best_err {
            best = (code, v);
            best_err = err;
        }
    }
    best
}

/// Appends one group: a full first value, then repeats, deltas (when `tolerance` allows) and
/// full values, tracking the value the decoder will hold.
fn encode_group(out: &mut Vec<u8>, values: &[f32], tolerance: Option<f32>) {
    let Some((&first, rest)) = values.split_first() else {
        return;
    };
    put_full(out, first);
    let mut previous = first as f64;
    let mut run = 0usize;
    for &v in rest {
        let shown = previous as f32;
        if v.to_bits() == shown.to_bits() {
            // Flushed at MAX_REPEAT.
            run = run.saturating_add(1);
            if run == MAX_REPEAT {
                put_repeat(out, run);
                run = 0;
            }
            continue;
        }
        if run > 0 {
            put_repeat(out, run);
            run = 0;
        }
        match tolerance {
            Some(tol) if v.is_finite() => {
                let (code, decoded) = nearest_delta(previous, v);
                if code != DELTA_ZERO && (decoded as f64 - v as f64).abs() <= tol as f64 {
                    out.push(code);
                    previous += delta(code);
                } else {
                    put_full(out, v);
                    previous = v as f64;
                }
            }
            _ => {
                put_full(out, v);
                previous = v as f64;
            }
        }
    }
    if run > 0 {
        put_repeat(out, run);
    }
}

fn put_full(out: &mut Vec<u8>, v: f32) {
    out.push(FULL);
    out.extend_from_slice(&v.to_le_bytes());
}

/// A repeat code for `n` (1 to 65 536) more copies of the previous value.
fn put_repeat(out: &mut Vec<u8>, n: usize) {
    out.push(REPEAT);
    out.extend_from_slice(&(n.saturating_sub(1) as u16).to_le_bytes());
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn codes_decode_as_the_tools_do() {
        // full 1.5, delta +max, repeat 2 more, delta 0, delta -max
        let mut d = vec![FULL];
        d.extend_from_slice(&1.5f32.to_le_bytes());
        d.extend_from_slice(&[252, REPEAT, 1, 0, 126, 0]);
        let v = decode(&d, 6).unwrap();
        let up = (1.5f64 + delta(252)) as f32;
        assert_eq!(
            v,
            vec![1.5, up, up, up, up, (1.5f64 + delta(252) + delta(0)) as f32]
        );
        assert!((delta(252) - 0.100_003).abs() < 1e-5);
        assert_eq!(delta(126), 0.0);
        assert_eq!(count_values(&d).unwrap(), 6);
    }

    #[test]
    fn counts_must_match_exactly() {
        let d = encode(&[1.0, 2.0, 2.0, 2.0]);
        assert_eq!(decode(&d, 4).unwrap(), vec![1.0, 2.0, 2.0, 2.0]);
        let short = decode(&d, 5).unwrap_err();
        assert_eq!(short.code(), ErrorCode::Truncated);
        assert_eq!(short.offset(), Some(d.len() as u64));
        // The repeat of the last two values would run past 3.
        let over = decode(&d, 3).unwrap_err();
        assert_eq!(over.code(), ErrorCode::Malformed);
        assert_eq!(over.offset(), Some(10));
        let extra = decode(&d, 0).unwrap_err();
        assert_eq!(extra.offset(), Some(0));
    }

    #[test]
    fn broken_codes_name_their_byte() {
        assert_eq!(decode(&[FULL, 0, 0], 1).unwrap_err().offset(), Some(0));
        assert_eq!(decode(&[126, RESERVED], 2).unwrap_err().offset(), Some(1));
        let mut nan = vec![FULL];
        nan.extend_from_slice(&f32::NAN.to_le_bytes());
        let e = decode(&nan, 1).unwrap_err();
        assert_eq!((e.code(), e.offset()), (ErrorCode::Malformed, Some(1)));
        let huge = decode(&[REPEAT, 0xFF, 0xFF], MAX_VALUES + 1).unwrap_err();
        assert_eq!(huge.code(), ErrorCode::Limit);
    }

    #[test]
    fn a_rotation_without_length_is_placed_at_its_w() {
        // One translation (0, 0, 0) (three full values), then rotations (0, 0, 0, 1) and
        // (0, 0, 0, 0): x, y and z are each a full 0 and a repeat, and w is a full 1.0 at byte
        // 39 and a full 0.0 at byte 44.
        let d = encode_skill(&[[0.0; 3]], &[[0.0, 0.0, 0.0, 1.0], [0.0; 4]], None);
        assert_eq!(&d[39..45], &[FULL, 0, 0, 0x80, 0x3f, FULL]);
        let e = decode_skill(&d, 1, 2).unwrap_err();
        assert_eq!((e.code(), e.offset()), (ErrorCode::Malformed, Some(44)));
        assert!(e.to_string().contains("rotation 1"), "{e}");
        assert_eq!(code_of_value(&d, 3 + 6 + 1), 44);
        assert_eq!((code_of_value(&d, 3), code_of_value(&d, 4)), (15, 20));
    }

    #[test]
    fn lossy_stays_within_tolerance() {
        let values: Vec<f32> = (0..500).map(|i| (i as f32 * 0.05).sin() * 0.7).collect();
        for tol in [0.0, 1e-5, 1e-3] {
            let d = encode_lossy(&values, tol);
            let back = decode(&d, values.len()).unwrap();
            for (a, b) in values.iter().zip(&back) {
                assert!((a - b).abs() <= tol, "{a} {b} {tol}");
            }
        }
        assert!(encode_lossy(&values, 1e-3).len() < encode(&values).len() / 2);
    }
}
