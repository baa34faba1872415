//! `.skel`: `NumBones N`, then nested `bone NAME { offset x y z ... }` blocks.
//!
//! Words flow across lines, except that an `offset`'s three numbers and a `bone`'s name share
//! its line. A word inside a bone that is neither `offset`, `bone` nor a brace is a keyword of a
//! later version (the engine's bones also hold a mirror bone and rotation limits): it is skipped
//! with the rest of its line, and a warning. Bone names are at most 63 bytes; a missing offset,
//! a second offset, a non-number and an unbalanced brace are errors on their line; a `NumBones`
//! that differs from the bones found is a warning (an error in strict mode), as the Blender
//! addon ignores it.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::collections::HashMap;

use super::{
    MAX_NAME, Tally, Tokens, amount, checked_name, found, is_word, number, put_line, whole_number,
};
use crate::error::{Error, Result};
use crate::format::text::{Lines, float, show};
use crate::format::{Budget, Checker, Format};
use crate::math::{MAX_MAGNITUDE, Mat3x4, in_range};
use crate::model::{Bone, Frame, Model, ModelParts, Name};

/// Rough heap bytes per bone while reading and in the model, for the caller's memory limit.
const COST_BONE: u64 = 320;
/// The one frame's name.
const REST: &str = "rest";
/// How far from identity a pose's 3x3 part may be for the writer to take it for a translation.
const ROTATION_TOLERANCE: f32 = 1e-5;

struct RawBone<'a> {
    name: &'a [u8],
    parent: i32,
    /// The offset and its line.
    offset: Option<([f32; 3], u32)>,
    line: u32,
}

