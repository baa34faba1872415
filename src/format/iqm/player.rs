//! Player models of Warfork (and the qfusion games before it): `models/players/NAME/tris.iqm`
//! with `animation.cfg` beside it, which gives the frames of each of the game's player
//! animations (`source/cgame/cg_pmodels.cpp`, `CG_LoadPlayerModel` and
//! `CG_ParseAnimationScript`, TeamForbiddenLLC/warfork-qfusion@2854cff). The renderer never
//! reads an IQM's own anims for a player: the config alone says what plays.
//!
//! Three things live here:
//! - [`read_as_warfork`]: the config as Warfork reads it, token by token with qfusion's
//!   `COM_ParseExt`, so that the engine rules ([`super::engines`]) can say what it gets wrong;
//! - [`read_player_config`]: a config of either layout read for conversion, its anims put in
//!   Warfork's order;
//! - [`PlayerConfig::from_scenes`] and [`PlayerConfig::to_text`]: a config written for Warfork.
//!
//! Layouts: Warfork reads four numbers an anim (first frame, last frame, looping frames, frames
//! a second) wherever they are, lines and all, and needs the 49 anims of its list. The model
//! sources of the Warsow 0.5 SDK keep an older layout: three numbers a line (first, last,
//! looping), one `FPS N` line for all, the anim named in a `//` comment, 45 anims in another
//! order. Read by Warfork as it is, such a file is refused (35 anims of shifted numbers).

use crate::error::{Error, Result};
use crate::model::{Animation, Model};

/// Warfork's player animations, in the order `animation.cfg` gives them: `gs_public.h`'s list
/// after `ANIM_NONE` (warfork-qfusion@9bcd650 `source/gameshared/gs_public.h`).
pub const WARFORK_ANIMS: [&str; 49] = [
    "BOTH_DEATH1",
    "BOTH_DEAD1",
    "BOTH_DEATH2",
    "BOTH_DEAD2",
    "BOTH_DEATH3",
    "BOTH_DEAD3",
    "LEGS_STAND_IDLE",
    "LEGS_WALK_FORWARD",
    "LEGS_WALK_BACK",
    "LEGS_WALK_LEFT",
    "LEGS_WALK_RIGHT",
    "LEGS_RUN_FORWARD",
    "LEGS_RUN_BACK",
    "LEGS_RUN_LEFT",
    "LEGS_RUN_RIGHT",
    "LEGS_JUMP_LEG1",
    "LEGS_JUMP_LEG2",
    "LEGS_JUMP_NEUTRAL",
    "LEGS_LAND",
    "LEGS_CROUCH_IDLE",
    "LEGS_CROUCH_WALK",
    "LEGS_SWIM_FORWARD",
    "LEGS_SWIM_NEUTRAL",
    "LEGS_WALLJUMP",
    "LEGS_WALLJUMP_LEFT",
    "LEGS_WALLJUMP_RIGHT",
    "LEGS_WALLJUMP_BACK",
    "LEGS_DASH",
    "LEGS_DASH_LEFT",
    "LEGS_DASH_RIGHT",
    "LEGS_DASH_BACK",
    "TORSO_HOLD_BLADE",
    "TORSO_HOLD_PISTOL",
    "TORSO_HOLD_LIGHTWEAPON",
    "TORSO_HOLD_HEAVYWEAPON",
    "TORSO_HOLD_AIMWEAPON",
    "TORSO_SHOOT_BLADE",
    "TORSO_SHOOT_PISTOL",
    "TORSO_SHOOT_LIGHTWEAPON",
    "TORSO_SHOOT_HEAVYWEAPON",
    "TORSO_SHOOT_AIMWEAPON",
    "TORSO_WEAPON_SWITCHOUT",
    "TORSO_WEAPON_SWITCHIN",
    "TORSO_DROPHOLD",
    "TORSO_DROP",
    "TORSO_SWIM",
    "TORSO_PAIN1",
    "TORSO_PAIN2",
    "TORSO_PAIN3",
];

/// Anims a config must give: `CG_ParseAnimationScript` refuses fewer ("Not enough animations"),
/// and stops reading after as many.
pub const REQUIRED_ANIMS: usize = WARFORK_ANIMS.len();

