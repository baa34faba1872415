//! A skill played on a skeleton: its motions sampled into frames of parent-relative poses.
//!
//! Time: a skill's `N` frames (its motions' frame count) spread evenly over its duration, frame
//! `i` at `i * duration / N` ms, so it plays at `N * 1000 / duration` frames a second. That is how
//! the original playback maps time to frames (VitaMoo's `Practice`: frame = frames x elapsed
//! fraction), and it puts the retail skills at 29.9 to 30.3 fps (ts1-blender-io imports at 30,
//! 33.3 ms a frame). A motion with fewer frames than the skill is stretched over the same
//! duration and interpolated: translations linearly, rotations by slerp of hemisphere-aligned
//! quaternions; past its last frame it holds.
//!
//! Poses: a motion replaces its bone's translation, rotation or both; what it leaves alone, and
//! every bone no motion names, keeps the rest pose. Skill rotations use the rest pose's
//! convention, `T(t) * R(q)^T` (FORMATS §4.3; VitaMoo negates w of every CFP rotation, the same
//! transpose); on the corpus a walk cycle then keeps the lowest point of the feet within 0.1 of
//! the floor on every frame, where the textbook `R(q)` lifts them above 2.

use std::borrow::Borrow;

use glam::Quat;

use super::{CharacterFile, Skill, local_pose, normalised, run_fits};
use crate::error::{Error, Result};
use crate::format::{LoadOptions, cfp, try_vec};
use crate::math::Mat3x4;
use crate::model::{Animation, AnimationEvent, Bone, Frame, Model, Name};
use crate::name_index::NameIndex;

/// The rate of a skill without a usable duration: the game's 33.3 ms frame.
const DEFAULT_FPS: f32 = 30.0;

/// One bone's motion, checked against the skill's values.
struct Track {
    bone: usize,
    frames: usize,
    translations: Option<usize>,
    rotations: Option<usize>,
}

/// A skeleton's bones as motions name them: exactly, else ignoring ASCII case (as FreeSO
/// matches names). Built once for all the motions of a file: a scan of the bones per motion is
/// quadratic in a skill of 20,000 motions on a skeleton of 65,535 bones.
pub(crate) struct BoneNames<'a> {
    model: &'a Model,
    folded: NameIndex,
}

impl<'a> BoneNames<'a> {
    pub fn new(model: &'a Model) -> BoneNames<'a> {
        let bones = model.bones();
        let folded = NameIndex::build_ignoring_case(bones.len(), |i| bone_name(bones, i));
        BoneNames { model, folded }
    }

    pub fn model(&self) -> &'a Model {
        self.model
    }

    /// The bone `name` names: the first with exactly that name, else the first with that name
    /// ignoring ASCII case.
    pub fn find(&self, name: &Name) -> Option<usize> {
        let bones = self.model.bones();
        self.model
            .find_bone(name.as_bytes())
            .or_else(|| self.folded.find(name.as_bytes(), |i| bone_name(bones, i)))
            .map(|b| b as usize)
    }
}

fn bone_name(bones: &[Bone], i: usize) -> &[u8] {
    bones.get(i).map_or(&[], |b| b.name.as_bytes())
}

fn tracks(names: &BoneNames<'_>, skill: &Skill) -> Result<(Vec<Track>, usize)> {
    let mut tracks = Vec::new();
    let mut frame_count = 0usize;
    for (m, motion) in skill.motions.iter().enumerate() {
        let what = || format!("skill {} motion {m} ({})", skill.name, motion.bone);
        let frames = motion.frame_count;
        if motion.has_translation
            && !run_fits(motion.translation_offset, frames, skill.translation_count)
        {
            return Err(Error::malformed(format!(
                "{}: translations {}+{frames} do not fit the skill's {}",
                what(),
                motion.translation_offset,
                skill.translation_count
            )));
        }
        if motion.has_rotation && !run_fits(motion.rotation_offset, frames, skill.rotation_count) {
            return Err(Error::malformed(format!(
                "{}: rotations {}+{frames} do not fit the skill's {}",
                what(),
                motion.rotation_offset,
                skill.rotation_count
            )));
        }
        if !(motion.has_translation || motion.has_rotation) || frames == 0 {
            continue;
        }
        // Bounded by the value counts, which the CFP's length bounds once decoded.
        frame_count = frame_count.max(frames as usize);
        // Motions for bones the skeleton lacks are skipped, as the game and the tools do.
        let Some(bone) = names.find(&motion.bone) else {
            continue;
        };
        tracks.push(Track {
            bone,
            frames: frames as usize,
            translations: motion
                .has_translation
                .then_some(motion.translation_offset as usize),
            rotations: motion
                .has_rotation
                .then_some(motion.rotation_offset as usize),
        });
    }
    Ok((tracks, frame_count))
}

