//! Animation scenes: named runs of frames played at a rate, from DPM's `.framegroups` file or a
//! format's own, and the frame blend a scene gives at a time.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use crate::error::{Error, Result};
use crate::format::Checker;
use crate::model::{Animation, Frame, Model, Name};
use crate::pose::FrameBlend;

/// A `.framegroups` scene's rate when the line gives none (DarkPlaces' default).
const FRAMEGROUPS_FPS: f32 = 20.0;

/// The longest scene name kept from a `.framegroups` file, in bytes: DarkPlaces copies the name
/// into a 64-byte buffer, so longer ones are cut (with a warning; strict mode refuses them).
pub const MAX_SCENE_NAME: usize = 63;

/// The most bytes of a token quoted in a message.
const QUOTED_TOKEN: usize = 40;

/// Parses a DarkPlaces `.framegroups` file: one scene per line, `first count [fps [loop [name]]]`,
/// read with DarkPlaces' tokenizer ([`Tokens`]). Every scene must fit the model's frames.
///
/// Each scene is charged its record and its name against `ck`'s limit as it is read, so a file
/// of millions of scenes stops at the limit. A name longer than [`MAX_SCENE_NAME`] bytes is cut
/// through [`Checker::tolerate`].
pub(crate) fn parse_framegroups(
    text: &[u8],
    frames: &[Frame],
    ck: &mut Checker,
) -> Result<Vec<Animation>> {
    let mut scenes = Vec::new();
    let mut spent = 0u64;
    let mut tokens = Tokens::new(text);
    while let Some((line, token)) = tokens.next() {
        // A newline here ends an empty line.
        let Token::Word(first) = token else {
            continue;
        };
        let count = match tokens.next() {
            Some((line, Token::Word(count))) => (line, count),
            _ => {
                return Err(
                    Error::malformed("a scene needs a first frame and a frame count").on_line(line),
                );
            }
        };
        // Optional fields, each a token before the end of the line.
        let mut optional = || match tokens.next() {
            Some((line, Token::Word(word))) => Some((line, word)),
            _ => None,
        };
        let fps = optional();
        let looping = fps.and_then(|_| optional());
        let name = looping.and_then(|_| optional());
        // Anything after the name, up to the end of the line, is not read (as DarkPlaces).
        if name.is_some() {
            while let Some((_, Token::Word(_))) = tokens.next() {}
        }

        let first = whole(
            number((line, first), "the first frame")?,
            "first frame",
            line,
        )?;
        let count = whole(number(count, "the frame count")?, "frame count", count.0)?;
        let fps = match fps {
            Some(token) => number(token, "the frame rate")? as f32,
            None => FRAMEGROUPS_FPS,
        };
        // DarkPlaces reads the flag with atoi: its whole part.
        let looping = match looping {
            Some(token) => number(token, "the loop flag")?.trunc() != 0.0,
            None => true,
        };
        let name = match name {
            Some((name_line, name)) if !name.is_empty() => {
                if name.len() > MAX_SCENE_NAME {
                    ck.tolerate(
                        Error::malformed(format!(
                            "scene {} has a name of {} bytes; its first {MAX_SCENE_NAME} are kept",
                            scenes.len(),
                            name.len()
                        ))
                        .on_line(name_line),
                    )?;
                }
                Name::new(name.get(..MAX_SCENE_NAME).unwrap_or(name))
            }
            _ => Name::from(format!("groupified_{}_anim", scenes.len()).as_str()),
        };
        let shown = name.to_string_lossy();
        // Two u32s: the sum fits u64.
        let end = u64::from(first).saturating_add(u64::from(count));
        if count == 0 || end > frames.len() as u64 {
            return Err(Error::malformed(format!(
                "scene {shown:?} runs frames {first}..{end} but the model has {} frames",
                frames.len()
            ))
            .on_line(line));
        }
        if !(fps.is_finite() && fps > 0.0) {
            return Err(Error::malformed(format!(
                "scene {shown:?} has frame rate {fps}; it must be above 0"
            ))
            .on_line(line));
        }
        let cost = (size_of::<Animation>() as u64).saturating_add(name.heap_bytes() as u64);
        spent = spent.saturating_add(cost);
        ck.reserve(spent, "the list of scenes")
            .map_err(|e| e.within(format!("scene {}", scenes.len())).on_line(line))?;
        scenes.push(Animation {
            name,
            first_frame: first,
            frame_count: count,
            fps,
            looping,
            ..Animation::default()
        });
    }
    Ok(scenes)
}