/// Warfork plays an anim of fewer frames a second at this rate (`anim_data[3] > 10 ? ... : 10`).
pub const MIN_FPS: i32 = 10;

/// Where each of Warfork's anims comes from in a config of the older layout: the names meaning
/// the same anim (the first found is taken), then the anims that stand in for it where the
/// older list has no such anim (the Warsow 0.5 SDK's list has one idle and one shooting torso
/// for every weapon, no landing, no backward wall jump or dash).
const FROM_OLDER: [(&str, &[&str], &[&str]); 49] = [
    ("BOTH_DEATH1", &[], &[]),
    ("BOTH_DEAD1", &[], &[]),
    ("BOTH_DEATH2", &[], &[]),
    ("BOTH_DEAD2", &[], &[]),
    ("BOTH_DEATH3", &[], &[]),
    ("BOTH_DEAD3", &[], &[]),
    ("LEGS_STAND_IDLE", &["LEGS_IDLE"], &[]),
    ("LEGS_WALK_FORWARD", &["LEGS_WALKFWD"], &[]),
    ("LEGS_WALK_BACK", &["LEGS_WALKBACK"], &[]),
    ("LEGS_WALK_LEFT", &["LEGS_WALKLEFT"], &[]),
    ("LEGS_WALK_RIGHT", &["LEGS_WALKRIGHT"], &[]),
    ("LEGS_RUN_FORWARD", &["LEGS_RUNFWD"], &[]),
    ("LEGS_RUN_BACK", &["LEGS_RUNBACK"], &[]),
    ("LEGS_RUN_LEFT", &["LEGS_RUNLEFT"], &[]),
    ("LEGS_RUN_RIGHT", &["LEGS_RUNRIGHT"], &[]),
    ("LEGS_JUMP_LEG1", &["LEGS_JUMP1"], &[]),
    ("LEGS_JUMP_LEG2", &["LEGS_JUMP2"], &[]),
    ("LEGS_JUMP_NEUTRAL", &["LEGS_JUMP3"], &[]),
    ("LEGS_LAND", &[], &["LEGS_JUMP3ST", "LEGS_JUMP1ST"]),
    ("LEGS_CROUCH_IDLE", &["LEGS_IDLECR"], &[]),
    ("LEGS_CROUCH_WALK", &["LEGS_CRWALK"], &[]),
    ("LEGS_SWIM_FORWARD", &["LEGS_SWIMFWD"], &[]),
    ("LEGS_SWIM_NEUTRAL", &["LEGS_SWIM"], &[]),
    ("LEGS_WALLJUMP", &[], &[]),
    ("LEGS_WALLJUMP_LEFT", &[], &[]),
    ("LEGS_WALLJUMP_RIGHT", &[], &[]),
    ("LEGS_WALLJUMP_BACK", &[], &["LEGS_WALLJUMP"]),
    ("LEGS_DASH", &[], &[]),
    ("LEGS_DASH_LEFT", &[], &[]),
    ("LEGS_DASH_RIGHT", &[], &[]),
    ("LEGS_DASH_BACK", &[], &["LEGS_DASH"]),
    ("TORSO_HOLD_BLADE", &[], &["TORSO_STAND"]),
    ("TORSO_HOLD_PISTOL", &[], &["TORSO_STAND"]),
    ("TORSO_HOLD_LIGHTWEAPON", &[], &["TORSO_STAND"]),
    ("TORSO_HOLD_HEAVYWEAPON", &[], &["TORSO_STAND"]),
    ("TORSO_HOLD_AIMWEAPON", &[], &["TORSO_STAND"]),
    (
        "TORSO_SHOOT_BLADE",
        &[],
        &["TORSO_ATTACK2", "TORSO_ATTACK1"],
    ),
    ("TORSO_SHOOT_PISTOL", &[], &["TORSO_ATTACK1"]),
    ("TORSO_SHOOT_LIGHTWEAPON", &[], &["TORSO_ATTACK1"]),
    ("TORSO_SHOOT_HEAVYWEAPON", &[], &["TORSO_ATTACK1"]),
    ("TORSO_SHOOT_AIMWEAPON", &[], &["TORSO_ATTACK1"]),
    ("TORSO_WEAPON_SWITCHOUT", &["TORSO_WEAP_DOWN"], &[]),
    ("TORSO_WEAPON_SWITCHIN", &["TORSO_WEAP_UP"], &[]),
    ("TORSO_DROPHOLD", &[], &[]),
    ("TORSO_DROP", &[], &[]),
    ("TORSO_SWIM", &[], &[]),
    ("TORSO_PAIN1", &[], &[]),
    ("TORSO_PAIN2", &[], &[]),
    ("TORSO_PAIN3", &[], &[]),
];

