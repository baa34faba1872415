//! The Sims 1 skills added to a skeleton that is already loaded.
//!
//! A skill (an animation) and the skeleton it plays on live in different files: the skeleton in
//! `adult-skeleton.cmx`, the skills in their own character files (`adult-idle1.cmx`,
//! `ross-walking-loop.cmx.bcf`), and each skill's numbers in `ANIMATION.cfp` beside its
//! character file (see [`sidecar`](crate::sidecar)). So a skill file is not loaded as a model of
//! its own but added to one: [`Model::with_skills`] reads every skill of the file, reads its CFP,
//! samples it on the model's skeleton ([`cmx::skill_frames`]) and gives a new model with the
//! frames appended after the model's own and one animation scene per skill.
//!
//! The input may be a skeleton or meshes bound to one: the bones stay the same, so bound meshes
//! keep their influences as they are. Frame 0 (the rest pose) is unchanged.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::cmx::{self, BoneNames, CharacterFile, Skill, SkillPlaces, SkillValues};
use crate::format::{Format, LoadOptions, ceiling, cfp, skill_bin};
use crate::io::{FileData, read_contained_at_most};
use crate::math::Mat3x4;
use crate::model::{Frame, Model};
use crate::sidecar::{NumbersKind, Sidecars, SkillNumbers, label, os_place};

impl Model {
    /// A new model: this skeleton (or these meshes bound to one) with every skill of the Sims
    /// character file `skill_file_bytes` (CMX text or BCF) added: each skill's frames appended
    /// after this model's frames, and one animation scene per skill (its name, first frame,
    /// frame count, rate and looping, as [`cmx::skill_frames`] gives them). A skill of a
    /// version-200 file (the 1998 prototype) without its CFP reads `ANIMATION.bin`
    /// ([`skill_bin`](crate::format::skill_bin)); with neither, its scene has no frames and a
    /// warning names both files.
    ///
    /// `options.name` names the file in messages; the skills' CFP files are read through
    /// `options.io` beside `options.name` (at the root of `options.io` without a name), so
    /// `options.io` is required. `options.format` is `Auto`, `SimsCmx` or `SimsBcf`; strict mode
    /// rejects what the default mode tolerates in the file.
    ///
    /// Errors: `Mismatch` when this model has no bones and frames of its own to play skills on
    /// (meshes waiting for [`Model::bind`]) or no motion of a skill names one of its bones;
    /// `InvalidArgument` for a file without skills, a CFP name that points outside the
    /// directory (never read), or no `options.io`; `NotFound` for a missing CFP, naming it;
    /// `Limit` when the frames, or the CFP values decoded for them, would take more than
    /// `options.max_bytes`. Each CFP is read once however many skills name it, and decoded once
    /// for each pair of counts (translations, rotations) skills ask of it: its bytes are held
    /// until the last skill naming it, its decoded values until the call ends, and while held
    /// both count against `options.max_bytes`. A problem of a skill itself is placed at the skill's line (or byte)
    /// in the file, one of a CFP at its byte in the CFP. Motions for bones this model lacks are
    /// skipped, as the game skips them, with a warning.
    pub fn with_skills(&self, skill_file_bytes: &[u8], options: &LoadOptions) -> Result<Model> {
        let name = options.name.as_deref();
        let fs = options.io.ok_or_else(|| {
            Error::invalid_argument(
                "skills from memory need the load options' io to read their CFP files through",
            )
        })?;
        let sidecars = Sidecars::beside(fs, name.unwrap_or_default())?;
        let file_label = name.filter(|n| !n.is_empty()).map(label);
        add_skills_from(self, skill_file_bytes, file_label, &sidecars, options)
    }

