//! The Sims 1998 prototype's skill numbers, `ANIMATION.bin`: what a retail skill keeps in its
//! CFP (see [`cfp`](crate::format::cfp)), uncompressed.
//!
//! A skill with `P` translations and `R` rotations (its header's counts) reads a file of exactly
//! `12 P + 16 R` bytes: the `P` translations one after the other, each three little-endian `f32`
//! (x, y, z), then the `R` rotations, each four (x, y, z, w). A motion's offsets index these
//! lists as they index a CFP's. There is no header and no padding.
//!
//! Evidence (the four `xskill-*.bin` of `proto1998/`): every size is exactly `12 P + 16 R` for
//! its skill; read record by record, the first frame of `adult-greet01` and `adult-door-knock`
//! is their file's rest pose on every bone, bit for bit (ROOT translation
//! `(-0.0035073, 3.0116568, -0.0489661)`, z as the CMX writes it), every rotation is unit to
//! 1.3e-7 and no rotation turns more than 0.08 (1 - |q . q'|) from one frame to the next. Read
//! grouped by component, as a CFP is, the same numbers give rotations of length up to 2.4 and
//! jumps of 1 between frames. So the values follow the CMX's conventions unchanged, as a CFP's
//! do: translations in the parent's frame with z as it is, rotations applied as `R(q)^T`. Played
//! so, the four skills keep the lowest foot 0.017 to 0.074 above the floor in every frame and
//! every knee bent forwards, and the foot on the ground slides 0.11 to 0.27 of the root's travel
//! (0.016 in all in the greeting); with z negated it slides 1.6 to 1.8 times the travel, and
//! with w negated the feet hang 2.3 to 4.1 above the floor.

use byteorder::{ByteOrder, LittleEndian};

use crate::error::{Error, Result};
use crate::format::cmx::normalised;

/// Bytes of one translation and one rotation.
const TRANSLATION_BYTES: u64 = 12;
const ROTATION_BYTES: u64 = 16;

/// The size a `.bin` of `translations` and `rotations` has.
pub fn size_of(translations: u32, rotations: u32) -> u64 {
    // Two u32 counts times small factors: exact in u64.
    u64::from(translations)
        .saturating_mul(TRANSLATION_BYTES)
        .saturating_add(u64::from(rotations).saturating_mul(ROTATION_BYTES))
}

/// The translations and rotations of a `.bin` holding `translations` and `rotations`.
///
/// Errors: `Truncated` at its end for a file shorter than its counts take, `Malformed` at the
/// first byte after them for a longer one (both sizes and counts named); `Malformed` for a value
/// that is NaN or infinite and for a rotation of no length (each at its byte).
#[allow(clippy::type_complexity)]
pub fn decode_skill(
    data: &[u8],
    translations: u32,
    rotations: u32,
) -> Result<(Vec<[f32; 3]>, Vec<[f32; 4]>)> {
    let need = size_of(translations, rotations);
    let size = data.len() as u64;
    if size != need {
        let what = format!(
            "{size} bytes, where the skill's {translations} translations and {rotations} \
             rotations take {need} (12 and 16 bytes each)"
        );
        return Err(if size < need {
            Error::truncated(what).at(size)
        } else {
            Error::malformed(what).at(need)
        });
    }
    // The size matched, so both lists are in the data and their lengths fit usize.
    let (t, r) = data.split_at((translations as usize).saturating_mul(12));
    let float = |record: &[u8], at: u64| -> Result<Vec<f32>> {
        let v: Vec<f32> = record.chunks_exact(4).map(LittleEndian::read_f32).collect();
        match v.iter().position(|x| !x.is_finite()) {
            Some(k) => Err(Error::malformed(format!(
                "{} is not a finite number",
                v.get(k).copied().unwrap_or_default()
            ))
            .at(at.saturating_add((k as u64).saturating_mul(4)))),
            None => Ok(v),
        }
    };
    let mut ts = Vec::with_capacity(translations as usize);
    for (i, record) in t.chunks_exact(12).enumerate() {
        let at = (i as u64).saturating_mul(TRANSLATION_BYTES);
        let v = float(record, at).map_err(|e| e.within(format!("translation {i}")))?;
        ts.push([0, 1, 2].map(|c| v.get(c).copied().unwrap_or_default()));
    }
    let base = t.len() as u64;
    let mut rs = Vec::with_capacity(rotations as usize);
    for (i, record) in r.chunks_exact(16).enumerate() {
        let at = base.saturating_add((i as u64).saturating_mul(ROTATION_BYTES));
        let v = float(record, at).map_err(|e| e.within(format!("rotation {i}")))?;
        let q = [0, 1, 2, 3].map(|c| v.get(c).copied().unwrap_or_default());
        if normalised(q).is_none() {
            return Err(
                Error::malformed(format!("rotation {i} {q:?} (x, y, z, w) has no length")).at(at),
            );
        }
        rs.push(q);
    }
    Ok((ts, rs))
}

/// The `.bin` holding `translations` then `rotations`, as [`decode_skill`] reads it.
pub fn encode_skill(translations: &[[f32; 3]], rotations: &[[f32; 4]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        translations
            .len()
            .saturating_mul(12)
            .saturating_add(rotations.len().saturating_mul(16)),
    );
    for v in translations
        .iter()
        .flatten()
        .chain(rotations.iter().flatten())
    {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn records_one_after_the_other() {
        let t = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let r = [[0.0, 0.0, 0.0, 1.0]];
        let data = encode_skill(&t, &r);
        assert_eq!(data.len(), 40);
        assert_eq!(f32::from_le_bytes(data[12..16].try_into().unwrap()), 4.0);
        let (ts, rs) = decode_skill(&data, 2, 1).unwrap();
        assert_eq!(ts, t);
        assert_eq!(rs, r);
    }

    #[test]
    fn wrong_size_and_bad_values() {
        let data = encode_skill(&[[1.0, 2.0, 3.0]], &[[0.0, 0.0, 0.0, 1.0]]);
        let e = decode_skill(&data, 1, 2).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Truncated);
        assert_eq!(e.detail().offset, Some(28));
        assert_eq!(
            e.detail().message,
            "28 bytes, where the skill's 1 translations and 2 rotations take 44 (12 and 16 bytes each)"
        );
        let e = decode_skill(&data, 1, 0).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Malformed);
        assert_eq!(e.detail().offset, Some(12));
        let data = encode_skill(&[[1.0, f32::NAN, 3.0]], &[[0.0, 0.0, 0.0, 1.0]]);
        let e = decode_skill(&data, 1, 1).unwrap_err();
        assert_eq!(e.detail().offset, Some(4));
        assert!(e.to_string().contains("translation 0"), "{e}");
        let data = encode_skill(&[], &[[0.0, 1.0, 0.0, 0.0], [0.0; 4]]);
        let e = decode_skill(&data, 0, 2).unwrap_err();
        assert_eq!(e.detail().offset, Some(16));
        assert!(e.to_string().contains("rotation 1"), "{e}");
    }
}