// ---------------------------------------------------------------------------------------------
// The config as Warfork reads it.

/// qfusion's `COM_ParseExt2_r` over a file (`source/gameshared/q_shared.c`): white space is any
/// byte up to the space; a token runs to the next such byte, or between quotes (which are
/// dropped); `//` and `/* */` are comments. Asked for a token on the same line (`nl` false), a
/// newline in the white space ends the call with an empty token, the white space consumed: the
/// call after it reads the next line.
struct Tokens<'a> {
    text: &'a [u8],
    at: usize,
    /// The 1-based line at `at`.
    line: u32,
    /// The data ended (`*data_p = NULL`): every call is empty from now on.
    ended: bool,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a [u8]) -> Tokens<'a> {
        Tokens {
            text,
            at: 0,
            line: 1,
            ended: false,
        }
    }

    fn byte(&self, at: usize) -> u8 {
        self.text.get(at).copied().unwrap_or(0)
    }

    fn step(&mut self) {
        if self.byte(self.at) == b'\n' {
            self.line = self.line.saturating_add(1);
        }
        self.at = self.at.saturating_add(1);
    }

    /// The next token and its line; None is the empty token.
    fn next(&mut self, nl: bool) -> Option<(u32, &'a [u8])> {
        if self.ended {
            return None;
        }
        let mut newlines = false;
        loop {
            loop {
                let c = self.byte(self.at);
                if c == 0 {
                    self.ended = true;
                    return None;
                }
                if c > b' ' {
                    break;
                }
                newlines |= c == b'\n';
                self.step();
            }
            if newlines && !nl {
                return None;
            }
            let c = self.byte(self.at);
            let next = self.byte(self.at.saturating_add(1));
            if c == b'/' && next == b'/' {
                while !matches!(self.byte(self.at), 0 | b'\n') {
                    self.step();
                }
            } else if c == b'/' && next == b'*' {
                self.at = self.at.saturating_add(2);
                loop {
                    match (self.byte(self.at), self.byte(self.at.saturating_add(1))) {
                        (0, _) => break,
                        (b'*', b'/') => {
                            self.at = self.at.saturating_add(2);
                            break;
                        }
                        _ => self.step(),
                    }
                }
            } else {
                break;
            }
        }
        let line = self.line;
        if self.byte(self.at) == b'"' {
            self.at = self.at.saturating_add(1);
            let start = self.at;
            while !matches!(self.byte(self.at), 0 | b'"') {
                self.step();
            }
            let token = self.text.get(start..self.at).unwrap_or_default();
            if self.byte(self.at) == b'"' {
                self.at = self.at.saturating_add(1);
            }
            // An empty quoted token reads as the end, as in the engine.
            return (!token.is_empty()).then_some((line, token));
        }
        let start = self.at;
        while self.byte(self.at) > b' ' {
            self.at = self.at.saturating_add(1);
        }
        Some((line, self.text.get(start..self.at).unwrap_or_default()))
    }
}

/// C's `atoi` of a token that starts with a digit: its leading digits, saturated.
fn atoi(token: &[u8]) -> i32 {
    let mut v: i32 = 0;
    for &b in token.iter().take_while(|b| b.is_ascii_digit()) {
        v = v
            .saturating_mul(10)
            .saturating_add(i32::from(b.wrapping_sub(b'0')));
    }
    v
}

/// One anim as Warfork reads it: its four numbers and the line each came from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ReadAnim {
    /// First frame, last frame, looping frames, frames a second.
    pub values: [i32; 4],
    pub lines: [u32; 4],
}

