//! Writing an IQM that an engine loads, with the sidecars it reads beside it, checked against
//! the engine's rules ([`super::engines`]) before anything is handed back.
//!
//! - DarkPlaces and FTE: the file as the reference compiler writes it, and `NAME.iqm.framegroups`
//!   from the model's scenes (both engines read it for any model; it replaces the IQM's anims).
//! - qfusion and Warfork: the file's frames are the model's from frame 0, and a model of no
//!   other frame gets its bind pose as a one-frame anim, so that the file has the frames, anims
//!   and bounds their loader needs; 65535 vertices or more are refused. A player model gets its
//!   `animation.cfg`: the config the model came with ([`PlayerConfig`]) or one made from its
//!   scenes; a config given becomes the model's scenes, so that the IQM's anims are the ones
//!   Warfork plays.
//! - Any engine: a vertex of more than four bones keeps its strongest four (renormalised), as
//!   the engines keep them from a DPM; the notes say what was dropped.
//!
//! Whatever the written file would make the engine refuse is an error naming the rule, and
//! nothing is written.

use super::engines::{self, CheckOptions, Engine, Finding, Kind, Sidecar};
use super::player::PlayerConfig;
use super::write::{WriteOptions, write, written_frame_range};
use crate::animation::MAX_SCENE_NAME;
use crate::error::{Error, Result};
use crate::model::Model;

/// How [`write_for_engine`] writes.
#[derive(Clone, Copy, Debug, Default)]
pub struct EngineWrite<'a> {
    /// The engine the file is for; None: the reference compiler's file, with the
    /// `.framegroups` when `sidecars` asks.
    pub engine: Option<Engine>,
    /// The file is a player model (qfusion, Warfork): its `animation.cfg` is written.
    pub player: bool,
    /// The player config the model comes with (the `animation.cfg` beside its source): its
    /// anims become the model's scenes. None: a config is made from the scenes.
    pub player_config: Option<&'a PlayerConfig>,
    /// Write the sidecars even where the engine does not need them: `.framegroups` for
    /// DarkPlaces, FTE and no engine, `animation.cfg` for qfusion and Warfork.
    pub sidecars: bool,
}

/// What [`write_for_engine`] made.
#[derive(Clone, Debug, Default)]
pub struct EngineFiles {
    pub iqm: Vec<u8>,
    /// `NAME.iqm.framegroups` (DarkPlaces' syntax, which FTE reads too).
    pub framegroups: Option<String>,
    /// `animation.cfg` beside `tris.iqm`.
    pub animation_cfg: Option<String>,
    /// What was changed to fit the engine, for the output line.
    pub notes: Vec<String>,
    /// What the engine gets wrong in the written file (no refusals: those are errors).
    pub findings: Vec<Finding>,
}

/// The most vertices qfusion's and Warfork's loader takes, plus one.
const QF_VERTEX_LIMIT: usize = 65535;