    /// [`Model::with_skills`] for the character file at `path`: read through `options.io` when
    /// given (the CFPs beside `path` there), else from the OS filesystem, the CFPs inside
    /// `options.base_dir` (default: the file's own directory), as [`Model::load_file`] reads
    /// sidecars. `options.name` (default: `path`) names the file in messages.
    pub fn with_skills_file(&self, path: impl AsRef<Path>, options: &LoadOptions) -> Result<Model> {
        let path = path.as_ref();
        let file_label = Some(match &options.name {
            Some(name) => label(name),
            None => label(&path.to_string_lossy()),
        });
        match options.io {
            Some(fs) => {
                let fs_path = path.to_string_lossy().replace('\\', "/");
                // The file is released once parsed, before its CFPs are read.
                let data =
                    read_contained_at_most(fs, &fs_path, ceiling(options.max_bytes, u64::MAX))?;
                let file_bytes = (*data).as_ref().len();
                let (file, places) = parse_skill_file((*data).as_ref(), options)
                    .map_err(|e| e.in_file_if(file_label.as_ref()))?;
                drop(data);
                let sidecars = Sidecars::beside(fs, &fs_path)?;
                add_skills(
                    self,
                    (&file, &places, file_bytes),
                    file_label.as_deref(),
                    &sidecars,
                    options,
                )
                .map_err(|e| e.in_file_if(file_label.as_ref()))
            }
            None => {
                let place = os_place(path, options.base_dir.as_deref())?;
                let data = place.read_file(ceiling(options.max_bytes, u64::MAX))?;
                add_skills_from(self, &data, file_label, &place.sidecars(), options)
            }
        }
    }
}

/// Parses the character file and adds its skills; errors name the file (a CFP's the CFP).
fn add_skills_from(
    model: &Model,
    data: &[u8],
    file_label: Option<Arc<str>>,
    sidecars: &Sidecars<'_>,
    options: &LoadOptions,
) -> Result<Model> {
    let added = parse_skill_file(data, options).and_then(|(file, places)| {
        add_skills(
            model,
            (&file, &places, data.len()),
            file_label.as_deref(),
            sidecars,
            options,
        )
    });
    added.map_err(|e| e.in_file_if(file_label.as_ref()))
}

/// What `validate` finds wrong with the skills of the character file `data` (of `format`, CMX
/// or BCF) beside their files (`sidecars`): each skill whose numbers are not there (its CFP;
/// for a version 200 file, its CFP or `.bin`), as `NotFound` naming the skill, the files and
/// `looked_in` (where `sidecars` reads, in words); and each whose animation name would leave the
/// directory. No file is read: one that is there is found by its size. Nothing for a file that
/// does not parse, which is a problem already.
pub(crate) fn missing_skill_numbers(
    data: &[u8],
    format: Format,
    strict: bool,
    sidecars: &Sidecars<'_>,
    looked_in: &str,
) -> Vec<Error> {
    let binary = match format {
        Format::SimsCmx => false,
        Format::SimsBcf => true,
        _ => return Vec::new(),
    };
    let Ok((file, places)) = cmx::parse_with_places(data, binary, strict) else {
        return Vec::new();
    };
    let prototype = file.version == Some(200);
    let mut problems = Vec::new();
    for (i, skill) in file.skills.iter().enumerate() {
        let paths = match sidecars.skill_numbers_paths(skill) {
            Ok(paths) => paths,
            Err(e) => {
                problems.push(places.put(i, e));
                continue;
            }
        };
        match sidecars.read_skill_numbers(&paths, prototype, 0) {
            // A file larger than no bytes is there.
            Ok(SkillNumbers::Found(..)) => {}
            Err(e) if e.code() == crate::ErrorCode::Limit => {}
            Err(e) => problems.push(e),
            Ok(SkillNumbers::Missing) => problems.push(Error::not_found(if prototype {
                format!(
                    "skill {}: neither {} nor {} exists in {looked_in}: the skill has no frames",
                    skill.name, paths.cfp, paths.bin
                )
            } else {
                format!(
                    "skill {}: its animation file {} does not exist in {looked_in}",
                    skill.name, paths.cfp
                )
            })),
        }
    }
    problems
}

fn parse_skill_file(data: &[u8], options: &LoadOptions) -> Result<(CharacterFile, SkillPlaces)> {
    let binary = match options.format {
        Format::Auto => !cmx::is_text(data),
        Format::SimsCmx => false,
        Format::SimsBcf => true,
        other => {
            return Err(Error::invalid_argument(format!(
                "skills come from Sims CMX or BCF files, not {}",
                other.name()
            )));
        }
    };
    cmx::parse_with_places(data, binary, options.strict)
}

/// The bones motions of `skill` would move that the skeleton of `names` lacks (matched as the
/// sampler matches them: ignoring ASCII case).
fn missing_bones(names: &BoneNames<'_>, skill: &Skill) -> Vec<String> {
    skill
        .motions
        .iter()
        .filter(|m| (m.has_translation || m.has_rotation) && m.frame_count > 0)
        .filter(|m| names.find(&m.bone).is_none())
        .map(|m| m.bone.to_string())
        .collect()
}

