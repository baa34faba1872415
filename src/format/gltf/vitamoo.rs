//! VitaMoo's glTF conventions for Sims data (MicropolisCore
//! `documentation/vitamoo/gltf-extras-metadata.md`): `vitamoo_` keys in the `extras` of the
//! skeleton's root node (`vitamoo_skeleton`), of bone nodes (`vitamoo_cantranslate`,
//! `vitamoo_canrotate`, `vitamoo_canblend`, `vitamoo_wiggle`, and the skills' events as
//! `vitamoo_events`), of mesh nodes (`vitamoo_suit`, `vitamoo_suit_type`, `vitamoo_skin_bone`,
//! `vitamoo_skin_flags`, `vitamoo_texture`) and of animations (`vitamoo_skill`,
//! `vitamoo_duration`, `vitamoo_distance`, `vitamoo_is_moving`, `vitamoo_repeat_mode`).
//!
//! Beside them ossa keeps what VitaMoo has no key for, under its own plain keys: on the root
//! node every suit whole (`suits`, with the ones no mesh wears and every property list) and each
//! skill's scene (`skills`: rate, frames, looping, travel), since animation `extras` do not come
//! through Blender's importer; on a bone node its property lists (`properties`) and a wiggle
//! value other than 0 or 1 (`wiggle_value`). See docs/gltf.md, "Sims characters".

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::format::cmx::{self, DEFAULT_SKELETON_NAME, KeptSkeleton};
use crate::format::{Budget, Checker, Format};
use crate::model::{Model, ModelParts, Name, Property, Suit, SuitSkin};
use crate::textures::ModelTextures;

use super::doc::Doc;

/// Whether `model` is a Sims character: read from a Sims file (or an export of one), or
/// carrying a character file's skeleton or suits.
pub(super) fn is_sims(model: &Model) -> bool {
    matches!(
        model.frame_format(),
        Format::SimsSkn | Format::SimsBmf | Format::SimsCmx | Format::SimsBcf | Format::SimsMsh
    ) || model.kept().cmx_skeleton.is_some()
        || !model.suits().is_empty()
}

/// What a Sims export adds to the `extras` it writes.
pub(super) struct Extras {
    /// The skeleton's root node (the root bone, or the node over several roots).
    pub root: Map<String, Value>,
    /// Per bone.
    pub bones: Vec<Map<String, Value>>,
    /// Per mesh node.
    pub meshes: Vec<Map<String, Value>>,
    /// Per scene.
    pub animations: Vec<Map<String, Value>>,
}