/// Writes `model` as an IQM for `how.engine`, with its sidecars; see the module's introduction.
/// Errors: `Limit` for 65535 vertices or more for qfusion and Warfork, `Unsupported` for
/// anything else the engine would refuse in the written file; each names the rule.
pub fn write_for_engine(model: &Model, how: &EngineWrite) -> Result<EngineFiles> {
    let qf = matches!(how.engine, Some(Engine::Qfusion | Engine::Warfork));
    let mut notes = Vec::new();
    if qf {
        let vertices: usize = model.meshes().iter().map(|m| m.vertex_count()).sum();
        if vertices >= QF_VERTEX_LIMIT {
            return Err(Error::limit(format!(
                "qfusion.vertex_limit: the model has {vertices} vertices; qfusion's and \
                 Warfork's loader takes fewer than {QF_VERTEX_LIMIT} (\"has too many vertices\")"
            )));
        }
    }
    // An IQM vertex holds four bones: as the engines keep the strongest four of a DPM's.
    let capped;
    let mut model = model;
    if let Some(engine) = how.engine
        && model.info().max_influences > 4
    {
        let (m, report) = model.with_max_influences(4)?;
        notes.push(format!(
            "an IQM vertex holds 4 bones, the strongest kept as {} keeps them: {}",
            engine.title(),
            report.describe()
        ));
        capped = m;
        model = &capped;
    }
    let options = WriteOptions {
        keep_frame_zero: qf,
        anim_for_frames: qf,
    };
    let with_scenes;
    let player = qf && how.player;
    let config = match (player, how.player_config) {
        (true, Some(config)) => {
            let start = written_frame_range(model, &options).start;
            // Frames past the model's are clamped, as Warfork clamps them: the config written
            // says what plays.
            let mut config = config.clone();
            let last = model.frames().len().saturating_sub(start).saturating_sub(1) as u32;
            for a in &mut config.anims {
                if a.first > last || a.last > last {
                    notes.push(format!(
                        "{}: frames {} to {} clamped to {last}, the last of the model's",
                        a.name, a.first, a.last
                    ));
                    a.first = a.first.min(last);
                    a.last = a.last.clamp(a.first, last);
                    a.looping = a.looping.min(a.last.saturating_sub(a.first));
                }
            }
            let mut parts = model.to_parts();
            parts.animations = config.scenes(start, parts.frames.len());
            parts.events.clear();
            parts.keyframes.clear();
            with_scenes = Model::from_parts(parts)?;
            model = &with_scenes;
            notes.extend(config.notes.iter().cloned());
            notes.push(format!(
                "scenes: the {} anims of the player config",
                config.anims.len()
            ));
            Some(config)
        }
        (true, None) => {
            let start = written_frame_range(model, &options).start;
            Some(PlayerConfig::from_scenes(model, start))
        }
        (false, _) => None,
    };
    let frames = written_frame_range(model, &options);
    if qf && model.animations().iter().all(|a| a.frame_count == 0) && frames.len() == 1 {
        notes.push(
            "the bind pose written as a one-frame anim (qfusion needs frames and anims)".to_owned(),
        );
    }
    let iqm = write(model, &options)?;
    let framegroups = match how.engine {
        Some(Engine::DarkPlaces | Engine::Fte) | None if how.sidecars || how.engine.is_some() => {
            framegroups_text(model, frames.start)
        }
        _ => None,
    };
    let animation_cfg = match (&config, qf && how.sidecars) {
        (Some(c), _) => Some(c.to_text()),
        (None, true) => Some(PlayerConfig::from_scenes(model, frames.start).to_text()),
        (None, false) => None,
    };
    let mut findings = Vec::new();
    if let Some(engine) = how.engine {
        let check = CheckOptions {
            name: None,
            player,
            animation_cfg: match &animation_cfg {
                Some(text) => Sidecar::Bytes(text.as_bytes()),
                None => Sidecar::Missing,
            },
            format: crate::format::Format::Iqm,
        };
        findings = engines::check(&iqm, engine, &check)?;
        if let Some(f) = findings.iter().find(|f| f.kind == Kind::Refuses) {
            let hint = if f.rule.starts_with("warfork.animation_cfg") && how.player_config.is_none()
            {
                " (the config was made from the model's scenes: give the player's own, \
                 `--animation-cfg FILE`)"
            } else {
                ""
            };
            return Err(Error::unsupported(format!(
                "{}: the file written for {} would be refused: {f}{hint}",
                f.rule,
                engine.title()
            )));
        }
        findings.retain(|f| f.kind != Kind::Note || f.rule == "fte.unaligned");
    }
    Ok(EngineFiles {
        iqm,
        framegroups,
        animation_cfg,
        notes,
        findings,
    })
}

/// A scene name as a `.framegroups` token: as it is where it is one word, quoted where it has
/// spaces; None where neither reads back (a quote, a control character, a comment's start,
/// more than DarkPlaces keeps).
fn name_token(name: &str) -> Option<String> {
    if name.is_empty()
        || name.len() > MAX_SCENE_NAME
        || name.contains('"')
        || name.chars().any(char::is_control)
    {
        return None;
    }
    if name.contains(|c: char| c.is_ascii_whitespace()) {
        return Some(format!("\"{name}\""));
    }
    if name.starts_with("//") || name.starts_with("/*") {
        return None;
    }
    Some(name.to_owned())
}

/// The model's scenes as a `.framegroups` file in DarkPlaces' syntax (`first count fps loop
/// name`, one a line; FTE reads the same), the file's frame 0 being the model's frame
/// `first_file_frame`: what ossa, DarkPlaces and FTE read back as the same scenes. A name that
/// cannot be a token (see [`name_token`]) is left out of the line, and follows it as a comment.
/// None when the model has no scene of frames in the file.
pub fn framegroups_text(model: &Model, first_file_frame: usize) -> Option<String> {
    let mut out = String::new();
    for a in model.animations() {
        if a.frame_count == 0 || (a.first_frame as usize) < first_file_frame {
            continue;
        }
        let first = (a.first_frame as usize).saturating_sub(first_file_frame);
        let name = a.name.to_string_lossy();
        let looping = u8::from(a.looping);
        match name_token(&name) {
            Some(token) => out.push_str(&format!(
                "{first} {} {} {looping} {token}\n",
                a.frame_count, a.fps
            )),
            None => {
                let shown: String = name
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                out.push_str(&format!(
                    "{first} {} {} {looping} // {shown}\n",
                    a.frame_count, a.fps
                ));
            }
        }
    }
    (!out.is_empty()).then_some(out)
}
