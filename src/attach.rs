//! Animations kept in a file of their own, played on a model's skeleton: an animation-only IQM
//! (Red Eclipse's and Tesseract's `iqmanim` files, raylib's `guyanim.iqm`, DarkPlaces' separate
//! anim files) or any other animated model whose bones match.
//!
//! Bones are matched by name where both files name them, and by index where the animations'
//! file does not (an animation-only IQM has poses, not joints): pose `k` moves bone `k`, as Red
//! Eclipse's `loadiqmanims` and the SDK demo bind them. A bone the animations do not move keeps
//! its rest pose in their frames.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use crate::error::{Error, Result};
use crate::math::Mat3x4;
use crate::model::{Animation, AnimationEvent, Model};

/// Frames a model may reach by adding animations, as a glTF's or DMF's sampling may.
const MAX_FRAMES: usize = 65536;

impl Model {
    /// A new model: this one with the frames and scenes of `animations` added after its own,
    /// their events too. `animations`' frame 0 is its rest pose (or, in an animation-only IQM,
    /// its first frame standing in for one) and is not added unless one of its scenes plays it;
    /// without scenes, its frames after the first become one scene, `animations`. Neither model
    /// changes.
    ///
    /// `Mismatch` when this model waits for a skeleton, when `animations` has no frames to add,
    /// when no bone of this model is moved by it, or when its unnamed bones outnumber this
    /// model's.
    pub fn with_animations(&self, animations: &Model) -> Result<Model> {
        if self.unbound().is_some() {
            return Err(Error::mismatch(
                "the model's meshes wait for a skeleton: bind them to one before adding animations",
            ));
        }
        let nb = self.bones().len();
        let source = animations.skeleton();
        let named = source.bones().iter().any(|b| !b.name.is_empty());
        let mut warnings = Vec::new();
        // For each bone of this model, the animations' bone that moves it.
        let mapping: Vec<Option<usize>> = if named {
            self.bones()
                .iter()
                .map(|b| animations.find_bone(b.name.as_bytes()).map(|i| i as usize))
                .collect()
        } else {
            if source.bones().len() > nb {
                return Err(Error::mismatch(format!(
                    "the animations move {} unnamed bones, the model has {nb}: they are bound by \
                     index",
                    source.bones().len()
                )));
            }
            (0..nb)
                .map(|k| (k < source.bones().len()).then_some(k))
                .collect()
        };
        let moved = mapping.iter().flatten().count();
        if moved == 0 {
            return Err(Error::mismatch(
                "no bone of the model is moved by the animations: their bones' names are none of \
                 the model's",
            ));
        }
        if moved < nb {
            warnings.push(format!(
                "the animations move {moved} of the model's {nb} bones; the others keep their \
                 rest pose"
            ));
        }
        let parents_differ = mapping
            .iter()
            .zip(self.bones())
            .filter_map(|(m, b)| Some((source.bones().get((*m)?)?, b)))
            .filter(|(s, b)| {
                let source_parent = usize::try_from(s.parent).ok();
                let parent = usize::try_from(b.parent).ok();
                let mapped = parent.and_then(|p| mapping.get(p).copied().flatten());
                source_parent != mapped
            })
            .count();
        if parents_differ > 0 {
            warnings.push(format!(
                "{parents_differ} bones have another parent in the animations' file; the model's \
                 hierarchy is kept"
            ));
        }

        // The frames to add: from 1 unless a scene plays frame 0 (a DPM's frames).
        let frames = source.frames();
        let scenes = source.animations();
        let start = usize::from(
            !scenes
                .iter()
                .any(|s| s.first_frame == 0 && s.frame_count > 0),
        );
        let added = frames.len().saturating_sub(start);
        if added == 0 {
            return Err(Error::mismatch(
                "the animations' file has no frames to add (only its rest pose)",
            ));
        }
        let total = self.frames().len().saturating_add(added);
        if total > MAX_FRAMES {
            return Err(Error::limit(format!(
                "{total} frames with the animations added, more than {MAX_FRAMES}"
            )));
        }

        let mut parts = self.to_parts();
        let first = parts.frames.len();
        let rest = self
            .skeleton()
            .frame_poses(0)
            .map(|p| p.into_owned())
            .unwrap_or_else(|| vec![Mat3x4::IDENTITY; nb]);
        let mut theirs = vec![Mat3x4::IDENTITY; source.bones().len()];
        let mut poses = Vec::with_capacity(added.saturating_mul(nb));
        for f in start..frames.len() {
            if !source.write_frame_poses(f, &mut theirs) {
                return Err(Error::mismatch(format!(
                    "the animations' frame {f} has no poses"
                )));
            }
            for (k, m) in mapping.iter().enumerate() {
                let pose = m.and_then(|m| theirs.get(m)).or_else(|| rest.get(k));
                poses.push(pose.copied().unwrap_or(Mat3x4::IDENTITY));
            }
        }
        parts.poses.extend(poses);
        parts.frames.extend(frames.iter().skip(start).cloned());

        let shift = |f: u32| (f as usize).saturating_sub(start).saturating_add(first) as u32;
        let scene_base = parts.animations.len() as u32;
        if scenes.is_empty() {
            parts.animations.push(Animation {
                name: "animations".into(),
                first_frame: first as u32,
                frame_count: added as u32,
                fps: 10.0,
                looping: true,
                ..Animation::default()
            });
        } else {
            parts.animations.extend(scenes.iter().map(|s| Animation {
                first_frame: shift(s.first_frame),
                ..s.clone()
            }));
        }
        parts.events.extend(source.events().iter().map(|e| {
            AnimationEvent {
                animation: e.animation.saturating_add(scene_base),
                // Bones are this model's now: an event on a bone follows the mapping.
                bone: usize::try_from(e.bone)
                    .ok()
                    .and_then(|b| mapping.iter().position(|m| *m == Some(b)))
                    .map_or(-1, |k| k as i32),
                ..e.clone()
            }
        }));
        parts.warnings = self.warnings().iter().map(|w| w.to_string()).collect();
        parts.warnings.extend(warnings);
        Model::from_parts(parts)
    }
}