/// A number token: finite, else `Malformed` naming `what` on the token's line.
fn number((line, token): (u32, &[u8]), what: &str) -> Result<f64> {
    std::str::from_utf8(token)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|v| v.is_finite())
        .ok_or_else(|| {
            let shown = String::from_utf8_lossy(token.get(..QUOTED_TOKEN).unwrap_or(token));
            let more = if token.len() > QUOTED_TOKEN {
                "..."
            } else {
                ""
            };
            Error::malformed(format!("{what} is `{shown}{more}`, not a number")).on_line(line)
        })
}

/// A whole number of frames, else `Malformed` naming `what` on `line`.
fn whole(v: f64, what: &str, line: u32) -> Result<u32> {
    if v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&v) {
        Ok(v as u32)
    } else {
        Err(Error::malformed(format!("{what} {v} is not a whole number of frames")).on_line(line))
    }
}

/// A token of a `.framegroups` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Token<'a> {
    /// The end of a line: LF, CR, or CR LF (one token).
    Newline,
    /// A word, or the text between quotes (without them).
    Word(&'a [u8]),
}

/// The tokens of a `.framegroups` file as DarkPlaces reads them (`COM_ParseToken_Simple` with
/// newlines returned, no backslash escapes, comments skipped), each with its 1-based line:
/// - white space is space, tab, CR and LF, and the text ends at its first NUL (DarkPlaces reads
///   it as a C string); LF, CR and CR LF end a line and are a [`Token::Newline`];
/// - at the start of a token, `//` skips to the end of the line (its newline is still a token),
///   and `/*` skips past the next `*/` (the newlines inside are not tokens), or to the end;
/// - `"` starts a token that runs to the next `"` (spaces and newlines included) or to the end;
/// - any other token runs to the next white space, so `1//x` is one token.
pub(crate) struct Tokens<'a> {
    rest: &'a [u8],
    line: u32,
}