/// Reads a `.skel`: the bones in document order, and one frame of their offsets.
pub(crate) fn read_skel(data: &[u8], ck: &mut Checker) -> Result<ModelParts> {
    let mut lines = Lines::new(data);
    let mut declared: Option<(u64, u32)> = None;
    let mut bones: Vec<RawBone> = Vec::new();
    // The bones whose blocks are open, innermost last.
    let mut open: Vec<usize> = Vec::new();
    // A bone whose name has been read and whose `{` is due.
    let mut awaiting: Option<usize> = None;
    let mut unknown = Tally::default();
    let mut budget = Budget::default();
    let name_of = |bones: &[RawBone], b: usize| {
        bones
            .get(b)
            .map_or_else(String::new, |r: &RawBone| show(r.name))
    };

    while let Some((n, line)) = lines.next() {
        let mut words = Tokens::new(line);
        while let Some(word) = words.next() {
            if let Some(b) = awaiting.take() {
                if word != b"{" {
                    return Err(Error::malformed(format!(
                        "bone `{}`: expected `{{` after its name, found `{}`",
                        name_of(&bones, b),
                        show(word)
                    ))
                    .on_line(n));
                }
                open.push(b);
                continue;
            }
            if declared.is_none() {
                if word != b"NumBones" {
                    // Not yet an MM2 skeleton: what is there is not shown (it may be any file).
                    return Err(Error::malformed(
                        "expected `NumBones` and the bone count first; this is no MM2 skeleton",
                    )
                    .on_line(n));
                }
                let value = whole_number(words.next(), n, || "NumBones".to_owned())?;
                declared = Some((value, n));
                continue;
            }
            match word {
                b"bone" => {
                    let Some(name) = words.next_word() else {
                        return Err(Error::malformed(format!(
                            "`bone`: expected the bone's name on its line, found {}",
                            found(words.peek())
                        ))
                        .on_line(n));
                    };
                    let index = bones.len();
                    if name.len() > MAX_NAME {
                        ck.problem(
                            Error::malformed(format!(
                                "bone {index}: the name `{}` is {} bytes long; MM2 keeps at \
                                 most {MAX_NAME}",
                                show(name),
                                name.len()
                            ))
                            .on_line(n),
                        )?;
                    }
                    checked_name(name, || format!("bone {index}: the name"), n, ck)?;
                    budget.add(ck, 1, COST_BONE).map_err(|e| e.on_line(n))?;
                    let parent = match open.last() {
                        Some(&p) => i32::try_from(p).map_err(|_| {
                            Error::limit(format!("more than {} bones", i32::MAX)).on_line(n)
                        })?,
                        None => -1,
                    };
                    bones.push(RawBone {
                        name,
                        parent,
                        offset: None,
                        line: n,
                    });
                    awaiting = Some(index);
                }
                b"offset" => {
                    let Some(&b) = open.last() else {
                        return Err(Error::malformed("`offset` outside any bone").on_line(n));
                    };
                    let what = || format!("bone `{}`: offset", name_of(&bones, b));
                    let mut v = [0f32; 3];
                    for slot in &mut v {
                        let Some(w) = words.next_word() else {
                            return Err(Error::malformed(format!(
                                "{}: expected three numbers (x y z) on its line, found {}",
                                what(),
                                found(words.peek())
                            ))
                            .on_line(n));
                        };
                        *slot = float(w, n, what)?;
                    }
                    if let Some(extra) = words.next_word() {
                        return Err(Error::malformed(format!(
                            "{}: more than three numbers (`{}` follows z)",
                            what(),
                            show(extra)
                        ))
                        .on_line(n));
                    }
                    if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                        ck.problem(
                            Error::malformed(format!("{}: {x} is not a finite number", what()))
                                .on_line(n),
                        )?;
                        v = [0.0; 3];
                    }
                    if let Some(bone) = bones.get_mut(b) {
                        if let Some((_, first)) = bone.offset {
                            return Err(Error::malformed(format!(
                                "bone `{}`: a second offset (the first is on line {first})",
                                show(bone.name)
                            ))
                            .on_line(n));
                        }
                        bone.offset = Some((v, n));
                    }
                }
                b"}" => {
                    let Some(b) = open.pop() else {
                        return Err(Error::malformed("`}` closes no bone").on_line(n));
                    };
                    if let Some(bone) = bones.get_mut(b)
                        && bone.offset.is_none()
                    {
                        ck.problem(
                            Error::malformed(format!(
                                "bone `{}` has no offset (its block ends on line {n})",
                                show(bone.name)
                            ))
                            .on_line(bone.line),
                        )?;
                        bone.offset = Some(([0.0; 3], n));
                    }
                }
                b"{" => {
                    return Err(
                        Error::malformed("`{` opens no bone (a bone is `bone NAME {`)").on_line(n),
                    );
                }
                _ if open.is_empty() => {
                    return Err(Error::malformed(format!(
                        "expected `bone` or the end of the data, found `{}`",
                        show(word)
                    ))
                    .on_line(n));
                }
                _ => {
                    unknown.note(n, || show(word));
                    while words.next_word().is_some() {}
                }
            }
        }
    }

    let end = lines.line().saturating_add(1);
    let Some((declared, numbones_line)) = declared else {
        return Err(Error::truncated("the data ends before `NumBones`").on_line(end));
    };
    if let Some(b) = awaiting {
        let line = bones.get(b).map_or(end, |r| r.line);
        return Err(Error::truncated(format!(
            "bone `{}`: the data ends before its `{{`",
            name_of(&bones, b)
        ))
        .on_line(line));
    }
    if let Some(&b) = open.last() {
        let line = bones.get(b).map_or(end, |r| r.line);
        return Err(Error::truncated(format!(
            "bone `{}` is never closed: the data ends with {} open",
            name_of(&bones, b),
            amount(open.len() as u64, "bone", "bones")
        ))
        .on_line(line));
    }
    if bones.is_empty() {
        return Err(Error::malformed("the skeleton has no bones").on_line(numbones_line));
    }
    if declared != bones.len() as u64 {
        ck.tolerate(
            Error::malformed(format!(
                "NumBones says {declared}, the file has {}",
                amount(bones.len() as u64, "bone", "bones")
            ))
            .on_line(numbones_line),
        )?;
    }
    unknown.report(ck, |count, first| {
        format!(
            "{} inside bones that the format does not know, skipped with the rest of the line \
             (the first: `{first}`)",
            amount(count, "word", "words")
        )
    })?;
    let mut seen: HashMap<&[u8], usize> = HashMap::with_capacity(bones.len());
    let mut repeats = Tally::default();
    for (i, b) in bones.iter().enumerate() {
        if let Some(&first) = seen.get(b.name) {
            repeats.note(b.line, || {
                format!("bone {i} `{}` has the name of bone {first}", show(b.name))
            });
        } else {
            seen.insert(b.name, i);
        }
    }
    drop(seen);
    repeats.report(ck, |count, first| {
        format!(
            "{} an earlier bone's name ({first})",
            amount(count, "bone repeats", "bones repeat")
        )
    })?;

    // Every model refuses poses beyond MAX_MAGNITUDE when chained; here with the offset's line.
    let mut chained: Vec<[f64; 3]> = Vec::with_capacity(bones.len());
    for (i, b) in bones.iter().enumerate() {
        let parent = usize::try_from(b.parent)
            .ok()
            .and_then(|p| chained.get(p).copied())
            .unwrap_or_default();
        let (offset, line) = b.offset.unwrap_or(([0.0; 3], b.line));
        let mut at = [0.0f64; 3];
        for ((a, p), o) in at.iter_mut().zip(parent).zip(offset) {
            *a = p + f64::from(o);
        }
        if let Some(&v) = at.iter().find(|&&v| !in_range(v)) {
            return Err(Error::limit(format!(
                "frame 0 ({REST}) bone {i} ({}): its model-space pose (chained through the \
                 parents) holds {:e}, beyond {MAX_MAGNITUDE:e}",
                Name::new(b.name),
                v as f32
            ))
            .on_line(line));
        }
        chained.push(at);
    }
    drop(chained);

    let mut parts = ModelParts::new(Format::Mm2Skel);
    parts.poses = bones
        .iter()
        .map(|b| Mat3x4::from_translation(b.offset.map_or([0.0; 3], |(v, _)| v)))
        .collect();
    parts.bones = bones
        .into_iter()
        .map(|b| Bone {
            name: Name::new(b.name),
            parent: b.parent,
            flags: 0,
        })
        .collect();
    parts.frames = vec![Frame::named(REST)];
    parts.up_axis = 1;
    parts.handedness = 1;
    Ok(parts)
}