/// The frames of skill `skill` of `character` played on `skeleton` (a model loaded from a CMX or
/// BCF skeleton), reading its values from `cfp`: the frames, their poses (frame-major, one per
/// bone of `skeleton`) and the scene. The scene's first frame is the index the frames get when
/// appended after the skeleton's own frames, as [`with_skill`] does.
pub fn skill_frames(
    skeleton: &Model,
    character: &CharacterFile,
    skill: usize,
    cfp: &[u8],
) -> Result<(Vec<Frame>, Vec<Mat3x4>, Animation)> {
    let s = character.skills.get(skill).ok_or_else(|| {
        Error::invalid_argument(format!(
            "skill {skill} out of range (the file has {} skills)",
            character.skills.len()
        ))
    })?;
    let max_bytes = LoadOptions::default().max_bytes_for(cfp.len());
    sample(&BoneNames::new(skeleton), s, max_bytes, false, || {
        cfp::decode_skill(cfp, s.translation_count as usize, s.rotation_count as usize)
            .map_err(|e| e.within(format!("CFP {} of skill {}", s.animation, s.name)))
    })
}

/// A skill's translations and rotations, as [`cfp::decode_skill`] gives them.
pub(crate) type SkillValues = (Vec<[f32; 3]>, Vec<[f32; 4]>);

impl Skill {
    /// [`skill_frames`] for this skill on the skeleton of `names`, with the CFP's values from
    /// `values`, which is called only once the skill is known to fit the skeleton and
    /// `max_bytes`: the most its poses and, unless `values_held` (decoded already, for another
    /// skill, and counted where they are held), the values decoded for them may take.
    pub(crate) fn sample<V: Borrow<SkillValues>>(
        &self,
        names: &BoneNames<'_>,
        max_bytes: u64,
        values_held: bool,
        values: impl FnOnce() -> Result<V>,
    ) -> Result<(Vec<Frame>, Vec<Mat3x4>, Animation)> {
        sample(names, self, max_bytes, values_held, values)
    }
}

/// What one decoded CFP value costs in memory: as a stream, then in its group.
const BYTES_PER_VALUE: u64 = 2 * std::mem::size_of::<f32>() as u64;

fn sample<V: Borrow<SkillValues>>(
    names: &BoneNames<'_>,
    s: &Skill,
    max_bytes: u64,
    values_held: bool,
    values: impl FnOnce() -> Result<V>,
) -> Result<(Vec<Frame>, Vec<Mat3x4>, Animation)> {
    let skeleton = names.model();
    let rest = skeleton
        .skeleton()
        .frame_poses(0)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| {
            Error::mismatch(format!(
                "the {} model has no skeleton to play skill {} on",
                skeleton.format().name(),
                s.name
            ))
        })?;
    let (tracks, frame_count) = tracks(names, s)?;
    if frame_count == 0 {
        return Err(Error::malformed(format!(
            "skill {} has no motion with frames of translations or rotations",
            s.name
        )));
    }
    if tracks.is_empty() {
        return Err(Error::mismatch(format!(
            "no motion of skill {} names a bone of the skeleton",
            s.name
        )));
    }
    let nb = rest.len();
    let pose_bytes = (frame_count as u64)
        .saturating_mul(nb as u64)
        .saturating_mul(std::mem::size_of::<Mat3x4>() as u64);
    // The CFP's values are decoded whole, as a stream and then by group, before any frame is
    // made; they count too, since a skill may declare far more values than its motions read
    // (a few bytes of repeat codes give them).
    let value_bytes = if values_held {
        0
    } else {
        s.value_count().saturating_mul(BYTES_PER_VALUE)
    };
    let need = pose_bytes.saturating_add(value_bytes);
    if need > max_bytes {
        let values = if values_held {
            String::new()
        } else {
            format!(" and {} values", s.value_count())
        };
        return Err(Error::limit(format!(
            "skill {}: {frame_count} frames of {nb} bones{values} need {need} bytes, more than {max_bytes}",
            s.name,
        )));
    }
    let values = values()?;
    let (translations, rotations) = values.borrow();
    let unit = |index: usize| -> Result<Quat> {
        let q = rotations
            .get(index)
            .copied()
            .unwrap_or([0.0, 0.0, 0.0, 1.0]);
        normalised(q).map(Quat::from_array).ok_or_else(|| {
            Error::malformed(format!(
                "skill {}: rotation {index} {q:?} has no length",
                s.name
            ))
        })
    };

    // A capacity only: the sampling budget has bounded frames times bones.
    let mut poses = try_vec(frame_count.saturating_mul(nb), || {
        format!("skill {}: {frame_count} frames of {nb} bones", s.name)
    })?;
    for i in 0..frame_count {
        let base = poses.len();
        poses.extend_from_slice(&rest);
        for t in &tracks {
            // Where frame i falls in this motion's own frames.
            let (k0, k1, f) = if t.frames == frame_count {
                (i, i, 0.0f32)
            } else {
                let u = i as f64 * t.frames as f64 / frame_count as f64;
                let last = t.frames.saturating_sub(1);
                let k0 = (u.floor() as usize).min(last);
                (k0, k0.saturating_add(1).min(last), (u - k0 as f64) as f32)
            };
            // Indices past the end saturate and find nothing, as an index past the end does.
            let Some(pose) = poses.get_mut(base.saturating_add(t.bone)) else {
                continue;
            };
            let translation = match t.translations {
                Some(o) => {
                    let a: [f32; 3] = translations
                        .get(o.saturating_add(k0))
                        .copied()
                        .unwrap_or_default();
                    let b: [f32; 3] = translations
                        .get(o.saturating_add(k1))
                        .copied()
                        .unwrap_or_default();
                    let mut lerp = a;
                    for ((l, a), b) in lerp.iter_mut().zip(a).zip(b) {
                        *l = a + (b - a) * f;
                    }
                    lerp
                }
                None => pose.translation(),
            };
            match t.rotations {
                Some(o) => {
                    let a = unit(o.saturating_add(k0))?;
                    let mut b = unit(o.saturating_add(k1))?;
                    if a.dot(b) < 0.0 {
                        b = Quat::from_array(b.to_array().map(|c| -c));
                    }
                    let q = if f == 0.0 {
                        a
                    } else {
                        a.slerp(b, f).normalize()
                    };
                    *pose = local_pose(translation, q.to_array());
                }
                None => {
                    pose.m[3] = translation[0];
                    pose.m[7] = translation[1];
                    pose.m[11] = translation[2];
                }
            }
        }
    }
    let frames = (0..frame_count)
        .map(|i| Frame::named(&format!("{} {i}", s.name)))
        .collect();
    let mut animation = scene(s, frame_count);
    animation.first_frame = u32::try_from(skeleton.frames().len()).unwrap_or(u32::MAX);
    Ok((frames, poses, animation))
}