/// A CFP some skills name: its bytes while a skill still to come reads them.
struct HeldCfp<'a> {
    /// The last skill (index in the file) that names this CFP.
    last_reader: usize,
    data: Option<(NumbersKind, FileData<'a>)>,
}

fn add_skills(
    model: &Model,
    (file, places, file_bytes): (&CharacterFile, &SkillPlaces, usize),
    file_label: Option<&str>,
    sidecars: &Sidecars<'_>,
    options: &LoadOptions,
) -> Result<Model> {
    let in_file = |text: String| match file_label {
        Some(l) => format!("{l}: {text}"),
        None => text,
    };
    if model.unbound().is_some() || model.bones().is_empty() || model.frames().is_empty() {
        return Err(Error::mismatch(format!(
            "the {} model has no skeleton to add skills to{}",
            model.format().name(),
            if model.unbound().is_some() {
                " (its meshes wait for ossa_model_bind)"
            } else {
                ""
            }
        )));
    }
    if file.skills.is_empty() {
        return Err(Error::invalid_argument(format!(
            "the file holds no skills ({} skeletons, {} suits)",
            file.skeletons.len(),
            file.suits.len()
        )));
    }
    // Every path is checked before any is read: a hostile name reads nothing.
    let paths = (file.skills.iter().enumerate())
        .map(|(i, s)| {
            sidecars
                .skill_numbers_paths(s)
                .map_err(|e| places.put(i, e))
        })
        .collect::<Result<Vec<_>>>()?;

    let names = BoneNames::new(model);
    let mut parts = model.to_parts();
    let mut warnings: Vec<String> = model
        .warnings()
        .iter()
        .map(|w| w.to_string_lossy())
        .collect();
    warnings.extend(file.warnings.iter().map(|w| in_file(w.clone())));
    let frame_bytes =
        // Sizes of slices in memory: each below isize::MAX, so their sum fits u64.
        |frames: &[Frame], poses: &[Mat3x4]| (size_of_val(frames) as u64).saturating_add(size_of_val(poses) as u64);
    let mut used = model.heap_bytes() as u64;
    // Without a caller's ceiling the model may grow with its inputs: the skeleton (as loaded),
    // the skill file and the CFPs read so far.
    let mut input_bytes = model.heap_bytes().saturating_add(file_bytes);
    // Many skills may name one CFP: each is read once, held until the last skill naming it, and
    // decoded once for each pair of counts skills ask of it. Else the work is the skills times
    // the CFP's size, and repeat codes make a CFP's values many more than its bytes.
    let mut cfps: HashMap<&str, HeldCfp<'_>> = HashMap::new();
    for (i, path) in paths.iter().enumerate() {
        cfps.entry(path.cfp.as_str())
            .or_insert(HeldCfp {
                last_reader: i,
                data: None,
            })
            .last_reader = i;
    }
    // Decoded values stay until the call ends, counted: so decoding one CFP for many different
    // counts (or many CFPs of a few bytes of repeat codes) takes no more work than the limit
    // has room for.
    let mut decoded: HashMap<(&str, u32, u32), Rc<SkillValues>> = HashMap::new();
    // What the CFPs and decoded values held take, counted against the limit with `used`.
    let mut held = 0u64;
    // The 1998 prototype's skills keep their numbers in a `.bin` where retail ones have a CFP.
    let prototype = file.version == Some(200);
    for (i, (skill, paths)) in file.skills.iter().zip(&paths).enumerate() {
        let cfp = cfps.entry(paths.cfp.as_str()).or_insert(HeldCfp {
            last_reader: i,
            data: None,
        });
        if cfp.data.is_none() {
            // The file takes its room from the limit (without a caller's limit, from the most
            // the limit can grow to), and is not read when it is larger.
            let room = ceiling(options.max_bytes, u64::MAX)
                .saturating_sub(used)
                .saturating_sub(held);
            let found = sidecars
                .read_skill_numbers(paths, prototype, room)
                .map_err(|e| places.put(i, e))?;
            let SkillNumbers::Found(kind, data) = found else {
                // The 1998 prototype's archive lacks the numbers of most of its skills: such a
                // skill keeps its scene, travel and events, without frames. A retail skill
                // without its CFP is a broken install.
                if !prototype {
                    return Err(places.put(
                        i,
                        Error::not_found(format!(
                            "skill {}: its animation file {} does not exist",
                            skill.name, paths.cfp
                        )),
                    ));
                }
                warnings.push(in_file(format!(
                    "skill {}: neither {} nor {} exists: the skill has no frames",
                    skill.name, paths.cfp, paths.bin
                )));
                let first = u32::try_from(parts.frames.len())
                    .map_err(|_| Error::limit("more than 2^32 frames"))?;
                let scene = u32::try_from(parts.animations.len())
                    .map_err(|_| Error::limit("more than 2^32 animations"))?;
                let events = cmx::skill_events(&names, skill, scene);
                used = used.saturating_add(size_of_val(events.as_slice()) as u64);
                parts.events.extend(events);
                parts.animations.push(skill.frameless_scene(first));
                continue;
            };
            let bytes = (*data).as_ref().len();
            input_bytes = input_bytes.saturating_add(bytes);
            held = held.saturating_add(bytes as u64);
            cfp.data = Some((kind, data));
        }
        let (kind, data) = cfp
            .data
            .as_ref()
            .map_or((NumbersKind::Cfp, &[][..]), |(k, d)| (*k, (**d).as_ref()));
        let path = match kind {
            NumbersKind::Cfp => &paths.cfp,
            NumbersKind::Bin => &paths.bin,
        };
        let max_bytes = options.max_bytes_for(input_bytes);
        let budget = max_bytes.saturating_sub(used).saturating_sub(held);
        let key = (path.as_str(), skill.translation_count, skill.rotation_count);
        let known = decoded.get(&key).cloned();
        let values_held = known.is_some();
        let mut fresh = None;
        let sampled = skill.sample(&names, budget, values_held, || {
            if let Some(values) = known {
                return Ok(values);
            }
            let values = match kind {
                NumbersKind::Cfp => cfp::decode_skill(
                    data,
                    skill.translation_count as usize,
                    skill.rotation_count as usize,
                ),
                NumbersKind::Bin => {
                    skill_bin::decode_skill(data, skill.translation_count, skill.rotation_count)
                }
            };
            let values = Rc::new(values.map_err(|e| {
                e.within(format!("skill {}", skill.name))
                    .in_file(&label(path))
            })?);
            fresh = Some(Rc::clone(&values));
            Ok(values)
        });
        // A problem of the skill itself (not of its CFP) is placed at the skill in the file.
        let (frames, poses, mut animation) = sampled.map_err(|e| places.put(i, e))?;
        if let Some(values) = fresh {
            // Sizes of slices in memory: each below isize::MAX, so their sum fits u64.
            let value_bytes = (size_of_val(values.0.as_slice()) as u64)
                .saturating_add(size_of_val(values.1.as_slice()) as u64);
            held = held.saturating_add(value_bytes);
            decoded.insert(key, values);
        }
        if cfp.last_reader == i
            && let Some((_, data)) = cfp.data.take()
        {
            held = held.saturating_sub((*data).as_ref().len() as u64);
        }
        let scene = u32::try_from(parts.animations.len())
            .map_err(|_| Error::limit("more than 2^32 animations"))?;
        let events = cmx::skill_events(&names, skill, scene);
        used = used.saturating_add(frame_bytes(&frames, &poses));
        used = used.saturating_add(size_of_val(events.as_slice()) as u64);
        if used.saturating_add(held) > max_bytes {
            let held = if held > 0 {
                format!(" and the CFP data held for the skills {held} more")
            } else {
                String::new()
            };
            return Err(places.put(i, Error::limit(format!(
                "skill {}: the model with its frames needs {used} bytes{held}, more than the limit of {max_bytes} bytes",
                skill.name,
            ))));
        }
        animation.first_frame =
            u32::try_from(parts.frames.len()).map_err(|_| Error::limit("more than 2^32 frames"))?;
        parts.events.extend(events);
        parts.frames.extend(frames);
        parts.poses.extend(poses);
        parts.animations.push(animation);
        let missing = missing_bones(&names, skill);
        if !missing.is_empty() {
            warnings.push(in_file(format!(
                "skill {}: motions for bones the skeleton lacks were skipped: {}",
                skill.name,
                missing.join(", ")
            )));
        }
    }
    parts.warnings = warnings;
    Model::from_parts(parts)
}
