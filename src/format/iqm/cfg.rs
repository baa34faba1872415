//! Red Eclipse's and Tesseract's model configuration (`iqm.cfg`, a CubeScript file): of its
//! commands ossa reads `iqmload FILE` (the mesh it configures) and `iqmanim NAMES FILE[:ANIM]
//! [SPEED]` (an animation-only IQM whose poses move the mesh's bones by index, played as each of
//! the `|`-separated NAMES at SPEED frames a second). Commands inside `[ ]` blocks (conditions,
//! definitions) and every other command (tags, pitch, skins, `exec` of files elsewhere in the
//! game) are not read.

use crate::error::{Error, Result};

/// One `iqmanim` line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CfgAnim {
    pub names: Vec<String>,
    pub file: String,
    /// The anim of the file to play (`FILE:ANIM`); None: all of its frames.
    pub anim: Option<String>,
    /// Frames a second; None where the line gives none or 0.
    pub speed: Option<f32>,
    pub line: u32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Cfg {
    /// The file of the first `iqmload`.
    pub load: Option<String>,
    pub anims: Vec<CfgAnim>,
    /// Lines inside `[ ]` blocks, which are not read.
    pub skipped_block_lines: u32,
}

/// The words of one line: quoted strings whole, `//` to the end of the line a comment.
fn words(line: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    loop {
        let start = rest.iter().position(|b| !b.is_ascii_whitespace());
        let Some(start) = start else { break };
        rest = rest.get(start..).unwrap_or_default();
        if rest.starts_with(b"//") {
            break;
        }
        let (word, after) = if let Some(quoted) = rest.strip_prefix(b"\"") {
            let end = quoted
                .iter()
                .position(|&b| b == b'"')
                .unwrap_or(quoted.len());
            (
                quoted.get(..end).unwrap_or_default(),
                quoted.get(end.saturating_add(1)..).unwrap_or_default(),
            )
        } else {
            let end = rest
                .iter()
                .position(|b| b.is_ascii_whitespace())
                .unwrap_or(rest.len());
            (
                rest.get(..end).unwrap_or_default(),
                rest.get(end..).unwrap_or_default(),
            )
        };
        out.push(String::from_utf8_lossy(word).into_owned());
        rest = after;
    }
    out
}

/// Parses the commands ossa reads. A file of more than `max_lines` lines is `Limit`.
pub(crate) fn parse(text: &[u8], max_lines: usize) -> Result<Cfg> {
    let mut cfg = Cfg::default();
    let mut depth = 0usize;
    for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
        if i >= max_lines {
            return Err(Error::limit(format!(
                "more than {max_lines} lines, more than a model configuration holds"
            )));
        }
        let line = u32::try_from(i.saturating_add(1)).unwrap_or(u32::MAX);
        let words = words(raw);
        let inside = depth > 0;
        for w in &words {
            depth = depth
                .saturating_add(w.matches('[').count())
                .saturating_sub(w.matches(']').count());
        }
        if inside || depth > 0 {
            if !words.is_empty() {
                cfg.skipped_block_lines = cfg.skipped_block_lines.saturating_add(1);
            }
            continue;
        }
        match words.first().map(String::as_str) {
            Some("iqmload") if cfg.load.is_none() => cfg.load = words.get(1).cloned(),
            Some("iqmanim") => {
                let (Some(names), Some(file)) = (words.get(1), words.get(2)) else {
                    return Err(
                        Error::malformed("iqmanim needs animation names and a file").on_line(line)
                    );
                };
                let (file, anim) = match file.split_once(':') {
                    Some((f, a)) => (f.to_owned(), Some(a.to_owned())),
                    None => (file.clone(), None),
                };
                let speed = match words.get(3) {
                    None => None,
                    Some(s) => match s.parse::<f32>() {
                        Ok(v) if v.is_finite() && v > 0.0 && v <= 1000.0 => Some(v),
                        Ok(0.0) => None,
                        _ => {
                            return Err(Error::malformed(format!(
                                "iqmanim speed {s:?} is not a rate from 0 to 1000"
                            ))
                            .on_line(line));
                        }
                    },
                };
                cfg.anims.push(CfgAnim {
                    names: names
                        .split('|')
                        .map(str::trim)
                        .filter(|n| !n.is_empty())
                        .map(str::to_owned)
                        .collect(),
                    file,
                    anim,
                    speed,
                    line,
                });
            }
            _ => {}
        }
    }
    Ok(cfg)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn reads_iqmload_and_iqmanim_and_skips_blocks() {
        let text = b"// wings\niqmload mesh.iqm\niqmskin * \"diff.png\"\n\
            iqmanim \"jump|jump left\"     \"air.iqm\"    80\n\
            if 1 [\niqmanim \"no\" \"no.iqm\"\n] [\niqmpitch spine 0.4\n]\n\
            iqmanim idle anim_idle.iqm:stand\niqmanim \"dead\" \"dead.iqm\" 0 // still\n";
        let cfg = parse(text, 1000).unwrap();
        assert_eq!(cfg.load.as_deref(), Some("mesh.iqm"));
        assert_eq!(cfg.skipped_block_lines, 5);
        assert_eq!(
            cfg.anims,
            [
                CfgAnim {
                    names: vec!["jump".into(), "jump left".into()],
                    file: "air.iqm".into(),
                    anim: None,
                    speed: Some(80.0),
                    line: 4,
                },
                CfgAnim {
                    names: vec!["idle".into()],
                    file: "anim_idle.iqm".into(),
                    anim: Some("stand".into()),
                    speed: None,
                    line: 10,
                },
                CfgAnim {
                    names: vec!["dead".into()],
                    file: "dead.iqm".into(),
                    anim: None,
                    speed: None,
                    line: 11,
                },
            ]
        );
    }

    #[test]
    fn bad_lines_name_their_line() {
        let e = parse(b"iqmload a.iqm\niqmanim idle\n", 100).unwrap_err();
        assert_eq!(e.line(), Some(2));
        let e = parse(b"iqmanim idle a.iqm fast\n", 100).unwrap_err();
        assert!(e.to_string().contains("\"fast\""), "{e}");
        assert!(parse(b"\n\n\n", 2).is_err());
    }
}