/// A config as `CG_ParseAnimationScript` reads it.
#[derive(Clone, Debug, Default)]
pub(crate) struct WarforkRead {
    /// The anims read, at most [`REQUIRED_ANIMS`]; the numbers of an incomplete last one are
    /// not kept.
    pub anims: Vec<ReadAnim>,
    /// Where the engine stopped reading before the end of the file, and why.
    pub stopped: Option<(u32, String)>,
    /// `rotationbone`, `rootanim` and `tagmask` lines naming no bone of the model: the line, the
    /// keyword and the name.
    pub unknown_bones: Vec<(u32, String, String)>,
    /// The last line a token was read from.
    pub last_line: u32,
}

/// Reads `text` as Warfork's `CG_ParseAnimationScript` does, `bones` being the model's bone
/// names (`CG_FindBoneNum` compares them without case).
pub(crate) fn read_as_warfork(text: &[u8], bones: &[String]) -> WarforkRead {
    let mut out = WarforkRead::default();
    let mut tokens = Tokens::new(text);
    let find = |name: &[u8]| {
        bones
            .iter()
            .any(|b| b.as_bytes().eq_ignore_ascii_case(name))
    };
    let shown = |t: &[u8]| String::from_utf8_lossy(t).into_owned();
    let mut pending: Vec<(i32, u32)> = Vec::with_capacity(4);
    while let Some((line, token)) = tokens.next(true) {
        out.last_line = line;
        let first = token.first().copied().unwrap_or(0);
        if first.is_ascii_digit() {
            pending.push((atoi(token), line));
            if let [a, b, c, d] = pending.as_slice() {
                out.anims.push(ReadAnim {
                    values: [a.0, b.0, c.0, d.0],
                    lines: [a.1, b.1, c.1, d.1],
                });
                pending.clear();
                if out.anims.len() == REQUIRED_ANIMS {
                    break;
                }
            }
            continue;
        }
        let keyword = token.to_ascii_lowercase();
        match keyword.as_slice() {
            b"sex" => match tokens.next(false) {
                Some((_, v))
                    if matches!(v.first(), Some(b'm' | b'M' | b'f' | b'F' | b'n' | b'N')) => {}
                Some((l, v)) => {
                    out.stopped = Some((
                        l,
                        format!("`sex` is followed by `{}`, not m, f or n", shown(v)),
                    ));
                    break;
                }
                None => {
                    out.stopped = Some((line, "`sex` has no value on its line".to_owned()));
                    break;
                }
            },
            b"rotationbone" | b"rootanim" => {
                let what = shown(token);
                let Some((_, part)) = tokens.next(false) else {
                    out.stopped = Some((line, format!("`{what}` has no part on its line")));
                    break;
                };
                let part = part.to_ascii_lowercase();
                let known = match keyword.as_slice() {
                    b"rotationbone" => matches!(part.as_slice(), b"upper" | b"head"),
                    _ => matches!(part.as_slice(), b"upper" | b"head" | b"lower"),
                };
                if !known {
                    continue;
                }
                match tokens.next(false) {
                    Some((l, bone)) if !find(bone) => {
                        out.unknown_bones.push((l, what, shown(bone)));
                    }
                    Some(_) => {}
                    None if keyword == b"rotationbone" => {
                        out.stopped = Some((line, format!("`{what}` has no bone on its line")));
                        break;
                    }
                    None => out.unknown_bones.push((line, what, String::new())),
                }
            }
            b"tagmask" => {
                let Some((l, bone)) = tokens.next(false) else {
                    out.stopped = Some((line, "`tagmask` has no bone on its line".to_owned()));
                    break;
                };
                if !find(bone) {
                    // The rest of the line is read as if at the start of one.
                    out.unknown_bones
                        .push((l, "tagmask".to_owned(), shown(bone)));
                    continue;
                }
                if tokens.next(false).is_none() {
                    out.stopped = Some((line, "`tagmask` has no tag name".to_owned()));
                    break;
                }
                // Six numbers, each asked for on the same line: a missing one ends the line,
                // and those after it take the next line's tokens.
                for _ in 0..6 {
                    tokens.next(false);
                }
            }
            _ => {}
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Configs for conversion.

/// One of Warfork's player anims: frames of the IQM, inclusive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerAnim {
    /// Warfork's name of the anim (or the scene's, for a config made from scenes).
    pub name: String,
    pub first: u32,
    pub last: u32,
    /// Frames at the end of the anim that loop; 0: it holds its last frame.
    pub looping: u32,
    pub fps: u32,
}

/// An `animation.cfg`: the lines that are not anims (`sex`, `rotationbone`, `rootanim`,
/// `tagmask`), and the anims in Warfork's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlayerConfig {
    pub keywords: Vec<String>,
    pub anims: Vec<PlayerAnim>,
    /// What reading it changed: anims renamed or stood in for, lines dropped.
    pub notes: Vec<String>,
}

/// A line of a source config without its comment, and the comment.
fn split_comment(line: &str) -> (&str, &str) {
    match line.find("//") {
        Some(at) => (
            line.get(..at).unwrap_or_default(),
            line.get(at.saturating_add(2)..).unwrap_or_default(),
        ),
        None => (line, ""),
    }
}

/// The words of a line, quoted ones whole (with their quotes).
fn words(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        let end = if let Some(body) = rest.strip_prefix('"') {
            body.find('"').map_or(rest.len(), |e| e.saturating_add(2))
        } else {
            rest.find(|c: char| c.is_ascii_whitespace())
                .unwrap_or(rest.len())
        };
        let (word, after) = rest.split_at(end.min(rest.len()));
        out.push(word);
        rest = after.trim_start();
    }
    out
}

