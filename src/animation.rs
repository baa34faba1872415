//! Animation scenes: named runs of frames played at a rate, from DPM's `.framegroups` file or a
//! format's own, and the frame blend a scene gives at a time.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use crate::error::{Error, Result};
use crate::model::{Animation, Frame, Model, Name};
use crate::pose::FrameBlend;

/// A `.framegroups` scene's rate when the line gives none (DarkPlaces' default).
const FRAMEGROUPS_FPS: f32 = 20.0;

/// Parses a DarkPlaces `.framegroups` file: one scene per line, `first count [fps [loop [name]]]`,
/// with `//` comments. Every scene must fit the model's frames.
pub fn parse_framegroups(text: &[u8], frames: &[Frame]) -> Result<Vec<Animation>> {
    let text = String::from_utf8_lossy(text);
    let mut scenes = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = u32::try_from(n).map_or(u32::MAX, |n| n.saturating_add(1));
        let content = raw.split("//").next().unwrap_or_default();
        let tokens = tokenize(content);
        if tokens.is_empty() {
            continue;
        }
        let fail = |what: String| Error::malformed(what).on_line(line);
        let number = |i: usize, what: &str| -> Result<Option<f64>> {
            match tokens.get(i) {
                None => Ok(None),
                Some(t) => t
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .map(Some)
                    .ok_or_else(|| fail(format!("{what} is `{t}`, not a number"))),
            }
        };
        let whole = |v: f64, what: &str| -> Result<u32> {
            if v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&v) {
                Ok(v as u32)
            } else {
                Err(fail(format!("{what} {v} is not a whole number of frames")))
            }
        };
        let first = whole(
            number(0, "the first frame")?.unwrap_or_default(),
            "first frame",
        )?;
        let count = match number(1, "the frame count")? {
            Some(v) => whole(v, "frame count")?,
            None => {
                return Err(fail(
                    "a scene needs a first frame and a frame count".to_owned(),
                ));
            }
        };
        let fps = number(2, "the frame rate")?.map_or(FRAMEGROUPS_FPS, |v| v as f32);
        let looping = number(3, "the loop flag")?.is_none_or(|v| v != 0.0);
        let name = tokens.get(4).map_or_else(
            || format!("groupified_{}_anim", scenes.len()),
            |t| t.to_string(),
        );
        // Two u32s: the sum fits u64.
        let end = u64::from(first).saturating_add(u64::from(count));
        if count == 0 || end > frames.len() as u64 {
            return Err(fail(format!(
                "scene {name:?} runs frames {first}..{end} but the model has {} frames",
                frames.len()
            )));
        }
        if !(fps.is_finite() && fps > 0.0) {
            return Err(fail(format!(
                "scene {name:?} has frame rate {fps}; it must be above 0"
            )));
        }
        scenes.push(Animation {
            name: Name::from(name.as_str()),
            first_frame: first,
            frame_count: count,
            fps,
            looping,
            ..Animation::default()
        });
    }
    Ok(scenes)
}

/// Whitespace-separated tokens; a token may be quoted to hold spaces.
fn tokenize(line: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').unwrap_or(quoted.len());
            tokens.push(quoted.get(..end).unwrap_or_default());
            // After the closing quote, when there is one.
            rest = quoted
                .get(end..)
                .map_or("", |r| r.strip_prefix('"').unwrap_or(r));
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            tokens.push(rest.get(..end).unwrap_or_default());
            rest = rest.get(end..).unwrap_or_default();
        }
        rest = rest.trim_start();
    }
    tokens
}

/// The frames to blend for `scene` at `seconds` since it started: up to two frames, weights
/// summing to 1. A looping scene wraps round (negative times too); another holds its last
/// frame after its end and its first before its start.
pub fn blend_at(scene: &Animation, seconds: f64) -> ([FrameBlend; 2], usize) {
    let count = scene.frame_count.max(1) as f64;
    let mut position = if seconds.is_finite() {
        seconds * scene.fps as f64
    } else {
        0.0
    };
    if scene.looping {
        position = position.rem_euclid(count);
        // A time too large for the product to be finite has no place in the loop, and a tiny
        // negative one rounds up to `count` itself: both are the loop's start.
        if position.is_nan() || position >= count {
            position = 0.0;
        }
    } else {
        position = position.clamp(0.0, count - 1.0);
    }
    let index = position.floor();
    let fraction = (position - index) as f32;
    let current = index as u32;
    let next = if let Some(next) = current.checked_add(1).filter(|&n| n < scene.frame_count) {
        next
    } else if scene.looping {
        0
    } else {
        current
    };
    let first = FrameBlend {
        // A scene that runs past u32 frames names no frame of a model; the pose rejects it.
        frame: scene.first_frame.saturating_add(current),
        weight: 1.0 - fraction,
    };
    if fraction <= 0.0 || next == current || first.weight <= 0.0 {
        let only = FrameBlend {
            frame: first.frame,
            weight: 1.0,
        };
        return ([only, only], 1);
    }
    let second = FrameBlend {
        frame: scene.first_frame.saturating_add(next),
        weight: fraction,
    };
    ([first, second], 2)
}