impl<'a> Tokens<'a> {
    pub fn new(text: &'a [u8]) -> Tokens<'a> {
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        Tokens {
            rest: text.get(..end).unwrap_or_default(),
            line: 1,
        }
    }

    /// Moves past `n` bytes that end no line.
    fn skip(&mut self, n: usize) {
        self.rest = self.rest.get(n..).unwrap_or_default();
    }

    /// Moves past `n` bytes, counting the lines they end.
    fn advance(&mut self, n: usize) {
        let (skipped, rest) = self.rest.split_at(n.min(self.rest.len()));
        self.line = self.line.saturating_add(line_ends(skipped));
        self.rest = rest;
    }
}

/// The lines `bytes` end: each LF, and each CR not followed by LF.
fn line_ends(bytes: &[u8]) -> u32 {
    let crs = bytes
        .windows(2)
        .filter(|w| matches!(w, [b'\r', next] if *next != b'\n'))
        .count();
    let last_cr = usize::from(bytes.last() == Some(&b'\r'));
    let lfs = bytes.iter().filter(|&&b| b == b'\n').count();
    u32::try_from(crs.saturating_add(last_cr).saturating_add(lfs)).unwrap_or(u32::MAX)
}

impl<'a> Iterator for Tokens<'a> {
    type Item = (u32, Token<'a>);

    fn next(&mut self) -> Option<(u32, Token<'a>)> {
        loop {
            let blank = self
                .rest
                .iter()
                .position(|&b| !matches!(b, b' ' | b'\t'))
                .unwrap_or(self.rest.len());
            self.skip(blank);
            let line = self.line;
            match self.rest {
                [] => return None,
                [b'\r', b'\n', ..] => {
                    self.advance(2);
                    return Some((line, Token::Newline));
                }
                [b'\r' | b'\n', ..] => {
                    self.advance(1);
                    return Some((line, Token::Newline));
                }
                [b'/', b'/', ..] => {
                    let end = (self.rest.iter())
                        .position(|&b| matches!(b, b'\r' | b'\n'))
                        .unwrap_or(self.rest.len());
                    self.skip(end);
                }
                [b'/', b'*', ..] => {
                    // The search starts at the `*`, as DarkPlaces' does: `/*/` is a whole comment.
                    let end = (self.rest.get(1..).unwrap_or_default())
                        .windows(2)
                        .position(|w| w == b"*/")
                        .map_or(self.rest.len(), |at| at.saturating_add(3));
                    self.advance(end);
                }
                [b'"', quoted @ ..] => {
                    let len = quoted.iter().position(|&b| b == b'"');
                    let word = quoted
                        .get(..len.unwrap_or(quoted.len()))
                        .unwrap_or_default();
                    // The quotes, when the closing one is there, and the text between.
                    self.advance(word.len().saturating_add(if len.is_some() { 2 } else { 1 }));
                    return Some((line, Token::Word(word)));
                }
                rest => {
                    let len = (rest.iter())
                        .position(|&b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
                        .unwrap_or(rest.len());
                    self.skip(len);
                    return Some((line, Token::Word(rest.get(..len).unwrap_or_default())));
                }
            }
        }
    }
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
    let second = FrameBlend {
        frame: scene.first_frame.saturating_add(next),
        weight: fraction,
    };
    if fraction <= 0.0 || next == current || first.weight <= 0.0 {
        // A fraction that rounds to 1 in f32 (a time of k / fps a hair short of frame k, as
        // f64 division leaves it) is the next frame, not this one.
        let frame = if first.weight <= 0.0 && next != current {
            second.frame
        } else {
            first.frame
        };
        let only = FrameBlend { frame, weight: 1.0 };
        return ([only, only], 1);
    }
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
        if scene.frame_count == 0 {
            return Err(Error::invalid_argument(format!(
                "animation {index} ({}) has no frames to play",
                scene.name
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

    fn parse(text: &[u8], n: usize) -> Result<Vec<Animation>> {
        parse_with(text, n, false, u64::MAX).map(|(scenes, _)| scenes)
    }

    fn parse_with(
        text: &[u8],
        n: usize,
        strict: bool,
        max_bytes: u64,
    ) -> Result<(Vec<Animation>, Vec<String>)> {
        let mut ck = Checker::for_sidecar("m.dpm.framegroups".into(), strict, max_bytes);
        let scenes = parse_framegroups(text, &frames(n), &mut ck)?;
        Ok((scenes, ck.warnings))
    }

    fn summary(a: &Animation) -> (u32, u32, f32, bool, String) {
        (
            a.first_frame,
            a.frame_count,
            a.fps,
            a.looping,
            a.name.to_string_lossy(),
        )
    }

    /// The tokens of `text` with their lines, a newline shown as "\n".
    fn tokens(text: &[u8]) -> Vec<(u32, String)> {
        Tokens::new(text)
            .map(|(line, t)| match t {
                Token::Newline => (line, "\n".to_owned()),
                Token::Word(w) => (line, String::from_utf8_lossy(w).into_owned()),
            })
            .collect()
    }

    fn expect(list: &[(u32, &str)]) -> Vec<(u32, String)> {
        list.iter().map(|&(l, t)| (l, t.to_owned())).collect()
    }

    #[test]
    fn tokens_skip_comments_as_darkplaces_does() {
        // A block comment's newlines are not tokens, but they count as lines.
        assert_eq!(
            tokens(b"/*\nGenerated\n*/\n\n1 42"),
            expect(&[(3, "\n"), (4, "\n"), (5, "1"), (5, "42")])
        );
        assert_eq!(
            tokens(b"/* a\nb */ 1 2\n"),
            expect(&[(2, "1"), (2, "2"), (2, "\n")])
        );
        // `//` runs to the end of the line; the newline is still a token.
        assert_eq!(
            tokens(b"1 2 // x \"y\n3"),
            expect(&[(1, "1"), (1, "2"), (1, "\n"), (2, "3")])
        );
        // Comments start only at the start of a token.
        assert_eq!(tokens(b"1//x 2"), expect(&[(1, "1//x"), (1, "2")]));
        assert_eq!(tokens(b"1/*x*/ 2"), expect(&[(1, "1/*x*/"), (1, "2")]));
        // The search for `*/` starts at the `*`.
        assert_eq!(tokens(b"/*/ 5"), expect(&[(1, "5")]));
        // Unterminated, a block comment runs to the end.
        assert_eq!(tokens(b"1 /* 2\n3\n"), expect(&[(1, "1")]));
    }

    #[test]
    fn tokens_end_lines_at_lf_cr_and_crlf() {
        assert_eq!(
            tokens(b"1\r2\r\n3\n\t 4"),
            expect(&[
                (1, "1"),
                (1, "\n"),
                (2, "2"),
                (2, "\n"),
                (3, "3"),
                (3, "\n"),
                (4, "4")
            ])
        );
        // A CR before a comment's end of line, and an empty CR LF line.
        assert_eq!(
            tokens(b"// c\r\n\r\n5"),
            expect(&[(1, "\n"), (2, "\n"), (3, "5")])
        );
    }

    #[test]
    fn tokens_in_quotes_keep_spaces_and_run_to_the_end_unterminated() {
        assert_eq!(
            tokens(b"0 \"die hard\"x \"a\nb\" c"),
            expect(&[(1, "0"), (1, "die hard"), (1, "x"), (1, "a\nb"), (2, "c")])
        );
        assert_eq!(tokens(b"\"\" 1"), expect(&[(1, ""), (1, "1")]));
        assert_eq!(tokens(b"1 \"ab c\n2"), expect(&[(1, "1"), (1, "ab c\n2")]));
        // No escapes: a backslash is a byte like another.
        assert_eq!(tokens(b"\"a\\\" b"), expect(&[(1, "a\\"), (1, "b")]));
    }

    #[test]
    fn tokens_end_at_the_first_nul() {
        assert_eq!(tokens(b"1 2\0 3\n4"), expect(&[(1, "1"), (1, "2")]));
        assert_eq!(tokens(b"\0"), expect(&[]));
        assert_eq!(tokens(b""), expect(&[]));
    }

    #[test]
    fn framegroups_lines_with_defaults_and_comments() {
        let text = b"// first count fps loop name\r\n0 10 15 1 idle\n10 5\n\n15 3 24 0 \"die hard\" // last\n";
        let scenes = parse(text, 20).unwrap();
        assert_eq!(
            scenes.iter().map(summary).collect::<Vec<_>>(),
            [
                (0, 10, 15.0, true, "idle".to_owned()),
                (10, 5, 20.0, true, "groupified_1_anim".to_owned()),
                (15, 3, 24.0, false, "die hard".to_owned()),
            ]
        );
    }

    #[test]
    fn framegroups_after_a_block_comment() {
        // As Xonotic's generated files begin.
        let text = b"/*\nGenerated framegroups file for okmale1\nUsed by DarkPlaces.\n*/\n\n1 42 30 0 // okmale1 dieone\n43 56 30 0 // okmale1 dietwo\n";
        let scenes = parse(text, 99).unwrap();
        assert_eq!(
            scenes.iter().map(summary).collect::<Vec<_>>(),
            [
                (1, 42, 30.0, false, "groupified_0_anim".to_owned()),
                (43, 56, 30.0, false, "groupified_1_anim".to_owned()),
            ]
        );
    }

    #[test]
    fn framegroups_fields_as_darkplaces_reads_them() {
        // The loop flag is its whole part (atoi); tokens after the name are not read; an empty
        // name is no name; a scene may run over lines through a block comment.
        let text = b"0 1 10 0.5 a extra \"more words\"\n1 1 10 2 \"\"\n2 /*\n*/ 1 5\n";
        let scenes = parse(text, 3).unwrap();
        assert_eq!(
            scenes.iter().map(summary).collect::<Vec<_>>(),
            [
                (0, 1, 10.0, false, "a".to_owned()),
                (1, 1, 10.0, true, "groupified_1_anim".to_owned()),
                (2, 1, 5.0, true, "groupified_2_anim".to_owned()),
            ]
        );
    }

    #[test]
    fn framegroups_errors_carry_the_line() {
        for (text, line, message) in [
            (
                &b"0 10\n5 x\n"[..],
                2,
                "the frame count is `x`, not a number",
            ),
            (
                b"0 10\n\n18 5\n",
                3,
                "scene \"groupified_1_anim\" runs frames 18..23 but the model has 20 frames",
            ),
            (
                b"0 0\n",
                1,
                "scene \"groupified_0_anim\" runs frames 0..0 but the model has 20 frames",
            ),
            (b"7\n", 1, "a scene needs a first frame and a frame count"),
            (b"7", 1, "a scene needs a first frame and a frame count"),
            (
                b"0 1 -5\n",
                1,
                "scene \"groupified_0_anim\" has frame rate -5; it must be above 0",
            ),
            (
                b"0.5 2\n",
                1,
                "first frame 0.5 is not a whole number of frames",
            ),
            (
                b"/*\n\n*/ 1 2 x\n",
                3,
                "the frame rate is `x`, not a number",
            ),
            (b"\r\r\n1 1 1 y", 3, "the loop flag is `y`, not a number"),
        ] {
            let e = parse(text, 20).unwrap_err();
            assert_eq!(e.line(), Some(line), "{}", String::from_utf8_lossy(text));
            assert_eq!(e.detail().message, message);
        }
        // A long token is quoted in part.
        let long = [b"1 ".as_slice(), &[b'z'; 1000]].concat();
        let e = parse(&long, 20).unwrap_err();
        assert_eq!(
            e.detail().message,
            format!("the frame count is `{}...`, not a number", "z".repeat(40))
        );
    }

    #[test]
    fn long_scene_names_are_cut_to_63_bytes() {
        let name = "n".repeat(1000);
        let text = format!("0 1 10 1 {name}\n0 1 10 1 \"{}\"\n", "q".repeat(63));
        let (scenes, warnings) = parse_with(text.as_bytes(), 1, false, u64::MAX).unwrap();
        assert_eq!(scenes[0].name.as_bytes(), &name.as_bytes()[..63]);
        assert_eq!(scenes[1].name.as_bytes(), "q".repeat(63).as_bytes());
        assert_eq!(
            warnings,
            ["m.dpm.framegroups line 1: scene 0 has a name of 1000 bytes; its first 63 are kept"]
        );
        let e = parse_with(text.as_bytes(), 1, true, u64::MAX).unwrap_err();
        assert_eq!((e.code(), e.line()), (crate::ErrorCode::Malformed, Some(1)));
    }

    #[test]
    fn scenes_are_charged_as_they_are_read() {
        let cost = size_of::<Animation>() as u64;
        let text = "0 1\n".repeat(100);
        let (scenes, _) = parse_with(text.as_bytes(), 1, false, 100 * cost).unwrap();
        assert_eq!(scenes.len(), 100);
        let e = parse_with(text.as_bytes(), 1, false, 10 * cost).unwrap_err();
        assert_eq!((e.code(), e.line()), (crate::ErrorCode::Limit, Some(11)));
        assert_eq!(
            e.detail().message,
            format!(
                "scene 10: the list of scenes needs {} bytes of memory, more than the limit of {} bytes",
                11 * cost,
                10 * cost
            )
        );
        // A name takes its bytes.
        let named = format!("0 1 1 1 {}\n", "n".repeat(63));
        let e = parse_with(named.as_bytes(), 1, false, cost + 62).unwrap_err();
        assert_eq!(e.code(), crate::ErrorCode::Limit);
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
    fn a_time_a_hair_short_of_a_frame_is_that_frame() {
        // 15 / 22 * 22 is 14.999999999999998 in f64: the fraction rounds to 1 in f32.
        let crawl = Animation {
            first_frame: 159,
            frame_count: 31,
            fps: 22.0,
            looping: true,
            ..Animation::default()
        };
        let (b, n) = blend_at(&crawl, 15.0 / 22.0);
        assert_eq!((n, b[0].frame, b[0].weight), (1, 174, 1.0));
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