/// Whether `pose` is a translation alone, within the tolerance.
pub(crate) fn is_translation(pose: &Mat3x4) -> bool {
    let m = &pose.m;
    let identity = [(0, 1.0), (1, 0.0), (2, 0.0), (4, 0.0), (5, 1.0), (6, 0.0)];
    let rest = [(8, 0.0), (9, 0.0), (10, 1.0)];
    identity
        .iter()
        .chain(&rest)
        .all(|&(i, want): &(usize, f32)| {
            m.get(i)
                .is_some_and(|&v| (v - want).abs() <= ROTATION_TOLERANCE)
        })
}

/// Writes a model's skeleton as a `.skel`: `NumBones`, then the bones' blocks nested as their
/// parents are, three spaces per level, offsets as `%f` (the documented file's layout), CRLF.
///
/// The bones must be in pre-order (each bone's parent is the previous bone or one of its
/// ancestors), since a `.skel` numbers bones in document order, and frame 0 must translate each
/// bone without rotating it. Names must be words of at most 63 bytes.
pub fn write_skel(model: &Model) -> Result<Vec<u8>> {
    if model.unbound().is_some() {
        return Err(Error::invalid_argument(
            "the model's meshes wait for a skeleton: it has no skeleton to write",
        ));
    }
    let bones = model.bones();
    let poses = model.skeleton().frame_poses(0).unwrap_or_default();
    if bones.is_empty() || poses.len() != bones.len() {
        return Err(Error::invalid_argument(
            "an MM2 skeleton needs at least one bone and its rest pose",
        ));
    }
    let mut out = Vec::with_capacity(bones.len().saturating_mul(64).saturating_add(16));
    put_line(&mut out, 0, format!("NumBones {}", bones.len()).as_bytes());
    // The bones whose blocks are open, innermost last.
    let mut open: Vec<usize> = Vec::new();
    for (i, (bone, pose)) in bones.iter().zip(poses.iter()).enumerate() {
        let parent = usize::try_from(bone.parent).ok();
        while open.last().copied() != parent {
            if open.pop().is_none() {
                return Err(Error::unsupported(format!(
                    "bone {i} ({}): its parent {} is neither the bone before it nor one of that \
                     bone's ancestors; a .skel numbers bones in document order, so they must \
                     be in pre-order",
                    bone.name, bone.parent
                )));
            }
            put_line(&mut out, open.len(), b"}");
        }
        let name = bone.name.as_bytes();
        if !is_word(name) || name.len() > MAX_NAME {
            return Err(Error::unsupported(format!(
                "bone {i}: the name {:?} is not one word of 1 to {MAX_NAME} bytes without \
                 braces",
                bone.name
            )));
        }
        if !is_translation(pose) {
            return Err(Error::unsupported(format!(
                "bone {i} ({}): its rest pose rotates or scales, and an MM2 bone is an offset \
                 only",
                bone.name
            )));
        }
        let depth = open.len();
        put_line(&mut out, depth, &[b"bone ", name, b" {"].concat());
        let [x, y, z] = pose.translation();
        let what = || format!("bone {i} offset");
        let offset = format!(
            "offset {} {} {}",
            number(x, what)?,
            number(y, what)?,
            number(z, what)?
        );
        put_line(&mut out, depth.saturating_add(1), offset.as_bytes());
        open.push(i);
    }
    while open.pop().is_some() {
        put_line(&mut out, open.len(), b"}");
    }
    Ok(out)
}