impl Skill {
    /// The scene of this skill when its numbers are missing: its name, travel and looping, and
    /// no frames (at `first_frame`, where frames added after it would start).
    pub(crate) fn frameless_scene(&self, first_frame: u32) -> Animation {
        let mut animation = scene(self, 0);
        animation.first_frame = first_frame;
        animation
    }
}

/// The scene of skill `s` sampled to `frame_count` frames, starting at frame 0.
fn scene(s: &Skill, frame_count: usize) -> Animation {
    let fps = if s.duration.is_finite() && s.duration > 0.0 {
        (frame_count as f64 * 1000.0 / s.duration as f64) as f32
    } else {
        DEFAULT_FPS
    };
    Animation {
        name: s.name.clone(),
        first_frame: 0,
        frame_count: u32::try_from(frame_count).unwrap_or(u32::MAX),
        fps: if fps.is_finite() && fps > 0.0 {
            fps
        } else {
            DEFAULT_FPS
        },
        // Nothing in the files says whether a skill loops (the game's scripts decide); Maxis
        // names every looping skill `...loop`.
        looping: s
            .name
            .to_string_lossy()
            .to_ascii_lowercase()
            .contains("loop"),
        distance: s.distance,
        moving: s.moving,
    }
}

/// The events of skill `s`, its motions' time properties, as events of scene `animation` played
/// on the skeleton of `names`: one per property, at its time (ms in the file) in seconds, on the
/// motion's bone (-1 where the skeleton lacks it: the event still happens), in file order.
pub(crate) fn skill_events(
    names: &BoneNames<'_>,
    s: &Skill,
    animation: u32,
) -> Vec<AnimationEvent> {
    let mut events = Vec::new();
    for motion in &s.motions {
        let bone = names
            .find(&motion.bone)
            .and_then(|b| i32::try_from(b).ok())
            .unwrap_or(-1);
        for entry in motion.time_property_lists.iter().flatten() {
            for p in &entry.properties {
                events.push(AnimationEvent {
                    animation,
                    time: (f64::from(entry.time) / 1000.0) as f32,
                    bone,
                    key: p.key.clone(),
                    value: p.value.clone(),
                });
            }
        }
    }
    events
}

/// A new model: `skeleton` with the frames and scene of a skill appended after its own frames.
pub fn with_skill(
    skeleton: &Model,
    character: &CharacterFile,
    skill: usize,
    cfp: &[u8],
) -> Result<Model> {
    let (frames, poses, animation) = skill_frames(skeleton, character, skill, cfp)?;
    let mut parts = skeleton.to_parts();
    let scene = u32::try_from(parts.animations.len()).unwrap_or(u32::MAX);
    if let Some(s) = character.skills.get(skill) {
        parts
            .events
            .extend(skill_events(&BoneNames::new(skeleton), s, scene));
    }
    parts.frames.extend(frames);
    parts.poses.extend(poses);
    parts.animations.push(animation);
    Model::from_parts(parts)
}