/// The anim name a comment gives: its first word made of capitals, digits and underscores
/// with an underscore in it (`// BOTH_DEATH1 Death animation (anim_death1_19)`).
fn comment_name(comment: &str) -> Option<String> {
    comment
        .split(|c: char| c.is_ascii_whitespace())
        .find(|w| {
            w.contains('_')
                && w.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .map(str::to_owned)
}

/// An anim line of a source config.
struct SourceAnim {
    numbers: Vec<u32>,
    name: Option<String>,
    line: usize,
}

/// Reads a player config for conversion: Warfork's layout (four numbers an anim, in Warfork's
/// order) or the older one of the Warsow 0.5 SDK's model sources (three numbers a line, one
/// `FPS` line, each anim named in its comment), whose anims are put in Warfork's order by name
/// ([`PlayerConfig::notes`] says which were renamed and which stand in for an anim the older
/// list lacks). `tagmask` lines get their six numbers (the older ones have three, and Warfork
/// would read the next line's tokens for the rest); `FPS` and `alljumps` lines are dropped.
///
/// Refused (`Malformed`, naming the line): a line of numbers other than three or four, both
/// layouts in one file, an older-layout anim without a name, or without an `FPS` line; and an
/// older layout that lacks an anim of Warfork's list with nothing to stand in for it.
pub fn read_player_config(text: &[u8]) -> Result<PlayerConfig> {
    let text = String::from_utf8_lossy(text);
    let mut keywords = Vec::new();
    let mut notes = Vec::new();
    let mut fps: Option<u32> = None;
    let mut anims: Vec<SourceAnim> = Vec::new();
    for (k, raw) in text.lines().enumerate() {
        let number = k.saturating_add(1);
        let (content, comment) = split_comment(raw);
        let w = words(content);
        let Some(first) = w.first() else { continue };
        let lower = first.to_ascii_lowercase();
        match lower.as_str() {
            "sex" | "rotationbone" | "rootanim" => keywords.push(w.join(" ")),
            "tagmask" => {
                let mut line: Vec<String> = w.iter().take(3).map(|s| (*s).to_owned()).collect();
                let mut values: Vec<String> = w.iter().skip(3).map(|s| (*s).to_owned()).collect();
                values.resize(6, "0".to_owned());
                line.extend(values.into_iter().take(6));
                keywords.push(line.join(" "));
            }
            "fps" => {
                fps = w.get(1).and_then(|v| v.parse().ok());
                if fps.is_none() {
                    return Err(
                        Error::malformed("`FPS` needs a whole number of frames a second")
                            .on_line(number as u32),
                    );
                }
            }
            "alljumps" => notes.push(format!(
                "line {number}: `alljumps` dropped (Warfork reads no such keyword)"
            )),
            _ if first.starts_with(|c: char| c.is_ascii_digit()) => {
                let numbers: Option<Vec<u32>> = w.iter().map(|v| v.parse().ok()).collect();
                let numbers = numbers
                    .filter(|n| matches!(n.len(), 3 | 4))
                    .ok_or_else(|| {
                        Error::malformed(format!(
                            "an anim is three numbers (first frame, last frame, \
                         looping frames) or four (and frames a second), not `{}`",
                            content.trim()
                        ))
                        .on_line(number as u32)
                    })?;
                anims.push(SourceAnim {
                    numbers,
                    name: comment_name(comment),
                    line: number,
                });
            }
            _ => notes.push(format!(
                "line {number}: `{first}` dropped (not a keyword of Warfork's player config)"
            )),
        }
    }
    let older = anims.first().is_some_and(|a| a.numbers.len() == 3);
    if let Some(mixed) = anims.iter().find(|a| (a.numbers.len() == 3) != older) {
        return Err(
            Error::malformed("anims of three and of four numbers in one file")
                .on_line(mixed.line as u32),
        );
    }
    let anims = if older {
        from_older(&anims, fps, &mut notes)?
    } else {
        anims
            .iter()
            .enumerate()
            .map(|(k, a)| {
                let n = |i: usize| a.numbers.get(i).copied().unwrap_or(0);
                PlayerAnim {
                    name: WARFORK_ANIMS
                        .get(k)
                        .map(|s| (*s).to_owned())
                        .or_else(|| a.name.clone())
                        .unwrap_or_default(),
                    first: n(0),
                    last: n(1),
                    looping: n(2),
                    fps: n(3),
                }
            })
            .collect()
    };
    Ok(PlayerConfig {
        keywords,
        anims,
        notes,
    })
}

/// The older layout's anims in Warfork's order (see [`FROM_OLDER`]).
fn from_older(
    anims: &[SourceAnim],
    fps: Option<u32>,
    notes: &mut Vec<String>,
) -> Result<Vec<PlayerAnim>> {
    let line = anims.first().map_or(1, |a| a.line) as u32;
    let fps = fps.ok_or_else(|| {
        Error::malformed(
            "anims of three numbers (the Warsow 0.5 SDK's layout) need an `FPS` line: the rate \
             of them all",
        )
        .on_line(line)
    })?;
    if let Some(a) = anims.iter().find(|a| a.name.is_none()) {
        return Err(Error::malformed(
            "the anim has no name in its comment (`// LEGS_RUNFWD ...`): anims of the older \
             layout are put in Warfork's order by name",
        )
        .on_line(a.line as u32));
    }
    let by_name = |name: &str| anims.iter().find(|a| a.name.as_deref() == Some(name));
    let mut out = Vec::with_capacity(REQUIRED_ANIMS);
    let mut renamed = Vec::new();
    let mut stand_ins = Vec::new();
    let mut missing = Vec::new();
    for (name, same, instead) in FROM_OLDER {
        let found = std::iter::once(name)
            .chain(same.iter().copied())
            .find_map(|n| by_name(n).map(|a| (n, a, false)))
            .or_else(|| {
                instead
                    .iter()
                    .find_map(|n| by_name(n).map(|a| (*n, a, true)))
            });
        let Some((from, a, stands_in)) = found else {
            missing.push(name);
            continue;
        };
        if stands_in {
            stand_ins.push(format!("{name} <- {from}"));
        } else if from != name {
            renamed.push(format!("{name} <- {from}"));
        }
        let n = |i: usize| a.numbers.get(i).copied().unwrap_or(0);
        out.push(PlayerAnim {
            name: name.to_owned(),
            first: n(0),
            last: n(1),
            looping: n(2),
            fps,
        });
    }
    if !missing.is_empty() {
        return Err(Error::malformed(format!(
            "the config has no anim for {} of Warfork's list, nor one to stand in for it",
            missing.join(", ")
        )));
    }
    let used: Vec<&str> = FROM_OLDER
        .iter()
        .flat_map(|(n, same, instead)| {
            std::iter::once(*n)
                .chain(same.iter().copied())
                .chain(instead.iter().copied())
        })
        .collect();
    let unused: Vec<String> = anims
        .iter()
        .filter_map(|a| a.name.clone())
        .filter(|n| !used.contains(&n.as_str()))
        .collect();
    notes.push(format!(
        "the Warsow 0.5 SDK's layout (three numbers a line, FPS {fps}) put in Warfork's order"
    ));
    if !renamed.is_empty() {
        notes.push(format!("renamed: {}", renamed.join(", ")));
    }
    if !stand_ins.is_empty() {
        notes.push(format!(
            "standing in for anims the older list lacks: {}",
            stand_ins.join(", ")
        ));
    }
    if !unused.is_empty() {
        notes.push(format!("not in Warfork's list: {}", unused.join(", ")));
    }
    Ok(out)
}

impl PlayerConfig {
    /// A config from `model`'s scenes, in their order, each scene's frames counted from the
    /// file's frame 0, which is the model's frame `first_file_frame`: a looping scene loops
    /// all its frames after its first; its rate is rounded to whole frames a second.
    pub fn from_scenes(model: &Model, first_file_frame: usize) -> PlayerConfig {
        let anims = model
            .animations()
            .iter()
            .filter(|a| a.frame_count > 0)
            .map(|a| {
                let first = (a.first_frame as usize).saturating_sub(first_file_frame) as u32;
                let last = first.saturating_add(a.frame_count.saturating_sub(1));
                PlayerAnim {
                    name: a.name.to_string_lossy(),
                    first,
                    last,
                    looping: if a.looping {
                        last.saturating_sub(first)
                    } else {
                        0
                    },
                    fps: if a.fps.is_finite() && a.fps >= 1.0 {
                        a.fps.round().min(u32::MAX as f32) as u32
                    } else {
                        1
                    },
                }
            })
            .collect();
        PlayerConfig {
            keywords: Vec::new(),
            anims,
            notes: Vec::new(),
        }
    }

    /// The config's anims as scenes of a model whose frame `first_file_frame` is the file's
    /// first, within its `frames`.
    pub(crate) fn scenes(&self, first_file_frame: usize, frames: usize) -> Vec<Animation> {
        let last_frame = frames.saturating_sub(1);
        self.anims
            .iter()
            .map(|a| {
                let first = (a.first as usize)
                    .saturating_add(first_file_frame)
                    .min(last_frame);
                let last = (a.last as usize)
                    .saturating_add(first_file_frame)
                    .clamp(first, last_frame);
                Animation {
                    name: crate::model::Name::from(a.name.as_str()),
                    first_frame: first as u32,
                    frame_count: (last.saturating_sub(first)).saturating_add(1) as u32,
                    fps: a.fps.max(1) as f32,
                    looping: a.looping > 0,
                    ..Animation::default()
                }
            })
            .collect()
    }

    /// The config as Warfork reads it: the keyword lines, then one anim a line, `first last
    /// looping fps // NAME`.
    pub fn to_text(&self) -> String {
        let mut out = String::from(
            "// Warfork player animations (cgame CG_ParseAnimationScript): one anim a line,\n\
             // first frame, last frame, looping frames, frames a second\n",
        );
        for k in &self.keywords {
            out.push_str(k);
            out.push('\n');
        }
        if !self.keywords.is_empty() {
            out.push('\n');
        }
        for a in &self.anims {
            let name: String = a
                .name
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            out.push_str(&format!(
                "{}\t{}\t{}\t{}\t// {name}\n",
                a.first, a.last, a.looping, a.fps
            ));
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn warfork_line(values: [i32; 4]) -> String {
        format!("{} {} {} {}\n", values[0], values[1], values[2], values[3])
    }

    #[test]
    fn a_tagmask_of_three_numbers_takes_the_next_lines_tokens() {
        // The older layout's tagmask lines: the fourth number's call meets the newline, the
        // fifth and sixth read `tagmask "b"` of the next line, whose rest is read at the top:
        // `t2` and `-16` are not numbers, `5` is.
        let text = b"tagmask \"b\" \"t1\" -2 0 0 // c\ntagmask \"b\" \"t2\" -16 5\n";
        let read = read_as_warfork(text, &["B".to_owned()]);
        assert!(read.anims.is_empty());
        let mut with_anim = text.to_vec();
        with_anim.extend_from_slice(b"1 2 3\n");
        let read = read_as_warfork(&with_anim, &["B".to_owned()]);
        assert_eq!(read.anims.len(), 1);
        assert_eq!(read.anims[0].values, [5, 1, 2, 3]);
        assert_eq!(read.anims[0].lines, [2, 3, 3, 3]);
    }

    #[test]
    fn fps_lines_and_three_numbers_shift_every_anim() {
        let text = b"sex m\nFPS 24\n40 58 0 // BOTH_DEATH1\n58 58 0\n";
        let read = read_as_warfork(text, &[]);
        assert_eq!(read.anims[0].values, [24, 40, 58, 0]);
        assert_eq!(read.anims[0].lines, [2, 3, 3, 3]);
    }

    #[test]
    fn a_bad_sex_stops_the_reading() {
        let read = read_as_warfork(b"sex x\n1 2 3 4\n", &[]);
        assert!(read.anims.is_empty());
        assert_eq!(read.stopped.as_ref().unwrap().0, 1);
    }

    #[test]
    fn reading_stops_after_the_49th_anim() {
        let mut text = String::new();
        for k in 0..60 {
            text.push_str(&warfork_line([k, k, 0, 20]));
        }
        let read = read_as_warfork(text.as_bytes(), &[]);
        assert_eq!(read.anims.len(), REQUIRED_ANIMS);
        assert_eq!(read.anims[48].values[0], 48);
    }

    #[test]
    fn a_written_config_reads_back_as_warfork_reads_it() {
        let cfg = PlayerConfig {
            keywords: vec!["sex f".into(), "tagmask \"b\" \"t\" 1 2 3 0 0 0".into()],
            anims: (0..49)
                .map(|k| PlayerAnim {
                    name: WARFORK_ANIMS[k].to_owned(),
                    first: k as u32,
                    last: k as u32 + 2,
                    looping: 2,
                    fps: 15,
                })
                .collect(),
            notes: Vec::new(),
        };
        let read = read_as_warfork(cfg.to_text().as_bytes(), &["b".to_owned()]);
        assert!(read.stopped.is_none() && read.unknown_bones.is_empty());
        assert_eq!(read.anims.len(), 49);
        for (k, a) in read.anims.iter().enumerate() {
            assert_eq!(a.values, [k as i32, k as i32 + 2, 2, 15]);
            assert!(a.lines.iter().all(|&l| l == a.lines[0]));
        }
    }

    #[test]
    fn the_older_layout_is_put_in_warforks_order() {
        let mut text = String::from("sex m\nFPS 24\ntagmask \"b\" \"t\" -2 0 0\nalljumps\n");
        let mut k = 0;
        for (name, same, instead) in FROM_OLDER {
            let n = same.first().or(instead.first()).copied().unwrap_or(name);
            if text.contains(&format!("// {n}\n")) {
                continue;
            }
            text.push_str(&format!("{k} {} 0 // {n}\n", k + 1));
            k += 2;
        }
        let cfg = read_player_config(text.as_bytes()).unwrap();
        assert_eq!(cfg.anims.len(), 49);
        assert!(cfg.anims.iter().all(|a| a.fps == 24));
        assert_eq!(cfg.keywords[1], "tagmask \"b\" \"t\" -2 0 0 0 0 0");
        let names: Vec<&str> = cfg.anims.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, WARFORK_ANIMS);
        // Every TORSO_HOLD_* plays TORSO_STAND's frames.
        let stand = &cfg.anims[31];
        assert!(cfg.anims[31..36].iter().all(|a| a.first == stand.first));
        assert!(
            cfg.notes
                .iter()
                .any(|n| n.contains("LEGS_LAND <- LEGS_JUMP3ST"))
        );
    }

    #[test]
    fn the_older_layout_needs_names_and_a_rate() {
        assert!(read_player_config(b"1 2 0 // BOTH_DEATH1\n").is_err());
        let e = read_player_config(b"FPS 20\n1 2 0\n").unwrap_err();
        assert_eq!(e.line(), Some(2));
        let e = read_player_config(b"FPS 20\n1 2 0 4 5\n").unwrap_err();
        assert_eq!(e.line(), Some(2));
    }
}