/// An f32 as JSON by its shortest decimal form (0.4, not 0.4000000059604645), which reads back
/// as the same f32.
fn num(v: f32) -> Value {
    v.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

fn properties_json(properties: &[Property]) -> Value {
    Value::Array(
        properties
            .iter()
            .map(|p| {
                json!({
                    "list": p.list,
                    "key": p.key.to_string_lossy(),
                    "value": p.value.to_string_lossy(),
                })
            })
            .collect(),
    )
}

/// The extras of a Sims export of `model`. `written(a)`: whether scene `a` becomes an
/// animation (one without frames does not); `scale` the export's.
pub(super) fn extras(
    model: &Model,
    textures: Option<&ModelTextures>,
    scale: f32,
    written: &dyn Fn(usize) -> bool,
) -> Extras {
    let bones = model.bones();
    let nb = bones.len();
    let kept = model.kept().cmx_skeleton.as_deref();
    let mut root = Map::new();
    root.insert(
        "vitamoo_skeleton".into(),
        json!(kept.map_or_else(
            || DEFAULT_SKELETON_NAME.to_owned(),
            |k| k.name().to_string_lossy()
        )),
    );

    // Bone flags as a CMX save writes them: the character file's, by name, else all set.
    let mut kept_index: HashMap<&[u8], usize> = HashMap::new();
    if let Some(k) = kept {
        for i in (0..k.len()).rev() {
            kept_index.insert(k.bone_name(i), i);
        }
    }
    let mut bone_extras: Vec<Map<String, Value>> = Vec::with_capacity(nb);
    for bone in bones {
        let file_bone = kept
            .zip(kept_index.get(bone.name.as_bytes()))
            .and_then(|(k, &i)| k.bone(i));
        let mut e = Map::new();
        let (t, r, b, wiggle) = file_bone
            .as_ref()
            .map_or((true, true, true, [0.0, 0.0]), |f| {
                (
                    f.can_translate,
                    f.can_rotate,
                    f.can_blend,
                    [f.wiggle_value, f.wiggle_power],
                )
            });
        e.insert("vitamoo_cantranslate".into(), json!(t));
        e.insert("vitamoo_canrotate".into(), json!(r));
        e.insert("vitamoo_canblend".into(), json!(b));
        e.insert(
            "vitamoo_wiggle".into(),
            json!({ "enabled": wiggle[0] != 0.0, "power": num(wiggle[1]) }),
        );
        if wiggle[0] != 0.0 && wiggle[0] != 1.0 {
            e.insert("wiggle_value".into(), num(wiggle[0]));
        }
        if let Some(f) = &file_bone {
            let props: Vec<Property> = (f.property_lists.iter().enumerate())
                .flat_map(|(l, list)| {
                    list.iter().map(move |p| Property {
                        list: l as u32,
                        key: p.key.clone(),
                        value: p.value.clone(),
                    })
                })
                .collect();
            if !props.is_empty() {
                e.insert("properties".into(), properties_json(&props));
            }
        }
        bone_extras.push(e);
    }

    // Events on their bones (the root node for an event on no bone), by skill, `{time, props}`
    // in time order; props of one time in one entry while their keys differ.
    let mut root_events = Map::new();
    let mut bone_events: Vec<Map<String, Value>> = vec![Map::new(); nb];
    let mut scenes = Map::new();
    let mut animations = Vec::with_capacity(model.animations().len());
    for (a, scene) in model.animations().iter().enumerate() {
        let name = scene.name.to_string_lossy();
        // Seconds to the microsecond: a skill's length is whole milliseconds, which its rate
        // (frames over length, an f32) gives back only to within a rounding.
        let duration = if scene.fps > 0.0 {
            (f64::from(scene.frame_count) / f64::from(scene.fps) * 1e6).round() / 1e6
        } else {
            0.0
        };
        let mut anim = Map::new();
        anim.insert("vitamoo_skill".into(), json!(name));
        anim.insert("vitamoo_duration".into(), json!(duration));
        anim.insert("vitamoo_distance".into(), num(scene.distance * scale));
        anim.insert("vitamoo_is_moving".into(), json!(scene.moving));
        anim.insert(
            "vitamoo_repeat_mode".into(),
            json!(if scene.looping { "loop" } else { "once" }),
        );
        animations.push(anim);
        if !written(a) {
            continue;
        }
        scenes.insert(
            name.clone(),
            json!({
                "fps": num(scene.fps),
                "frames": scene.frame_count,
                "looping": scene.looping,
                "moving": scene.moving,
                "distance": num(scene.distance * scale),
            }),
        );
        for e in model.animation_events(a as u32) {
            let events = match usize::try_from(e.bone).ok().filter(|&b| b < nb) {
                Some(b) => &mut bone_events[b],
                None => &mut root_events,
            };
            let Value::Array(list) = events
                .entry(name.clone())
                .or_insert_with(|| Value::Array(Vec::new()))
            else {
                continue;
            };
            let key = e.key.to_string_lossy();
            let time = num(e.time);
            let value = json!(e.value.to_string_lossy());
            let joins = list.last_mut().and_then(|last| {
                let same_time = last.get("time") == Some(&time);
                let props = last.get_mut("props")?.as_object_mut()?;
                (same_time && !props.contains_key(&key)).then_some(props)
            });
            match joins {
                Some(props) => {
                    props.insert(key, value);
                }
                None => list.push(json!({ "time": time, "props": { key: value } })),
            }
        }
    }
    for (e, events) in bone_extras.iter_mut().zip(bone_events) {
        if !events.is_empty() {
            e.insert("vitamoo_events".into(), Value::Object(events));
        }
    }
    if !root_events.is_empty() {
        root.insert("vitamoo_events".into(), Value::Object(root_events));
    }
    if !model.suits().is_empty() {
        root.insert("suits".into(), suits_json(model.suits()));
    }
    if !scenes.is_empty() {
        root.insert("skills".into(), Value::Object(scenes));
    }

    // Each mesh as the suit skin of its name (ignoring ASCII case, as the game's file names go).
    let meshes = (model.meshes().iter().enumerate())
        .map(|(m, mesh)| {
            let mut e = Map::new();
            let worn = model.suits().iter().find_map(|suit| {
                (suit.skins.iter())
                    .find(|k| {
                        k.mesh
                            .as_bytes()
                            .eq_ignore_ascii_case(mesh.name().as_bytes())
                    })
                    .map(|k| (suit, k))
            });
            if let Some((suit, skin)) = worn {
                e.insert("vitamoo_suit".into(), json!(suit.name.to_string_lossy()));
                e.insert("vitamoo_suit_type".into(), json!(suit.kind));
                e.insert(
                    "vitamoo_skin_bone".into(),
                    json!(skin.bone.to_string_lossy()),
                );
                e.insert("vitamoo_skin_flags".into(), json!(skin.censor_flags));
            }
            // The image file found for it, else the name the mesh gives its texture as the
            // game's file (a BMP).
            let found = textures
                .and_then(|t| t.images.get(t.mesh_images.get(m).copied()??))
                .and_then(|i| i.path.rsplit(['/', '\\']).next().filter(|f| !f.is_empty()));
            let texture = match found {
                Some(file) => Some(file.to_owned()),
                None if !mesh.shader().is_empty() => {
                    Some(format!("{}.bmp", mesh.shader().to_string_lossy()))
                }
                None => None,
            };
            if let Some(t) = texture {
                e.insert("vitamoo_texture".into(), json!(t));
            }
            e
        })
        .collect();
    Extras {
        root,
        bones: bone_extras,
        meshes,
        animations,
    }
}

fn suits_json(suits: &[Suit]) -> Value {
    Value::Array(
        suits
            .iter()
            .map(|s| {
                json!({
                    "name": s.name.to_string_lossy(),
                    "type": s.kind,
                    "properties": properties_json(&s.properties),
                    "skins": s.skins.iter().map(|k| json!({
                        "bone": k.bone.to_string_lossy(),
                        "mesh": k.mesh.to_string_lossy(),
                        "censor_flags": k.censor_flags,
                        "properties": properties_json(&k.properties),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

// Import.

/// What one JSON value of a Sims member may take once parsed, at the most: serde_json's value
/// (32 bytes), its place in a map or vector with room to grow, and its key.
const VALUE_COST: u64 = 96;

/// Whether a node of `root` names a VitaMoo skeleton: the file holds a Sims character.
pub(super) fn names_skeleton(root: &Doc) -> bool {
    (root.nodes.iter())
        .any(|n| (n.extras.as_deref()).is_some_and(|e| e.sims("vitamoo_skeleton").is_some()))
}

/// A node's Sims members, parsed as they are asked for: each parse charged first (its values
/// counted in one pass over its text), every problem named by its JSON path.
struct Reader<'a, 'c> {
    root: &'a Doc,
    ck: &'c mut Checker,
    budget: &'c mut Budget,
    /// Problems reported one by one, and those counted past [`MAX_REPORTED`].
    reported: usize,
    unreported: usize,
}

/// Problems of the Sims extras reported one by one; the rest are counted in one warning, so
/// that a file of a million wrong values does not give a million messages.
const MAX_REPORTED: usize = 32;

impl Reader<'_, '_> {
    /// Member `key` of node `n`'s extras, parsed; None when absent.
    fn get(&mut self, n: usize, key: &str) -> Result<Option<Value>> {
        let Some(raw) = (self.root.nodes.get(n))
            .and_then(|node| node.extras.as_deref())
            .and_then(|e| e.sims(key))
        else {
            return Ok(None);
        };
        let text = raw.get();
        let counted = super::doc::measure(text.as_bytes())?;
        self.budget.add(self.ck, counted.values, VALUE_COST)?;
        self.budget.add(self.ck, counted.string_bytes, 1)?;
        serde_json::from_str(text)
            .map(Some)
            .map_err(|e| Error::malformed(format!("nodes[{n}].extras.{key}: JSON: {e}")))
    }

    /// A problem with the value at `path`: left out, with a warning (an error in strict mode).
    fn wrong(&mut self, path: &str, what: &str) -> Result<()> {
        self.problem(format!("{path}: {what}; it is left out"))
    }

    fn problem(&mut self, message: String) -> Result<()> {
        if self.reported >= MAX_REPORTED {
            self.unreported = self.unreported.saturating_add(1);
            return Ok(());
        }
        self.reported = self.reported.saturating_add(1);
        self.ck.tolerate(Error::malformed(message))
    }

    /// The count of problems past the ones reported, as one warning.
    fn finish(&mut self) -> Result<()> {
        if self.unreported == 0 {
            return Ok(());
        }
        let n = std::mem::take(&mut self.unreported);
        self.ck.tolerate(Error::malformed(format!(
            "{n} more problems in the Sims extras, each left out as those above"
        )))
    }

    fn bool(&mut self, v: Option<&Value>, path: &str) -> Result<Option<bool>> {
        match v {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => self.wrong(path, "not true or false").map(|()| None),
        }
    }

    /// A number that an f32 holds finite.
    fn f32(&mut self, v: Option<&Value>, path: &str) -> Result<Option<f32>> {
        match v {
            None => Ok(None),
            Some(Value::Number(x)) => {
                match x.as_f64().map(|x| x as f32).filter(|x| x.is_finite()) {
                    Some(x) => Ok(Some(x)),
                    None => self
                        .wrong(path, "not a finite 32-bit number")
                        .map(|()| None),
                }
            }
            Some(_) => self.wrong(path, "not a number").map(|()| None),
        }
    }

    fn u32(&mut self, v: Option<&Value>, path: &str) -> Result<Option<u32>> {
        match v {
            None => Ok(None),
            Some(x) => match x.as_u64().and_then(|x| u32::try_from(x).ok()) {
                Some(x) => Ok(Some(x)),
                None => self
                    .wrong(path, "not a whole number from 0 to 2^32 - 1")
                    .map(|()| None),
            },
        }
    }

    fn text(&mut self, v: Option<&Value>, path: &str) -> Result<Option<Name>> {
        match v {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(Name::from(s.as_str()))),
            Some(_) => self.wrong(path, "not a string").map(|()| None),
        }
    }

    /// `[{list, key, value}...]` as a model's properties.
    fn properties(&mut self, v: Option<&Value>, path: &str) -> Result<Vec<Property>> {
        let Some(v) = v else {
            return Ok(Vec::new());
        };
        let Value::Array(items) = v else {
            self.wrong(path, "not an array")?;
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        self.budget
            .add(self.ck, items.len() as u64, size_of::<Property>() as u64)?;
        for (i, p) in items.iter().enumerate() {
            let at = format!("{path}[{i}]");
            let list = self.u32(p.get("list"), &format!("{at}.list"))?;
            let key = self.text(p.get("key"), &format!("{at}.key"))?;
            let value = self.text(p.get("value"), &format!("{at}.value"))?;
            match (list, key, value) {
                (Some(list), Some(key), Some(value)) => out.push(Property { list, key, value }),
                _ if p.is_object() => self.wrong(&at, "lacks its list, key or value")?,
                _ => self.wrong(&at, "not an object")?,
            }
        }
        Ok(out)
    }
}

/// A skill's name as a JSON object key in a path.
fn quoted(key: &str) -> String {
    serde_json::to_string(key).unwrap_or_default()
}

/// The root record of the skills' scenes (`skills` on the node that names the skeleton), for
/// animations whose own `extras` a tool dropped: by skill name, its `fps`, `frames` and
/// `looping` (checked as the animation's own are) and `moving` and `distance`.
pub(super) fn stored_skills(
    root: &Doc,
    ck: &mut Checker,
    budget: &mut Budget,
) -> Result<Map<String, Value>> {
    let Some(n) = skeleton_node(root) else {
        return Ok(Map::new());
    };
    let mut r = Reader {
        root,
        ck,
        budget,
        reported: 0,
        unreported: 0,
    };
    match r.get(n, "skills")? {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(_) => {
            r.wrong(&format!("nodes[{n}].extras.skills"), "not an object")?;
            Ok(Map::new())
        }
    }
}

/// The first node that names a VitaMoo skeleton.
fn skeleton_node(root: &Doc) -> Option<usize> {
    (root.nodes.iter())
        .position(|n| (n.extras.as_deref()).is_some_and(|e| e.sims("vitamoo_skeleton").is_some()))
}

/// The file's places of what [`read`] fills in.
pub(super) struct Places<'a> {
    /// Per bone of the model (but a synthetic root), its node.
    pub bone_nodes: &'a [usize],
    /// Per mesh of the model, its node.
    pub mesh_nodes: &'a [usize],
    /// The export's scale: glTF's units over the source's.
    pub scale: f32,
}

/// Reads the Sims data of a VitaMoo or ossa export into `parts`, whose bones, meshes and
/// scenes (one per glTF animation, in order) are made: the skeleton's name and every bone's
/// flags (as the character file a CMX save writes), the suits, the scenes' travel and looping,
/// the skill names and the events. A file without any `vitamoo_` key is left as it is.
pub(super) fn read(
    root: &Doc,
    places: &Places<'_>,
    parts: &mut ModelParts,
    ck: &mut Checker,
    budget: &mut Budget,
) -> Result<()> {
    // ossa's plain keys mean something only beside VitaMoo's: another tool's `properties` on a
    // node is its own.
    let vitamoo = |text: &str| text.contains("\"vitamoo_");
    let any = (root.nodes.iter())
        .filter_map(|n| n.extras.as_deref())
        .any(|e| e.sims.iter().any(|(k, _)| k.starts_with("vitamoo_")))
        || (root.animations.iter()).any(|a| a.extras.as_deref().is_some_and(|e| vitamoo(e.get())));
    if !any {
        return Ok(());
    }
    let mut r = Reader {
        root,
        ck,
        budget,
        reported: 0,
        unreported: 0,
    };
    let skeleton_at = skeleton_node(root);
    read_animations(&mut r, places, parts)?;

    // The skeleton: its name, and per bone its flags, wiggle and property lists.
    let name = match skeleton_at {
        Some(n) => {
            let v = r.get(n, "vitamoo_skeleton")?;
            r.text(v.as_ref(), &format!("nodes[{n}].extras.vitamoo_skeleton"))?
        }
        None => None,
    };
    let mut bones = Vec::with_capacity(places.bone_nodes.len());
    let mut any_flags = false;
    for (b, &n) in places.bone_nodes.iter().enumerate() {
        let at = |key: &str| format!("nodes[{n}].extras.{key}");
        let flag = |r: &mut Reader, key: &str| -> Result<Option<bool>> {
            let v = r.get(n, key)?;
            r.bool(v.as_ref(), &at(key))
        };
        let t = flag(&mut r, "vitamoo_cantranslate")?;
        let ro = flag(&mut r, "vitamoo_canrotate")?;
        let bl = flag(&mut r, "vitamoo_canblend")?;
        let wiggle = r.get(n, "vitamoo_wiggle")?;
        let (enabled, power) = match &wiggle {
            None => (None, None),
            Some(w @ Value::Object(_)) => {
                let e = r.bool(
                    w.get("enabled"),
                    &format!("{}.enabled", at("vitamoo_wiggle")),
                )?;
                let p = r.f32(w.get("power"), &format!("{}.power", at("vitamoo_wiggle")))?;
                (e, p)
            }
            Some(_) => {
                r.wrong(&at("vitamoo_wiggle"), "not an object")?;
                (None, None)
            }
        };
        let value = r.get(n, "wiggle_value")?;
        let value = r.f32(value.as_ref(), &at("wiggle_value"))?;
        let props = r.get(n, "properties")?;
        let props = r.properties(props.as_ref(), &at("properties"))?;
        any_flags |= [t, ro, bl, enabled].iter().any(Option::is_some);
        // One list per list number, in order of number (a model keeps no empty list).
        let mut props = props;
        props.sort_by_key(|p| p.list);
        let property_lists: Vec<cmx::PropertyList> = props
            .chunk_by(|a, b| a.list == b.list)
            .map(|list| {
                (list.iter())
                    .map(|p| cmx::Property {
                        key: p.key.clone(),
                        value: p.value.clone(),
                    })
                    .collect()
            })
            .collect();
        let bone_name = parts
            .bones
            .get(b)
            .map(|x| x.name.clone())
            .unwrap_or_else(Name::empty);
        bones.push(cmx::Bone {
            name: bone_name,
            parent: None,
            parent_index: -1,
            translation: [0.0; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
            can_translate: t.unwrap_or(true),
            can_rotate: ro.unwrap_or(true),
            can_blend: bl.unwrap_or(true),
            wiggle_value: value.unwrap_or(if enabled == Some(true) { 1.0 } else { 0.0 }),
            wiggle_power: power.unwrap_or(0.0),
            property_lists,
        });
    }
    if name.is_some() || any_flags {
        let skeleton = cmx::Skeleton {
            name: name.unwrap_or_else(|| Name::from(DEFAULT_SKELETON_NAME)),
            bones,
        };
        r.budget.add(r.ck, KeptSkeleton::bytes_for(&skeleton), 1)?;
        parts.kept.cmx_skeleton = Some(std::sync::Arc::new(KeptSkeleton::new(skeleton)));
    }

    read_suits(&mut r, skeleton_at, places, parts)?;
    read_events(&mut r, places, parts)?;
    r.finish()
}

/// Per scene: its name (`vitamoo_skill`), travel and looping from the animation's `extras`
/// (VitaMoo's keys first, then ossa's), else from the root record of the skills.
fn read_animations(r: &mut Reader, places: &Places<'_>, parts: &mut ModelParts) -> Result<()> {
    let skeleton_at = skeleton_node(r.root);
    let record = match skeleton_at {
        Some(n) => match r.get(n, "skills")? {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        },
        None => Map::new(),
    };
    let root = r.root;
    for (a, anim) in root.animations.iter().enumerate() {
        let Some(scene) = parts.animations.get_mut(a) else {
            break;
        };
        let own = match anim.extras.as_deref() {
            Some(raw) => {
                let counted = super::doc::measure(raw.get().as_bytes())?;
                r.budget.add(r.ck, counted.values, VALUE_COST)?;
                serde_json::from_str::<Value>(raw.get()).ok()
            }
            None => None,
        };
        let path = |key: &str| format!("animations[{a}].extras.{key}");
        let get = |key: &str| own.as_ref().and_then(|o| o.get(key));
        if let Some(skill) = r.text(get("vitamoo_skill"), &path("vitamoo_skill"))?
            && !skill.is_empty()
        {
            scene.name = skill;
        }
        let scene_name = scene.name.to_string_lossy();
        let stored = record.get(&scene_name);
        let stored_path = |key: &str| {
            format!(
                "nodes[{}].extras.skills[{}].{key}",
                skeleton_at.unwrap_or(0),
                quoted(&scene_name)
            )
        };
        let distance = match r.f32(get("vitamoo_distance"), &path("vitamoo_distance"))? {
            Some(d) => Some(d),
            None => match r.f32(get("distance"), &path("distance"))? {
                Some(d) => Some(d),
                None => r.f32(
                    stored.and_then(|s| s.get("distance")),
                    &stored_path("distance"),
                )?,
            },
        };
        if let Some(d) = distance {
            scene.distance = d / places.scale;
        }
        let moving = match r.bool(get("vitamoo_is_moving"), &path("vitamoo_is_moving"))? {
            Some(m) => Some(m),
            None => match r.bool(get("moving"), &path("moving"))? {
                Some(m) => Some(m),
                None => r.bool(stored.and_then(|s| s.get("moving")), &stored_path("moving"))?,
            },
        };
        if let Some(m) = moving {
            scene.moving = m;
        }
        match get("vitamoo_repeat_mode") {
            None => {
                if get("looping").is_none()
                    && let Some(l) = r.bool(
                        stored.and_then(|s| s.get("looping")),
                        &stored_path("looping"),
                    )?
                {
                    scene.looping = l;
                }
            }
            Some(Value::String(m)) if m == "loop" => scene.looping = true,
            Some(Value::String(m)) if m == "once" => scene.looping = false,
            Some(_) => r.wrong(&path("vitamoo_repeat_mode"), "not \"loop\" or \"once\"")?,
        }
    }
    Ok(())
}

/// The suits: ossa's whole record on the skeleton's node, else one suit per `vitamoo_suit` of
/// the mesh nodes (in their order), each mesh a skin of it; and each mesh's texture name.
fn read_suits(
    r: &mut Reader,
    skeleton_at: Option<usize>,
    places: &Places<'_>,
    parts: &mut ModelParts,
) -> Result<()> {
    let mut suits: Vec<Suit> = Vec::new();
    let record = match skeleton_at {
        Some(n) => r.get(n, "suits")?.map(|v| (n, v)),
        None => None,
    };
    if let Some((n, record)) = record {
        let path = format!("nodes[{n}].extras.suits");
        match &record {
            Value::Array(items) => {
                for (i, s) in items.iter().enumerate() {
                    let at = format!("{path}[{i}]");
                    if let Some(suit) = suit_record(r, s, &at)? {
                        suits.push(suit);
                    }
                }
            }
            _ => r.wrong(&path, "not an array")?,
        }
    }
    let from_meshes = suits.is_empty();
    for (m, &n) in places.mesh_nodes.iter().enumerate() {
        let at = |key: &str| format!("nodes[{n}].extras.{key}");
        let texture = r.get(n, "vitamoo_texture")?;
        if let Some(t) = r.text(texture.as_ref(), &at("vitamoo_texture"))?
            && let Some(mesh) = parts.meshes.get_mut(m)
        {
            // The game's texture file, named by the mesh without its extension.
            let t = t.to_string_lossy();
            let stem = t.rsplit_once('.').map_or(t.as_str(), |(s, _)| s);
            mesh.shader = Name::from(stem);
        }
        if !from_meshes {
            continue;
        }
        let suit = r.get(n, "vitamoo_suit")?;
        let Some(suit_name) = r.text(suit.as_ref(), &at("vitamoo_suit"))? else {
            continue;
        };
        let kind = r.get(n, "vitamoo_suit_type")?;
        let kind = r.u32(kind.as_ref(), &at("vitamoo_suit_type"))?;
        let bone = r.get(n, "vitamoo_skin_bone")?;
        let bone = r.text(bone.as_ref(), &at("vitamoo_skin_bone"))?;
        let flags = r.get(n, "vitamoo_skin_flags")?;
        let flags = r.u32(flags.as_ref(), &at("vitamoo_skin_flags"))?;
        let Some(bone) = bone else {
            r.wrong(
                &at("vitamoo_suit"),
                "the mesh node names no vitamoo_skin_bone",
            )?;
            continue;
        };
        r.budget
            .add(r.ck, 1, (size_of::<Suit>() + size_of::<SuitSkin>()) as u64)?;
        let skin = SuitSkin {
            bone,
            mesh: parts
                .meshes
                .get(m)
                .map(|x| x.name.clone())
                .unwrap_or_else(Name::empty),
            censor_flags: flags.unwrap_or(0),
            properties: Vec::new(),
        };
        match suits.iter_mut().find(|s| s.name == suit_name) {
            Some(s) => s.skins.push(skin),
            None => suits.push(Suit {
                name: suit_name,
                kind: kind.unwrap_or(0),
                properties: Vec::new(),
                skins: vec![skin],
            }),
        }
    }
    if parts.suits.is_empty() {
        parts.suits = suits;
    }
    Ok(())
}

/// One suit of ossa's record: `{name, type, properties, skins: [{bone, mesh, censor_flags,
/// properties}]}`.
fn suit_record(r: &mut Reader, s: &Value, at: &str) -> Result<Option<Suit>> {
    if !s.is_object() {
        r.wrong(at, "not an object")?;
        return Ok(None);
    }
    let Some(name) = r.text(s.get("name"), &format!("{at}.name"))? else {
        r.wrong(at, "has no name")?;
        return Ok(None);
    };
    let kind = r.u32(s.get("type"), &format!("{at}.type"))?.unwrap_or(0);
    let properties = r.properties(s.get("properties"), &format!("{at}.properties"))?;
    let mut skins = Vec::new();
    match s.get("skins") {
        Some(Value::Array(items)) => {
            r.budget
                .add(r.ck, items.len() as u64, size_of::<SuitSkin>() as u64)?;
            for (k, skin) in items.iter().enumerate() {
                let kat = format!("{at}.skins[{k}]");
                let bone = r.text(skin.get("bone"), &format!("{kat}.bone"))?;
                let mesh = r.text(skin.get("mesh"), &format!("{kat}.mesh"))?;
                let flags = r.u32(skin.get("censor_flags"), &format!("{kat}.censor_flags"))?;
                let properties =
                    r.properties(skin.get("properties"), &format!("{kat}.properties"))?;
                match (bone, mesh) {
                    (Some(bone), Some(mesh)) => skins.push(SuitSkin {
                        bone,
                        mesh,
                        censor_flags: flags.unwrap_or(0),
                        properties,
                    }),
                    _ => r.wrong(&kat, "lacks its bone or mesh")?,
                }
            }
        }
        None => {}
        Some(_) => r.wrong(&format!("{at}.skins"), "not an array")?,
    }
    r.budget.add(r.ck, 1, size_of::<Suit>() as u64)?;
    Ok(Some(Suit {
        name,
        kind,
        properties,
        skins,
    }))
}

/// `vitamoo_events` of every bone node (and of the skeleton's node where it is not a bone: an
/// event on no bone), as the scenes' events.
fn read_events(r: &mut Reader, places: &Places<'_>, parts: &mut ModelParts) -> Result<()> {
    let mut scenes: HashMap<String, u32> = HashMap::new();
    for (a, scene) in parts.animations.iter().enumerate().rev() {
        scenes.insert(scene.name.to_string_lossy(), a as u32);
    }
    let mut carriers: Vec<(usize, i32)> = (places.bone_nodes.iter().enumerate())
        .map(|(b, &n)| (n, b as i32))
        .collect();
    if let Some(n) = skeleton_node(r.root)
        && !places.bone_nodes.contains(&n)
    {
        carriers.push((n, -1));
    }
    for (n, bone) in carriers {
        let path = format!("nodes[{n}].extras.vitamoo_events");
        let Some(events) = r.get(n, "vitamoo_events")? else {
            continue;
        };
        let Value::Object(skills) = events else {
            r.wrong(&path, "not an object of skills")?;
            continue;
        };
        for (skill, list) in &skills {
            let at = format!("{path}[{}]", quoted(skill));
            let Some(&animation) = scenes.get(skill) else {
                r.wrong(&at, "names no animation of the file")?;
                continue;
            };
            let Value::Array(entries) = list else {
                r.wrong(&at, "not an array")?;
                continue;
            };
            let mut last = 0.0f32;
            for (i, entry) in entries.iter().enumerate() {
                let eat = format!("{at}[{i}]");
                if !entry.is_object() {
                    r.wrong(&eat, "not an object")?;
                    continue;
                }
                let Some(time) = r.f32(entry.get("time"), &format!("{eat}.time"))? else {
                    if entry.get("time").is_none() {
                        r.wrong(&format!("{eat}.time"), "missing")?;
                    }
                    continue;
                };
                if time < 0.0 {
                    r.wrong(&format!("{eat}.time"), "before the start")?;
                    continue;
                }
                if time < last {
                    // Kept: the model orders events by time itself.
                    r.problem(format!(
                        "{eat}.time: {time} comes after {last}: the events are not sorted by time"
                    ))?;
                }
                last = last.max(time);
                let Some(Value::Object(props)) = entry.get("props") else {
                    r.wrong(&format!("{eat}.props"), "not an object")?;
                    continue;
                };
                r.budget.add(
                    r.ck,
                    props.len() as u64,
                    size_of::<crate::model::AnimationEvent>() as u64,
                )?;
                for (key, value) in props {
                    let Value::String(value) = value else {
                        r.wrong(&format!("{eat}.props[{}]", quoted(key)), "not a string")?;
                        continue;
                    };
                    parts.events.push(crate::model::AnimationEvent {
                        animation,
                        time,
                        bone,
                        key: Name::from(key.as_str()),
                        value: Name::from(value.as_str()),
                    });
                }
            }
        }
    }
    Ok(())
}