impl Model {
    /// The frame blend of animation `index` at `seconds`; see [`blend_at`].
    pub fn animation_blend(&self, index: usize, seconds: f64) -> Result<([FrameBlend; 2], usize)> {
        let scene = self.animations().get(index).ok_or_else(|| {
            Error::invalid_argument(format!(
                "animation {index} out of range (model has {} animations)",
                self.animations().len()
            ))
        })?;
        // An infinite time has no place in a scene: a looping one has no phase there, and
        // another would hold its first frame at +inf but its last at 1e308.
        if !seconds.is_finite() {
            return Err(Error::invalid_argument(format!(
                "time {seconds} seconds is not a finite number"
            )));
        }
        Ok(blend_at(scene, seconds))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn frames(n: usize) -> Vec<Frame> {
        (0..n).map(|i| Frame::named(&format!("f{i}"))).collect()
    }

    #[test]
    fn framegroups_lines_with_defaults_and_comments() {
        let text = b"// first count fps loop name\r\n0 10 15 1 idle\n10 5\n\n15 3 24 0 \"die hard\" // last\n";
        let scenes = parse_framegroups(text, &frames(20)).unwrap();
        assert_eq!(scenes.len(), 3);
        assert_eq!(
            (
                scenes[0].first_frame,
                scenes[0].frame_count,
                scenes[0].fps,
                scenes[0].looping
            ),
            (0, 10, 15.0, true)
        );
        assert_eq!(scenes[0].name.as_bytes(), b"idle");
        assert_eq!((scenes[1].fps, scenes[1].looping), (20.0, true));
        assert_eq!(scenes[1].name.as_bytes(), b"groupified_1_anim");
        assert_eq!((scenes[2].first_frame, scenes[2].looping), (15, false));
        assert_eq!(scenes[2].name.as_bytes(), b"die hard");
    }

    #[test]
    fn framegroups_errors_carry_the_line() {
        for (text, line) in [
            (&b"0 10\n5 x\n"[..], 2),
            (b"0 10\n\n18 5\n", 3),
            (b"0 0\n", 1),
            (b"7\n", 1),
            (b"0 1 -5\n", 1),
            (b"0.5 2\n", 1),
        ] {
            let e = parse_framegroups(text, &frames(20)).unwrap_err();
            assert_eq!(e.line(), Some(line), "{}", String::from_utf8_lossy(text));
        }
    }

    fn scene(looping: bool) -> Animation {
        Animation {
            name: Name::from("walk"),
            first_frame: 10,
            frame_count: 4,
            fps: 10.0,
            looping,
            ..Animation::default()
        }
    }

    #[test]
    fn blends_between_neighbouring_frames() {
        let (b, n) = blend_at(&scene(true), 0.125);
        assert_eq!(n, 2);
        assert_eq!((b[0].frame, b[1].frame), (11, 12));
        assert!((b[0].weight - 0.75).abs() < 1e-6 && (b[1].weight - 0.25).abs() < 1e-6);
        let (b, n) = blend_at(&scene(true), 0.2);
        assert_eq!((n, b[0].frame, b[0].weight), (1, 12, 1.0));
    }

    #[test]
    fn loops_wrap_and_others_clamp() {
        // 0.35 s is position 3.5: between the last frame and, when looping, the first.
        let (b, n) = blend_at(&scene(true), 0.35);
        assert_eq!((n, b[0].frame, b[1].frame), (2, 13, 10));
        let (b, n) = blend_at(&scene(false), 0.35);
        assert_eq!((n, b[0].frame), (1, 13));
        let (b, _) = blend_at(&scene(true), -0.1);
        assert_eq!(b[0].frame, 13);
        let (b, n) = blend_at(&scene(false), -5.0);
        assert_eq!((n, b[0].frame), (1, 10));
        let (b, _) = blend_at(&scene(true), f64::NAN);
        assert_eq!(b[0].frame, 10);
    }
}
