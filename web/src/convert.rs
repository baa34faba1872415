//! Saving as `ossa convert` saves: the options that change what the model holds first
//! (influences capped, MM2's rest pose baked), then the savers' optimisations for the formats
//! whose specifications ask for them, unless `keepOrder`.

use ossa::optimize::{OPTIMIZE_ALL, OPTIMIZE_SKIN_ORDER, OptimizeReport};
use ossa::{Error, Format, Model};

use crate::session::SaveSettings;

/// The formats whose savers optimise: bones no vertex uses removed, triangles ordered for the
/// vertex cache, vertices and bones numbered by first use.
fn optimized_target(format: Format) -> bool {
    matches!(
        format,
        Format::Dpm
            | Format::Skm
            | Format::Skp
            | Format::Dmf
            | Format::DmfJson
            | Format::Mm2Skel
            | Format::Mm2Mod
    )
}

/// `model` saved as `target`, and what changed on the way, in `ossa convert`'s words.
pub fn save(
    model: &Model,
    target: Format,
    settings: &SaveSettings,
) -> Result<(Vec<u8>, Vec<String>), Error> {
    let optimized = optimized_target(target);
    // The savers' optimisations take the skin order with their other orders (after them).
    let optimizes = optimized && !settings.keep_order;
    if !optimized && target != Format::Iqm && settings.max_influences > 0 {
        return Err(Error::invalid_argument(format!(
            "maxInfluences is for glTF, DPM, SKM, SKP, DMF, MM2 and IQM output, not {}",
            target.name()
        )));
    }
    if !optimized && settings.keep_order {
        return Err(Error::invalid_argument(format!(
            "keepOrder is for DPM, SKM, SKP, DMF and MM2 output, which are optimised otherwise; \
             {} is written in the model's order",
            target.name()
        )));
    }
    let mut changes = Vec::new();
    // The model as each step leaves it (the caller's until one changes it).
    let mut changed: Option<Model> = None;
    if settings.skin_order && !optimizes {
        let (ordered, report) = changed
            .as_ref()
            .unwrap_or(model)
            .optimized(OPTIMIZE_SKIN_ORDER)?;
        changes.push(format!(
            "skin order: {} vertices renumbered",
            report.vertices_moved
        ));
        changed = Some(ordered);
    }
    if settings.max_influences > 0 {
        let (capped, report) =
            (changed.as_ref().unwrap_or(model)).with_max_influences(settings.max_influences)?;
        if report.vertices > 0 {
            changes.push(report.describe());
        }
        changed = Some(capped);
    }
    if settings.bake_scale {
        let (baked, report) = ossa::mm2::bake_rest_pose(changed.as_ref().unwrap_or(model))?;
        if report.bones > 0 {
            let bones = if report.bones == 1 { "bone" } else { "bones" };
            changes.push(format!(
                "rest pose baked: {} {bones} rotated or scaled at rest, now offsets (the \
                 skinned mesh is unchanged)",
                report.bones
            ));
        }
        changed = Some(baked);
    }
    let model = changed.as_ref().unwrap_or(model);
    let frames = model.frames().len();
    if target == Format::Mm2Skel && frames > 1 {
        let more = frames - 1;
        let noun = if more == 1 { "frame" } else { "frames" };
        changes.push(format!(
            "{more} {noun} after the first not written (a .skel holds the rest pose)"
        ));
    }
    if !optimizes {
        return Ok((model.save(target)?, changes));
    }
    let model = tags_as_attachments(model)?;
    let skin = if settings.skin_order {
        OPTIMIZE_SKIN_ORDER
    } else {
        0
    };
    let (optimized, report) = model.optimized(OPTIMIZE_ALL | skin)?;
    match optimized.save(target) {
        Ok(bytes) => {
            changes.extend(describe_optimized(&report, target));
            Ok((bytes, changes))
        }
        // What does not fit is named in the input's numbering, which the model before
        // optimising has.
        Err(e) => Err(model.save(target).err().unwrap_or(e)),
    }
}

/// The model with every bone named `tag_...` flagged as an attachment, so that removing unused
/// bones keeps it: games find attachment points by name.
fn tags_as_attachments(model: &Model) -> Result<Model, Error> {
    let is_tag = |b: &ossa::Bone| {
        b.flags & ossa::BONE_ATTACHMENT == 0
            && b.name.as_bytes().len() > 4
            && b.name.as_bytes()[..4].eq_ignore_ascii_case(b"tag_")
    };
    let mut parts = model.to_parts();
    for bone in &mut parts.bones {
        if is_tag(bone) {
            bone.flags |= ossa::BONE_ATTACHMENT;
        }
    }
    Model::from_parts(parts)
}

/// `optimised: 3 unused bones removed, 12 bones, 840 vertices and 1210 triangles renumbered,
/// vertex cache misses 1.21 -> 0.68 a triangle`; None when nothing changed.
fn describe_optimized(r: &OptimizeReport, format: Format) -> Option<String> {
    let meshes = !matches!(format, Format::Skp | Format::Mm2Skel);
    let mut parts = Vec::new();
    let removed = r.bones_before.saturating_sub(r.bones_after);
    if removed > 0 {
        let bones = if removed == 1 { "bone" } else { "bones" };
        parts.push(format!("{removed} unused {bones} removed"));
    }
    let moved: Vec<String> = [
        (r.bones_moved, "bone", "bones"),
        (r.vertices_moved, "vertex", "vertices"),
        (r.triangles_moved, "triangle", "triangles"),
    ]
    .iter()
    .take(if meshes { 3 } else { 1 })
    .filter(|(n, _, _)| *n > 0)
    .map(|&(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
    .collect();
    if !moved.is_empty() {
        let list = match moved.as_slice() {
            [one] => one.clone(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
            [] => String::new(),
        };
        parts.push(format!("{list} renumbered"));
    }
    if parts.is_empty() {
        return None;
    }
    if meshes && r.triangles_moved > 0 {
        parts.push(format!(
            "vertex cache misses {:.2} -> {:.2} a triangle",
            r.acmr_before, r.acmr_after
        ));
    }
    Some(format!("optimised: {}", parts.join(", ")))
}
